"""The RLlib callbacks of a training run. They sit above ``training/``: they read the run's settings from the
algorithm's config and call the training package's libraries (run storage, opponents, league play), and the
training wiring (``training.algorithm.build_algo_config``) takes them as an argument."""
from __future__ import annotations

from ray.rllib.callbacks.callbacks import RLlibCallback


class RunCallback(RLlibCallback):
    """A callback of a training run that holds state of its own on the driver (the league's pool, the curriculum, the
    schedules' values): ``of(algorithm)`` finds the algorithm's instance, for the other callbacks and for tests."""

    @classmethod
    def of(cls, algorithm):
        """The algorithm's instance of this callback class (the one on the driver)."""
        return next(c for c in algorithm.callbacks if isinstance(c, cls))


def run_callbacks() -> list:
    """The callback classes of a training run, in the order RLlib calls them."""
    from callbacks.episode_memory import CompactEpisodeChunks
    from callbacks.evaluation import EvaluationCallback
    from callbacks.init_weights import InitWeightsCallback, RestoreCallback
    from callbacks.league_play import LeagueCallback
    from callbacks.metrics import GameMetricsCallback
    from callbacks.opponents import OpponentsCallback
    from callbacks.reward_scale import RewardScaleCallback
    from callbacks.schedules import ScheduleCallback
    from callbacks.trueskill_rating import TrueSkillCallback
    from callbacks.value_warmup import ValueWarmupCallback
    # RewardScaleCallback before the callbacks that copy the weights after an iteration (the league's snapshots,
    # TrueSkill's versions): its value-head rescale is part of the iteration's weights. ValueWarmupCallback after
    # RestoreCallback: it counts the iterations from the restored one
    return [InitWeightsCallback, ScheduleCallback, GameMetricsCallback, RewardScaleCallback, EvaluationCallback,
            LeagueCallback, OpponentsCallback, TrueSkillCallback, CompactEpisodeChunks, RestoreCallback,
            ValueWarmupCallback]
