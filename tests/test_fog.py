"""Fog of war: what a team sees (state.vis) and what its observations reveal."""
import numpy as np
import pytest
from moba_testlib import (OPEN_SPOT, clear_creeps, creeps_of, make_env, noop_actions, place, random_legal_actions,
                          reencode, row_of)

from moba.env.observation import (GLOBAL_IS_NIGHT, HERO_IN_SIGHT, HERO_MANA, MINIMAP_ENEMY_CREEPS, UNIT_HEALTH,
                                 UNIT_TIME_SINCE_SEEN, UNIT_VISIBLE_NOW, UNIT_X, UNIT_Y)
from moba.game import kernels
from moba.game.constants import DAY_NIGHT_PERIOD_S, DIRE, MAX_UNITS, RADIANT, UT_CREEP_MELEE, UT_CREEP_RANGED, UT_HERO
from moba.game.state import (F_HP, F_MAXHP, F_VIS_DAY, F_VIS_NIGHT, F_X, F_Y, G_LS_T, GF_TIME, I_ALIVE, I_TEAM, I_TYPE,
                            I_USED)

FAR_FROM_RADIANT = (6600.0, 2400.0)  # Dire jungle: > 1800 from every Radiant building in 1v1


def _dire_hero_row(env):
    return row_of(env, RADIANT, env.game.s.hi[1, 0])


def _setup():
    env = make_env("1v1")
    env.step(noop_actions(env))
    clear_creeps(env.game)
    place(env.game, 0, *OPEN_SPOT)
    place(env.game, 1, *FAR_FROM_RADIANT)
    reencode(env)
    return env


def test_far_enemy_hero_is_hidden_and_never_seen_row_is_empty():
    env = _setup()
    s = env.game.s
    assert s.vis[RADIANT, 1] == 0
    row = _dire_hero_row(env)
    assert row == 1  # heroes occupy the first rows, own team first
    o = env._obs[0]
    assert o["unit_valid"][row] == 0 and not o["units"][row].any()
    assert o["hero_id"][1] == 0  # never seen: even its identity is unknown
    assert o["heroes"][1, HERO_IN_SIGHT] == 0.0
    assert o["unit_masks"][:, row].sum() == 0


def test_enemy_hero_seen_then_last_seen_position_in_fog():
    env = _setup()
    g = env.game
    s = g.s
    near = (OPEN_SPOT[0] + 1000.0, OPEN_SPOT[1])
    place(g, 1, *near)
    reencode(env)
    row = _dire_hero_row(env)
    o = env._obs[0]
    assert s.vis[RADIANT, 1] == 1
    assert o["unit_valid"][row] == 1 and o["units"][row, UNIT_VISIBLE_NOW] == 1.0
    np.testing.assert_allclose(o["units"][row, [UNIT_X, UNIT_Y]], near)
    assert o["units"][row, UNIT_TIME_SINCE_SEEN] == 0.0
    assert o["heroes"][1, HERO_IN_SIGHT] == 1.0
    assert o["hero_id"][1] == g.hero_defs[1] + 1
    hp_seen = s.uf[1, F_HP]
    # the hero walks into the fog and keeps walking: Radiant still reports where it was last seen
    env.step(noop_actions(env))
    seen_at = s.uf[1, [F_X, F_Y]].copy()
    place(g, 1, *FAR_FROM_RADIANT)
    env.step(noop_actions(env))
    assert s.vis[RADIANT, 1] == 0
    place(g, 1, FAR_FROM_RADIANT[0] + 300, FAR_FROM_RADIANT[1] - 300)
    s.uf[1, F_HP] = 0.5 * s.uf[1, F_MAXHP]
    for _ in range(5):
        env.step(noop_actions(env))
    o = env._obs[0]
    assert o["unit_valid"][row] == 1
    assert o["units"][row, UNIT_VISIBLE_NOW] == 0.0
    np.testing.assert_allclose(o["units"][row, [UNIT_X, UNIT_Y]], seen_at, rtol=0, atol=1e-3)
    assert not np.allclose(o["units"][row, [UNIT_X, UNIT_Y]], s.uf[1, [F_X, F_Y]])
    assert o["units"][row, UNIT_HEALTH] == pytest.approx(hp_seen, rel=1e-3)  # the last seen health, not the true one
    assert o["units"][row, UNIT_TIME_SINCE_SEEN] == pytest.approx(6 * g.frameskip / 30.0, abs=1e-4)
    assert o["heroes"][1, HERO_IN_SIGHT] == 0.0
    assert o["heroes"][1, HERO_MANA] == 0.0  # hidden in fog
    # a hero in fog can be neither attacked nor targeted
    assert o["unit_masks"][:, row].sum() == 0
    # the Dire team always sees its own hero
    od = env._obs[1]
    assert od["units"][0, UNIT_VISIBLE_NOW] == 1.0
    np.testing.assert_allclose(od["units"][0, [UNIT_X, UNIT_Y]], s.uf[1, [F_X, F_Y]], atol=1e-3)


def test_walking_into_vision_reveals_true_position():
    env = _setup()
    g = env.game
    s = g.s
    vision = s.uf[0, F_VIS_DAY]
    inside = (OPEN_SPOT[0] + 0.95 * vision, OPEN_SPOT[1])
    outside = (OPEN_SPOT[0] + 1.05 * vision, OPEN_SPOT[1])
    place(g, 1, *outside)
    reencode(env)
    assert s.vis[RADIANT, 1] == 0
    place(g, 1, *inside)
    reencode(env)
    assert s.vis[RADIANT, 1] == 1
    row = _dire_hero_row(env)
    np.testing.assert_allclose(env._obs[0]["units"][row, [UNIT_X, UNIT_Y]], inside)
    assert s.hf[1, G_LS_T] == pytest.approx(g.time)


