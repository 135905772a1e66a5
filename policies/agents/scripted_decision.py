"""The scripted bot's decision, compiled: one hero's action from its observation (``decide``), the lane geometry it
walks by (``project``, ``lane_point``) and the behaviour numbers. ``policies/agents/scripted.py``'s ``ScriptedAgent``
holds the bot's memory and handicaps and calls ``decide`` once per hero and decision.

The bot played as Python over numpy for most of the project's history, and the ladder, the reference pools and
every recorded result were measured with those decisions. This kernel makes the same decisions to the bit: each value
keeps the type the numpy code gave it (NumPy 2 computes a float32 with a Python float in float32, and compares them in
float32 too), ``py_hypot`` is CPython's ``math.hypot`` (not the C library's, which differs in the last bit on about
0.6% of inputs), ``_mean32`` is numpy's pairwise float32 mean, and every choice among equals picks the unit numpy's
argmin, ``min`` or ``max`` picked. Compiled without fast-math, so no operation is fused or reordered.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from moba.env.actions import (A_ABILITY0, A_ATTACK, A_BUYBACK, A_CLARITY, A_ITEM0, A_MOVE, A_NOOP, A_SALVE, A_SHRINE,
                              A_TP, N_OFFSETS)
from moba.env.actions import OFFSET_STEP_CASTER, OFFSET_STEP_WARD
from moba.env.observation import (GLOBAL_OWN_BUILDINGS_ALIVE, GLOBAL_TIME, HERO_ALIVE, UNIT_ARMOR, UNIT_ATTACK_DAMAGE,
                                  UNIT_DENIABLE, UNIT_DISTANCE_TO_ME, UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_HEALTH,
                                  UNIT_HEALTH_FRACTION, UNIT_INVULNERABLE, UNIT_IS_ALLY, UNIT_IS_ENEMY, UNIT_IS_ME,
                                  UNIT_IS_TARGETING_ME, UNIT_MANA_FRACTION, UNIT_VISIBLE_NOW, UNIT_X, UNIT_Y)
from moba.game.abilities import (TT_NO_TARGET, TT_POINT, TT_UNIT, TT_UNIT_OFFSET, UK_ALLY, UK_ATTACK, UK_ENEMY,
                                 UK_TELEPORT)
from moba.game.constants import UT_ANCIENT, UT_CREEP_MELEE, UT_CREEP_RANGED, UT_FOUNTAIN, UT_HERO, UT_TOWER
from moba.game.items import ITEM_ACTIONS
from moba.game.kernels import armor_multiplier  # the engine's kernel: the same double arithmetic
from moba.game.tables import ABILITIES_PER_HERO

# ---- the bot's behaviour numbers -------------------------------------------------------------------------------------
RETREAT_HP = 0.3  # go home below this health fraction ...
RETURN_HP = 0.85  # ... and come back above this one
SALVE_HP = 0.55  # drink a healing salve below this health fraction ...
SALVE_INTERVAL_S = 8.0  # ... at most once in this many seconds (a salve heals over time)
CLARITY_MANA = 0.4  # drink a clarity below this mana fraction ...
CLARITY_INTERVAL_S = 25.0  # ... at most once in this many seconds
LONG_AGO_S = -100.0  # the game time of "the last salve / clarity" before the first one
SHRINE_HP = 0.6  # use an allied shrine below this health fraction
BUYBACK_BUILDINGS_ALIVE = 6  # dead, buy back when the team has this many buildings or fewer left (base in danger)
FIGHT_RANGE = 900.0  # engage enemy heroes this close
FIGHT_HP = 0.5  # engage above this health fraction, or below it when the enemy hero has less health than this one
TARGET_DISTANCE_SCALE = 3000.0  # the enemy hero to fight: the lowest health fraction + distance / this
TOWER_DIVE_KILL_HP = 0.25  # engage an enemy hero near its tower only when its health fraction is below this
TOWER_DANGER = 780.0  # distance from an enemy tower that is unsafe without creeps tanking it
TOWER_DANGER_TARGETED = TOWER_DANGER + 100  # retreat from an enemy tower that attacks this hero this close
TOWER_WAIT_MARGIN = 150.0  # walking up a lane: stop this far outside an untanked enemy tower's danger distance
SAFE_TOWER_MARGIN = 200.0  # no allied creep in the lane: wait this far outside the nearest enemy tower's danger ...
SAFE_LANE_FRACTION = 0.5  # ... or at this fraction of the lane's length when no enemy tower is in sight
TANK_RADIUS = 750.0  # allied creeps within this distance of an enemy building tank it ...
TANK_MIN_CREEPS = 1  # ... when there are at least this many
FOLLOW_BEHIND = 200.0  # stand this far behind the front allied creep
LANE_NEAR = 900.0  # a unit within this distance of the lane path belongs to the lane
TP_MIN_DISTANCE = 3500.0  # teleport to the lane when it is farther than this ...
TP_NEAR_FOUNTAIN = 1200  # ... and the hero is within this distance of its fountain
TP_FRONT_SLACK = 300  # teleport to a tower at most this far beyond the lane's front
RETREAT_HOME_S = 1500  # retreating this close to the lane's start (or off the lane): go to the fountain ...
RETREAT_STEP = 800.0  # ... otherwise step back this far along the lane
ARRIVED = 40  # a move goal this close is reached (no order)
LAST_HIT_RANGE = 800  # go for last hits on enemy creeps this close ...
DENY_RANGE = 700  # ... and denies on allied creeps this close
LAST_HIT_MARGIN = 1.05  # a creep is a last hit when its health is at most this times the hero's damage to it
FARM_RANGE = 700  # hit, or cast area spells on, enemy creeps this close
FARM_SPELL_MANA = 0.6  # cast area spells on a wave only above this mana fraction
CAST_RANGE_SLACK = 100  # cast a point spell at an enemy hero up to this far beyond the cast range
SELF_AREA_MIN_RADIUS = 250.0  # no-target spells: on a hero within max(radius, this); on a wave if radius >= this
WARD_NEAR_GOAL = 300  # place a ward when this close to the lane position the hero walks to ...
WARD_AHEAD = 300  # ... this far ahead of that position along each axis of the lane's direction
DIVE_HP = 0.5  # attack an untanked tower only while every enemy hero is dead and health is above this
AREA_MIN_CREEPS = 3  # cast area spells on a wave of at least this many enemy creeps
BASIC_ABILITIES = ABILITIES_PER_HERO - 1  # area spells on a wave: the basic abilities, never the ultimate (the last)

# what each of a hero's abilities is for (scripted._HeroPlan), as the kernel reads it
KIND_PASSIVE, KIND_BLINK, KIND_OFFENSE, KIND_DEFENSE, KIND_BUFF, KIND_OTHER = range(6)
KIND_NAMES = ("passive", "blink", "offense", "defense", "buff", "other")

# the bot's memory of one hero, a float64 row that decide() updates in place
MEM_RETREAT, MEM_SALVE_T, MEM_CLARITY_T = range(3)
MEM_SIZE = 3

# decide()'s skill argument: the last-hit coin of this decision (Handicap.last_hits), when it has been drawn
SKILL_UNDRAWN = -1  # not drawn: decide() returns NEED_COIN where it needs it (not every decision reaches it)
NEED_COIN = -1  # decide()'s primary when the coin is needed: draw it and call again with skill 0 or 1

_WARD = A_ITEM0 + ITEM_ACTIONS.index("observer_ward")
_DAGON = A_ITEM0 + ITEM_ACTIONS.index("dagon")
_CENTRE = N_OFFSETS // 2
_REACH = (N_OFFSETS // 2) * OFFSET_STEP_CASTER  # the move offset grid's border

_F = np.float32  # a Python constant beside a float32 value, as NumPy 2 takes it (weak: cast to float32 first)


# ---- numbers as CPython and numpy compute them -----------------------------------------------------------------------
@njit(cache=True)
def _split(x):
    t = x * 134217729.0  # Veltkamp's constant, 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


@njit(cache=True)
def _exact_product(x, y):
    """x * y as an unevaluated sum hi + lo (Dekker), as CPython 3.11's dl_mul."""
    xh, xl = _split(x)
    yh, yl = _split(y)
    p = xh * yh
    q = xh * yl + xl * yh
    z = p + q
    return z, p - z + q + xl * yl


