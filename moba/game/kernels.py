"""Compiled game rules: one call advances the game by a frameskip of ticks. No Python objects, no per-unit Python loop.

Everything here is ``numba.njit(cache=True)`` over the structure-of-arrays state of ``state.py``. The loops run in a
fixed order and use no randomness, so the same state and orders give the same next state, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from moba.game.abilities import (AFFECT_ALLIES, AREA_CIRCLE_POINT, AREA_CIRCLE_SELF, AREA_LINE, AREA_SELF, AREA_TARGET,
                                CONE_HALF_ANGLE_DEG, EFFECT_AURA, EFFECT_BLINK, EFFECT_DAMAGE, EFFECT_DAMAGE_BUFF,
                                EFFECT_DOT, EFFECT_HEAL, EFFECT_MANA_REGEN, EFFECT_REGEN, EFFECT_SHIELD, EFFECT_SLOW,
                                EFFECT_STUN, EFFECT_WARD, TT_NO_TARGET, TT_POINT, TT_TELEPORT, TT_UNIT, TT_UNIT_OFFSET,
                                TT_WARD, UK_ALLY, UK_ENEMY)
from moba.game.constants import (ASSIST_WINDOW_S, BUYBACK_BASE_GOLD, BUYBACK_COOLDOWN_S, BUYBACK_PER_LEVEL2,
                                BUYBACK_PER_MINUTE, CREEP_AGGRO_RANGE, CREEP_STATS, CREEP_UPGRADE_EVERY_S,
                                CREEP_UPGRADE_FRAC, CREEP_WAYPOINT_REACHED, CREEPS_PER_WAVE, DAY_NIGHT_PERIOD_S,
                                DENY_HP_FRAC, DT, FOUNTAIN_HEAL_FRAC, FOUNTAIN_HEAL_RADIUS, GRID_CELL, GRID_N,
                                HERO_ASSIST_GOLD, HERO_KILL_GOLD_BASE, HERO_KILL_GOLD_PER_LEVEL, HERO_KILL_XP_BASE,
                                HERO_KILL_XP_PER_LEVEL, MAP_SIZE, MAX_UNITS, MEGA_CREEP_MULT, PASSIVE_GOLD_PER_S,
                                RESPAWN_BASE_S, RESPAWN_PER_LEVEL_S, SHRINE_COOLDOWN_S, SHRINE_DURATION_S,
                                SHRINE_HEAL_PER_S, SHRINE_MANA_PER_S, SHRINE_RADIUS, SUPER_CREEP_MULT, TOWER_AGGRO_S,
                                UT_ANCIENT, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_CREEP_MELEE, UT_CREEP_RANGED,
                                UT_FOUNTAIN, UT_HERO, UT_SHRINE, UT_TOWER, UT_WARD, WAVE_INTERVAL_S, XP_SHARE_RADIUS)
from moba.game.items import TELEPORT_CHANNEL_S
from moba.game.state import (CREEP_MEGA, CREEP_NORMAL, CREEP_SUPER, E_FLAG, E_KILLER, E_KIND, E_TEAM, E_TYPE, E_VICTIM,
                            EV_DEATH, F_AGGRO_T, F_ARMOR, F_ATK_T, F_AURA_ARMOR, F_BAT, F_DBUFF, F_DBUFF_T, F_DEST_X,
                            F_DEST_Y, F_DMG, F_DOT_DPS, F_DOT_T, F_GOLD, F_HP, F_HPREG, F_LAST_ATK, F_LIFE_T, F_MANA,
                            F_MANAREG, F_MAXHP, F_MAXMANA, F_MREGEN, F_MREGEN_T, F_MRES, F_OFF_X, F_OFF_Y, F_RANGE,
                            F_REGEN, F_REGEN_T, F_SHIELD, F_SHIELD_T, F_SHRINE_CD, F_SHRINE_T, F_SLOW, F_SLOW_T,
                            F_SPEED, F_STUN_T, F_TP_T, F_TP_X, F_TP_Y, F_VIS_DAY, F_VIS_NIGHT, F_X, F_XP, F_Y, G_BB_CD,
                            G_CD0, G_DMGT0, G_EARNED, G_GOLD, G_ICD0, G_ICD6, G_LS_HP, G_LS_T, G_LS_X, G_LS_Y,
                            G_RESPAWN, G_XP, GF_NEXT_WAVE, GF_TIME, GI_CRYSTAL_ATTACKS, GI_EV_N, GI_FIRST_FREE,
                            GI_N_HEROES, GI_NEXT_UID, GI_TICK, GI_WINNER, H_AB0, H_ASSISTS, H_BUYBACKS, H_CH0,
                            H_CONSUMED, H_DEATHS, H_DN, H_IT0, H_KILLS, H_LEVEL, H_LH, H_TOWERS, H_TP_CAST,
                            H_TP_DONE, H_UNIT, I_ALIVE, I_ATTACKING, I_CAST_AB, I_CAST_ITEM, I_CAST_LV, I_CAST_SLOT,
                            I_CREEP_KIND, I_DOT_SRC, I_HERO, I_INVULN, I_LANE, I_LAST_DMG,
                            I_ORDER, I_PROT0, I_PROT1, I_PROT2, I_PROT_MODE, I_TARGET, I_TEAM, I_TYPE,
                            I_UID, I_USED, I_WP, INVENTORY, MAX_EVENTS, OK_ABILITY, OK_ATTACK, OK_BUYBACK, OK_ITEM,
                            OK_MOVE, OK_SHRINE, ORDER_ATTACK, ORDER_CAST, ORDER_IDLE, ORDER_MOVE, P_ACTIVE, P_ARG,
                            P_KIND, P_TICK, P_UNIT, P_X, P_Y, PROT_ALL_ALIVE, PROT_ANY_ALIVE)
from moba.game.tables import (A_AMT, A_CD, A_DUR, A_E0, A_EA0, A_EF0, A_EFF_STRIDE, A_EK0, A_MANA, A_NEFF, A_PASSIVE,
                             A_RAD, A_RANGE, A_TT, A_UK, ABILITIES_PER_HERO, IS_CONSUMABLE)

COS_CONE = math.cos(math.radians(CONE_HALF_ANGLE_DEG))
WARD_HP = 200.0


@njit(cache=True)
def unit_radius(t):
    """Collision radius by unit type: attack ranges are measured edge to edge."""
    if t == UT_HERO:
        return 24.0
    if t == UT_CREEP_MELEE or t == UT_CREEP_RANGED:
        return 16.0
    if t == UT_TOWER:
        return 100.0
    if t == UT_BARRACKS_MELEE or t == UT_BARRACKS_RANGED:
        return 120.0
    if t == UT_ANCIENT or t == UT_FOUNTAIN:
        return 150.0
    if t == UT_SHRINE:
        return 80.0
    return 10.0


@njit(cache=True)
def is_night(time):
    return (int(time / DAY_NIGHT_PERIOD_S) % 2) == 1


@njit(cache=True)
def dist(uf, a, b):
    dx = uf[a, F_X] - uf[b, F_X]
    dy = uf[a, F_Y] - uf[b, F_Y]
    return math.sqrt(dx * dx + dy * dy)


@njit(cache=True)
def edge_dist(uf, ui, a, b):
    return dist(uf, a, b) - unit_radius(ui[b, I_TYPE])


@njit(cache=True)
def passable(terrain, x, y):
    ix = int(x / GRID_CELL)
    iy = int(y / GRID_CELL)
    if ix < 0 or iy < 0 or ix >= GRID_N or iy >= GRID_N:
        return False
    return terrain[ix, iy] == 1


@njit(cache=True)
def armor_multiplier(armor):
    """Dota 2's physical damage multiplier."""
    return 1.0 - (0.052 * armor) / (0.9 + 0.048 * abs(armor))


