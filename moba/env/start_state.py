"""Training games that start late, around one side (the env config's ``start_state``): a share of games begins with
the defender's buildings named in ``destroyed`` already down and the attacker's heroes ``distance`` units from the
defender's ancient, on the straight way from it to the attacker's fountain, all heroes at ``level``. The attacker is
the side the training runner names (``reset(options={"attacker": side})``: the side "main" plays) or, without one,
a side drawn at random. A curriculum that starts games at the goal and moves the start back (a reverse curriculum,
Florensa et al. 2017, "Reverse Curriculum Generation for Reinforcement Learning") sets a share and a distance; the
engine's ``GameSetup.start_destroyed`` and ``start_positions`` do the rest.
"""
from __future__ import annotations

import dataclasses
import math

from moba.game import kernels
from moba.game.constants import MAX_LEVEL, TEAM_NAMES, UT_ANCIENT
from moba.game.engine import GameSetup
from moba.game.map import build_map, destroyable_names, fountain_position
from moba.game.teams import TEAM_SIZE

START_STATE_DEFAULTS = {"share": 0.0, "destroyed": (), "distance": 600.0, "level": 1}
STEP = 25.0  # units: how far the start point moves toward the attacker's fountain until it is on passable ground


def destroyable(mode: str) -> list:
    """The names ``destroyed`` takes: a team's buildings without the team (``tower_mid_1``), never its fountain or
    ancient."""
    return sorted({name.split("_", 1)[1] for name in destroyable_names(build_map(mode).buildings)})


def checked_start_state(d, mode: str, bad) -> dict:
    """The env config's start_state with its defaults, or `bad(key, message)` naming the field."""
    if not isinstance(d, dict):
        bad("start_state", f"must be a mapping with keys {list(START_STATE_DEFAULTS)}, got {d!r}")
    unknown = sorted(set(d) - set(START_STATE_DEFAULTS))
    if unknown:
        bad("start_state", f"unknown key(s) {unknown}; allowed: {list(START_STATE_DEFAULTS)}")
    out = {**START_STATE_DEFAULTS, **d}
    share, distance, level = out["share"], out["distance"], out["level"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
        bad("start_state.share", f"must be a number in [0, 1], got {share!r}")
    names = destroyable(mode)
    if not isinstance(out["destroyed"], (list, tuple)) or any(n not in names for n in out["destroyed"]) \
            or len(set(out["destroyed"])) != len(out["destroyed"]):
        bad("start_state.destroyed", f"must be a list of building names, each once, from {names}, got "
                                     f"{out['destroyed']!r}")
    if isinstance(distance, bool) or not isinstance(distance, (int, float)) or not 0.0 < distance < 20000.0:
        bad("start_state.distance", f"must be a number of map units in (0, 20000), got {distance!r}")
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= MAX_LEVEL:
        bad("start_state.level", f"must be an int in [1, {MAX_LEVEL}], got {level!r}")
    return {**out, "share": float(share), "destroyed": tuple(out["destroyed"]), "distance": float(distance)}


def start_point(mode: str, attacker: int, distance: float) -> tuple:
    """`distance` units from the defender's ancient toward the attacker's fountain, moved on toward the fountain to
    the first passable point."""
    layout = build_map(mode)
    ancient = next(b for b in layout.buildings if b.type == UT_ANCIENT and b.team == 1 - attacker)
    fx, fy = fountain_position(attacker)
    span = math.hypot(fx - ancient.x, fy - ancient.y)
    d = min(distance, span)
    while True:
        x = ancient.x + (fx - ancient.x) * d / span
        y = ancient.y + (fy - ancient.y) * d / span
        if kernels.passable(layout.terrain, x, y) or d >= span:
            return float(x), float(y)
        d = min(d + STEP, span)


def late_setup(setup: GameSetup, start: dict, attacker: str) -> GameSetup:
    """`setup` started late around `attacker` (a side's name): the defender's buildings of ``start["destroyed"]``
    down, the attacker's heroes at ``start_point``, every hero at ``start["level"]``."""
    a = TEAM_NAMES.index(attacker)
    n = TEAM_SIZE[setup.mode]
    point = start_point(setup.mode, a, start["distance"])
    positions = tuple(point if h // n == a else None for h in range(2 * n))
    destroyed = tuple(f"{TEAM_NAMES[1 - a]}_{name}" for name in start["destroyed"])
    return dataclasses.replace(setup, start_destroyed=destroyed, start_positions=positions,
                               start_level=(start["level"],) * (2 * n))
