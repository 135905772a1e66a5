"""Observations: one Dict per hero, modelled on Table 4 of Five (app. E), encoded by compiled kernels.

Floats are un-normalized (the model normalizes, app. E). The feature tables below are the documentation: every
feature with its unit and its source in the engine state. Each column also has an index constant named after its
table row (``UNIT_IS_ENEMY`` for "is_enemy" of UNIT_FEATURES; the repeated blocks of HERO_FEATURES through
HERO_ABILITY_1_LEVEL, HERO_ITEM_ACTION_0_COOLDOWN and HERO_ITEM_SLOT_0_CHARGES), checked against the tables at import.
Layout of one hero's observation:

==================  ===============================  ================================================================
key                 shape                            content
==================  ===============================  ================================================================
global              (N_GLOBAL,)                      GLOBAL_FEATURES (columns GLOBAL_*)
units               (U, N_UNIT)                      UNIT_FEATURES (columns UNIT_*) for up to U units: the team's
                                                     heroes (slots 0..n-1, own team first), then visible units
                                                     nearest to allied heroes first
unit_type           (U,)                             unit type + 1 (constants.UNIT_TYPE_NAMES); 0 = empty row
unit_valid          (U,)                             1 if the row holds a unit
heroes              (2n, N_HERO)                     HERO_FEATURES (columns HERO_*) for every hero: allies (team
                                                     order), then enemies
hero_id             (2n,)                            hero definition index + 1 (heroes.HEROES); 0 = enemy never seen
hero_items          (2n, INVENTORY)                  item index + 1 per inventory slot (items.ITEMS); 0 = empty or
                                                     unknown
me                  (n,)                             one-hot: which of the team's heroes this observation belongs to
private_minimap     (n, N_MINIMAP_CHANNELS,          per allied hero: nearby map, MINIMAP_CHANNELS (channels
                    MINIMAP_N, MINIMAP_N)            MINIMAP_*) on MINIMAP_N x MINIMAP_N cells of MINIMAP_CELL units
                                                     centred on the hero
private_prev_action (n, len(ACTION_KEYS))            per allied hero: its previous action (actions.ACTION_KEYS)
private_lanes       (n, N_LANE)                      per allied hero: LANE_FEATURES (columns LANE_*), its lane
                                                     assignment and the time left of its penalty (app. O.2)
action_mask         (N_PRIMARY,)                     1 = primary action available (the action filters)
unit_masks          (N_UNIT_KINDS, U)                1 = row may be the unit parameter of an action of that unit kind
action_target_type  (N_PRIMARY,)                     Table 5 target type of each primary action (abilities.TT_*)
action_unit_kind    (N_PRIMARY,)                     which unit_masks row each primary action reads (abilities.UK_*)
action_id           (N_PRIMARY,)                     embedding id (< N_ACTION_IDS): generic actions 0..N_PRIMARY-1, a
                                                     hero ability N_PRIMARY + its global ability id (tables.py)
==================  ===============================  ================================================================

The "private_*" parts and ``me`` are what differs between the five heroes of a team (Table 4, footnote e); they are
included for every teammate so that a model can run the cross-hero pool of app. H.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from numba import njit

from moba.env.actions import (A_ABILITY0, N_ACTION_KEYS, N_PRIMARY, action_mask_for, action_sizes, need_filters,
                              unit_masks_for)
from moba.game.abilities import N_TARGET_TYPES, N_UNIT_KINDS
from moba.game.constants import (CREEP_UPGRADE_EVERY_S, DAY_NIGHT_PERIOD_S, DENY_HP_FRAC, GRID_CELL, GRID_N, LANE_BOT,
                                LANE_MID, LANE_TOP, MAX_UNITS, N_UNIT_TYPES, UT_CREEP_MELEE, UT_CREEP_RANGED,
                                UT_FOUNTAIN, UT_HERO, UT_TOWER)
from moba.game.heroes import HEROES
from moba.game.items import ITEMS
from moba.game.kernels import buyback_cost, dist, is_night, unit_radius
from moba.game.state import (F_ARMOR, F_AURA_ARMOR, F_BAT, F_DBUFF, F_DMG, F_HP, F_HPREG, F_LAST_ATK, F_MANA, F_MANAREG,
                            F_MAXHP, F_MAXMANA, F_MRES, F_RANGE, F_SHIELD, F_SLOW, F_SPEED, F_STUN_T, F_TP_T, F_TP_X,
                            F_TP_Y, F_X, F_Y, G_BB_CD, G_CD0, G_GOLD, G_ICD0, G_LS_HP, G_LS_T, G_LS_X, G_LS_Y,
                            G_RESPAWN, G_XP, GF_NEXT_WAVE, GF_TIME, GI_N_HEROES, H_AB0, H_CH0, H_DEATHS, H_DEF, H_IT0,
                            H_KILLS, H_LEVEL, H_LH, H_UNIT, I_ALIVE, I_ATTACKING, I_HERO, I_INVULN, I_TARGET, I_TEAM,
                            I_TIER, I_TYPE, I_USED, INVENTORY, N_ITEM_ACTIONS)
from moba.game.tables import A_MANA, A_PASSIVE, ABILITIES_PER_HERO


def feature_names(table) -> tuple:
    """The feature names of a table of feature names or (name, unit, source) rows, in column order."""
    return tuple(row if isinstance(row, str) else row[0] for row in table)


def _check_columns(table, prefix: str, count: int, block_columns: dict | None = None):
    """Raises RuntimeError unless `table` (feature names, or (name, unit, source) rows) has `count` rows and each row
    i is column i: the module constant prefix + NAME (the name in upper case), or block_columns[name] for the rows of
    a repeated block, which have no constant of their own."""
    block_columns = block_columns or {}
    names = feature_names(table)
    for i, name in enumerate(names):
        const = prefix + name.upper()
        col = block_columns[name] if name in block_columns else globals().get(const)
        if col != i:
            raise RuntimeError(f"observation column {const} is {col}, but {name!r} is row {i} of its table")
    if len(names) != count:
        raise RuntimeError(f"the {prefix}* table has {len(names)} rows, but its column count is {count}")


# The index constants below each table are module-level ints, which numba treats as compile-time constants; they are
# written out for readers and linters, and _check_columns ties each one to its table row.

GLOBAL_FEATURES = (  # (name, unit, source)
    ("time", "s", "gf[GF_TIME]: game time"),
    ("is_night", "bool", "day/night cycle of DAY_NIGHT_PERIOD_S"),
    ("time_to_day_night_change", "s", "until the next day/night switch"),
    ("time_to_next_wave", "s", "gf[GF_NEXT_WAVE] - time"),
    ("creep_upgrades", "count", "floor(time / CREEP_UPGRADE_EVERY_S)"),
    ("own_buildings_alive", "count", "towers, barracks, shrines, ancient of the hero's team still standing"),
    ("enemy_buildings_alive", "count", "the same for the enemy team (buildings are always known)"),
    ("is_dire", "bool", "the hero's team"),
)
(GLOBAL_TIME, GLOBAL_IS_NIGHT, GLOBAL_TIME_TO_DAY_NIGHT_CHANGE, GLOBAL_TIME_TO_NEXT_WAVE, GLOBAL_CREEP_UPGRADES,
 GLOBAL_OWN_BUILDINGS_ALIVE, GLOBAL_ENEMY_BUILDINGS_ALIVE, GLOBAL_IS_DIRE, N_GLOBAL) = range(9)
_check_columns(GLOBAL_FEATURES, "GLOBAL_", N_GLOBAL)

UNIT_FEATURES = (
    ("x", "map units", "uf[F_X] (last seen position for an enemy hero in fog)"),
    ("y", "map units", "uf[F_Y]"),
    ("dx_to_me", "map units", "unit x - my x"),
    ("dy_to_me", "map units", "unit y - my y"),
    ("distance_to_me", "map units", "centre distance"),
    ("health", "hp", "uf[F_HP] (last seen for an enemy hero in fog)"),
    ("max_health", "hp", "uf[F_MAXHP]"),
    ("health_fraction", "fraction", "health / max_health"),
    ("mana_fraction", "fraction", "uf[F_MANA] / uf[F_MAXMANA]; 0 without mana"),
    ("armor", "armor", "uf[F_ARMOR] + aura armor"),
    ("magic_resist", "fraction", "uf[F_MRES]"),
    ("attack_damage", "hp", "uf[F_DMG] + damage buff"),
    ("attack_range", "map units", "uf[F_RANGE]"),
    ("attack_interval", "s", "uf[F_BAT]"),
    ("move_speed", "map units/s", "uf[F_SPEED]"),
    ("is_ally", "bool", "same team as me"),
    ("is_enemy", "bool", "other team"),
    ("is_me", "bool", "the hero this observation belongs to"),
    ("visible_now", "bool", "0 for an enemy hero reported as last seen"),
    ("time_since_seen", "s", "0 when visible"),
    ("is_attacking", "bool", "ui[I_ATTACKING]: had a target in range last tick"),
    ("time_since_last_attack", "s", "time - uf[F_LAST_ATK], capped at 10"),
    ("am_i_targeting", "bool", "my attack or spell target is this unit"),
    ("is_targeting_me", "bool", "this unit's target is me"),
    ("stun_remaining", "s", "uf[F_STUN_T]"),
    ("slow_fraction", "fraction", "uf[F_SLOW]"),
    ("shield", "hp", "uf[F_SHIELD]"),
    ("invulnerable", "bool", "ui[I_INVULN]: building protection or fountain"),
    ("level_or_tier", "level", "hero level, tower tier"),
    ("deniable", "bool", "allied creep below DENY_HP_FRAC health"),
    ("in_my_attack_range", "bool", "edge distance <= my attack range"),
)
(UNIT_X, UNIT_Y, UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_DISTANCE_TO_ME, UNIT_HEALTH, UNIT_MAX_HEALTH, UNIT_HEALTH_FRACTION,
 UNIT_MANA_FRACTION, UNIT_ARMOR, UNIT_MAGIC_RESIST, UNIT_ATTACK_DAMAGE, UNIT_ATTACK_RANGE, UNIT_ATTACK_INTERVAL,
 UNIT_MOVE_SPEED, UNIT_IS_ALLY, UNIT_IS_ENEMY, UNIT_IS_ME, UNIT_VISIBLE_NOW, UNIT_TIME_SINCE_SEEN, UNIT_IS_ATTACKING,
 UNIT_TIME_SINCE_LAST_ATTACK, UNIT_AM_I_TARGETING, UNIT_IS_TARGETING_ME, UNIT_STUN_REMAINING, UNIT_SLOW_FRACTION,
 UNIT_SHIELD, UNIT_INVULNERABLE, UNIT_LEVEL_OR_TIER, UNIT_DENIABLE, UNIT_IN_MY_ATTACK_RANGE, N_UNIT) = range(32)
_check_columns(UNIT_FEATURES, "UNIT_", N_UNIT)
# the unit columns that depend on which hero of the team observes; every other column of a unit row is the team's (its
# vision), the same in the observations of all the team's heroes
UNIT_HERO_COLUMNS = (UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_DISTANCE_TO_ME, UNIT_IS_ME, UNIT_AM_I_TARGETING,
                     UNIT_IS_TARGETING_ME, UNIT_IN_MY_ATTACK_RANGE)

ABILITY_FEATURES = (  # HERO_FEATURES holds this block once per ability k ({k} in a source: k)
    ("level", "level", "hi[H_AB{k}]"),
    ("cooldown", "s", "hf[G_CD{k}] (allies only)"),
    ("castable", "bool", "learned, active, off cooldown, enough mana (allies only)"),
    ("mana_cost", "mana", "cost at the current level"),
)
(ABILITY_LEVEL, ABILITY_COOLDOWN, ABILITY_CASTABLE, ABILITY_MANA_COST, ABILITY_COLUMNS) = range(5)
_check_columns(ABILITY_FEATURES, "ABILITY_", ABILITY_COLUMNS)

HERO_FEATURES = (
    ("alive", "bool", "ui[I_ALIVE]"),
    ("level", "level", "hi[H_LEVEL]"),
    ("deaths", "count", "hi[H_DEATHS]"),
    ("respawn_time", "s", "hf[G_RESPAWN] while dead"),
    ("gold", "gold", "hf[G_GOLD] (allies only; 0 for enemies)"),
    ("mana", "mana", "uf[F_MANA] (last seen for enemies in fog)"),
    ("max_mana", "mana", "uf[F_MAXMANA]"),
    ("mana_regen", "mana/s", "uf[F_MANAREG]"),
    ("health_regen", "hp/s", "uf[F_HPREG]"),
    ("magic_resist", "fraction", "uf[F_MRES]"),
    ("in_sight", "bool", "visible to my team now"),
    ("time_since_seen", "s", "time - hf[G_LS_T]; 0 for allies"),
    ("teleporting", "bool", "uf[F_TP_T] > 0 (a town portal channel)"),
    ("teleport_x", "map units", "uf[F_TP_X] while teleporting"),
    ("teleport_y", "map units", "uf[F_TP_Y] while teleporting"),
    ("buyback_available", "bool", "off cooldown and affordable (allies only)"),
    ("buyback_cost", "gold", "kernels.buyback_cost"),
    ("buyback_cooldown", "s", "hf[G_BB_CD] (allies only)"),
    ("xp", "xp", "hf[G_XP] (allies only)"),
    ("kills", "count", "hi[H_KILLS]"),
    ("last_hits", "count", "hi[H_LH]"),
) + tuple((f"ability_{k + 1}_{name}", unit, source.format(k=k)) for k in range(ABILITIES_PER_HERO)
          for name, unit, source in ABILITY_FEATURES) + tuple(
    (f"item_action_{k}_cooldown", "s", f"hf[G_ICD{k}] (allies only)") for k in range(N_ITEM_ACTIONS)) + tuple(
    (f"item_slot_{k}_charges", "count", f"hi[H_CH{k}] (allies only)") for k in range(INVENTORY))
(HERO_ALIVE, HERO_LEVEL, HERO_DEATHS, HERO_RESPAWN_TIME, HERO_GOLD, HERO_MANA, HERO_MAX_MANA, HERO_MANA_REGEN,
 HERO_HEALTH_REGEN, HERO_MAGIC_RESIST, HERO_IN_SIGHT, HERO_TIME_SINCE_SEEN, HERO_TELEPORTING, HERO_TELEPORT_X,
 HERO_TELEPORT_Y, HERO_BUYBACK_AVAILABLE, HERO_BUYBACK_COST, HERO_BUYBACK_COOLDOWN, HERO_XP, HERO_KILLS,
 HERO_LAST_HITS, HERO_ABILITY_1_LEVEL) = range(22)
# the repeated blocks: ability k's ABILITY_* column c is HERO_ABILITY_1_LEVEL + ABILITY_COLUMNS * k + c, item
# action k's cooldown HERO_ITEM_ACTION_0_COOLDOWN + k, inventory slot s's charges HERO_ITEM_SLOT_0_CHARGES + s
HERO_ITEM_ACTION_0_COOLDOWN = HERO_ABILITY_1_LEVEL + ABILITY_COLUMNS * ABILITIES_PER_HERO
HERO_ITEM_SLOT_0_CHARGES = HERO_ITEM_ACTION_0_COOLDOWN + N_ITEM_ACTIONS
N_HERO = HERO_ITEM_SLOT_0_CHARGES + INVENTORY
_check_columns(HERO_FEATURES, "HERO_", N_HERO, {
    **{f"ability_{k + 1}_{name}": HERO_ABILITY_1_LEVEL + ABILITY_COLUMNS * k + c
       for k in range(ABILITIES_PER_HERO) for c, (name, _, _) in enumerate(ABILITY_FEATURES)},
    **{f"item_action_{k}_cooldown": HERO_ITEM_ACTION_0_COOLDOWN + k for k in range(N_ITEM_ACTIONS)},
    **{f"item_slot_{s}_charges": HERO_ITEM_SLOT_0_CHARGES + s for s in range(INVENTORY)}})

LANE_FEATURES = (  # private_lanes; lane assignments come from the lane-assignment randomization (app. O.2)
    ("assigned_top", "bool", "lanes[h, LANE_TOP]: the top lane is one of the hero's lanes"),
    ("assigned_mid", "bool", "lanes[h, LANE_MID]"),
    ("assigned_bot", "bool", "lanes[h, LANE_BOT]"),
    ("penalty_time_left", "s", "max(0, lane_until[h] - time): until the penalty for leaving these lanes ends"),
)
(LANE_ASSIGNED_TOP, LANE_ASSIGNED_MID, LANE_ASSIGNED_BOT, LANE_PENALTY_TIME_LEFT, N_LANE) = range(5)
_check_columns(LANE_FEATURES, "LANE_", N_LANE)
# readers may take the assigned_* columns as one slice indexed by lane id (policies/agents/scripted.py)
if (LANE_ASSIGNED_TOP + LANE_TOP, LANE_ASSIGNED_TOP + LANE_MID, LANE_ASSIGNED_TOP + LANE_BOT) != (
        LANE_ASSIGNED_TOP, LANE_ASSIGNED_MID, LANE_ASSIGNED_BOT):
    raise RuntimeError("column LANE_ASSIGNED_TOP + lane must hold the assignment to that lane (constants.LANE_*)")

MINIMAP_CHANNELS = ("passable_fraction", "allied_creeps", "enemy_creeps")
(MINIMAP_PASSABLE_FRACTION, MINIMAP_ALLIED_CREEPS, MINIMAP_ENEMY_CREEPS, N_MINIMAP_CHANNELS) = range(4)
_check_columns(MINIMAP_CHANNELS, "MINIMAP_", N_MINIMAP_CHANNELS)
MINIMAP_N = 8
MINIMAP_CELL = 250.0

# ---- optional feature groups (env config ``observation_groups``) -----------------------------------------------------
# A group appends columns to a table: the env config switch that model surgery's "add observation features" op is made
# for (policies/surgery/weights.py, Five app. B, Table 1 "Obs: ..."). A table's group columns follow its own, in
# the
# order of OBSERVATION_GROUPS (whatever order a config lists them in), so a layout depends only on the set of groups.
SCOREBOARD_FEATURES = (  # appended to global
    ("own_team_kills", "count", "sum of hi[H_KILLS] over the hero's team"),
    ("enemy_team_kills", "count", "the same for the enemy team"),
    ("own_team_last_hits", "count", "sum of hi[H_LH] over the hero's team"),
    ("enemy_team_last_hits", "count", "the same for the enemy team"),
)
(SCOREBOARD_OWN_TEAM_KILLS, SCOREBOARD_ENEMY_TEAM_KILLS, SCOREBOARD_OWN_TEAM_LAST_HITS, SCOREBOARD_ENEMY_TEAM_LAST_HITS,
 N_SCOREBOARD) = range(5)
_check_columns(SCOREBOARD_FEATURES, "SCOREBOARD_", N_SCOREBOARD)
BUILDINGS_FEATURES = (  # appended to global: the buildings' state, known to both teams whatever the fog (as Dota's)
    ("own_ancient_health_fraction", "fraction", "uf[F_HP] / uf[F_MAXHP] of the hero's team's ancient (0 when dead)"),
    ("enemy_ancient_health_fraction", "fraction", "the same for the enemy team's ancient"),
    ("own_ancient_vulnerable", "bool", "ui[I_INVULN] == 0 for the team's ancient: the towers guarding it are down"),
    ("enemy_ancient_vulnerable", "bool", "the same for the enemy team's ancient"),
    ("own_towers_health_fraction", "fraction", "health of the team's towers over their summed max health (dead: 0)"),
    ("enemy_towers_health_fraction", "fraction", "the same for the enemy team's towers"),
)
(BUILDINGS_OWN_ANCIENT_HEALTH_FRACTION, BUILDINGS_ENEMY_ANCIENT_HEALTH_FRACTION, BUILDINGS_OWN_ANCIENT_VULNERABLE,
 BUILDINGS_ENEMY_ANCIENT_VULNERABLE, BUILDINGS_OWN_TOWERS_HEALTH_FRACTION, BUILDINGS_ENEMY_TOWERS_HEALTH_FRACTION,
 N_BUILDINGS) = range(7)
_check_columns(BUILDINGS_FEATURES, "BUILDINGS_", N_BUILDINGS)
# group -> (observation key, its columns); the groups' widths differ, so a space's groups are known from its width
OBSERVATION_GROUPS = {"scoreboard": ("global", SCOREBOARD_FEATURES), "buildings": ("global", BUILDINGS_FEATURES)}
# the tables whose columns have names (env config ``constant_observations``: "table.column"), and their keys
NAMED_TABLES = {"global": ("global", GLOBAL_FEATURES), "units": ("units", UNIT_FEATURES),
                "heroes": ("heroes", HERO_FEATURES), "lanes": ("private_lanes", LANE_FEATURES)}


def ordered_groups(groups) -> tuple:
    """The groups in their canonical order (OBSERVATION_GROUPS); an unknown group is a ValueError naming the allowed."""
    unknown = sorted(set(groups) - set(OBSERVATION_GROUPS))
    if unknown:
        raise ValueError(f"unknown observation group(s) {unknown}; allowed: {list(OBSERVATION_GROUPS)}")
    return tuple(g for g in OBSERVATION_GROUPS if g in set(groups))


def table_columns(groups=()) -> dict:
    """{observation key: [column names]} of the named tables with the given groups' columns appended."""
    out = {key: [row[0] for row in rows] for key, rows in NAMED_TABLES.values()}
    for g in ordered_groups(groups):
        key, rows = OBSERVATION_GROUPS[g]
        out[key] += [f"{g}.{row[0]}" for row in rows]
    return out


