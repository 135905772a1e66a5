"""Plots of a training run, from the CSVs that app/train.py and the callbacks write:

- ``training.png``: the evaluation's win rate, points win rate and reward margin against the random agent, the
  reward per hero-minute from the lane, death and gold signals, the value loss, the entropy and team spirit per
  iteration (``<run>/metrics.csv``);
- ``update.png``: how far each update moved the policy and what moved it: approx_kl, the clip fraction, the value
  function's explained variance, the minibatches applied, each loss term's gradient norm, the gradient-noise cosine,
  the teacher's agreement per head and the mean advantage of each primary action (the update columns of
  ``metrics.csv``, training/progress.py);
- ``signals.png``: the reward per hero and game minute from each signal of Table 6 (the ``per_min_<signal>`` columns
  of ``metrics.csv``): what the policy is learning to collect, signal by signal;
- ``trueskill.png``: TrueSkill mu +- sigma per rated version (``<trial>/trueskill.csv``, Five app. J);
- ``opponents.png``: the past-opponent distribution, like figure 27 of Five: the sampling probability of every
  past version at each iteration, and its quality now (``<trial>/league.csv``, app. N).

    python scripts/plot_run.py results/five_5v5_baseline [--out DIR]

A run directory holds metrics.csv and one trial directory per trial (the first one with league/TrueSkill CSVs is
used). Every axis says what it shows and in which unit, and its ticks are the plain numbers (no offset or scale
text). The last line is JSON naming the files written.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

import pandas as pd

from training.cli import print_error


def whole_numbers(*axes_of):
    """Ticks at whole numbers only on these axes (iterations and versions: a tick at 2.5 means nothing)."""
    from matplotlib.ticker import MaxNLocator
    for axis in axes_of:
        axis.set_major_locator(MaxNLocator(integer=True))


def plain_numbers(fig):
    """Every axis of the figure labels its ticks with the numbers themselves: no offset or scale text above the axis
    (matplotlib's "1e-12+5.4e-1" over a flat line of 0.54, whose ticks then read -0.4 .. 0.4)."""
    from matplotlib.ticker import ScalarFormatter
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, ScalarFormatter):
                formatter.set_useOffset(False)
                formatter.set_scientific(False)
    return fig


def flat_margin(ax, values):
    """A line that is flat but for float noise gets y limits around its value (matplotlib would zoom in on the
    noise); any other line keeps matplotlib's limits."""
    v = pd.Series(values, dtype=float).dropna()
    if len(v) and v.max() - v.min() <= 1e-9 * max(1.0, v.abs().max()):
        mid = float(v.mean())
        pad = max(0.1 * abs(mid), 0.05)
        ax.set_ylim(mid - pad, mid + pad)