@njit(cache=True)
def py_hypot(a, b):
    """CPython 3.11's math.hypot(a, b) (Modules/mathmodule.c vector_norm, for finite inputs): the same bits, where the
    C library's hypot differs in the last place on about 0.6% of inputs."""
    a, b = abs(a), abs(b)
    mx = max(a, b)
    if mx == 0.0:
        return mx
    _, e = math.frexp(mx)
    scale = math.ldexp(1.0, -e)
    csum, frac1, frac2 = 1.0, 0.0, 0.0
    for x in (a * scale, b * scale):
        hi, lo = _exact_product(x, x)
        s = csum + hi
        frac2 += (csum - s) + hi
        csum = s
        frac1 += lo
    h = math.sqrt(csum - 1.0 + (frac1 + frac2))
    hi, lo = _exact_product(-h, h)
    s = csum + hi
    frac2 += (csum - s) + hi
    csum = s
    frac1 += lo
    h += (csum - 1.0 + (frac1 + frac2)) / (2.0 * h)
    return h / scale


@njit(cache=True)
def _block_sum32(a, lo, n):
    """numpy's pairwise float32 sum of a block of at most 128 (loops_utils.h): in order below 8, else 8 partial
    sums."""
    if n < 8:
        res = _F(-0.0)
        for i in range(n):
            res += a[lo + i]
        return res
    r = a[lo:lo + 8].copy()
    i = 8
    while i < n - (n % 8):
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def _halves32(n):
    """Where numpy's pairwise sum splits n values above a block: its first half, a multiple of 8."""
    n2 = n // 2
    return n2 - n2 % 8


