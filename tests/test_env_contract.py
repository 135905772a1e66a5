"""MobaEnv's contract with RLlib and gymnasium: the RLlib checker, observation spaces, input validation, config
errors, every agent observed every step, episode ends, seeding and evaluation mode."""
import numpy as np
import pytest
from ray.rllib.utils.pre_checks.env import check_multiagent_environments
from moba_testlib import NOOP, make_env, noop_actions, random_legal_actions

from moba.env.actions import A_BUYBACK, A_NOOP, ACTION_KEYS
from moba.env.config import EnvConfig
from moba.env.moba_env import CUT_SHORT_INFO, MobaEnv
from moba.env.observation import HERO_ALIVE, HERO_RESPAWN_TIME
from moba.env.randomization import EVAL_FIRST_WAVE_RANGE_S, EVAL_SPAWN_JITTER, sample_game
from moba.game.builds import ability_build
from moba.game.constants import DIRE, RADIANT, STARTING_GOLD
from moba.game.engine import PERTURB_COLUMNS
from moba.game.heroes import HEROES
from moba.game.items import item_id
from moba.game.state import F_HP, G_GOLD, H_LEVEL, H_UNIT, I_ALIVE, I_INVULN
from moba.game.teams import agent_ids

MODES = ("1v1", "5v5")


def _assert_obs_in_space(env, obs):
    assert set(obs) == set(env.possible_agents)
    for a, o in obs.items():
        space = env.observation_spaces[a]
        if not space.contains(o):
            bad = [k for k in space.spaces if not space.spaces[k].contains(o[k])]
            raise AssertionError(f"{a}: observation keys outside the space: {bad}")
        for k, v in o.items():
            assert np.all(np.isfinite(v)), (a, k)


# ---- RLlib and gymnasium ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_rllib_multiagent_checker_passes(mode):
    env = MobaEnv({"mode": mode})
    # the checker silently skips envs that lack these base-class attributes: make sure it really runs
    assert hasattr(env, "observation_space") and hasattr(env, "action_space") and hasattr(env, "_agent_ids")
    check_multiagent_environments(env)
    assert env.agents == agent_ids(mode)
    assert env.get_observation_space("radiant_0") is env.observation_spaces["radiant_0"]
    assert env.get_action_space("dire_0") is env.action_spaces["dire_0"]


def test_rllib_env_context_keys_are_accepted():
    from ray.rllib.env.env_context import EnvContext
    ctx = EnvContext({"mode": "1v1"}, worker_index=3, vector_index=1)
    env = MobaEnv(ctx)
    assert env.worker_index == 3 and env.cfg.mode == "1v1"
    empty = MobaEnv(EnvContext({}, worker_index=0))
    assert empty.cfg.mode == "5v5"


@pytest.mark.parametrize("mode,n_steps", [("1v1", 300), ("5v5", 200)])
def test_observations_stay_in_space(mode, n_steps):
    env = MobaEnv({"mode": mode, "seed": 4})
    obs, infos = env.reset(seed=4)
    _assert_obs_in_space(env, obs)
    assert set(infos) == set(env.possible_agents)
    rng = np.random.default_rng(1)
    for step in range(n_steps):
        if step % 2:
            acts = random_legal_actions(env, rng)
        else:
            acts = {a: env.action_spaces[a].sample() for a in env.possible_agents}
        obs, rewards, term, trunc, infos = env.step(acts)
        _assert_obs_in_space(env, obs)
        assert set(rewards) == set(env.possible_agents)
        assert all(isinstance(r, float) and np.isfinite(r) for r in rewards.values())
        assert set(term) == set(trunc) == set(env.possible_agents) | {"__all__"}
        assert set(infos) == set(env.possible_agents)


def test_action_space_sample_roundtrip():
    env = make_env("5v5")
    for _ in range(20):
        acts = {a: env.action_spaces[a].sample() for a in env.possible_agents}
        assert all(env.action_spaces[a].contains(acts[a]) for a in acts)
        env.step(acts)


