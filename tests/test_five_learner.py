"""What the PPO learner does to train fast (policies/learning/five_learner.py, advantages.py, learner_threads.py): GAE
on the
env runners' values, observation statistics merged once per update, sequences shuffled by team, and a thread count
chosen by measurement."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from test_training_e2e import tiny_smoke

from policies.learning.learner_threads import PROBE_EVERY, ThreadChooser


def runner_and_learner(cfg):
    from ray.tune.registry import register_env

    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from callbacks import run_callbacks
    from training.batched_env_runner import BatchedEnvRunner
    register_env(ENV_NAME, make_training_env)
    algo_config = build_algo_config(cfg, run_callbacks())
    runner = BatchedEnvRunner(config=algo_config)
    learner = algo_config.build_learner(env=make_training_env({**cfg.env, "seed": 0}))
    runner.module.set_state(learner.module.get_state())
    return runner, learner


def connector_batch(learner, episodes):
    return learner._learner_connector(rl_module=learner.module, batch={}, episodes=copy.deepcopy(episodes),
                                      shared_data={}, metrics=learner.metrics)["main"]


# ---- GAE on the runners' values -------------------------------------------------------------------------------------
def test_gae_takes_the_runners_values_and_falls_back_to_a_forward_pass_without_them(ray_session, monkeypatch):
    from policies.learning.advantages import BOOTSTRAP_VALUE
    from policies.model.five_module import FiveRLModule

    runner, learner = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=2))
    runner.sample(num_timesteps=30, explore=True)
    episodes = runner.sample(num_timesteps=40, explore=True)  # chunks continued from the first sample
    assert all(BOOTSTRAP_VALUE in e.custom_data for e in episodes)
    assert any(not e.is_done for e in episodes)  # chunks cut mid-game bootstrap from the runner's forward pass
    expected = connector_batch(learner, episodes)

    original = FiveRLModule.compute_values

    def no_forward(self, batch, embeddings=None):
        if embeddings is None:
            raise AssertionError("GAE ran a forward pass although the runner recorded the values")
        return original(self, batch, embeddings)

    monkeypatch.setattr(FiveRLModule, "compute_values", no_forward)
    got = connector_batch(learner, episodes)
    for k in ("advantages", "value_targets"):
        assert torch.equal(got[k], expected[k])
    # the same advantages as from the learner's own forward pass (RLlib's connector: bootstrap values removed)
    monkeypatch.setattr(FiveRLModule, "compute_values", original)
    for e in episodes:
        del e.custom_data[BOOTSTRAP_VALUE]
    recomputed = connector_batch(learner, episodes)
    for k in ("advantages", "value_targets"):
        torch.testing.assert_close(recomputed[k], expected[k], rtol=1e-5, atol=1e-5)
    monkeypatch.setattr(FiveRLModule, "compute_values", no_forward)
    with pytest.raises(AssertionError, match="forward pass"):
        connector_batch(learner, episodes)


# ---- observation statistics ------------------------------------------------------------------------------------------
def test_observation_statistics_count_each_step_once_per_update(ray_session):
    runner, learner = runner_and_learner(tiny_smoke(ppo__num_epochs=3, ppo__minibatch_size=32))
    episodes = runner.sample(num_timesteps=64, explore=True)
    steps = sum(len(e) for e in episodes)
    observed = np.concatenate([e.get_observations(slice(0, len(e)))["global"] for e in episodes])
    norm = learner.module["main"].norm["global"]
    before = float(norm.count[0])  # one count per feature (policies/model/normalization.py), all equal here
    weights = {k: v.clone() for k, v in learner.module["main"].state_dict().items() if "norm" not in k}
    learner.update(episodes=episodes, minibatch_size=32, num_epochs=3)
    assert torch.all(norm.count - before == steps)  # 3 epochs, each step counted once (every feature)
    assert np.allclose(norm.mean.numpy(), observed.mean(0), atol=1e-6)  # the first update: the batch's own mean
    state = learner.module["main"].state_dict()
    assert any(not torch.equal(state[k], v) for k, v in weights.items())  # and the weights were trained


# ---- sequences shuffled by team --------------------------------------------------------------------------------------
def test_5v5_sequences_are_shuffled_by_team(ray_session):
    from ray.rllib.core.learner.training_data import TrainingData
    from ray.rllib.policy.sample_batch import SampleBatch

    from policies.model.five_module import TEAM_ENCODER_KEYS
    runner, learner = runner_and_learner(tiny_smoke(env__mode="5v5", resources__num_envs_per_env_runner=2))
    batch = learner._make_batch_if_necessary(TrainingData(episodes=runner.sample(num_timesteps=40, explore=True)))
    main = batch.policy_batches["main"]
    module = learner.module["main"].unwrapped()

    def teams():
        first = {k: main[Columns.OBS][k][:, 0] for k in TEAM_ENCODER_KEYS}
        return module.team_groups(first)[1].numpy()

    def rows():  # each sequence's data, to check that every column moved together
        return {tuple(np.round(main[Columns.OBS]["global"][i, 0].numpy(), 4)) + (float(main[Columns.REWARDS][i, 0]),
                                                                                 int(main[SampleBatch.SEQ_LENS][i]))
                for i in range(len(main[SampleBatch.SEQ_LENS]))}

    def contiguous(groups):
        starts = [i for i in range(len(groups)) if i == 0 or groups[i] != groups[i - 1]]
        return len(starts) == len(set(groups.tolist()))

    assert contiguous(teams()) and len(set(teams().tolist())) < len(teams()) / 4  # teams of 5 sequences, together
    before, order = rows(), teams().copy()
    main.shuffle()  # what RLlib's minibatch iterator calls between epochs
    assert contiguous(teams()) and rows() == before
    assert not np.array_equal(teams(), order) or len(set(order.tolist())) < 3


# ---- the learner's thread count --------------------------------------------------------------------------------------
def run(chooser, seconds_per_row, minibatches):
    picks = []
    for _ in range(minibatches):
        n = chooser.pick()
        picks.append(n)
        chooser.record(n, 100, 100 * seconds_per_row[n])
    return picks


def test_thread_choice_follows_the_faster_count():
    chooser = ThreadChooser(2)
    picks = run(chooser, {2: 0.001, 1: 0.0015}, 100)
    assert picks[:4] == [2, 2, 1, 1]  # each count's first minibatch is a warm-up, the second a measurement
    probes = [i for i in range(4, 100) if i % PROBE_EVERY == PROBE_EVERY - 1]
    assert [i for i in range(4, 100) if picks[i] == 1] == probes  # then the faster one, probing the other at times
    assert chooser.summary()["learner_threads"] == 2
    picks = run(chooser, {2: 0.004, 1: 0.0015}, 100)  # another process takes a core: two threads are slower
    assert picks[-50:].count(1) > 45 and chooser.summary()["learner_threads"] == 1
    picks = run(chooser, {2: 0.001, 1: 0.0015}, 100)  # the core is free again
    assert picks[-50:].count(2) > 45


def test_one_core_has_nothing_to_choose():
    chooser = ThreadChooser(1)
    assert run(chooser, {1: 0.001}, 10) == [1] * 10


# ---- sampling ahead (ppo.staleness: 1) -------------------------------------------------------------------------------
def test_sampling_ahead_returns_the_batch_sampled_while_the_learner_trained(ray_session):
    from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

    from training.settings import run_settings
    runner, learner = runner_and_learner(tiny_smoke(ppo__staleness=1, resources__num_env_runners=1,
                                                    resources__num_envs_per_env_runner=2))
    assert run_settings(runner.config).ppo.staleness == 1 and runner._sample_ahead
    first = runner.apply(lambda w: w.sample(num_timesteps=20))  # nothing sampled ahead yet: sampled now
    assert runner._ahead is not None  # ... and the next batch is on its way, with the weights of seq no 0
    state = learner.module.get_state()
    runner.apply(lambda w: w.set_state({"rl_module": state, WEIGHTS_SEQ_NO: 7}))  # waits for the batch, then syncs
    second = runner.apply(lambda w: w.sample(num_timesteps=20))  # returned at once: the batch sampled ahead
    third = runner.apply(lambda w: w.sample(num_timesteps=20))
    seq = [{int(s) for e in batch for s in e.get_extra_model_outputs(WEIGHTS_SEQ_NO)} for batch in (second, third)]
    assert seq == [{0}, {7}]  # one version stale: sampled before the sync, then after it
    # the chunks continue each other across the batches sampled ahead: the same episode ids, contiguous steps
    ends = {e.id_: e.t_started + len(e) for e in first if not e.is_done}
    assert ends and all(ends[e.id_] == e.t_started for e in second if e.id_ in ends)
    assert sum(e.id_ in ends for e in second) == len(ends)
    runner.stop()
    assert runner._ahead is None


# ---- the loss, pinned ------------------------------------------------------------------------------------------------
# the loss of each minibatch of one update (2 epochs of 5 minibatches on a fixed sample). Computed with the learner as
# it was before its loss became a sum of named terms; the refactor reproduced every value bit for bit (the kickstart
# cases: after the per-head split of the kickstart loss was removed, which moved them by ~1e-7)
PINNED_LOSSES = {
    "default": [-0.07411649823188782, -0.01284324936568737, -0.005038886796683073, -0.7933763265609741,
                1.5804522037506104, -0.07765532284975052, -0.015915734693408012, -0.005813360679894686,
                -0.8623543381690979, 1.5303022861480713],
    "dual_clip_kl_heads": [4.223245143890381, 2.2163326740264893, 1.758827567100525, 0.4004010260105133,
                           1.174316167831421, 4.096107006072998, 2.1055545806884766, 1.637388825416565,
                           0.37347090244293213, 1.189170241355896],
    "agent_teacher": [5.493270397186279, 7.166586399078369, 4.976558208465576, 5.169497966766357, 5.653136253356934,
                      5.212695121765137, 7.042885780334473, 4.8646626472473145, 4.975439071655273, 5.538464069366455],
    "module_teacher": [3.471940755844116, 3.193042278289795, 0.7465059161186218, 1.6912304162979126, 2.348883867263794,
                       3.408468723297119, 3.138118028640747, 0.6826739311218262, 1.6554059982299805,
                       2.3232638835906982],
}


def pinned_case_losses(tmp: str) -> dict:
    """Each pinned case's minibatch losses (update_losses), the module teacher saved under `tmp`."""
    from test_kickstart import saved_module
    saved_module(os.path.join(tmp, "teacher"), tiny_smoke(), seed=3)
    one_thread = {"resources__learner_threads": 1}  # a fixed thread count: the same sums in the same order
    configs = {
        "default": tiny_smoke(**one_thread),
        "dual_clip_kl_heads": tiny_smoke(ppo__dual_clip=3.0, ppo__use_kl_loss=True, ppo__entropy_bonus="heads",
                                         ppo__aux_win_coeff=0.05, **one_thread),
        "agent_teacher": tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff=0.7, **one_thread),
        "module_teacher": tiny_smoke(init__teacher=os.path.join(tmp, "teacher"), schedules__kickstart_coeff=0.5,
                                     **one_thread),
    }
    return {name: update_losses(cfg) for name, cfg in configs.items()}


