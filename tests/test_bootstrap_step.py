"""policies/learning/bootstrap_step.py: RLlib's bootstrap-step connector's batch and episodes, from arrays.

The learner pipeline's comparison on sampled episodes of the batched runner is in tests/test_five_learner.py; here
the multi-agent episodes of RLlib's classic runner, finalized into arrays and not, terminated and cut."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import tree
from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from policies.learning.bootstrap_step import FastBootstrapStep, last_step_flags


def multi_agent_episode(rng, steps: int, terminated: bool, finalize: bool) -> MultiAgentEpisode:
    agents = ("a0", "a1")
    obs = [{a: {"x": rng.normal(size=3).astype(np.float32), "t": np.int64(i)} for a in agents}
           for i in range(steps + 1)]
    episode = MultiAgentEpisode(
        observations=obs, actions=[{a: np.int64((i + j) % 3) for j, a in enumerate(agents)} for i in range(steps)],
        rewards=[{a: float(i * (j + 1)) for j, a in enumerate(agents)} for i in range(steps)],
        extra_model_outputs=[{a: {"vf_preds": np.float32(i - j)} for j, a in enumerate(agents)}
                             for i in range(steps)],
        terminateds={"__all__": terminated, **{a: terminated for a in agents}},
        agent_to_module_mapping_fn=lambda agent, episode: "main", len_lookback_buffer=0)
    return episode.to_numpy() if finalize else episode


def run(connector, episodes):
    episodes = copy.deepcopy(episodes)
    shared = {}
    batch = connector(rl_module=None, batch={}, episodes=episodes, shared_data=shared)
    columns = {column: {key: np.concatenate([np.atleast_1d(np.asarray(item)) for item in items])
                        for key, items in by_key.items()} for column, by_key in batch.items()}
    states = [sa.get_state() for e in episodes for sa in e.agent_episodes.values()]
    return columns, states, [e.id_ for e in episodes], shared


@pytest.mark.parametrize("finalize", [True, False])
def test_multi_agent_episodes_get_rllibs_columns_and_bootstrap_step(finalize):
    rng = np.random.default_rng(0)
    episodes = [multi_agent_episode(rng, 5, False, finalize), multi_agent_episode(rng, 3, True, finalize)]
    want, want_states, want_ids, want_shared = run(AddOneTsToEpisodesAndTruncate(), episodes)
    got, got_states, got_ids, got_shared = run(FastBootstrapStep(), episodes)
    assert got_ids == want_ids and got_shared == want_shared == {"_added_loss_mask_for_valid_episode_ts": True}
    assert set(got) == set(want) == {"loss_mask", "terminateds", "truncateds"}
    for column in want:
        assert list(got[column]) == list(want[column]) and len(want[column]) == 4  # 2 episodes x 2 agents
        for key, data in want[column].items():
            assert got[column][key].dtype == data.dtype and np.array_equal(got[column][key], data), (column, key)
    for a, b in zip(got_states, want_states, strict=True):
        flat_a, flat_b = tree.flatten_with_path(a), tree.flatten_with_path(b)
        assert [p for p, _ in flat_a] == [p for p, _ in flat_b]
        for (path, x), (_, y) in zip(flat_a, flat_b):
            if isinstance(y, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y), path
            else:
                assert x == y, path
    # the cut episode: its last real step truncated, the terminated one's terminated; the bootstrap step neither
    cut = next(k for k in want["truncateds"] if want["truncateds"][k].any())
    assert want["truncateds"][cut].tolist() == [False] * 4 + [True, False]
    assert want["loss_mask"][cut].tolist() == [True] * 5 + [False]


def test_the_last_real_step_carries_the_flag():
    assert last_step_flags(3, True).tolist() == [False, False, True, False]
    assert last_step_flags(1, False).tolist() == [False, False]
