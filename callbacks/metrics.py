"""Episode metrics: who won, how long the game lasted, the raw (pre-post-processing) return of each team; and per
iteration the sample reuse of seeds/003 app. M, eq. 13: samples optimized over samples generated ("main" only)."""
from __future__ import annotations

from ray.rllib.callbacks.callbacks import RLlibCallback


class GameMetricsCallback(RLlibCallback):
    def on_episode_step(self, *, episode, **kwargs):
        infos = episode.get_infos(-1)
        raw = episode.custom_data.setdefault("raw_return", {"radiant": 0.0, "dire": 0.0})
        for aid, info in infos.items():
            if "raw_reward" in info:
                raw["radiant" if aid.startswith("radiant") else "dire"] += info["raw_reward"]
            if "winner" in info:
                episode.custom_data["winner"] = info["winner"]
                episode.custom_data["game_time_s"] = info["game_time_s"]

    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        winner = episode.custom_data.get("winner", "none")
        for name in ("radiant", "dire", "none"):
            metrics_logger.log_value(f"win_rate_{name}", float(winner == name), reduce="mean", window=100)
        if "game_time_s" in episode.custom_data:
            metrics_logger.log_value("game_time_s", episode.custom_data["game_time_s"], reduce="mean", window=100)
        raw = episode.custom_data.get("raw_return", {})
        for team, v in raw.items():
            metrics_logger.log_value(f"raw_return_{team}", v, reduce="mean", window=100)

    def on_train_result(self, *, algorithm, result, **kwargs):
        trained = result.get("learners", {}).get("main", {}).get("samples_optimized")
        sampled = result.get("env_runners", {}).get("num_module_steps_sampled", {})
        sampled = sampled.get("main") if isinstance(sampled, dict) else None
        if trained and sampled:
            result["sample_reuse"] = trained / sampled
