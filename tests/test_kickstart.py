"""Starting from pretrained weights (init.checkpoint, callbacks/init_weights.py) and the kickstart loss (the
kickstart_coeff schedule: KL from a frozen teacher module to the policy, policies/learning/five_learner.py)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from test_training_e2e import build_algo, tiny_smoke


def saved_module(path, cfg, seed=3, scale=1.0):
    """A module of the run's layout with its own random weights (times `scale`), saved as an RLModule checkpoint."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.algorithm import make_training_env
    from policies.model.five_module import FiveModelConfig, FiveRLModule
    env = make_training_env({**cfg.env, "seed": 0})
    a0 = env.possible_agents[0]
    torch.manual_seed(seed)
    module = RLModuleSpec(module_class=FiveRLModule, observation_space=env.observation_spaces[a0],
                          action_space=env.action_spaces[a0],
                          model_config=dict(FiveModelConfig.from_dict(cfg.model).__dict__)).build()
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(scale)
    module.save_to_path(str(path))
    return {k: np.asarray(v) for k, v in module.get_state().items()}


def test_a_run_starts_from_the_checkpoint_and_its_kickstart_loss_starts_at_zero(ray_session, no_home_results,
                                                                               tmp_path):
    cfg = tiny_smoke(resources__num_env_runners=1)
    weights = saved_module(tmp_path / "clone", cfg)
    cfg = tiny_smoke(resources__num_env_runners=1, init__checkpoint=str(tmp_path / "clone"),
                     schedules__kickstart_coeff={"points": [[0, 1.0], [2, 0.0]]})
    algo = build_algo(cfg, whole_batch=True)  # one gradient step on the whole batch: the teacher is the policy
    try:
        start = algo.learner_group.get_weights(module_ids=["main"])["main"]
        assert all(np.array_equal(np.asarray(start[k]), weights[k]) for k in weights)
        on_runner = algo.env_runner_group.foreach_env_runner(
            lambda er: {k: np.asarray(v) for k, v in er.module["main"].get_state().items()},
            local_env_runner=False)[0]
        assert all(np.array_equal(on_runner[k], weights[k]) for k in weights)
        r = algo.train()
        main = r["learners"]["main"]
        assert main["kickstart_coeff"] == pytest.approx(1.0)
        assert main["kickstart_kl"] == pytest.approx(0.0, abs=1e-5)  # the policy is still the teacher
        assert all(main[f"kickstart_kl_{h}"] == pytest.approx(0.0, abs=1e-5) for h in ("primary", "unit", "offsets"))
        assert r["schedule"]["kickstart_coeff"] == pytest.approx(1.0)
        for _ in range(2):
            r = algo.train()
        assert r["schedule"]["kickstart_coeff"] == 0.0  # annealed away: no teacher pass, no KL
        assert r["learners"]["main"]["kickstart_coeff"] == 0.0 and np.isnan(r["learners"]["main"]["kickstart_kl"])
    finally:
        algo.stop()


@pytest.mark.parametrize("model, match", [
    ({"lstm_size": 48}, r"init.checkpoint .* does not fit this run's model .* differs in lstm_size \(the checkpoint's "
                        r"48, this run's 32\): set model.lstm_size=48"),
    # the same shapes, the other frame: Dire would be read as if it were Radiant
    ({"team_frame": True}, "init.checkpoint .* team_frame True, this run's model.team_frame is False"),
])
def test_a_checkpoint_of_another_layout_or_frame_is_refused_naming_the_key(ray_session, no_home_results, tmp_path,
                                                                          model, match):
    saved_module(tmp_path / "other", tiny_smoke(**{f"model__{k}": v for k, v in model.items()}))
    algo = None
    with pytest.raises(Exception, match=match):
        algo = build_algo(tiny_smoke(resources__num_env_runners=0, init__checkpoint=str(tmp_path / "other")))
    if algo is not None:
        algo.stop()