def column_names(groups=()) -> dict:
    """{"table.column": (observation key, column index)} of every named column (group columns included, as
    "global.scoreboard.own_team_kills")."""
    keys = {key: table for table, (key, _) in NAMED_TABLES.items()}
    return {f"{keys[key]}.{name}": (key, i) for key, names in table_columns(groups).items()
            for i, name in enumerate(names)}


def groups_of_space(space) -> tuple:
    """The observation groups of an observation space (found from the width of its global table); a ValueError when
    no set of groups gives that width."""
    import itertools
    width = space["global"].shape[-1]
    names = list(OBSERVATION_GROUPS)
    for r in range(len(names) + 1):
        for groups in itertools.combinations(names, r):
            if len(table_columns(groups)["global"]) == width:
                return tuple(groups)
    raise ValueError(f"an observation space with {width} global columns: no set of observation groups "
                     f"({names}) gives that")


def buildings_columns(game, team: int) -> np.ndarray:
    """The BUILDINGS_FEATURES of `team` (N_BUILDINGS,) float32, from the game state."""
    s = game.s
    uf, ui = s.uf, s.ui
    cols = np.zeros(N_BUILDINGS, np.float32)
    own = (BUILDINGS_OWN_ANCIENT_HEALTH_FRACTION, BUILDINGS_OWN_ANCIENT_VULNERABLE,
           BUILDINGS_OWN_TOWERS_HEALTH_FRACTION)
    enemy = (BUILDINGS_ENEMY_ANCIENT_HEALTH_FRACTION, BUILDINGS_ENEMY_ANCIENT_VULNERABLE,
             BUILDINGS_ENEMY_TOWERS_HEALTH_FRACTION)
    for t, (health, vulnerable, towers) in ((team, own), (1 - team, enemy)):
        a = game.ancient_idx[t]
        alive = ui[a, I_ALIVE] == 1
        cols[health] = uf[a, F_HP] / max(uf[a, F_MAXHP], 1.0) if alive else 0.0
        cols[vulnerable] = float(alive and ui[a, I_INVULN] == 0)
        rows = np.nonzero((ui[:, I_USED] == 1) & (ui[:, I_TYPE] == UT_TOWER) & (ui[:, I_TEAM] == t))[0]
        if len(rows):
            hp = np.where(ui[rows, I_ALIVE] == 1, uf[rows, F_HP], 0.0)
            cols[towers] = hp.sum() / max(uf[rows, F_MAXHP].sum(), 1.0)
    return cols


