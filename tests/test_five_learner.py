"""What the PPO learner does to train fast (policies/learning/five_learner.py, advantages.py, learner_threads.py): GAE
on the env runners' values, observation statistics merged once per update, sequences shuffled (by team) before every
epoch, and a thread count chosen by measurement."""
from __future__ import annotations

import copy
import json
import os
import sys

import numpy as np
import pytest
import torch
import tree
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


# ---- the learner's connector pipeline --------------------------------------------------------------------------------
def rllib_connector(name: str):
    """(RLlib's connector class, the project's stand-in class, RLlib's instance) by the stand-in's name."""
    from ray.rllib.connectors.common.add_time_dim_to_batch_and_zero_pad import AddTimeDimToBatchAndZeroPad
    from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate

    from policies.learning.bootstrap_step import FastBootstrapStep
    from policies.learning.zero_padding import FastTimeDimZeroPad
    if name == "FastTimeDimZeroPad":
        return AddTimeDimToBatchAndZeroPad, FastTimeDimZeroPad, AddTimeDimToBatchAndZeroPad(as_learner_connector=True)
    return AddOneTsToEpisodesAndTruncate, FastBootstrapStep, AddOneTsToEpisodesAndTruncate()


@pytest.mark.parametrize("name", ["FastTimeDimZeroPad", "FastBootstrapStep"])
def test_the_numpy_connectors_give_the_batch_and_episodes_rllibs_connectors_give(name):
    """FastTimeDimZeroPad and FastBootstrapStep stand in RLlib's AddTimeDimToBatchAndZeroPad's and
    AddOneTsToEpisodesAndTruncate's places in the learner's pipeline, and the train batch of the pinned episodes is the
    same, column for column, bit for bit; so are the episodes the pipeline extended by the bootstrap step."""
    rllib_class, fast_class, rllib_instance = rllib_connector(name)
    episodes = load_pinned_episodes()
    learner = pinned_learner(tiny_smoke(resources__learner_threads=1, init__teacher="scripted",
                                        schedules__kickstart_coeff=0.5))
    pipeline = learner._learner_connector
    i = next(i for i, c in enumerate(pipeline.connectors) if isinstance(c, rllib_class))
    assert type(pipeline.connectors[i]) is fast_class

    def run():
        eps = copy.deepcopy(episodes)
        batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=eps, shared_data={},
                                           metrics=learner.metrics)["main"]
        return batch, [sa.get_state() for e in eps for sa in getattr(e, "agent_episodes", {0: e}).values()]
    fast, fast_episodes = run()
    pipeline.connectors[i] = rllib_instance
    rllib, rllib_episodes = run()
    flat_fast, flat_rllib = tree.flatten_with_path(dict(fast)), tree.flatten_with_path(dict(rllib))
    assert [p for p, _ in flat_fast] == [p for p, _ in flat_rllib] and len(flat_fast) > 10
    for (path, a), (_, b) in zip(flat_fast, flat_rllib):
        assert a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b), path
    assert len(fast_episodes) == len(rllib_episodes) > 0
    for a, b in zip(fast_episodes, rllib_episodes):
        flat_a, flat_b = tree.flatten_with_path(a), tree.flatten_with_path(b)
        assert [p for p, _ in flat_a] == [p for p, _ in flat_b]
        for (path, x), (_, y) in zip(flat_a, flat_b):
            if isinstance(y, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y), path
            else:
                assert x == y, path


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


