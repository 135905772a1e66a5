"""TrueSkill of the training agent measured beside training (Five app. J).

OpenAI Five rated every version of its agent while it trained: the version plays reference agents within 10
TrueSkill points of its current mu, its rating is updated after each game with the references held constant, and a
new version starts at the previous version's mu (``policies/references.VersionRater``). Here that runs in one Ray
actor beside training:

- ``BackgroundRater`` plays a version's games in a background thread at the lowest CPU priority (nice 19), so that
  it takes idle CPU (e.g. while the learner waits for samples) instead of training's; it holds at most one pending
  version (a newer one replaces it) and hands finished results out without blocking. ``TrueSkillRaterActor`` is the
  same class as a Ray actor (num_cpus=0: it reserves no CPU from training). Nice 19 is not enough on a machine that
  training keeps busy: a learner using every core lost a third of its speed to the games' short bursts (each one
  stalls the learner's threads). So the thread also sleeps to use at most ``cpu_share`` of one core
  (``CpuThrottle``), which bounds what it takes from training;
- ``TrueSkillCallback`` submits the "main" weights every N iterations, reports finished ratings in
  ``result["trueskill"]`` and appends them to ``<trial dir>/trueskill.csv`` (the input of scripts/speedup.py).

The settings are the run's ``trueskill`` section (training/settings.TrueSkillSettings, read with
training/settings.run_settings)::

    every: 5, games: 20, time_limit_s: 0.0, time_limit_outcome: objective, cpu_share: 0.1, explore: true,
    references: {"mode": "1v1", "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.2}, ...}}

``references`` is a rated references file (``python -m app.rate --rate-references``), read in by the driver that
built the algorithm config (training/algorithm.travelling_settings); ``time_limit_s`` 0 is the mode's default;
``time_limit_outcome`` how a capped game counts (policies/league/ratings.game_score; the references must have been
rated under the same rule); ``every`` 0 turns the rating off.
"""
from __future__ import annotations

import atexit
import logging
import os
import threading
import time

import ray
from ray.rllib.utils.annotations import override

from policies.league.references import VersionRater, reference_ratings, references_outcome_rule
from policies.model.module_ids import MAIN
from training.settings import TrueSkillSettings, run_settings
from training.csv_files import append_csv_rows, read_csv_rows
from training.evaluation_games import EVAL_ENV_KEYS
from callbacks.trial_files import TrialFilesCallback

logger = logging.getLogger(__name__)

RATER_NICENESS = 19  # the lowest CPU priority: the games only take CPU that training leaves idle
SEED_STRIDE = 1000  # version v plays games with seeds SEED_STRIDE * v + g
POLL_WAIT_S = 0.05  # the most the driver waits for the actor to answer a poll; a late answer is read next iteration
THROTTLE_CHUNK_S = 0.02  # CPU seconds the games run between two sleeps
CSV_NAME = "trueskill.csv"
# scripts/speedup.py reads "iteration" and "trueskill_mu" by default: they repeat version and mu
CSV_COLUMNS = ("iteration", "trueskill_mu", "version", "mu", "sigma", "games", "wins", "draws", "losses", "wall_s")


# ---- rating beside training ------------------------------------------------------------------------------------------
def rated_game_rules(algorithm) -> dict:
    """The training env's keys that rated games share with it, as evaluation games do (EVAL_ENV_KEYS: the rules of
    play such as ``consumable_filters``; the mode is the references')."""
    env = algorithm.config.env_config or {}
    return {k: env[k] for k in EVAL_ENV_KEYS if k in env and k != "mode"}


class CpuThrottle:
    """Called between units of work, sleeps so that the calling thread uses at most `share` of one core: after every
    `chunk_s` of the thread's CPU time it sleeps chunk * (1 / share - 1). share >= 1 never sleeps."""

    def __init__(self, share: float, chunk_s: float = THROTTLE_CHUNK_S, sleep=time.sleep):
        if not 0.0 < share:
            raise ValueError(f"cpu_share must be > 0, got {share}")
        self.share, self.chunk_s, self._sleep = float(share), chunk_s, sleep
        self._cpu = time.thread_time()

    def __call__(self, *_):
        used = time.thread_time() - self._cpu
        if self.share >= 1.0 or used < self.chunk_s:
            return
        pause = used * (1.0 / self.share - 1.0)
        self._sleep(pause)
        self._cpu = time.thread_time()


