"""What a training run prints: Ray's own output cut down to what a user of this project needs.

The console of a run should show its progress lines, its summary and real problems. Ray, Tune and RLlib add messages
that say nothing about the run and look like problems to a newcomer: a banner per experiment, notices about APIs
that RLlib itself calls, and tracebacks of workers that Ray stops at the end. Each rule below names one such message
and why it is noise; every other warning and error still reaches the console.

- ``quiet_ray_env()`` sets environment variables that Ray reads when it is imported (call it first);
- ``drop_noise_records()`` filters the listed log records in the calling process;
- ``setup_worker()`` is the ``worker_process_setup_hook`` of the embedded Ray: the same filters in every worker, and
  silence for a worker stopped while it finalized an object.
"""
from __future__ import annotations

import logging
import os
import re
import sys

# (logger, start of the message): log records dropped in every process of a run
NOISE_RECORDS = (
    # logged once per process: this project runs on RLlib's new API stack only, by design
    ("ray.rllib.algorithms.algorithm_config", "You are running PPO on the new API stack"),
    # RLlib's own RLModule.__init__ builds the deprecated RLModuleConfig: nothing in this project to change
    ("ray._common.deprecation", "DeprecationWarning: `RLModule(config=[RLModuleConfig object])`"),
    # Tune's system monitor on a machine without a GPU
    ("ray.tune.utils.util", "Install gputil for GPU system monitoring"),
    # the run's summary names its checkpoints
    ("ray.train._internal.storage", "Checkpoint successfully created"),
    # building the algorithm (env runners, modules, learner) takes seconds; a run has one trial actor to reuse
    ("ray.tune.trainable.trainable", "Trainable.setup took"),
)
# lines of the workers' forwarded output that are not Python log records: Ray core's own (C++) log
NOISE_LINES = (
    # RLlib hands every env runner its config by reference; the restart caveat (ray-project/ray#53727) is Ray's
    "has constructor arguments in the object store and max_restarts > 0",
)


class DropMessages(logging.Filter):
    """Drops the records of one logger whose message starts with one of `prefixes`."""

    def __init__(self, prefixes):
        super().__init__()
        self.prefixes = tuple(prefixes)

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefixes)


def quiet_ray_env() -> None:
    """Environment settings Ray reads when it is imported or started (a user's own settings win):

    - the forwarded worker lines of NOISE_LINES are skipped (Ray's documented RAY_DEDUP_LOGS_SKIP_REGEX);
    - Tune's console reporter is the legacy one, which is silent at verbosity 0 (the new one prints an experiment
      banner and a TensorBoard hint into Ray's temporary files even then): the run prints its own progress lines;
    - a local Ray instance starts with token authentication, as Ray's default does, without warning about it;
    - Tune does not warn that "Experiment state snapshotting has been triggered multiple times": app.train forces that
      snapshot after every trial checkpoint on purpose (``save_experiment_state_at_every_checkpoint``: ``--resume``
      after a killed driver continues from the latest checkpoint), so the warning, which advises against exactly
      that, would print at every checkpoint of the run and of every sweep trial (Tune's documented switch,
      TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S=0)."""
    os.environ.setdefault("RAY_DEDUP_LOGS_SKIP_REGEX", "|".join(re.escape(line) for line in NOISE_LINES))
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
    if not os.environ.get("RAY_ADDRESS"):
        os.environ.setdefault("RAY_AUTH_MODE", "token")


def drop_noise_records() -> None:
    """Filters the records of NOISE_RECORDS in this process (once per logger)."""
    by_logger: dict[str, list[str]] = {}
    for name, prefix in NOISE_RECORDS:
        by_logger.setdefault(name, []).append(prefix)
    for name, prefixes in by_logger.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, DropMessages) for f in logger.filters):
            logger.addFilter(DropMessages(prefixes))


def _ignore_exit_while_finalizing(unraisable) -> None:
    """Ray stops a worker with SIGTERM, and its handler raises SystemExit in whatever runs at that moment. When that
    is an object's finalizer (an env runner's or learner group's ``__del__``), Python prints the SystemExit as an
    "Exception ignored in" traceback although the worker just exits as asked. Every other unraisable error is
    reported as usual."""
    if isinstance(unraisable.exc_value, SystemExit):
        return
    sys.__unraisablehook__(unraisable)


def setup_worker() -> None:
    """The embedded Ray's worker_process_setup_hook (see ``worker_runtime_env``)."""
    drop_noise_records()
    sys.unraisablehook = _ignore_exit_while_finalizing


def worker_runtime_env() -> dict:
    """The runtime_env of the embedded Ray that runs ``setup_worker`` in every worker. Ray runs the hook before a
    worker can import this project, so this module (standard library only) travels by value."""
    import ray.cloudpickle
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return {"worker_process_setup_hook": setup_worker}
