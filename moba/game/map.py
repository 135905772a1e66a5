"""The map: a square with the Radiant base in the bottom-left corner and the Dire base in the top-right, three
lanes (top, mid, bottom), a river on the anti-diagonal, forest blocks in the jungles, and each team's buildings.

The map is point-symmetric: Dire's half is Radiant's rotated by 180 degrees around the centre, so neither side is
favoured. Mode "1v1" keeps only the mid lane, two towers per side and a base crystal (HoK app. B).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from moba.game.constants import (DIRE, GRID_CELL, GRID_N, LANE_BOT, LANE_MID, LANE_NAMES, LANE_TOP, MAP_SIZE, RADIANT,
                                TEAM_NAMES, UNIT_TYPE_NAMES, UT_ANCIENT, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED,
                                UT_FOUNTAIN, UT_SHRINE, UT_TOWER)
from moba.game.teams import MODE_1V1, MODE_5V5, check_mode

MAX_WAYPOINTS = 8
# Radiant-side lane paths, from the Radiant base to the Dire base
# (each ends at the enemy ancient, so that a wave that breaks through keeps attacking the base)
_LANE_PATHS = {
    LANE_TOP: [(1000, 1600), (800, 4000), (900, 7100), (4000, 7200), (6400, 7000), (7000, 7000)],
    LANE_MID: [(1500, 1500), (4000, 4000), (6500, 6500), (7000, 7000)],
    LANE_BOT: [(1600, 1000), (4000, 800), (7100, 900), (7200, 4000), (7000, 6400), (7000, 7000)],
}
# tower positions as a fraction of the lane's length from the owner's end (T1, T2, T3)
TOWER_LANE_FRACTION = {1: 0.42, 2: 0.27, 3: 0.11}
BARRACKS_LANE_FRACTION = 0.06
BARRACKS_SIDE_OFFSET = 220.0
FOUNTAIN_POS = (350.0, 350.0)
ANCIENT_POS = (1000.0, 1000.0)
T4_POS = ((1350.0, 850.0), (850.0, 1350.0))
SHRINE_POS = ((2300.0, 3300.0), (3300.0, 2300.0))
# forest blocks (impassable), Radiant-side jungle, as (x0, y0, x1, y1); mirrored for the Dire side
_FORESTS = [(1700, 2300, 2100, 3000), (2500, 4100, 3200, 4500), (2300, 1700, 3000, 2100), (4100, 2500, 4500, 3200),
            (1800, 5200, 2600, 5600), (5200, 1800, 5600, 2600)]
MAP_MARGIN = 150.0


def mirror(p):
    """Point symmetry around the centre: Radiant's position -> Dire's."""
    return (MAP_SIZE - p[0], MAP_SIZE - p[1])


def _point_along(path, frac):
    pts = np.asarray(path, np.float64)
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    target = frac * seg.sum()
    for i, length in enumerate(seg):
        if target <= length or i == len(seg) - 1:
            t = min(target / length, 1.0)
            p = pts[i] + t * (pts[i + 1] - pts[i])
            d = (pts[i + 1] - pts[i]) / length
            return (float(p[0]), float(p[1])), (float(d[0]), float(d[1]))
        target -= length
    raise AssertionError("unreachable")


@dataclass
class Building:
    type: int
    team: int
    lane: int  # -1 when not tied to a lane
    tier: int  # towers: 1-4; 0 otherwise
    x: float
    y: float

    @property
    def name(self) -> str:
        """The building's name: its team and type, with its lane and tier where it has them (e.g.
        "dire_tower_mid_1", "radiant_ancient")."""
        parts = [TEAM_NAMES[self.team], UNIT_TYPE_NAMES[self.type]]
        if self.lane >= 0:
            parts.append(LANE_NAMES[self.lane])
        if self.tier > 0:
            parts.append(str(self.tier))
        return "_".join(parts)


def destroyable_names(buildings) -> list:
    """The names (Building.name) of `buildings` a game may start without: every one but the fountains and the
    ancients, sorted."""
    return sorted(b.name for b in buildings if b.type not in (UT_FOUNTAIN, UT_ANCIENT))


@dataclass
class MapLayout:
    mode: str
    lanes: list  # lanes[team][lane] -> list of waypoints the team's creeps walk (toward the enemy base)
    lane_enabled: tuple
    buildings: list
    terrain: np.ndarray  # (GRID_N, GRID_N) uint8: 1 passable, 0 blocked; indexed [ix, iy]
    river: np.ndarray  # (GRID_N, GRID_N) uint8: 1 in the river

    def waypoint_array(self) -> tuple[np.ndarray, np.ndarray]:
        """(2, 3, MAX_WAYPOINTS, 2) float waypoints and (2, 3) counts, for the kernels."""
        wp = np.zeros((2, 3, MAX_WAYPOINTS, 2), np.float64)
        n = np.zeros((2, 3), np.int64)
        for team in (RADIANT, DIRE):
            for lane in range(3):
                pts = self.lanes[team][lane]
                wp[team, lane, :len(pts)] = pts
                n[team, lane] = len(pts)
        return wp, n

    def fountain(self, team: int) -> tuple[float, float]:
        return fountain_position(team)


def lane_path(team: int, lane: int) -> list:
    """Waypoints of `lane` as `team`'s creeps walk it: from the team's base toward the enemy's."""
    if team == RADIANT:
        return [tuple(map(float, p)) for p in _LANE_PATHS[lane]]
    # Dire's top lane is the mirror image of Radiant's bottom lane (and vice versa), walked the same way
    src = {LANE_TOP: LANE_BOT, LANE_MID: LANE_MID, LANE_BOT: LANE_TOP}[lane]
    return [mirror(p) for p in _LANE_PATHS[src]]