def test_a_module_older_than_a_model_key_is_named_with_the_keys_default():
    """A checkpoint written before model.offset_groups existed holds no such key: it had the default (one pair of
    offset heads), and the refusal names the key with that value."""
    from callbacks.init_weights import check_same_layout
    old = {"offset_x_head.weight": np.zeros((9, 4)), "lstm.weight_hh_l0": np.zeros((16, 4))}
    new = {"offset_x_head.weight": np.zeros((36, 4)), "lstm.weight_hh_l0": np.zeros((16, 4))}
    with pytest.raises(ValueError, match=r"other shapes \['offset_x_head.weight'\]\); its model differs in "
                                         r"offset_groups \(the checkpoint's False, this run's True\): set "
                                         r"model.offset_groups=false"):
        check_same_layout("ckpt", old, new, {"lstm_size": 4}, {"lstm_size": 4, "offset_groups": True})


# ---- an agent as the teacher (policies/learning/kickstart.py)
# ------------------------------------------------------------
def test_an_agent_teacher_labels_mains_own_states_in_shadow_until_its_loss_is_annealed(ray_session, no_home_results):
    from moba.env.actions import ACTION_KEYS
    from policies.agents.by_name import make_agent
    from policies.learning.kickstart import NOOP_LABEL, TEACHER_ACTION, label
    cfg = tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff={"points": [[0, 1.0], [1, 0.0]]})
    algo = build_algo(cfg, whole_batch=True)
    try:
        runner = algo.env_runner  # the local runner samples (num_env_runners 0)
        episodes = runner.sample(num_timesteps=80, explore=True)
        replayed = 0
        for ep in episodes:
            labels = ep.get_extra_model_outputs(TEACHER_ACTION)
            assert labels.shape == (len(ep), len(ACTION_KEYS))
            if ep.t_started != 0:
                continue
            # the scripted bot, fed the same observations from the game's start, chooses the same actions: the
            # labels are the teacher's on the student's own states (the student's actions differ)
            teacher = make_agent("scripted")
            teacher.reset([ep.agent_id])
            obs = ep.get_observations()
            expected = np.stack([label(teacher.act({ep.agent_id: {k: v[t] for k, v in obs.items()}})[ep.agent_id],
                                       obs["action_mask"][t]) for t in range(len(ep))])
            np.testing.assert_array_equal(labels, expected)
            # every label is an action the student can take there (a masked one is the no-op the env plays)
            assert (obs["action_mask"][np.arange(len(ep)), labels[:, 0]] > 0).all()
            acted = np.stack([ep.get_actions()[k] for k in ACTION_KEYS], -1)
            assert (acted != labels).any()
            replayed += 1
        assert replayed >= 2
        r = algo.train()
        main = r["learners"]["main"]
        assert main["kickstart_coeff"] == pytest.approx(1.0)
        assert 0.1 < main["kickstart_kl"] < 20.0  # -log pi(teacher's action) of a random policy
        by_head = [main[f"kickstart_kl_{h}"] for h in ("primary", "delay", "unit", "offsets")]
        assert min(by_head) >= 0.0 and sum(by_head) == pytest.approx(main["kickstart_kl"], rel=1e-4)
        algo.train()  # the schedule reached 0: the runner stops asking the teacher
        assert runner._teacher_labels is False
        later = runner.sample(num_timesteps=40, explore=True)
        assert all((ep.get_extra_model_outputs(TEACHER_ACTION) == NOOP_LABEL).all() for ep in later)
    finally:
        algo.stop()


def test_the_teacher_loss_is_minus_the_log_probability_of_the_teachers_action():
    from policies.model.action_distribution import FiveActionDistribution
    from policies.learning.kickstart import TEACHER_NLL_CAP, teacher_nll
    dist_cls = FiveActionDistribution.make(n_primary=16, max_units=6)
    torch.manual_seed(0)
    logits = torch.randn(4, dist_cls.required_input_dim(), requires_grad=True)
    labels = torch.tensor([[1, 0, 0, 2, 7], [2, 1, 3, 4, 4], [0, 0, 0, 4, 4], [1, 2, 5, 0, 8]])
    dist = dist_cls.from_logits(logits)
    want = -dist.logp({"primary": labels[:, 0], "delay": labels[:, 1], "target_unit": labels[:, 2],
                       "offset_x": labels[:, 3], "offset_y": labels[:, 4]})
    nll = teacher_nll(dist, labels)  # one per step
    assert nll.shape == (4,) and torch.equal(nll, want)
    opt = torch.optim.Adam([logits], lr=0.1)
    first = nll.mean().item()
    for _ in range(50):
        opt.zero_grad()
        teacher_nll(dist_cls.from_logits(logits), labels).mean().backward()
        opt.step()
    assert teacher_nll(dist_cls.from_logits(logits), labels).mean().item() < 0.2 * first
    # an action the student rules out (only through a bug: the teacher reads the same masks) costs the cap, no more
    far = teacher_nll(dist_cls.from_logits(-1e4 * logits.detach()), labels)
    assert far.max().item() == TEACHER_NLL_CAP