@njit(cache=True)
def is_mobile(t):
    return t == UT_HERO or t == UT_CREEP_MELEE or t == UT_CREEP_RANGED


@njit(cache=True)
def alive(ui, u):
    return u >= 0 and ui[u, I_USED] == 1 and ui[u, I_ALIVE] == 1


@njit(cache=True)
def can_attack(uf, ui, vis, a, b):
    """Whether unit a may attack unit b: b alive, not invulnerable, not a fountain; an enemy, or an allied creep
    below DENY_HP_FRAC health (a deny, heroes only); for heroes, b must be visible to a's team."""
    if not alive(ui, b) or a == b:
        return False
    tb = ui[b, I_TYPE]
    if ui[b, I_INVULN] == 1 or tb == UT_FOUNTAIN:
        return False
    if ui[a, I_TYPE] == UT_HERO and vis[ui[a, I_TEAM], b] == 0:
        return False
    if ui[b, I_TEAM] != ui[a, I_TEAM]:
        return True
    return (ui[a, I_TYPE] == UT_HERO and (tb == UT_CREEP_MELEE or tb == UT_CREEP_RANGED)
            and uf[b, F_HP] < DENY_HP_FRAC * uf[b, F_MAXHP])


@njit(cache=True)
def can_target_spell(ui, vis, caster, b, unit_kind):
    """Whether a unit-target spell of `unit_kind` cast by `caster` may target b (heroes and creeps only)."""
    if not alive(ui, b) or not is_mobile(ui[b, I_TYPE]):
        return False
    if unit_kind == UK_ENEMY:
        return ui[b, I_TEAM] != ui[caster, I_TEAM] and vis[ui[caster, I_TEAM], b] == 1 and ui[b, I_INVULN] == 0
    if unit_kind == UK_ALLY:
        return ui[b, I_TEAM] == ui[caster, I_TEAM]
    return False


@njit(cache=True)
def move_toward(uf, ui, terrain, u, tx, ty, stop):
    """Moves unit u one tick toward (tx, ty), stopping `stop` short. Slides along blocked cells. True on arrival."""
    dx = tx - uf[u, F_X]
    dy = ty - uf[u, F_Y]
    d = math.sqrt(dx * dx + dy * dy)
    if d <= stop + 1e-6:
        return True
    step = uf[u, F_SPEED] * (1.0 - uf[u, F_SLOW]) * DT
    s = min(step, d - stop)
    nx = uf[u, F_X] + dx / d * s
    ny = uf[u, F_Y] + dy / d * s
    if passable(terrain, nx, ny):
        uf[u, F_X] = nx
        uf[u, F_Y] = ny
    elif abs(dx) > 1e-9 and passable(terrain, uf[u, F_X] + math.copysign(s, dx), uf[u, F_Y]):
        uf[u, F_X] += math.copysign(s, dx)
    elif abs(dy) > 1e-9 and passable(terrain, uf[u, F_X], uf[u, F_Y] + math.copysign(s, dy)):
        uf[u, F_Y] += math.copysign(s, dy)
    else:
        return True  # blocked: give up
    return s >= d - stop - 1e-6


@njit(cache=True)
def deal_damage(uf, ui, hf, gf, src, dst, amount, magical):
    """Applies damage after armor or magic resistance and shields; records the last damager and hero-on-hero hits
    (assists, tower and creep aggro). Returns the damage dealt."""
    if ui[dst, I_INVULN] == 1 or ui[dst, I_ALIVE] == 0:
        return 0.0
    if magical:
        amount *= 1.0 - uf[dst, F_MRES]
    else:
        amount *= armor_multiplier(uf[dst, F_ARMOR] + uf[dst, F_AURA_ARMOR])
    if uf[dst, F_SHIELD] > 0.0:
        absorbed = min(uf[dst, F_SHIELD], amount)
        uf[dst, F_SHIELD] -= absorbed
        amount -= absorbed
    uf[dst, F_HP] -= amount
    ui[dst, I_LAST_DMG] = src
    if src >= 0:
        hs = ui[src, I_HERO]
        hd = ui[dst, I_HERO]
        if hs >= 0 and hd >= 0:
            hf[hd, G_DMGT0 + hs] = gf[GF_TIME]
            uf[src, F_AGGRO_T] = TOWER_AGGRO_S
    return amount


@njit(cache=True)
def new_unit(ui, gi):
    for u in range(gi[GI_FIRST_FREE], MAX_UNITS):
        if ui[u, I_USED] == 0:
            return u
    return -1


@njit(cache=True)
def reset_unit(uf, ui, gi, u):
    uf[u, :] = 0.0
    ui[u, :] = 0
    ui[u, I_TARGET] = -1
    ui[u, I_HERO] = -1
    ui[u, I_LAST_DMG] = -1
    ui[u, I_PROT0] = -1
    ui[u, I_PROT1] = -1
    ui[u, I_PROT2] = -1
    ui[u, I_DOT_SRC] = -1
    ui[u, I_USED] = 1
    ui[u, I_ALIVE] = 1
    ui[u, I_UID] = gi[GI_NEXT_UID]
    gi[GI_NEXT_UID] += 1


