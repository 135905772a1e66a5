"""The ladder of reference agents (issue 17): from the random agent to the full scripted bot, each level the scripted
bot (``policies/scripted.py``) under a named ``Handicap``. Each level beats the one below it in at least
``LADDER_TARGET_WIN_RATE`` of evaluation games in both modes (``python scripts/win_rate.py --ladder`` measures it;
the README has the table), so that the reference pools rated with the whole ladder
(``tune_configs/references_*.json``) give TrueSkill curves steps that can be seen.
"""
from __future__ import annotations

from policies.scripted import FULL_BOT, Handicap

RANDOM_LEVEL = "random"  # the ladder's floor: uniformly random legal actions (the TrueSkill anchor, mu = 0)
LADDER_HANDICAPS = {
    # scripted_2's handicaps, and slow (a decision every 8 agent steps, ~1 s), one last hit in four, and it fights
    # on down to 10% health
    "scripted_1": Handicap(reaction_steps=7, abilities=False, items=False, last_hits=0.25, retreat_hp=0.1),
    # casts no ability and uses no item; otherwise the full bot
    "scripted_2": Handicap(abilities=False, items=False),
    "scripted_3": FULL_BOT,  # the full bot, also known as "scripted"
}
LADDER = (RANDOM_LEVEL, *LADDER_HANDICAPS)  # weakest first
LADDER_TARGET_WIN_RATE = 0.75  # each level wins at least this share of its games against the level below


def ladder_pairs() -> list[tuple[str, str]]:
    """(level, the level below it) for each step of the ladder, weakest first."""
    return list(zip(LADDER[1:], LADDER[:-1]))
