"""Helpers shared by the engine and environment tests: building scenarios by writing the state arrays directly."""
from __future__ import annotations

import numpy as np

from moba.env.actions import N_OFFSETS
from moba.env.moba_env import MobaEnv
from moba.game import kernels
from moba.game.constants import MAX_UNITS, UT_CREEP_MELEE, UT_CREEP_RANGED
from moba.game.engine import Game, GameSetup
from moba.game.state import (F_HP, F_MAXHP, F_X, F_Y, GF_NEXT_WAVE, I_ALIVE, I_TEAM, I_TYPE, I_USED, NP, P_ACTIVE,
                             P_ARG, P_KIND, P_TICK, P_UNIT, P_X, P_Y)

# an open spot (passable, far from every tower of both modes) where scenarios are built
OPEN_SPOT = (3000.0, 6000.0)
NOOP = {"primary": 0, "delay": 0, "target_unit": 0, "offset_x": N_OFFSETS // 2, "offset_y": N_OFFSETS // 2}


# ---- engine ----------------------------------------------------------------------------------------------------------
def make_game(mode="5v5", **kw) -> Game:
    return Game(GameSetup(mode=mode, **kw))


def no_orders(g: Game) -> np.ndarray:
    return np.zeros((g.n_heroes, NP), np.float64)


def order(g: Game, h: int, kind: int, arg=0, unit=-1, x=0.0, y=0.0, tick=0, orders=None) -> np.ndarray:
    o = no_orders(g) if orders is None else orders
    o[h, [P_ACTIVE, P_TICK, P_KIND, P_ARG, P_UNIT, P_X, P_Y]] = (1.0, tick, kind, arg, unit, x, y)
    return o


def refresh_vision(g: Game):
    s = g.s
    kernels.update_vision(s.uf, s.ui, s.hf, s.hi, s.gf, s.gi, s.vis)


def units_of(g: Game, types, team=None) -> list[int]:
    s = g.s
    return [u for u in range(MAX_UNITS) if s.ui[u, I_USED] == 1 and s.ui[u, I_ALIVE] == 1
            and s.ui[u, I_TYPE] in tuple(np.atleast_1d(types)) and (team is None or s.ui[u, I_TEAM] == team)]


def creeps_of(g: Game, team=None) -> list[int]:
    return units_of(g, (UT_CREEP_MELEE, UT_CREEP_RANGED), team)


def clear_creeps(g: Game, keep=(), stop_waves=True):
    """Removes every creep (and ward) except `keep`; optionally stops further waves."""
    s = g.s
    for u in range(g.n_buildings_end, MAX_UNITS):
        if s.ui[u, I_USED] == 1 and u not in keep:
            s.ui[u, I_USED] = 0
            s.ui[u, I_ALIVE] = 0
    if stop_waves:
        s.gf[GF_NEXT_WAVE] = 1e9


def place(g: Game, u: int, x: float, y: float):
    g.s.uf[u, F_X] = x
    g.s.uf[u, F_Y] = y


def pos(g: Game, u: int) -> np.ndarray:
    return g.s.uf[u, [F_X, F_Y]].copy()


def hp_frac(g: Game, u: int) -> float:
    return float(g.s.uf[u, F_HP] / g.s.uf[u, F_MAXHP])


def random_orders(g: Game, rng: np.random.Generator) -> np.ndarray:
    """Random (mostly meaningless) engine orders: every kind, argument, unit and point."""
    n = g.n_heroes
    o = np.zeros((n, NP))
    o[:, P_ACTIVE] = rng.integers(0, 2, n)
    o[:, P_TICK] = rng.integers(0, g.frameskip, n)
    o[:, P_KIND] = rng.integers(0, 7, n)
    o[:, P_ARG] = rng.integers(0, 7, n)
    o[:, P_UNIT] = rng.integers(-1, 120, n)
    o[:, P_X] = rng.uniform(0, 8000, n)
    o[:, P_Y] = rng.uniform(0, 8000, n)
    return o


# ---- environment -----------------------------------------------------------------------------------------------------
def make_env(mode="1v1", **cfg) -> MobaEnv:
    """A MobaEnv (evaluation mode, without the evaluation jitter, unless overridden: scenarios start from the
    unjittered game), reset with seed 0. The instance id that the env mixes into its seeds is pinned to 0 so that a
    test draws the same game whichever tests ran before it."""
    config = {"mode": mode, "evaluation": True, "evaluation_jitter": False, **cfg}
    env = MobaEnv(config)
    env.instance_id = 0
    env.reset(seed=config.get("seed") or 0)
    return env


def reencode(env: MobaEnv):
    """After editing env.game.s: recompute vision and the observations the next step decodes against."""
    refresh_vision(env.game)
    env._obs = env.encoder.encode(env.prev_actions, env.lanes, env.lane_until)


def noop_actions(env: MobaEnv) -> dict:
    return {a: dict(NOOP) for a in env.possible_agents}


def actions(env: MobaEnv, **per_agent) -> dict:
    """Noop for everyone except the agents given as agent=dict(primary=..., ...)."""
    acts = noop_actions(env)
    for a, d in per_agent.items():
        acts[a] = {**NOOP, **d}
    return acts


def row_of(env: MobaEnv, team: int, u: int) -> int:
    """Observation unit row of engine unit u for `team` (-1 if absent)."""
    rows = np.nonzero(env.encoder.slot_units[team] == u)[0]
    return int(rows[0]) if len(rows) else -1


def legal_random_action(obs: dict, rng: np.random.Generator, n_units: int) -> dict:
    """A random action whose primary is legal and whose unit is drawn from the matching unit mask row."""
    legal = np.nonzero(obs["action_mask"])[0]
    p = int(rng.choice(legal))
    uk = int(obs["action_unit_kind"][p])
    rows = np.nonzero(obs["unit_masks"][uk])[0]
    unit = int(rng.choice(rows)) if len(rows) else int(rng.integers(0, n_units))
    return {"primary": p, "delay": int(rng.integers(0, 4)), "target_unit": unit,
            "offset_x": int(rng.integers(0, N_OFFSETS)), "offset_y": int(rng.integers(0, N_OFFSETS))}


def random_legal_actions(env: MobaEnv, rng: np.random.Generator) -> dict:
    obs = env.observations()
    return {a: legal_random_action(obs[a], rng, env.cfg.max_units) for a in env.possible_agents}
