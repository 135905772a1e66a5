"""The batched env runner (training/batched_env_runner.py) against RLlib's classic MultiAgentEnvRunner: the same games,
weights and actions give the learner the same batch for "main", and the runner logs the same counts and game metrics.

Both runners are built in this process from one config; the env instance counter is reset before each so that their
envs are seeded alike, and the action distribution takes the most likely actions on both paths (logp included). Games
last 4 s (30 steps), so that the three samples cover first chunks, chunks continued across samples, games ended by the
time limit, the reset of finished games and chunks after a reset.

One difference is intended: RLlib's MultiAgentEpisode marks a game that every agent ends truncated as terminated as
well (its "some truncated, the others terminated" rule also fires when all are truncated), so GAE does not bootstrap
at the time limit; the batched runner keeps such games truncated only. The comparison first checks that difference,
then applies the batched runner's flags to the classic episodes and requires every column to match.
"""
from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
import torch
import tree
from test_training_e2e import tiny_smoke

SAMPLES = (40, 50, 31)  # env steps per sample() call, with 3 envs and 30-step games
# columns computed by the network: equal up to float rounding (every other column bit for bit)
MODEL_OUTPUTS = {"win_prob", "vf_preds", "action_logp", "state_in", "aux_win_label", "advantages", "value_targets"}


def build_runners(monkeypatch, cfg):
    from training.classic_env_runner import ClassicEnvRunner
    from ray.tune.registry import register_env

    import moba.env.moba_env as moba_env
    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from callbacks import run_callbacks
    from training.batched_env_runner import BatchedEnvRunner
    from policies.model.action_distribution import FiveActionDistribution

    monkeypatch.setattr(FiveActionDistribution, "_draw", lambda self, logits, generator=None: logits.argmax(-1))
    register_env(ENV_NAME, make_training_env)
    algo_config = build_algo_config(cfg, run_callbacks())
    torch.manual_seed(0)
    monkeypatch.setattr(moba_env, "_instance_counter", itertools.count())
    classic = ClassicEnvRunner(config=algo_config)
    monkeypatch.setattr(moba_env, "_instance_counter", itertools.count())  # the same seeds for the batched envs
    batched = BatchedEnvRunner(config=algo_config)
    batched.module.set_state(classic.module.get_state())
    return algo_config, classic, batched


def in_classic_order(new: list, old: list) -> list:
    """The batched runner's chunks in the order RLlib's learner connectors meet the classic runner's: game by game as
    the classic episodes come, and within a game in the order of MultiAgentEpisode.agent_ids (a set: the order varies
    between processes). Every step of a batch counts in RLlib's advantage standardization,
    the artificial bootstrap steps too, whose value targets depend on the next chunk: the batch depends on the order
    of its chunks."""
    games = {}
    for sa in new:
        games.setdefault(sa.multi_agent_episode_id, {})[sa.agent_id] = sa
    assert len(games) == len(old)
    return [games_new[a] for games_new, ma in zip(games.values(), old) for a in ma.agent_ids if a in games_new]


def as_numbers(metrics):
    """RLlib's reduced metrics (Stats objects, nested by key) as floats."""
    if isinstance(metrics, dict):
        return {k: as_numbers(v) for k, v in metrics.items()}
    return float(metrics)


def learner_batch(learner, episodes) -> dict:
    """The output of the learner's connector pipeline for "main" (before the learner orders the sequences by team)."""
    return learner._learner_connector(rl_module=learner.module, batch={}, episodes=copy.deepcopy(episodes),
                                      shared_data={}, metrics=learner.metrics)["main"]


