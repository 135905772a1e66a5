"""``Game``: one MOBA game. Sets up the map, heroes and buildings, advances a frameskip per ``step`` through the
compiled kernels, runs the scripted purchasing and ability builds, and keeps the per-game statistics.

The engine is deterministic and holds no random generator: whatever is random about a game (lineup, perturbations,
perturbed builds, the evaluation's jitter of spawn points and of the first creep wave) is decided by the caller and
passed in ``GameSetup``. The same setup and the same orders give the same game, bit for bit; ``save()`` /
``Game.load()`` round-trip a game through bytes.
"""
from __future__ import annotations

import math
import pickle
from dataclasses import asdict, dataclass

import numpy as np

from moba.game import kernels
from moba.game.builds import CONSUMABLES_UNTIL_S, NO_SKILL, ability_build, item_build
from moba.game.constants import (ANCIENT_STATS, BARRACKS_MELEE_STATS, BARRACKS_RANGED_STATS, CRYSTAL_STATS,
                                DEFAULT_FRAMESKIP, DIRE, FOUNTAIN_STATS, MAX_FRAMESKIP, MAX_LEVEL, RADIANT,
                                SHRINE_STATS, STARTING_GOLD, TICKS_PER_SECOND, TOWER_STATS, UT_ANCIENT,
                                UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_FOUNTAIN, UT_HERO, UT_SHRINE, UT_TOWER,
                                WAVE_INTERVAL_S, XP_TO_LEVEL)
from moba.game.heroes import HEROES
from moba.game.items import INVENTORY_SLOTS, ITEM_ACTIONS, ITEMS, item_id
from moba.game.map import build_map, destroyable_names
from moba.game.state import (E_KILLER, E_TEAM, E_TYPE, F_ARMOR, F_BAT, F_DMG, F_GOLD, F_HP, F_HPREG, F_MANA, F_MANAREG,
                             F_MAXHP, F_MAXMANA, F_MRES, F_RANGE, F_SPEED, F_VIS_DAY, F_VIS_NIGHT, F_X, F_Y, G_BB_CD,
                             G_CONSUMABLES, G_EARNED, G_GOLD, G_RESPAWN, G_SPENT, G_XP, GF_NEXT_WAVE, GF_TIME,
                             GI_CRYSTAL_ATTACKS, GI_EV_N, GI_FIRST_FREE, GI_NEXT_UID, GI_WINNER, H_AB0, H_ASSISTS,
                             H_BUILD, H_CH0, H_CONSUMED, H_DEATHS, H_DEF, H_DN, H_IT0, H_KILLS, H_LEVEL, H_LH,
                             H_TP_CAST, H_TP_DONE, H_UNIT, I_ALIVE, I_HERO, I_LANE, I_PROT0,
                             I_PROT_MODE, I_TEAM, I_TIER, I_TYPE, I_UID, I_USED, I_WP, NE, P_ACTIVE, P_ARMOR, P_DMG,
                             P_HP, P_HPREG, P_MANAREG, P_MRES, P_SPEED, PROT_ALL_ALIVE, PROT_ANY_ALIVE, GameState)
from moba.game.tables import (ABILITIES_PER_HERO, IS_ARMOR, IS_CHARGES, IS_COST, IS_DMG, IS_HP, IS_HPREG, IS_MANA,
                             IS_MANAREG, IS_MRES, IS_SPEED, tables)
from moba.game.teams import DEFAULT_TIME_LIMIT_S, MODE_1V1, MODE_5V5, TEAM_SIZE, check_mode, team_name, winner_name

PERTURB_COLUMNS = (P_HP, P_ARMOR, P_SPEED, P_HPREG, P_MANAREG, P_MRES, P_DMG)
PERTURB_NAMES = ("hp", "armor", "move_speed", "hp_regen", "mana_regen", "magic_resist", "damage")
MAX_SPAWN_OFFSET = 200.0  # a hero's spawn point moves at most this far (per axis) from its place beside the fountain
MAX_START_WAVES = 8  # a start state's waves per team (GameSetup.start_waves): the unit table's room for creeps
START_WAVE_SPACING = 150.0  # units between two waves of a start state, toward the team's fountain
MAX_START_DEAD_S = 120.0  # a start state's dead hero respawns within this many seconds (GameSetup.start_dead_s)
SUPPORT_WARD_EVERY_S = 120.0  # supports keep an observer ward in stock, restocked at most this often
_IA_ITEM = np.array([item_id(n) for n in ITEM_ACTIONS], np.int64)
_TP, _SALVE, _CLARITY, _WARD = (item_id(n) for n in ("town_portal_scroll", "healing_salve", "clarity",
                                                     "observer_ward"))


