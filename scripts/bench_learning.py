"""Learning benchmark: trains 1v1 from scratch on this machine for a set wall time, with evaluation games against
the scripted bot (and the random agent) every few iterations, and prints the win rate against wall time.
Goal (issue 3): >= 80% wins against the scripted bot within 60 minutes on 2 cores.

    python scripts/bench_learning.py [--minutes 60] [--config tune_configs/hok_1v1.yaml] [--set key=value ...]

It runs ``app.train`` with the config (a fresh run named <name>_bench_<timestamp>), then reads the run's
metrics.csv. Prints the curve and a JSON line last.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GOAL_WIN_RATE = 0.8
GOAL_MINUTES = 60


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="tune_configs/hok_1v1.yaml")
    p.add_argument("--minutes", type=float, default=60.0)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args(argv)
    from app import train, train_config
    name = f"{train_config.load(args.config, args.set)['name']}_bench_{time.strftime('%Y%m%d_%H%M%S')}"
    sets = args.set + [f"name={name}", f"stop={{time_total_s: {args.minutes * 60:.0f}}}"]
    t0 = time.time()
    rc = train.main(["--config", args.config] + sum((["--set", s] for s in sets), []))
    cfg = train_config.load(args.config, sets)
    path = os.path.join(os.path.abspath(cfg["storage_path"]), name, "metrics.csv")
    curve = []
    with open(path) as f:
        for row in csv.DictReader(f):
            if row.get("win_rate_vs_scripted") not in (None, ""):
                curve.append({"iteration": int(row["iteration"]), "minutes": round(float(row["time_s"]) / 60, 2),
                              "env_steps": float(row["env_steps"] or 0),
                              "win_rate_vs_scripted": float(row["win_rate_vs_scripted"]),
                              "win_rate_vs_random": float(row["win_rate_vs_random"] or 0)})
    print(f"\n{'minutes':>8s} {'iteration':>9s} {'env steps':>10s} {'vs scripted':>11s} {'vs random':>9s}")
    for c in curve:
        print(f"{c['minutes']:8.1f} {c['iteration']:9d} {c['env_steps']:10.0f} {c['win_rate_vs_scripted']:11.2f} "
              f"{c['win_rate_vs_random']:9.2f}")
    reached = next((c["minutes"] for c in curve if c["win_rate_vs_scripted"] >= GOAL_WIN_RATE), None)
    print(json.dumps({"config": args.config, "run": name, "train_rc": rc, "wall_minutes": round((time.time() - t0) / 60,
                      1), "curve": curve, "goal_win_rate": GOAL_WIN_RATE, "goal_minutes": GOAL_MINUTES,
                      "minutes_to_goal": reached,
                      "meets_goal": reached is not None and reached <= GOAL_MINUTES}))


if __name__ == "__main__":
    main()
