"""One reward scale for the whole run (reward.normalize_scope: run; moba/env/reward_wrapper.py RunReturnScaler,
callbacks/reward_scale.py): the env runners' return statistics merged exactly on the driver, the same std on every
runner for a whole sampling round, kept in checkpoints; the process-wide scaler unchanged where no run exists."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from test_training_e2e import build_algo, tiny_smoke
from test_training_rewards import StubEnv

from callbacks.reward_scale import RewardScaleCallback
from moba.env import reward_wrapper
from moba.env.reward_wrapper import SCALE_WARMUP, PostprocessedRewardEnv, ReturnScaler, RunReturnScaler
from training.settings import SETTINGS_KEY, RunSettings


def run_env(raw, gamma=0.9):
    """A 1v1 stub env normalized by the run's std (no zero sum, no decay: its post-processed rewards are `raw`)."""
    return PostprocessedRewardEnv(StubEnv(raw=raw, win=[0.0, 0.0], game_time=0.0), team_spirit=0.0, zero_sum=False,
                                  time_decay=False, normalize_gamma=gamma, normalize_scope="run")


def play(env, steps):
    env.reset()
    return [env.step({})[1] for _ in range(steps)]


def test_merged_statistics_are_exact_for_any_split():
    rng = np.random.default_rng(0)
    values = rng.normal(3.0, 2.0, 1000)
    whole = ReturnScaler()
    whole.update(values)
    merged = ReturnScaler()
    for part in np.split(values, [7, 300, 301, 650]):
        piece = RunReturnScaler()
        piece.update(part)
        merged.merge(*piece.take_increment())
        assert piece.count == 0 and piece.m2 == 0.0  # handed over and cleared
    assert merged.count == 1000
    assert merged.mean == pytest.approx(values.mean(), rel=1e-12)
    assert merged.std == pytest.approx(np.std(values, ddof=1), rel=1e-10)
    assert ReturnScaler.from_state_dict(merged.state_dict()).state_dict() == merged.state_dict()


def test_a_run_env_divides_by_the_std_it_was_given_and_leaves_the_process_scaler_alone():
    before = reward_wrapper.PROCESS_SCALER.state_dict()
    env = run_env([1.0, 0.25])
    rewards = play(env, 2 * SCALE_WARMUP)  # past the process scaler's warm-up: the std would have moved
    assert all(r == {"radiant_0": 1.0, "dire_0": 0.25} for r in rewards)  # 1 until the first sync
    count, mean, m2 = env.take_return_stats()
    returns = np.array([[1.0, 0.25]]) * ((1 - 0.9 ** np.arange(1, 2 * SCALE_WARMUP + 1)) / (1 - 0.9))[:, None]
    assert count == returns.size and mean == pytest.approx(returns.mean())
    assert m2 == pytest.approx(((returns - returns.mean()) ** 2).sum())
    assert env.take_return_stats() == (0, 0.0, 0.0)
    env.set_return_std(4.0)
    assert play(env, 3) == [{"radiant_0": 0.25, "dire_0": 0.0625}] * 3  # fixed: the std did not follow the returns
    assert reward_wrapper.PROCESS_SCALER.state_dict() == before
    with pytest.raises(ValueError, match="positive"):
        env.set_return_std(0.0)


def test_a_wrapper_built_by_hand_keeps_the_process_scaler():
    env = PostprocessedRewardEnv(StubEnv(raw=[1.0, 0.25], win=[0.0, 0.0], game_time=0.0), normalize_gamma=0.9)
    assert env.scaler is reward_wrapper.PROCESS_SCALER
    with pytest.raises(ValueError, match="normalize_scope 'process'"):
        env.set_return_std(2.0)
    with pytest.raises(ValueError, match=r"normalize_scope must be one of \['run', 'process'\], got 'runner'"):
        PostprocessedRewardEnv(StubEnv(raw=[1.0, 0.25], win=[0.0, 0.0], game_time=0.0), normalize_scope="runner")


class FakeRunner:
    def __init__(self, envs):
        self.env = None if envs is None else type("VectorEnv", (), {"envs": envs})()


class FakeGroup:
    """RLlib's EnvRunnerGroup as the callback uses it: a local runner and remote ones."""

    def __init__(self, local, remote):
        self.local, self.remote = local, remote

    def num_remote_env_runners(self):
        return len(self.remote)

    def foreach_env_runner(self, func, local_env_runner=True, **kwargs):
        return [func(r) for r in ([self.local] if local_env_runner else []) + self.remote]


class FakeLearners:
    def __init__(self):
        self.states, self.ratios = [], []

    def foreach_learner(self, func):
        learner = type("Learner", (), {"set_reward_scale_state": lambda _, s: self.states.append(s),
                                       "rescale_value_head": lambda _, r: self.ratios.append(r)})()
        return [func(learner)]


def sync(local, remote):
    """One iteration's sync by RewardScaleCallback over fake runners; returns the callback and its result."""
    callback = RewardScaleCallback()
    callback.scaler = ReturnScaler()
    config = type("Config", (), {"learner_config_dict": {SETTINGS_KEY: RunSettings.from_dict({}).to_dict()}})()
    algorithm = type("Algo", (), {"env_runner_group": FakeGroup(local, remote), "learner_group": FakeLearners(),
                                  "config": config})()
    result = {}
    callback.on_train_result(algorithm=algorithm, result=result)
    return callback, algorithm, result