@njit(cache=True)
def spawn_waves(uf, ui, gf, gi, wp, lane_on, rax):
    t = gf[GF_TIME]
    upgrade = 1.0 + CREEP_UPGRADE_FRAC * math.floor(t / CREEP_UPGRADE_EVERY_S)
    for team in range(2):
        enemy = 1 - team
        all_dead = True
        any_rax = False
        for lane in range(3):
            for k in range(2):
                r = rax[enemy, lane, k]
                if r >= 0:
                    any_rax = True
                    if ui[r, I_ALIVE] == 1:
                        all_dead = False
        for lane in range(3):
            if lane_on[lane] == 0:
                continue
            for k in range(2):  # 0 melee, 1 ranged
                kind = CREEP_NORMAL
                if any_rax and all_dead:
                    kind = CREEP_MEGA
                elif rax[enemy, lane, k] >= 0 and ui[rax[enemy, lane, k], I_ALIVE] == 0:
                    kind = CREEP_SUPER
                for j in range(CREEPS_PER_WAVE[k]):
                    u = new_unit(ui, gi)
                    if u < 0:
                        return
                    reset_unit(uf, ui, gi, u)
                    st = CREEP_STATS[k]
                    mult = SUPER_CREEP_MULT if kind == CREEP_SUPER else (
                        MEGA_CREEP_MULT if kind == CREEP_MEGA else np.ones(9))
                    ui[u, I_TYPE] = UT_CREEP_MELEE if k == 0 else UT_CREEP_RANGED
                    ui[u, I_TEAM] = team
                    ui[u, I_LANE] = lane
                    ui[u, I_WP] = 1
                    ui[u, I_CREEP_KIND] = kind
                    # a small deterministic spread so that creeps of one wave do not stack on one point
                    off = (j + 3 * k) * 40.0 - 60.0
                    uf[u, F_X] = wp[team, lane, 0, 0] + off * (1 - 2 * team) * 0.7
                    uf[u, F_Y] = wp[team, lane, 0, 1] - off * (1 - 2 * team) * 0.7
                    uf[u, F_MAXHP] = st[0] * mult[0] * upgrade
                    uf[u, F_HP] = uf[u, F_MAXHP]
                    uf[u, F_DMG] = st[1] * mult[1] * upgrade
                    uf[u, F_ARMOR] = st[2] * mult[2]
                    uf[u, F_RANGE] = st[3]
                    uf[u, F_BAT] = st[4]
                    uf[u, F_SPEED] = st[5]
                    uf[u, F_GOLD] = st[6] * mult[6]
                    uf[u, F_XP] = st[7] * mult[7]
                    uf[u, F_VIS_DAY] = st[8]
                    uf[u, F_VIS_NIGHT] = st[8]


@njit(cache=True)
def update_protection(ui, n_buildings_end):
    for u in range(n_buildings_end):
        mode = ui[u, I_PROT_MODE]
        if ui[u, I_USED] == 0 or ui[u, I_TYPE] == UT_HERO:
            continue
        if ui[u, I_TYPE] == UT_FOUNTAIN:
            ui[u, I_INVULN] = 1
            continue
        inv = 0
        if mode == PROT_ANY_ALIVE:
            for k in range(3):
                p = ui[u, I_PROT0 + k]
                if p >= 0 and ui[p, I_ALIVE] == 1:
                    inv = 1
        elif mode == PROT_ALL_ALIVE:
            inv = 1
            n = 0
            for k in range(3):
                p = ui[u, I_PROT0 + k]
                if p >= 0:
                    n += 1
                    if ui[p, I_ALIVE] == 0:
                        inv = 0
            if n == 0:
                inv = 0
        ui[u, I_INVULN] = inv


@njit(cache=True)
def apply_auras(uf, ui, hi, abi, abf, hero_ab, n_heroes):
    for u in range(MAX_UNITS):
        uf[u, F_AURA_ARMOR] = 0.0
    for h in range(n_heroes):
        u = hi[h, H_UNIT]
        if ui[u, I_ALIVE] == 0:
            continue
        for k in range(ABILITIES_PER_HERO):
            ab = hero_ab[h, k]
            lv = hi[h, H_AB0 + k]
            if lv == 0 or abi[ab, A_PASSIVE] == 0 or abi[ab, A_EK0] != EFFECT_AURA:
                continue
            amt = abf[ab, A_E0 + A_AMT + lv - 1]
            rad = abf[ab, A_E0 + A_RAD]
            for v in range(MAX_UNITS):
                if alive(ui, v) and ui[v, I_TEAM] == ui[u, I_TEAM] and is_mobile(ui[v, I_TYPE]) \
                        and dist(uf, u, v) <= rad:
                    uf[v, F_AURA_ARMOR] += amt


