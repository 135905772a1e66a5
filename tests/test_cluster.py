"""On a Ray cluster as docs/cluster.md says: a head node and a second node on this machine (``ray start``, free
ports, token authentication), the smoke config submitted as a job (scripts/submit.py, ``ray job submit
--working-dir .``) with its results on a storage URI, an env runner killed mid-training, and the fail-fast checks at
the cluster boundary (an unreachable address, an unwritable storage path, more CPUs or GPUs than the cluster has)."""
from __future__ import annotations

import csv
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from ray_cluster import ROOT, LocalCluster, free_port

SMOKE = "tune_configs/smoke.yaml"
STEPS = 64  # env steps per iteration
TINY = ["env.time_limit_s=5", "env.randomize={first_game_length: false}", f"ppo.train_batch_size={STEPS}",
        f"ppo.minibatch_size={STEPS}", "resources.num_envs_per_env_runner=1", "evaluation.interval=0"]


@pytest.fixture(scope="module")
def cluster():
    """Two nodes of one CPU each: a trial's trainer (one CPU) and its env runner (one CPU) land on different nodes."""
    c = LocalCluster(head_cpus=1)
    try:
        c.add_node(cpus=1)
        c.wait_for_cpus(2)
        yield c
    finally:
        c.stop()


def sets(items) -> list:
    return [a for s in items for a in ("--set", s)]


def rows(path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def actors(cluster, class_name: str) -> list[dict]:
    out = subprocess.run(["ray", "list", "actors", "--address", cluster.dashboard, "--filter",
                          f"class_name={class_name}", "--detail", "--format", "json"], env=cluster.env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout) if out.stdout.lstrip().startswith("[") else []  # a sentence when none matches


def test_job_on_two_nodes_with_a_storage_uri_survives_a_killed_env_runner(cluster, tmp_path):
    """The smoke config (tiny) with league play as a job: the trainer and the env runner on different nodes, every
    result under a file:// storage URI, the league's weights read by the env runner from there; the env runner's
    process is killed mid-training, restarted, and the run goes on with no iteration or step count going back."""
    storage = f"file://{tmp_path}/results"
    run_dir = tmp_path / "results" / "cluster"
    job = subprocess.Popen(
        [sys.executable, "scripts/submit.py", "--address", cluster.dashboard, "--config", SMOKE,
         "--storage-path", storage, *sets(TINY + ["name=cluster", "resources.num_env_runners=1",
                                                  "league.enabled=true", "league.snapshot_every=1",
                                                  "league.past_fraction=1.0", "checkpoint.frequency=2",
                                                  "stop.training_iteration=1000",
                                                  f"stop.num_env_steps_sampled_lifetime={STEPS * 12}"])],
        cwd=ROOT, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 300
        while not (run_dir / "metrics.csv").exists() or len(rows(run_dir / "metrics.csv")) < 2:
            assert job.poll() is None, job.stdout.read()[-5000:]
            if time.time() > deadline:
                job.kill()
                pytest.fail(f"no second iteration in 300 s; the job printed:\n{job.stdout.read()[-3000:]}\n"
                            f"the cluster:\n{cluster.describe()}")
            time.sleep(0.2)
        runner = [a for a in actors(cluster, "BatchedEnvRunner") if a["state"] == "ALIVE"]
        assert len(runner) == 1, runner
        os.kill(runner[0]["pid"], signal.SIGKILL)
        killed_at = len(rows(run_dir / "metrics.csv"))
        out, _ = job.communicate(timeout=400)
    finally:
        if job.poll() is None:
            job.kill()
        cluster.stop_jobs()  # the job goes on without its client: a failed test leaves no job behind
    assert job.returncode == 0 and "succeeded" in out, out[-5000:]
    assert f"results in {storage}/cluster" in out

    metrics = rows(run_dir / "metrics.csv")
    iterations = [int(r["iteration"]) for r in metrics]
    steps = [float(r["env_steps"]) for r in metrics]
    assert iterations == list(range(1, len(metrics) + 1))
    assert steps == sorted(steps) and steps[-1] >= STEPS * 12 and steps[-1] > steps[killed_at - 1], out[-6000:]
    # the runner was restarted (the same actor, a new process) on the node the trainer is not on
    runner, = actors(cluster, "BatchedEnvRunner")
    trainer, = actors(cluster, "PPO")
    assert runner["num_restarts"] >= 1
    assert runner["node_id"] != trainer["node_id"]
    trial, = glob.glob(str(run_dir / "PPO_*"))
    assert glob.glob(os.path.join(trial, "checkpoint_*", "learner_group"))
    assert len(glob.glob(os.path.join(trial, "league", "version_*.pt"))) == len(metrics)
    assert rows(os.path.join(trial, "league.csv"))
    # the trainer's local trial directory holds no league: everything went to the storage URI
    assert not glob.glob(os.path.join(cluster.dir, "*", "session_*", "artifacts", "**", "league"), recursive=True)
    # after the kill, the restarted env runner loaded past versions from the storage URI into its slots
    with open(os.path.join(trial, "result.json")) as f:
        results = [json.loads(line) for line in f]
    assert sum(r["league"]["slot_loads"] for r in results if r["training_iteration"] > killed_at + 1) > 0


def run_cli(argv: list, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_bad_input_at_the_cluster_boundary_fails_fast_naming_it(cluster, tmp_path):
    cluster.wait_for_cpus(2, timeout_s=60)  # both nodes still there: the figures below are the whole cluster's
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    local = {k: v for k, v in cluster.env.items() if k != "RAY_ADDRESS"}
    dead = f"127.0.0.1:{free_port()}"
    train = ["-m", "app.train", "--config", SMOKE, "--set", f"storage_path={tmp_path}/results"]
    cases = {  # name -> (process, words its error must have)
        "address": (run_cli(train, {**local, "RAY_ADDRESS": dead}), ["RAY_ADDRESS", dead, "allowed"]),
        "storage": (run_cli(["-m", "app.train", "--config", SMOKE, "--set", f"storage_path={blocked}/results"],
                            local), ["storage_path", str(blocked), "allowed"]),
        "resources": (run_cli(train + ["--set", "resources.num_env_runners=3", "--set",
                                       "resources.num_gpus_per_learner=1"],
                              {**local, "RAY_ADDRESS": cluster.gcs_address}),
                      ["resources.num_env_runners at most 1", "resources.num_gpus_per_learner at most 0",
                       "the cluster has 2 CPUs and 0 GPUs"]),
        "submit": (run_cli(["scripts/submit.py", "--address", f"http://{dead}", "--config", SMOKE], local),
                   ["--address", dead]),
    }
    t0 = time.time()
    for name, (proc, words) in cases.items():
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 2, (name, out[-2000:], err[-3000:])
        for w in words:
            assert w in err, (name, w, err[-3000:])
    assert time.time() - t0 < 180