@njit(cache=True)
def _pairwise_sum32(a, lo, n):
    """numpy's pairwise float32 sum of up to 256 values (MAX_OBSERVED_UNITS: at most two levels of halves above
    the blocks). Written without recursion, which numba's cache does not load back safely."""
    if n <= 128:
        return _block_sum32(a, lo, n)
    n2 = _halves32(n)
    m = n - n2
    if m <= 128:
        right = _block_sum32(a, lo + n2, m)
    else:
        m2 = _halves32(m)
        right = _block_sum32(a, lo + n2, m2) + _block_sum32(a, lo + n2 + m2, m - m2)
    return _block_sum32(a, lo, n2) + right


@njit(cache=True)
def _mean32(a):
    """np.mean of a float32 vector: the pairwise sum over the count, in float32."""
    return _pairwise_sum32(a, 0, a.shape[0]) / _F(a.shape[0])


@njit(cache=True)
def _offset(v):
    """One offset index of round(v) (half to even, as Python's round), clamped onto the grid."""
    return int(min(max(np.rint(v), -_CENTRE), _CENTRE)) + _CENTRE


# ---- the lane --------------------------------------------------------------------------------------------------------
@njit(cache=True)
def project_point(px, py, segments):
    """The lane's first nearest segment to (px, py), as argmin picks: (arc length, distance). One IEEE double
    operation each, in the order numpy's array formula takes, and the clamps compare as max(t, 0.0) and min(t, n)."""
    best_d, best_s = 0.0, 0.0
    for k in range(segments.shape[0]):
        ax, ay, dx, dy, ln, c0 = segments[k, 0], segments[k, 1], segments[k, 2], segments[k, 3], segments[k, 4], \
            segments[k, 5]
        t = (px - ax) * dx + (py - ay) * dy
        if 0.0 > t:
            t = 0.0
        if ln < t:
            t = ln
        ex, ey = px - (ax + t * dx), py - (ay + t * dy)
        d = math.sqrt(ex * ex + ey * ey)
        if k == 0 or d < best_d:
            best_d, best_s = d, c0 + t
    return best_s, best_d


