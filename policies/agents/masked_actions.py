"""An agent (policies/agents/by_name.py protocol) that plays another with some primary actions taken out of its
action mask: what the agent does without them. ``python -m app.evaluate --mask-actions item_healing_salve,...``
plays a checkpoint or a scripted agent so (docs/results.md, "Where the scratch agents' gold goes").

Every observation the wrapped agent sees has ``action_mask[p] = 0`` for the blocked primary actions ``p``; the rest of
the observation is the game's. A checkpoint's network masks its logits with that mask, the scripted bot picks among
the legal actions, so neither ever chooses a blocked action. ``noop`` cannot be blocked: it is what is left when every
other action is illegal. Other attributes (a ModuleAgent's ``decisions`` for replays) are the wrapped agent's."""
from __future__ import annotations

import numpy as np

from moba.env.actions import NOOP_ACTION, PRIMARY_NAMES

NOOP = NOOP_ACTION["primary"]


def blocked_primary(names) -> tuple[int, ...]:
    """The primary action indices of `names` (names of moba.env.actions.PRIMARY_NAMES, e.g. "item_clarity"); an
    unknown name, or noop, is a ValueError naming the allowed ones."""
    allowed = [n for i, n in enumerate(PRIMARY_NAMES) if i != NOOP]
    bad = [n for n in names if n not in allowed]
    if bad:
        raise ValueError(f"unknown or unmaskable primary action(s) {bad}: allowed {allowed}")
    if not names:
        raise ValueError(f"name at least one primary action of {allowed}")
    return tuple(sorted({PRIMARY_NAMES.index(n) for n in names}))


class MaskedActions:
    """Plays `agent` with the primary actions `blocked` (indices, blocked_primary) masked out of every observation."""

    def __init__(self, agent, blocked):
        if NOOP in blocked:
            raise ValueError("MaskedActions: noop cannot be blocked")
        self.agent = agent
        self.blocked = np.asarray(blocked, dtype=np.int64)

    def __getattr__(self, name):
        # called only for attributes this wrapper lacks: the wrapped agent's (decisions, dist, state, ...)
        if name == "agent":
            raise AttributeError(name)
        return getattr(self.agent, name)

    def reset(self, agent_ids=None):
        self.agent.reset(agent_ids)

    def act(self, observations: dict) -> dict:
        masked = {}
        for a, obs in observations.items():
            mask = np.array(obs["action_mask"], copy=True)
            mask[self.blocked] = 0
            masked[a] = {**obs, "action_mask": mask}
        return self.agent.act(masked)