def save(fig, path: str):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_arguments(doc: str, out_help: str) -> argparse.ArgumentParser:
    """The command line of a script that reads a run directory: the run, --out and --references."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", help="a run directory of app.train (results/<name>, with metrics.csv)")
    p.add_argument("--out", help=out_help)
    p.add_argument("--references", help="a rated references JSON to draw as lines on the TrueSkill plot (default "
                                        "for report.py: the run's trueskill.references)")
    return p


def run_dir_error(run_dir: str) -> str | None:
    """What is wrong with a directory that is not a run of app.train (it has no metrics.csv); None for a run."""
    path = os.path.join(run_dir, "metrics.csv")
    return None if os.path.isfile(path) else f"{path} not found (is {run_dir!r} a run directory of app.train?)"


def trial_csv(run_dir: str, name: str) -> str | None:
    found = sorted(glob.glob(os.path.join(run_dir, "*", name)))
    return found[0] if found else None


# the training panels: metrics.csv's column, the panel's title, and its y axis: what and the unit
WIN_RATE = "win rate (fraction of games)"
PER_HERO_MINUTE = "reward per hero\nand game minute"
TRAINING_PANELS = [
    ("win_rate_vs_random", "evaluation win rate vs random", WIN_RATE),
    ("points_win_rate_vs_random", "evaluation points win rate vs random (win, or higher return at the limit)",
     WIN_RATE),
    ("reward_margin_vs_random", "evaluation reward margin vs random (own raw return minus the enemy's)",
     "raw reward per game"),
    ("per_min_lane_assign", "lane-assignment reward", PER_HERO_MINUTE),
    ("per_min_hero_death", "death reward", PER_HERO_MINUTE),
    ("per_min_gold_gained", "gold reward", PER_HERO_MINUTE),
    ("vf_loss", "value loss", "squared error\n(reward²)"),
    ("entropy", "policy entropy", "entropy (nats)"),
    ("team_spirit", "team spirit", "tau (0 to 1)"),
]


def training_figure(metrics: pd.DataFrame):
    """The training curves per iteration, or None when nothing is plottable."""
    import matplotlib.pyplot as plt
    # (no episode-return panel: it sums both teams' zero-sum rewards, ~0 by construction)
    panels = [(c, t, y) for c, t, y in TRAINING_PANELS if c in metrics and metrics[c].notna().any()]
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.2 * len(panels)), sharex=True, squeeze=False)
    for ax, (col, title, ylabel) in zip(axes[:, 0], panels):
        d = metrics[["iteration", col]].dropna()
        ax.plot(d["iteration"], d[col], marker="o" if len(d) < 30 else None)
        flat_margin(ax, d[col])
        label_panel(ax, title, ylabel)
    axes[-1, 0].set_xlabel("training iteration")
    return plain_numbers(fig)


def label_panel(ax, title: str, ylabel: str):
    """A per-iteration panel's title, y label, grid and whole-number iteration ticks."""
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.grid(alpha=0.3)
    whole_numbers(ax.xaxis)


# the update panels (training/progress.py UPDATE_COLUMNS): one line per column, or one per column of a prefix
UPDATE_PANELS = [
    (["approx_kl"], "approx_kl: the KL from the sampling policy at the update's last minibatch (ppo.target_kl stops "
                    "the update past it)", "KL (nats)"),
    (["clip_fraction"], "PPO clip fraction (last minibatch)", "fraction of steps"),
    (["vf_explained_var"], "value function: explained variance of the value targets", "explained variance"),
    (["minibatches_applied"], "minibatches applied per update", "minibatches"),
    ("grad_norm_", "each loss term's gradient norm (first minibatch, every ppo.diagnostics_every updates)",
     "L2 norm"),
    (["gradient_noise_cosine"], "gradient-noise cosine: the policy gradients of two halves of the steps "
                                "(near 0: mostly noise)", "cosine"),
    ("teacher_agreement_", "the teacher's agreement with the student's most likely action, per head",
     "fraction of steps"),
    ("advantage_", "mean advantage of each primary action", "advantage\n(normalized)"),
]


def update_figure(metrics: pd.DataFrame):
    """How far each update moved the policy and what moved it, per iteration (UPDATE_PANELS), or None when
    metrics.csv has none of those columns."""
    import matplotlib.pyplot as plt
    panels = []
    for cols, title, ylabel in UPDATE_PANELS:
        prefix = cols if isinstance(cols, str) else ""
        if prefix:
            cols = [c for c in metrics.columns if c.startswith(prefix)]
        cols = [c for c in cols if c in metrics and metrics[c].notna().any()]
        if cols:
            panels.append((cols, prefix, title, ylabel))
    if not panels:
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.4 * len(panels)), sharex=True, squeeze=False)
    for ax, (cols, prefix, title, ylabel) in zip(axes[:, 0], panels):
        for col in cols:
            d = metrics[["iteration", col]].dropna()
            ax.plot(d["iteration"], d[col], marker="o" if len(d) < 30 else None, markersize=3,
                    label=col.removeprefix(prefix) if prefix else None)
        if prefix:
            ax.legend(fontsize=6, ncol=4, loc="best")
        else:
            flat_margin(ax, metrics[cols[0]].dropna())
        label_panel(ax, title, ylabel)
    axes[-1, 0].set_xlabel("training iteration")
    return plain_numbers(fig)


SIGNAL_PREFIX = "per_min_"  # training/progress.py's SIGNAL_RATE_PREFIX (scripts read the CSV, not the training modules)