def test_the_outcome_term_adds_the_win_probabilitys_difference_to_the_chunks_end(ray_session):
    """ppo.win_advantage_coeff c: the advantages are GAE's (standardized) plus c * (label - p_t), p_t the win
    probability the runner recorded at step t and the label the win head's: 0.5 for a game cut by the time limit
    (opponents.time_limit_outcome "draw"),
    the last prediction for a chunk cut mid-game (its last real step adds 0)."""
    from policies.learning.advantages import WIN_ADVANTAGE
    from policies.learning.win_label import DRAW_LABEL, WIN_LABEL
    from policies.model.five_module import WIN_PROB

    draw = {"opponents__time_limit_outcome": "draw"}  # a capped game's label: 0.5
    runner, learner = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=2, **draw))
    runner.sample(num_timesteps=30, explore=True)
    episodes = runner.sample(num_timesteps=60, explore=True)
    assert any(e.is_done for e in episodes) and any(not e.is_done for e in episodes)
    plain = connector_batch(learner, episodes)
    assert WIN_ADVANTAGE not in plain
    runner2, learner2 = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=2,
                                                      ppo__win_advantage_coeff=2.5, **draw))
    learner2.module.set_state(learner.module.get_state())
    got = connector_batch(learner2, episodes)
    win, label = real_steps(got, WIN_ADVANTAGE), real_steps(got, WIN_LABEL)
    preds = torch.cat([torch.as_tensor(np.asarray(e.get_extra_model_outputs(WIN_PROB), np.float32)) for e in episodes])
    torch.testing.assert_close(win, label - preds, rtol=0, atol=1e-6)
    torch.testing.assert_close(real_steps(got, "advantages"), real_steps(plain, "advantages") + 2.5 * win,
                               rtol=0, atol=1e-5)
    assert torch.equal(real_steps(got, "value_targets"), real_steps(plain, "value_targets"))
    starts = np.cumsum([0] + [len(e) for e in episodes])
    for e, a, b in zip(episodes, starts[:-1], starts[1:]):
        if e.is_done:  # the time limit: no winner
            assert torch.all(label[a:b] == DRAW_LABEL)
        else:  # the chunk's own last prediction: nothing added at its last step
            assert float(win[b - 1]) == 0.0 and float(win[a:b].abs().sum()) > 0
    assert float(win.abs().max()) > 0


def real_steps(batch, column) -> torch.Tensor:
    """A zero-padded column's entries at the real steps (LOSS_MASK: neither padding nor the artificial bootstrap step,
    whose GAE numbers RLlib computes from whatever follows it in the batch), in order."""
    return batch[column][batch[Columns.LOSS_MASK]]


@pytest.mark.parametrize("first,second", [(24, 4), (20, 30)])
def test_two_sampling_rounds_of_one_runner_train_as_separate_chunks(ray_session, first, second):
    """PPO samples a runner again until train_batch_size env steps are in (RLlib's synchronous_parallel_sample, e.g.
    with rollout_fragment_length a divisor of the batch) and updates on the chunks of every round together: a hero's
    chunk from each round must stay its own sequences. With 2 games (first, second) are 12 then 2 steps per game,
    whose chunks merged into one row made GAE read past the batch (IndexError), and 10 then 15, merged into as many
    rows as apart but 5 steps out of line (sequence lengths, LSTM states and GAE inputs)."""
    from policies.learning.advantages import check_one_chunk_per_key
    from training.batched_env_runner import chunk_origin

    runner, learner = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=2))
    rounds = [runner.sample(num_timesteps=n, explore=True) for n in (first, second)]
    both = rounds[0] + rounds[1]
    # every chunk of the second round continues its hero's chunk of the first: the next number, contiguous steps
    ends = {chunk_origin(e)[0]: (chunk_origin(e)[1] + 1, e.t_started + len(e)) for e in rounds[0]}
    assert len(ends) == 4 and {chunk_origin(e)[0]: (chunk_origin(e)[1], e.t_started) for e in rounds[1]} == ends
    assert len({(e.multi_agent_episode_id, e.agent_id) for e in both}) == len(both) == 8  # ... under its own ids
    check_one_chunk_per_key(both)
    got, apart = connector_batch(learner, both), [connector_batch(learner, r) for r in rounds]
    assert got[Columns.SEQ_LENS].tolist() == apart[0][Columns.SEQ_LENS].tolist() + apart[1][Columns.SEQ_LENS].tolist()
    assert int(got[Columns.LOSS_MASK].sum()) == sum(len(e) for e in both)  # every real step once, no padding
    for column in (Columns.REWARDS, Columns.LOSS_MASK, Columns.VF_PREDS, Columns.ACTION_LOGP):
        assert torch.equal(got[column], torch.cat([apart[0][column], apart[1][column]])), column
    for k in got[Columns.STATE_IN]:  # each sequence starts from its own chunk's LSTM state
        assert torch.equal(got[Columns.STATE_IN][k], torch.cat([a[Columns.STATE_IN][k] for a in apart])), k
    targets = real_steps(got, "value_targets")
    torch.testing.assert_close(targets, torch.cat([real_steps(a, "value_targets") for a in apart]), rtol=0, atol=1e-6)
    # advantages: standardized over the whole batch, so in each round an increasing affine map of the round's own
    advantages = real_steps(got, "advantages")
    for part, own in zip(advantages.split([len(real_steps(a, "advantages")) for a in apart]), apart):
        assert float(torch.corrcoef(torch.stack([part, real_steps(own, "advantages")]))[0, 1]) > 1 - 1e-5
    # two chunks under one batch key are refused, not merged
    rounds[1][0].multi_agent_episode_id = rounds[0][0].multi_agent_episode_id
    with pytest.raises(ValueError, match="share the batch key"):
        connector_batch(learner, both)


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