@dataclass
class GameSetup:
    """Everything that decides a game besides the agents' orders."""
    mode: str = MODE_5V5
    lineup: tuple = ()  # hero names, Radiant's then Dire's; empty = the first heroes of the pool
    frameskip: int = DEFAULT_FRAMESKIP
    time_limit_s: float = 0.0  # 0 = the mode's default
    start_level: tuple = ()  # per hero; empty = all level 1
    start_gold: tuple = ()  # per hero; empty = STARTING_GOLD
    perturb: tuple = ()  # per hero, one tuple of PERTURB_NAMES additive stat changes (O.2); empty = none
    skill_priority: tuple = ()  # per hero, a permutation of (0, 1, 2); empty = the hero's own
    item_builds: tuple = ()  # per hero, a tuple of item names; empty = the hero's own
    spawn_offsets: tuple = ()  # per hero, (dx, dy) added to its spawn point beside the fountain; empty = none
    first_wave_s: float = 0.0  # game time of the first creep wave; the next ones follow every WAVE_INTERVAL_S
    # both ancients' (1v1: crystals') health as a share of the mode's (ANCIENT_STATS / CRYSTAL_STATS): a goal made
    # reachable for a training curriculum (the ancient_hp_scale schedule); 1 = the game as it is
    ancient_hp_scale: float = 1.0
    # a game that starts later than its beginning (start states for a curriculum that moves the start back from the
    # goal): the buildings destroyed before it starts, by name (map.Building.name, e.g. "dire_tower_mid_1"; not a
    # fountain or an ancient), and per hero its start point (x, y) instead of the fountain's side (passable ground;
    # None: the usual one); empty = none. Buildings destroyed before the start count for no side (TeamStats) and pay
    # no reward.
    start_destroyed: tuple = ()
    start_positions: tuple = ()
    # per team, its ancient's health at the start as a share of its full health, in (0, 1] (a start state near the
    # goal: the health taken before the start pays no reward); empty = full
    start_ancient_hp: tuple = ()
    # per team, None or (waves, x, y): that many of the team's creep waves already at (x, y) (on passable ground; each
    # wave START_WAVE_SPACING behind the one before, toward the team's fountain), marching on the enemy's ancient: a
    # push under way at the start; empty = none
    start_waves: tuple = ()
    # per hero, the seconds it is still dead at the start (a kill just made: it respawns at its fountain then, and
    # cannot buy back before); 0 = alive; empty = all alive
    start_dead_s: tuple = ()

    def resolved_time_limit_s(self) -> float:
        """The game's time limit in seconds: time_limit_s, or the mode's default when it is 0."""
        return float(self.time_limit_s or DEFAULT_TIME_LIMIT_S[self.mode])

    def validated(self) -> "GameSetup":
        n = 2 * TEAM_SIZE[check_mode(self.mode)]
        lineup = tuple(self.lineup) or tuple(h.name for h in HEROES[:n])
        names = {h.name for h in HEROES}
        if len(lineup) != n:
            raise ValueError(f"lineup: mode {self.mode} needs {n} heroes, got {len(lineup)}")
        for name in lineup:
            if name not in names:
                raise ValueError(f"lineup: unknown hero {name!r}; allowed: {sorted(names)}")
        if not isinstance(self.frameskip, int) or not 1 <= self.frameskip <= MAX_FRAMESKIP:
            raise ValueError(f"frameskip must be an int in [1, {MAX_FRAMESKIP}], got {self.frameskip!r}")
        for key in ("start_level", "start_gold", "perturb", "skill_priority", "item_builds", "spawn_offsets",
                    "start_positions", "start_dead_s"):
            v = getattr(self, key)
            if v and len(v) != n:
                raise ValueError(f"{key}: one entry per hero ({n}), got {len(v)}")
        if self.start_level and not all(1 <= int(x) <= MAX_LEVEL for x in self.start_level):
            raise ValueError(f"start_level: each in [1, {MAX_LEVEL}], got {self.start_level}")
        if not all(len(o) == 2 and all(math.isfinite(v) and abs(v) <= MAX_SPAWN_OFFSET for v in o)
                   for o in self.spawn_offsets):
            raise ValueError(f"spawn_offsets: each a pair (dx, dy) in [-{MAX_SPAWN_OFFSET}, {MAX_SPAWN_OFFSET}], "
                             f"got {self.spawn_offsets}")
        if not (math.isfinite(self.first_wave_s) and 0.0 <= self.first_wave_s < WAVE_INTERVAL_S):
            raise ValueError(f"first_wave_s: must be in [0, {WAVE_INTERVAL_S}), got {self.first_wave_s!r}")
        if not (isinstance(self.ancient_hp_scale, (int, float)) and not isinstance(self.ancient_hp_scale, bool)
                and 0.0 < self.ancient_hp_scale <= 1.0):
            raise ValueError(f"ancient_hp_scale: must be a number in (0, 1], got {self.ancient_hp_scale!r}")
        if self.start_ancient_hp and not (len(self.start_ancient_hp) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0
                for v in self.start_ancient_hp)):
            raise ValueError(f"start_ancient_hp: one share in (0, 1] per team (2), got {self.start_ancient_hp!r}")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= MAX_START_DEAD_S
                   for v in self.start_dead_s):
            raise ValueError(f"start_dead_s: each in [0, {MAX_START_DEAD_S}] seconds, got {self.start_dead_s!r}")
        if self.start_waves:
            terrain = build_map(self.mode).terrain
            if len(self.start_waves) != 2 or not all(w is None or _is_wave_spec(w, terrain) for w in self.start_waves):
                raise ValueError(f"start_waves: per team (2) None or (waves in [0, {MAX_START_WAVES}], x, y) on "
                                 f"passable ground, got {self.start_waves!r}")
        if self.start_destroyed or self.start_positions:
            layout = build_map(self.mode)
            destroyable = destroyable_names(layout.buildings)
            if any(n not in destroyable for n in self.start_destroyed) \
                    or len(set(self.start_destroyed)) != len(self.start_destroyed):
                raise ValueError(f"start_destroyed: building names, each once, from {destroyable}; got "
                                 f"{list(self.start_destroyed)}")
            for p in self.start_positions:
                if p is not None and not (len(p) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                            and math.isfinite(v) for v in p)
                        and kernels.passable(layout.terrain, float(p[0]), float(p[1]))):
                    raise ValueError(f"start_positions: each a point (x, y) on passable ground of the {self.mode} "
                                     f"map, got {p!r}")
        return GameSetup(**{**asdict(self), "lineup": lineup})


