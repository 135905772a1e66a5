"""Agents that need no training: a scripted bot and a random agent. Both play through the same observations and
actions as the learner (moba/env), one team at a time.

The scripted bot lanes (2-1-2 in 5v5, mid in 1v1, inside its lane assignment when it has one), last-hits and denies,
casts its abilities on enemy heroes and on creep waves, heals and retreats at low health (salve, shrine, town portal,
fountain), pushes with its creep waves and attacks buildings only while its creeps tank the tower, and falls back
to defend when the enemy wave pushes. It knows the static game data a human player knows (the map's lanes, hero
and item definitions), never the hidden state.

A ``Handicap`` takes parts of that away (a reaction delay, abilities or items off, worse last hits, a lower retreat
threshold, random decisions): the levels of the reference ladder and the curriculum's warm-up levels
(``policies/agents/ladder.py``) are the bot under named handicaps. Its only randomness (the last-hit skill, the random
decisions) comes from the agent's seeded generator.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from moba.env.actions import (A_ABILITY0, A_ATTACK, A_BUYBACK, A_ITEM0, A_MOVE, A_NOOP, A_SHRINE, N_OFFSETS, N_PRIMARY,
                              NOOP_ACTION, OFFSET_STEP_CASTER, OFFSET_STEP_WARD)
from moba.env.observation import (GLOBAL_IS_DIRE, GLOBAL_OWN_BUILDINGS_ALIVE, GLOBAL_TIME, HERO_ALIVE,
                                  LANE_ASSIGNED_BOT, LANE_ASSIGNED_TOP, UNIT_ARMOR, UNIT_ATTACK_DAMAGE, UNIT_DENIABLE,
                                  UNIT_DISTANCE_TO_ME, UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_HEALTH, UNIT_HEALTH_FRACTION,
                                  UNIT_INVULNERABLE, UNIT_IS_ALLY, UNIT_IS_ENEMY, UNIT_IS_ME, UNIT_IS_TARGETING_ME,
                                  UNIT_MANA_FRACTION, UNIT_VISIBLE_NOW, UNIT_X, UNIT_Y)
from moba.game.abilities import (AREA_CIRCLE_SELF, EFFECT_BLINK, EFFECT_DAMAGE, EFFECT_DAMAGE_BUFF, EFFECT_DOT,
                                 EFFECT_HEAL, EFFECT_REGEN, EFFECT_SHIELD, EFFECT_SLOW, EFFECT_STUN,
                                 TARGET_TYPE_READS_UNIT, TT_NO_TARGET, TT_POINT, TT_UNIT, TT_UNIT_OFFSET, UK_ALLY,
                                 UK_ATTACK, UK_ENEMY, UK_TELEPORT)
from moba.game.constants import (LANE_BOT, LANE_MID, LANE_NAMES, LANE_TOP, N_DELAYS, UT_ANCIENT, UT_CREEP_MELEE,
                                 UT_CREEP_RANGED, UT_FOUNTAIN, UT_HERO, UT_TOWER)
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS
from moba.game.kernels import armor_multiplier
from moba.game.map import fountain_position, lane_path
from moba.game.tables import ABILITIES_PER_HERO

ITEM_ACTION = {name: A_ITEM0 + k for k, name in enumerate(ITEM_ACTIONS)}

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
OFFENSIVE = (EFFECT_DAMAGE, EFFECT_STUN, EFFECT_SLOW, EFFECT_DOT)
DEFENSIVE = (EFFECT_HEAL, EFFECT_SHIELD, EFFECT_REGEN)
LANES_5V5 = (LANE_BOT, LANE_BOT, LANE_MID, LANE_TOP, LANE_TOP)  # Radiant's safe lane is the bottom one
ABILITY_ACTIONS = tuple(range(A_ABILITY0, A_ITEM0))
BASIC_ABILITIES = ABILITIES_PER_HERO - 1  # area spells on a wave: the basic abilities, never the ultimate (the last)
ITEM_USE_ACTIONS = tuple(range(A_ITEM0, A_ITEM0 + len(ITEM_ACTIONS)))


@dataclass(frozen=True)
class Handicap:
    """What a weaker scripted bot lacks; the defaults are the full bot. Purchases are the engine's (the same for every
    agent), so ``items`` only decides whether the bot uses the items it holds."""
    reaction_steps: int = 0  # agent steps between decisions: in between, no new order (heroes keep their last one)
    abilities: bool = True  # cast abilities (false: never; passives still work)
    items: bool = True  # use items: salve, clarity, town portal, ward, dagon (false: never)
    last_hits: float = 1.0  # chance per decision to go for last hits and denies; otherwise hit the nearest creep
    retreat_hp: float = RETREAT_HP  # go home below this health fraction
    random_actions: float = 0.0  # chance per decision to take the random agent's action instead of the bot's

    def __post_init__(self):
        def bad(key, allowed):
            raise ValueError(f"handicap {key!r}: must be {allowed}, got {getattr(self, key)!r}")
        if isinstance(self.reaction_steps, bool) or not isinstance(self.reaction_steps, int) \
                or self.reaction_steps < 0:
            bad("reaction_steps", "an int >= 0")
        for key in ("abilities", "items"):
            if not isinstance(getattr(self, key), bool):
                bad(key, "true or false")
        for key, hi in (("last_hits", 1.0), ("retreat_hp", RETURN_HP), ("random_actions", 1.0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= hi:
                bad(key, f"a number in [0, {hi}]")

    def allowed_primaries(self) -> np.ndarray:
        """(N_PRIMARY,) bool: the primary actions the handicapped bot may choose."""
        allowed = np.ones(N_PRIMARY, bool)
        allowed[list(ABILITY_ACTIONS)] = self.abilities
        allowed[list(ITEM_USE_ACTIONS)] = self.items
        return allowed


FULL_BOT = Handicap()


# the engine's kernel as plain Python: the same double arithmetic without numba's dispatch on every scalar call
_armor_multiplier = armor_multiplier.py_func


def _noop(p=A_NOOP):
    """Primary action p with nothing else chosen (no delay, the first unit row, the centre offset)."""
    return {**NOOP_ACTION, "primary": p}


def _offset(dx, dy, step):
    c = N_OFFSETS // 2
    return min(max(round(dx / step), -c), c) + c, min(max(round(dy / step), -c), c) + c


@njit(cache=True)
def _project(xs, ys, segments):
    """LanePath.project's loop: for each point, the first nearest segment (as argmin picks), its arc length and
    distance. Each operation is one IEEE double operation in the order numpy's array formula takes (no fused
    multiply-add: numba compiles without fastmath), and the clamps compare as Python's max(t, 0.0) and min(t, n)."""
    n = xs.shape[0]
    s_out, d_out = np.empty(n), np.empty(n)
    for i in range(n):
        px, py = xs[i], ys[i]
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
        s_out[i], d_out[i] = best_s, best_d
    return s_out, d_out