def update_losses(cfg) -> list[float]:
    """The loss of each minibatch of one learner update (64 sampled steps, minibatches of 32, 2 epochs), every
    random draw seeded."""
    torch.manual_seed(0)
    np.random.seed(0)
    runner, learner = runner_and_learner(cfg)
    kickstart_coeff = cfg.schedules["kickstart_coeff"]["points"][0][1]
    if kickstart_coeff > 0:  # what the schedule callback sets
        learner.set_schedule_values({"kickstart_coeff": kickstart_coeff})
        runner.set_teacher_labels(True)
    torch.manual_seed(1)
    episodes = runner.sample(num_timesteps=64, explore=True)
    losses, compute_losses = [], learner.compute_losses

    def recording(**kwargs):
        out = compute_losses(**kwargs)
        losses.append(out["main"].item())
        return out
    learner.compute_losses = recording
    np.random.seed(2)
    torch.manual_seed(2)
    learner.update(episodes=episodes, minibatch_size=32, num_epochs=2)
    return losses


def test_the_loss_of_fixed_minibatches_is_pinned(tmp_path):
    """In a fresh interpreter with PYTHONHASHSEED=0: a training env's seed mixes in how many envs its process built
    before, and the sampled rewards vary with Python's string hashing."""
    tests = os.path.dirname(os.path.abspath(__file__))
    code = (f"import json, sys; sys.path[:0] = [{tests!r}, {os.path.dirname(tests)!r}]\n"
            f"from test_five_learner import pinned_case_losses\n"
            f"print('LOSSES ' + json.dumps(pinned_case_losses({str(tmp_path)!r})))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
    lines = [line for line in p.stdout.splitlines() if line.startswith("LOSSES ")]
    assert p.returncode == 0 and lines, p.stdout[-2000:] + p.stderr[-4000:]
    losses = json.loads(lines[-1][len("LOSSES "):])
    assert set(losses) == set(PINNED_LOSSES)
    for name, want in PINNED_LOSSES.items():
        assert losses[name] == pytest.approx(want, rel=1e-4, abs=1e-6), name