def test_a_5v5_batch_numbers_each_teams_steps_as_their_inputs_group_them(ray_session):
    """AddTeamStep (policies/learning/team_steps.py) gives the rows of one team at one step of one game one number:
    on a 5v5 learner batch of two games and two sampling rounds its groups are the groups of equal team inputs, the
    padded steps hold 0, and a 1v1 batch has no such column."""
    from policies.model.five_module import TEAM_ENCODER_KEYS, TEAM_STEP
    runner, learner = runner_and_learner(tiny_smoke(env__mode="5v5", resources__num_envs_per_env_runner=2))
    episodes = runner.sample(num_timesteps=24, explore=True) + runner.sample(num_timesteps=10, explore=True)
    batch = connector_batch(learner, episodes)
    module = learner.module["main"].unwrapped()
    steps = batch[TEAM_STEP]
    mask = batch[Columns.LOSS_MASK]
    padded = torch.arange(steps.shape[1])[None] >= batch[Columns.SEQ_LENS][:, None]
    assert steps.dtype == torch.int64 and bool(padded.any()) and bool((steps[padded] == 0).all())
    assert bool((steps[~padded] > 0).all())
    # the real steps (the bootstrap steps left out: each repeats its chunk's last inputs under a number of its own)
    real = {k: v[mask] for k, v in batch[Columns.OBS].items()}
    by_steps, by_inputs = module.step_groups(real, steps[mask]), module.team_groups(
        {k: real[k] for k in TEAM_ENCODER_KEYS})
    assert len(by_steps[0]) == len(by_inputs[0]) and len(by_steps[0]) < len(steps[mask]) / 4  # teams of 5 rows
    assert torch.equal(by_steps[0][by_steps[1]], by_inputs[0][by_inputs[1]])  # each row's group's first row
    assert len(set((steps[mask] >> 32).tolist())) == 8  # both sides of two games, in each of two rounds
    runner, learner = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=2))
    assert TEAM_STEP not in connector_batch(learner, runner.sample(num_timesteps=20, explore=True))


def test_1v1_sequences_are_shuffled_before_the_first_epoch(ray_session):
    """RLlib shuffles a batch only between epochs; when PPO asks for shuffling (shuffle_batch_per_epoch), the learner
    shuffles it before the first as well, so that the first epoch's minibatches (every minibatch at one epoch) mix the
    games instead of holding a few whole game chunks."""
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
    from ray.rllib.core.learner.training_data import TrainingData
    from ray.rllib.policy.sample_batch import SampleBatch

    from moba.env.observation import GLOBAL_TIME
    runner, learner = runner_and_learner(tiny_smoke(resources__num_envs_per_env_runner=4))
    episodes = runner.sample(num_timesteps=320, explore=True)

    def rows(batch):  # (game time at each sequence's first step, its first reward, its length), in the batch's order
        main = batch.policy_batches["main"]
        return [(round(float(main[Columns.OBS]["global"][i, 0, GLOBAL_TIME]), 4), float(main[Columns.REWARDS][i, 0]),
                 int(main[SampleBatch.SEQ_LENS][i])) for i in range(len(main[SampleBatch.SEQ_LENS]))]

    np.random.seed(0)
    runner_order = rows(learner._make_batch_if_necessary(TrainingData(episodes=copy.deepcopy(episodes))))
    assert runner_order == rows(PPOTorchLearner._make_batch_if_necessary(
        learner, TrainingData(episodes=copy.deepcopy(episodes))))  # without shuffle_batch_per_epoch: RLlib's order
    learner._shuffle_first_epoch = True  # what an update with PPO's shuffle_batch_per_epoch sets
    shuffled = rows(learner._make_batch_if_necessary(TrainingData(episodes=episodes)))
    assert len(runner_order) >= 12 and sorted(shuffled) == sorted(runner_order)  # every sequence, once

    def in_time_order(order):  # adjacent sequences where the second starts later in its game: one game's chunk
        return sum(b[0] > a[0] for a, b in zip(order, order[1:])) / (len(order) - 1)
    # RLlib's own order is game after game (games of 3 sequences here: at most 2/3 of the pairs); shuffled, about 1/3
    assert in_time_order(runner_order) > 0.55 and in_time_order(shuffled) < 0.45


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

    from training.batched_env_runner import chunk_origin
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
    # the chunks continue each other across the batches sampled ahead: the same heroes' next chunks, contiguous steps
    ends = {chunk_origin(e)[0]: (chunk_origin(e)[1] + 1, e.t_started + len(e)) for e in first if not e.is_done}
    assert ends and {chunk_origin(e)[0]: (chunk_origin(e)[1], e.t_started) for e in second
                     if chunk_origin(e)[0] in ends} == ends
    runner.stop()
    assert runner._ahead is None


