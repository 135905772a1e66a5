"""Property tests (hypothesis): under random, legal and malformed actions the game state stays sane and every
observation stays inside its space; malformed actions always raise ValueError and never change anything."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from moba_testlib import NOOP, legal_random_action, make_env, noop_actions, place

from moba.env.actions import ACTION_KEYS, N_OFFSETS, N_PRIMARY
from moba.game.constants import MAP_SIZE, N_DELAYS
from moba.game.state import (F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_X, F_Y, G_EARNED, G_GOLD, G_SPENT, H_UNIT, I_ALIVE,
                            I_USED)

MODES = ("1v1", "5v5")
MAX_AGENTS = 10
SETTINGS = dict(max_examples=20, deadline=None)

raw_action = st.fixed_dictionaries({
    "primary": st.integers(0, N_PRIMARY - 1), "delay": st.integers(0, N_DELAYS - 1),
    "target_unit": st.integers(0, 31), "offset_x": st.integers(0, N_OFFSETS - 1),
    "offset_y": st.integers(0, N_OFFSETS - 1)})
# a step: raw actions for everyone, legal actions drawn from the masks with a seed, or a hero thrown into the fight
step_op = st.one_of(
    st.tuples(st.just("raw"), st.lists(raw_action, min_size=MAX_AGENTS, max_size=MAX_AGENTS)),
    st.tuples(st.just("legal"), st.integers(0, 2 ** 32 - 1)),
    st.tuples(st.just("jump"), st.tuples(st.integers(0, MAX_AGENTS - 1), st.floats(3000, 5000), st.floats(3000, 5000))),
)


def _check_state(env):
    s = env.game.s
    used = s.ui[:, I_USED] == 1
    for name in ("uf", "hf", "gf"):
        arr = getattr(s, name)
        assert np.all(np.isfinite(arr)), f"non-finite value in {name}"
    hp, maxhp = s.uf[used, F_HP], s.uf[used, F_MAXHP]
    assert np.all(hp >= 0.0), "negative health"
    assert np.all(hp <= maxhp * (1 + 1e-12)), "health above max"
    alive = s.ui[used, I_ALIVE] == 1
    assert np.all(hp[alive] > 0.0), "an alive unit with no health"
    assert np.all(hp[~alive] == 0.0), "a dead unit with health"
    mana, maxmana = s.uf[used, F_MANA], s.uf[used, F_MAXMANA]
    assert np.all(mana >= -1e-9) and np.all(mana <= maxmana * (1 + 1e-12) + 1e-9)
    assert np.all(s.hf[:, G_GOLD] >= 0.0)
    assert np.all(s.hf[:, G_EARNED] >= 0.0) and np.all(s.hf[:, G_SPENT] >= 0.0)
    xy = s.uf[used][:, [F_X, F_Y]]
    assert np.all((xy >= 0.0) & (xy <= MAP_SIZE))


def _check_obs(env, obs):
    assert set(obs) == set(env.possible_agents)
    for a, o in obs.items():
        for k, v in o.items():
            assert np.all(np.isfinite(v)), (a, k)
        assert env.observation_spaces[a].contains(o), a


@settings(**SETTINGS)
@given(mode=st.sampled_from(MODES), seed=st.integers(0, 1000), ops=st.lists(step_op, min_size=1, max_size=30))
def test_random_play_keeps_state_sane(mode, seed, ops):
    env = make_env(mode, evaluation=bool(seed % 2), seed=seed)
    _check_obs(env, env.observations())
    for kind, arg in ops:
        if kind == "raw":
            acts = {a: arg[i] for i, a in enumerate(env.possible_agents)}
        elif kind == "legal":
            rng = np.random.default_rng(arg)
            obs = env.observations()
            acts = {a: legal_random_action(obs[a], rng, env.cfg.max_units) for a in env.possible_agents}
        else:
            h, x, y = arg
            h %= env.n_heroes
            place(env.game, env.game.s.hi[h, H_UNIT], x, y)
            acts = noop_actions(env)
        obs, rewards, term, trunc, infos = env.step(acts)
        _check_state(env)
        _check_obs(env, obs)
        assert all(math.isfinite(r) for r in rewards.values())
        if term["__all__"] or trunc["__all__"]:
            break


# ---- malformed actions -----------------------------------------------------------------------------------------------
def _out_of_range(key, n):
    return st.one_of(st.integers(max_value=-1), st.integers(min_value=n))


FIELD_SIZES = {"primary": N_PRIMARY, "delay": N_DELAYS, "offset_x": N_OFFSETS, "offset_y": N_OFFSETS}
bad_scalar = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: not (math.isfinite(f) and f == int(f))),
    st.text(max_size=3), st.none(), st.lists(st.integers(0, 3), min_size=0, max_size=3),
    st.booleans(), st.complex_numbers(min_magnitude=1e-3), st.dictionaries(st.text(max_size=2), st.integers()),
)


@st.composite
def malformed(draw, agents, max_units):
    """(action dict, the agent whose action is malformed or None, expected words in the message)."""
    acts = {a: dict(NOOP) for a in agents}
    agent = draw(st.sampled_from(agents))
    how = draw(st.sampled_from(["range", "type", "missing_field", "extra_field", "not_dict", "missing_agent",
                                "unknown_agent", "array"]))
    sizes = {**FIELD_SIZES, "target_unit": max_units}
    key = draw(st.sampled_from(ACTION_KEYS))
    if how == "range":
        acts[agent][key] = draw(_out_of_range(key, sizes[key]))
        return acts, [agent, key]
    if how == "type":
        acts[agent][key] = draw(bad_scalar)
        return acts, [agent, key]
    if how == "array":
        acts[agent][key] = np.full(draw(st.integers(1, 3)), draw(st.integers(0, 3)))
        return acts, [agent, key]
    if how == "missing_field":
        del acts[agent][key]
        return acts, [agent, key]
    if how == "extra_field":
        extra = st.one_of(st.text(min_size=1, max_size=5).filter(lambda t: t not in ACTION_KEYS), st.integers(),
                          st.tuples(st.integers()))
        for k in draw(st.lists(extra, min_size=1, max_size=3)):
            acts[agent][k] = 0
        return acts, [agent]
    if how == "not_dict":
        acts[agent] = draw(st.one_of(st.none(), st.integers(), st.lists(st.integers(0, 4), max_size=5)))
        return acts, [agent]
    if how == "missing_agent":
        del acts[agent]
        return acts, [agent]
    bogus = draw(st.text(min_size=1, max_size=8).filter(lambda t: t not in agents))
    acts[bogus] = dict(NOOP)
    return acts, [repr(bogus)[1:-1]]


@settings(**SETTINGS)
@given(mode=st.sampled_from(MODES), data=st.data())
def test_malformed_actions_raise_and_change_nothing(mode, data):
    env = make_env(mode)
    env.step(noop_actions(env))
    for _ in range(3):
        acts, words = data.draw(malformed(env.possible_agents, env.cfg.max_units))
        before = env.game.s.copy()
        prev = env.prev_actions.copy()
        try:
            env.step(acts)
        except ValueError as e:
            msg = str(e)
            for w in words:
                assert w in msg, (w, msg)
        else:
            raise AssertionError(f"accepted malformed actions {acts}")
        assert env.game.s.equals(before)
        np.testing.assert_array_equal(env.prev_actions, prev)
        env.step(noop_actions(env))  # still usable