@njit(cache=True)
def project(xs, ys, segments):
    """project_point for each point: (arc lengths, distances)."""
    n = xs.shape[0]
    s_out, d_out = np.empty(n), np.empty(n)
    for i in range(n):
        s_out[i], d_out[i] = project_point(xs[i], ys[i], segments)
    return s_out, d_out


@njit(cache=True)
def lane_point(s, segments):
    """The lane's point at arc length s, clamped onto the lane."""
    last = segments.shape[0] - 1
    end = segments[last, 5] + segments[last, 4]
    if 0.0 > s:
        s = 0.0
    if end < s:
        s = end
    k = -1
    for i in range(last + 1):  # searchsorted(cum, s, "right") - 1 over the segments' starts
        if segments[i, 5] <= s:
            k = i
    along = s - segments[k, 5]
    return segments[k, 0] + along * segments[k, 2], segments[k, 1] + along * segments[k, 3]


# ---- the decision ----------------------------------------------------------------------------------------------------
@njit(cache=True)
def _tanked(units, my_creeps, i):
    """Whether enough allied creeps stand near unit i (a building) to take its shots."""
    n = 0
    for r in range(units.shape[0]):
        if my_creeps[r] and np.hypot(units[r, UNIT_X] - units[i, UNIT_X], units[r, UNIT_Y] - units[i, UNIT_Y]) < \
                _F(TANK_RADIUS):
            n += 1
    return n >= TANK_MIN_CREEPS


@njit(cache=True)
def _move_to(mx, my, gx, gy, goal_is_float32, mask):
    """The move order toward (gx, gy), scaled onto the offset grid's border (or nothing when arrived or unable).
    goal_is_float32: the goal was a pair of Python floats (the fountain), which NumPy 2 takes into float32 beside the
    hero's float32 position; a lane point is float64."""
    if not mask[A_MOVE]:
        return A_NOOP, 0, _CENTRE, _CENTRE
    if goal_is_float32:
        dx, dy = _F(gx) - mx, _F(gy) - my
        d = py_hypot(float(dx), float(dy))
        if d < ARRIVED:
            return A_NOOP, 0, _CENTRE, _CENTRE
        if d > _REACH:
            dx, dy = (mx + dx / _F(d) * _F(_REACH)) - mx, (my + dy / _F(d) * _F(_REACH)) - my
        return A_MOVE, 0, _offset(dx / _F(OFFSET_STEP_CASTER)), _offset(dy / _F(OFFSET_STEP_CASTER))
    fx, fy = float(mx), float(my)
    ex, ey = gx - fx, gy - fy
    d = py_hypot(ex, ey)
    if d < ARRIVED:
        return A_NOOP, 0, _CENTRE, _CENTRE
    if d > _REACH:
        ex, ey = (fx + ex / d * _REACH) - fx, (fy + ey / d * _REACH) - fy
    return A_MOVE, 0, _offset(ex / OFFSET_STEP_CASTER), _offset(ey / OFFSET_STEP_CASTER)


@njit(cache=True)
def _defend_self(unit_masks, mask, target_type, kind, myrow):
    """A defensive spell on this hero (unit row ``myrow``), or primary -2 (none)."""
    for k in range(ABILITIES_PER_HERO):
        p = A_ABILITY0 + k
        if not mask[p]:
            continue
        tt = target_type[p]
        if kind[k] == KIND_DEFENSE:
            if tt == TT_UNIT and unit_masks[UK_ALLY, myrow]:
                return p, myrow, _CENTRE, _CENTRE
            if tt == TT_NO_TARGET:
                return p, 0, _CENTRE, _CENTRE
    return -2, 0, _CENTRE, _CENTRE


