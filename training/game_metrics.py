"""Game metrics of a run: who won, how long the game lasted, the raw (pre-post-processing) return of each team; per
iteration the reward earned per hero and game minute from each raw signal of Table 6 (what the policy is learning to
do: stay in lane, last-hit, not die, take towers), and the sample reuse of Five app. M, eq. 13: samples optimized over
samples generated ("main" only).

The accounting is ``GameTally``: the batched env runner (training/batched_env_runner.py) feeds it from its own games,
callbacks/metrics.py from RLlib's episodes (the classic env runner); both log the same keys."""
from __future__ import annotations

import numpy as np

from moba.env.moba_env import CUT_SHORT_INFO, LATE_START_INFO
from moba.env.rewards import SIGNALS
from moba.game.teams import NO_WINNER, TEAM_NAMES, WINNER_NAMES, side_of_agent
from policies.learning.five_learner import SAMPLES_OPTIMIZED
from policies.model.module_ids import MAIN


SIGNAL_KEY = "signal_reward"  # env_runners/signal_reward/<signal>: weighted reward summed over heroes and steps
HERO_SECONDS_KEY = "hero_game_seconds"  # env_runners/hero_game_seconds: the hero-seconds those sums cover
RAW_RETURN_KEY = "raw_return"  # a game's record: {side: the team's raw return so far}
WINNER_KEY, GAME_TIME_KEY, LAST_TIME_KEY = "winner", "game_time_s", "last_game_time_s"  # a game's record
OBJECTIVE_KEY = "objective"  # a game's record: {side: {"buildings", "kills"}} at its end (MobaEnv's final infos)
CUT_SHORT_KEY = CUT_SHORT_INFO  # a game's record: True when it ended at its first-game cut (not a result)
LATE_START_KEY = LATE_START_INFO  # a game's record: the side it started late around (the env's start_state)
METRICS_WINDOW = 100  # games the win rates, game times and raw returns are averaged over


def signal_rates(env_runner_results: dict) -> dict:
    """Reward per hero per game minute from each signal, from an iteration's env-runner results ({} when none)."""
    sums = env_runner_results.get(SIGNAL_KEY) or {}
    hero_minutes = (env_runner_results.get(HERO_SECONDS_KEY) or 0.0) / 60.0
    if hero_minutes <= 0.0:
        return {}
    return {name: float(sums[name]) / hero_minutes for name in SIGNALS if name in sums}


class GameTally:
    """One env runner's game metrics between two samples. ``add_step`` takes a game step's infos (by agent) and the
    game's record (a dict kept per game: raw returns by side, winner, game time), ``log_game_end`` logs a finished
    game, ``log_sample`` the per-signal sums of the sample."""

    def __init__(self):
        self.signal_sums = np.zeros(len(SIGNALS))
        self.hero_seconds = 0.0

    def add_step(self, infos: dict, record: dict) -> None:
        """A step's infos by agent (RLlib's episodes: callbacks/metrics.py)."""
        raw = record.setdefault(RAW_RETURN_KEY, {side: 0.0 for side in TEAM_NAMES})
        heroes, game_time = 0, None
        for aid, info in infos.items():
            if "raw_reward" in info:
                raw[side_of_agent(aid)] += info["raw_reward"]
            if "reward_signals" in info:
                rs = info["reward_signals"]  # by name: a remote game may send them in another order
                self.signal_sums += [rs.get(name, 0.0) for name in SIGNALS]
                heroes += 1
                game_time = info["game_time_s"]
            if WINNER_KEY in info:
                self._game_end(info, record)
        self._add_time(heroes, game_time, record)

    def add_step_arrays(self, step, record: dict, sides: list) -> None:
        """A step as arrays (moba/env/step_arrays.StepArrays, every hero's row; `sides`: each row's side), as
        ``add_step`` reads the same step's infos."""
        raw = record.setdefault(RAW_RETURN_KEY, {side: 0.0 for side in TEAM_NAMES})
        if step.raw is not None:
            for side, r in zip(sides, step.raw.tolist()):
                raw[side] += r
        self.signal_sums += step.signals.sum(axis=0)
        if step.last_infos is not None:
            self._game_end({**step.last_infos, "game_time_s": step.game_time_s}, record)
        self._add_time(len(sides), step.game_time_s, record)

    @staticmethod
    def _game_end(info: dict, record: dict) -> None:
        record[WINNER_KEY] = info[WINNER_KEY]
        record[GAME_TIME_KEY] = info["game_time_s"]
        if OBJECTIVE_KEY in info:
            record[OBJECTIVE_KEY] = info[OBJECTIVE_KEY]
        if info.get(CUT_SHORT_INFO):
            record[CUT_SHORT_KEY] = True
        if info.get(LATE_START_INFO):
            record[LATE_START_KEY] = info[LATE_START_INFO]

    def _add_time(self, heroes: int, game_time: float | None, record: dict) -> None:
        if game_time is not None:
            self.hero_seconds += heroes * (game_time - record.get(LAST_TIME_KEY, 0.0))
            record[LAST_TIME_KEY] = game_time

    @staticmethod
    def log_game_end(record: dict, metrics_logger) -> None:
        winner = record.get(WINNER_KEY, NO_WINNER)
        for name in WINNER_NAMES:
            metrics_logger.log_value(f"win_rate_{name}", float(winner == name), reduce="mean", window=METRICS_WINDOW)
        if GAME_TIME_KEY in record:
            metrics_logger.log_value(GAME_TIME_KEY, record[GAME_TIME_KEY], reduce="mean", window=METRICS_WINDOW)
        for side, v in record.get(RAW_RETURN_KEY, {}).items():
            metrics_logger.log_value(f"raw_return_{side}", v, reduce="mean", window=METRICS_WINDOW)

    def log_sample(self, metrics_logger) -> None:
        if metrics_logger is None or self.hero_seconds <= 0.0:
            return
        for name, v in zip(SIGNALS, self.signal_sums):
            metrics_logger.log_value((SIGNAL_KEY, name), float(v), reduce="sum")
        metrics_logger.log_value(HERO_SECONDS_KEY, self.hero_seconds, reduce="sum")
        self.signal_sums[:] = 0.0
        self.hero_seconds = 0.0


def sample_reuse(result: dict) -> float | None:
    """Eq. 13 for "main": samples optimized over samples generated in the iteration (None before any)."""
    trained = result.get("learners", {}).get(MAIN, {}).get(SAMPLES_OPTIMIZED)
    sampled = result.get("env_runners", {}).get("num_module_steps_sampled", {})
    sampled = sampled.get(MAIN) if isinstance(sampled, dict) else None
    return trained / sampled if trained and sampled else None