def test_the_teacher_loss_by_head_sums_to_it_and_counts_only_the_heads_the_teachers_primary_reads():
    from policies.model.action_distribution import FiveActionDistribution
    from policies.learning.kickstart import teacher_nll, teacher_nll_by_head
    dist_cls = FiveActionDistribution.make(n_primary=16, max_units=6)
    torch.manual_seed(1)
    dist = dist_cls.from_logits(torch.randn(5, dist_cls.required_input_dim()))
    labels = torch.tensor([[p, 1, 2, 3, 4] for p in range(5)])
    parts = teacher_nll_by_head(dist, labels)
    assert set(parts) == set(FiveActionDistribution.HEADS)
    assert torch.allclose(sum(parts.values()), teacher_nll(dist, labels))
    assert all(bool((v >= 0).all()) for v in parts.values())  # each part is a -log-probability
    reads_unit, reads_offset = dist._reads(labels[:, 0])
    assert torch.equal(parts["unit"] > 0, reads_unit) and torch.equal(parts["offsets"] > 0, reads_offset)
    assert reads_unit.any() and not reads_unit.all()  # the labels cover both kinds of primary


def test_the_runners_label_only_while_the_kickstart_loss_is_on():
    from callbacks.schedules import _set_runner_values
    from policies.learning.five_learner import FivePPOLearner

    class Runner:
        _teacher_labels = None

        def set_teacher_labels(self, on):
            self._teacher_labels = on
    runner = Runner()
    _set_runner_values({"kickstart_coeff": 0.5})(runner)
    assert runner._teacher_labels is True
    _set_runner_values({"kickstart_coeff": 0.0})(runner)
    assert runner._teacher_labels is False
    assert FivePPOLearner._kickstart_off(SimpleNamespace(_kickstart_coeff=0.0))
    assert not FivePPOLearner._kickstart_off(SimpleNamespace(_kickstart_coeff=0.5))


@pytest.mark.parametrize("key", ["kickstart_params_floor"])
def test_the_removed_kickstart_options_are_refused_naming_the_key(key):
    with pytest.raises(ValueError, match=rf"'ppo\.{key}': removed: .*allowed: .*'entropy_bonus'"):
        tiny_smoke(**{f"ppo__{key}": 0.0})
    with pytest.raises(ValueError, match=rf"'sweep\.ppo\.{key}': removed"):
        tiny_smoke(sweep={f"ppo.{key}": [0.0]})


@pytest.mark.parametrize("changes, key", [
    ({"init__teacher": "scripted", "resources__env_runner": "classic",
      "schedules__kickstart_coeff": 1.0}, "init.teacher"),
    ({"init__teacher": "scripted_9", "schedules__kickstart_coeff": 1.0}, "init.teacher"),
])
def test_a_bad_agent_teacher_is_refused_naming_the_key(changes, key):
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        tiny_smoke(**changes)


def test_an_agent_teacher_without_a_kickstart_loss_labels_nothing():
    assert tiny_smoke(init__teacher="scripted").init.teacher is None
    assert tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff=0.5).init.teacher == "scripted"


def test_a_kickstart_loss_without_a_teacher_is_refused_naming_the_key():
    with pytest.raises(ValueError, match=r"'schedules\.kickstart_coeff': is above 0 but there is no teacher"):
        tiny_smoke(schedules__kickstart_coeff=0.5)


