"""Episode metrics: who won, how long the game lasted, the raw (pre-post-processing) return of each team; per
iteration the reward earned per hero and game minute from each raw signal of Table 6 (what the policy is learning to
do: stay in lane, last-hit, not die, take towers), and the sample reuse of Five app. M, eq. 13: samples
optimized over samples generated ("main" only).

The accounting is ``GameTally``: the callback feeds it from RLlib's episodes (the classic env runner), the batched
env runner (training/batched_env_runner.py) feeds it from its own games; both log the same keys.
"""

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