# ---- the loss, pinned ------------------------------------------------------------------------------------------------
# the loss of each minibatch of one update (2 epochs of 5 minibatches) on a stored sample (PINNED_EPISODES): the
# learner's loss, not the games, is pinned. A sample drawn afresh differs between machines (one action drawn otherwise
# changes the game), so the episodes were sampled once by the learner's starting weights and saved
# (`python tests/test_five_learner.py --pin` samples them again and prints the new values).
PINNED_EPISODES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pinned_episodes.pkl.gz")
PINNED_LOSSES = {
    "default": [
        -0.03352293744683266, 0.12721341848373413, -0.20342177152633667, 1.0391980409622192, -0.9148273468017578,
        -0.06538254767656326, 0.1213437169790268, -0.2059522271156311, 1.0018069744110107, -0.946864902973175,
    ],
    "dual_clip_kl_heads": [
        -0.005788050591945648, 0.1550833135843277, -0.1737106889486313, 1.0609207153320312, -0.8840963840484619,
        -0.0306258425116539, 0.1464652568101883, -0.17299169301986694, 1.0155354738235474, -0.9157997965812683,
    ],
    "agent_teacher": [
        4.535295009613037, 4.542253017425537, 4.255527973175049, 5.3816938400268555, 3.6853537559509277,
        4.298549652099609, 4.412335395812988, 4.10831356048584, 5.280458927154541, 3.63189959526062,
    ],
    "module_teacher": [
        0.0821281373500824, 0.18969334661960602, -0.09545747190713882, 0.9983470439910889, -0.8250982761383057,
        0.0695364773273468, 0.15918922424316406, -0.1125553771853447, 0.9803168773651123, -0.83420330286026,
    ],
}


def pinned_configs(tmp: str) -> dict:
    """Each pinned case's run config (the module teacher saved under `tmp`): the plain loss (no KL stop, no
    diagnostics' forward pass), one thread (the same sums in the same order)."""
    from test_kickstart import saved_module
    saved_module(os.path.join(tmp, "teacher"), tiny_smoke(), seed=3)
    plain = {"resources__learner_threads": 1, "ppo__target_kl": 0.0, "ppo__diagnostics_every": 0}
    return {
        "default": tiny_smoke(**plain),
        "dual_clip_kl_heads": tiny_smoke(ppo__dual_clip=3.0, ppo__use_kl_loss=True, ppo__entropy_bonus="heads",
                                         ppo__aux_win_coeff=0.05, **plain),
        "agent_teacher": tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff=0.7, **plain),
        "module_teacher": tiny_smoke(init__teacher=os.path.join(tmp, "teacher"), schedules__kickstart_coeff=0.5,
                                     **plain),
    }


def pinned_learner(cfg):
    """The learner of `cfg` with the pinned starting weights (torch seed 0), the kickstart weight set as the schedule
    callback sets it."""
    from training.algorithm import build_algo_config, make_training_env
    from callbacks import run_callbacks
    torch.manual_seed(0)
    np.random.seed(0)
    learner = build_algo_config(cfg, run_callbacks()).build_learner(env=make_training_env({**cfg.env, "seed": 0}))
    kickstart_coeff = cfg.schedules["kickstart_coeff"]["points"][0][1]
    if kickstart_coeff > 0:
        learner.set_schedule_values({"kickstart_coeff": kickstart_coeff})
    return learner


