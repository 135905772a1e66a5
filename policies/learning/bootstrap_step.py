"""The bootstrap step: RLlib's ``AddOneTsToEpisodesAndTruncate`` with its per-step columns written as arrays.

PPO's learner pipeline starts by extending every episode chunk by one artificial step (its last observation, action,
info and model outputs repeated, reward 0), so that the value of the observation after the chunk can be computed;
the step is kept out of the loss by ``LOSS_MASK``, and ``TERMINATEDS`` / ``TRUNCATEDS`` mark the chunk's last real
step. RLlib writes those three columns one Python item per step (``ConnectorV2.add_batch_item``: 3 calls per agent
step, 100,000 for a 32,000-row top-rung batch) and repeats each last entry through dm-tree and the lookback buffer's
indexing. Profiled on that batch it was a third of the learner connector's time (docs/performance.md).
``FastBootstrapStep`` gives the same episodes and the same batch (tests/test_five_learner.py compares the learner's
pipeline with either on sampled episodes, tests/test_bootstrap_step.py on the classic runner's multi-agent episodes):
each column is one boolean array per chunk, and a finalized buffer's last entry is repeated by one concatenation per
leaf. FivePPOLearner.build puts it in the place of RLlib's connector.
"""
from __future__ import annotations

import numpy as np
import tree
from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.annotations import override
from ray.rllib.utils.postprocessing.episodes import add_one_ts_to_episodes_and_truncate


def _repeat_last(buffer):
    """Appends a copy of the buffer's last entry, as ``InfiniteLookbackBuffer.append(buffer[-1])`` does, by one
    concatenation per leaf when the buffer is finalized into arrays (its other forms go through its own API)."""
    if buffer.finalized and isinstance(buffer.data, (np.ndarray, dict)):
        buffer.data = tree.map_structure(lambda d: np.concatenate([d, d[-1:]], axis=0), buffer.data)
    else:
        buffer.append(buffer[-1])


def add_bootstrap_step(episode):
    """``add_one_ts_to_episodes_and_truncate`` for one single-agent episode chunk (same result)."""
    if not (episode.observations.finalized and episode.actions.finalized and episode.rewards.finalized):
        add_one_ts_to_episodes_and_truncate([episode])
        return
    episode.t += 1
    _repeat_last(episode.observations)
    episode.infos.append(episode.infos[-1])
    _repeat_last(episode.actions)
    episode.rewards.append(0.0)
    for buffer in episode.extra_model_outputs.values():
        _repeat_last(buffer)
    if not episode.is_done:
        episode.is_truncated = True
    episode.validate()


def last_step_flags(length: int, flag: bool) -> np.ndarray:
    """A chunk's column of ``length`` real steps and the bootstrap step: False, then `flag` at the last real step."""
    out = np.zeros(length + 1, bool)
    out[length - 1] = flag
    return out


class FastBootstrapStep(AddOneTsToEpisodesAndTruncate):
    """AddOneTsToEpisodesAndTruncate (RLlib 2.60), its columns as arrays and its repeated step by concatenation."""

    @override(AddOneTsToEpisodesAndTruncate)
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        if isinstance(episodes[0], MultiAgentEpisode):  # each chunk its own episode id, as RLlib's connector
            for i, ma_episode in enumerate(episodes):
                ma_episode.id_ += "_" + str(i)
                for sa_episode in ma_episode.agent_episodes.values():
                    sa_episode.multi_agent_episode_id = ma_episode.id_
        for i, sa_episode in enumerate(self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False)):
            sa_episode.id_ += "_" + str(i)
            length = len(sa_episode)
            add_bootstrap_step(sa_episode)
            mask = np.ones(length + 1, bool)
            mask[length] = False
            for column, data in ((Columns.LOSS_MASK, mask),
                                 (Columns.TERMINATEDS, last_step_flags(length, bool(sa_episode.is_terminated))),
                                 (Columns.TRUNCATEDS, last_step_flags(length, bool(sa_episode.is_truncated)))):
                self.add_n_batch_items(batch, column, data, length + 1, sa_episode)
        shared_data["_added_loss_mask_for_valid_episode_ts"] = True
        return batch