def encode_groups(game, groups: tuple, team: int, team_size: int) -> dict:
    """{observation key: (columns,) float32} of the groups' columns for one team (the same for its heroes)."""
    out = {}
    hi = game.s.hi
    own = slice(team * team_size, (team + 1) * team_size)
    enemy = slice((1 - team) * team_size, (2 - team) * team_size)
    for g in groups:
        if g == "scoreboard":
            cols = np.zeros(N_SCOREBOARD, np.float32)
            cols[SCOREBOARD_OWN_TEAM_KILLS] = hi[own, H_KILLS].sum()
            cols[SCOREBOARD_ENEMY_TEAM_KILLS] = hi[enemy, H_KILLS].sum()
            cols[SCOREBOARD_OWN_TEAM_LAST_HITS] = hi[own, H_LH].sum()
            cols[SCOREBOARD_ENEMY_TEAM_LAST_HITS] = hi[enemy, H_LH].sum()
        elif g == "buildings":
            cols = buildings_columns(game, team)
        key = OBSERVATION_GROUPS[g][0]
        out[key] = np.concatenate([out[key], cols]) if key in out else cols
    return out


FLOAT_BOUND = 1e6
# action_id: the generic actions are 0..N_PRIMARY-1, a hero's ability N_PRIMARY + its global ability id
# (tables.hero_ability, below ABILITIES_PER_HERO * len(HEROES)); item actions keep their generic id. The last
# SPARE_ACTION_IDS ids are never emitted: they keep the action embeddings of policies/model/five_module.py (and with
# them
# saved models and the seeded initial weights) at the size they were built with.
SPARE_ACTION_IDS = 16
N_ACTION_IDS = N_PRIMARY + ABILITIES_PER_HERO * len(HEROES) + SPARE_ACTION_IDS
PRIVATE_KEYS = ("private_minimap", "private_prev_action", "private_lanes")
# the keys whose arrays are the same in the observation of every hero of a team (what differs per hero is ``me``, the
# hero-relative columns of ``units``, the masks and the action ids): a model may encode them once per team and step
TEAM_SHARED_KEYS = ("global", "heroes", "hero_id", "hero_items", "unit_type", "unit_valid") + PRIVATE_KEYS


