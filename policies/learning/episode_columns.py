"""A learner connector that adds per-step columns computed from each single-agent episode chunk (the win label,
self-imitation's returns), before RLlib's own connectors pad and split the batch."""
from __future__ import annotations

import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.utils.annotations import override


class EpisodeColumns(ConnectorV2):
    """Adds ``columns(sa_ep)`` (column name -> one value per step of the chunk) for every non-empty chunk."""

    def columns(self, sa_ep) -> dict[str, np.ndarray]:
        raise NotImplementedError

    @override(ConnectorV2)
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for sa_ep in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(sa_ep)
            if n == 0:
                continue
            for key, values in self.columns(sa_ep).items():
                self.add_n_batch_items(batch, key, items_to_add=values, num_items=n, single_agent_episode=sa_ep)
        return batch
