"""The RLlib callbacks of a training run. They sit above ``training/``: they read the run's settings from the
algorithm's config and call the training package's libraries (run storage, opponents, league play), and the
training wiring (``training.algorithm.build_algo_config``) takes them as an argument."""
from __future__ import annotations


def run_callbacks() -> list:
    """The callback classes of a training run, in the order RLlib calls them."""
    from callbacks.episode_memory import CompactEpisodeChunks
    from callbacks.evaluation import EvaluationCallback
    from callbacks.init_weights import InitWeightsCallback, RestoreCallback
    from callbacks.league_play import LeagueCallback
    from callbacks.metrics import GameMetricsCallback
    from callbacks.opponents import OpponentsCallback
    from callbacks.schedules import ScheduleCallback
    from callbacks.trueskill_rating import TrueSkillCallback
    return [InitWeightsCallback, ScheduleCallback, GameMetricsCallback, EvaluationCallback, LeagueCallback,
            OpponentsCallback, TrueSkillCallback, CompactEpisodeChunks, RestoreCallback]
