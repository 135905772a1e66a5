"""The RLModule ids of a training run: "main", the learning agent, and the league's opponent slots (frozen past
versions, callbacks/league_play.py), and where an algorithm checkpoint keeps a module."""
from __future__ import annotations

import os

MAIN = "main"  # the module that learns; it plays both teams in self-play
SLOT_PREFIX = "league_slot_"  # opponent slot j is the module f"{SLOT_PREFIX}{j}"


def slot_module_ids(slots: int) -> list[str]:
    return [f"{SLOT_PREFIX}{j}" for j in range(slots)]


def module_checkpoint_dir(checkpoint: str, module_id: str = MAIN) -> str:
    """Where an algorithm checkpoint keeps a module's own checkpoint (loadable by RLModule.from_checkpoint)."""
    return os.path.join(checkpoint, "learner_group", "learner", "rl_module", module_id)
