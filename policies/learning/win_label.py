"""The learner connector of the win-probability label of the auxiliary head (Five app. D, eq. 10).

For a segment (an episode chunk) from t1 to t2 the label of every step is 1 or 0 if the segment is the game's last
and the hero's team won or lost, otherwise the model's own predicted win probability at the end of the segment
(stored by the env runners as the extra model output ``win_prob``). A game cut by the time limit is decided by the
run's rule for capped games (``opponents.time_limit_outcome``, policies/league/ratings.py): under "objective" the team
ahead on the objective (buildings, then hero kills; the env's last ``objective`` info) won it, and its last segment is
labelled 1 or 0; under "draw" and "points" (the raw returns are not the game's outcome), and for a game even on the
objective, it is labelled 0.5. Under "draw" alone the head would see no outcome in a mode whose training games all
end at the time limit (every 300 s 5v5 game): a constant 0.5 is then every label, and the head learnt nothing
(weights of norm 0.004 in the shipped 5v5 agent; docs/results.md).
"""
from __future__ import annotations

import numpy as np
from ray.rllib.utils.annotations import override

from moba.game.teams import TEAM_NAMES, side_of_agent
from policies.league.ratings import LIMIT_DRAW, LIMIT_OBJECTIVE, check_time_limit_outcome, game_score, objective_margin
from policies.learning.episode_columns import EpisodeColumns
from policies.model.five_module import WIN_PROB

WIN_LABEL = "aux_win_label"
DRAW_LABEL = 0.5


def segment_label(agent_id: str, terminated: bool, truncated: bool, winner: str | None,
                  last_prediction: float, objective: dict | None = None,
                  time_limit_outcome: str = LIMIT_DRAW) -> float:
    """The label of a segment's steps (module docstring); `objective` is the game's last ``objective`` info, read
    for a capped game under the "objective" rule."""
    if terminated or (truncated and winner is not None):
        side = side_of_agent(agent_id)
        if winner in TEAM_NAMES:
            return 1.0 if side == winner else 0.0
        if time_limit_outcome == LIMIT_OBJECTIVE and objective is not None:
            return game_score(side, winner, 0.0, LIMIT_OBJECTIVE, objective_margin(side, objective))
        return DRAW_LABEL
    return float(last_prediction)


def episode_win_predictions(sa_ep) -> np.ndarray:
    """The win probability the module predicted at each step of a single-agent episode chunk while acting (float32,
    one per step; empty where the env runner did not record them)."""
    return np.asarray(sa_ep.get_extra_model_outputs(WIN_PROB), np.float32).reshape(-1)


def episode_label(sa_ep, preds: np.ndarray, time_limit_outcome: str = LIMIT_DRAW) -> float:
    """The win label of every step of a single-agent episode chunk (segment_label), given its predictions."""
    info = sa_ep.get_infos(-1) if sa_ep.is_done else {}
    last = float(preds[-1]) if len(preds) else DRAW_LABEL
    return segment_label(str(sa_ep.agent_id), sa_ep.is_terminated, sa_ep.is_truncated, info.get("winner"), last,
                         info.get("objective"), time_limit_outcome)


class AddWinLabel(EpisodeColumns):
    """Adds the column WIN_LABEL to the learner's batch (before RLlib's own connectors pad and split it), capped
    games decided by `time_limit_outcome` (the run's opponents.time_limit_outcome)."""

    def __init__(self, *args, time_limit_outcome: str = LIMIT_DRAW, **kwargs):
        super().__init__(*args, **kwargs)
        self.time_limit_outcome = check_time_limit_outcome(time_limit_outcome)

    @override(EpisodeColumns)
    def columns(self, sa_ep) -> dict[str, np.ndarray]:
        label = episode_label(sa_ep, episode_win_predictions(sa_ep), self.time_limit_outcome)
        return {WIN_LABEL: np.full(len(sa_ep), label, np.float32)}