def sample_pinned_episodes(cfg) -> list:
    """64 env steps sampled by the pinned starting weights with `cfg`'s runner."""
    from ray.tune.registry import register_env

    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from callbacks import run_callbacks
    from training.batched_env_runner import BatchedEnvRunner
    learner = pinned_learner(cfg)
    register_env(ENV_NAME, make_training_env)
    runner = BatchedEnvRunner(config=build_algo_config(cfg, run_callbacks()))
    runner.module.set_state(learner.module.get_state())
    runner.set_teacher_labels(True)
    torch.manual_seed(1)
    return runner.sample(num_timesteps=64, explore=True)


def update_losses(cfg, episodes) -> list[float]:
    """The loss of each minibatch of one learner update on `episodes` (minibatches of 32, 2 epochs), every random
    draw seeded."""
    learner = pinned_learner(cfg)
    losses, compute_losses = [], learner.compute_losses

    def recording(**kwargs):
        out = compute_losses(**kwargs)
        losses.append(out["main"].item())
        return out
    learner.compute_losses = recording
    np.random.seed(2)
    torch.manual_seed(2)
    learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)
    return losses


def load_pinned_episodes() -> list:
    import gzip
    import pickle

    from ray.rllib.env.single_agent_episode import SingleAgentEpisode
    with gzip.open(PINNED_EPISODES, "rb") as f:
        return [SingleAgentEpisode.from_state(s) for s in pickle.load(f)]


def pin(tmp: str) -> dict:
    """Samples and saves the pinned episodes anew; returns each case's losses on them (the new PINNED_LOSSES)."""
    import gzip
    import pickle
    configs = pinned_configs(tmp)
    # the agent teacher's labels, and the action distribution's inputs (the KL penalty reads them)
    episodes = sample_pinned_episodes(tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff=0.7,
                                                 ppo__use_kl_loss=True, resources__learner_threads=1))
    os.makedirs(os.path.dirname(PINNED_EPISODES), exist_ok=True)
    with gzip.GzipFile(PINNED_EPISODES, "wb", mtime=0) as f:
        pickle.dump([e.get_state() for e in episodes], f)
    episodes = load_pinned_episodes()
    return {name: update_losses(cfg, episodes) for name, cfg in configs.items()}


def test_the_loss_of_fixed_minibatches_is_pinned(tmp_path):
    episodes = load_pinned_episodes()
    configs = pinned_configs(str(tmp_path))
    assert set(configs) == set(PINNED_LOSSES)
    for name, want in PINNED_LOSSES.items():
        assert update_losses(configs[name], episodes) == pytest.approx(want, rel=1e-4, abs=1e-6), name




def test_entropy_head_weights_weigh_each_heads_part_of_the_bonus():
    """ppo.entropy_head_weights: 1 for every head is the action's entropy, bit for bit; {primary: 10, delay: 0} moves
    the first minibatch's loss by -coeff (9 H(primary) - H(delay)), the heads' parts as logged; the logged entropy
    stays the action's."""
    from policies.model.action_distribution import FiveActionDistribution
    from training.settings import ACTION_HEADS
    assert ACTION_HEADS == FiveActionDistribution.HEADS
    episodes = load_pinned_episodes()
    plain = {"resources__learner_threads": 1, "ppo__target_kl": 0.0, "ppo__diagnostics_every": 0,
             "schedules__entropy_coeff": 0.01}

    def first_minibatch(weights=None) -> dict:
        learner = pinned_learner(tiny_smoke(ppo__entropy_head_weights=weights, **plain))
        out, compute_losses = {}, learner.compute_losses

        def recording(**kwargs):
            losses = compute_losses(**kwargs)
            if not out:
                out["loss"] = losses["main"].item()
                for name in ("entropy", "entropy_coeff", *(f"entropy_{h}" for h in ACTION_HEADS)):
                    out[name] = result_value(learner.metrics.peek(("main", name)))
            return losses
        learner.compute_losses = recording
        np.random.seed(2)
        torch.manual_seed(2)
        learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=1)
        return out
    base = first_minibatch()
    assert first_minibatch({h: 1.0 for h in ACTION_HEADS}) == base
    aimed = first_minibatch({"primary": 10.0, "delay": 0})
    assert base["entropy_coeff"] == pytest.approx(0.01) and base["entropy_primary"] > 0 and base["entropy_delay"] > 0
    assert aimed["entropy"] == base["entropy"]
    assert aimed["loss"] - base["loss"] == pytest.approx(
        -0.01 * (9 * base["entropy_primary"] - base["entropy_delay"]), rel=1e-3)

