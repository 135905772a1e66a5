"""Decisions per second through the gRPC game server on loopback, next to the local environment.

    python scripts/bench_server.py [--mode 5v5] [--steps 2000] [--games 16] [--workers 16] [--no-pin]

Measurements (same mode, random legal actions drawn from pre-generated numbers):

- local: one ``MobaEnv`` in this process; only the ``step`` calls are timed (as scripts/bench_env.py);
- remote x1: one ``RemoteMobaEnv`` against a server subprocess (``python -m app.server --port 0``), ``step`` calls
  timed: this is the latency-bound case (client and server wait for each other);
- remote xN (N = --games, default 16): N ``RemoteMobaEnv``s stepped concurrently from N client threads; wall-clock
  throughput of all of them (the random agent included).

The three run in --rounds interleaved rounds and the best of each is reported (a shared machine's load comes in
bursts; the best round is the least disturbed).

Decisions/s = steps/s x heroes. The target: at 16 concurrent games, at least 50% of the local throughput. By default
the server is pinned to one CPU and this process (client, local env) to another, when there are two or more: the
server runs its games on one core either way (the engine holds the GIL). The last line of output is a JSON object.
"""
from __future__ import annotations

import os
import sys

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from moba.game.teams import MODES  # noqa: E402
from policies.agents.scripted import PredrawnRandomActions  # noqa: E402

TARGET_RATIO = 0.5  # remote throughput at 16 concurrent games / local throughput


def run_env(env, steps: int, warmup: int, seed: int) -> dict:
    """Steps one env; times the step calls only."""
    agent = PredrawnRandomActions(env.possible_agents, env.cfg.max_units, 2048, np.random.default_rng(seed))
    obs, _ = env.reset()
    for _ in range(warmup):
        obs, _, term, trunc, _ = env.step(agent(obs))
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    step_t = 0.0
    t_wall = time.perf_counter()
    for _ in range(steps):
        actions = agent(obs)
        t0 = time.perf_counter()
        obs, _, term, trunc, _ = env.step(actions)
        step_t += time.perf_counter() - t0
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    wall = time.perf_counter() - t_wall
    n = len(env.possible_agents)
    return {"steps": steps, "heroes": n, "step_time_s": step_t, "wall_s": wall,
            "decisions_per_s": steps * n / step_t, "wall_decisions_per_s": steps * n / wall,
            "ms_per_step": 1000 * step_t / steps}


def run_concurrent(make_env, n_games: int, steps: int, warmup: int, seed: int) -> dict:
    """n_games envs, one client thread each, all stepping at once; wall-clock throughput (agents included)."""
    envs = [make_env() for _ in range(n_games)]
    barrier = threading.Barrier(n_games + 1)
    errors = []

    def worker(k):
        env = envs[k]
        try:
            agent = PredrawnRandomActions(env.possible_agents, env.cfg.max_units, 2048, np.random.default_rng(seed + k))
            obs, _ = env.reset()
            for _ in range(warmup):
                obs, *_ = env.step(agent(obs))
            barrier.wait()
            for _ in range(steps):
                obs, _, term, trunc, _ = env.step(agent(obs))
                if term["__all__"] or trunc["__all__"]:
                    obs, _ = env.reset()
            barrier.wait()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(n_games)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    wall = time.perf_counter() - t0
    for t in threads:
        t.join()
    for env in envs:
        env.close()
    if errors:
        raise errors[0]
    n = len(envs[0].possible_agents)
    total = n_games * steps
    return {"games": n_games, "steps": total, "heroes": n, "wall_s": wall, "decisions_per_s": total * n / wall,
            "ms_per_step_per_game": 1000 * wall / steps}


