"""Episode metrics: who won, how long the game lasted, the raw (pre-post-processing) return of each team; per
iteration the reward earned per hero and game minute from each raw signal of Table 6 (what the policy is learning to
do: stay in lane, last-hit, not die, take towers), and the sample reuse of seeds/003 app. M, eq. 13: samples
optimized over samples generated ("main" only)."""
from __future__ import annotations

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.annotations import override

from app.env.rewards import SIGNALS
from app.game.teams import NO_WINNER, TEAM_NAMES, WINNER_NAMES, side_of_agent
from policies.five_learner import SAMPLES_OPTIMIZED
from policies.module_ids import MAIN

SIGNAL_KEY = "signal_reward"  # env_runners/signal_reward/<signal>: weighted reward summed over heroes and steps
HERO_SECONDS_KEY = "hero_game_seconds"  # env_runners/hero_game_seconds: the hero-seconds those sums cover
RAW_RETURN_KEY = "raw_return"  # episode.custom_data: {side: the team's raw return so far}


def signal_rates(env_runner_results: dict) -> dict:
    """Reward per hero per game minute from each signal, from an iteration's env-runner results ({} when none)."""
    sums = env_runner_results.get(SIGNAL_KEY) or {}
    hero_minutes = (env_runner_results.get(HERO_SECONDS_KEY) or 0.0) / 60.0
    if hero_minutes <= 0.0:
        return {}
    return {name: float(sums[name]) / hero_minutes for name in SIGNALS if name in sums}


class GameMetricsCallback(RLlibCallback):
    def __init__(self):
        super().__init__()
        self._signal_sums = np.zeros(len(SIGNALS))
        self._hero_seconds = 0.0

    @override(RLlibCallback)
    def on_episode_step(self, *, episode, **kwargs):
        infos = episode.get_infos(-1)
        raw = episode.custom_data.setdefault(RAW_RETURN_KEY, {side: 0.0 for side in TEAM_NAMES})
        heroes, game_time = 0, None
        for aid, info in infos.items():
            if "raw_reward" in info:
                raw[side_of_agent(aid)] += info["raw_reward"]
            if "reward_signals" in info:
                rs = info["reward_signals"]  # by name: a remote game may send them in another order
                self._signal_sums += [rs.get(name, 0.0) for name in SIGNALS]
                heroes += 1
                game_time = info["game_time_s"]
            if "winner" in info:
                episode.custom_data["winner"] = info["winner"]
                episode.custom_data["game_time_s"] = info["game_time_s"]
        if game_time is not None:
            self._hero_seconds += heroes * (game_time - episode.custom_data.get("last_game_time_s", 0.0))
            episode.custom_data["last_game_time_s"] = game_time

    @override(RLlibCallback)
    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        winner = episode.custom_data.get("winner", NO_WINNER)
        for name in WINNER_NAMES:
            metrics_logger.log_value(f"win_rate_{name}", float(winner == name), reduce="mean", window=100)
        if "game_time_s" in episode.custom_data:
            metrics_logger.log_value("game_time_s", episode.custom_data["game_time_s"], reduce="mean", window=100)
        raw = episode.custom_data.get(RAW_RETURN_KEY, {})
        for team, v in raw.items():
            metrics_logger.log_value(f"raw_return_{team}", v, reduce="mean", window=100)

    @override(RLlibCallback)
    def on_sample_end(self, *, metrics_logger=None, **kwargs):
        if metrics_logger is None or self._hero_seconds <= 0.0:
            return
        for name, v in zip(SIGNALS, self._signal_sums):
            metrics_logger.log_value((SIGNAL_KEY, name), float(v), reduce="sum")
        metrics_logger.log_value(HERO_SECONDS_KEY, self._hero_seconds, reduce="sum")
        self._signal_sums[:] = 0.0
        self._hero_seconds = 0.0

    @override(RLlibCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        trained = result.get("learners", {}).get(MAIN, {}).get(SAMPLES_OPTIMIZED)
        sampled = result.get("env_runners", {}).get("num_module_steps_sampled", {})
        sampled = sampled.get(MAIN) if isinstance(sampled, dict) else None
        if trained and sampled:
            result["sample_reuse"] = trained / sampled
