"""Training games that start late, around one side (the env config's ``start_state``): a share of games begins with
the defender's buildings named in ``destroyed`` already down and the attacker's heroes ``distance`` units from the
defender's ancient, on the straight way from it to the attacker's fountain, all heroes at ``level``, the defender's
ancient at ``ancient_hp`` of its health, ``waves`` of the attacker's creep waves beside its heroes, marching on that
ancient (a push under way: in this game creeps, not heroes, take most of an ancient's health), and the defender's
heroes dead for ``defender_dead_s`` seconds (a kill just made). ``distance``, ``ancient_hp`` and ``defender_dead_s``
may be ranges ``[low, high]``, drawn from per game: easy and hard starts in one stage. Such a game lasts
``time_limit_s`` (0: the env's time limit), so that a stage's data holds many finishes. The attacker is the side the
training runner names (``reset(options={"attacker": side})``: the side "main" plays) or, without one, a side drawn at
random. A curriculum that starts games at the goal and moves the start back (a reverse curriculum, Florensa et al.
2017, "Reverse Curriculum Generation for Reinforcement Learning") sets a share, a distance, the ancient's health, the
waves and the defender's respawn; the engine's ``GameSetup.start_destroyed``, ``start_positions``,
``start_ancient_hp``, ``start_waves`` and ``start_dead_s`` do the rest.
"""
from __future__ import annotations

import dataclasses
import math

from moba.game import kernels
from moba.game.constants import MAX_LEVEL, TEAM_NAMES, UT_ANCIENT
from moba.game.engine import MAX_START_DEAD_S, MAX_START_WAVES, GameSetup
from moba.game.map import build_map, destroyable_names, fountain_position
from moba.game.teams import TEAM_SIZE

START_STATE_DEFAULTS = {"share": 0.0, "destroyed": (), "distance": 600.0, "level": 1, "time_limit_s": 0.0,
                        "ancient_hp": 1.0, "waves": 0, "defender_dead_s": 0.0}
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
    if not _is_number(share) or not 0.0 <= share <= 1.0:
        bad("start_state.share", f"must be a number in [0, 1], got {share!r}")
    names = destroyable(mode)
    if not isinstance(out["destroyed"], (list, tuple)) or any(n not in names for n in out["destroyed"]) \
            or len(set(out["destroyed"])) != len(out["destroyed"]):
        bad("start_state.destroyed", f"must be a list of building names, each once, from {names}, got "
                                     f"{out['destroyed']!r}")
    distance = number_or_range(distance, lambda v: 0.0 < v < 20000.0, "start_state.distance",
                               "a number of map units in (0, 20000)", bad)
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= MAX_LEVEL:
        bad("start_state.level", f"must be an int in [1, {MAX_LEVEL}], got {level!r}")
    hp = number_or_range(out["ancient_hp"], lambda v: 0.0 < v <= 1.0, "start_state.ancient_hp",
                         "the defender's ancient's share of its health in (0, 1]", bad)
    waves = out["waves"]
    if isinstance(waves, bool) or not isinstance(waves, int) or not 0 <= waves <= MAX_START_WAVES:
        bad("start_state.waves", f"must be an int in [0, {MAX_START_WAVES}] (the attacker's creep waves at the start "
                                 f"point), got {waves!r}")
    dead = number_or_range(out["defender_dead_s"], lambda v: 0.0 <= v <= MAX_START_DEAD_S,
                           "start_state.defender_dead_s",
                           f"the seconds the defender's heroes stay dead at the start, in [0, {MAX_START_DEAD_S:g}]",
                           bad)
    limit = out["time_limit_s"]
    if not _is_number(limit) or not 0.0 <= limit < 1e6:
        bad("start_state.time_limit_s", f"must be a number of seconds >= 0 (0: the env's time limit), got {limit!r}")
    return {**out, "share": float(share), "destroyed": tuple(out["destroyed"]), "distance": distance,
            "time_limit_s": float(limit), "ancient_hp": hp, "defender_dead_s": dead}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number_or_range(v, ok, key: str, what: str, bad):
    """A start-state value: a number (a float) or a range [low, high] drawn from per game (a (low, high) tuple of
    floats), each number `ok`; else `bad(key, message)`."""
    if _is_number(v) and ok(v):
        return float(v)
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(_is_number(x) and ok(x) for x in v) and v[0] <= v[1]:
        return float(v[0]), float(v[1])
    bad(key, f"must be {what}, or a range [low, high] of such numbers drawn from per game, got {v!r}")


def drawn(v, rng) -> float:
    """A start-state value for one game: the number, or a uniform draw from the range (the env's generator: drawn
    only for a range, so that a fixed value leaves the game stream as it was)."""
    return float(rng.uniform(*v)) if isinstance(v, tuple) else v


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


def late_setup(setup: GameSetup, start: dict, attacker: str, rng) -> GameSetup:
    """`setup` started late around `attacker` (a side's name): the defender's buildings of ``start["destroyed"]``
    down, the attacker's heroes at ``start_point``, every hero at ``start["level"]``, the defender's ancient at
    ``start["ancient_hp"]`` of its health, ``start["waves"]`` of the attacker's creep waves at its heroes' point, the
    defender's heroes dead for ``start["defender_dead_s"]`` seconds, the game ``start["time_limit_s"]`` long when that
    is set; a range of distance, ancient_hp or defender_dead_s is drawn from with `rng`."""
    a = TEAM_NAMES.index(attacker)
    n = TEAM_SIZE[setup.mode]
    point = start_point(setup.mode, a, drawn(start["distance"], rng))
    hp = drawn(start["ancient_hp"], rng)
    positions = tuple(point if h // n == a else None for h in range(2 * n))
    destroyed = tuple(f"{TEAM_NAMES[1 - a]}_{name}" for name in start["destroyed"])
    limit = start["time_limit_s"] or setup.time_limit_s
    waves = tuple((start["waves"], *point) if t == a else None for t in range(2)) if start["waves"] else ()
    dead = drawn(start["defender_dead_s"], rng)
    dead_s = tuple(0.0 if h // n == a else dead for h in range(2 * n)) if dead > 0 else ()
    return dataclasses.replace(setup, start_destroyed=destroyed, start_positions=positions,
                               start_level=(start["level"],) * (2 * n), time_limit_s=limit,
                               start_ancient_hp=((1.0, hp) if a == 0 else (hp, 1.0)) if hp < 1.0 else (),
                               start_waves=waves, start_dead_s=dead_s)


def late_start_side(setup: GameSetup) -> str | None:
    """The side `setup` starts late around (late_setup's attacker: the side whose heroes start away from their
    fountain), or None for a game that starts as usual."""
    n = TEAM_SIZE[setup.mode]
    placed = [h for h, p in enumerate(setup.start_positions) if p is not None]
    return TEAM_NAMES[placed[0] // n] if placed else None