def observation_space(team_size: int, max_units: int, groups=(), n_primary: int = N_PRIMARY,
                      n_action_ids: int = N_ACTION_IDS) -> spaces.Dict:
    """A hero's observation space; `groups`: optional feature groups (OBSERVATION_GROUPS); `n_primary`,
    `n_action_ids`: the game's, or more for a model surgery test of an added action (policies/surgery/weights.py)."""
    n, n2, u = team_size, 2 * team_size, max_units
    extra = {key: len(names) - len(dict(NAMED_TABLES.values())[key]) for key, names in table_columns(groups).items()}
    f = lambda *shape: spaces.Box(-FLOAT_BOUND, FLOAT_BOUND, shape, np.float32)  # noqa: E731
    i = lambda high, *shape: spaces.Box(0, high, shape, np.int32)  # noqa: E731
    return spaces.Dict({
        "global": f(N_GLOBAL + extra["global"]), "units": f(u, N_UNIT), "unit_type": i(N_UNIT_TYPES, u),
        "unit_valid": i(1, u),
        "heroes": f(n2, N_HERO), "hero_id": i(len(HEROES), n2), "hero_items": i(len(ITEMS), n2, INVENTORY),
        "me": i(1, n), "private_minimap": f(n, N_MINIMAP_CHANNELS, MINIMAP_N, MINIMAP_N),
        # the largest value of any action parameter
        "private_prev_action": i(max(action_sizes(u, n_primary)) - 1, n, N_ACTION_KEYS),
        "private_lanes": f(n, N_LANE),
        "action_mask": i(1, n_primary), "unit_masks": i(1, N_UNIT_KINDS, u),
        "action_target_type": i(N_TARGET_TYPES - 1, n_primary), "action_unit_kind": i(N_UNIT_KINDS - 1, n_primary),
        "action_id": i(n_action_ids - 1, n_primary),
    })