@pytest.mark.parametrize("mode,league", [("5v5", False), ("1v1", True)])
def test_the_batched_runner_gives_the_learner_the_classic_batch(ray_session, no_home_results, monkeypatch, mode,
                                                                league):
    from training.algorithm import make_training_env
    from training.league_play import install_table, save_weights
    from policies.model.module_ids import MAIN

    cfg = tiny_smoke(env__mode=mode, env__time_limit_s=4, resources__num_envs_per_env_runner=3,
                     reward__normalize=False,  # the running std is shared by every env of a process
                     league__enabled=league, league__past_fraction=1.0, league__slots=1)
    algo_config, classic, batched = build_runners(monkeypatch, cfg)
    if league:  # every game against one past version: a copy of main with other weights, on the dire or radiant side
        rng = np.random.default_rng(1)
        past = {k: (v + 0.05 * rng.standard_normal(v.shape).astype(v.dtype)
                    if isinstance(v, np.ndarray) and v.dtype.kind == "f" and "norm" not in k else v)
                for k, v in classic.module[MAIN].get_state().items()}
        path = str(no_home_results / "v1.pt")
        save_weights(past, path)
        for runner in (classic, batched):
            install_table(runner, ([1], [path], [1.0]))
    learner = algo_config.build_learner(env=make_training_env({**cfg.env, "seed": 0}))
    truncated_games = 0
    for n in SAMPLES:
        old, new = classic.sample(num_timesteps=n, explore=True), batched.sample(num_timesteps=n, explore=True)
        new_flags = {(sa.t_started, len(sa)): (sa.is_terminated, sa.is_truncated) for sa in new}
        for sa in new:  # shipped with the last info only (keep_last_info): the winner of a finished game
            infos = sa.get_infos()
            assert all(info == {} for info in infos[:-1]) and "reward_signals" in infos[-1]
            assert ("winner" in infos[-1]) == (sa.is_terminated or sa.is_truncated)
        for ma in old:
            for sa in ma.agent_episodes.values():
                if sa.module_id != MAIN:
                    continue
                if sa.is_truncated:  # RLlib's quirk: truncated by the time limit, and marked terminated too
                    truncated_games += 1
                    assert sa.is_terminated and new_flags[(sa.t_started, len(sa))] == (False, True)
                    sa.is_terminated = False
        a, b = learner_batch(learner, old), learner_batch(learner, in_classic_order(new, old))
        assert set(a) - {"action_dist_inputs"} == set(b)  # the batched runner ships them only for a KL loss
        for k in b:
            for x, y in zip(tree.flatten(a[k]), tree.flatten(b[k])):
                if k in MODEL_OUTPUTS:  # the forward batches hold the heroes in another order: float rounding
                    torch.testing.assert_close(y, x, rtol=1e-5, atol=1e-6, msg=f"{k} after {n} steps")
                else:
                    assert x.shape == y.shape and torch.equal(x, y), (n, k)
    assert truncated_games > 0
    old_metrics, new_metrics = as_numbers(classic.get_metrics()), as_numbers(batched.get_metrics())
    for key in ("num_env_steps_sampled", "num_episodes", "num_agent_steps_sampled", "num_module_steps_sampled",
                "episode_len_mean", "episode_return_mean", "win_rate_none", "raw_return_radiant", "raw_return_dire",
                "signal_reward", "hero_game_seconds"):
        assert new_metrics[key] == pytest.approx(old_metrics[key]), key
    if league:
        collected = [r.get("results") for r in (classic.matchups.league.drain(), batched.matchups.league.drain())]
        assert collected[0] and collected[0] == collected[1]


def test_ppo_updates_on_two_sampling_rounds_of_the_runner(ray_session, monkeypatch):
    """RLlib's PPO samples the runner again until train_batch_size env steps are in (synchronous_parallel_sample); with
    rollout_fragment_length a divisor of train_batch_size / num_envs (RLlib accepts any) every iteration samples twice
    and the learner updates on both rounds' chunks at once. A hero's chunk continued from the first round has its own
    ids (before, the same ids: the first iteration raised IndexError in GAE); tests/test_five_learner.py checks that
    batch column by column."""
    from ray.tune.registry import register_env

    from callbacks import run_callbacks
    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from training.batched_env_runner import BatchedEnvRunner, chunk_origin

    rounds = []  # per sample() call: each chunk as it left the runner (the learner's connectors extend them)
    sample = BatchedEnvRunner.sample

    def recorded(self, **kwargs):
        episodes = sample(self, **kwargs)
        rounds.append([(*chunk_origin(e), e.id_, e.multi_agent_episode_id, e.t_started, len(e), e.is_done)
                       for e in episodes])
        return episodes

    monkeypatch.setattr(BatchedEnvRunner, "sample", recorded)
    register_env(ENV_NAME, make_training_env)
    cfg = tiny_smoke(resources__num_envs_per_env_runner=2)
    assert cfg.ppo.train_batch_size == 64
    algo = build_algo_config(cfg, run_callbacks()).env_runners(rollout_fragment_length=16).build_algo()  # 2 x 16 x 2
    try:
        for _ in range(2):
            rounds.clear()
            result = algo.train()
            assert len(rounds) == 2 and result["env_runners"]["num_env_steps_sampled"] == 64
            assert sum(c[5] for r in rounds for c in r) == 128  # agent steps: 2 heroes per 1v1 game
            first = {c[0]: c for c in rounds[0] if not c[6]}  # hero -> its unfinished chunk of the first round
            continued = [(first[c[0]], c) for c in rounds[1] if c[0] in first]
            assert continued and all(c[1] == f[1] + 1 and c[4] == f[4] + f[5] for f, c in continued)  # the next
            assert all(c[2] != f[2] and c[3] != f[3] for f, c in continued)  # ... under its own ids
            assert np.isfinite(result["learners"]["main"]["total_loss"])
    finally:
        algo.stop()
