"""The game metrics of the classic env runner: ``GameTally`` (training/game_metrics.py) fed from RLlib's episodes, and
the sample reuse (Five app. M, eq. 13) in every iteration's result. The batched env runner feeds its own tally."""
from __future__ import annotations

from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.annotations import override

from training.game_metrics import GameTally, sample_reuse


class GameMetricsCallback(RLlibCallback):
    """GameTally over RLlib's episodes (the game's record is the episode's custom_data), and the sample reuse."""

    def __init__(self):
        super().__init__()
        self.tally = GameTally()

    @override(RLlibCallback)
    def on_episode_step(self, *, episode, **kwargs):
        self.tally.add_step(episode.get_infos(-1), episode.custom_data)

    @override(RLlibCallback)
    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        GameTally.log_game_end(episode.custom_data, metrics_logger)

    @override(RLlibCallback)
    def on_sample_end(self, *, metrics_logger=None, **kwargs):
        self.tally.log_sample(metrics_logger)

    @override(RLlibCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        reuse = sample_reuse(result)
        if reuse is not None:
            result["sample_reuse"] = reuse