@njit(cache=True)
def update_timers(uf, ui, hf, hi, gf, fountain_idx, n_heroes):
    for u in range(MAX_UNITS):
        if ui[u, I_USED] == 0 or ui[u, I_ALIVE] == 0:
            continue
        if uf[u, F_STUN_T] > 0.0:
            uf[u, F_STUN_T] = max(0.0, uf[u, F_STUN_T] - DT)
        if uf[u, F_SLOW_T] > 0.0:
            uf[u, F_SLOW_T] -= DT
            if uf[u, F_SLOW_T] <= 0.0:
                uf[u, F_SLOW_T] = 0.0
                uf[u, F_SLOW] = 0.0
        if uf[u, F_SHIELD_T] > 0.0:
            uf[u, F_SHIELD_T] -= DT
            if uf[u, F_SHIELD_T] <= 0.0:
                uf[u, F_SHIELD_T] = 0.0
                uf[u, F_SHIELD] = 0.0
        if uf[u, F_DOT_T] > 0.0:
            uf[u, F_DOT_T] = max(0.0, uf[u, F_DOT_T] - DT)
            deal_damage(uf, ui, hf, gf, ui[u, I_DOT_SRC], u, uf[u, F_DOT_DPS] * DT, True)
        hp_gain = uf[u, F_HPREG]
        mana_gain = uf[u, F_MANAREG]
        if uf[u, F_REGEN_T] > 0.0:
            uf[u, F_REGEN_T] = max(0.0, uf[u, F_REGEN_T] - DT)
            hp_gain += uf[u, F_REGEN]
        if uf[u, F_MREGEN_T] > 0.0:
            uf[u, F_MREGEN_T] = max(0.0, uf[u, F_MREGEN_T] - DT)
            mana_gain += uf[u, F_MREGEN]
        if uf[u, F_DBUFF_T] > 0.0:
            uf[u, F_DBUFF_T] -= DT
            if uf[u, F_DBUFF_T] <= 0.0:
                uf[u, F_DBUFF_T] = 0.0
                uf[u, F_DBUFF] = 0.0
        if ui[u, I_TYPE] == UT_HERO:
            f = fountain_idx[ui[u, I_TEAM]]
            if dist(uf, u, f) <= FOUNTAIN_HEAL_RADIUS:
                hp_gain += FOUNTAIN_HEAL_FRAC * uf[u, F_MAXHP]
                mana_gain += FOUNTAIN_HEAL_FRAC * uf[u, F_MAXMANA]
        if uf[u, F_HP] > 0.0:
            uf[u, F_HP] = min(uf[u, F_MAXHP], uf[u, F_HP] + hp_gain * DT)
        uf[u, F_MANA] = min(uf[u, F_MAXMANA], uf[u, F_MANA] + mana_gain * DT)
        uf[u, F_ATK_T] = max(0.0, uf[u, F_ATK_T] - DT)
        uf[u, F_AGGRO_T] = max(0.0, uf[u, F_AGGRO_T] - DT)
        if ui[u, I_TYPE] == UT_WARD:
            uf[u, F_LIFE_T] -= DT
            if uf[u, F_LIFE_T] <= 0.0:
                uf[u, F_HP] = 0.0
                ui[u, I_LAST_DMG] = -1
        if ui[u, I_TYPE] == UT_SHRINE:
            uf[u, F_SHRINE_CD] = max(0.0, uf[u, F_SHRINE_CD] - DT)
            if uf[u, F_SHRINE_T] > 0.0:
                uf[u, F_SHRINE_T] = max(0.0, uf[u, F_SHRINE_T] - DT)
                for v in range(MAX_UNITS):
                    if alive(ui, v) and ui[v, I_TYPE] == UT_HERO and ui[v, I_TEAM] == ui[u, I_TEAM] \
                            and dist(uf, u, v) <= SHRINE_RADIUS:
                        uf[v, F_HP] = min(uf[v, F_MAXHP], uf[v, F_HP] + SHRINE_HEAL_PER_S * DT)
                        uf[v, F_MANA] = min(uf[v, F_MAXMANA], uf[v, F_MANA] + SHRINE_MANA_PER_S * DT)
    for h in range(n_heroes):
        for c in range(G_CD0, G_ICD6 + 1):
            hf[h, c] = max(0.0, hf[h, c] - DT)
        hf[h, G_BB_CD] = max(0.0, hf[h, G_BB_CD] - DT)
        hf[h, G_GOLD] += PASSIVE_GOLD_PER_S * DT
        hf[h, G_EARNED] += PASSIVE_GOLD_PER_S * DT


@njit(cache=True)
def apply_effect(uf, ui, hf, gf, kind, v, amt, dur, src):
    if kind == EFFECT_DAMAGE:
        deal_damage(uf, ui, hf, gf, src, v, amt, True)
    elif kind == EFFECT_STUN:
        uf[v, F_STUN_T] = max(uf[v, F_STUN_T], dur)
        uf[v, F_TP_T] = 0.0  # a stun interrupts a teleport channel
        if ui[src, I_HERO] >= 0 and ui[v, I_HERO] >= 0:
            hf[ui[v, I_HERO], G_DMGT0 + ui[src, I_HERO]] = gf[GF_TIME]
    elif kind == EFFECT_SLOW:
        uf[v, F_SLOW_T] = max(uf[v, F_SLOW_T], dur)
        uf[v, F_SLOW] = max(uf[v, F_SLOW], min(amt, 0.9))
    elif kind == EFFECT_HEAL:
        uf[v, F_HP] = min(uf[v, F_MAXHP], uf[v, F_HP] + amt)
    elif kind == EFFECT_SHIELD:
        uf[v, F_SHIELD] = max(uf[v, F_SHIELD], amt)
        uf[v, F_SHIELD_T] = dur
    elif kind == EFFECT_DOT:
        uf[v, F_DOT_T] = dur
        uf[v, F_DOT_DPS] = amt
        ui[v, I_DOT_SRC] = src
    elif kind == EFFECT_REGEN:
        uf[v, F_REGEN_T] = dur
        uf[v, F_REGEN] = amt
    elif kind == EFFECT_MANA_REGEN:
        uf[v, F_MREGEN_T] = dur
        uf[v, F_MREGEN] = amt
    elif kind == EFFECT_DAMAGE_BUFF:
        uf[v, F_DBUFF_T] = dur
        uf[v, F_DBUFF] = amt


@njit(cache=True)
def in_area(uf, u, v, area, tx, ty, rad, rng):
    vx = uf[v, F_X]
    vy = uf[v, F_Y]
    if area == AREA_CIRCLE_SELF:
        return (vx - uf[u, F_X]) ** 2 + (vy - uf[u, F_Y]) ** 2 <= rad * rad
    if area == AREA_CIRCLE_POINT:
        return (vx - tx) ** 2 + (vy - ty) ** 2 <= rad * rad
    # line and cone: direction from the caster toward the point, length = cast range
    dx = tx - uf[u, F_X]
    dy = ty - uf[u, F_Y]
    d = math.sqrt(dx * dx + dy * dy)
    if d < 1e-6:
        dx, dy, d = 1.0, 0.0, 1.0
    dx /= d
    dy /= d
    px = vx - uf[u, F_X]
    py = vy - uf[u, F_Y]
    along = px * dx + py * dy
    if along < 0.0 or along > rng:
        return False
    if area == AREA_LINE:
        return abs(px * dy - py * dx) <= rad
    # cone
    pl = math.sqrt(px * px + py * py)
    return pl < 1e-6 or along / pl >= COS_CONE


@njit(cache=True)
def spawn_ward(uf, ui, gi, team, x, y, vision, life):
    w = new_unit(ui, gi)
    if w < 0:
        return
    reset_unit(uf, ui, gi, w)
    ui[w, I_TYPE] = UT_WARD
    ui[w, I_TEAM] = team
    uf[w, F_X] = x
    uf[w, F_Y] = y
    uf[w, F_HP] = WARD_HP
    uf[w, F_MAXHP] = WARD_HP
    uf[w, F_VIS_DAY] = vision
    uf[w, F_VIS_NIGHT] = vision
    uf[w, F_LIFE_T] = life
    uf[w, F_GOLD] = 50.0
    uf[w, F_XP] = 50.0


