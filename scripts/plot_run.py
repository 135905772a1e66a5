"""Plots of a training run, from the CSVs that app/train.py and the callbacks write:

- ``training.png``: episode return, evaluation win rate and reward margin against the random agent, losses, and the
  schedule values per iteration (``<run>/metrics.csv``);
- ``trueskill.png``: TrueSkill mu +- sigma per rated version (``<trial>/trueskill.csv``, seeds/003 app. J);
- ``opponents.png``: the past-opponent distribution, like figure 27 of seeds/003: the sampling probability of every
  past version at each iteration, and its quality now (``<trial>/league.csv``, app. N).

    python scripts/plot_run.py results/five_5v5_baseline [--out DIR]

A run directory holds metrics.csv and one trial directory per trial (the first one with league/TrueSkill CSVs is
used). The last line is JSON naming the files written.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import pandas as pd


def _trial_csv(run_dir: str, name: str) -> str | None:
    found = sorted(glob.glob(os.path.join(run_dir, "*", name)))
    return found[0] if found else None


def plot_training(metrics: pd.DataFrame, path: str):
    import matplotlib.pyplot as plt
    # (no episode-return panel: it sums both teams' zero-sum rewards, ~0 by construction)
    panels = [("win_rate_vs_random", "evaluation win rate vs random"),
              ("points_win_rate_vs_random",
               "evaluation points win rate vs random (win, or higher return at the limit)"),
              ("reward_margin_vs_random", "evaluation reward margin vs random"),
              ("per_min_lane_assign", "lane-assignment reward per hero-minute"),
              ("per_min_hero_death", "death reward per hero-minute"),
              ("per_min_gold_gained", "gold reward per hero-minute"),
              ("vf_loss", "value loss"), ("entropy", "policy entropy"), ("team_spirit", "team spirit")]
    panels = [(c, t) for c, t in panels if c in metrics and metrics[c].notna().any()]
    if not panels:
        return False
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.2 * len(panels)), sharex=True, squeeze=False)
    for ax, (col, title) in zip(axes[:, 0], panels):
        d = metrics[["iteration", col]].dropna()
        ax.plot(d["iteration"], d[col], marker="o" if len(d) < 30 else None)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("training iteration")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_trueskill(ts: pd.DataFrame, path: str, references: dict | None = None):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.errorbar(ts["version"], ts["mu"], yerr=ts["sigma"], marker="o", capsize=3, label="trained version")
    for name, spec in (references or {}).items():
        ax.axhline(spec["mu"], linestyle="--", linewidth=1, color="gray")
        ax.text(ts["version"].min(), spec["mu"], f" {name}", va="bottom", fontsize=8, color="gray")
    ax.set_xlabel("version (training iteration)")
    ax.set_ylabel("TrueSkill mu")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_opponents(league: pd.DataFrame, path: str):
    """Figure 27: sampling probability of each past version (rows) over training iterations (columns); and the
    latest qualities per version."""
    import matplotlib.pyplot as plt
    probs = league.pivot_table(index="version", columns="iteration", values="probability")
    last = league[league["iteration"] == league["iteration"].max()].sort_values("version")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    im = ax1.imshow(probs.values, aspect="auto", origin="lower", cmap="viridis",
                    extent=[probs.columns.min() - 0.5, probs.columns.max() + 0.5, probs.index.min() - 0.5,
                            probs.index.max() + 0.5])
    fig.colorbar(im, ax=ax1, label="sampling probability")
    ax1.set_xlabel("training iteration")
    ax1.set_ylabel("past version")
    ax1.set_title("opponent distribution (seeds/003 fig. 27)", fontsize=9)
    ax2.bar(last["snapshot_iteration"], last["quality"], width=max(1, last["snapshot_iteration"].diff().min() or 1))
    ax2.set_xlabel("snapshot iteration of the past version")
    ax2.set_ylabel("quality q_i")
    ax2.set_title(f"qualities at iteration {int(league['iteration'].max())}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", help="a run directory (results/<name>) with metrics.csv")
    p.add_argument("--out", help="where to write the PNGs (default: the run directory)")
    p.add_argument("--references", help="a rated references JSON to draw as lines on the TrueSkill plot")
    args = p.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    out = args.out or args.run_dir
    os.makedirs(out, exist_ok=True)
    metrics_path = os.path.join(args.run_dir, "metrics.csv")
    if not os.path.isfile(metrics_path):
        print(f"error: {metrics_path} not found (is {args.run_dir!r} a run directory of app.train?)", file=sys.stderr)
        return 2
    written = {}
    if plot_training(pd.read_csv(metrics_path), os.path.join(out, "training.png")):
        written["training"] = os.path.join(out, "training.png")
    ts_path = _trial_csv(args.run_dir, "trueskill.csv")
    if ts_path:
        refs = None
        if args.references:
            with open(args.references) as f:
                refs = json.load(f)["agents"]
        written["trueskill"] = os.path.join(out, "trueskill.png")
        plot_trueskill(pd.read_csv(ts_path), written["trueskill"], refs)
    league_path = _trial_csv(args.run_dir, "league.csv")
    if league_path:
        league = pd.read_csv(league_path)
        if len(league):
            written["opponents"] = os.path.join(out, "opponents.png")
            plot_opponents(league, written["opponents"])
    for name, path in written.items():
        print(f"{name}: {path}")
    print(json.dumps({"written": written}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