def test_night_vision_is_shorter():
    env = _setup()
    g = env.game
    s = g.s
    assert s.uf[0, F_VIS_NIGHT] < s.uf[0, F_VIS_DAY]
    d = 0.5 * (s.uf[0, F_VIS_NIGHT] + s.uf[0, F_VIS_DAY])
    place(g, 1, OPEN_SPOT[0], OPEN_SPOT[1] + d)
    reencode(env)
    assert not kernels.is_night(g.time)
    assert env._obs[0]["global"][GLOBAL_IS_NIGHT] == 0.0
    assert s.vis[RADIANT, 1] == 1
    s.gf[GF_TIME] = DAY_NIGHT_PERIOD_S + 10.0
    reencode(env)
    assert kernels.is_night(g.time) and env._obs[0]["global"][GLOBAL_IS_NIGHT] == 1.0
    assert s.vis[RADIANT, 1] == 0
    place(g, 1, OPEN_SPOT[0], OPEN_SPOT[1] + 0.9 * s.uf[0, F_VIS_NIGHT])
    reencode(env)
    assert s.vis[RADIANT, 1] == 1
    # day again after the night
    s.gf[GF_TIME] = 2 * DAY_NIGHT_PERIOD_S + 10.0
    place(g, 1, OPEN_SPOT[0], OPEN_SPOT[1] + d)
    reencode(env)
    assert not kernels.is_night(g.time) and s.vis[RADIANT, 1] == 1


@pytest.mark.parametrize("t,night", [(0.0, False), (299.9, False), (300.0, True), (599.9, True), (600.0, False),
                                     (930.0, True)])
def test_is_night(t, night):
    assert kernels.is_night(t) == night


def test_enemy_creep_in_fog_not_observed():
    env = make_env("1v1")
    env.step(noop_actions(env))
    g = env.game
    s = g.s
    creeps = creeps_of(g, DIRE)
    hidden, shown = creeps[0], creeps[1]
    clear_creeps(g, keep=(hidden, shown))
    place(g, 0, *OPEN_SPOT)
    place(g, 1, 7500, 7500)
    place(g, hidden, *FAR_FROM_RADIANT)
    place(g, shown, OPEN_SPOT[0] + 500, OPEN_SPOT[1])
    reencode(env)
    assert s.vis[RADIANT, hidden] == 0 and s.vis[RADIANT, shown] == 1
    assert row_of(env, RADIANT, hidden) == -1
    assert row_of(env, RADIANT, shown) >= 0
    o = env._obs[0]
    hx, hy = FAR_FROM_RADIANT
    assert not np.any((np.abs(o["units"][:, UNIT_X] - hx) < 1) & (np.abs(o["units"][:, UNIT_Y] - hy) < 1))
    assert o["private_minimap"][0, MINIMAP_ENEMY_CREEPS].sum() == 1.0  # the visible enemy creep only
    # Dire sees both of its creeps
    assert row_of(env, DIRE, hidden) >= 0 and row_of(env, DIRE, shown) >= 0


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_observations_never_leak_fogged_units(mode):
    env = make_env(mode, evaluation=False, seed=2)
    rng = np.random.default_rng(5)
    g = env.game
    hidden_enemies_seen = 0
    for step in range(240):
        env.step(random_legal_actions(env, rng))
        if step % 40 == 20:  # send a random enemy hero somewhere random
            h = int(rng.integers(0, env.n_heroes))
            place(g, g.s.hi[h, 0], *rng.uniform(500, 7500, 2))
            reencode(env)
        s = g.s
        for team in (RADIANT, DIRE):
            slot = env.encoder.slot_units[team]
            for k in range(env.team_size):
                o = env._obs[team * env.team_size + k]
                for row, v in enumerate(slot):
                    if v < 0 or o["unit_valid"][row] == 0:
                        continue
                    own = s.ui[v, I_TEAM] == team
                    if own:
                        assert o["units"][row, UNIT_VISIBLE_NOW] == 1.0
                        continue
                    if s.ui[v, I_TYPE] != UT_HERO:
                        # enemy creeps, buildings and wards appear only while visible, at their true position
                        assert s.vis[team, v] == 1 and s.ui[v, I_ALIVE] == 1
                        np.testing.assert_allclose(o["units"][row, [UNIT_X, UNIT_Y]], s.uf[v, [F_X, F_Y]], atol=1e-2)
                    elif s.vis[team, v] == 0:
                        hidden_enemies_seen += 1
                        assert o["units"][row, UNIT_VISIBLE_NOW] == 0.0
                        assert o["unit_masks"][:, row].sum() == 0
            # own units are always visible
            for v in range(MAX_UNITS):
                if s.ui[v, I_USED] and s.ui[v, I_ALIVE] and s.ui[v, I_TEAM] == team:
                    assert s.vis[team, v] == 1
            # every visible enemy creep is listed (unless the table is full)
            visible_creeps = [v for v in range(MAX_UNITS) if s.ui[v, I_USED] and s.ui[v, I_ALIVE]
                              and s.ui[v, I_TEAM] != team and s.ui[v, I_TYPE] in (UT_CREEP_MELEE, UT_CREEP_RANGED)
                              and s.vis[team, v]]
            if (slot >= 0).sum() < env.cfg.max_units:
                assert set(visible_creeps) <= set(slot.tolist())
    assert hidden_enemies_seen > 0