# ---- the bounded update (ppo.target_kl) and the update's diagnostics -------------------------------------------------
def adam_steps(learner) -> set:
    """The optimizer steps Adam applied to each parameter (one number when they all agree)."""
    opt = next(iter(learner._named_optimizers.values()))
    return {int(st["step"]) for st in opt.state.values()}


def result_value(v):
    return float(v.peek()) if hasattr(v, "peek") else float(v)


def test_target_kl_stops_the_update_before_the_minibatch_that_passes_it(tmp_path):
    episodes = load_pinned_episodes()
    plain = {"resources__learner_threads": 1, "ppo__diagnostics_every": 0}
    free = pinned_learner(tiny_smoke(ppo__target_kl=0.0, **plain))
    np.random.seed(2)
    main = free.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    assert adam_steps(free) == {10} and result_value(main["minibatches_applied"]) == 10
    assert result_value(main["kl_stopped"]) == 0.0 and result_value(main["approx_kl"]) > 1e-4
    # a target below the second minibatch's KL: its gradients are dropped and the rest is skipped
    bounded = pinned_learner(tiny_smoke(ppo__target_kl=1e-7, **plain))
    calls, compute_losses = [], bounded.compute_losses
    bounded.compute_losses = lambda **kw: calls.append(1) or compute_losses(**kw)
    np.random.seed(2)
    main = bounded.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    assert len(calls) == 2 and adam_steps(bounded) == {1}
    assert result_value(main["minibatches_applied"]) == 1 and result_value(main["kl_stopped"]) == 1.0
    assert result_value(main["approx_kl"]) > 1e-7
    assert result_value(main["approx_kl_at_start"]) < 1e-9  # fresh episodes: the first minibatch has ratio 1
    # the next update starts afresh on these episodes, now one update stale (as with ppo.staleness 1): its first
    # minibatch already shows the last update's KL, which the stop does not count, so it applies that minibatch
    # and stops at the first whose KL has passed the start's by the target
    main = bounded.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    start, applied = result_value(main["approx_kl_at_start"]), int(result_value(main["minibatches_applied"]))
    assert start > 1e-7 and result_value(main["kl_stopped"]) == 1.0
    assert 1 <= applied < 10 and len(calls) == 2 + applied + 1 and adam_steps(bounded) == {1 + applied}
    assert result_value(main["approx_kl"]) > start + 1e-7


def test_an_update_reports_its_diagnostics_and_the_mean_advantage_of_each_primary_action(tmp_path):
    from ray.rllib.evaluation.postprocessing import Postprocessing

    from moba.env.actions import PRIMARY_NAMES
    episodes = load_pinned_episodes()
    learner = pinned_learner(tiny_smoke(ppo__target_kl=0.0, ppo__diagnostics_every=2, init__teacher="scripted",
                                        schedules__kickstart_coeff=0.5, resources__learner_threads=1))
    batch = connector_batch(learner, episodes)
    mask = np.asarray(batch[Columns.LOSS_MASK]).astype(bool)
    adv = np.asarray(batch[Postprocessing.ADVANTAGES])[mask]
    primary = np.asarray(batch[Columns.ACTIONS]["primary"])[mask]
    np.random.seed(2)
    main = learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    for i, name in enumerate(PRIMARY_NAMES):
        if (primary == i).any():  # every epoch sees each step once: the mean over the update is the batch's
            assert result_value(main[f"advantage_{name}"]) == pytest.approx(adv[primary == i].mean(), abs=1e-5)
        else:
            assert np.isnan(result_value(main[f"advantage_{name}"]))
    norms = {t: result_value(main[f"grad_norm_{t}"]) for t in ("policy", "value", "entropy", "kickstart")}
    assert all(v > 0 for v in norms.values()), norms
    assert result_value(main["grad_norm_kl_penalty"]) == 0.0  # no KL penalty in this config
    assert -1.0 <= result_value(main["gradient_noise_cosine"]) <= 1.0
    assert 0 < result_value(main["diagnostics_steps"]) <= 1024
    for head in ("primary", "delay"):
        assert 0.0 <= result_value(main[f"teacher_agreement_{head}"]) <= 1.0
    # every ppo.diagnostics_every (2) updates: not in the second
    np.random.seed(2)
    second = learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    assert all(np.isnan(result_value(second[k])) for k in ("grad_norm_policy", "gradient_noise_cosine"))
    np.random.seed(2)
    third = learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)["main"]
    assert result_value(third["grad_norm_policy"]) > 0


