"""End to end through RLlib: the CLI's run and --resume, the rewards the learner trains on, team spirit across an
env runner restart. One Ray session for all (conftest.ray_session); tiny batches; every output under tmp_path."""
from __future__ import annotations

import csv
import glob
import os
import time

import pytest
import torch
import yaml

from training import run_config
from training.schedules import Schedule

torch.set_num_threads(1)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "tune_configs", "smoke.yaml")


def tiny_smoke(**changes):
    """The smoke config (1v1, tiny network) with tiny batches and short games, validated. `changes`: dotted keys
    with "__" for "." (reward__zero_sum=False)."""
    with open(SMOKE) as f:
        raw = yaml.safe_load(f)
    raw["env"]["time_limit_s"] = 5  # ~38 agent steps per game: games end inside one iteration
    raw["env"]["randomize"] = {"first_game_length": False}  # every game whole: tests count games and their steps
    raw["ppo"].update(train_batch_size=64, minibatch_size=64)
    raw["resources"].update(num_env_runners=0, num_envs_per_env_runner=1)
    raw["evaluation"]["interval"] = 0
    for k, v in changes.items():
        run_config.set_key(raw, k.replace("__", "."), v)
    return run_config.validate(raw)


def build_algo(cfg, extra_callbacks=(), whole_batch=False):
    from ray.tune.registry import register_env

    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from callbacks import run_callbacks
    register_env(ENV_NAME, make_training_env)
    config = build_algo_config(cfg, run_callbacks())
    if whole_batch:
        # one SGD step on the whole batch, so that the learner's logged batch statistics cover every sample
        config.training(minibatch_size=None, num_epochs=1)
    if extra_callbacks:
        config.callbacks(list(config.callbacks_class) + list(extra_callbacks))
    return config.build_algo()


def read_metrics(run_dir):
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        return list(csv.DictReader(f))


# ---- the CLI: a run, then --resume -----------------------------------------------------------------------------------
def test_main_runs_and_resumes_with_schedules(ray_session, tmp_path, capsys):
    from app.train import main
    storage = tmp_path / "results"
    common = ["--config", SMOKE, "--set", f"storage_path={storage}", "--set", "evaluation.interval=0"]
    assert main(common + ["--set", "stop.training_iteration=2"]) == 0
    run_dir = storage / "smoke"
    rows = read_metrics(run_dir)
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    checkpoints = glob.glob(str(run_dir / "*" / "checkpoint_*"))
    assert checkpoints, "no checkpoint written"
    assert any(os.path.isdir(os.path.join(c, "learner_group")) for c in checkpoints)
    assert (run_dir / "run_config.yaml").exists()

    assert main(common + ["--set", "stop.training_iteration=3", "--resume"]) == 0
    rows = read_metrics(run_dir)
    assert [int(r["iteration"]) for r in rows] == [1, 2, 3], "--resume did not continue to the raised stop"
    steps_per_iter = run_config.load(SMOKE).ppo.train_batch_size
    # continued (not restarted): the lifetime env steps go on
    assert [float(r["env_steps"]) for r in rows] == [steps_per_iter * k for k in (1, 2, 3)]
    # the team spirit used in iteration k is the schedule at k - 1 (ScheduleCallback: applied before the first
    # iteration, then after each one for the next); the resumed iteration 3 uses the value at 2, not at 0
    cfg = run_config.load(SMOKE)
    ts = Schedule.parse("team_spirit", cfg.schedules["team_spirit"])
    logged = [float(r["team_spirit"]) for r in rows]
    assert logged == pytest.approx([ts.value(k, 0) for k in (0, 1, 2)])
    assert logged[2] == pytest.approx(0.3 + 0.5 * 2 / 3)
    out = capsys.readouterr().out
    assert "iter    3" in out


# ---- the learner trains on the post-processed rewards --------------------------------------------------------------
def test_learner_trains_on_post_processed_rewards(ray_session, no_home_results):
    results, optimizer_betas = {}, {}
    for zero_sum, betas in ((True, (0.9, 0.999)), (False, (0.8, 0.95))):
        algo = build_algo(tiny_smoke(reward__zero_sum=zero_sum, ppo__adam_beta1=betas[0], ppo__adam_beta2=betas[1]),
                          whole_batch=True)
        try:
            results[zero_sum] = algo.train()
            optimizers = algo.learner_group._learner._named_optimizers.values()
            optimizer_betas[zero_sum] = {tuple(group["betas"]) for o in optimizers for group in o.param_groups}
        finally:
            algo.stop()
    # ppo.adam_beta1/2 reach Adam (RLlib's default optimizer would keep torch's 0.9, 0.999)
    assert optimizer_betas == {True: {(0.9, 0.999)}, False: {(0.8, 0.95)}}
    zs = results[True]
    learner = zs["learners"]["main"]
    # 1v1 zero sum: at every env step the two heroes' rewards cancel, and the batch holds both heroes' steps
    assert abs(learner["mean_reward_trained"]) < 1e-6, learner["mean_reward_trained"]
    # one minibatch of the whole batch, before any step: the learner's log-probabilities of the sampled actions are
    # those the env runner sampled with (same normalization, LSTM states, masks and action distribution)
    assert learner["logp_abs_diff"] < 1e-4 and learner["clip_fraction"] == 0.0
    assert "aux_win_loss" in learner
    er = zs["env_runners"]
    raw = (er["raw_return_radiant"], er["raw_return_dire"])
    assert max(abs(raw[0]), abs(raw[1])) > 1e-3, "raw rewards are zero: the check above proves nothing"
    assert abs(er["episode_return_mean"]) < 1e-6  # the episode's two post-processed returns cancel
    other = results[False]["learners"]["main"]["mean_reward_trained"]
    assert abs(other) > 1e-4 and abs(other - learner["mean_reward_trained"]) > 1e-4


