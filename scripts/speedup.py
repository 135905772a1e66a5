"""Speedup of an experiment over a baseline (Five eq. 2): the number of versions (iterations) the baseline needs
to first reach TrueSkill T, divided by the number the experiment needs, for each threshold T.

    python scripts/speedup.py BASELINE.csv EXPERIMENT.csv [--thresholds 5 10 20] [--x iteration] [--y trueskill_mu]

The CSVs are runs' metrics (e.g. results/<name>/metrics.csv) with one row per version. A threshold that a run never
reaches gives no speedup (null). Prints a table and a JSON line last.
"""
from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from training.cli import user_errors


def first_reach(df: pd.DataFrame, threshold: float, x: str, y: str) -> float | None:
    """The first x at which y >= threshold, or None."""
    hit = df[df[y] >= threshold]
    return None if hit.empty else float(hit[x].iloc[0])


def speedups(baseline: pd.DataFrame, experiment: pd.DataFrame, thresholds, x="iteration", y="trueskill_mu"):
    rows = []
    for t in thresholds:
        b, e = first_reach(baseline, t, x, y), first_reach(experiment, t, x, y)
        rows.append({"threshold": t, "baseline_versions": b, "experiment_versions": e,
                     "speedup": (b / e) if (b is not None and e) else None})
    return rows


def _load(path, x, y):
    df = pd.read_csv(path)
    missing = [c for c in (x, y) if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; columns: {list(df.columns)}")
    return df.dropna(subset=[y]).sort_values(x)


@user_errors
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("baseline")
    p.add_argument("experiment")
    p.add_argument("--thresholds", type=float, nargs="+", default=[5.0, 10.0, 15.0, 20.0])
    p.add_argument("--x", default="iteration", help="the version column")
    p.add_argument("--y", default="trueskill_mu", help="the TrueSkill column")
    args = p.parse_args(argv)
    rows = speedups(_load(args.baseline, args.x, args.y), _load(args.experiment, args.x, args.y),
                    args.thresholds, args.x, args.y)
    print(pd.DataFrame(rows).to_string(index=False))
    print(json.dumps({"baseline": args.baseline, "experiment": args.experiment, "speedups": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
