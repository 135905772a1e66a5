"""``ClassicEnvRunner``: RLlib's ``MultiAgentEnvRunner`` (``resources.env_runner: classic``: connectors and episodes
per agent and step), holding the run's matchups as the batched runner does (training/batched_env_runner.py), so that
league play draws its past versions the same way (callbacks/league_play.py ``on_episode_created``)."""
from __future__ import annotations

from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.utils.annotations import override

from training.opponents import RunnerMatchups


class ClassicEnvRunner(MultiAgentEnvRunner):
    """RLlib's MultiAgentEnvRunner with ``matchups`` (training/opponents.RunnerMatchups)."""

    @override(MultiAgentEnvRunner)
    def __init__(self, config, **kwargs):
        self.matchups = RunnerMatchups.for_runner(config, kwargs.get("worker_index"))
        super().__init__(config=config, **kwargs)
