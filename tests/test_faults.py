"""Faults a long run survives (Five section 3.3, app. M): a game server killed while remote games train,
and the training driver killed with SIGKILL after its second checkpoint, then ``--resume``. (An env runner killed
mid-training: tests/test_cluster.py, on two nodes.) Tiny smoke runs; every process started here is stopped by its
own id."""
from __future__ import annotations

import csv
import glob
import os
import pickle
import re
import signal
import subprocess
import sys
import time

import pytest
import torch
from test_training_e2e import SMOKE, build_algo, tiny_smoke

from training import run_config
from training.schedules import Schedule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 64  # env steps per iteration of the tiny runs


def start_server(port: int = 0) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "app.server", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    for line in proc.stdout:  # the engine may compile first, with a line saying so
        m = re.search(r"listening on (\S+)", line)
        if m:
            return proc, m.group(1)
    raise AssertionError(f"server did not start: {proc.stderr.read()[-2000:]}")


def test_a_killed_game_server_fails_its_games_then_the_runner_reconnects(ray_session, no_home_results):
    """The server under the env runner's games is killed mid-run (SIGKILL): sampling fails with an error naming the
    server's address, RLlib restarts the env runner, and once a server is back on that address the new runner
    plays there: iterations and step counts never go back."""
    server, address = start_server()
    algo = build_algo(tiny_smoke(resources__num_env_runners=1, env__remote=address, env__timeout_s=5,
                                 env__retries=2))
    group = algo.env_runner_group
    restarted = None
    try:
        first = algo.train()
        pid = group.foreach_env_runner(lambda er: os.getpid(), local_env_runner=False)[0]
        handle = group.foreach_env_runner(lambda er: ray_session.get_runtime_context().current_actor,
                                          local_env_runner=False)[0]
        server.kill()
        server.wait(timeout=10)
        with pytest.raises(Exception, match=re.escape(f"game server {address} unavailable")):
            ray_session.get(handle.sample.remote(num_timesteps=STEPS), timeout=120)
        restarted, _ = start_server(int(address.rsplit(":", 1)[1]))
        results, deadline = [first], time.time() + 240
        while results[-1]["env_runners"]["num_env_steps_sampled_lifetime"] <= first["env_runners"][
                "num_env_steps_sampled_lifetime"] or group.num_healthy_remote_workers() < 1:
            assert time.time() < deadline, "the env runner never sampled again"
            results.append(algo.train())
        assert [r["training_iteration"] for r in results] == list(range(1, len(results) + 1))
        steps = [r["env_runners"]["num_env_steps_sampled_lifetime"] for r in results]
        assert steps == sorted(steps)
        assert group.foreach_env_runner(lambda er: os.getpid(), local_env_runner=False)[0] != pid
    finally:
        algo.stop()
        for proc in (server, restarted):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert "created game" in restarted.stderr.read()  # the restarted runner played on the server that came back


# ---- the driver killed with SIGKILL, then --resume -------------------------------------------------------------------
RESUME_SETS = [  # league, curriculum and TrueSkill on, a checkpoint every 2 iterations
    "name=faults", "env.time_limit_s=5", "env.randomize={first_game_length: false}",
    f"ppo.train_batch_size={STEPS}", f"ppo.minibatch_size={STEPS}", "resources.num_envs_per_env_runner=1",
    "evaluation.interval=0", "league.enabled=true", "league.snapshot_every=1", "league.past_fraction=0.3",
    "opponents.curriculum={share: 0.4, ladder: [noop, random, scripted_1], window: 2, promote_at: 0.5}",
    "opponents.time_limit_outcome=points", "trueskill.every=1", "trueskill.games=1", "trueskill.time_limit_s=5",
    "trueskill.cpu_share=1.0", "checkpoint.frequency=2", "checkpoint.num_to_keep=10"]