class BackgroundRater:
    """Rates submitted versions one at a time in a background thread at nice 19. At most one version waits: a newer
    submission replaces it. ``submit`` and ``poll`` return at once."""

    def __init__(self, references: dict, module_factory, games: int, time_limit_s: float, cpu_share: float,
                 start_mu: float | None = None, explore: bool = True,
                 time_limit_outcome: str | None = None, env: dict | None = None):
        """module_factory: a zero-argument callable that returns a fresh RLModule of the rated agent's architecture
        (e.g. an RLModuleSpec's ``build``); the rest as for ``VersionRater`` (time_limit_outcome None: the references'
        rule; env: the rated games' env config keys) and the ``trueskill:`` settings."""
        self.rater = VersionRater(references, start_mu, explore, time_limit_outcome, env)
        self.module_factory = module_factory
        self.games, self.time_limit_s = games, time_limit_s
        self.cpu_share = float(cpu_share)
        CpuThrottle(self.cpu_share)  # a bad share fails here, not in the thread
        self._lock = threading.Condition()
        self._pending = None  # (version, module_state) or None
        self._running = None  # the version being played
        self._finished = []  # result dicts not yet polled
        self._niceness = None
        threading.Thread(target=self._loop, name="trueskill-rater", daemon=True).start()

    def submit(self, version: int, module_state) -> int | None:
        """Queues the version, replacing the pending one; returns the replaced version (None if there was none)."""
        with self._lock:
            replaced = self._pending[0] if self._pending is not None else None
            self._pending = (version, module_state)
            self._lock.notify()
        return replaced

    def poll(self) -> list:
        """The results finished since the last poll, oldest first (a failed rating gives {"version", "error"})."""
        with self._lock:
            out, self._finished = self._finished, []
        return out

    def status(self) -> dict:
        with self._lock:
            return {"running": self._running, "pending": None if self._pending is None else self._pending[0],
                    "unpolled": len(self._finished), "niceness": self._niceness}

    def _loop(self):
        self._lower_priority()
        while True:
            with self._lock:
                while self._pending is None:
                    self._lock.wait()
                (version, state), self._pending = self._pending, None
                self._running = version
            result = self._rate(version, state)
            with self._lock:
                self._finished.append(result)
                self._running = None

    def _lower_priority(self):
        """nice 19 for this thread (Linux nice values are per thread: the thread answering submit and poll keeps its
        priority) and one torch thread (the games' tensors are tiny)."""
        import torch
        os.nice(RATER_NICENESS)
        torch.set_num_threads(1)
        self._niceness = os.getpriority(os.PRIO_PROCESS, 0)

    def _rate(self, version: int, state) -> dict:
        try:
            module = self.module_factory()
            module.set_state(state)
            return self.rater.rate(version, module, self.games, self.time_limit_s, SEED_STRIDE * version,
                                   on_step=CpuThrottle(self.cpu_share))
        except Exception as e:  # reported through poll: a failed rating must not stop training
            logger.exception("TrueSkill rating of version %s failed", version)
            return {"version": version, "error": f"{type(e).__name__}: {e}"}


# num_cpus=0: the actor reserves no CPU slot, its games run at nice 19 in the CPU training leaves idle
TrueSkillRaterActor = ray.remote(num_cpus=0)(BackgroundRater)


# ---- the callback ----------------------------------------------------------------------------------------------------
def trueskill_settings(algorithm) -> TrueSkillSettings | None:
    """The settings, or None when the rating is off."""
    ts = run_settings(algorithm.config).trueskill
    return ts if ts.every > 0 else None


def summary(result: dict) -> dict:
    """What lands in the training result."""
    return {"version": result["version"], "mu": result["mu"], "sigma": result["sigma"], "games": result["games"],
            "win_rate": result["wins"] / result["games"] if result["games"] else 0.0}


def append_csv(path: str, results: list) -> None:
    append_csv_rows(path, CSV_COLUMNS, [{**{k: r[k] for k in CSV_COLUMNS if k in r}, "iteration": r["version"],
                                         "trueskill_mu": r["mu"]} for r in results])


