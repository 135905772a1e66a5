"""The base of the callbacks that keep files in their trial's directory: the league's weights and league.csv, the
opponents' opponents.csv, the TrueSkill ratings' trueskill.csv (the rows: training/csv_files.py).

The files go to the trial's directory in Tune's storage, next to progress.csv and the checkpoints, so that they
survive the Ray session and ``--resume`` finds them. The storage is a local (or mounted) path, or a URI that every
node reaches (training/run_storage.py): when the run's storage path (``storage_path`` of its settings,
training/settings.run_settings) is a URI, the trial directory is one too. Under Tune, ``Algorithm.logdir`` is a working
directory inside the Ray session's temporary files (not synced by default), so it is only the fallback, for an
Algorithm built outside Tune. Restoring a checkpoint drops the rows written after it (``on_checkpoint_loaded``)."""
from __future__ import annotations

import os
import posixpath

from ray.rllib.utils.annotations import override

from training import run_storage
from training.csv_files import drop_rows_after
from training.settings import run_settings
from callbacks import RunCallback


class TrialFilesCallback(RunCallback):
    """Gives a callback its trial's directory (``trial_dir``) and the locations of its files there (``trial_path``).
    A subclass lists its per-iteration CSVs in ``CSV_FILES``: restoring a checkpoint trims them (the resume rule)."""

    CSV_FILES: tuple[str, ...] = ()

    @staticmethod
    def trial_dir(algorithm) -> str:
        storage = getattr(algorithm, "_storage", None)
        if storage is not None and getattr(storage, "trial_dir_name", None):
            root = run_settings(algorithm.config).storage_path
            if root and run_storage.is_uri(root):
                return run_storage.join(root, posixpath.relpath(storage.trial_fs_path, storage.storage_fs_path))
            path = storage.trial_fs_path
            if os.path.isabs(path):
                os.makedirs(path, exist_ok=True)
                return path
        return algorithm.logdir

    @classmethod
    def trial_path(cls, algorithm, *parts: str) -> str:
        return run_storage.join(cls.trial_dir(algorithm), *parts)

    @override(RunCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        for name in self.CSV_FILES:
            drop_rows_after(self.trial_path(algorithm, name), algorithm.iteration)