@njit(cache=True)
def cast_now(uf, ui, hf, hi, gf, gi, terrain, abi, abf, h, u, ab, lv, slot, tx, ty, target, item_slot):
    """Pays the cost, starts the cooldown and applies the ability's effects."""
    uf[u, F_MANA] -= abf[ab, A_MANA + lv]
    if slot < ABILITIES_PER_HERO:  # slots: the hero's abilities, then the item actions
        hf[h, G_CD0 + slot] = abf[ab, A_CD + lv]
    else:
        hf[h, G_ICD0 + slot - ABILITIES_PER_HERO] = abf[ab, A_CD + lv]
    if item_slot >= 0 and hi[h, H_CH0 + item_slot] > 0:
        hi[h, H_CH0 + item_slot] -= 1
        hi[h, H_CONSUMED] += 1
        if hi[h, H_CH0 + item_slot] == 0:
            hi[h, H_IT0 + item_slot] = -1
    rng = abf[ab, A_RANGE + lv]
    team = ui[u, I_TEAM]
    for j in range(abi[ab, A_NEFF]):
        kind = abi[ab, A_EK0 + 3 * j]
        area = abi[ab, A_EA0 + 3 * j]
        aff = abi[ab, A_EF0 + 3 * j]
        base = A_E0 + j * A_EFF_STRIDE
        amt = abf[ab, base + A_AMT + lv]
        dur = abf[ab, base + A_DUR + lv]
        rad = abf[ab, base + A_RAD]
        if kind == EFFECT_BLINK:
            if passable(terrain, tx, ty):
                uf[u, F_X] = tx
                uf[u, F_Y] = ty
            ui[u, I_ORDER] = ORDER_IDLE
        elif kind == EFFECT_WARD:
            spawn_ward(uf, ui, gi, team, tx, ty, amt, dur)
        elif area == AREA_TARGET:
            if target >= 0:
                apply_effect(uf, ui, hf, gf, kind, target, amt, dur, u)
        elif area == AREA_SELF:
            apply_effect(uf, ui, hf, gf, kind, u, amt, dur, u)
        else:
            for v in range(MAX_UNITS):
                if not alive(ui, v) or not is_mobile(ui[v, I_TYPE]):
                    continue
                if (aff == AFFECT_ALLIES) != (ui[v, I_TEAM] == team):
                    continue
                if in_area(uf, u, v, area, tx, ty, rad, rng):
                    apply_effect(uf, ui, hf, gf, kind, v, amt, dur, u)


@njit(cache=True)
def clamp_point(uf, u, x, y, rng):
    dx = x - uf[u, F_X]
    dy = y - uf[u, F_Y]
    d = math.sqrt(dx * dx + dy * dy)
    if d > rng and d > 1e-9:
        x = uf[u, F_X] + dx / d * rng
        y = uf[u, F_Y] + dy / d * rng
    return min(max(x, 0.0), MAP_SIZE - 1.0), min(max(y, 0.0), MAP_SIZE - 1.0)


@njit(cache=True)
def hero_respawn(uf, ui, hf, h, u, fountain_idx):
    f = fountain_idx[ui[u, I_TEAM]]
    ui[u, I_ALIVE] = 1
    uf[u, F_HP] = uf[u, F_MAXHP]
    uf[u, F_MANA] = uf[u, F_MAXMANA]
    uf[u, F_X] = uf[f, F_X] + 150.0 * (1 - 2 * ui[u, I_TEAM])
    uf[u, F_Y] = uf[f, F_Y] + 150.0 * (1 - 2 * ui[u, I_TEAM])
    for c in (F_STUN_T, F_SLOW_T, F_SLOW, F_SHIELD, F_SHIELD_T, F_DOT_T, F_REGEN_T, F_MREGEN_T, F_DBUFF_T, F_DBUFF,
              F_TP_T, F_ATK_T):
        uf[u, c] = 0.0
    ui[u, I_ORDER] = ORDER_IDLE
    ui[u, I_TARGET] = -1
    ui[u, I_LAST_DMG] = -1
    hf[h, G_RESPAWN] = 0.0


@njit(cache=True)
def buyback_cost(level, time):
    return BUYBACK_BASE_GOLD + BUYBACK_PER_LEVEL2 * level * level + BUYBACK_PER_MINUTE * time / 60.0