def signals_figure(metrics: pd.DataFrame):
    """The reward per hero-minute of every signal that was ever non-zero, one small panel each; None when there
    is none."""
    import matplotlib.pyplot as plt
    cols = [c for c in metrics.columns if c.startswith(SIGNAL_PREFIX) and metrics[c].fillna(0).abs().max() > 0]
    if not cols:
        return None
    ncols = 3
    nrows = -(-len(cols) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(11, 2.3 * nrows), sharex=True, squeeze=False)
    for k, (ax, col) in enumerate(zip(axes.flat, cols)):
        d = metrics[["iteration", col]].dropna()
        ax.plot(d["iteration"], d[col], marker="o" if len(d) < 30 else None, markersize=3)
        ax.axhline(0, color="gray", linewidth=0.6)
        ax.set_title(col.removeprefix(SIGNAL_PREFIX), fontsize=9)
        ax.set_ylabel("reward / hero-min", fontsize=8)
        ax.grid(alpha=0.3)
        whole_numbers(ax.xaxis)
        if k + ncols >= len(cols):  # the lowest panel of its column: the iterations under it
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("training iteration", fontsize=8)
    for ax in list(axes.flat)[len(cols):]:
        ax.axis("off")
    fig.suptitle("reward per hero and game minute, by signal (Table 6)", fontsize=10)
    return plain_numbers(fig)


def trueskill_figure(ts: pd.DataFrame, references: dict | None = None):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.errorbar(ts["version"], ts["mu"], yerr=ts["sigma"], marker="o", capsize=3, label="trained version")
    for name, spec in (references or {}).items():
        ax.axhline(spec["mu"], linestyle="--", linewidth=1, color="gray")
        ax.text(ts["version"].min(), spec["mu"], f" {name}", va="bottom", fontsize=8, color="gray")
    ax.set_xlabel("version (training iteration)")
    ax.set_ylabel("TrueSkill mu +- sigma (rating points)")
    ax.grid(alpha=0.3)
    whole_numbers(ax.xaxis)
    return plain_numbers(fig)


def opponents_figure(league: pd.DataFrame):
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
    ax1.set_title("opponent distribution (Five fig. 27)", fontsize=9)
    ax2.bar(last["snapshot_iteration"], last["quality"], width=max(1, last["snapshot_iteration"].diff().min() or 1))
    ax2.set_xlabel("snapshot iteration of the past version")
    ax2.set_ylabel("quality q_i (log-weight: p_i ~ exp q_i)")
    ax2.set_title(f"qualities at iteration {int(league['iteration'].max())}", fontsize=9)
    whole_numbers(ax1.xaxis, ax1.yaxis, ax2.xaxis)
    return plain_numbers(fig)


def main(argv=None) -> int:
    args = run_arguments(__doc__, "where to write the PNGs (default: the run directory)").parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    out = args.out or args.run_dir
    os.makedirs(out, exist_ok=True)
    error = run_dir_error(args.run_dir)
    if error:
        return print_error(error)
    metrics_path = os.path.join(args.run_dir, "metrics.csv")
    written = {}
    metrics = pd.read_csv(metrics_path)
    for name, fig in (("training", training_figure(metrics)), ("update", update_figure(metrics)),
                      ("signals", signals_figure(metrics))):
        if fig is not None:
            written[name] = os.path.join(out, f"{name}.png")
            save(fig, written[name])
    ts_path = trial_csv(args.run_dir, "trueskill.csv")
    if ts_path:
        refs = None
        if args.references:
            with open(args.references) as f:
                refs = json.load(f)["agents"]
        written["trueskill"] = os.path.join(out, "trueskill.png")
        save(trueskill_figure(pd.read_csv(ts_path), refs), written["trueskill"])
    league_path = trial_csv(args.run_dir, "league.csv")
    if league_path:
        league = pd.read_csv(league_path)
        if len(league):
            written["opponents"] = os.path.join(out, "opponents.png")
            save(opponents_figure(league), written["opponents"])
    for name, path in written.items():
        print(f"{name}: {path}")
    print(json.dumps({"written": written}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