# ---- bad input -------------------------------------------------------------------------------------------------------
BAD_FIELDS = [
    ("primary", 99, "primary"), ("primary", -1, "primary"), ("target_unit", -1, "target_unit"),
    ("target_unit", 10_000, "target_unit"), ("delay", 4, "delay"), ("offset_x", 9, "offset_x"),
    ("offset_y", -3, "offset_y"), ("delay", 1.5, "delay"), ("primary", np.array([1, 2]), "primary"),
    ("offset_x", np.zeros((1,), np.int64), "offset_x"), ("primary", "1", "primary"), ("delay", None, "delay"),
    ("primary", float("nan"), "primary"), ("offset_y", float("inf"), "offset_y"), ("delay", 2 ** 70, "delay"),
    ("primary", True, "primary"), ("target_unit", 1 + 2j, "target_unit"),
]


@pytest.fixture(params=MODES)
def env(request):
    e = make_env(request.param)
    e.step(noop_actions(e))
    return e


def _assert_rejected(env, acts, *words):
    before = env.game.s.copy()
    prev = env.prev_actions.copy()
    obs_before = {k: v.copy() for k, v in env._obs[0].items()}
    with pytest.raises(ValueError) as exc:
        env.step(acts)
    msg = str(exc.value)
    for w in words:
        assert w in msg, (w, msg)
    assert env.game.s.equals(before)
    np.testing.assert_array_equal(env.prev_actions, prev)
    for k, v in obs_before.items():
        np.testing.assert_array_equal(env._obs[0][k], v)
    # the env is still usable
    env.step(noop_actions(env))
    return msg


@pytest.mark.parametrize("field,value,word", BAD_FIELDS)
def test_bad_field_value_raises_and_changes_nothing(env, field, value, word):
    agent = env.possible_agents[-1]
    acts = noop_actions(env)
    acts[agent] = {**NOOP, field: value}
    _assert_rejected(env, acts, agent, repr(word))


def test_missing_agent(env):
    acts = noop_actions(env)
    del acts["dire_0"]
    _assert_rejected(env, acts, "dire_0", "missing")


def test_unknown_agent(env):
    acts = noop_actions(env)
    acts["dire_7"] = dict(NOOP)
    _assert_rejected(env, acts, "dire_7", "unknown")


def test_non_dict_actions(env):
    _assert_rejected(env, [NOOP] * env.n_heroes, "dict")
    acts = noop_actions(env)
    acts["radiant_0"] = [0, 0, 0, 4, 4]
    _assert_rejected(env, acts, "radiant_0", "dict")
    acts["radiant_0"] = np.zeros(5, np.int64)
    _assert_rejected(env, acts, "radiant_0")


def test_missing_and_unknown_fields(env):
    acts = noop_actions(env)
    del acts["radiant_0"]["offset_y"]
    _assert_rejected(env, acts, "radiant_0", "'offset_y'", "missing")
    acts = noop_actions(env)
    acts["radiant_0"]["speed"] = 3
    msg = _assert_rejected(env, acts, "radiant_0", "speed", "unknown")
    for key in ACTION_KEYS:
        assert key in msg  # the allowed fields are listed
    acts = noop_actions(env)
    acts["radiant_0"][1] = 0  # keys of mixed types
    acts["radiant_0"]["zz"] = 0
    _assert_rejected(env, acts, "radiant_0", "'zz'", "unknown")


def test_valid_numpy_and_float_integers_accepted(env):
    acts = noop_actions(env)
    acts["radiant_0"] = {"primary": np.int64(1), "delay": np.int32(0), "target_unit": np.array(0),
                         "offset_x": 6.0, "offset_y": np.float32(4)}
    env.step(acts)
    assert env.prev_actions[0].tolist() == [1, 0, 0, 6, 4]


def test_step_after_game_end_raises():
    env = make_env("1v1", time_limit_s=0.2)
    while True:
        _, _, term, trunc, _ = env.step(noop_actions(env))
        if term["__all__"] or trunc["__all__"]:
            break
    with pytest.raises(RuntimeError):
        env.step(noop_actions(env))
    env.reset()
    env.step(noop_actions(env))


