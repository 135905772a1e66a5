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

from dataclasses import dataclass

import numpy as np

from moba.env.actions import A_ABILITY0, A_ITEM0, A_NOOP, N_OFFSETS, N_PRIMARY, NOOP_ACTION
from moba.env.observation import GLOBAL_IS_DIRE, GLOBAL_TIME, LANE_ASSIGNED_BOT, LANE_ASSIGNED_TOP
from moba.game.abilities import (AREA_CIRCLE_SELF, EFFECT_BLINK, EFFECT_DAMAGE, EFFECT_DAMAGE_BUFF, EFFECT_DOT,
                                 EFFECT_HEAL, EFFECT_REGEN, EFFECT_SHIELD, EFFECT_SLOW, EFFECT_STUN,
                                 TARGET_TYPE_READS_UNIT)
from moba.game.constants import LANE_BOT, LANE_MID, LANE_NAMES, LANE_TOP, N_DELAYS
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS
from moba.game.map import fountain_position, lane_path
from policies.agents.scripted_decision import (KIND_NAMES, LONG_AGO_S, MEM_CLARITY_T, MEM_RETREAT, MEM_SALVE_T,
                                               MEM_SIZE, NEED_COIN, RETREAT_HP, RETURN_HP, SKILL_UNDRAWN, decide,
                                               lane_point, project)

OFFENSIVE = (EFFECT_DAMAGE, EFFECT_STUN, EFFECT_SLOW, EFFECT_DOT)
DEFENSIVE = (EFFECT_HEAL, EFFECT_SHIELD, EFFECT_REGEN)
LANES_5V5 = (LANE_BOT, LANE_BOT, LANE_MID, LANE_TOP, LANE_TOP)  # Radiant's safe lane is the bottom one
ABILITY_ACTIONS = tuple(range(A_ABILITY0, A_ITEM0))
ITEM_USE_ACTIONS = tuple(range(A_ITEM0, A_ITEM0 + len(ITEM_ACTIONS)))

