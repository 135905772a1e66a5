"""A learning curve from a finished run's league snapshots: every saved version of "main" (and the untrained
network, as iteration 0) plays the same evaluation games against reference agents (same seeds, same sides, so the
versions are compared on paired games). Prints per version the reward margin (the version's team's summed raw
reward minus the opponent's, per game), the win and draw rates and the buildings destroyed and lost; writes
``<run>/version_curve.csv`` and a JSON line last.

    python scripts/version_curve.py results/<run> [--games 8] [--time-limit 300] [--opponents random] [--every 1]

The run must have the league on (its snapshots are ``<trial>/league/version_*_iter_*.pt``) and one checkpoint (it
gives the network's shape). The in-training evaluation plays different games at every evaluation; this replays one
fixed set, which makes the curve far less noisy for the same number of games.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import time

from training.cli import user_errors


SNAPSHOT_RE = re.compile(r"version_(\d+)_iter_(\d+)\.pt$")


def find_trial(run_dir: str) -> str:
    trials = sorted({os.path.dirname(os.path.dirname(p))
                     for p in glob.glob(os.path.join(run_dir, "*", "league", "*.pt"))})
    if not trials:
        raise SystemExit(f"{run_dir}: no league snapshots (<trial>/league/version_*_iter_*.pt); was league.enabled on?")
    return trials[0]


def snapshots(trial: str) -> list[tuple[int, int, str]]:
    """(version, iteration, path) of every snapshot, by iteration."""
    out = []
    for p in glob.glob(os.path.join(trial, "league", "*.pt")):
        m = SNAPSHOT_RE.search(p)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), p))
    return sorted(out, key=lambda x: x[1])


@user_errors
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="a run directory (results/<name>)")
    p.add_argument("--games", type=int, default=8, help="games per version and opponent (sides alternate)")
    p.add_argument("--time-limit", type=float, default=300.0, help="game time limit in s")
    p.add_argument("--opponents", nargs="+", default=["random"])
    p.add_argument("--every", type=int, default=1, help="evaluate every k-th snapshot (the last one always)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--greedy", action="store_true", help="play the most likely actions instead of sampling")
    args = p.parse_args(argv)
    if args.games < 1 or args.every < 1:
        raise SystemExit("--games and --every must be >= 1")
    from policies.agents.by_name import make_agent
    for name in args.opponents:  # evaluation games' opponents: agents by name (training.evaluation_games)
        make_agent(name, flag="--opponents")

    import torch
    import yaml
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from training.evaluation_games import EVAL_ENV_KEYS, evaluate_module
    from training.league_play import load_weights
    from policies.league.references import load_module
    torch.set_num_threads(1)

    trial = find_trial(args.run)
    checkpoints = sorted(glob.glob(os.path.join(trial, "checkpoint_*")))
    if not checkpoints:
        raise SystemExit(f"{trial}: no checkpoint to take the network's shape from")
    module = load_module(checkpoints[-1])
    with open(os.path.join(args.run, "run_config.yaml")) as f:
        run_cfg = yaml.safe_load(f)
    env_config = {k: v for k, v in (run_cfg.get("env") or {}).items() if k in EVAL_ENV_KEYS}
    env_config["time_limit_s"] = args.time_limit

    snaps = snapshots(trial)
    chosen = snaps[args.every - 1::args.every]
    if snaps and snaps[-1] not in chosen:
        chosen.append(snaps[-1])
    torch.manual_seed(args.seed)
    untrained = RLModuleSpec.from_module(module).build().get_state()  # iteration 0: a fresh network
    versions = [(0, 0, untrained)] + [(v, it, path) for v, it, path in chosen]

    rows = []
    print(f"{'version':>7} {'iteration':>9}  " + "  ".join(
        f"{'margin vs ' + o:>18} {'win':>5} {'draw':>5} {'pts':>5} {'bldg':>5} {'lost':>5}" for o in args.opponents))
    for version, iteration, weights in versions:
        t0 = time.time()
        module.set_state(load_weights(weights) if isinstance(weights, str) else weights)
        res = evaluate_module(module, env_config, args.opponents, args.games, seed=args.seed,
                              explore=not args.greedy)
        row = {"version": version, "iteration": iteration, **res, "wall_s": round(time.time() - t0, 1)}
        rows.append(row)
        print(f"{version:>7} {iteration:>9}  " + "  ".join(
            f"{res[f'reward_margin_vs_{o}']:>18.2f} {res[f'win_rate_vs_{o}']:>5.2f} {res[f'draw_rate_vs_{o}']:>5.2f} "
            f"{res[f'points_win_rate_vs_{o}']:>5.2f} {res[f'buildings_vs_{o}']:>5.2f} "
            f"{res[f'buildings_lost_vs_{o}']:>5.2f}" for o in args.opponents),
              flush=True)
    path = os.path.join(args.run, "version_curve.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    print(json.dumps({"run": args.run, "games": args.games, "time_limit_s": args.time_limit, "curve": rows}))


if __name__ == "__main__":
    main()
