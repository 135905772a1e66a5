"""The names every layer shares: game modes and their sizes, teams and sides, winners, agent ids.

A team is an int in the engine (``RADIANT`` 0, ``DIRE`` 1) and a name everywhere else ("radiant", "dire"): the
"side" a team or an agent plays. A finished game's winner is a side's name, or ``NO_WINNER`` when the time limit
stopped it. Agent ids are ``"<side>_<k>"``, k the hero's slot in its team (0 .. team size - 1). Everything that
needs one of these names reads it here, never from a string literal.
"""
from __future__ import annotations

from moba.game.constants import DIRE, RADIANT, TEAM_NAMES

MODE_5V5 = "5v5"  # Dota-like: three lanes, five heroes a side (Five)
MODE_1V1 = "1v1"  # Honor of Kings Arena-like: the mid lane, one hero a side (HoK)
MODES = (MODE_5V5, MODE_1V1)
TEAM_SIZE = {MODE_5V5: 5, MODE_1V1: 1}  # heroes per team
DEFAULT_TIME_LIMIT_S = {MODE_5V5: 1800.0, MODE_1V1: 1200.0}  # a game's length when nobody wins first
NO_WINNER = "none"  # the winner of a game the time limit stopped
WINNER_NAMES = TEAM_NAMES + (NO_WINNER,)


def check_mode(mode) -> str:
    """The mode, or a ValueError naming the allowed ones."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    return mode


def n_heroes(mode: str) -> int:
    """Heroes in a game of `mode`, both teams."""
    return 2 * TEAM_SIZE[check_mode(mode)]


def team_name(team: int) -> str:
    return TEAM_NAMES[team]


def winner_name(winner: int) -> str:
    """The engine's winner (RADIANT, DIRE, or -1 while nobody has won) as a name."""
    return TEAM_NAMES[winner] if winner in (RADIANT, DIRE) else NO_WINNER


def enemy_side(side: str) -> str:
    """The other side's name."""
    return TEAM_NAMES[1 - TEAM_NAMES.index(side)]


def side_of_game(game: int) -> str:
    """The side a tested agent plays in game number `game` of a series: radiant, dire, radiant, ... so that both
    sides of the (asymmetric) map are played equally."""
    return TEAM_NAMES[game % 2]


def agent_id(team: int, k: int) -> str:
    return f"{TEAM_NAMES[team]}_{k}"


def agent_ids(mode: str) -> list[str]:
    """Every agent of a game, Radiant's heroes first (the engine's hero slot order)."""
    return [agent_id(team, k) for team in (RADIANT, DIRE) for k in range(TEAM_SIZE[check_mode(mode)])]


def side_of_agent(agent: str) -> str:
    """The side (team name) an agent id plays."""
    side = str(agent).rpartition("_")[0]
    if side not in TEAM_NAMES:
        raise ValueError(f"agent id {agent!r}: expected '<side>_<k>' with side one of {list(TEAM_NAMES)}")
    return side


def team_of_agent(agent: str) -> int:
    """The team (RADIANT or DIRE) an agent id plays."""
    return TEAM_NAMES.index(side_of_agent(agent))