# ---- config errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg,words", [
    ({"bogus": 1}, ["bogus", "mode", "frameskip", "reward_weights"]),
    ({"mode": "3v3"}, ["mode", "1v1", "5v5", "3v3"]),
    ({"frameskip": 0}, ["frameskip", "[1, 30]"]),
    ({"frameskip": 31}, ["frameskip", "[1, 30]"]),
    ({"frameskip": 2.5}, ["frameskip", "[1, 30]"]),
    ({"frameskip": True}, ["frameskip"]),
    ({"mode": "1v1", "lineup": ("blademaster", "nobody")}, ["lineup", "nobody", "blademaster", "grove_keeper"]),
    ({"mode": "1v1", "lineup": ("blademaster",)}, ["lineup", "2"]),
    ({"reward_weights": {"gold": 1.0}}, ["reward_weights", "gold", "gold_gained", "last_hit"]),
    ({"reward_weights": {"win": "big"}}, ["reward_weights.win", "number"]),
    ({"reward_preset": "five_2020"}, ["reward_preset", "five_2018", "five_2019", "hok_2022"]),
    ({"randomize": {"weather": True}}, ["randomize", "weather", "lineup"]),
    ({"randomize": {"lineup": 1}}, ["randomize.lineup"]),
    ({"seed": 1.5}, ["seed"]),
    ({"time_limit_s": -1}, ["time_limit_s"]),
    ({"max_units": 5}, ["max_units", "256"]),
    ({"evaluation": "yes"}, ["evaluation"]),
    ({"evaluation_jitter": "yes"}, ["evaluation_jitter", "true or false"]),
    ({"reward_weights": [1.0]}, ["reward_weights", "mapping", "last_hit"]),
    ({"reward_weights": {"win": float("inf")}}, ["reward_weights.win", "finite"]),
    ({"time_limit_s": float("nan")}, ["time_limit_s"]),
    ({"mode": ["5v5"]}, ["mode", "1v1", "5v5"]),
    ({"reward_preset": None}, ["reward_preset", "five_2019"]),
    ({"mode": "1v1", "lineup": 5}, ["lineup"]),
    ({"mode": "1v1", "lineup": ["blademaster", 7]}, ["lineup", "7", "allowed"]),
])
def test_config_errors_name_key_and_allowed_values(cfg, words):
    with pytest.raises(ValueError) as exc:
        MobaEnv(cfg)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_config_defaults():
    cfg = EnvConfig.from_dict({})
    assert cfg.mode == "5v5" and cfg.max_units == 64 and cfg.frameskip == 4
    assert EnvConfig.from_dict({"mode": "1v1"}).max_units == 32
    assert all(cfg.randomize.values())
    assert not EnvConfig.from_dict({"evaluation": True}).randomized("lineup")


# ---- every agent observed every step; episode ends -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_dead_hero_still_observed(mode):
    env = make_env(mode)
    g = env.game
    victim = env.n_heroes - 1
    g.s.uf[g.s.hi[victim, H_UNIT], F_HP] = 0.0
    g.s.hf[victim, G_GOLD] = 0.0  # cannot afford a buyback
    obs, rewards, term, trunc, infos = env.step(noop_actions(env))
    agent = env.possible_agents[victim]
    assert g.s.ui[g.s.hi[victim, H_UNIT], I_ALIVE] == 0
    assert set(obs) == set(env.possible_agents)
    assert np.nonzero(obs[agent]["action_mask"])[0].tolist() == [A_NOOP]
    assert not obs[agent]["unit_masks"].any()
    assert obs[agent]["heroes"][victim % env.team_size, HERO_ALIVE] == 0.0
    assert obs[agent]["heroes"][victim % env.team_size, HERO_RESPAWN_TIME] > 0.0
    assert rewards[agent] < 0  # hero death
    assert not term["__all__"] and not trunc["__all__"]
    # with gold, buyback is offered too
    g.s.hf[victim, G_GOLD] = 5000.0
    obs, *_ = env.step(noop_actions(env))
    assert np.nonzero(obs[agent]["action_mask"])[0].tolist() == [A_NOOP, A_BUYBACK]
    # dead heroes' actions are accepted (and ignored)
    acts = noop_actions(env)
    acts[agent] = {**NOOP, "primary": 1, "offset_x": 8}
    obs, *_ = env.step(acts)
    assert set(obs) == set(env.possible_agents)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("loser,winner", [(DIRE, "radiant"), (RADIANT, "dire")])