@njit(cache=True)
def apply_orders(uf, ui, hf, hi, gf, gi, pend, vis, terrain, abi, abf, hero_ab, ia_ab, ia_item, item_stats,
                 fountain_idx, n_buildings_end, local_tick):
    for h in range(gi[GI_N_HEROES]):
        if pend[h, P_ACTIVE] == 0.0 or int(pend[h, P_TICK]) != local_tick:
            continue
        pend[h, P_ACTIVE] = 0.0
        u = hi[h, H_UNIT]
        kind = int(pend[h, P_KIND])
        arg = int(pend[h, P_ARG])
        tgt = int(pend[h, P_UNIT])
        px = pend[h, P_X]
        py = pend[h, P_Y]
        if kind == OK_BUYBACK:
            cost = buyback_cost(hi[h, H_LEVEL], gf[GF_TIME])
            if ui[u, I_ALIVE] == 0 and hf[h, G_BB_CD] <= 0.0 and hf[h, G_GOLD] >= cost:
                hf[h, G_GOLD] -= cost
                hf[h, G_BB_CD] = BUYBACK_COOLDOWN_S
                hi[h, H_BUYBACKS] += 1
                hero_respawn(uf, ui, hf, h, u, fountain_idx)
            continue
        if ui[u, I_ALIVE] == 0 or uf[u, F_STUN_T] > 0.0:
            continue
        if kind == OK_MOVE:
            uf[u, F_TP_T] = 0.0
            ui[u, I_ORDER] = ORDER_MOVE
            uf[u, F_DEST_X] = min(max(px, 0.0), MAP_SIZE - 1.0)
            uf[u, F_DEST_Y] = min(max(py, 0.0), MAP_SIZE - 1.0)
        elif kind == OK_ATTACK:
            if tgt >= 0 and tgt < MAX_UNITS and can_attack(uf, ui, vis, u, tgt):
                uf[u, F_TP_T] = 0.0
                ui[u, I_ORDER] = ORDER_ATTACK
                ui[u, I_TARGET] = tgt
        elif kind == OK_SHRINE:
            for s in range(n_buildings_end):
                if ui[s, I_TYPE] == UT_SHRINE and alive(ui, s) and ui[s, I_TEAM] == ui[u, I_TEAM] \
                        and dist(uf, u, s) <= SHRINE_RADIUS and uf[s, F_SHRINE_CD] <= 0.0:
                    uf[s, F_SHRINE_T] = SHRINE_DURATION_S
                    uf[s, F_SHRINE_CD] = SHRINE_COOLDOWN_S
                    break
        elif kind == OK_ABILITY or kind == OK_ITEM:
            item_slot = -1
            if kind == OK_ABILITY:
                if arg < 0 or arg > 3:
                    continue
                ab = hero_ab[h, arg]
                lv = hi[h, H_AB0 + arg] - 1
                slot = arg
                if lv < 0 or abi[ab, A_PASSIVE] == 1 or hf[h, G_CD0 + arg] > 0.0:
                    continue
            else:
                if arg < 0 or arg >= ia_ab.shape[0]:
                    continue
                ab = ia_ab[arg]
                lv = 0
                slot = ABILITIES_PER_HERO + arg
                for k in range(INVENTORY):
                    if hi[h, H_IT0 + k] == ia_item[arg]:
                        item_slot = k
                        break
                if item_slot < 0 or hf[h, G_ICD0 + arg] > 0.0:
                    continue
                if item_stats[ia_item[arg], IS_CONSUMABLE] == 0.0:
                    item_slot = -1  # non-consumables keep their charge count
                    found = True
                else:
                    found = hi[h, H_CH0 + item_slot] > 0
                if not found:
                    continue
            if uf[u, F_MANA] < abf[ab, A_MANA + lv]:
                continue
            tt = abi[ab, A_TT]
            rng = abf[ab, A_RANGE + lv]
            if tt == TT_NO_TARGET:
                cast_now(uf, ui, hf, hi, gf, gi, terrain, abi, abf, h, u, ab, lv, slot, uf[u, F_X], uf[u, F_Y],
                         u, item_slot)
            elif tt == TT_POINT or tt == TT_WARD:
                x, y = clamp_point(uf, u, px, py, rng)
                cast_now(uf, ui, hf, hi, gf, gi, terrain, abi, abf, h, u, ab, lv, slot, x, y, -1, item_slot)
            elif tt == TT_TELEPORT:
                if tgt < 0 or tgt >= n_buildings_end or not alive(ui, tgt) or ui[tgt, I_TEAM] != ui[u, I_TEAM] \
                        or ui[tgt, I_TYPE] == UT_HERO:
                    continue
                cast_now(uf, ui, hf, hi, gf, gi, terrain, abi, abf, h, u, ab, lv, slot, uf[u, F_X], uf[u, F_Y],
                         -1, item_slot)
                uf[u, F_TP_T] = TELEPORT_CHANNEL_S
                hi[h, H_TP_CAST] += 1
                x, y = clamp_point(uf, tgt, uf[tgt, F_X] + px, uf[tgt, F_Y] + py, 1e9)
                uf[u, F_TP_X] = x
                uf[u, F_TP_Y] = y
                ui[u, I_ORDER] = ORDER_IDLE
            elif tt == TT_UNIT or tt == TT_UNIT_OFFSET:
                if tgt < 0 or tgt >= MAX_UNITS or not can_target_spell(ui, vis, u, tgt, abi[ab, A_UK]):
                    continue
                uf[u, F_TP_T] = 0.0
                ui[u, I_ORDER] = ORDER_CAST
                ui[u, I_TARGET] = tgt
                ui[u, I_CAST_AB] = ab
                ui[u, I_CAST_LV] = lv
                ui[u, I_CAST_SLOT] = slot
                uf[u, F_OFF_X] = px if tt == TT_UNIT_OFFSET else 0.0
                uf[u, F_OFF_Y] = py if tt == TT_UNIT_OFFSET else 0.0
                ui[u, I_CAST_ITEM] = item_slot


@njit(cache=True)
def attack(uf, ui, hf, gf, u, t):
    deal_damage(uf, ui, hf, gf, u, t, uf[u, F_DMG] + uf[u, F_DBUFF], False)
    uf[u, F_ATK_T] = uf[u, F_BAT]
    uf[u, F_LAST_ATK] = gf[GF_TIME]


@njit(cache=True)
def attack_or_chase(uf, ui, hf, gf, terrain, u, t):
    if edge_dist(uf, ui, u, t) <= uf[u, F_RANGE] + unit_radius(ui[u, I_TYPE]):
        ui[u, I_ATTACKING] = 1
        if uf[u, F_ATK_T] <= 0.0:
            attack(uf, ui, hf, gf, u, t)
    elif is_mobile(ui[u, I_TYPE]):
        move_toward(uf, ui, terrain, u, uf[t, F_X], uf[t, F_Y], 0.0)


@njit(cache=True)
def aggro_hero_near(uf, ui, u, rng):
    """An enemy hero within rng of u that recently attacked a hero (tower and creep aggro), or -1."""
    best = -1
    bd = 1e18
    for v in range(MAX_UNITS):
        if alive(ui, v) and ui[v, I_TYPE] == UT_HERO and ui[v, I_TEAM] != ui[u, I_TEAM] \
                and uf[v, F_AGGRO_T] > 0.0 and ui[v, I_INVULN] == 0:
            d = edge_dist(uf, ui, u, v)
            if d <= rng and d < bd:
                bd = d
                best = v
    return best


@njit(cache=True)
def nearest_enemy(uf, ui, vis, u, rng, heroes):
    """Nearest attackable enemy within rng (edge distance); heroes=0 skips heroes, 1 takes only heroes, 2 any."""
    best = -1
    bd = 1e18
    team = ui[u, I_TEAM]
    for v in range(MAX_UNITS):
        if ui[v, I_USED] == 0 or ui[v, I_ALIVE] == 0 or ui[v, I_TEAM] == team or ui[v, I_INVULN] == 1:
            continue
        tv = ui[v, I_TYPE]
        if tv == UT_FOUNTAIN:
            continue
        ish = tv == UT_HERO
        if (heroes == 0 and ish) or (heroes == 1 and not ish):
            continue
        d = edge_dist(uf, ui, u, v)
        if d <= rng and d < bd:
            bd = d
            best = v
    return best


@njit(cache=True)
def creep_act(uf, ui, hf, gf, vis, terrain, wp, wpn, u):
    t = ui[u, I_TARGET]
    if t >= 0 and (not can_attack(uf, ui, vis, u, t) or edge_dist(uf, ui, u, t) > CREEP_AGGRO_RANGE * 1.5):
        t = -1
    if t < 0 or ui[t, I_TYPE] != UT_HERO:
        a = aggro_hero_near(uf, ui, u, CREEP_AGGRO_RANGE)
        if a >= 0:
            t = a
    if t < 0:
        t = nearest_enemy(uf, ui, vis, u, CREEP_AGGRO_RANGE, 2)
    ui[u, I_TARGET] = t
    if t >= 0:
        attack_or_chase(uf, ui, hf, gf, terrain, u, t)
        return
    team = ui[u, I_TEAM]
    lane = ui[u, I_LANE]
    k = ui[u, I_WP]
    if k >= wpn[team, lane]:
        return
    if move_toward(uf, ui, terrain, u, wp[team, lane, k, 0], wp[team, lane, k, 1], 0.0) or \
            (uf[u, F_X] - wp[team, lane, k, 0]) ** 2 + (uf[u, F_Y] - wp[team, lane, k, 1]) ** 2 \
            < CREEP_WAYPOINT_REACHED ** 2:
        if k + 1 < wpn[team, lane]:
            ui[u, I_WP] = k + 1


