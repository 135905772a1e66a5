"""League scaling benchmark (Five app. N; callbacks/league_play.py): env runner memory and time per training
iteration with opponent pools of 10, 100 and 1,000 past versions. Both must stay flat, because a runner only ever
holds its few opponent slots, whatever the pool's size.

    python scripts/bench_league.py [--pools 10 100 1000] [--iterations 4] [--past-fraction 1.0]

Each pool is filled with distinct weight files (the current "main" with a little noise per version, so that no two
versions are the same) and given random qualities, so games spread over many versions and slots are reloaded
often. Games last --game-seconds of game time, so that many games start (and load an opponent) per iteration.
The last line is JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time


SMOKE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tune_configs", "smoke.yaml")


def runner_rss_mb(env_runner) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def fill_pool(algo, n: int, folder: str, rng):
    """n distinct versions on disk, random qualities."""
    import numpy as np

    from training.league_play import save_weights
    from callbacks.league_play import LeagueCallback
    from policies.league.pool import OpponentPool
    from policies.model.module_ids import MAIN
    base = algo.learner_group.get_weights(module_ids=[MAIN])[MAIN]
    league = LeagueCallback.of(algo)
    pool = OpponentPool(past_fraction=league.pool.past_fraction, snapshot_every=10 ** 9)
    for i in range(n):
        state = {k: (np.asarray(v) + rng.normal(0, 1e-3, np.shape(v)).astype(np.asarray(v).dtype)
                     if "norm." not in k else np.asarray(v)) for k, v in base.items()}
        path = os.path.join(folder, f"v{i + 1:05d}.pt")
        save_weights(state, path)
        pool.add(0, path).quality = float(rng.normal(0, 1))
    league.pool = pool
    league.push_table(algo, forget_slots=True)


def run_pool(n: int, args, folder: str) -> dict:
    import numpy as np
    from ray.tune.registry import register_env

    from training import run_config
    from training.algorithm import ENV_NAME, build_algo_config, make_training_env
    from callbacks import run_callbacks
    cfg = run_config.load(SMOKE, [f"env.time_limit_s={args.game_seconds}", "league.enabled=true",
                                    f"league.past_fraction={args.past_fraction}", "evaluation.interval=0",
                                    "resources.num_env_runners=1", f"resources.num_envs_per_env_runner={args.envs}",
                                    f"ppo.train_batch_size={args.batch}", f"ppo.minibatch_size={args.batch}"])
    register_env(ENV_NAME, make_training_env)
    algo = build_algo_config(cfg, run_callbacks()).build_algo()
    try:
        fill_pool(algo, n, os.path.join(folder, f"pool_{n}"), np.random.default_rng(n))
        algo.train()  # warm-up: first loads, allocator growth
        rss0 = algo.env_runner_group.foreach_env_runner(runner_rss_mb, local_env_runner=False)[0]
        times, games, loads, driver = [], 0, 0, []
        for _ in range(args.iterations):
            t = time.time()
            r = algo.train()
            times.append(time.time() - t)
            games += r.get("league", {}).get("past_games", 0)
            loads += r.get("league", {}).get("slot_loads", 0)
            driver.append(r.get("league", {}).get("callback_s", float("nan")))
        rss1 = algo.env_runner_group.foreach_env_runner(runner_rss_mb, local_env_runner=False)[0]
        row = {"pool": n, "runner_rss_mb_start": round(rss0, 1), "runner_rss_mb_end": round(rss1, 1),
               "s_per_iteration": round(float(np.median(times)), 2),
               "league_driver_s_per_iteration": round(float(np.median(driver)), 4), "past_games": games,
               "slot_loads": loads}
        print(f"pool {n:5d}: env runner RSS {rss0:7.1f} -> {rss1:7.1f} MB, {row['s_per_iteration']:.2f} s per "
              f"iteration (median; league bookkeeping {row['league_driver_s_per_iteration'] * 1000:.0f} ms), {games} "
              f"past-opponent games, {loads} slot loads", flush=True)
        return row
    finally:
        algo.stop()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pools", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument("--iterations", type=int, default=6)
    p.add_argument("--past-fraction", type=float, default=1.0, help="share of games against past versions")
    p.add_argument("--game-seconds", type=float, default=5.0, help="game time limit: short games, many loads")
    p.add_argument("--envs", type=int, default=4, help="envs per env runner")
    p.add_argument("--batch", type=int, default=400, help="env steps per iteration")
    args = p.parse_args(argv)
    import ray
    import torch
    torch.set_num_threads(1)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": root}})
    with tempfile.TemporaryDirectory() as folder:
        rows = [run_pool(n, args, folder) for n in args.pools]
    ray.shutdown()
    rss = [r["runner_rss_mb_end"] for r in rows]
    secs = [r["s_per_iteration"] for r in rows]
    print(json.dumps({"benchmark": "league", "rows": rows, "rss_spread_mb": round(max(rss) - min(rss), 1),
                      "s_per_iteration_ratio": round(max(secs) / min(secs), 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