def test_class_weights_weigh_the_rare_teacher_actions_up_and_power_0_is_the_plain_mean():
    from moba.env.actions import A_ABILITY0, A_MOVE, A_NOOP, N_PRIMARY
    from policies.learning.kickstart import MAX_CLASS_WEIGHT, TeacherClassWeights, primary_class_weights
    counts = np.zeros(N_PRIMARY)
    counts[[A_MOVE, A_ABILITY0]] = [400, 4]
    w = primary_class_weights(counts, 0.5)
    assert w[A_MOVE] == 1.0 and w[A_ABILITY0] == pytest.approx(10.0) and w[A_NOOP] == 1.0  # never seen: 1
    assert primary_class_weights(counts, 1.0)[A_ABILITY0] == MAX_CLASS_WEIGHT  # 100, capped
    labels = torch.zeros(2, 3, 5, dtype=torch.long)
    labels[..., 0] = A_MOVE
    labels[0, 0, 0] = A_ABILITY0  # one cast among five moves (the sixth step is padding)
    mask = torch.ones(2, 3, dtype=torch.bool)
    mask[1, 2] = False
    nll = torch.tensor([[3.0, 1.0, 1.0], [1.0, 1.0, 100.0]])
    assert TeacherClassWeights(0.0).loss({"primary": nll}, labels, mask).item() == pytest.approx(7.0 / 5)
    weighted = TeacherClassWeights(1.0)  # the labels' counts: 4 moves, 1 cast: the cast weighs 4
    assert weighted.loss({"primary": nll}, labels, mask).item() == pytest.approx((4 * 3.0 + 4 * 1.0) / 8)
    assert weighted.counts[A_MOVE] == 4 and weighted.counts[A_ABILITY0] == 1


def test_class_weights_on_the_primary_alone_leave_the_parameter_heads_at_the_plain_mean():
    from moba.env.actions import A_ABILITY0, A_MOVE
    from policies.learning.kickstart import TeacherClassWeights
    labels = torch.zeros(1, 5, 5, dtype=torch.long)
    labels[0, :, 0] = torch.tensor([A_MOVE] * 4 + [A_ABILITY0])  # the cast weighs 4 at power 1
    mask = torch.ones(1, 5, dtype=torch.bool)
    by_head = {"primary": torch.tensor([[0.1, 0.1, 0.1, 0.1, 2.0]]),
               "offsets": torch.tensor([[1.0, 1.0, 1.0, 1.0, 3.0]]), "unit": torch.zeros(1, 5)}
    every = TeacherClassWeights(1.0, heads="all").loss(by_head, labels, mask)
    assert every.item() == pytest.approx((4 * 1.1 + 4 * 5.0) / 8)  # the cast's offsets weigh 4 too
    primary = TeacherClassWeights(1.0, heads="primary").loss(by_head, labels, mask)
    assert primary.item() == pytest.approx((4 * 0.1 + 4 * 2.0) / 8 + (4 * 1.0 + 3.0) / 5)
    with pytest.raises(ValueError, match=r"heads must be one of \['all', 'primary'\]"):
        TeacherClassWeights(1.0, heads="offsets")


def test_a_teacher_label_the_mask_rules_out_is_the_noop_the_env_plays():
    from moba.env.actions import A_ATTACK, A_MOVE, A_NOOP, N_PRIMARY
    from policies.learning.kickstart import NOOP_LABEL, label
    attack = {"primary": A_ATTACK, "delay": 2, "target_unit": 7, "offset_x": 4, "offset_y": 4}
    stunned = np.zeros(N_PRIMARY, np.float32)
    stunned[A_NOOP] = 1  # a stunned hero: only the no-op is legal
    np.testing.assert_array_equal(label(attack, stunned), NOOP_LABEL)
    free = stunned.copy()
    free[[A_MOVE, A_ATTACK]] = 1
    np.testing.assert_array_equal(label(attack, free), [A_ATTACK, 2, 7, 4, 4])
    np.testing.assert_array_equal(label(attack), [A_ATTACK, 2, 7, 4, 4])  # no mask: as chosen
    out = label(attack, stunned)
    out[0] = A_MOVE
    assert NOOP_LABEL[0] == A_NOOP  # a copy: the shared no-op label is never written through


