"""The learner connector of the win-probability label of the auxiliary head (Five app. D, eq. 10).

For a segment (an episode chunk) from t1 to t2 the label of every step is 1 or 0 if the segment is the game's last
and the hero's team won or lost, otherwise the model's own predicted win probability at the end of the segment
(stored by the env runners as the extra model output ``win_prob``). A game cut by the time limit has no winner: its
last segment is labelled 0.5.
"""
from __future__ import annotations

import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.utils.annotations import override

from moba.game.teams import TEAM_NAMES, side_of_agent
from policies.model.five_module import WIN_PROB

WIN_LABEL = "aux_win_label"
DRAW_LABEL = 0.5


def segment_label(agent_id: str, terminated: bool, truncated: bool, winner: str | None,
                  last_prediction: float) -> float:
    if terminated or (truncated and winner is not None):
        if winner in TEAM_NAMES:
            return 1.0 if side_of_agent(agent_id) == winner else 0.0
        return DRAW_LABEL
    return float(last_prediction)


def episode_win_predictions(sa_ep) -> np.ndarray:
    """The win probability the module predicted at each step of a single-agent episode chunk while acting (float32,
    one per step; empty where the env runner did not record them)."""
    return np.asarray(sa_ep.get_extra_model_outputs(WIN_PROB), np.float32).reshape(-1)


def episode_label(sa_ep, preds: np.ndarray) -> float:
    """The win label of every step of a single-agent episode chunk (segment_label), given its predictions."""
    winner = sa_ep.get_infos(-1).get("winner") if sa_ep.is_done else None
    last = float(preds[-1]) if len(preds) else DRAW_LABEL
    return segment_label(str(sa_ep.agent_id), sa_ep.is_terminated, sa_ep.is_truncated, winner, last)


class AddWinLabel(ConnectorV2):
    """Adds the column WIN_LABEL to the learner's batch (before RLlib's own connectors pad and split it)."""

    @override(ConnectorV2)
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for sa_ep in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            n = len(sa_ep)
            if n == 0:
                continue
            label = episode_label(sa_ep, episode_win_predictions(sa_ep))
            self.add_n_batch_items(batch, WIN_LABEL, items_to_add=np.full(n, label, np.float32), num_items=n,
                                   single_agent_episode=sa_ep)
        return batch
