"""The ladder of reference agents: from the random agent to the full scripted bot, each level the scripted
bot (``policies/agents/scripted.py``) under a named ``Handicap``. Each level beats the one below it in at least
``LADDER_TARGET_WIN_RATE`` of evaluation games in both modes (``python scripts/win_rate.py --ladder`` measures it;
docs/results.md has the table), so that the reference pools rated with the whole ladder
(``tune_configs/references_*.json``) give TrueSkill curves steps that can be seen.
"""
from __future__ import annotations

from dataclasses import replace

from policies.agents.scripted import FULL_BOT, Handicap

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
# Warm-up levels between the random agent and scripted_1, for a curriculum from scratch: scripted_1 taking the random
# agent's action in the given share of its decisions. A young agent that has just passed the random agent wins none of
# its games against scripted_1 (tune_configs/hok_1v1_curriculum.yaml's comment has the curve); these fill the gap.
# They are curriculum steps, not rated levels of the ladder.
WARMUP_RANDOM_SHARES = {"scripted_1_r75": 0.75, "scripted_1_r50": 0.5, "scripted_1_r25": 0.25}
WARMUP_HANDICAPS = {name: replace(LADDER_HANDICAPS["scripted_1"], random_actions=share)
                    for name, share in WARMUP_RANDOM_SHARES.items()}
WARMUP_LADDER = (RANDOM_LEVEL, *WARMUP_HANDICAPS, *LADDER_HANDICAPS)  # weakest first
SPELL_SHARES = (0.25, 0.4, 0.5, 0.6, 0.75)  # the bridge levels scripted_3_spells_25 ... _75 (spell_share)
# Bridge levels between scripted_2 and the full bot, for the top rung (issue 29): the full bot under one handicap that
# weakens its fights more than its push, so that a student level with the full bot sees fights won and games won
# outright. Training opponents, not rated levels of the ladder.
BRIDGE_HANDICAPS = {
    "scripted_3_slow": replace(FULL_BOT, reaction_steps=3),  # a decision every 4 agent steps (0.5 s)
    "scripted_3_brave": replace(FULL_BOT, retreat_hp=0.1),  # fights on down to 10% health
    "scripted_3_r25": replace(FULL_BOT, random_actions=0.25),  # the random agent's action in a quarter of decisions
    "scripted_3_no_items": replace(FULL_BOT, items=False),  # casts its abilities, uses no item (salve, portal, ...)
    "scripted_2_items": replace(FULL_BOT, abilities=False),  # scripted_2 that uses its items: no ability cast
    "scripted_3_no_wave_spells": replace(FULL_BOT, wave_spells=False),  # its spells at heroes only, not at waves
    "scripted_3_no_ultimate": replace(FULL_BOT, ultimate=False),  # its three basic abilities, no ultimate
    # the full bot casting a share of the spells it chooses: against scripted_2 (no spells) the top rung's agent
    # finishes every game, against the full bot none as the blademaster, and neither the items, the wave clear nor
    # the ultimate alone make the difference (docs/results.md, 2026-11-29); 40% and 60% are the finer steps around
    # the share where the blademaster's finish falls from most games to few
    **{f"scripted_3_spells_{round(100 * share)}": replace(FULL_BOT, spell_share=share)
       for share in SPELL_SHARES},
}
LADDER_TARGET_WIN_RATE = 0.75  # each level wins at least this share of its games against the level below


def ladder_pairs() -> list[tuple[str, str]]:
    """(level, the level below it) for each step of the ladder, weakest first."""
    return list(zip(LADDER[1:], LADDER[:-1]))