@njit(cache=True)
def order_units(uf, ui, hi, vis, team, team_size, n_heroes, max_units, slot_units):
    """Fills slot_units (max_units,) with unit rows: the heroes (own team first), then the units visible to `team`,
    nearest to an allied alive hero first; -1 pads."""
    slot_units[:] = -1
    for k in range(n_heroes):
        h = (team * team_size + k) % n_heroes
        slot_units[k] = hi[h, H_UNIT]
    cand = np.empty(MAX_UNITS, np.int64)
    key = np.empty(MAX_UNITS, np.float64)
    nc = 0
    for v in range(MAX_UNITS):
        if ui[v, I_USED] == 0 or ui[v, I_ALIVE] == 0 or ui[v, I_TYPE] == UT_HERO or vis[team, v] == 0:
            continue
        best = 1e18
        for k in range(team_size):
            a = hi[team * team_size + k, H_UNIT]
            if ui[a, I_ALIVE] == 1:
                d = dist(uf, a, v)
                if d < best:
                    best = d
        cand[nc] = v
        key[nc] = best + v * 1e-6  # ties broken by row: deterministic
        nc += 1
    order = np.argsort(key[:nc])
    m = min(nc, max_units - n_heroes)
    for j in range(m):
        slot_units[n_heroes + j] = cand[order[j]]


@njit(cache=True)
def encode_global(ui, gf, team, n_heroes, n_buildings_end, g):
    """Fills g (N_GLOBAL,) with the GLOBAL_FEATURES of `team`."""
    t = gf[GF_TIME]
    own_b = 0
    enemy_b = 0
    for v in range(n_heroes, n_buildings_end):
        if ui[v, I_USED] == 1 and ui[v, I_ALIVE] == 1 and ui[v, I_TYPE] != UT_FOUNTAIN:
            if ui[v, I_TEAM] == team:
                own_b += 1
            else:
                enemy_b += 1
    g[GLOBAL_TIME] = t
    g[GLOBAL_IS_NIGHT] = 1.0 if is_night(t) else 0.0
    g[GLOBAL_TIME_TO_DAY_NIGHT_CHANGE] = DAY_NIGHT_PERIOD_S - (t % DAY_NIGHT_PERIOD_S)
    g[GLOBAL_TIME_TO_NEXT_WAVE] = gf[GF_NEXT_WAVE] - t
    g[GLOBAL_CREEP_UPGRADES] = np.floor(t / CREEP_UPGRADE_EVERY_S)
    g[GLOBAL_OWN_BUILDINGS_ALIVE] = own_b
    g[GLOBAL_ENEMY_BUILDINGS_ALIVE] = enemy_b
    g[GLOBAL_IS_DIRE] = team