def test_the_optimizer_steps_on_finite_gradients_and_rllib_zeroes_a_non_finite_one():
    """apply_gradients checks all gradients at once (one wait on a GPU) and steps; a non-finite gradient goes to
    RLlib's own path, which sets it to zero and steps on the rest."""
    learner = pinned_learner(tiny_smoke(resources__learner_threads=1, ppo__diagnostics_every=0))
    params = learner._params
    before = {pid: p.detach().clone() for pid, p in params.items()}
    learner.apply_gradients({pid: torch.ones_like(p) for pid, p in params.items()})
    assert adam_steps(learner) == {1}
    # Adam's first step moves every weight by lr against the gradient's sign
    lr = next(iter(learner._named_optimizers.values())).param_groups[0]["lr"]
    assert all(torch.allclose(before[pid] - p.detach(), torch.full_like(p, lr), rtol=1e-3) for pid, p in params.items())
    bad = next(iter(params))
    grads = {pid: torch.ones_like(p) for pid, p in params.items()}
    grads[bad] = torch.full_like(params[bad], float("nan"))
    learner.apply_gradients(grads)
    assert adam_steps(learner) == {2}
    assert torch.isfinite(params[bad]).all() and all(torch.isfinite(p).all() for p in params.values())
    assert torch.equal(params[bad].grad, torch.zeros_like(params[bad]))  # RLlib's nan_to_num


def test_adam_is_fused_and_stays_fused_when_a_state_saved_unfused_is_loaded():
    """Torch's fused Adam (one kernel a step on the CPU), also after loading an older checkpoint's optimizer state,
    which was saved with fused off; its steps are the unfused Adam's."""
    learner = pinned_learner(tiny_smoke(resources__learner_threads=1, ppo__diagnostics_every=0))
    opt = next(iter(learner._named_optimizers.values()))
    assert [g["fused"] for g in opt.param_groups] == [True]
    params = learner._params
    reference = [p.detach().clone().requires_grad_(True) for p in params.values()]
    unfused = torch.optim.Adam(reference, lr=opt.param_groups[0]["lr"], betas=opt.param_groups[0]["betas"])
    for step in (1, 2):
        grads = [torch.randn(p.shape, generator=torch.Generator().manual_seed(10 * step + i))
                 for i, p in enumerate(params.values())]
        learner.apply_gradients(dict(zip(params, grads)))
        for p, g in zip(reference, grads):
            p.grad = g.clone()
        unfused.step()
        assert adam_steps(learner) == {step}
        for p, q in zip(params.values(), reference):
            torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=1e-7)
        if step == 1:
            state = learner.get_state()
            for saved in state["optimizer"].values():
                for group in saved["state"]["param_groups"]:
                    group["fused"] = None  # as a checkpoint saved before
            learner.set_state(state)
            assert [g["fused"] for g in opt.param_groups] == [True]


if __name__ == "__main__" and sys.argv[1:] == ["--pin"]:
    import tempfile
    print("PINNED_LOSSES = " + json.dumps(pin(tempfile.mkdtemp()), indent=4))


def test_a_non_finite_loss_stops_the_update_and_names_what_is_not_finite():
    """RLlib would zero non-finite gradients and step on (Adam's state corrupted, the runners handed NaN weights);
    the learner raises instead, naming the loss terms, batch columns and module tensors that are not finite."""
    episodes = load_pinned_episodes()
    learner = pinned_learner(tiny_smoke(resources__learner_threads=1, ppo__diagnostics_every=0))
    module = learner.module["main"].unwrapped()
    with torch.no_grad():
        module.value_head.bias.fill_(float("nan"))
    opt = next(iter(learner._named_optimizers.values()))
    with pytest.raises(FloatingPointError, match=r"not finite \(update 1, minibatch 1\).*'value'.*value_head\.bias"):
        learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=1)
    assert not opt.state  # no optimizer step was taken