def test_ancient_destroyed_terminates(mode, loser, winner):
    env = make_env(mode)
    env.step(noop_actions(env))
    g = env.game
    anc = g.ancient_idx[loser]
    g.s.uf[anc, F_HP] = 0.0
    g.s.ui[anc, I_INVULN] = 0
    obs, rewards, term, trunc, infos = env.step(noop_actions(env))
    assert term["__all__"] is True and trunc["__all__"] is False
    assert all(term[a] for a in env.possible_agents) and not any(trunc[a] for a in env.possible_agents)
    assert set(obs) == set(env.possible_agents)
    for h, a in enumerate(env.possible_agents):
        assert infos[a]["winner"] == winner
        won = (h < env.team_size) == (winner == "radiant")
        assert infos[a]["reward_signals"]["win"] == (5.0 if won else -5.0)
    assert g.winner == (RADIANT if winner == "radiant" else DIRE)


@pytest.mark.parametrize("mode", MODES)
def test_time_limit_truncates(mode):
    env = make_env(mode, time_limit_s=1.0)
    n = 0
    while True:
        obs, rewards, term, trunc, infos = env.step(noop_actions(env))
        n += 1
        if trunc["__all__"] or term["__all__"]:
            break
        assert all("winner" not in infos[a] for a in env.possible_agents)
    assert n == 8  # 8 steps of 4 ticks: the first time >= 1 s
    assert trunc["__all__"] is True and term["__all__"] is False
    assert all(trunc[a] for a in env.possible_agents) and not any(term[a] for a in env.possible_agents)
    assert all(infos[a]["winner"] == "none" for a in env.possible_agents)
    assert all(infos[a]["reward_signals"]["win"] == 0.0 for a in env.possible_agents)


# ---- seeding and evaluation mode -------------------------------------------------------------------------------------
def _obs_equal(a, b):
    return all(np.array_equal(a[k][f], b[k][f]) for k in a for f in a[k])


@pytest.mark.parametrize("mode", MODES)
def test_reset_with_seed_reproducible(mode):
    env = MobaEnv({"mode": mode})
    o1, i1 = env.reset(seed=123)
    lanes1 = env.lanes.copy()
    rng = np.random.default_rng(0)
    for _ in range(30):  # play a little in between
        env.step(random_legal_actions(env, rng))
    o2, i2 = env.reset(seed=123)
    assert _obs_equal(o1, o2)
    assert i1 == i2
    np.testing.assert_array_equal(lanes1, env.lanes)
    o3, i3 = env.reset(seed=124)
    assert not _obs_equal(o1, o3)
    # and the same actions replay the same game
    env.reset(seed=123)
    r1 = [env.step(noop_actions(env))[1] for _ in range(20)]
    s1 = env.game.s.copy()
    env.reset(seed=123)
    r2 = [env.step(noop_actions(env))[1] for _ in range(20)]
    assert r1 == r2 and env.game.s.equals(s1)


def test_instances_mix_in_their_id():
    a, b = MobaEnv({"mode": "5v5"}), MobaEnv({"mode": "5v5"})
    assert a.instance_id != b.instance_id
    assert a._seed_sequence(7) != b._seed_sequence(7)  # sub-envs seeded alike still play different games
    assert a._seed_sequence(None) is None


def test_config_seed_used_without_reset_seed():
    a = MobaEnv({"mode": "1v1", "seed": 3})
    a.instance_id = 0
    a._rng = np.random.default_rng(a._seed_sequence(3))
    oa, _ = a.reset()
    b = MobaEnv({"mode": "1v1"})
    b.instance_id = 0
    ob, _ = b.reset(seed=3)
    assert _obs_equal(oa, ob)