@njit(cache=True)
def _cast_on(units, unit_masks, mask, target_type, kind, radius, cast_range, j, dist):
    """An offensive spell (or dagon) on enemy hero j, or primary -2 (none)."""
    for k in range(ABILITIES_PER_HERO):
        p = A_ABILITY0 + k
        if not mask[p] or (kind[k] != KIND_OFFENSE and kind[k] != KIND_BUFF):
            continue
        tt = target_type[p]
        if kind[k] == KIND_BUFF:
            if tt == TT_NO_TARGET:
                return p, 0, _CENTRE, _CENTRE
            return -2, 0, _CENTRE, _CENTRE
        if tt == TT_UNIT or tt == TT_UNIT_OFFSET:
            if unit_masks[UK_ENEMY, j]:
                return p, j, _CENTRE, _CENTRE
        elif tt == TT_POINT:
            if dist[j] <= _F(cast_range[k] + CAST_RANGE_SLACK):
                return p, 0, _offset(units[j, UNIT_DX_TO_ME] / _F(OFFSET_STEP_CASTER)), \
                    _offset(units[j, UNIT_DY_TO_ME] / _F(OFFSET_STEP_CASTER))
        elif tt == TT_NO_TARGET:
            if dist[j] <= _F(max(radius[k], SELF_AREA_MIN_RADIUS)):
                return p, 0, _CENTRE, _CENTRE
    if mask[_DAGON] and unit_masks[UK_ENEMY, j]:
        return _DAGON, j, _CENTRE, _CENTRE
    return -2, 0, _CENTRE, _CENTRE


@njit(cache=True)
def _farm_spell(units, mask, target_type, kind, radius, enemy_creeps, dist, mana_frac):
    """An area spell on the enemy wave, or primary -2 (none)."""
    if mana_frac < _F(FARM_SPELL_MANA):
        return -2, 0, _CENTRE, _CENTRE
    rows = np.nonzero(enemy_creeps & (dist < _F(FARM_RANGE)))[0]
    if rows.shape[0] < AREA_MIN_CREEPS:
        return -2, 0, _CENTRE, _CENTRE
    xs, ys = np.empty(rows.shape[0], np.float32), np.empty(rows.shape[0], np.float32)
    for n in range(rows.shape[0]):
        xs[n], ys[n] = units[rows[n], UNIT_DX_TO_ME], units[rows[n], UNIT_DY_TO_ME]
    cx, cy = _mean32(xs), _mean32(ys)
    for k in range(BASIC_ABILITIES):
        p = A_ABILITY0 + k
        if not mask[p] or kind[k] != KIND_OFFENSE:
            continue
        tt = target_type[p]
        if tt == TT_POINT:
            return p, 0, _offset(cx / _F(OFFSET_STEP_CASTER)), _offset(cy / _F(OFFSET_STEP_CASTER))
        if tt == TT_NO_TARGET and radius[k] >= SELF_AREA_MIN_RADIUS and py_hypot(float(cx), float(cy)) < radius[k]:
            return p, 0, _CENTRE, _CENTRE
    return -2, 0, _CENTRE, _CENTRE


