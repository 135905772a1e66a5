"""The base of the callbacks that keep files in their trial's directory: the league's weights and league.csv, the
TrueSkill ratings' trueskill.csv.

The files go to the trial's directory in Tune's storage, next to progress.csv and the checkpoints, so that they
survive the Ray session and ``--resume`` finds them. Under Tune, ``Algorithm.logdir`` is a working directory inside
the Ray session's temporary files (not synced by default), so it is only the fallback, for an Algorithm built outside
Tune. The storage is assumed to be a local (or mounted) path. ``append_csv_rows`` is also how the training CLI grows
its metrics.csv.
"""
from __future__ import annotations

import csv
import os

from ray.rllib.callbacks.callbacks import RLlibCallback


def append_csv_rows(path: str, columns, rows) -> None:
    """Appends dict rows to a CSV (header written when the file is new; keys outside `columns` are an error)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        if new:
            w.writeheader()
        w.writerows(rows)


def read_csv_rows(path: str) -> list[dict]:
    """The rows of a CSV as dicts of strings ([] when there is no file yet)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class TrialFilesCallback(RLlibCallback):
    """Gives a callback its trial's directory (``trial_dir``) and the paths of its files there (``trial_path``)."""

    @staticmethod
    def trial_dir(algorithm) -> str:
        storage = getattr(algorithm, "_storage", None)
        if storage is not None and getattr(storage, "trial_dir_name", None):
            path = storage.trial_fs_path
            if os.path.isabs(path):
                os.makedirs(path, exist_ok=True)
                return path
        return algorithm.logdir

    @classmethod
    def trial_path(cls, algorithm, *parts: str) -> str:
        return os.path.join(cls.trial_dir(algorithm), *parts)