def _is_wave_spec(w, terrain) -> bool:
    """Whether `w` is a start_waves entry: (waves in [0, MAX_START_WAVES], x, y) with (x, y) on passable ground."""
    def number(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    return (isinstance(w, (tuple, list)) and len(w) == 3 and isinstance(w[0], int) and not isinstance(w[0], bool)
            and 0 <= w[0] <= MAX_START_WAVES and number(w[1]) and number(w[2])
            and kernels.passable(terrain, float(w[1]), float(w[2])))


@dataclass
class TeamStats:
    towers: int = 0
    barracks: int = 0
    shrines: int = 0
    kills: int = 0


class Game:
    def __init__(self, setup: GameSetup | None = None, *, _state: GameState | None = None):
        self.setup = (setup or GameSetup()).validated()
        self.mode = self.setup.mode
        self.team_size = TEAM_SIZE[self.mode]
        self.n_heroes = 2 * self.team_size
        self.frameskip = self.setup.frameskip
        self.time_limit_s = self.setup.resolved_time_limit_s()
        self.map = build_map(self.mode)
        self.wp, self.wpn = self.map.waypoint_array()
        self.lane_on = np.array(self.map.lane_enabled, np.int64)
        self.hero_defs = np.array([[h.name for h in HEROES].index(n) for n in self.setup.lineup], np.int64)
        self.hero_ab = (ABILITIES_PER_HERO * self.hero_defs[:, None]
                        + np.arange(ABILITIES_PER_HERO)[None, :]).astype(np.int64)
        self.abi, self.abf, self.ia_ab, self.item_stats = tables()
        self.ability_builds = [ability_build(tuple(self.setup.skill_priority[h]) if self.setup.skill_priority
                                             else HEROES[d].skill_priority) for h, d in enumerate(self.hero_defs)]
        self.item_builds = [[item_id(n) for n in self.setup.item_builds[h]] if self.setup.item_builds
                            else item_build(HEROES[d]) for h, d in enumerate(self.hero_defs)]
        self.fountain_idx = np.zeros(2, np.int64)
        self.ancient_idx = np.zeros(2, np.int64)
        self.rax = -np.ones((2, 3, 2), np.int64)
        self.building_rows: list[int] = []
        self.s = _state if _state is not None else GameState(self.n_heroes)
        self._layout_buildings(init=_state is None)
        self.n_buildings_end = self.n_heroes + len(self.map.buildings)
        if _state is None:
            self._apply_start_state()
            self._init_state()
            self._place_waves()
            self._dead_at_start()
        self.stats = [TeamStats(), TeamStats()]
        self.last_events = np.zeros((0, NE), np.int64)

    # ---- set-up ----------------------------------------------------------------------------------------------------
    def _layout_buildings(self, init: bool):
        """Assigns unit rows to buildings (heroes take rows 0..n-1) and, at init, writes their stats."""
        by_key = {}
        for i, b in enumerate(self.map.buildings):
            u = self.n_heroes + i
            self.building_rows.append(u)
            by_key[(b.type, b.team, b.lane, b.tier, i)] = u
            if b.type == UT_FOUNTAIN:
                self.fountain_idx[b.team] = u
            elif b.type == UT_ANCIENT:
                self.ancient_idx[b.team] = u
            elif b.type == UT_BARRACKS_MELEE:
                self.rax[b.team, b.lane, 0] = u
            elif b.type == UT_BARRACKS_RANGED:
                self.rax[b.team, b.lane, 1] = u
            if init:
                self._init_building(u, b)
        if init:
            self._init_protection()

    def _apply_start_state(self):
        """The setup's start_destroyed buildings, dead before the first tick (no side's kill, no reward), and the
        protection they gave lifted; the ancients at the setup's start_ancient_hp."""
        s = self.s
        for u, b in zip(self.building_rows, self.map.buildings):
            if b.name in self.setup.start_destroyed:
                s.uf[u, F_HP] = 0.0
                s.ui[u, I_ALIVE] = 0
        kernels.update_protection(s.ui, self.n_buildings_end)
        for team, share in enumerate(self.setup.start_ancient_hp):
            u = self.ancient_idx[team]
            s.uf[u, F_HP] = s.uf[u, F_MAXHP] * share

    def _place_waves(self):
        """The setup's start_waves: each team's waves spawned as the game would spawn them, moved to the point given
        (each wave START_WAVE_SPACING farther toward the team's fountain) and set on the last waypoint of their lane
        (the enemy's ancient); the other team's creeps of those spawns removed."""
        s = self.s
        placed = False
        for team, spec in enumerate(self.setup.start_waves):
            if spec is None or spec[0] == 0:
                continue
            count, x, y = spec
            f = self.fountain_idx[team]
            dx, dy = s.uf[f, F_X] - x, s.uf[f, F_Y] - y
            norm = math.hypot(dx, dy) or 1.0
            for w in range(count):
                used = s.ui[:, I_USED].copy()
                kernels.spawn_waves(s.uf, s.ui, s.gf, s.gi, self.wp, self.lane_on, self.rax)
                new = np.nonzero((s.ui[:, I_USED] == 1) & (used == 0))[0]
                k = 0
                for u in new:
                    if s.ui[u, I_TEAM] != team:
                        s.ui[u, I_USED] = 0
                        s.ui[u, I_ALIVE] = 0
                        continue
                    back = w * START_WAVE_SPACING
                    s.uf[u, F_X] = x + dx / norm * back + (k % 4) * 40.0 - 60.0
                    s.uf[u, F_Y] = y + dy / norm * back + (k // 4) * 40.0
                    s.ui[u, I_WP] = self.wpn[team, s.ui[u, I_LANE]] - 1
                    k += 1
                    placed = True
        if placed:
            kernels.update_vision(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis)

    def _dead_at_start(self):
        """The setup's start_dead_s: each such hero dead before the first tick (no death counted, no kill, no reward),
        respawning at its fountain after that many seconds; its buyback is on cooldown as long (else a bot with the
        gold buys back at once, and the start is no start)."""
        s = self.s
        for h, seconds in enumerate(self.setup.start_dead_s):
            if seconds > 0:
                u = s.hi[h, H_UNIT]
                s.ui[u, I_ALIVE] = 0
                s.uf[u, F_HP] = 0.0
                s.hf[h, G_RESPAWN] = float(seconds)
                s.hf[h, G_BB_CD] = float(seconds)
        if any(v > 0 for v in self.setup.start_dead_s):
            kernels.update_vision(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis)

    def _init_building(self, u, b):
        s = self.s
        if b.type == UT_TOWER:
            st = TOWER_STATS[b.tier - 1]
        elif b.type == UT_ANCIENT:
            st = CRYSTAL_STATS if self.mode == MODE_1V1 else ANCIENT_STATS
        else:
            st = {UT_BARRACKS_MELEE: BARRACKS_MELEE_STATS, UT_BARRACKS_RANGED: BARRACKS_RANGED_STATS,
                  UT_SHRINE: SHRINE_STATS, UT_FOUNTAIN: FOUNTAIN_STATS}[b.type]
        hp, armor, dmg, rng, bat, gold, vision = st
        if b.type == UT_ANCIENT:
            hp *= self.setup.ancient_hp_scale
        s.ui[u, I_USED] = 1
        s.ui[u, I_ALIVE] = 1
        s.ui[u, I_TYPE] = b.type
        s.ui[u, I_TEAM] = b.team
        s.ui[u, I_LANE] = b.lane
        s.ui[u, I_TIER] = b.tier
        s.ui[u, I_UID] = u
        s.uf[u, F_X], s.uf[u, F_Y] = b.x, b.y
        s.uf[u, F_HP] = s.uf[u, F_MAXHP] = hp
        s.uf[u, F_ARMOR], s.uf[u, F_DMG], s.uf[u, F_RANGE], s.uf[u, F_BAT] = armor, dmg, rng, bat
        s.uf[u, F_GOLD] = gold
        s.uf[u, F_VIS_DAY] = s.uf[u, F_VIS_NIGHT] = vision

    def _rows(self, type_, team, lane=None, tier=None):
        return [u for u, b in zip(self.building_rows, self.map.buildings)
                if b.type == type_ and b.team == team and (lane is None or b.lane == lane)
                and (tier is None or b.tier == tier)]

    def _protect(self, u, mode, protectors):
        self.s.ui[u, I_PROT_MODE] = mode
        for k, p in enumerate(protectors[:3]):
            self.s.ui[u, I_PROT0 + k] = p

    def _init_protection(self):
        """Tower protection order: a T2 is invulnerable while its lane's T1 stands, and so on up to the ancient."""
        for team in (RADIANT, DIRE):
            for lane in range(3):
                for tier in (2, 3):
                    for u in self._rows(UT_TOWER, team, lane, tier):
                        self._protect(u, PROT_ANY_ALIVE, self._rows(UT_TOWER, team, lane, tier - 1))
                t3 = self._rows(UT_TOWER, team, lane, 3)
                for u in self._rows(UT_BARRACKS_MELEE, team, lane) + self._rows(UT_BARRACKS_RANGED, team, lane):
                    self._protect(u, PROT_ANY_ALIVE, t3)
            all_t3 = self._rows(UT_TOWER, team, None, 3)
            for u in self._rows(UT_TOWER, team, None, 4):
                self._protect(u, PROT_ALL_ALIVE, all_t3)
            for u in self._rows(UT_SHRINE, team):
                self._protect(u, PROT_ALL_ALIVE, self._rows(UT_TOWER, team, None, 2))
            guards = self._rows(UT_TOWER, team, None, 4) or self._rows(UT_TOWER, team, None, 2)
            self._protect(self.ancient_idx[team], PROT_ANY_ALIVE, guards)

    def _init_state(self):
        s, st = self.s, self.setup
        s.gi[GI_FIRST_FREE] = self.n_heroes + len(self.map.buildings)
        s.gi[GI_NEXT_UID] = s.gi[GI_FIRST_FREE]
        s.gi[GI_CRYSTAL_ATTACKS] = 1 if self.mode == MODE_1V1 else 0
        s.gf[GF_TIME] = 0.0
        s.gf[GF_NEXT_WAVE] = float(st.first_wave_s)
        for h in range(self.n_heroes):
            team = RADIANT if h < self.team_size else DIRE
            u = h
            s.ui[u, I_USED] = 1
            s.ui[u, I_ALIVE] = 1
            s.ui[u, I_TYPE] = UT_HERO
            s.ui[u, I_TEAM] = team
            s.ui[u, I_HERO] = h
            s.ui[u, I_LANE] = -1
            s.ui[u, I_UID] = u
            s.hi[h, H_UNIT] = u
            s.hi[h, H_DEF] = self.hero_defs[h]
            s.hi[h, H_LEVEL] = 1
            if st.perturb:
                s.hf[h, list(PERTURB_COLUMNS)] = st.perturb[h]
            gold = float(st.start_gold[h]) if st.start_gold else STARTING_GOLD
            s.hf[h, G_GOLD] = gold
            self._learn(h, 1)
            target_level = int(st.start_level[h]) if st.start_level else 1
            s.hf[h, G_XP] = XP_TO_LEVEL[target_level - 1]
            self._level_ups(h)
            self._give_item(h, _TP)
            self._recompute_stats(h, full=True)
            f = self.fountain_idx[team]
            k = h % self.team_size
            sign = 1 - 2 * team
            s.uf[u, F_X] = s.uf[f, F_X] + sign * (150.0 + 60.0 * k)
            s.uf[u, F_Y] = s.uf[f, F_Y] + sign * (150.0 + 60.0 * (self.team_size - 1 - k))
            if st.spawn_offsets:
                s.uf[u, F_X] += st.spawn_offsets[h][0]
                s.uf[u, F_Y] += st.spawn_offsets[h][1]
            if st.start_positions and st.start_positions[h] is not None:
                s.uf[u, F_X], s.uf[u, F_Y] = st.start_positions[h]
        kernels.update_vision(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis)

    # ---- heroes: levels, stats, items ------------------------------------------------------------------------------
    def _learn(self, h, level):
        pick = self.ability_builds[h][level - 1]
        if pick != NO_SKILL:
            self.s.hi[h, H_AB0 + pick] += 1

    def _level_ups(self, h) -> bool:
        s = self.s
        changed = False
        while s.hi[h, H_LEVEL] < MAX_LEVEL and s.hf[h, G_XP] >= XP_TO_LEVEL[s.hi[h, H_LEVEL]]:
            s.hi[h, H_LEVEL] += 1
            self._learn(h, int(s.hi[h, H_LEVEL]))
            changed = True
        return changed

    def _recompute_stats(self, h, full=False):
        """Hero stats = definition + per-level growth + items + the O.2 perturbation; health and mana keep their
        fraction of the maximum."""
        s = self.s
        u = s.hi[h, H_UNIT]
        d = HEROES[s.hi[h, H_DEF]]
        lv = s.hi[h, H_LEVEL] - 1
        it = np.zeros(self.item_stats.shape[1])
        for k in range(INVENTORY_SLOTS):
            i = s.hi[h, H_IT0 + k]
            if i >= 0:
                it += self.item_stats[i]
        hp_frac = 1.0 if full or s.uf[u, F_MAXHP] <= 0 else s.uf[u, F_HP] / s.uf[u, F_MAXHP]
        mana_frac = 1.0 if full or s.uf[u, F_MAXMANA] <= 0 else s.uf[u, F_MANA] / s.uf[u, F_MAXMANA]
        s.uf[u, F_MAXHP] = max(1.0, d.base_hp + d.hp_per_level * lv + it[IS_HP] + s.hf[h, P_HP])
        s.uf[u, F_MAXMANA] = max(0.0, d.base_mana + d.mana_per_level * lv + it[IS_MANA])
        s.uf[u, F_HPREG] = max(0.0, d.hp_regen + 0.1 * lv + it[IS_HPREG] + s.hf[h, P_HPREG])
        s.uf[u, F_MANAREG] = max(0.0, d.mana_regen + 0.05 * lv + it[IS_MANAREG] + s.hf[h, P_MANAREG])
        s.uf[u, F_ARMOR] = d.armor + d.armor_per_level * lv + it[IS_ARMOR] + s.hf[h, P_ARMOR]
        s.uf[u, F_MRES] = min(0.9, max(0.0, 1.0 - (1.0 - d.magic_resist) * (1.0 - it[IS_MRES]) + s.hf[h, P_MRES]))
        s.uf[u, F_DMG] = max(1.0, d.damage + d.damage_per_level * lv + it[IS_DMG] + s.hf[h, P_DMG])
        s.uf[u, F_RANGE] = d.attack_range
        s.uf[u, F_BAT] = d.attack_interval
        s.uf[u, F_SPEED] = max(100.0, d.move_speed + it[IS_SPEED] + s.hf[h, P_SPEED])
        s.uf[u, F_VIS_DAY] = d.vision_day
        s.uf[u, F_VIS_NIGHT] = d.vision_night
        if s.ui[u, I_ALIVE] == 1:
            s.uf[u, F_HP] = hp_frac * s.uf[u, F_MAXHP]
        s.uf[u, F_MANA] = mana_frac * s.uf[u, F_MAXMANA]

    def _slot_of(self, h, item):
        for k in range(INVENTORY_SLOTS):
            if self.s.hi[h, H_IT0 + k] == item:
                return k
        return -1

    def _give_item(self, h, item) -> bool:
        """Adds an item to the first free slot (a consumable stacks onto its own slot). False if no room."""
        s = self.s
        k = self._slot_of(h, item) if ITEMS[item].consumable else -1
        if k < 0:
            k = self._slot_of(h, -1)
        if k < 0:
            return False
        s.hi[h, H_IT0 + k] = item
        s.hi[h, H_CH0 + k] += int(self.item_stats[item, IS_CHARGES])
        return True

    def _buy(self, h, item) -> bool:
        s = self.s
        cost = self.item_stats[item, IS_COST]
        if s.hf[h, G_GOLD] < cost or not self._give_item(h, item):
            return False
        s.hf[h, G_GOLD] -= cost
        s.hf[h, G_SPENT] += cost
        if ITEMS[item].consumable:
            s.hf[h, G_CONSUMABLES] += cost
        return True

    def _scripted_purchases(self, h):
        """F.1: keep a town portal scroll; early on keep a healing salve (and a clarity for mana heroes, a ward for
        supports); otherwise buy the next item of the build, making room by dropping consumables."""
        s = self.s
        t = s.gf[GF_TIME]
        d = HEROES[s.hi[h, H_DEF]]
        if self._slot_of(h, _TP) < 0:
            self._buy(h, _TP)
        if t < CONSUMABLES_UNTIL_S:
            if self._slot_of(h, _SALVE) < 0:
                self._buy(h, _SALVE)
            if d.base_mana >= 300 and self._slot_of(h, _CLARITY) < 0:
                self._buy(h, _CLARITY)
            if d.role == "support" and self._slot_of(h, _WARD) < 0 and int(t) % int(SUPPORT_WARD_EVERY_S) < 2:
                self._buy(h, _WARD)
        b = s.hi[h, H_BUILD]
        if b >= len(self.item_builds[h]):
            return
        item = self.item_builds[h][b]
        if s.hf[h, G_GOLD] < self.item_stats[item, IS_COST]:
            return
        if self._slot_of(h, -1) < 0:
            for c in (_WARD, _CLARITY, _SALVE):
                k = self._slot_of(h, c)
                if k >= 0:
                    s.hi[h, H_IT0 + k] = -1
                    s.hi[h, H_CH0 + k] = 0
                    break
        if self._buy(h, item):
            s.hi[h, H_BUILD] = b + 1
            self._recompute_stats(h)

    # ---- stepping --------------------------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        return float(self.s.gf[GF_TIME])

    @property
    def winner(self) -> int:
        """RADIANT, DIRE, or -1 while nobody has won."""
        return int(self.s.gi[GI_WINNER])

    @property
    def terminated(self) -> bool:
        return self.winner >= 0

    @property
    def truncated(self) -> bool:
        return not self.terminated and self.time >= self.time_limit_s - 1e-9

    def step(self, orders: np.ndarray | None = None) -> np.ndarray:
        """Advances one frameskip. `orders`: (n_heroes, NP) pending orders (see state.P_*), or None for no new
        orders. Returns the death events of this frameskip (rows of state.E_* columns)."""
        s = self.s
        if orders is not None:
            s.pend[...] = orders
        s.gi[GI_EV_N] = 0
        kernels.run_ticks(self.frameskip, s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.pend, s.vis, s.ev, self.map.terrain,
                          self.wp, self.wpn, self.lane_on, self.rax, self.abi, self.abf, self.hero_ab, self.ia_ab,
                          _IA_ITEM, self.item_stats, self.fountain_idx, self.ancient_idx, self.n_buildings_end)
        s.pend[:, P_ACTIVE] = 0.0
        for h in np.nonzero(s.hf[:, G_XP] >= XP_TO_LEVEL[np.minimum(s.hi[:, H_LEVEL], MAX_LEVEL - 1)])[0]:
            if self._level_ups(h):
                self._recompute_stats(h)
        ticks = int(round(self.time * TICKS_PER_SECOND))
        if ticks // TICKS_PER_SECOND != (ticks - self.frameskip) // TICKS_PER_SECOND:  # once per game second
            for h in range(self.n_heroes):
                self._scripted_purchases(h)
        kernels.update_vision(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis)
        self.last_events = s.ev[:s.gi[GI_EV_N]].copy()
        self._count(self.last_events)
        return self.last_events

    def _count(self, events):
        for ev in events:
            typ, team = ev[E_TYPE], ev[E_TEAM]
            st = self.stats[1 - team]
            if typ == UT_TOWER:
                st.towers += 1
            elif typ in (UT_BARRACKS_MELEE, UT_BARRACKS_RANGED):
                st.barracks += 1
            elif typ == UT_SHRINE:
                st.shrines += 1
            elif typ == UT_HERO and ev[E_KILLER] >= 0 and self.s.ui[ev[E_KILLER], I_TEAM] != team:
                st.kills += 1

    # ---- persistence -----------------------------------------------------------------------------------------------
    def save(self) -> bytes:
        return pickle.dumps({"setup": asdict(self.setup), "state": self.s.to_bytes(),
                             "stats": [asdict(t) for t in self.stats]})

    @classmethod
    def load(cls, data: bytes) -> "Game":
        d = pickle.loads(data)
        g = cls(GameSetup(**d["setup"]), _state=GameState.from_bytes(d["state"]))
        g.stats = [TeamStats(**t) for t in d["stats"]]
        return g

    # ---- reporting -------------------------------------------------------------------------------------------------
    def hero_name(self, h) -> str:
        return HEROES[self.hero_defs[h]].name

    def summary(self) -> dict:
        s = self.s
        heroes = []
        for h in range(self.n_heroes):
            heroes.append({
                "slot": h, "team": team_name(h // self.team_size), "hero": self.hero_name(h),
                "level": int(s.hi[h, H_LEVEL]), "kills": int(s.hi[h, H_KILLS]), "deaths": int(s.hi[h, H_DEATHS]),
                "assists": int(s.hi[h, H_ASSISTS]), "last_hits": int(s.hi[h, H_LH]), "denies": int(s.hi[h, H_DN]),
                "gold_earned": round(float(s.hf[h, G_EARNED]), 1), "items": [
                    ITEMS[i].name for i in s.hi[h, H_IT0:H_IT0 + INVENTORY_SLOTS] if i >= 0],
                # what the hero spent on consumables, the charges it used, and its town portal scrolls' channels
                # started and finished (moba/game/state.py H_CONSUMED, H_TP_CAST, H_TP_DONE)
                "consumables_gold": round(float(s.hf[h, G_CONSUMABLES]), 1),
                "consumables_used": int(s.hi[h, H_CONSUMED]),
                "scrolls_cast": int(s.hi[h, H_TP_CAST]), "scrolls_finished": int(s.hi[h, H_TP_DONE])})
        return {
            "mode": self.mode, "winner": winner_name(self.winner),
            "game_time_s": round(self.time, 2), "truncated": self.truncated,
            "destroyed_by": {team_name(t): asdict(self.stats[t]) for t in (RADIANT, DIRE)},
            "heroes": heroes,
        }