@njit(cache=True)
def tower_act(uf, ui, hf, gf, vis, u):
    rng = uf[u, F_RANGE]
    a = aggro_hero_near(uf, ui, u, rng)
    t = ui[u, I_TARGET]
    if a >= 0:
        t = a
    elif t >= 0 and (not can_attack(uf, ui, vis, u, t) or edge_dist(uf, ui, u, t) > rng):
        t = -1
    if t < 0:
        t = nearest_enemy(uf, ui, vis, u, rng, 0)
    if t < 0:
        t = nearest_enemy(uf, ui, vis, u, rng, 1)
    ui[u, I_TARGET] = t
    if t >= 0:
        ui[u, I_ATTACKING] = 1
        if uf[u, F_ATK_T] <= 0.0:
            attack(uf, ui, hf, gf, u, t)


@njit(cache=True)
def hero_act(uf, ui, hf, hi, gf, gi, vis, terrain, abi, abf, u):
    h = ui[u, I_HERO]
    if uf[u, F_TP_T] > 0.0:
        uf[u, F_TP_T] -= DT
        if uf[u, F_TP_T] <= 0.0:
            uf[u, F_TP_T] = 0.0
            uf[u, F_X] = uf[u, F_TP_X]
            uf[u, F_Y] = uf[u, F_TP_Y]
            hi[h, H_TP_DONE] += 1
        return
    if uf[u, F_STUN_T] > 0.0:
        return
    order = ui[u, I_ORDER]
    if order == ORDER_MOVE:
        if move_toward(uf, ui, terrain, u, uf[u, F_DEST_X], uf[u, F_DEST_Y], 0.0):
            ui[u, I_ORDER] = ORDER_IDLE
    elif order == ORDER_ATTACK:
        t = ui[u, I_TARGET]
        if not can_attack(uf, ui, vis, u, t):
            ui[u, I_ORDER] = ORDER_IDLE
            ui[u, I_TARGET] = -1
        else:
            attack_or_chase(uf, ui, hf, gf, terrain, u, t)
    elif order == ORDER_CAST:
        t = ui[u, I_TARGET]
        ab = ui[u, I_CAST_AB]
        lv = ui[u, I_CAST_LV]
        if not can_target_spell(ui, vis, u, t, abi[ab, A_UK]) or uf[u, F_MANA] < abf[ab, A_MANA + lv]:
            ui[u, I_ORDER] = ORDER_IDLE
            ui[u, I_TARGET] = -1
            return
        if edge_dist(uf, ui, u, t) <= abf[ab, A_RANGE + lv]:
            x = min(max(uf[t, F_X] + uf[u, F_OFF_X], 0.0), MAP_SIZE - 1.0)
            y = min(max(uf[t, F_Y] + uf[u, F_OFF_Y], 0.0), MAP_SIZE - 1.0)
            ui[u, I_ORDER] = ORDER_IDLE
            ui[u, I_TARGET] = -1
            cast_now(uf, ui, hf, hi, gf, gi, terrain, abi, abf, h, u, ab, lv, ui[u, I_CAST_SLOT], x, y, t,
                     ui[u, I_CAST_ITEM])
        else:
            move_toward(uf, ui, terrain, u, uf[t, F_X], uf[t, F_Y], 0.0)


@njit(cache=True)
def share_xp(uf, ui, hf, victim, xp, team):
    """Splits xp among the alive heroes of `team` within XP_SHARE_RADIUS of the victim."""
    n = 0
    for v in range(MAX_UNITS):
        if alive(ui, v) and ui[v, I_TYPE] == UT_HERO and ui[v, I_TEAM] == team \
                and dist(uf, v, victim) <= XP_SHARE_RADIUS:
            n += 1
    if n == 0:
        return
    for v in range(MAX_UNITS):
        if alive(ui, v) and ui[v, I_TYPE] == UT_HERO and ui[v, I_TEAM] == team \
                and dist(uf, v, victim) <= XP_SHARE_RADIUS:
            hf[ui[v, I_HERO], G_XP] += xp / n


@njit(cache=True)
def give_gold(hf, h, g):
    hf[h, G_GOLD] += g
    hf[h, G_EARNED] += g