@pytest.mark.parametrize("mode", MODES)
def test_evaluation_mode_disables_randomization(mode):
    n = 2 if mode == "1v1" else 10
    for seed in (0, 1, 2):
        env = MobaEnv({"mode": mode, "evaluation": True})
        _, infos = env.reset(seed=seed)
        g = env.game
        assert [infos[a]["hero"] for a in env.possible_agents] == [h.name for h in HEROES[:n]]
        assert env.lanes.tolist() == [[1, 1, 1]] * n
        np.testing.assert_array_equal(env.lane_until, 0.0)
        assert g.s.hi[:, H_LEVEL].tolist() == [1] * n
        np.testing.assert_allclose(g.s.hf[:, G_GOLD], STARTING_GOLD)
        np.testing.assert_array_equal(g.s.hf[:, list(PERTURB_COLUMNS)], 0.0)
        assert g.setup.item_builds == () and g.setup.skill_priority == ()
        for h in range(n):
            d = HEROES[g.hero_defs[h]]
            assert g.item_builds[h] == [item_id(name) for name in d.item_build]
            assert g.ability_builds[h] == ability_build(d.skill_priority)
    lineup = tuple(h.name for h in HEROES[-n:])
    env = MobaEnv({"mode": mode, "evaluation": True, "lineup": lineup})
    _, infos = env.reset(seed=9)
    assert tuple(infos[a]["hero"] for a in env.possible_agents) == lineup


@pytest.mark.parametrize("mode", MODES)
def test_evaluation_jitter_is_decided_by_the_seed_alone(mode):
    """Evaluation games differ by seed (spawn points, first creep wave, within their ranges) and any env, whatever
    its instance number, replays a seed's game; evaluation_jitter false, and training, leave the start as it was."""
    setups = {}
    for seed in (0, 1, 2):
        for instance in (0, 1):
            env = MobaEnv({"mode": mode, "evaluation": True})
            env.set_seed_stream(instance, instance)
            env.reset(seed=seed)
            setups.setdefault(seed, []).append(env.game.setup)
    assert all(a == b for a, b in setups.values())
    starts = [(s.spawn_offsets, s.first_wave_s) for s, _ in setups.values()]
    assert len({repr(x) for x in starts}) == 3
    for offsets, first_wave_s in starts:
        assert len(offsets) == (2 if mode == "1v1" else 10)
        assert all(abs(v) <= EVAL_SPAWN_JITTER for o in offsets for v in o)
        assert EVAL_FIRST_WAVE_RANGE_S[0] <= first_wave_s <= EVAL_FIRST_WAVE_RANGE_S[1]
    for cfg in ({"evaluation": True, "evaluation_jitter": False}, {}):
        env = MobaEnv({"mode": mode, **cfg})
        env.reset(seed=1)
        assert env.game.setup.spawn_offsets == () and env.game.setup.first_wave_s == 0.0


def test_first_game_length_staggers_parallel_envs():
    """Envs started together must not play the same game phase in lockstep: an env's first training game is cut at
    a random point of the time limit; later games, seeded replays and evaluation games keep the full limit."""
    limits = []
    for i in range(8):
        env = MobaEnv({"mode": "1v1", "time_limit_s": 600.0})
        env.set_seed_stream(0, i)
        env.reset(seed=5)
        first = env.game.time_limit_s
        assert 0.05 * 600.0 <= first <= 600.0
        env.reset(seed=5)
        assert env.game.time_limit_s == first  # a seeded reset replays the first game, its length included
        env.reset()
        assert env.game.time_limit_s == 600.0
        limits.append(first)
    assert len(set(limits)) == 8 and max(limits) - min(limits) > 100.0
    for cfg in ({"evaluation": True}, {"randomize": {"first_game_length": False}}):
        env = MobaEnv({"mode": "1v1", "time_limit_s": 600.0, **cfg})
        env.reset(seed=5)
        assert env.game.time_limit_s == 600.0
    env = MobaEnv({"mode": "1v1", "time_limit_s": 3.0})  # the cut game really ends early, as truncated
    env.set_seed_stream(0, 0)  # the game stream of env 0 whatever envs this process made before (its cut's length)
    env.reset(seed=1)
    steps, done = 0, False
    while not done:
        _, _, terms, truncs, infos = env.step(noop_actions(env))
        steps, done = steps + 1, terms["__all__"] or truncs["__all__"]
    assert truncs["__all__"] and env.game.time <= 3.0 + 1e-6 and env.game.time == pytest.approx(
        env.game.time_limit_s, abs=4 / 30)
    # ... and says so in its last infos: its outcome at the cut is not a result
    assert all(infos[a][CUT_SHORT_INFO] is True and infos[a]["winner"] == "none" for a in env.possible_agents)
    for cfg in ({}, {"randomize": {"first_game_length": False}}, {"evaluation": True}):
        env = MobaEnv({"mode": "1v1", "time_limit_s": 3.0, **cfg})
        env.reset(seed=1)
        if not cfg:  # the first game played out, then a whole one: its end is a result
            while not env._done:
                env.step(noop_actions(env))
            env.reset()
        done = False
        while not done:
            _, _, terms, truncs, infos = env.step(noop_actions(env))
            done = terms["__all__"] or truncs["__all__"]
        assert env.game.time == pytest.approx(3.0, abs=4 / 30)
        assert all(CUT_SHORT_INFO not in infos[a] for a in env.possible_agents)