def test_the_driver_merges_every_runner_and_sends_one_std_to_all():
    envs = [run_env([1.0, 0.25]), run_env([3.0, -2.0]), run_env([0.5, 0.5], gamma=0.5)]
    for e, steps in zip(envs, (40, 70, 90)):
        play(e, steps)
    # a local runner with an env of its own (games in the driver) is not read while remote ones sample
    local_env = run_env([100.0, -100.0])
    play(local_env, 50)
    expected = merged(envs)
    stds = [np.sqrt(s.m2 / (s.count - 1)) for s in (merged(envs[:2]), merged(envs[2:]))]  # each runner's own
    callback, algorithm, result = sync(FakeRunner([local_env]), [FakeRunner(envs[:2]), FakeRunner(envs[2:])])
    assert callback.scaler.count == expected.count == 2 * (40 + 70 + 90)
    assert callback.scaler.std == pytest.approx(expected.std, rel=1e-12)
    assert {e.scaler.std for e in envs + [local_env]} == {callback.scaler.std}  # one std for every env
    assert local_env.scaler.count == 100  # its statistics were not taken
    assert algorithm.learner_group.states == [callback.scaler.state_dict()]  # carried to the checkpoints
    # the value head rescaled from the runners' first std (1) to the new one
    assert algorithm.learner_group.ratios == [pytest.approx(1.0 / callback.scaler.std)] == [result["reward_scale"][
        "value_head_ratio"]]
    assert result["reward_scale"]["runner_std_min"] == pytest.approx(min(stds))
    assert result["reward_scale"]["runner_std_max"] == pytest.approx(max(stds))
    assert result["reward_scale"]["round_returns"] == expected.count
    # without remote runners the local one samples, and is read
    callback, _, _ = sync(FakeRunner([local_env]), [])
    assert callback.scaler.count == 100


def merged(envs) -> ReturnScaler:
    out = ReturnScaler()
    for e in envs:
        out.merge(e.scaler.count, e.scaler.mean, e.scaler.m2)
    return out


def make_std_probe():
    """A callback logging, from the sampled steps, the std each reward was divided by (post-processed reward over
    reward), min and max over every runner. Defined in a function so that it travels to the env runners by value."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class StdProbe(RLlibCallback):
        def on_sample_end(self, *, samples, metrics_logger, **kwargs):
            for episode in samples:
                rewards, infos = episode.get_rewards(), episode.get_infos()
                for t, r in enumerate(rewards):
                    pp = infos[t + 1].get("postprocessed_reward", 0.0)
                    if abs(pp) > 1e-6 and abs(r) > 1e-9:
                        for reduce in ("min", "max"):
                            metrics_logger.log_value(f"probe_std_{reduce}", pp / r, reduce=reduce,
                                                     clear_on_reduce=True)

    return StdProbe


def test_two_runners_divide_by_the_run_std_and_a_checkpoint_keeps_it(ray_session, no_home_results, monkeypatch):
    from policies.learning.five_learner import FivePPOLearner

    seen = []  # the learner's value head before each rescale, and the ratio (the learner is local: num_learners 0)
    rescale = FivePPOLearner.rescale_value_head

    def recording(self, ratio):
        seen.append((self.module["main"].value_head.weight.detach().clone(), ratio))
        rescale(self, ratio)

    monkeypatch.setattr(FivePPOLearner, "rescale_value_head", recording)
    cfg = tiny_smoke(resources__num_env_runners=2, resources__num_envs_per_env_runner=2)
    assert cfg.reward.normalize_scope == "run"  # the training default
    algo = build_algo(cfg, extra_callbacks=[make_std_probe()])

    def stds(er):
        return [e.unwrapped.scaler.std for e in er.env.envs]

    def runner_head(er):
        return er.module["main"].value_head.weight.detach().clone()

    def learner_head():
        return torch.as_tensor(algo.learner_group.get_weights(module_ids=["main"])["main"]["value_head.weight"])

    try:
        r1 = algo.train()
        assert r1["env_runners"]["probe_std_min"] == pytest.approx(1.0)  # the first round: no statistics yet
        assert r1["env_runners"]["probe_std_max"] == pytest.approx(1.0)
        scale = RewardScaleCallback.of(algo).scaler
        std1 = scale.std
        assert scale.count >= 2 * cfg.ppo.train_batch_size and std1 != pytest.approx(1.0)
        assert r1["reward_scale"]["std"] == std1 and r1["reward_scale"]["returns"] == scale.count
        assert algo.env_runner_group.foreach_env_runner(stds, local_env_runner=False) == [[std1] * 2] * 2
        # the value head, on the learner and both runners alike, rescaled from std 1 (the first round's) to std1
        assert r1["reward_scale"]["value_head_ratio"] == pytest.approx(1.0 / std1) == seen[0][1]
        assert torch.equal(learner_head(), seen[0][0] * seen[0][1])
        for runner in algo.env_runner_group.foreach_env_runner(runner_head, local_env_runner=False):
            assert torch.equal(runner, learner_head())
        r2 = algo.train()
        # the second round: every reward of both runners divided by the std merged after the first
        assert r2["env_runners"]["probe_std_min"] == pytest.approx(std1, rel=1e-4)
        assert r2["env_runners"]["probe_std_max"] == pytest.approx(std1, rel=1e-4)
        assert scale.count > r1["reward_scale"]["returns"]
        state = scale.state_dict()
        path = algo.save_to_path(str(no_home_results / "ckpt"))
    finally:
        algo.stop()
    algo = build_algo(tiny_smoke(resources__num_env_runners=1, resources__num_envs_per_env_runner=2))
    try:
        algo.load_checkpoint(path)  # what --resume and init.restore do
        assert RewardScaleCallback.of(algo).scaler.state_dict() == state
        std = RewardScaleCallback.of(algo).scaler.std
        assert algo.env_runner_group.foreach_env_runner(stds, local_env_runner=False) == [[std] * 2]
    finally:
        algo.stop()
