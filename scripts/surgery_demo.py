"""Model surgery in the middle of a run (Five sec. 3.3, app. B, figure 4): a 1v1 run trains for a while, is
grown (LSTM twice as wide, the scoreboard observation group added) by ``python -m app.surgery``, and continues from
the grown checkpoint (``init.restore``, the learning rate held at 0 for the first iterations). Prints:

- the surgery's table and its measured max output difference;
- paired evaluation games (the same seeds and sides for every version, as scripts/version_curve.py) of the untrained
  network, the agent right before surgery, right after it, and at the end of the continued run, against a reference
  agent: reward margin, win, points and building rates; before and after should match within noise (they play the
  same games: their action distributions agree to ~1e-7);
- the training signals per hero-minute (last hits, XP, gold) at the start of the run from scratch, at its end, at the
  start of the continued run and at its end: the continued run starts where the first one ended, not from scratch;
- a JSON line last.

    python scripts/surgery_demo.py [--config tune_configs/hok_1v1.yaml] [--minutes-before 10] [--minutes-after 5]
                                   [--games 8] [--time-limit 300] [--opponent random] [--out /tmp/surgery_demo]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNALS = ("per_min_last_hit", "per_min_xp", "per_min_gold_gained")


def run(cmd: list[str], log_path: str) -> dict:
    """Runs a CLI step (its output to log_path and, summarized, to stdout); returns its last JSON line."""
    print("$ " + " ".join(cmd), flush=True)
    t0 = time.time()
    with open(log_path, "w") as log:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True)
    with open(log_path) as f:
        lines = f.read().splitlines()
    if proc.returncode != 0:
        print("\n".join(lines[-30:]))
        raise SystemExit(f"step failed (exit {proc.returncode}); log: {log_path}")
    print(f"  done in {time.time() - t0:.0f} s (log {log_path})", flush=True)
    return json.loads(next(x for x in reversed(lines) if x.startswith("{")))


def metrics(run_dir: str) -> list[dict]:
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        return list(csv.DictReader(f))


def window(rows: list[dict], first: bool, n: int) -> dict:
    """Mean of the signals over the first or last n iterations that report them."""
    rows = [r for r in rows if all(r.get(k) not in (None, "", "nan") for k in SIGNALS)]
    part = rows[:n] if first else rows[-n:]
    out = {k: sum(float(r[k]) for r in part) / max(len(part), 1) for k in SIGNALS}
    out["iterations"] = f"{part[0]['iteration']}-{part[-1]['iteration']}" if part else "-"
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default=os.path.join(ROOT, "tune_configs", "hok_1v1.yaml"))
    p.add_argument("--minutes-before", type=float, default=10.0, help="training before surgery (wall minutes)")
    p.add_argument("--minutes-after", type=float, default=5.0, help="training after surgery (wall minutes)")
    p.add_argument("--lr-hold", type=int, default=3, help="iterations at lr 0 after surgery (init.lr_hold_iterations)")
    p.add_argument("--games", type=int, default=8, help="paired evaluation games per version (sides alternate)")
    p.add_argument("--time-limit", type=float, default=300.0, help="evaluation game time limit in s")
    p.add_argument("--opponent", default="random")
    p.add_argument("--window", type=int, default=5, help="iterations averaged for the training signals")
    p.add_argument("--out", default="/tmp/surgery_demo", help="where the runs and checkpoints go (must be new)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="overrides for both runs")
    args = p.parse_args(argv)
    if os.path.exists(args.out):
        raise SystemExit(f"--out {args.out!r} exists: give a new directory")
    import yaml

    from training import run_config
    os.makedirs(args.out)
    t_start = time.time()
    base = run_config.load(args.config, args.set)  # validated here: a bad config fails before any training
    with open(args.config) as f:
        raw = yaml.safe_load(f) or {}
    for item in args.set:
        k, v = item.split("=", 1)
        run_config.set_key(raw, k.strip(), run_config._parse_value(v))
    raw.update(storage_path=os.path.join(args.out, "results"))
    raw["league"] = {**(raw.get("league") or {}), "enabled": True, "snapshot_every": 10}  # snapshots to carry
    raw["checkpoint"] = {"frequency": 0, "at_end": True}
    raw["evaluation"] = {**(raw.get("evaluation") or {}), "interval": 0}  # the paired games below instead
    before_cfg, after_cfg = dict(raw, name="before"), dict(raw, name="after")
    from policies.model.five_module import FiveModelConfig
    lstm = FiveModelConfig.from_dict(base["model"]).lstm_size
    after_cfg["model"] = {**(raw.get("model") or {}), "lstm_size": 2 * lstm}
    after_cfg["env"] = {**(raw.get("env") or {}), "observation_groups": ["scoreboard"]}
    paths = {}
    for name, cfg in (("before", before_cfg), ("after", after_cfg)):
        paths[name] = os.path.join(args.out, f"{name}.yaml")
        with open(paths[name], "w") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
    py = sys.executable

    # 1. train, 2. grow, 3. continue
    a = run([py, "-m", "app.train", "--config", paths["before"], "--set",
             f"stop.time_total_s={args.minutes_before * 60}"], os.path.join(args.out, "train_before.log"))
    ckpt_a = a["trials"][0]["checkpoint"]
    grown = os.path.join(args.out, "grown")
    s = run([py, "-m", "app.surgery", "--checkpoint", ckpt_a, "--config", paths["after"], "--out", grown],
            os.path.join(args.out, "surgery.log"))
    with open(os.path.join(args.out, "surgery.log")) as f:
        print("".join(line for line in f if not line.startswith("{")), end="")
    b = run([py, "-m", "app.train", "--config", paths["after"], "--set", f"init.restore={grown}", "--set",
             f"init.lr_hold_iterations={args.lr_hold}", "--set", f"stop.time_total_s={args.minutes_after * 60}"],
            os.path.join(args.out, "train_after.log"))
    ckpt_b = b["trials"][0]["checkpoint"]

    # 4. paired games
    import torch

    from moba.env.config import EnvConfig
    from training.evaluation_games import EVAL_ENV_KEYS, evaluate_module
    from policies.league.references import load_module
    torch.set_num_threads(1)
    env_before = {k: v for k, v in base["env"].items() if k in EVAL_ENV_KEYS}
    env_after = {**env_before, "observation_groups": ["scoreboard"]}
    for e in (env_before, env_after):
        EnvConfig.from_dict(e)
        e["time_limit_s"] = args.time_limit
    untrained = load_module(ckpt_a)
    torch.manual_seed(12345)
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    untrained.set_state(RLModuleSpec.from_module(untrained).build().get_state())
    versions = [("untrained", untrained, env_before), ("before surgery", load_module(ckpt_a), env_before),
                ("after surgery", load_module(grown), env_after), ("continued", load_module(ckpt_b), env_after)]
    o = args.opponent
    print(f"\npaired games: {args.games} per version vs {o}, {args.time_limit:.0f} s limit, the same seeds and sides")
    print(f"{'version':<16} {'iteration':>9} {'margin':>8} {'win':>5} {'points':>6} {'bldg':>5} {'lost':>5} {'s':>5}")
    with open(os.path.join(grown, "surgery.json")) as f:
        surgered_at = json.load(f)["iteration"]
    iters = {"untrained": 0, "before surgery": surgered_at, "after surgery": surgered_at}
    iters["continued"] = int(metrics(b["run_dir"])[-1]["iteration"])
    evals = {}
    for name, module, env in versions:
        t0 = time.time()
        torch.manual_seed(0)  # the same sampling stream for every version: identical distributions, identical games
        r = evaluate_module(module, env, [o], args.games, seed=7, explore=True)
        evals[name] = {"iteration": iters[name], "reward_margin": r[f"reward_margin_vs_{o}"],
                       "win_rate": r[f"win_rate_vs_{o}"], "points_win_rate": r[f"points_win_rate_vs_{o}"],
                       "buildings": r[f"buildings_vs_{o}"], "buildings_lost": r[f"buildings_lost_vs_{o}"]}
        e = evals[name]
        print(f"{name:<16} {e['iteration']:>9} {e['reward_margin']:>8.2f} {e['win_rate']:>5.2f} "
              f"{e['points_win_rate']:>6.2f} {e['buildings']:>5.2f} {e['buildings_lost']:>5.2f} "
              f"{time.time() - t0:>5.0f}", flush=True)

    # 5. the training signals: from scratch, before surgery, right after, at the end
    ra, rb = metrics(a["run_dir"]), metrics(b["run_dir"])
    held = [r for r in rb if r.get("lr") not in (None, "") and float(r["lr"]) == 0.0]
    phases = {"run start (scratch)": window(ra, True, args.window), "before surgery": window(ra, False, args.window),
              "after surgery": window(rb, True, args.window), "continued end": window(rb, False, args.window)}
    print(f"\ntraining signals per hero-minute (mean of {args.window} iterations); lr held at 0 on "
          f"{len(held)} iterations after surgery")
    print(f"{'phase':<22} {'iterations':>11} " + " ".join(f"{k[8:]:>12}" for k in SIGNALS))
    for name, w in phases.items():
        print(f"{name:<22} {w['iterations']:>11} " + " ".join(f"{w[k]:>12.2f}" for k in SIGNALS))
    vf = [(r["iteration"], r.get("vf_loss")) for r in rb[:args.lr_hold + 2]]
    print("value loss, first iterations after surgery: " + ", ".join(f"{i}: {float(v):.3f}" for i, v in vf
                                                                    if v not in (None, "", "nan")))
    print(json.dumps({"surgery": {"max_abs_diff": s["max_abs_diff"], "changes": s["changes"],
                                  "league_snapshots": s["league_snapshots"]},
                      "iterations_before": iters["before surgery"], "iterations_after": iters["continued"],
                      "lr_held_iterations": len(held), "paired_games": evals, "signals": phases,
                      "opponent": o, "games": args.games, "wall_s": round(time.time() - t_start),
                      "runs": {"before": a["run_dir"], "after": b["run_dir"]}}))


if __name__ == "__main__":
    main()