@pytest.mark.parametrize("mode", MODES)
def test_training_mode_randomizes(mode):
    cfg = EnvConfig.from_dict({"mode": mode})
    lineups, levels, golds, lanes = set(), set(), set(), set()
    for seed in range(12):
        setup, ln, until = sample_game(cfg, np.random.default_rng(seed))
        lineups.add(setup.lineup)
        levels.update(setup.start_level)
        golds.update(setup.start_gold)
        lanes.add(tuple(map(tuple, ln)))
        assert len(set(setup.lineup)) == len(setup.lineup)
        assert all(1 <= lv <= 3 for lv in setup.start_level)
        assert setup.skill_priority and setup.item_builds
        if mode == "5v5":
            assert ln.shape == (10, 3) and (ln.sum(axis=1) >= 1).all()
            assert ((until >= 120.0) & (until <= 600.0)).all()
        else:
            assert (ln == 1).all()
    assert len(lineups) > 1 and len(levels) > 1 and len(golds) > 1
    if mode == "5v5":
        assert len(lanes) > 1
    # single randomizations can be switched off
    cfg = EnvConfig.from_dict({"mode": mode, "randomize": {"lineup": False, "hero_state": False}})
    setup, _, _ = sample_game(cfg, np.random.default_rng(0))
    n = 2 if mode == "1v1" else 10
    assert setup.lineup == tuple(h.name for h in HEROES[:n])
    assert setup.start_level == () and setup.perturb == ()
    assert setup.item_builds  # still randomized


def test_the_ancient_hp_scale_schedule_reaches_the_next_game_through_the_wrapper():
    """schedules.ancient_hp_scale (a curriculum on the goal): the env config's share of both ancients' health,
    set on the training envs through their wrappers, from the next game on; a bad value names the key."""
    from types import SimpleNamespace

    from moba.env.reward_wrapper import PostprocessedRewardEnv
    from moba.game.state import F_HP
    from training.schedules import set_on_envs
    env = MobaEnv({"mode": "1v1", "seed": 3, "ancient_hp_scale": 0.5})
    env.reset()
    assert env.game.s.uf[list(env.game.ancient_idx), F_HP].tolist() == [1750.0, 1750.0]
    wrapped = PostprocessedRewardEnv(env)
    runner = SimpleNamespace(env=SimpleNamespace(envs=[wrapped]))
    assert set_on_envs(runner, "set_ancient_hp_scale", 0.2) == 1
    assert env.game.s.uf[list(env.game.ancient_idx), F_HP].tolist() == [1750.0, 1750.0]  # this game is unchanged
    wrapped.reset()
    assert env.game.s.uf[list(env.game.ancient_idx), F_HP].tolist() == [700.0, 700.0]
    assert MobaEnv({"mode": "1v1"}).cfg.ancient_hp_scale == 1.0
    for bad in (0.0, 2.0, "x"):
        with pytest.raises(ValueError, match="ancient_hp_scale"):
            MobaEnv({"mode": "1v1", "ancient_hp_scale": bad})
        with pytest.raises(ValueError, match="ancient_hp_scale"):
            env.set_ancient_hp_scale(bad)
    assert env.cfg.ancient_hp_scale == 0.2  # a refused value leaves the setting as it was