@njit(cache=True)
def encode_unit_rows(uf, ui, hf, hi, vis, t, team, slot_units, rows, o_utype, o_uvalid):
    """Fills rows (max_units, N_UNIT) with the UNIT_FEATURES of the units in slot_units that are the same for every
    hero of `team` (encode_hero_view adds the hero-relative ones), and unit_type / unit_valid of all its heroes."""
    for i in range(rows.shape[0]):
        v = slot_units[i]
        if v < 0:
            continue
        hv = ui[v, I_HERO]
        enemy = ui[v, I_TEAM] != team
        seen = vis[team, v] == 1
        if hv >= 0 and enemy and not seen:
            if hf[hv, G_LS_T] < 0.0:
                continue  # never seen: the row stays empty
            x = hf[hv, G_LS_X]
            y = hf[hv, G_LS_Y]
            hp = hf[hv, G_LS_HP] * uf[v, F_MAXHP]
            since = t - hf[hv, G_LS_T]
        else:
            if ui[v, I_ALIVE] == 0:
                continue
            x = uf[v, F_X]
            y = uf[v, F_Y]
            hp = uf[v, F_HP]
            since = 0.0
        o_uvalid[:, i] = 1
        o_utype[:, i] = ui[v, I_TYPE] + 1
        r = rows[i]
        r[UNIT_X] = x
        r[UNIT_Y] = y
        r[UNIT_HEALTH] = hp
        r[UNIT_MAX_HEALTH] = uf[v, F_MAXHP]
        r[UNIT_HEALTH_FRACTION] = hp / max(uf[v, F_MAXHP], 1.0)
        r[UNIT_MANA_FRACTION] = uf[v, F_MANA] / uf[v, F_MAXMANA] if uf[v, F_MAXMANA] > 0 else 0.0
        r[UNIT_ARMOR] = uf[v, F_ARMOR] + uf[v, F_AURA_ARMOR]
        r[UNIT_MAGIC_RESIST] = uf[v, F_MRES]
        r[UNIT_ATTACK_DAMAGE] = uf[v, F_DMG] + uf[v, F_DBUFF]
        r[UNIT_ATTACK_RANGE] = uf[v, F_RANGE]
        r[UNIT_ATTACK_INTERVAL] = uf[v, F_BAT]
        r[UNIT_MOVE_SPEED] = uf[v, F_SPEED]
        r[UNIT_IS_ALLY] = 0.0 if enemy else 1.0
        r[UNIT_IS_ENEMY] = 1.0 if enemy else 0.0
        r[UNIT_VISIBLE_NOW] = 1.0 if (seen or not enemy) else 0.0
        r[UNIT_TIME_SINCE_SEEN] = since
        r[UNIT_IS_ATTACKING] = ui[v, I_ATTACKING]
        r[UNIT_TIME_SINCE_LAST_ATTACK] = min(10.0, t - uf[v, F_LAST_ATK]) if uf[v, F_LAST_ATK] > 0 else 10.0
        r[UNIT_STUN_REMAINING] = uf[v, F_STUN_T]
        r[UNIT_SLOW_FRACTION] = uf[v, F_SLOW]
        r[UNIT_SHIELD] = uf[v, F_SHIELD]
        r[UNIT_INVULNERABLE] = ui[v, I_INVULN]
        r[UNIT_LEVEL_OR_TIER] = hi[hv, H_LEVEL] if hv >= 0 else ui[v, I_TIER]
        typ = ui[v, I_TYPE]
        r[UNIT_DENIABLE] = 1.0 if (not enemy and (typ == UT_CREEP_MELEE or typ == UT_CREEP_RANGED)
                                   and uf[v, F_HP] < DENY_HP_FRAC * uf[v, F_MAXHP]) else 0.0


@njit(cache=True)
def encode_hero_rows(uf, ui, hf, hi, vis, t, team, team_size, abi, abf, hero_ab, rows, o_hid, o_hitems):
    """Fills rows (2n, N_HERO) with the HERO_FEATURES of every hero, allies (team order) first, then enemies, and
    hero_id / hero_items of all of `team`'s heroes."""
    n_heroes = rows.shape[0]
    for k in range(n_heroes):
        h = (team * team_size + k) % n_heroes
        u = hi[h, H_UNIT]
        ally = ui[u, I_TEAM] == team
        seen = ally or vis[team, u] == 1
        known = seen or hf[h, G_LS_T] >= 0.0
        r = rows[k]
        r[HERO_ALIVE] = ui[u, I_ALIVE]
        r[HERO_LEVEL] = hi[h, H_LEVEL]
        r[HERO_DEATHS] = hi[h, H_DEATHS]
        r[HERO_RESPAWN_TIME] = hf[h, G_RESPAWN] if ui[u, I_ALIVE] == 0 else 0.0
        r[HERO_GOLD] = hf[h, G_GOLD] if ally else 0.0
        r[HERO_MANA] = uf[u, F_MANA] if seen else 0.0
        r[HERO_MAX_MANA] = uf[u, F_MAXMANA]
        r[HERO_MANA_REGEN] = uf[u, F_MANAREG]
        r[HERO_HEALTH_REGEN] = uf[u, F_HPREG]
        r[HERO_MAGIC_RESIST] = uf[u, F_MRES]
        r[HERO_IN_SIGHT] = 1.0 if (seen and ui[u, I_ALIVE] == 1) else 0.0
        r[HERO_TIME_SINCE_SEEN] = 0.0 if ally else (t - hf[h, G_LS_T] if hf[h, G_LS_T] >= 0.0 else t)
        tp = seen and uf[u, F_TP_T] > 0.0
        r[HERO_TELEPORTING] = 1.0 if tp else 0.0
        r[HERO_TELEPORT_X] = uf[u, F_TP_X] if tp else 0.0
        r[HERO_TELEPORT_Y] = uf[u, F_TP_Y] if tp else 0.0
        cost = buyback_cost(hi[h, H_LEVEL], t)
        if ally:
            r[HERO_BUYBACK_AVAILABLE] = 1.0 if (hf[h, G_BB_CD] <= 0.0 and hf[h, G_GOLD] >= cost) else 0.0
            r[HERO_BUYBACK_COOLDOWN] = hf[h, G_BB_CD]
            r[HERO_XP] = hf[h, G_XP]
        r[HERO_BUYBACK_COST] = cost
        r[HERO_KILLS] = hi[h, H_KILLS]
        r[HERO_LAST_HITS] = hi[h, H_LH]
        for a in range(ABILITIES_PER_HERO):
            ab = hero_ab[h, a]
            lv = hi[h, H_AB0 + a]
            c = HERO_ABILITY_1_LEVEL + ABILITY_COLUMNS * a
            r[c + ABILITY_LEVEL] = lv
            if lv > 0:
                r[c + ABILITY_MANA_COST] = abf[ab, A_MANA + lv - 1]
            if ally:
                r[c + ABILITY_COOLDOWN] = hf[h, G_CD0 + a]
                r[c + ABILITY_CASTABLE] = 1.0 if (lv > 0 and abi[ab, A_PASSIVE] == 0 and hf[h, G_CD0 + a] <= 0.0
                                                  and uf[u, F_MANA] >= abf[ab, A_MANA + lv - 1]) else 0.0
        if ally:
            for a in range(N_ITEM_ACTIONS):
                r[HERO_ITEM_ACTION_0_COOLDOWN + a] = hf[h, G_ICD0 + a]
            for s in range(INVENTORY):
                r[HERO_ITEM_SLOT_0_CHARGES + s] = hi[h, H_CH0 + s]
        o_hid[:, k] = hi[h, H_DEF] + 1 if known else 0
        for s in range(INVENTORY):
            it = hi[h, H_IT0 + s]
            o_hitems[:, k, s] = it + 1 if (ally and it >= 0) else 0


