"""callbacks/episode_memory.py: the chunks an env runner keeps for episode metrics become summaries with the same
returns, lengths and module ids."""
from __future__ import annotations

from collections import defaultdict

import pytest
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from moba.env.moba_env import MobaEnv
from policies.agents.scripted import RandomAgent
from callbacks.episode_memory import EpisodeChunkSummary, compact_returned_chunks


def played_chunk(steps=12):
    env = MobaEnv({"mode": "1v1", "evaluation": True})
    eps = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces,
                            agent_to_module_mapping_fn=lambda aid, e: "main" if aid.startswith("radiant") else "opp")
    agent = RandomAgent(0)
    obs, infos = env.reset(seed=0)
    eps.add_env_reset(observations=obs, infos=infos)
    for _ in range(steps):
        actions = agent.act(obs)
        obs, rewards, term, trunc, infos = env.step(actions)
        eps.add_env_step(observations=obs, actions=actions, rewards={a: r + 0.5 for a, r in rewards.items()},
                         infos=infos, terminateds=term, truncateds=trunc)
    return eps


class Runner:
    def __init__(self, chunks):
        self._ongoing_episodes_for_metrics = defaultdict(list)
        for c in chunks:
            self._ongoing_episodes_for_metrics[c.id_].append(c)


def test_kept_chunks_become_summaries_with_the_same_metrics():
    a, b = played_chunk(12), played_chunk(7)
    runner = Runner([a, b])
    assert compact_returned_chunks(runner) == 2
    assert compact_returned_chunks(runner) == 0  # already compact
    for original in (a, b):
        (s,) = runner._ongoing_episodes_for_metrics[original.id_]
        assert isinstance(s, EpisodeChunkSummary) and s.id_ == original.id_
        assert len(s) == len(original) and s.get_return() == pytest.approx(original.get_return())
        assert s.get_return() != 0.0
        assert s.get_duration_s() == original.get_duration_s()
        assert {aid: (x.module_id, len(x), x.get_return()) for aid, x in s.agent_episodes.items()} == {
            aid: (x.module_id, len(x), pytest.approx(x.get_return())) for aid, x in original.agent_episodes.items()}
    assert {x.module_id for x in runner._ongoing_episodes_for_metrics[a.id_][0].agent_episodes.values()} == {
        "main", "opp"}