def last_rated_mu(path: str) -> float | None:
    """The mu of the last version in a run's trueskill.csv (a resumed run's next version starts there), or None."""
    rows = read_csv_rows(path)
    return float(rows[-1]["mu"]) if rows else None


def kill_at_exit(actor):
    """Kills the actor while Ray is still up. At interpreter exit Ray may be down already: the actor is gone with it
    then, and ray.kill would start a new local Ray instance only to kill nothing."""
    if not ray.is_initialized():
        return
    try:
        ray.kill(actor)
    except Exception:  # the actor's worker died, or Ray is shutting down under us
        pass


class TrueSkillCallback(TrialFilesCallback):
    """Every `every` iterations, sends the current "main" weights to the TrueSkill actor; reports what it finished."""

    CSV_FILES = (CSV_NAME,)  # its "iteration" is the rated version: a resume drops the versions after the checkpoint

    def __init__(self):
        super().__init__()
        self.results = []  # every finished result, oldest first
        self._spec = None  # the rated module's spec (None: the rating is off)
        self._actor = None  # started with the first version to rate
        self._poll_ref = None  # the poll in flight

    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        cfg = trueskill_settings(algorithm)
        if cfg is None:
            return
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        reference_ratings(cfg.references)  # fail here, not in the actor, when a reference is unrated
        references_outcome_rule(cfg.references, cfg.time_limit_outcome)  # or rated under another rule
        self._spec = RLModuleSpec.from_module(algorithm.get_module(MAIN))

    def _start_actor(self, algorithm):
        """The rating actor, started with the first version to rate: a resumed run's trueskill.csv has been trimmed to
        its checkpoint by then (the resume rule, callbacks/trial_files.py), and its last rated mu is where the next
        version starts."""
        cfg = trueskill_settings(algorithm)
        self._actor = actor = TrueSkillRaterActor.remote(
            cfg.references, self._spec.build, games=cfg.games, time_limit_s=cfg.time_limit_s,
            cpu_share=cfg.cpu_share, start_mu=last_rated_mu(self.trial_path(algorithm, CSV_NAME)),
            explore=cfg.explore, time_limit_outcome=cfg.time_limit_outcome, env=rated_game_rules(algorithm))
        # RLlib has no "algorithm stopped" callback: kill the actor when this process exits, before its game thread
        # would be torn down mid-game by the interpreter's shutdown (which aborts noisily inside torch)
        atexit.register(kill_at_exit, actor)

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        """A resumed run: trueskill.csv loses the versions rated after the checkpoint; the version of the restored
        iteration is rated now if it is due and not rated yet (the stopped run's actor died with it, and with it any
        version it had not finished)."""
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        if self._spec is None:
            return
        it = algorithm.iteration
        rated = {int(r["version"]) for r in read_csv_rows(self.trial_path(algorithm, CSV_NAME))}
        if it > 0 and it % trueskill_settings(algorithm).every == 0 and it not in rated:
            self._submit(algorithm)

    def _submit(self, algorithm):
        if self._actor is None:
            self._start_actor(algorithm)
        state = algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        self._actor.submit.remote(algorithm.iteration, state)  # fire and forget

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        if self._spec is None:
            return
        if algorithm.iteration % trueskill_settings(algorithm).every == 0:
            self._submit(algorithm)
        if self._actor is None:
            return
        finished = self._poll()
        for r in [r for r in finished if "error" in r]:
            logger.warning("TrueSkill rating of version %s failed: %s", r["version"], r["error"])
        finished = [r for r in finished if "error" not in r]
        if finished:
            self.results.extend(finished)
            append_csv(self.trial_path(algorithm, CSV_NAME), finished)
            result["trueskill"] = summary(finished[-1])

    def _poll(self) -> list:
        """The results the actor finished, waiting at most POLL_WAIT_S for its answer (a late one is read later)."""
        if self._poll_ref is None:
            self._poll_ref = self._actor.poll.remote()
        ready, _ = ray.wait([self._poll_ref], timeout=POLL_WAIT_S)
        if not ready:
            return []
        out, self._poll_ref = ray.get(self._poll_ref), None
        return out
