"""Observations: one Dict per hero, modelled on Table 4 of seeds/003 (app. E), encoded by compiled kernels.

Floats are un-normalized (the model normalizes, app. E). The feature tables below are the documentation: every
feature with its unit and its source in the engine state. Layout of one hero's observation:

==================  ===========================  ====================================================================
key                 shape                        content
==================  ===========================  ====================================================================
global              (N_GLOBAL,)                  GLOBAL_FEATURES
units               (U, N_UNIT)                  UNIT_FEATURES for up to U units: the team's heroes (slots 0..n-1,
                                                 own team first), then visible units nearest to allied heroes first
unit_type           (U,)                         unit type + 1 (constants.UNIT_TYPE_NAMES); 0 = empty row
unit_valid          (U,)                         1 if the row holds a unit
heroes              (2n, N_HERO)                 HERO_FEATURES for every hero: allies (team order), then enemies
hero_id             (2n,)                        hero definition index + 1 (heroes.HEROES); 0 = enemy never seen
hero_items          (2n, 6)                      item index + 1 per inventory slot (items.ITEMS); 0 = empty/unknown
me                  (n,)                         one-hot: which of the team's heroes this observation belongs to
private_minimap     (n, 3, 8, 8)                 per allied hero: nearby map, MINIMAP_CHANNELS on 8x8 cells of
                                                 MINIMAP_CELL units centred on the hero
private_prev_action (n, 5)                       per allied hero: its previous action (actions.ACTION_KEYS)
private_lanes       (n, 4)                       per allied hero: lane assignment top/mid/bot (0/1) and seconds
                                                 left of the lane-assignment penalty (app. O.2)
action_mask         (N_PRIMARY,)                 1 = primary action available (the action filters)
unit_masks          (N_UNIT_KINDS, U)            1 = row may be the unit parameter of an action of that unit kind
action_target_type  (N_PRIMARY,)                 Table 5 target type of each primary action (abilities.TT_*)
action_unit_kind    (N_PRIMARY,)                 which unit_masks row each primary action reads (abilities.UK_*)
action_id           (N_PRIMARY,)                 embedding id: generic actions 0..N_PRIMARY-1, a hero ability
                                                 N_PRIMARY + its global ability id (tables.py)
==================  ===========================  ====================================================================

The "private_*" parts and ``me`` are what differs between the five heroes of a team (Table 4, footnote e); they are
included for every teammate so that a model can run the cross-hero pool of app. H.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from numba import njit

from app.env.actions import N_PRIMARY, action_mask_for, unit_masks_for
from app.game.abilities import N_TARGET_TYPES, N_UNIT_KINDS
from app.game.constants import (DAY_NIGHT_PERIOD_S, GRID_CELL, GRID_N, MAX_UNITS, N_UNIT_TYPES, UT_CREEP_MELEE,
                                UT_CREEP_RANGED, UT_FOUNTAIN, UT_HERO, WAVE_INTERVAL_S, CREEP_UPGRADE_EVERY_S,
                                DENY_HP_FRAC)
from app.game.heroes import HEROES
from app.game.items import ITEMS
from app.game.kernels import alive, buyback_cost, dist, edge_dist, is_night, unit_radius
from app.game.state import *  # noqa: F401,F403  (column constants)
from app.game.tables import A_MANA, A_PASSIVE

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
) + tuple(item for k in range(4) for item in (
    (f"ability_{k + 1}_level", "level", f"hi[H_AB{k}]"),
    (f"ability_{k + 1}_cooldown", "s", f"hf[G_CD{k}] (allies only)"),
    (f"ability_{k + 1}_castable", "bool", "learned, active, off cooldown, enough mana (allies only)"),
    (f"ability_{k + 1}_mana_cost", "mana", "cost at the current level"),
)) + tuple((f"item_action_{k}_cooldown", "s", f"hf[G_ICD{k}] (allies only)") for k in range(7)) + tuple(
    (f"item_slot_{k}_charges", "count", f"hi[H_CH{k}] (allies only)") for k in range(6))
MINIMAP_CHANNELS = ("passable_fraction", "allied_creeps", "enemy_creeps")
MINIMAP_N = 8
MINIMAP_CELL = 250.0
N_GLOBAL, N_UNIT, N_HERO = len(GLOBAL_FEATURES), len(UNIT_FEATURES), len(HERO_FEATURES)
FLOAT_BOUND = 1e6
N_ACTION_IDS = N_PRIMARY + 4 * len(HEROES) + 16
PRIVATE_KEYS = ("private_minimap", "private_prev_action", "private_lanes")


def observation_space(team_size: int, max_units: int) -> spaces.Dict:
    n, n2, u = team_size, 2 * team_size, max_units
    f = lambda *shape: spaces.Box(-FLOAT_BOUND, FLOAT_BOUND, shape, np.float32)  # noqa: E731
    i = lambda high, *shape: spaces.Box(0, high, shape, np.int32)  # noqa: E731
    return spaces.Dict({
        "global": f(N_GLOBAL), "units": f(u, N_UNIT), "unit_type": i(N_UNIT_TYPES, u), "unit_valid": i(1, u),
        "heroes": f(n2, N_HERO), "hero_id": i(len(HEROES), n2), "hero_items": i(len(ITEMS), n2, 6),
        "me": i(1, n), "private_minimap": f(n, len(MINIMAP_CHANNELS), MINIMAP_N, MINIMAP_N),
        "private_prev_action": i(max(N_PRIMARY, u, 9) - 1, n, 5), "private_lanes": f(n, 4),
        "action_mask": i(1, N_PRIMARY), "unit_masks": i(1, N_UNIT_KINDS, u),
        "action_target_type": i(N_TARGET_TYPES - 1, N_PRIMARY), "action_unit_kind": i(N_UNIT_KINDS - 1, N_PRIMARY),
        "action_id": i(N_ACTION_IDS - 1, N_PRIMARY),
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
def encode_team(uf, ui, hf, hi, gf, gi, vis, terrain, team, team_size, max_units, prev_actions, lanes, lane_until,
                abi, abf, hero_ab, ia_ab, ia_item, item_stats, n_buildings_end, tt, uk, slot_units,
                o_global, o_units, o_utype, o_uvalid, o_heroes, o_hid, o_hitems, o_me, o_mini, o_prev, o_lanes,
                o_amask, o_umask, o_att, o_auk, o_aid):
    """Encodes the observations of the team's heroes into the o_* arrays (first axis: the team's heroes)."""
    n_heroes = gi[GI_N_HEROES]
    t = gf[GF_TIME]
    order_units(uf, ui, hi, vis, team, team_size, n_heroes, max_units, slot_units)
    # ---- global ----
    own_b = 0
    enemy_b = 0
    for v in range(n_heroes, n_buildings_end):
        if ui[v, I_USED] == 1 and ui[v, I_ALIVE] == 1 and ui[v, I_TYPE] != UT_FOUNTAIN:
            if ui[v, I_TEAM] == team:
                own_b += 1
            else:
                enemy_b += 1
    g = np.zeros(8, np.float32)
    g[0] = t
    g[1] = 1.0 if is_night(t) else 0.0
    g[2] = DAY_NIGHT_PERIOD_S - (t % DAY_NIGHT_PERIOD_S)
    g[3] = gf[GF_NEXT_WAVE] - t
    g[4] = np.floor(t / CREEP_UPGRADE_EVERY_S)
    g[5] = own_b
    g[6] = enemy_b
    g[7] = team
    # ---- shared unit rows ----
    shared = np.zeros((max_units, 31), np.float32)
    for i in range(max_units):
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
        r = shared[i]
        r[0] = x
        r[1] = y
        r[5] = hp
        r[6] = uf[v, F_MAXHP]
        r[7] = hp / max(uf[v, F_MAXHP], 1.0)
        r[8] = uf[v, F_MANA] / uf[v, F_MAXMANA] if uf[v, F_MAXMANA] > 0 else 0.0
        r[9] = uf[v, F_ARMOR] + uf[v, F_AURA_ARMOR]
        r[10] = uf[v, F_MRES]
        r[11] = uf[v, F_DMG] + uf[v, F_DBUFF]
        r[12] = uf[v, F_RANGE]
        r[13] = uf[v, F_BAT]
        r[14] = uf[v, F_SPEED]
        r[15] = 0.0 if enemy else 1.0
        r[16] = 1.0 if enemy else 0.0
        r[18] = 1.0 if (seen or not enemy) else 0.0
        r[19] = since
        r[20] = ui[v, I_ATTACKING]
        r[21] = min(10.0, t - uf[v, F_LAST_ATK]) if uf[v, F_LAST_ATK] > 0 else 10.0
        r[24] = uf[v, F_STUN_T]
        r[25] = uf[v, F_SLOW]
        r[26] = uf[v, F_SHIELD]
        r[27] = ui[v, I_INVULN]
        r[28] = hi[hv, H_LEVEL] if hv >= 0 else ui[v, I_TIER]
        typ = ui[v, I_TYPE]
        r[29] = 1.0 if (not enemy and (typ == UT_CREEP_MELEE or typ == UT_CREEP_RANGED)
                        and uf[v, F_HP] < DENY_HP_FRAC * uf[v, F_MAXHP]) else 0.0
    # ---- hero rows (allies first, then enemies) ----
    hrows = np.zeros((n_heroes, o_heroes.shape[2]), np.float32)
    for k in range(n_heroes):
        h = (team * team_size + k) % n_heroes
        u = hi[h, H_UNIT]
        ally = ui[u, I_TEAM] == team
        seen = ally or vis[team, u] == 1
        known = seen or hf[h, G_LS_T] >= 0.0
        r = hrows[k]
        r[0] = ui[u, I_ALIVE]
        r[1] = hi[h, H_LEVEL]
        r[2] = hi[h, H_DEATHS]
        r[3] = hf[h, G_RESPAWN] if ui[u, I_ALIVE] == 0 else 0.0
        r[4] = hf[h, G_GOLD] if ally else 0.0
        r[5] = uf[u, F_MANA] if seen else 0.0
        r[6] = uf[u, F_MAXMANA]
        r[7] = uf[u, F_MANAREG]
        r[8] = uf[u, F_HPREG]
        r[9] = uf[u, F_MRES]
        r[10] = 1.0 if (seen and ui[u, I_ALIVE] == 1) else 0.0
        r[11] = 0.0 if ally else (t - hf[h, G_LS_T] if hf[h, G_LS_T] >= 0.0 else t)
        tp = seen and uf[u, F_TP_T] > 0.0
        r[12] = 1.0 if tp else 0.0
        r[13] = uf[u, F_TP_X] if tp else 0.0
        r[14] = uf[u, F_TP_Y] if tp else 0.0
        cost = buyback_cost(hi[h, H_LEVEL], t)
        if ally:
            r[15] = 1.0 if (hf[h, G_BB_CD] <= 0.0 and hf[h, G_GOLD] >= cost) else 0.0
            r[17] = hf[h, G_BB_CD]
            r[18] = hf[h, G_XP]
        r[16] = cost
        r[19] = hi[h, H_KILLS]
        r[20] = hi[h, H_LH]
        for a in range(4):
            ab = hero_ab[h, a]
            lv = hi[h, H_AB0 + a]
            c = 21 + 4 * a
            r[c] = lv
            if lv > 0:
                r[c + 3] = abf[ab, A_MANA + lv - 1]
            if ally:
                r[c + 1] = hf[h, G_CD0 + a]
                r[c + 2] = 1.0 if (lv > 0 and abi[ab, A_PASSIVE] == 0 and hf[h, G_CD0 + a] <= 0.0
                                   and uf[u, F_MANA] >= abf[ab, A_MANA + lv - 1]) else 0.0
        if ally:
            for a in range(7):
                r[37 + a] = hf[h, G_ICD0 + a]
            for s in range(6):
                r[44 + s] = hi[h, H_CH0 + s]
        o_hid[:, k] = hi[h, H_DEF] + 1 if known else 0
        for s in range(6):
            it = hi[h, H_IT0 + s]
            o_hitems[:, k, s] = it + 1 if (ally and it >= 0) else 0
    # ---- private parts of every allied hero ----
    half = MINIMAP_N * MINIMAP_CELL / 2.0
    sub = int(MINIMAP_CELL / GRID_CELL)
    mini = np.zeros((team_size, 3, MINIMAP_N, MINIMAP_N), np.float32)
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
                mini[k, 0, cx, cy] = tot / (sub * sub)
        for v in range(MAX_UNITS):
            if ui[v, I_USED] == 0 or ui[v, I_ALIVE] == 0 or vis[team, v] == 0:
                continue
            typ = ui[v, I_TYPE]
            if typ != UT_CREEP_MELEE and typ != UT_CREEP_RANGED:
                continue
            cx = int((uf[v, F_X] - x0) / MINIMAP_CELL)
            cy = int((uf[v, F_Y] - y0) / MINIMAP_CELL)
            if 0 <= cx < MINIMAP_N and 0 <= cy < MINIMAP_N:
                mini[k, 1 if ui[v, I_TEAM] == team else 2, cx, cy] += 1.0
    # ---- per hero ----
    umask = np.zeros((o_umask.shape[1], max_units), np.int32)
    amask = np.zeros(o_amask.shape[1], np.int32)
    for k in range(team_size):
        h = team * team_size + k
        me = hi[h, H_UNIT]
        o_global[k] = g
        o_heroes[k] = hrows
        o_me[k, k] = 1
        o_mini[k] = mini
        for j in range(team_size):
            o_prev[k, j] = prev_actions[team * team_size + j]
            for l in range(3):
                o_lanes[k, j, l] = lanes[team * team_size + j, l]
            o_lanes[k, j, 3] = max(0.0, lane_until[team * team_size + j] - t)
        mx = uf[me, F_X]
        my = uf[me, F_Y]
        my_target = ui[me, I_TARGET] if ui[me, I_ALIVE] == 1 else -1
        for i in range(max_units):
            v = slot_units[i]
            o_units[k, i] = shared[i]
            if v < 0 or o_uvalid[k, i] == 0:
                continue
            r = o_units[k, i]
            r[2] = r[0] - mx
            r[3] = r[1] - my
            r[4] = np.sqrt(r[2] * r[2] + r[3] * r[3])
            r[17] = 1.0 if v == me else 0.0
            r[22] = 1.0 if v == my_target else 0.0
            r[23] = 1.0 if (ui[v, I_TARGET] == me and ui[v, I_ALIVE] == 1) else 0.0
            r[30] = 1.0 if (ui[me, I_ALIVE] == 1 and r[4] - unit_radius(ui[v, I_TYPE])
                            <= uf[me, F_RANGE] + unit_radius(UT_HERO)) else 0.0
        unit_masks_for(uf, ui, vis, me, slot_units, umask)
        action_mask_for(uf, ui, hf, hi, gf, h, tt[h], uk[h], umask, abi, abf, hero_ab, ia_ab, ia_item, item_stats,
                        n_buildings_end, amask)
        o_umask[k] = umask
        o_amask[k] = amask
        o_att[k] = tt[h]
        o_auk[k] = uk[h]
        for a in range(o_aid.shape[1]):
            o_aid[k, a] = a
        for a in range(4):
            o_aid[k, 3 + a] = o_aid.shape[1] + hero_ab[h, a]


class ObservationEncoder:
    """Allocates fresh arrays each call (RLlib keeps references to observations) and splits them per hero."""

    def __init__(self, game, max_units: int):
        from app.env.actions import hero_action_table
        self.game = game
        self.max_units = max_units
        self.team_size = game.team_size
        self.tt, self.uk = hero_action_table(game.hero_ab, game.abi, game.ia_ab)
        self.slot_units = np.full((2, max_units), -1, np.int64)
        from app.game.engine import _IA_ITEM
        self._ia_item = _IA_ITEM

    def encode(self, prev_actions, lanes, lane_until) -> list[dict]:
        """Observations of every hero (hero slot order). Also refreshes self.slot_units[team] (row -> unit)."""
        g, s, n, u = self.game, self.game.s, self.team_size, self.max_units
        obs = []
        for team in (0, 1):
            arrs = {
                "global": np.zeros((n, N_GLOBAL), np.float32), "units": np.zeros((n, u, N_UNIT), np.float32),
                "unit_type": np.zeros((n, u), np.int32), "unit_valid": np.zeros((n, u), np.int32),
                "heroes": np.zeros((n, 2 * n, N_HERO), np.float32), "hero_id": np.zeros((n, 2 * n), np.int32),
                "hero_items": np.zeros((n, 2 * n, 6), np.int32), "me": np.zeros((n, n), np.int32),
                "private_minimap": np.zeros((n, n, len(MINIMAP_CHANNELS), MINIMAP_N, MINIMAP_N), np.float32),
                "private_prev_action": np.zeros((n, n, 5), np.int32), "private_lanes": np.zeros((n, n, 4), np.float32),
                "action_mask": np.zeros((n, N_PRIMARY), np.int32),
                "unit_masks": np.zeros((n, N_UNIT_KINDS, u), np.int32),
                "action_target_type": np.zeros((n, N_PRIMARY), np.int32),
                "action_unit_kind": np.zeros((n, N_PRIMARY), np.int32),
                "action_id": np.zeros((n, N_PRIMARY), np.int32),
            }
            encode_team(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis, g.map.terrain, team, n, u, prev_actions, lanes,
                        lane_until, g.abi, g.abf, g.hero_ab, g.ia_ab, self._ia_item, g.item_stats,
                        g.n_buildings_end, self.tt, self.uk, self.slot_units[team], *arrs.values())
            obs.extend({k: v[i] for k, v in arrs.items()} for i in range(n))
        return obs