class LanePath:
    """A lane as its creeps walk it, with arc-length projection of points."""

    def __init__(self, team: int, lane: int):
        self.pts = np.array(lane_path(team, lane), np.float64)
        seg = self.pts[1:] - self.pts[:-1]
        self.len = np.linalg.norm(seg, axis=1)
        self.cum = np.concatenate([[0.0], np.cumsum(self.len)])
        self.dir = seg / self.len[:, None]
        # per segment, a row: its start (x, y), its direction (x, y), its length and the arc length at its start
        self._segments = np.column_stack([self.pts[:-1], self.dir, self.len, self.cum[:-1]]).astype(np.float64)

    def project(self, x, y):
        """(arc length of the nearest point, distance to the path) for arrays of points (or scalars). Compiled
        (``_project``): a lane has 3-5 segments and a query a handful of points, where numpy's per-call cost, and
        then Python's float loop, were most of the bot's time. The arithmetic is numpy's (x - (a + t u), then
        sqrt(ex^2 + ey^2) as norm does), so the values are the same to the bit."""
        return _project(np.atleast_1d(np.asarray(x, np.float64)), np.atleast_1d(np.asarray(y, np.float64)),
                        self._segments)

    def point(self, s):
        s = min(max(float(s), 0.0), float(self.cum[-1]))
        k = min(int(np.searchsorted(self.cum, s, side="right")) - 1, len(self.len) - 1)
        return self.pts[k] + (s - self.cum[k]) * self.dir[k]