def test_a_share_of_games_starts_late_around_the_attacker():
    """env config start_state (moba/env/start_state.py): a late game has the defender's named buildings down, the
    attacker's hero at the distance from the defender's ancient, every hero at the level; reset(options=) names the
    attacker; share 0 plays the usual games; bad values name the field."""
    import math

    from moba.game.constants import TEAM_NAMES
    from moba.game.state import F_HP, F_X, F_Y, H_LEVEL, H_UNIT, I_ALIVE
    late = {"share": 1.0, "destroyed": ["tower_mid_1", "tower_mid_2"], "distance": 700.0, "level": 8}
    env = MobaEnv({"mode": "1v1", "seed": 5, "start_state": late})
    for attacker, hero, defender in (("radiant", 0, 1), ("dire", 1, 0), ("dire", 1, 0)):
        env.reset(options={"attacker": attacker})
        g = env.game
        names = {b.name: u for u, b in zip(g.building_rows, g.map.buildings)}
        d = TEAM_NAMES[defender]
        assert [g.s.ui[names[f"{d}_tower_mid_{k}"], I_ALIVE] for k in (1, 2)] == [0, 0]
        assert [g.s.ui[names[f"{TEAM_NAMES[hero]}_tower_mid_{k}"], I_ALIVE] for k in (1, 2)] == [1, 1]
        ancient = g.ancient_idx[defender]
        u = g.s.hi[hero, H_UNIT]
        distance = math.hypot(*(g.s.uf[u, [F_X, F_Y]] - g.s.uf[ancient, [F_X, F_Y]]))
        assert 700.0 - 1e-6 <= distance < 800.0 and g.s.uf[ancient, F_HP] == 3500.0
        assert g.s.hi[:, H_LEVEL].tolist() == [8, 8]
    env.reset()  # no attacker named: drawn, one side or the other
    assert sum(env.game.s.ui[u, I_ALIVE] == 0 for u in env.game.building_rows) == 2
    usual = MobaEnv({"mode": "1v1", "seed": 5})
    usual.reset(options={"attacker": "radiant"})  # no start_state: the option changes nothing
    assert all(usual.game.s.ui[u, I_ALIVE] == 1 for u in usual.game.building_rows)
    with pytest.raises(ValueError, match="'attacker'"):
        env.reset(options={"attacker": "both"})
    for bad, field in [({"share": 2.0}, "start_state.share"), ({"destroyed": ["dire_tower_mid_1"]}, "destroyed"),
                       ({"destroyed": ["ancient"]}, "destroyed"), ({"distance": 0}, "start_state.distance"),
                       ({"level": 0}, "start_state.level"), ({"when": 1}, "unknown key")]:
        with pytest.raises(ValueError, match=field):
            MobaEnv({"mode": "1v1", "start_state": bad})


def test_a_late_start_lasts_its_own_time_and_names_its_attacker_in_the_last_infos():
    """start_state.time_limit_s: a late game lasts that long (not cut short, whatever the config's limit), and its
    last infos name the side it started around (what training records its result under); a usual game's do not."""
    late = {"share": 1.0, "destroyed": ["tower_mid_1"], "distance": 900.0, "time_limit_s": 3.0}
    env = MobaEnv({"mode": "1v1", "seed": 2, "time_limit_s": 600, "start_state": late})
    for game, attacker in enumerate(("radiant", "dire", "radiant")):
        env.reset(options={"attacker": attacker})
        first = game == 0  # a training env's first game is cut at a random share of its length: of the late one's
        assert (env.game.time_limit_s < 3.0) if first else (env.game.time_limit_s == 3.0)
        assert env.late_start == attacker
        while True:
            _, _, term, trunc, infos = env.step(noop_actions(env))
            if term["__all__"] or trunc["__all__"]:
                break
        assert env.game.time == pytest.approx(env.game.time_limit_s, abs=0.2)
        assert all(i["late_start"] == attacker and i.get(CUT_SHORT_INFO, False) == first for i in infos.values())
    usual = MobaEnv({"mode": "1v1", "seed": 2, "time_limit_s": 2})
    usual.reset()
    while True:
        _, _, term, trunc, infos = usual.step(noop_actions(usual))
        if term["__all__"] or trunc["__all__"]:
            break
    assert usual.late_start is None and all("winner" in i and "late_start" not in i for i in infos.values())
    with pytest.raises(ValueError, match="start_state.time_limit_s"):
        MobaEnv({"mode": "1v1", "start_state": {"time_limit_s": -1}})