def read(path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def test_driver_killed_after_its_second_checkpoint_resumes_where_the_checkpoint_left(tmp_path):
    storage = tmp_path / "results"
    argv = [sys.executable, "-m", "app.train", "--config", SMOKE, "--set", f"storage_path={storage}"]
    argv += [a for s in RESUME_SETS for a in ("--set", s)]
    run_dir = storage / "faults"
    files = ("metrics.csv", "*/league.csv", "*/opponents.csv", "*/trueskill.csv")

    def snapshot():
        return {f: read(next(iter(glob.glob(str(run_dir / f))), "")) for f in files}

    env = {**os.environ, "PYTHONPATH": ROOT}
    env.pop("RAY_ADDRESS", None)
    driver = subprocess.Popen(argv + ["--set", "stop.training_iteration=50"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 300
        # past the second checkpoint (iteration 4), with rows of iteration 5 written after it
        while not (glob.glob(str(run_dir / "*" / "checkpoint_000001")) and len(read(run_dir / "metrics.csv")) >= 5):
            assert driver.poll() is None and time.time() < deadline, "the run did not reach its second checkpoint"
            time.sleep(0.2)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)  # the Ray processes the driver started (its process group)
        except ProcessLookupError:
            pass
    before = snapshot()
    killed_at = len(before["metrics.csv"])
    checkpoints = sorted(glob.glob(str(run_dir / "*" / "checkpoint_*")))

    out = subprocess.run(argv + ["--set", f"stop.training_iteration={killed_at + 1}", "--resume"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    k = int(re.search(r"iter\s+(\d+)", out.stdout).group(1)) - 1  # the resumed run's first iteration is k + 1
    assert k == 4, f"resumed from iteration {k}, not from the second checkpoint (4): {out.stdout[-4000:]}"
    after = snapshot()

    # metrics.csv: every iteration once; the rows up to the checkpoint as they were; the steps go on
    metrics = after["metrics.csv"]
    assert [int(r["iteration"]) for r in metrics] == list(range(1, killed_at + 2))
    assert metrics[:k] == before["metrics.csv"][:k]
    assert [float(r["env_steps"]) for r in metrics] == [STEPS * i for i in range(1, killed_at + 2)]
    # the schedules go on: iteration i trains with the team spirit of i - 1
    ts = Schedule.parse("team_spirit", run_config.load(SMOKE).schedules["team_spirit"])
    assert [float(r["team_spirit"]) for r in metrics] == pytest.approx([ts.value(i, 0) for i in range(killed_at + 1)])
    # league.csv and opponents.csv: the rows up to the checkpoint kept, none after it twice
    for name in ("*/league.csv", "*/opponents.csv"):
        kept = [r for r in after[name] if int(r["iteration"]) <= k]
        assert kept == [r for r in before[name] if int(r["iteration"]) <= k], name
        keys = [(r["iteration"], r.get("version", r.get("opponent"))) for r in after[name]]
        assert len(keys) == len(set(keys)), name
    league = after["*/league.csv"]
    versions = {i: [int(r["version"]) for r in league if int(r["iteration"]) == i] for i in (k, k + 1)}
    assert versions[k + 1] == versions[k] + [len(versions[k]) + 1]  # the pool went on from the checkpoint's
    # trueskill.csv: each version rated once; versions rated after the checkpoint by the killed driver were dropped
    rated = [int(r["version"]) for r in after["*/trueskill.csv"]]
    assert len(rated) == len(set(rated))

    # the learner's state: the resumed run started from the checkpoint's weights and optimizer, pool and curriculum
    at_k = learner_state(next(c for c in checkpoints if c.endswith("checkpoint_000001")))
    final = learner_state(sorted(glob.glob(str(run_dir / "*" / "checkpoint_*")))[-1])
    assert_continues(at_k, final)


def learner_state(checkpoint: str) -> dict:
    """The learner's state in a checkpoint: optimizer, league pool and curriculum."""
    with open(os.path.join(checkpoint, "learner_group", "learner", "state.pkl"), "rb") as f:
        return pickle.load(f)


def assert_continues(at_k: dict, final: dict) -> None:
    """The final checkpoint's learner went on from the checkpoint's: Adam's step counts grew from the checkpoint's
    (a fresh start counts from 0), the league pool and the curriculum extend the checkpoint's."""
    from policies.learning.five_learner import CURRICULUM_STATE_KEY, LEAGUE_STATE_KEY

    def adam_steps(state):
        return [float(torch.as_tensor(s["step"])) for s in state["optimizer"]["main_default_optimizer"]["state"][
            "state"].values()]

    assert adam_steps(at_k) and min(adam_steps(final)) > max(adam_steps(at_k))

    def pool(state):
        return [(v["version"], v["iteration"], v["weights_path"]) for v in state[LEAGUE_STATE_KEY]["versions"]]

    assert pool(final)[:len(pool(at_k))] == pool(at_k) and len(pool(final)) > len(pool(at_k))
    cur_k, cur = at_k[CURRICULUM_STATE_KEY], final[CURRICULUM_STATE_KEY]
    assert cur["promotions"][:len(cur_k["promotions"])] == cur_k["promotions"] and cur["level"] >= cur_k["level"]
