"""The learner connector that numbers each team's steps, so that the module groups a 5v5 batch's rows by number.

The learner's forward pass encodes the inputs a team's five heroes share once per team and step (policies/model/
five_module.py). Without help it finds those rows by their inputs: a random projection of every row, then an exact
comparison of every row with its group's first, at every minibatch of every epoch, 13.7% and 3.0% of the forward
pass in a 5v5 run (docs/performance.md, 2026-12-07). The rows of one team at one step of one game are known before the
batch is cut into sequences: ``AddTeamStep`` writes the column ``TEAM_STEP``, the same number for the heroes of a
side at one step of one game chunk and a different number for every other (side, step, chunk), and the module
groups the rows by it (``FiveRLModule.step_groups``). The numbers are unique within one learner batch (the
connector counts the batch's chunks of sides); zero-padded steps hold 0, one group of all-zero rows.
"""
from __future__ import annotations

import numpy as np
from ray.rllib.utils.annotations import override

from moba.game.teams import side_of_agent
from policies.learning.episode_columns import EpisodeColumns
from policies.model.five_module import TEAM_STEP

STEP_BITS = 32  # a number's low bits hold the step (t), its high bits the side's chunk, counted from 1


class AddTeamStep(EpisodeColumns):
    """Adds the column TEAM_STEP (int64): (side's chunk number << STEP_BITS) + the step, the chunks of sides
    (``multi_agent_episode_id``, the agent's side) numbered from 1 in the order the batch's episodes come."""

    @override(EpisodeColumns)
    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        self._sides = {}  # (multi_agent_episode_id, side) -> its number, for this batch
        return super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                                shared_data=shared_data, **kwargs)

    @override(EpisodeColumns)
    def columns(self, sa_ep) -> dict[str, np.ndarray]:
        key = (sa_ep.multi_agent_episode_id, side_of_agent(sa_ep.agent_id))
        number = self._sides.setdefault(key, len(self._sides) + 1)
        steps = np.arange(sa_ep.t_started, sa_ep.t_started + len(sa_ep), dtype=np.int64)
        return {TEAM_STEP: (np.int64(number) << STEP_BITS) + steps}