class _HeroPlan:
    """Static knowledge of one hero definition: what each ability is for."""

    def __init__(self, hero_def: int):
        self.hero = HEROES[hero_def]
        self.kind = []
        self.radius = []
        for ab in self.hero.abilities:
            kinds = {e.kind for e in ab.effects}
            if ab.passive:
                self.kind.append("passive")
            elif EFFECT_BLINK in kinds:
                self.kind.append("blink")
            elif kinds & set(OFFENSIVE):
                self.kind.append("offense")
            elif kinds & set(DEFENSIVE):
                self.kind.append("defense")
            elif EFFECT_DAMAGE_BUFF in kinds:
                self.kind.append("buff")
            else:
                self.kind.append("other")
            self.radius.append(max([e.radius for e in ab.effects if e.area == AREA_CIRCLE_SELF], default=0.0))
        self.cast_range = [ab.cast_range[0] for ab in self.hero.abilities]


class ScriptedAgent:
    """Controls one team. ``act`` takes the team's observations and returns the team's actions. ``handicap``: what
    the bot lacks (default: nothing, the full bot)."""

    def __init__(self, seed: int = 0, handicap: Handicap = FULL_BOT):
        if not isinstance(handicap, Handicap):
            raise ValueError(f"handicap must be a policies.agents.scripted.Handicap, got {handicap!r}")
        self.rng = np.random.default_rng(seed)
        self.handicap = handicap
        self._allowed = handicap.allowed_primaries()
        self._state = {}

    def reset(self, agent_ids=None):
        self._state = {}

    # ---- per-hero memory -------------------------------------------------------------------------------------------
    def _hero_state(self, aid, obs):
        st = self._state.get(aid)
        if st is None:
            me = int(np.argmax(obs["me"]))
            team = int(obs["global"][GLOBAL_IS_DIRE])
            n = len(obs["me"])
            hero_def = int(obs["hero_id"][me]) - 1
            # lane ids: column LANE_ASSIGNED_TOP + lane holds the assignment to that lane
            assigned = np.nonzero(obs["private_lanes"][me, LANE_ASSIGNED_TOP:LANE_ASSIGNED_BOT + 1] > 0)[0]
            lane = LANE_MID if n == 1 else LANES_5V5[me]
            if len(assigned) < len(LANE_NAMES) and lane not in assigned:
                lane = int(assigned[me % len(assigned)])
            st = {"team": team, "me": me, "lane": lane, "path": LanePath(team, lane), "plan": _HeroPlan(hero_def),
                  "retreat": False, "salve_t": LONG_AGO_S, "clarity_t": LONG_AGO_S, "steps": 0}
            self._state[aid] = st
        return st

    def act(self, observations: dict) -> dict:
        return {aid: self._react(aid, obs) for aid, obs in observations.items()}

    def _react(self, aid, obs):
        """The decision of this step, or no new order between decisions (the reaction handicap)."""
        st = self._hero_state(aid, obs)
        st["steps"] += 1
        if (st["steps"] - 1) % (1 + self.handicap.reaction_steps):
            return _noop()
        # the coin is drawn only by a bot that has the handicap, so the other levels' games stay as they were
        if self.handicap.random_actions > 0 and self.rng.random() < self.handicap.random_actions:
            return random_action(obs, self.rng, self._allowed)
        return self._act_one(st, obs)

    # ---- the decision ------------------------------------------------------------------------------------------------
    def _act_one(self, st, obs):
        me = st["me"]
        mask = obs["action_mask"] & self._allowed
        hero = obs["heroes"][me]
        t = float(obs["global"][GLOBAL_TIME])
        if hero[HERO_ALIVE] < 0.5:
            st["retreat"] = False
            if mask[A_BUYBACK] and obs["global"][GLOBAL_OWN_BUILDINGS_ALIVE] <= BUYBACK_BUILDINGS_ALIVE:
                return _noop(A_BUYBACK)
            return _noop()
        units, utype, valid = obs["units"], obs["unit_type"] - 1, obs["unit_valid"] > 0
        myrow = int(np.argmax(units[:, UNIT_IS_ME] * valid))
        mx, my = units[myrow, UNIT_X], units[myrow, UNIT_Y]
        hp = units[myrow, UNIT_HEALTH_FRACTION]
        mana_frac = units[myrow, UNIT_MANA_FRACTION]
        enemy = valid & (units[:, UNIT_IS_ENEMY] > 0) & (units[:, UNIT_VISIBLE_NOW] > 0)
        ally = valid & (units[:, UNIT_IS_ALLY] > 0)
        dist = units[:, UNIT_DISTANCE_TO_ME]
        creep = (utype == UT_CREEP_MELEE) | (utype == UT_CREEP_RANGED)
        tower_like = (utype == UT_TOWER) | ((utype == UT_ANCIENT) & (units[:, UNIT_ATTACK_DAMAGE] > 0))
        enemy_heroes = np.nonzero(enemy & (utype == UT_HERO))[0]
        fountain = fountain_position(st["team"])
        path = st["path"]

        # --- survival ---
        if hp < self.handicap.retreat_hp:
            st["retreat"] = True
        if st["retreat"] and hp > RETURN_HP:
            st["retreat"] = False
        if mask[A_SHRINE] and hp < SHRINE_HP:
            return _noop(A_SHRINE)
        salve = ITEM_ACTION["healing_salve"]
        if mask[salve] and hp < SALVE_HP and t - st["salve_t"] > SALVE_INTERVAL_S:
            st["salve_t"] = t
            return _noop(salve)
        clarity = ITEM_ACTION["clarity"]
        if mask[clarity] and mana_frac < CLARITY_MANA and t - st["clarity_t"] > CLARITY_INTERVAL_S:
            st["clarity_t"] = t
            return _noop(clarity)
        n = len(obs["me"])
        enemies_dead = not obs["heroes"][n:, HERO_ALIVE].any()
        diving = enemies_dead and hp > DIVE_HP
        danger_tower = [i for i in np.nonzero(enemy & tower_like)[0]
                        if units[i, UNIT_IS_TARGETING_ME] > 0 and dist[i] < TOWER_DANGER_TARGETED and not diving]
        if st["retreat"] or danger_tower:
            a = self._defend_self(obs, st, enemy_heroes, dist, mask)
            if a is not None and not danger_tower:
                return a
            return self._move_to(mx, my, *self._retreat_point(path, mx, my, fountain), mask)

        # --- teleport back to the lane ---
        my_s, _ = path.project(mx, my)
        front_s = self._front(path, units, ally & creep)
        if front_s is None:  # no allied creep on the lane: wait where it is safe
            front_s = np.array([self._safe_s(path, units, enemy, tower_like)])
        tp = ITEM_ACTION["town_portal_scroll"]
        if mask[tp] and np.hypot(mx - fountain[0], my - fountain[1]) < TP_NEAR_FOUNTAIN and front_s[0] - my_s[0] > \
                TP_MIN_DISTANCE:
            a = self._teleport(obs, path, front_s[0])
            if a is not None:
                return a

        # --- fight enemy heroes ---
        if len(enemy_heroes):
            score = units[enemy_heroes, UNIT_HEALTH_FRACTION] + dist[enemy_heroes] / TARGET_DISTANCE_SCALE
            j = enemy_heroes[np.argmin(score)]
            near_enemy_tower = any(np.hypot(units[i, UNIT_X] - units[j, UNIT_X], units[i, UNIT_Y] -
                                            units[j, UNIT_Y]) < TOWER_DANGER for i in np.nonzero(enemy & tower_like)[0])
            their_hp = units[j, UNIT_HEALTH_FRACTION]
            if dist[j] < FIGHT_RANGE and (hp > FIGHT_HP or their_hp < hp) and \
                    (not near_enemy_tower or their_hp < TOWER_DIVE_KILL_HP):
                a = self._cast_on(obs, st, j, dist, mask, enemy)
                if a is not None:
                    return a
                if obs["unit_masks"][UK_ATTACK, j]:
                    return self._attack(j)

        # --- last hits, denies ---
        skilled = self.handicap.last_hits >= 1.0 or self.rng.random() < self.handicap.last_hits
        dmg = units[myrow, UNIT_ATTACK_DAMAGE]
        lh = [i for i in np.nonzero(enemy & creep & (dist < LAST_HIT_RANGE))[0] if obs["unit_masks"][UK_ATTACK, i]
              and units[i, UNIT_HEALTH] <= dmg * _armor_multiplier(float(units[i, UNIT_ARMOR])) * LAST_HIT_MARGIN]
        if lh and skilled:
            return self._attack(min(lh, key=lambda i: dist[i]))
        dn = [i for i in np.nonzero(ally & creep & (units[:, UNIT_DENIABLE] > 0) & (dist < DENY_RANGE))[0]
              if obs["unit_masks"][UK_ATTACK, i] and units[i, UNIT_HEALTH] <= dmg * LAST_HIT_MARGIN]
        if dn and skilled:
            return self._attack(dn[0])

        # --- area spells on a wave ---
        a = self._farm_spell(obs, st, units, enemy & creep, dist, mask, mana_frac)
        if a is not None:
            return a

        # --- push: buildings tanked by our creeps ---
        targets = np.nonzero(enemy & ~creep & (utype != UT_HERO) & (units[:, UNIT_INVULNERABLE] == 0)
                             & (utype != UT_FOUNTAIN))[0]
        for i in targets[np.argsort(dist[targets])]:
            if obs["unit_masks"][UK_ATTACK, i] and (not tower_like[i] or self._tanked(units, ally & creep, i)
                                                    or diving):
                return self._attack(i)

        # --- farm the wave ---
        wave = [i for i in np.nonzero(enemy & creep & (dist < FARM_RANGE))[0] if obs["unit_masks"][UK_ATTACK, i]
                and not self._under_enemy_tower(units, enemy & tower_like, i, ally & creep)]
        if wave:
            return self._attack(min(wave, key=lambda i: units[i, UNIT_HEALTH] if skilled else dist[i]))

        # --- walk to the lane's front, out of untanked tower range ---
        goal_s = front_s[0] - FOLLOW_BEHIND
        for i in np.nonzero(enemy & tower_like)[0]:
            ts, td = path.project(units[i, UNIT_X], units[i, UNIT_Y])
            if td[0] < LANE_NEAR and not self._tanked(units, ally & creep, i):
                goal_s = min(goal_s, ts[0] - TOWER_DANGER - TOWER_WAIT_MARGIN)
        gx, gy = path.point(goal_s)
        ward = ITEM_ACTION["observer_ward"]
        if mask[ward] and abs(my_s[0] - goal_s) < WARD_NEAR_GOAL:
            ox, oy = _offset(gx - mx + WARD_AHEAD * np.sign(path.dir[0, 0]),
                             gy - my + WARD_AHEAD * np.sign(path.dir[0, 1]), OFFSET_STEP_WARD)
            return {**_noop(ward), "offset_x": ox, "offset_y": oy}
        return self._move_to(mx, my, gx, gy, mask)

    # ---- helpers -----------------------------------------------------------------------------------------------------
    @staticmethod
    def _attack(row):
        return {**_noop(A_ATTACK), "target_unit": int(row)}

    @staticmethod
    def _move_to(mx, my, gx, gy, mask):
        if not mask[A_MOVE]:
            return _noop()
        d = math.hypot(gx - mx, gy - my)
        if d < ARRIVED:
            return _noop()
        reach = (N_OFFSETS // 2) * OFFSET_STEP_CASTER  # the offset grid's border
        if d > reach:  # keep the direction exact: scale the step onto the offset grid's border
            gx, gy = mx + (gx - mx) / d * reach, my + (gy - my) / d * reach
        ox, oy = _offset(gx - mx, gy - my, OFFSET_STEP_CASTER)
        return {**_noop(A_MOVE), "offset_x": ox, "offset_y": oy}

    @staticmethod
    def _front(path, units, mine):
        """Arc length of the lane's front: the allied creep of this lane farthest along it (None without one)."""
        rows = np.nonzero(mine)[0]
        if len(rows):
            s, d = path.project(units[rows, UNIT_X], units[rows, UNIT_Y])
            s = s[d < LANE_NEAR]
            if len(s):
                return np.array([s.max()])
        return None

    @staticmethod
    def _safe_s(path, units, enemy, tower_like):
        """Without creeps: wait just outside the nearest enemy tower's range, or at the lane's middle."""
        rows = np.nonzero(enemy & tower_like)[0]
        best = path.cum[-1] * SAFE_LANE_FRACTION
        if len(rows):
            s, d = path.project(units[rows, UNIT_X], units[rows, UNIT_Y])
            s = s[d < LANE_NEAR]
            if len(s):
                best = min(best, s.min() - TOWER_DANGER - SAFE_TOWER_MARGIN)
        return best

    @staticmethod
    def _retreat_point(path, mx, my, fountain):
        s, d = path.project(mx, my)
        if d[0] > LANE_NEAR or s[0] < RETREAT_HOME_S:
            return fountain
        return tuple(path.point(s[0] - RETREAT_STEP))

    @staticmethod
    def _tanked(units, my_creeps, i):
        rows = np.nonzero(my_creeps)[0]
        if not len(rows):
            return False
        d = np.hypot(units[rows, UNIT_X] - units[i, UNIT_X], units[rows, UNIT_Y] - units[i, UNIT_Y])
        return int((d < TANK_RADIUS).sum()) >= TANK_MIN_CREEPS

    def _under_enemy_tower(self, units, enemy_towers, i, my_creeps):
        for tw in np.nonzero(enemy_towers)[0]:
            if np.hypot(units[tw, UNIT_X] - units[i, UNIT_X], units[tw, UNIT_Y] - units[i, UNIT_Y]) < \
                    TOWER_DANGER and not self._tanked(units, my_creeps, tw):
                return True
        return False

    def _teleport(self, obs, path, front_s):
        rows = np.nonzero(obs["unit_masks"][UK_TELEPORT])[0]
        rows = [r for r in rows if obs["unit_type"][r] - 1 == UT_TOWER]
        if not rows:
            return None
        s, d = path.project(obs["units"][rows, UNIT_X], obs["units"][rows, UNIT_Y])
        ok = [(si, r) for si, di, r in zip(s, d, rows) if di < LANE_NEAR and si <= front_s + TP_FRONT_SLACK]
        if not ok:
            return None
        _, r = max(ok)
        return {**_noop(ITEM_ACTION["town_portal_scroll"]), "target_unit": int(r)}

    def _cast_on(self, obs, st, j, dist, mask, enemy):
        plan = st["plan"]
        units = obs["units"]
        for k in range(ABILITIES_PER_HERO):
            p = A_ABILITY0 + k
            if not mask[p] or plan.kind[k] not in ("offense", "buff"):
                continue
            tt = obs["action_target_type"][p]
            if plan.kind[k] == "buff":
                return _noop(p) if tt == TT_NO_TARGET else None
            if tt == TT_UNIT or tt == TT_UNIT_OFFSET:
                if obs["unit_masks"][UK_ENEMY, j]:
                    return {**_noop(p), "target_unit": int(j)}
            elif tt == TT_POINT:
                if dist[j] <= plan.cast_range[k] + CAST_RANGE_SLACK:
                    ox, oy = _offset(units[j, UNIT_DX_TO_ME], units[j, UNIT_DY_TO_ME], OFFSET_STEP_CASTER)
                    return {**_noop(p), "offset_x": ox, "offset_y": oy}
            elif tt == TT_NO_TARGET:
                if dist[j] <= max(plan.radius[k], SELF_AREA_MIN_RADIUS):
                    return _noop(p)
        dagon = ITEM_ACTION["dagon"]
        if mask[dagon] and obs["unit_masks"][UK_ENEMY, j]:
            return {**_noop(dagon), "target_unit": int(j)}
        return None

    def _defend_self(self, obs, st, enemy_heroes, dist, mask):
        plan = st["plan"]
        me_row = int(np.argmax(obs["units"][:, UNIT_IS_ME] * obs["unit_valid"]))
        for k in range(ABILITIES_PER_HERO):
            p = A_ABILITY0 + k
            if not mask[p]:
                continue
            tt = obs["action_target_type"][p]
            if plan.kind[k] == "defense":
                if tt == TT_UNIT and obs["unit_masks"][UK_ALLY, me_row]:
                    return {**_noop(p), "target_unit": me_row}
                if tt == TT_NO_TARGET:
                    return _noop(p)
        return None

    def _farm_spell(self, obs, st, units, enemy_creeps, dist, mask, mana_frac):
        if mana_frac < FARM_SPELL_MANA:
            return None
        rows = np.nonzero(enemy_creeps & (dist < FARM_RANGE))[0]
        if len(rows) < AREA_MIN_CREEPS:
            return None
        cx, cy = units[rows, UNIT_DX_TO_ME].mean(), units[rows, UNIT_DY_TO_ME].mean()
        plan = st["plan"]
        for k in range(BASIC_ABILITIES):
            p = A_ABILITY0 + k
            if not mask[p] or plan.kind[k] != "offense":
                continue
            tt = obs["action_target_type"][p]
            if tt == TT_POINT:
                ox, oy = _offset(cx, cy, OFFSET_STEP_CASTER)
                return {**_noop(p), "offset_x": ox, "offset_y": oy}
            if tt == TT_NO_TARGET and plan.radius[k] >= SELF_AREA_MIN_RADIUS and math.hypot(cx, cy) < plan.radius[k]:
                return _noop(p)
        return None


class RandomAgent:
    """Uniformly random legal actions: a legal primary action, a unit from that action's unit mask, random delay and
    offsets. The TrueSkill anchor (mu = 0) and the floor every learner must clear."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def reset(self, agent_ids=None):
        pass

    def act(self, observations: dict) -> dict:
        return {aid: random_action(obs, self.rng) for aid, obs in observations.items()}


def random_action(obs: dict, rng: np.random.Generator, allowed: np.ndarray | None = None) -> dict:
    """One hero's uniformly random legal action: a legal primary action (of those `allowed`, when given), a unit from
    that action's unit mask, random delay and offsets (the random agent's, and a ``Handicap.random_actions`` bot's
    random decisions)."""
    mask = obs["action_mask"] if allowed is None else obs["action_mask"] & allowed
    p = int(rng.choice(np.nonzero(mask)[0]))
    units = np.nonzero(obs["unit_masks"][obs["action_unit_kind"][p]])[0]
    unit = int(rng.choice(units)) if len(units) else 0
    return {"primary": p, "delay": int(rng.integers(N_DELAYS)), "target_unit": unit,
            "offset_x": int(rng.integers(N_OFFSETS)), "offset_y": int(rng.integers(N_OFFSETS))}


class PredrawnRandomActions:
    """The random agent's distribution for benchmarks: uniform over the legal primary actions, a legal unit row for
    actions that read one, random delay and offsets, with every random number drawn up front so that the agent
    costs next to nothing. Called with all agents' observations, returns all agents' actions."""

    def __init__(self, agent_ids, max_units: int, n_draws: int, rng: np.random.Generator):
        self.ids = list(agent_ids)
        self.reads_unit = np.array(TARGET_TYPE_READS_UNIT, bool)
        self.r = rng.random((n_draws, len(self.ids), 2))
        self.ints = rng.integers(0, (N_DELAYS, N_OFFSETS, N_OFFSETS), size=(n_draws, len(self.ids), 3))
        self.rows = rng.integers(0, max_units, size=(n_draws, len(self.ids)))
        self.i = 0

    def __call__(self, obs: dict) -> dict:
        i = self.i % self.r.shape[0]
        self.i += 1
        out = {}
        for j, a in enumerate(self.ids):
            o = obs[a]
            legal = np.flatnonzero(o["action_mask"])
            p = int(legal[int(self.r[i, j, 0] * len(legal))])
            row = int(self.rows[i, j])
            if self.reads_unit[o["action_target_type"][p]]:
                cand = np.flatnonzero(o["unit_masks"][o["action_unit_kind"][p]])
                if len(cand):
                    row = int(cand[int(self.r[i, j, 1] * len(cand))])
            d, ox, oy = (int(v) for v in self.ints[i, j])
            out[a] = {"primary": p, "delay": d, "target_unit": row, "offset_x": ox, "offset_y": oy}
        return out