# ---- team spirit survives an env runner restart ----------------------------------------------------------------------
def make_team_spirit_probe():
    """A callback logging the team spirit the env actually used (the sampled steps' infos) during each iteration, from
    the episodes either env runner returns (the classic one's per game, the batched one's per hero). Defined in a
    function so that it travels to the env runner by value."""
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class TeamSpiritProbe(RLlibCallback):
        def on_sample_end(self, *, samples, metrics_logger, **kwargs):
            for episode in samples:
                for sa in getattr(episode, "agent_episodes", {episode.agent_id: episode}).values():
                    for info in sa.get_infos():
                        if "team_spirit" in info:
                            metrics_logger.log_value("probe_team_spirit_min", info["team_spirit"], reduce="min",
                                                     clear_on_reduce=True)
                            metrics_logger.log_value("probe_team_spirit_max", info["team_spirit"], reduce="max",
                                                     clear_on_reduce=True)

    return TeamSpiritProbe


def test_team_spirit_survives_env_runner_restart(ray_session, no_home_results):
    ray = ray_session
    cfg = tiny_smoke(resources__num_env_runners=1,
                     schedules__team_spirit={"unit": "iterations", "points": [[0, 0.2], [1, 0.9]]})
    algo = build_algo(cfg, extra_callbacks=[make_team_spirit_probe()])
    group = algo.env_runner_group

    def env_team_spirit(er):
        return [e.unwrapped.team_spirit for e in er.env.envs]

    def pid(er):
        return os.getpid()

    try:
        r1 = algo.train()
        # iteration 1 ran with the initial value (the env config's); after it, the callback set the next one
        assert r1["env_runners"]["probe_team_spirit_min"] == pytest.approx(0.2)
        assert r1["env_runners"]["probe_team_spirit_max"] == pytest.approx(0.2)
        assert group.foreach_env_runner(env_team_spirit, local_env_runner=False) == [[pytest.approx(0.9)]]
        old_pid = group.foreach_env_runner(pid, local_env_runner=False)[0]
        handle = group.foreach_env_runner(lambda er: ray.get_runtime_context().current_actor,
                                          local_env_runner=False)[0]
        # the runner's process dies (as in a crash) inside a call: RLlib marks it unhealthy, Ray restarts the actor
        group.foreach_env_runner(lambda er: os._exit(1), local_env_runner=False)
        assert group.num_healthy_remote_workers() == 0
        deadline = time.time() + 120
        while True:  # wait until the actor is back (the restarted one builds a fresh env: team spirit 0.2)
            try:
                ray.get(handle.ping.remote(), timeout=10)
                break
            except Exception:
                assert time.time() < deadline, "the env runner was not restarted"
                time.sleep(0.5)
        # the next train() restores the runner and fires on_env_runners_recreated before sampling
        r2 = algo.train()
        assert group.num_healthy_remote_workers() == 1
        assert group.foreach_env_runner(pid, local_env_runner=False)[0] != old_pid, "the runner was not restarted"
        assert r2["env_runners"]["probe_team_spirit_min"] == pytest.approx(0.9), \
            "the recreated env runner sampled with the env config's team spirit, not the scheduled one"
        assert r2["env_runners"]["probe_team_spirit_max"] == pytest.approx(0.9)
        assert r2["schedule"]["team_spirit"] == pytest.approx(0.9)

        # the hook itself: it pushes the current value to the named runners of the training group only
        def set_ts(er, tau):
            for e in er.env.envs:
                e.unwrapped.set_team_spirit(tau)

        from callbacks.schedules import ScheduleCallback
        ids = group.healthy_worker_ids()
        group.foreach_env_runner(lambda er: set_ts(er, 0.2), local_env_runner=False)
        ScheduleCallback.of(algo).on_env_runners_recreated(algorithm=algo, env_runner_group=group,
                                                           env_runner_indices=ids, is_evaluation=True)
        assert group.foreach_env_runner(env_team_spirit, local_env_runner=False) == [[pytest.approx(0.2)]]
        ScheduleCallback.of(algo).on_env_runners_recreated(algorithm=algo, env_runner_group=group,
                                                           env_runner_indices=ids, is_evaluation=False)
        assert group.foreach_env_runner(env_team_spirit, local_env_runner=False) == [[pytest.approx(0.9)]]
    finally:
        algo.stop()