def test_a_late_start_can_begin_with_the_defenders_ancient_hurt_and_draw_its_starts_from_ranges():
    """start_state.ancient_hp: the defender's ancient starts at that share of its health (the health taken before the
    start pays nothing); distance and ancient_hp as [low, high] are drawn per game, within the range."""
    import math

    from moba.env.rewards import SIGNAL_INDEX
    from moba.game.state import F_MAXHP, F_X, F_Y
    late = {"share": 1.0, "destroyed": ["tower_mid_1", "tower_mid_2"], "distance": 800.0, "ancient_hp": 0.1}
    env = MobaEnv({"mode": "1v1", "seed": 3, "start_state": late})
    env.reset(options={"attacker": "radiant"})
    g = env.game
    assert g.s.uf[g.ancient_idx[1], F_HP] == pytest.approx(350.0) and g.s.uf[g.ancient_idx[0], F_HP] == 3500.0
    _, _, _, _, infos = env.step(noop_actions(env))
    assert all(i["reward_signals"]["ancient_hp"] == 0.0 for i in infos.values())
    assert SIGNAL_INDEX["ancient_hp"] >= 0
    ranged = MobaEnv({"mode": "1v1", "seed": 3, "start_state": {**late, "distance": [800, 3000],
                                                                 "ancient_hp": [0.05, 0.5]}})
    assert ranged.cfg.start_state["distance"] == (800.0, 3000.0)
    hps, distances = [], []
    for _ in range(6):
        ranged.reset(options={"attacker": "dire"})
        g = ranged.game
        ancient = g.ancient_idx[0]
        hps.append(g.s.uf[ancient, F_HP] / g.s.uf[ancient, F_MAXHP])
        u = g.s.hi[1, H_UNIT]
        distances.append(math.hypot(*(g.s.uf[u, [F_X, F_Y]] - g.s.uf[ancient, [F_X, F_Y]])))
        assert g.s.uf[g.ancient_idx[1], F_HP] == 3500.0  # the attacker's own ancient is whole
    assert all(0.05 <= h <= 0.5 for h in hps) and len(set(hps)) == 6
    assert all(800.0 - 1e-6 <= d <= 3100.0 for d in distances) and max(distances) - min(distances) > 300.0
    from moba.game.constants import UT_CREEP_MELEE, UT_CREEP_RANGED
    from moba.game.state import I_TEAM, I_TYPE, I_USED
    pushed = MobaEnv({"mode": "1v1", "seed": 3, "start_state": {**late, "waves": 2}})
    pushed.reset(options={"attacker": "dire"})  # two of Dire's waves beside its hero, before the first tick
    s = pushed.game.s
    teams = [int(s.ui[u, I_TEAM]) for u in range(s.ui.shape[0])
             if s.ui[u, I_USED] and s.ui[u, I_TYPE] in (UT_CREEP_MELEE, UT_CREEP_RANGED)]
    assert teams == [1] * 8
    killed = MobaEnv({"mode": "1v1", "seed": 3, "start_state": {**late, "defender_dead_s": [5.0, 10.0]}})
    killed.reset(options={"attacker": "dire"})  # Radiant, the defender, dead for 5-10 s; Dire's hero alive
    s = killed.game.s
    assert [int(s.ui[s.hi[h, H_UNIT], I_ALIVE]) for h in (0, 1)] == [0, 1]
    from moba.game.state import G_RESPAWN
    assert 5.0 <= s.hf[0, G_RESPAWN] <= 10.0
    for bad, field in [({"ancient_hp": 0.0}, "start_state.ancient_hp"), ({"ancient_hp": [0.5, 0.2]}, "ancient_hp"),
                       ({"distance": [100, 200, 300]}, "start_state.distance"), ({"waves": 9}, "start_state.waves"),
                       ({"defender_dead_s": 500}, "start_state.defender_dead_s")]:
        with pytest.raises(ValueError, match=field):
            MobaEnv({"mode": "1v1", "start_state": bad})


def test_the_runner_names_the_side_main_plays_as_the_attacker():
    from training.batched_env_runner import reset_options
    assert reset_options({"agent": "scripted_3", "side": "dire", "seed": 1}) == {"attacker": "radiant"}
    assert reset_options({"agent": "scripted_3", "side": "radiant", "seed": 1}) == {"attacker": "dire"}
    assert reset_options(None) is None  # self-play: main plays both sides