ULTIMATE_SLOT = 3  # the hero's fourth ability is its ultimate (moba/game/abilities.Hero)
SPELL_LOCKOUT_S = 5.0  # game seconds without casts after a cast refused by Handicap.spell_share's coin

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
    wave_spells: bool = True  # cast area spells on an enemy wave (false: spells only at heroes; with abilities)
    ultimate: bool = True  # cast its ultimate (the fourth ability; with abilities)
    # chance that a cast it chooses goes ahead; a cast refused by the coin keeps it from casting for SPELL_LOCKOUT_S
    # (it chooses as scripted_2 with its items meanwhile), so that the share of its casts falls with this share
    spell_share: float = 1.0

    def __post_init__(self):
        def bad(key, allowed):
            raise ValueError(f"handicap {key!r}: must be {allowed}, got {getattr(self, key)!r}")
        if isinstance(self.reaction_steps, bool) or not isinstance(self.reaction_steps, int) \
                or self.reaction_steps < 0:
            bad("reaction_steps", "an int >= 0")
        for key in ("abilities", "items", "wave_spells", "ultimate"):
            if not isinstance(getattr(self, key), bool):
                bad(key, "true or false")
        for key, hi in (("last_hits", 1.0), ("retreat_hp", RETURN_HP), ("random_actions", 1.0),
                        ("spell_share", 1.0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= hi:
                bad(key, f"a number in [0, {hi}]")

    def allowed_primaries(self) -> np.ndarray:
        """(N_PRIMARY,) bool: the primary actions the handicapped bot may choose."""
        allowed = np.ones(N_PRIMARY, bool)
        allowed[list(ABILITY_ACTIONS)] = self.abilities
        allowed[A_ABILITY0 + ULTIMATE_SLOT] = self.abilities and self.ultimate
        allowed[list(ITEM_USE_ACTIONS)] = self.items
        return allowed


FULL_BOT = Handicap()


def _noop(p=A_NOOP):
    """Primary action p with nothing else chosen (no delay, the first unit row, the centre offset)."""
    return {**NOOP_ACTION, "primary": p}


class LanePath:
    """A lane as its creeps walk it, with arc-length projection of points (compiled: scripted_decision.project)."""

    def __init__(self, team: int, lane: int):
        self.pts = np.array(lane_path(team, lane), np.float64)
        seg = self.pts[1:] - self.pts[:-1]
        self.len = np.linalg.norm(seg, axis=1)
        self.cum = np.concatenate([[0.0], np.cumsum(self.len)])
        self.dir = seg / self.len[:, None]
        # per segment, a row: its start (x, y), its direction (x, y), its length and the arc length at its start
        self.segments = np.column_stack([self.pts[:-1], self.dir, self.len, self.cum[:-1]]).astype(np.float64)

    def project(self, x, y):
        """(arc length of the nearest point, distance to the path) for arrays of points (or scalars). The arithmetic
        is numpy's (x - (a + t u), then sqrt(ex^2 + ey^2) as norm does), so the values are the same to the bit."""
        return project(np.atleast_1d(np.asarray(x, np.float64)), np.atleast_1d(np.asarray(y, np.float64)),
                       self.segments)

    def point(self, s):
        """The point at arc length s, clamped onto the lane."""
        return np.array(lane_point(float(s), self.segments))


class _HeroPlan:
    """Static knowledge of one hero definition: what each ability is for (``kind``, KIND_NAMES' index), the radius of
    its area around the caster and its cast range."""

    def __init__(self, hero_def: int):
        self.hero = HEROES[hero_def]
        kinds, radius = [], []
        for ab in self.hero.abilities:
            effects = {e.kind for e in ab.effects}
            if ab.passive:
                kinds.append("passive")
            elif EFFECT_BLINK in effects:
                kinds.append("blink")
            elif effects & set(OFFENSIVE):
                kinds.append("offense")
            elif effects & set(DEFENSIVE):
                kinds.append("defense")
            elif EFFECT_DAMAGE_BUFF in effects:
                kinds.append("buff")
            else:
                kinds.append("other")
            radius.append(max([e.radius for e in ab.effects if e.area == AREA_CIRCLE_SELF], default=0.0))
        self.kind = np.array([KIND_NAMES.index(k) for k in kinds], np.int64)
        self.radius = np.array(radius, np.float64)
        self.cast_range = np.array([ab.cast_range[0] for ab in self.hero.abilities], np.float64)


class ScriptedAgent:
    """Controls one team. ``act`` takes the team's observations and returns the team's actions. ``handicap``: what
    the bot lacks (default: nothing, the full bot). The decision itself is ``scripted_decision.decide``; this class
    keeps each hero's memory and applies the handicap's reaction delay and coins."""

    compiled = (decide,)  # the numba entry point of a decision (moba/env/compiled.compile_ahead builds it ahead)

    def __init__(self, seed: int = 0, handicap: Handicap = FULL_BOT):
        if not isinstance(handicap, Handicap):
            raise ValueError(f"handicap must be a policies.agents.scripted.Handicap, got {handicap!r}")
        self.rng = np.random.default_rng(seed)
        self.handicap = handicap
        self._allowed = handicap.allowed_primaries()
        self._allowed_no_spells = self._allowed.copy()
        self._allowed_no_spells[list(ABILITY_ACTIONS)] = False
        self._retreat_hp = float(handicap.retreat_hp)
        self._skill = 1 if handicap.last_hits >= 1.0 else SKILL_UNDRAWN
        self._state = {}

    def reset(self, agent_ids=None):
        self._state = {}

    def retreating(self, aid) -> bool:
        """Whether hero ``aid`` is on its way home (below the retreat threshold, not yet back above RETURN_HP)."""
        return aid in self._state and bool(self._state[aid]["mem"][MEM_RETREAT])

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
            mem = np.zeros(MEM_SIZE)
            mem[MEM_SALVE_T] = mem[MEM_CLARITY_T] = LONG_AGO_S
            st = {"me": me, "team_size": n, "path": LanePath(team, lane), "plan": _HeroPlan(hero_def),
                  "fountain": np.array(fountain_position(team), np.float64), "mem": mem, "steps": 0,
                  "spells_from": 0.0}
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
        allowed = self._allowed
        if self.handicap.spell_share < 1.0 and float(obs["global"][GLOBAL_TIME]) < st["spells_from"]:
            allowed = self._allowed_no_spells  # locked out by a refused cast
        primary, unit, ox, oy = self._decide_with_coin(st, obs, allowed)
        if self.handicap.spell_share < 1.0 and primary in ABILITY_ACTIONS \
                and self.rng.random() >= self.handicap.spell_share:  # the cast refused: choose again without spells
            st["spells_from"] = float(obs["global"][GLOBAL_TIME]) + SPELL_LOCKOUT_S
            primary, unit, ox, oy = self._decide_with_coin(st, obs, self._allowed_no_spells)
        return {"primary": primary, "delay": 0, "target_unit": unit, "offset_x": ox, "offset_y": oy}

    def _decide_with_coin(self, st, obs, allowed):
        primary, unit, ox, oy = self._decide(st, obs, self._skill, allowed)
        if primary == NEED_COIN:  # a handicapped bot's last-hit coin, drawn only by a decision that reaches it
            primary, unit, ox, oy = self._decide(st, obs, int(self.rng.random() < self.handicap.last_hits), allowed)
        return primary, unit, ox, oy

    def _decide(self, st, obs, skill, allowed):
        plan, path = st["plan"], st["path"]
        return decide(obs["units"], obs["unit_type"], obs["unit_valid"], obs["unit_masks"], obs["action_mask"],
                      allowed, obs["heroes"], obs["global"], obs["action_target_type"], st["me"],
                      st["team_size"], plan.kind, plan.radius, plan.cast_range, path.segments, st["fountain"],
                      self._retreat_hp, skill, st["mem"], self.handicap.wave_spells)


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