def _terrain() -> tuple[np.ndarray, np.ndarray]:
    centers = (np.arange(GRID_N) + 0.5) * GRID_CELL
    cx, cy = np.meshgrid(centers, centers, indexing="ij")
    passable = np.ones((GRID_N, GRID_N), np.uint8)
    edge = (cx < MAP_MARGIN) | (cy < MAP_MARGIN) | (cx > MAP_SIZE - MAP_MARGIN) | (cy > MAP_SIZE - MAP_MARGIN)
    passable[edge] = 0
    for box in _FORESTS:
        for (x0, y0, x1, y1) in (box, (MAP_SIZE - box[2], MAP_SIZE - box[3], MAP_SIZE - box[0], MAP_SIZE - box[1])):
            passable[(cx >= x0) & (cx <= x1) & (cy >= y0) & (cy <= y1)] = 0
    # river: a band along the anti-diagonal x + y = MAP_SIZE
    river = (np.abs(cx + cy - MAP_SIZE) < 500.0).astype(np.uint8)
    return passable, river


def fountain_position(team: int) -> tuple[float, float]:
    """Where a team's fountain (and spawn) is: the map is point-symmetric, Radiant bottom-left."""
    return FOUNTAIN_POS if team == RADIANT else mirror(FOUNTAIN_POS)


def build_map(mode: str) -> MapLayout:
    check_mode(mode)
    lanes_on = (False, True, False) if mode == MODE_1V1 else (True, True, True)
    lanes = [[lane_path(t, lane) for lane in range(3)] for t in (RADIANT, DIRE)]
    buildings: list[Building] = []
    for team in (RADIANT, DIRE):
        place = (lambda p: p) if team == RADIANT else mirror
        buildings.append(Building(UT_FOUNTAIN, team, -1, 0, *place(FOUNTAIN_POS)))
        for lane in range(3):
            if not lanes_on[lane]:
                continue
            path = lanes[team][lane]
            tiers = (1, 2) if mode == MODE_1V1 else (1, 2, 3)
            for tier in tiers:
                (x, y), _ = _point_along(path[:-1], TOWER_LANE_FRACTION[tier])
                buildings.append(Building(UT_TOWER, team, lane, tier, x, y))
            if mode == MODE_5V5:
                (x, y), (dx, dy) = _point_along(path[:-1], BARRACKS_LANE_FRACTION)
                nx, ny = -dy * BARRACKS_SIDE_OFFSET, dx * BARRACKS_SIDE_OFFSET
                buildings.append(Building(UT_BARRACKS_MELEE, team, lane, 0, x + nx, y + ny))
                buildings.append(Building(UT_BARRACKS_RANGED, team, lane, 0, x - nx, y - ny))
        if mode == MODE_5V5:
            for p in T4_POS:
                buildings.append(Building(UT_TOWER, team, -1, 4, *place(p)))
            for p in SHRINE_POS:
                buildings.append(Building(UT_SHRINE, team, -1, 0, *place(p)))
        buildings.append(Building(UT_ANCIENT, team, -1, 0, *place(ANCIENT_POS)))
    terrain, river = _terrain()
    return MapLayout(mode, lanes, lanes_on, buildings, terrain, river)