@njit(cache=True)
def encode_minimaps(uf, ui, hi, vis, terrain, team, team_size, mini):
    """Fills mini (n, N_MINIMAP_CHANNELS, MINIMAP_N, MINIMAP_N) with the MINIMAP_CHANNELS around each allied hero."""
    half = MINIMAP_N * MINIMAP_CELL / 2.0
    sub = int(MINIMAP_CELL / GRID_CELL)
    for k in range(team_size):
        h = team * team_size + k
        u = hi[h, H_UNIT]
        x0 = uf[u, F_X] - half
        y0 = uf[u, F_Y] - half
        for cx in range(MINIMAP_N):
            for cy in range(MINIMAP_N):
                tot = 0.0
                for a in range(sub):
                    for b in range(sub):
                        gx = int((x0 + cx * MINIMAP_CELL + (a + 0.5) * GRID_CELL) / GRID_CELL)
                        gy = int((y0 + cy * MINIMAP_CELL + (b + 0.5) * GRID_CELL) / GRID_CELL)
                        if 0 <= gx < GRID_N and 0 <= gy < GRID_N and terrain[gx, gy] == 1:
                            tot += 1.0
                mini[k, MINIMAP_PASSABLE_FRACTION, cx, cy] = tot / (sub * sub)
        for v in range(MAX_UNITS):
            if ui[v, I_USED] == 0 or ui[v, I_ALIVE] == 0 or vis[team, v] == 0:
                continue
            typ = ui[v, I_TYPE]
            if typ != UT_CREEP_MELEE and typ != UT_CREEP_RANGED:
                continue
            cx = int((uf[v, F_X] - x0) / MINIMAP_CELL)
            cy = int((uf[v, F_Y] - y0) / MINIMAP_CELL)
            if 0 <= cx < MINIMAP_N and 0 <= cy < MINIMAP_N:
                mini[k, MINIMAP_ALLIED_CREEPS if ui[v, I_TEAM] == team else MINIMAP_ENEMY_CREEPS, cx, cy] += 1.0


@njit(cache=True)
def encode_hero_view(uf, ui, hf, hi, gf, vis, team, team_size, k, prev_actions, lanes, lane_until, abi, abf, hero_ab,
                     ia_ab, ia_item, item_stats, n_buildings_end, tt, uk, slot_units, umask, amask,
                     o_units, o_uvalid, o_me, o_prev, o_lanes, o_amask, o_umask, o_att, o_auk, o_aid):
    """Writes what is particular to the team's hero k into row k of the o_* arrays: the hero-relative columns of its
    unit rows (the shared ones are copied in already), ``me``, the private parts of its teammates, its masks and action
    ids. umask / amask: scratch arrays of unit_masks' / action_mask's shape."""
    h = team * team_size + k
    me = hi[h, H_UNIT]
    t = gf[GF_TIME]
    o_me[k, k] = 1
    for j in range(team_size):
        hj = team * team_size + j
        o_prev[k, j] = prev_actions[hj]
        o_lanes[k, j, LANE_ASSIGNED_TOP] = lanes[hj, LANE_TOP]
        o_lanes[k, j, LANE_ASSIGNED_MID] = lanes[hj, LANE_MID]
        o_lanes[k, j, LANE_ASSIGNED_BOT] = lanes[hj, LANE_BOT]
        o_lanes[k, j, LANE_PENALTY_TIME_LEFT] = max(0.0, lane_until[hj] - t)
    mx = uf[me, F_X]
    my = uf[me, F_Y]
    my_target = ui[me, I_TARGET] if ui[me, I_ALIVE] == 1 else -1
    reach = uf[me, F_RANGE] + unit_radius(UT_HERO)  # in range: centre distance - its radius <= my range + my radius
    for i in range(slot_units.shape[0]):
        v = slot_units[i]
        if v < 0 or o_uvalid[k, i] == 0:
            continue
        r = o_units[k, i]
        r[UNIT_DX_TO_ME] = r[UNIT_X] - mx
        r[UNIT_DY_TO_ME] = r[UNIT_Y] - my
        r[UNIT_DISTANCE_TO_ME] = np.sqrt(r[UNIT_DX_TO_ME] * r[UNIT_DX_TO_ME] + r[UNIT_DY_TO_ME] * r[UNIT_DY_TO_ME])
        r[UNIT_IS_ME] = 1.0 if v == me else 0.0
        r[UNIT_AM_I_TARGETING] = 1.0 if v == my_target else 0.0
        r[UNIT_IS_TARGETING_ME] = 1.0 if (ui[v, I_TARGET] == me and ui[v, I_ALIVE] == 1) else 0.0
        r[UNIT_IN_MY_ATTACK_RANGE] = 1.0 if (ui[me, I_ALIVE] == 1
                                             and r[UNIT_DISTANCE_TO_ME] - unit_radius(ui[v, I_TYPE]) <= reach) else 0.0
    unit_masks_for(uf, ui, vis, me, slot_units, umask)
    action_mask_for(uf, ui, hf, hi, gf, h, tt[h], uk[h], umask, abi, abf, hero_ab, ia_ab, ia_item, item_stats,
                    n_buildings_end, amask)
    o_umask[k] = umask
    o_amask[k] = amask
    o_att[k] = tt[h]
    o_auk[k] = uk[h]
    for a in range(N_PRIMARY):
        o_aid[k, a] = a
    for a in range(ABILITIES_PER_HERO):
        o_aid[k, A_ABILITY0 + a] = N_PRIMARY + hero_ab[h, a]