@njit(cache=True)
def process_deaths(uf, ui, hf, hi, gf, gi, ev, ancient_idx):
    n_heroes = gi[GI_N_HEROES]
    for u in range(MAX_UNITS):
        if ui[u, I_USED] == 0 or ui[u, I_ALIVE] == 0 or uf[u, F_HP] > 0.0:
            continue
        uf[u, F_HP] = 0.0
        ui[u, I_ALIVE] = 0
        ui[u, I_ORDER] = ORDER_IDLE
        ui[u, I_TARGET] = -1
        typ = ui[u, I_TYPE]
        team = ui[u, I_TEAM]
        enemy = 1 - team
        killer = ui[u, I_LAST_DMG]
        kh = ui[killer, I_HERO] if killer >= 0 else -1
        deny = killer >= 0 and ui[killer, I_TEAM] == team
        if typ == UT_CREEP_MELEE or typ == UT_CREEP_RANGED or typ == UT_WARD:
            if kh >= 0 and not deny:
                give_gold(hf, kh, uf[u, F_GOLD])
                if typ != UT_WARD:
                    hi[kh, H_LH] += 1
            if kh >= 0 and deny and typ != UT_WARD:
                hi[kh, H_DN] += 1
            if not deny and not (typ == UT_WARD and killer < 0):  # an expired ward is worth nothing
                share_xp(uf, ui, hf, u, uf[u, F_XP], enemy)
        elif typ == UT_HERO:
            h = ui[u, I_HERO]
            lvl = hi[h, H_LEVEL]
            hi[h, H_DEATHS] += 1
            hf[h, G_RESPAWN] = RESPAWN_BASE_S + RESPAWN_PER_LEVEL_S * lvl
            if kh >= 0 and not deny:
                hi[kh, H_KILLS] += 1
                give_gold(hf, kh, HERO_KILL_GOLD_BASE + HERO_KILL_GOLD_PER_LEVEL * lvl)
            for a in range(n_heroes):
                if a != kh and ui[hi[a, H_UNIT], I_TEAM] == enemy \
                        and gf[GF_TIME] - hf[h, G_DMGT0 + a] <= ASSIST_WINDOW_S:
                    hi[a, H_ASSISTS] += 1
                    give_gold(hf, a, HERO_ASSIST_GOLD)
            share_xp(uf, ui, hf, u, HERO_KILL_XP_BASE + HERO_KILL_XP_PER_LEVEL * lvl, enemy)
            for a in range(n_heroes):
                hf[h, G_DMGT0 + a] = -1e9
            uf[u, F_TP_T] = 0.0
        else:  # building: its team gold goes to every hero of the other team
            for a in range(n_heroes):
                if ui[hi[a, H_UNIT], I_TEAM] == enemy:
                    give_gold(hf, a, uf[u, F_GOLD])
            if kh >= 0 and typ == UT_TOWER:
                hi[kh, H_TOWERS] += 1
            if u == ancient_idx[team] and gi[GI_WINNER] < 0:
                gi[GI_WINNER] = enemy
        n = gi[GI_EV_N]
        if n < MAX_EVENTS:
            ev[n, E_KIND] = EV_DEATH
            ev[n, E_VICTIM] = u
            ev[n, E_KILLER] = killer
            ev[n, E_TYPE] = typ
            ev[n, E_TEAM] = team
            ev[n, E_FLAG] = 1 if deny else 0
            gi[GI_EV_N] = n + 1
        if typ == UT_CREEP_MELEE or typ == UT_CREEP_RANGED or typ == UT_WARD:
            ui[u, I_USED] = 0  # the row is free for the next spawn
    for h in range(n_heroes):
        if ui[hi[h, H_UNIT], I_ALIVE] == 0:
            hf[h, G_RESPAWN] -= DT


@njit(cache=True)
def run_ticks(n_ticks, uf, ui, hf, hi, gf, gi, pend, vis, ev, terrain, wp, wpn, lane_on, rax, abi, abf, hero_ab,
              ia_ab, ia_item, item_stats, fountain_idx, ancient_idx, n_buildings_end):
    """Advances the game by n_ticks ticks (a frameskip). Orders in `pend` fire on their delay tick. Events of these
    ticks are appended to `ev` (the caller resets GI_EV_N)."""
    n_heroes = gi[GI_N_HEROES]
    for local_tick in range(n_ticks):
        if gi[GI_WINNER] >= 0:
            return
        if gf[GF_TIME] >= gf[GF_NEXT_WAVE] - 1e-9:
            spawn_waves(uf, ui, gf, gi, wp, lane_on, rax)
            gf[GF_NEXT_WAVE] += WAVE_INTERVAL_S
        update_protection(ui, n_buildings_end)
        apply_auras(uf, ui, hi, abi, abf, hero_ab, n_heroes)
        update_timers(uf, ui, hf, hi, gf, fountain_idx, n_heroes)
        apply_orders(uf, ui, hf, hi, gf, gi, pend, vis, terrain, abi, abf, hero_ab, ia_ab, ia_item, item_stats,
                     fountain_idx, n_buildings_end, local_tick)
        for u in range(MAX_UNITS):
            if ui[u, I_USED] == 0 or ui[u, I_ALIVE] == 0:
                continue
            ui[u, I_ATTACKING] = 0
            typ = ui[u, I_TYPE]
            if uf[u, F_STUN_T] > 0.0 and typ != UT_HERO:
                continue
            if typ == UT_HERO:
                hero_act(uf, ui, hf, hi, gf, gi, vis, terrain, abi, abf, u)
            elif typ == UT_CREEP_MELEE or typ == UT_CREEP_RANGED:
                creep_act(uf, ui, hf, gf, vis, terrain, wp, wpn, u)
            elif typ == UT_TOWER or typ == UT_FOUNTAIN or (typ == UT_ANCIENT and gi[GI_CRYSTAL_ATTACKS] == 1):
                tower_act(uf, ui, hf, gf, vis, u)
        process_deaths_and_respawns(uf, ui, hf, hi, gf, gi, ev, ancient_idx, fountain_idx)
        gf[GF_TIME] += DT
        gi[GI_TICK] += 1


@njit(cache=True)
def process_deaths_and_respawns(uf, ui, hf, hi, gf, gi, ev, ancient_idx, fountain_idx):
    process_deaths(uf, ui, hf, hi, gf, gi, ev, ancient_idx)
    for h in range(gi[GI_N_HEROES]):
        u = hi[h, H_UNIT]
        if ui[u, I_ALIVE] == 0 and hf[h, G_RESPAWN] <= 0.5 * DT:  # half a tick absorbs float drift
            hero_respawn(uf, ui, hf, h, u, fountain_idx)


@njit(cache=True)
def update_vision(uf, ui, hf, hi, gf, gi, vis):
    """Fog of war: a unit is visible to a team if it is the team's own, or within the day/night vision radius of
    one of the team's alive units. Enemy heroes' last-seen position, health and time are updated."""
    night = is_night(gf[GF_TIME])
    vcol = F_VIS_NIGHT if night else F_VIS_DAY
    for team in range(2):
        for v in range(MAX_UNITS):
            vis[team, v] = 0
            if ui[v, I_USED] == 0 or ui[v, I_ALIVE] == 0:
                continue
            if ui[v, I_TEAM] == team:
                vis[team, v] = 1
                continue
            vx = uf[v, F_X]
            vy = uf[v, F_Y]
            for w in range(MAX_UNITS):
                if ui[w, I_USED] == 0 or ui[w, I_ALIVE] == 0 or ui[w, I_TEAM] != team:
                    continue
                r = uf[w, vcol]
                dx = uf[w, F_X] - vx
                dy = uf[w, F_Y] - vy
                if dx * dx + dy * dy <= r * r:
                    vis[team, v] = 1
                    break
    for h in range(gi[GI_N_HEROES]):
        u = hi[h, H_UNIT]
        if vis[1 - ui[u, I_TEAM], u] == 1:
            hf[h, G_LS_X] = uf[u, F_X]
            hf[h, G_LS_Y] = uf[u, F_Y]
            hf[h, G_LS_HP] = uf[u, F_HP] / uf[u, F_MAXHP]
            hf[h, G_LS_T] = gf[GF_TIME]