@njit(cache=True)
def decide(units, unit_type, unit_valid, unit_masks, action_mask, allowed, heroes, glob, target_type, me, team_size,
           kind, radius, cast_range, segments, fountain, retreat_hp, skill, mem, wave_spells=True):
    """One hero's decision: (primary, target unit row, offset x, offset y); the delay is always 0.

    The observation's arrays (moba/env/observation.py), ``allowed`` the handicap's primaries, ``me`` the hero's row
    in ``heroes``; the hero's plan (``kind``, ``radius``, ``cast_range`` per ability); its lane (``segments``, the
    rows of scripted.LanePath) and its fountain; the handicap's ``retreat_hp``; ``skill`` the last-hit coin (1: go for
    last hits, 0: hit the nearest creep, SKILL_UNDRAWN: not drawn, and the primary is NEED_COIN where it is needed,
    with ``mem`` as it would be after a call with it: call again with the coin); ``mem`` the hero's memory (MEM_*),
    updated in place; ``wave_spells`` the handicap's (false: no area spell on a wave).

    In order: dead (buy back when the base is in danger); survival (shrine, salve, clarity; retreat below retreat_hp
    until RETURN_HP, or from an enemy tower that shoots this hero, with a defensive spell on the way); teleport back
    to a far lane; fight an enemy hero in range (spells, then attacks); last hits and denies; area spells on a wave;
    push buildings that allied creeps tank; farm the wave outside untanked towers; walk to the lane's front (a ward
    near it)."""
    mask = np.empty(action_mask.shape[0], np.bool_)
    for p in range(mask.shape[0]):
        mask[p] = action_mask[p] != 0 and allowed[p]
    t = float(glob[GLOBAL_TIME])
    if heroes[me, HERO_ALIVE] < _F(0.5):
        mem[MEM_RETREAT] = 0.0
        if mask[A_BUYBACK] and glob[GLOBAL_OWN_BUILDINGS_ALIVE] <= _F(BUYBACK_BUILDINGS_ALIVE):
            return A_BUYBACK, 0, _CENTRE, _CENTRE
        return A_NOOP, 0, _CENTRE, _CENTRE

    n_units = units.shape[0]
    valid = unit_valid > 0
    myrow, best = 0, units[0, UNIT_IS_ME] if valid[0] else _F(0.0)
    for u in range(1, n_units):
        v = units[u, UNIT_IS_ME] if valid[u] else _F(0.0)
        if v > best:
            myrow, best = u, v
    mx, my = units[myrow, UNIT_X], units[myrow, UNIT_Y]
    hp, mana_frac = units[myrow, UNIT_HEALTH_FRACTION], units[myrow, UNIT_MANA_FRACTION]
    dist = units[:, UNIT_DISTANCE_TO_ME]
    utype = unit_type - 1
    enemy = valid & (units[:, UNIT_IS_ENEMY] > 0) & (units[:, UNIT_VISIBLE_NOW] > 0)
    ally = valid & (units[:, UNIT_IS_ALLY] > 0)
    creep = (utype == UT_CREEP_MELEE) | (utype == UT_CREEP_RANGED)
    tower_like = (utype == UT_TOWER) | ((utype == UT_ANCIENT) & (units[:, UNIT_ATTACK_DAMAGE] > 0))
    enemy_towers = enemy & tower_like
    my_creeps = ally & creep

    # --- survival ---
    if hp < _F(retreat_hp):
        mem[MEM_RETREAT] = 1.0
    if mem[MEM_RETREAT] != 0.0 and hp > _F(RETURN_HP):
        mem[MEM_RETREAT] = 0.0
    if mask[A_SHRINE] and hp < _F(SHRINE_HP):
        return A_SHRINE, 0, _CENTRE, _CENTRE
    if mask[A_SALVE] and hp < _F(SALVE_HP) and t - mem[MEM_SALVE_T] > SALVE_INTERVAL_S:
        mem[MEM_SALVE_T] = t
        return A_SALVE, 0, _CENTRE, _CENTRE
    if mask[A_CLARITY] and mana_frac < _F(CLARITY_MANA) and t - mem[MEM_CLARITY_T] > CLARITY_INTERVAL_S:
        mem[MEM_CLARITY_T] = t
        return A_CLARITY, 0, _CENTRE, _CENTRE
    enemies_dead = True
    for h in range(team_size, heroes.shape[0]):
        if heroes[h, HERO_ALIVE] != 0:
            enemies_dead = False
    diving = enemies_dead and hp > _F(DIVE_HP)
    danger_tower = False
    for i in range(n_units):
        if enemy_towers[i] and units[i, UNIT_IS_TARGETING_ME] > 0 and dist[i] < _F(TOWER_DANGER_TARGETED) \
                and not diving:
            danger_tower = True
    if mem[MEM_RETREAT] != 0.0 or danger_tower:
        a = _defend_self(unit_masks, mask, target_type, kind, myrow)
        if a[0] != -2 and not danger_tower:
            return a
        s, d = project_point(float(mx), float(my), segments)
        if d > LANE_NEAR or s < RETREAT_HOME_S:
            return _move_to(mx, my, fountain[0], fountain[1], True, mask)
        gx, gy = lane_point(s - RETREAT_STEP, segments)
        return _move_to(mx, my, gx, gy, False, mask)

    # --- teleport back to the lane ---
    my_s, _ = project_point(float(mx), float(my), segments)
    front_s, found = 0.0, False
    for r in range(n_units):  # the lane's front: its allied creep farthest along it
        if my_creeps[r]:
            s, d = project_point(float(units[r, UNIT_X]), float(units[r, UNIT_Y]), segments)
            if d < LANE_NEAR and (not found or s > front_s):
                front_s, found = s, True
    if not found:  # no allied creep on the lane: wait outside the nearest enemy tower's range, or at its middle
        last = segments.shape[0] - 1
        front_s = (segments[last, 5] + segments[last, 4]) * SAFE_LANE_FRACTION
        near_s, any_near = 0.0, False
        for r in range(n_units):
            if enemy_towers[r]:
                s, d = project_point(float(units[r, UNIT_X]), float(units[r, UNIT_Y]), segments)
                if d < LANE_NEAR and (not any_near or s < near_s):
                    near_s, any_near = s, True
        if any_near and near_s - TOWER_DANGER - SAFE_TOWER_MARGIN < front_s:
            front_s = near_s - TOWER_DANGER - SAFE_TOWER_MARGIN
    if mask[A_TP] and np.hypot(mx - _F(fountain[0]), my - _F(fountain[1])) < _F(TP_NEAR_FOUNTAIN) and \
            front_s - my_s > TP_MIN_DISTANCE:
        best_s, best_r = 0.0, -1
        for r in range(n_units):  # the allied tower on this lane farthest along it, not far beyond the front
            if unit_masks[UK_TELEPORT, r] and unit_type[r] - 1 == UT_TOWER:
                s, d = project_point(float(units[r, UNIT_X]), float(units[r, UNIT_Y]), segments)
                if d < LANE_NEAR and s <= front_s + TP_FRONT_SLACK and (best_r < 0 or s >= best_s):
                    best_s, best_r = s, r
        if best_r >= 0:
            return A_TP, best_r, _CENTRE, _CENTRE

    # --- fight enemy heroes ---
    j, best_score = -1, _F(0.0)
    for u in range(n_units):
        if enemy[u] and utype[u] == UT_HERO:
            score = units[u, UNIT_HEALTH_FRACTION] + dist[u] / _F(TARGET_DISTANCE_SCALE)
            if j < 0 or score < best_score:
                j, best_score = u, score
    if j >= 0:
        near_enemy_tower = False
        for i in range(n_units):
            if enemy_towers[i] and np.hypot(units[i, UNIT_X] - units[j, UNIT_X], units[i, UNIT_Y] - units[j, UNIT_Y]) \
                    < _F(TOWER_DANGER):
                near_enemy_tower = True
        their_hp = units[j, UNIT_HEALTH_FRACTION]
        if dist[j] < _F(FIGHT_RANGE) and (hp > _F(FIGHT_HP) or their_hp < hp) and \
                (not near_enemy_tower or their_hp < _F(TOWER_DIVE_KILL_HP)):
            a = _cast_on(units, unit_masks, mask, target_type, kind, radius, cast_range, j, dist)
            if a[0] != -2:
                return a
            if unit_masks[UK_ATTACK, j]:
                return A_ATTACK, j, _CENTRE, _CENTRE

    # --- last hits, denies ---
    if skill == SKILL_UNDRAWN:
        return NEED_COIN, 0, _CENTRE, _CENTRE
    skilled = skill == 1
    dmg = units[myrow, UNIT_ATTACK_DAMAGE]
    if skilled:
        lh = -1
        for i in range(n_units):
            if enemy[i] and creep[i] and dist[i] < _F(LAST_HIT_RANGE) and unit_masks[UK_ATTACK, i] and \
                    units[i, UNIT_HEALTH] <= dmg * _F(armor_multiplier(float(units[i, UNIT_ARMOR]))) * \
                    _F(LAST_HIT_MARGIN) and (lh < 0 or dist[i] < dist[lh]):
                lh = i
        if lh >= 0:
            return A_ATTACK, lh, _CENTRE, _CENTRE
        for i in range(n_units):
            if my_creeps[i] and units[i, UNIT_DENIABLE] > 0 and dist[i] < _F(DENY_RANGE) and \
                    unit_masks[UK_ATTACK, i] and units[i, UNIT_HEALTH] <= dmg * _F(LAST_HIT_MARGIN):
                return A_ATTACK, i, _CENTRE, _CENTRE

    # --- area spells on a wave ---
    if wave_spells:
        a = _farm_spell(units, mask, target_type, kind, radius, enemy & creep, dist, mana_frac)
        if a[0] != -2:
            return a

    # --- push: buildings tanked by our creeps, the nearest first ---
    targets = np.nonzero(enemy & np.logical_not(creep) & (utype != UT_HERO) & (units[:, UNIT_INVULNERABLE] == 0) &
                         (utype != UT_FOUNTAIN))[0]
    for a_ in range(1, targets.shape[0]):  # sorted by distance; equal distances keep their row order
        b = a_
        while b > 0 and dist[targets[b]] < dist[targets[b - 1]]:
            targets[b], targets[b - 1] = targets[b - 1], targets[b]
            b -= 1
    for i in targets:
        if unit_masks[UK_ATTACK, i] and (not tower_like[i] or _tanked(units, my_creeps, i) or diving):
            return A_ATTACK, i, _CENTRE, _CENTRE

    # --- farm the wave, out of untanked enemy towers' range ---
    pick = -1
    for i in range(n_units):
        if enemy[i] and creep[i] and dist[i] < _F(FARM_RANGE) and unit_masks[UK_ATTACK, i]:
            under = False
            for tw in range(n_units):
                if enemy_towers[tw] and np.hypot(units[tw, UNIT_X] - units[i, UNIT_X], units[tw, UNIT_Y] -
                                                 units[i, UNIT_Y]) < _F(TOWER_DANGER) and \
                        not _tanked(units, my_creeps, tw):
                    under = True
                    break
            if not under:
                key_i = units[i, UNIT_HEALTH] if skilled else dist[i]
                if pick < 0 or key_i < (units[pick, UNIT_HEALTH] if skilled else dist[pick]):
                    pick = i
    if pick >= 0:
        return A_ATTACK, pick, _CENTRE, _CENTRE

    # --- walk to the lane's front, out of untanked tower range ---
    goal_s = front_s - FOLLOW_BEHIND
    for i in range(n_units):
        if enemy_towers[i]:
            ts, td = project_point(float(units[i, UNIT_X]), float(units[i, UNIT_Y]), segments)
            if td < LANE_NEAR and not _tanked(units, my_creeps, i) and ts - TOWER_DANGER - TOWER_WAIT_MARGIN < goal_s:
                goal_s = ts - TOWER_DANGER - TOWER_WAIT_MARGIN
    gx, gy = lane_point(goal_s, segments)
    if mask[_WARD] and abs(my_s - goal_s) < WARD_NEAR_GOAL:
        return _WARD, 0, _offset((gx - float(mx) + WARD_AHEAD * np.sign(segments[0, 2])) / OFFSET_STEP_WARD), \
            _offset((gy - float(my) + WARD_AHEAD * np.sign(segments[0, 3])) / OFFSET_STEP_WARD)
    return _move_to(mx, my, gx, gy, False, mask)