def start_server(workers: int, max_games: int, cpu: int | None):
    cmd = [sys.executable, "-m", "app.server", "--port", "0", "--max-games", str(max_games), "--workers",
           str(workers), "--log-level", "WARNING"]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    proc = subprocess.Popen(cmd, cwd=_REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": _REPO})
    deadline = time.time() + 120
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on (\S+)", line)
        if m:
            return proc, m.group(1)
    proc.kill()
    raise RuntimeError(f"the server did not start: {proc.stderr.read()[-2000:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default=MODES[0], choices=list(MODES))
    ap.add_argument("--steps", type=int, default=1000,
                    help="timed steps per round, local and remote x1 (default 1000)")
    ap.add_argument("--concurrent-steps", type=int, default=100,
                    help="timed steps per game and round at N concurrent games (default 100)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of the three measurements, interleaved; the best of each is reported (default 3)")
    ap.add_argument("--games", type=int, default=16, help="concurrent games (default 16)")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--workers", type=int, default=16, help="server RPC threads (default 16)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-pin", action="store_true", help="do not pin the server and this process to CPUs")
    args = ap.parse_args(argv)
    if min(args.steps, args.concurrent_steps, args.games, args.rounds) < 1 or args.warmup < 0:
        ap.error("--steps, --concurrent-steps, --games and --rounds must be >= 1, --warmup >= 0")

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    server_cpu = client_cpu = None
    pin_note = "not pinned"
    if not args.no_pin and len(cpus) >= 2 and subprocess.run(["which", "taskset"], capture_output=True).returncode == 0:
        server_cpu, client_cpu = cpus[0], cpus[1]
        os.sched_setaffinity(0, {client_cpu})
        pin_note = f"server on cpu {server_cpu}, client and local env on cpu {client_cpu}"

    from moba.env.moba_env import MobaEnv
    from moba.server.remote_env import RemoteMobaEnv
    print(f"bench_server: python {platform.python_version()}, {platform.machine()}, {len(cpus)} cpus, {pin_note}, "
          f"mode {args.mode}", flush=True)

    proc, address = start_server(args.workers, max(64, args.games + 2), server_cpu)
    try:
        cfg = {"mode": args.mode, "seed": args.seed}
        rounds = {"local": [], "remote1": [], "remote_n": []}
        for r in range(args.rounds):  # interleaved, so that a burst of load on the machine hits all three alike
            rounds["local"].append(run_env(MobaEnv(cfg), args.steps, args.warmup, args.seed + r))
            env = RemoteMobaEnv({**cfg, "remote": address})
            rounds["remote1"].append(run_env(env, args.steps, args.warmup, args.seed + r))
            env.close()
            rounds["remote_n"].append(run_concurrent(lambda: RemoteMobaEnv({**cfg, "remote": address}), args.games,
                                                     args.concurrent_steps, args.warmup, args.seed + r))
            print(f"round {r + 1}/{args.rounds}: local {rounds['local'][-1]['decisions_per_s']:.0f}, remote x1 "
                  f"{rounds['remote1'][-1]['decisions_per_s']:.0f}, remote x{args.games} "
                  f"{rounds['remote_n'][-1]['decisions_per_s']:.0f} decisions/s", flush=True)
        local, remote1, remote_n = (max(rounds[k], key=lambda m: m["decisions_per_s"])
                                    for k in ("local", "remote1", "remote_n"))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()

    ratio1 = remote1["decisions_per_s"] / local["decisions_per_s"]
    ratio_n = remote_n["decisions_per_s"] / local["decisions_per_s"]
    hdr = f"{'measurement (best of rounds)':<34} {'decisions/s':>12} {'ms/step':>9} {'vs local':>9}"
    print()
    print(hdr)
    print("-" * len(hdr))
    print(f"{'local MobaEnv (step only)':<34} {local['decisions_per_s']:>12.0f} {local['ms_per_step']:>9.3f} "
          f"{1.0:>9.2f}")
    print(f"{'remote, 1 game (step only)':<34} {remote1['decisions_per_s']:>12.0f} {remote1['ms_per_step']:>9.3f} "
          f"{ratio1:>9.2f}")
    label = f"remote, {args.games} games, {args.games} threads"
    print(f"{label:<34} {remote_n['decisions_per_s']:>12.0f} {remote_n['ms_per_step_per_game']:>9.3f} "
          f"{ratio_n:>9.2f}")
    meets = ratio_n >= TARGET_RATIO if args.games == 16 else None
    print(f"\ntarget: {args.games} concurrent games >= {TARGET_RATIO:.0%} of local: "
          f"{'OK' if ratio_n >= TARGET_RATIO else 'BELOW'} ({ratio_n:.0%})")
    out = {"mode": args.mode, "cpus": len(cpus), "pinned": server_cpu is not None,
           "local_decisions_per_s": round(local["decisions_per_s"], 1),
           "remote_1_decisions_per_s": round(remote1["decisions_per_s"], 1),
           f"remote_{args.games}_decisions_per_s": round(remote_n["decisions_per_s"], 1),
           "ratio_1_vs_local": round(ratio1, 3), f"ratio_{args.games}_vs_local": round(ratio_n, 3),
           "target_ratio": TARGET_RATIO, "meets_target": meets, "rounds": args.rounds, "steps": args.steps,
           "concurrent_steps_per_game": args.concurrent_steps,
           "all_rounds_decisions_per_s": {k: [round(m["decisions_per_s"]) for m in v] for k, v in rounds.items()}}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