def test_logit_adjusted_class_weights_keep_the_teachers_frequencies_as_the_optimum():
    """Plain class weights pull the student's primary toward weight x frequency; scored on logits + log w, the same
    weighted loss is minimized by the teacher's own frequencies, and its value is -log softmax(logits + log w)."""
    from moba.env.actions import A_ABILITY0, A_ATTACK, A_MOVE, N_PRIMARY
    from policies.learning.kickstart import TeacherClassWeights
    freq = torch.zeros(N_PRIMARY)
    freq[[A_MOVE, A_ATTACK, A_ABILITY0]] = torch.tensor([0.7, 0.25, 0.05])
    labels = torch.zeros(1, 1000, 5, dtype=torch.long)
    labels[0, :, 0] = torch.tensor([A_MOVE] * 700 + [A_ATTACK] * 250 + [A_ABILITY0] * 50)
    mask = torch.ones(1, 1000, dtype=torch.bool)
    legal = freq > 0
    fitted = {}
    for adjust in (False, True):
        logits = torch.zeros(N_PRIMARY, requires_grad=True)
        weights = TeacherClassWeights(0.5, logit_adjust=adjust)
        opt = torch.optim.Adam([logits], lr=0.05)
        for _ in range(1500):
            masked = torch.where(legal, logits, torch.tensor(-1e9)).expand(1, 1000, -1)
            nll = -F.log_softmax(masked, -1).gather(-1, labels[..., :1]).squeeze(-1)
            loss = weights.loss({"primary": nll}, labels, mask, masked)
            opt.zero_grad()
            loss.backward()
            opt.step()
        fitted[adjust] = F.softmax(torch.where(legal, logits, torch.tensor(-1e9)), -1).detach()
    w = torch.tensor([1.0, (0.7 / 0.25) ** 0.5, (0.7 / 0.05) ** 0.5])  # move, attack, the cast
    plain = freq[[A_MOVE, A_ATTACK, A_ABILITY0]] * w
    assert torch.allclose(fitted[False][[A_MOVE, A_ATTACK, A_ABILITY0]], plain / plain.sum(), atol=2e-3)
    assert torch.allclose(fitted[True][[A_MOVE, A_ATTACK, A_ABILITY0]], freq[[A_MOVE, A_ATTACK, A_ABILITY0]],
                          atol=2e-3)
    # the value on one step: the weighted -log softmax(logits + log w) of the label
    logits = torch.randn(1, 1, N_PRIMARY)
    one = torch.zeros(1, 1, 5, dtype=torch.long)
    one[..., 0] = A_ABILITY0
    weights = TeacherClassWeights(0.5, logit_adjust=True)
    weights.counts[A_MOVE] = 100.0  # and the cast's own label: 100 to 1, weight 10
    nll = -F.log_softmax(logits, -1)[..., A_ABILITY0]
    log_w = torch.zeros(N_PRIMARY)
    log_w[A_ABILITY0] = float(np.log(10.0))
    expected = -F.log_softmax(logits + log_w, -1)[..., A_ABILITY0]
    got = weights.loss({"primary": nll}, one, torch.ones(1, 1, dtype=torch.bool), logits)
    assert got.item() == pytest.approx(expected.item(), rel=1e-5)
    with pytest.raises(ValueError, match="needs the student's primary_logits"):
        weights.loss({"primary": nll}, one, torch.ones(1, 1, dtype=torch.bool))


def test_class_weights_need_an_agent_teacher(tmp_path):
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_weight_power': weighs the labels of an agent teacher"):
        saved_module(tmp_path / "clone", tiny_smoke())
        tiny_smoke(ppo__kickstart_class_weight_power=0.5, init__checkpoint=str(tmp_path / "clone"),
                   schedules__kickstart_coeff=1.0)
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_weight_power': must be a number >= 0"):
        tiny_smoke(ppo__kickstart_class_weight_power=-1.0)
    assert tiny_smoke(ppo__kickstart_class_weight_power=0.5, init__teacher="scripted_3",
                      schedules__kickstart_coeff=1.0).ppo.kickstart_class_weight_power == 0.5
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_logit_adjust': adjusts the logits by the class "
                                         r"weights: needs ppo\.kickstart_class_weight_power > 0"):
        tiny_smoke(ppo__kickstart_class_logit_adjust=True, init__teacher="scripted_3", schedules__kickstart_coeff=1.0)
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_weight_heads': must be one of \['all', 'primary'\]"):
        tiny_smoke(ppo__kickstart_class_weight_heads="offsets")
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_weight_heads': chooses what the class weights weigh"):
        tiny_smoke(ppo__kickstart_class_weight_heads="primary", init__teacher="scripted_3",
                   schedules__kickstart_coeff=1.0)
    with pytest.raises(ValueError, match=r"'ppo\.kickstart_class_logit_adjust': must be bool"):
        tiny_smoke(ppo__kickstart_class_logit_adjust="yes")