@njit(cache=True)
def encode_team(uf, ui, hf, hi, gf, gi, vis, terrain, team, team_size, max_units, prev_actions, lanes, lane_until,
                abi, abf, hero_ab, ia_ab, ia_item, item_stats, n_buildings_end, tt, uk, slot_units,
                o_global, o_units, o_utype, o_uvalid, o_heroes, o_hid, o_hitems, o_me, o_mini, o_prev, o_lanes,
                o_amask, o_umask, o_att, o_auk, o_aid):
    """Encodes the observations of the team's heroes into the o_* arrays (first axis: the team's heroes): the parts
    that all of them share once, then each hero's own."""
    n_heroes = gi[GI_N_HEROES]
    t = gf[GF_TIME]
    order_units(uf, ui, hi, vis, team, team_size, n_heroes, max_units, slot_units)
    g = np.zeros(N_GLOBAL, np.float32)
    encode_global(ui, gf, team, n_heroes, n_buildings_end, g)
    unit_rows = np.zeros((max_units, N_UNIT), np.float32)
    encode_unit_rows(uf, ui, hf, hi, vis, t, team, slot_units, unit_rows, o_utype, o_uvalid)
    hero_rows = np.zeros((n_heroes, N_HERO), np.float32)
    encode_hero_rows(uf, ui, hf, hi, vis, t, team, team_size, abi, abf, hero_ab, hero_rows, o_hid, o_hitems)
    mini = np.zeros((team_size, N_MINIMAP_CHANNELS, MINIMAP_N, MINIMAP_N), np.float32)
    encode_minimaps(uf, ui, hi, vis, terrain, team, team_size, mini)
    umask = np.zeros((N_UNIT_KINDS, max_units), np.int32)
    amask = np.zeros(N_PRIMARY, np.int32)
    for k in range(team_size):
        o_global[k] = g
        o_units[k] = unit_rows
        o_heroes[k] = hero_rows
        o_mini[k] = mini
        encode_hero_view(uf, ui, hf, hi, gf, vis, team, team_size, k, prev_actions, lanes, lane_until, abi, abf,
                         hero_ab, ia_ab, ia_item, item_stats, n_buildings_end, tt, uk, slot_units, umask, amask,
                         o_units, o_uvalid, o_me, o_prev, o_lanes, o_amask, o_umask, o_att, o_auk, o_aid)


class ObservationEncoder:
    """Allocates fresh arrays each call (RLlib keeps references to observations) and splits them per hero."""

    def __init__(self, game, max_units: int, groups=(), constant_columns=(), disabled_actions=(),
                 consumable_filters: bool = False):
        """groups: optional feature groups (OBSERVATION_GROUPS); constant_columns: (observation key, column) pairs fed
        as 0 (deprecated observations, Five app. B "Removing Model Parts"); disabled_actions: primary actions
        masked out in this game (a new action annealed in, app. B); consumable_filters: the consumables' need filters
        (actions.need_filters) on every hero's masks."""
        from moba.env.actions import hero_action_table
        self.groups = ordered_groups(groups)
        self.constant_columns = tuple(constant_columns)
        self.disabled_actions = tuple(disabled_actions)
        self.consumable_filters = bool(consumable_filters)
        self.game = game
        self.max_units = max_units
        self.team_size = game.team_size
        self.tt, self.uk = hero_action_table(game.hero_ab, game.abi, game.ia_ab)
        self.slot_units = np.full((2, max_units), -1, np.int64)
        self.masks = [None, None]  # per team, the last encode's (action_mask, unit_masks) of its heroes (decode_team)
        from moba.game.engine import _IA_ITEM
        self._ia_item = _IA_ITEM

    def encode(self, prev_actions, lanes, lane_until) -> list[dict]:
        """Observations of every hero (hero slot order). Also refreshes self.slot_units[team] (row -> unit) and
        self.masks[team] (the team's action masks, which the per-hero observations view)."""
        g, s, n, u = self.game, self.game.s, self.team_size, self.max_units
        obs = []
        for team in (0, 1):
            arrs = {
                "global": np.zeros((n, N_GLOBAL), np.float32), "units": np.zeros((n, u, N_UNIT), np.float32),
                "unit_type": np.zeros((n, u), np.int32), "unit_valid": np.zeros((n, u), np.int32),
                "heroes": np.zeros((n, 2 * n, N_HERO), np.float32), "hero_id": np.zeros((n, 2 * n), np.int32),
                "hero_items": np.zeros((n, 2 * n, INVENTORY), np.int32), "me": np.zeros((n, n), np.int32),
                "private_minimap": np.zeros((n, n, N_MINIMAP_CHANNELS, MINIMAP_N, MINIMAP_N), np.float32),
                "private_prev_action": np.zeros((n, n, N_ACTION_KEYS), np.int32),
                "private_lanes": np.zeros((n, n, N_LANE), np.float32),
                "action_mask": np.zeros((n, N_PRIMARY), np.int32),
                "unit_masks": np.zeros((n, N_UNIT_KINDS, u), np.int32),
                "action_target_type": np.zeros((n, N_PRIMARY), np.int32),
                "action_unit_kind": np.zeros((n, N_PRIMARY), np.int32),
                "action_id": np.zeros((n, N_PRIMARY), np.int32),
            }
            encode_team(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis, g.map.terrain, team, n, u, prev_actions, lanes,
                        lane_until, g.abi, g.abf, g.hero_ab, g.ia_ab, self._ia_item, g.item_stats,
                        g.n_buildings_end, self.tt, self.uk, self.slot_units[team], *arrs.values())
            if self.groups:
                for key, cols in encode_groups(g, self.groups, team, n).items():
                    arrs[key] = np.concatenate([arrs[key], np.broadcast_to(cols, (n, cols.shape[0]))], -1)
            for key, col in self.constant_columns:
                arrs[key][..., col] = 0.0
            if self.consumable_filters:
                need_filters(s.uf, s.hi[team * n:(team + 1) * n, H_UNIT], self.slot_units[team], arrs["action_mask"],
                             arrs["unit_masks"])
            if self.disabled_actions:
                arrs["action_mask"][:, list(self.disabled_actions)] = 0
            self.masks[team] = arrs["action_mask"], arrs["unit_masks"]
            obs.extend({k: v[i] for k, v in arrs.items()} for i in range(n))
        return obs
