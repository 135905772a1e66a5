"""How much a win probability is worth: its calibration on recorded games (reliability bins, the Brier score and the
expected calibration error), the numbers the draft page states (scripts/draft_calibration.py measures them and writes
``<model dir>/draft_calibration.json``, CALIBRATION_FILE).

For predictions p_i of binary outcomes y_i (1: the predicted team won, 0: it lost; a drawn game has no outcome and
is left out by the caller):

- the Brier score is mean((p_i - y_i) ** 2) (Brier 1950): 0 is perfect; ``brier_base_rate`` is the score of always
  predicting the outcomes' base rate, the skill-free reference (0.25 when half the games are won);
- the reliability bins split [0, 1] into RELIABILITY_BINS equal bins by p; each has its count, its mean prediction
  and its win rate (the outcomes' mean);
- the expected calibration error is sum over the bins of (count / n) * |mean prediction - win rate| (Naeini et al.
  2015, as Guo et al. 2017 compute it).
"""
from __future__ import annotations

import numpy as np

RELIABILITY_BINS = 10  # equal-width bins of [0, 1] (Guo et al. 2017 use 15; 10 is the common reliability diagram)
CALIBRATION_FILE = "draft_calibration.json"  # in the model's directory


def _checked(probs, outcomes) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(probs, np.float64).reshape(-1)
    y = np.asarray(outcomes, np.float64).reshape(-1)
    if len(p) != len(y):
        raise ValueError(f"{len(p)} predictions but {len(y)} outcomes")
    if len(p) and (not np.all((p >= 0) & (p <= 1)) or not np.all((y == 0) | (y == 1))):
        raise ValueError("predictions must lie in [0, 1] and outcomes be 0 or 1")
    return p, y


def brier_score(probs, outcomes) -> float:
    p, y = _checked(probs, outcomes)
    return float(np.mean((p - y) ** 2)) if len(p) else float("nan")


def reliability_bins(probs, outcomes, bins: int = RELIABILITY_BINS) -> list[dict]:
    """One dict per bin [lo, hi) (the last one closed): lo, hi, count, mean_prob and win_rate (None when empty)."""
    p, y = _checked(probs, outcomes)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        m = which == b
        n = int(m.sum())
        out.append({"lo": b / bins, "hi": (b + 1) / bins, "count": n,
                    "mean_prob": float(p[m].mean()) if n else None, "win_rate": float(y[m].mean()) if n else None})
    return out


def expected_calibration_error(probs, outcomes, bins: int = RELIABILITY_BINS) -> float:
    p, _ = _checked(probs, outcomes)
    if not len(p):
        return float("nan")
    return float(sum(b["count"] / len(p) * abs(b["mean_prob"] - b["win_rate"])
                     for b in reliability_bins(probs, outcomes, bins) if b["count"]))


def calibration(probs, outcomes, bins: int = RELIABILITY_BINS) -> dict:
    """Everything above for one set of predictions: n, base_rate, mean_prob, prob_range ([min, max]), brier,
    brier_base_rate, ece and bins. With no prediction, n is 0 and the numbers are None."""
    p, y = _checked(probs, outcomes)
    if not len(p):
        return {"n": 0, "base_rate": None, "mean_prob": None, "prob_range": None, "brier": None,
                "brier_base_rate": None, "ece": None, "bins": reliability_bins(p, y, bins)}
    base = float(y.mean())
    return {"n": int(len(p)), "base_rate": base, "mean_prob": float(p.mean()),
            "prob_range": [float(p.min()), float(p.max())], "brier": brier_score(p, y),
            "brier_base_rate": brier_score(np.full(len(y), base), y), "ece": expected_calibration_error(p, y, bins),
            "bins": reliability_bins(p, y, bins)}
