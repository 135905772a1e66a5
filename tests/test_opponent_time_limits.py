"""Training games of their own length against some opponents (``opponents.time_limit_s``): the env's reset option
``time_limit_s``, the settings' checks, and a runner whose games against one agent last longer than the config's
while the others keep its length."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from test_training_e2e import tiny_smoke

from moba.env.moba_env import MobaEnv
from training import run_config
from training.settings import RunSettings

SHORT = {"mode": "1v1", "seed": 3, "time_limit_s": 5, "randomize": {"first_game_length": False}}


def steps_to_the_end(env) -> int:
    """Noop steps until the game ends; the game must end by its time limit."""
    noop = np.zeros((env.n_heroes, 5), np.int64)
    for n in range(1, 10_000):
        out = env.step_arrays(noop)
        if out.terminated or out.truncated:
            assert out.truncated and not out.terminated
            return n
    raise AssertionError("the game did not end")


def test_a_reset_option_sets_that_games_length_and_nothing_else():
    longer, usual = MobaEnv(SHORT), MobaEnv(SHORT)
    for env in (longer, usual):
        env.set_seed_stream(0, 0)  # one game stream for both (a training env mixes in its instance number)
    longer.reset(seed=11, options={"time_limit_s": 8})
    usual.reset(seed=11)
    assert longer.game.setup.time_limit_s == 8.0 and usual.game.setup.time_limit_s == 5.0
    # the same draws otherwise (lineup, hero state, item builds, lanes): the game stream is the one without the option
    assert dataclasses.replace(longer.game.setup, time_limit_s=5.0) == usual.game.setup
    assert steps_to_the_end(longer) == 60 and steps_to_the_end(usual) == 38  # 8 s and 5 s at 7.5 steps a second
    longer.reset()
    assert longer.game.setup.time_limit_s == 5.0  # the next game without the option: the config's length


def test_a_late_starts_own_length_comes_first():
    late = {"share": 1.0, "destroyed": ["tower_mid_1"], "time_limit_s": 3.0}
    env = MobaEnv({**SHORT, "start_state": late})
    env.reset(seed=1, options={"attacker": "radiant", "time_limit_s": 8})
    assert env.game.setup.time_limit_s == 3.0
    env.reset(seed=1, options={"attacker": "radiant", "time_limit_s": 8, "start_state": {"time_limit_s": 0.0}})
    assert env.game.setup.time_limit_s == 8.0  # a late start without its own length: the option's


@pytest.mark.parametrize("bad", [0, -5.0, "long", True, float("nan"), float("inf")])
def test_a_bad_time_limit_option_names_it_and_leaves_the_game_as_it_was(bad):
    env = MobaEnv(SHORT)
    env.reset(seed=2)
    game = env.game
    with pytest.raises(ValueError, match=r"reset options 'time_limit_s': must be a number of seconds > 0"):
        env.reset(options={"time_limit_s": bad})
    assert env.game is game
    with pytest.raises(ValueError, match=r"\['time_limit'\]: unknown; allowed: \['attacker', 'start_state', "
                                         r"'time_limit_s'\]"):
        env.reset(options={"time_limit": 8})


def limited(limits, **opponents) -> dict:
    return {"env": {"mode": "1v1", "time_limit_s": 600},
            "opponents": {"fixed": {"scripted_3": 0.25}, "curriculum": {
                "share": 0.75, "ladder": ["random", "scripted_1", "scripted_2"]}, "time_limit_s": limits, **opponents}}


def test_the_settings_are_empty_by_default_and_round_trip():
    assert RunSettings.from_dict({}).opponents.time_limit_s == {}
    s = RunSettings.from_dict(limited({"scripted_2": 1200, "scripted_3": 1800.0}))
    assert s.opponents.time_limit_s == {"scripted_2": 1200.0, "scripted_3": 1800.0}
    assert RunSettings.from_dict(s.to_dict()) == s


@pytest.mark.parametrize("limits, key, message", [
    ({"scripted_1_r50": 1200}, r"opponents\.time_limit_s\.scripted_1_r50", r"is not played.*'scripted_3'"),
    ({"scripted_2": 0}, r"opponents\.time_limit_s\.scripted_2", "> 0"),
    ({"scripted_2": "long"}, r"opponents\.time_limit_s\.scripted_2", "> 0"),
    ({"scripted_2": True}, r"opponents\.time_limit_s\.scripted_2", "> 0"),
    ([1200], r"opponents\.time_limit_s", "mapping of agent name"),
])
def test_bad_time_limit_settings_name_the_key(limits, key, message):
    with pytest.raises(ValueError, match=rf"'{key}'.*{message}"):
        RunSettings.from_dict(limited(limits))


def test_a_game_servers_games_take_no_length_of_their_own():
    cfg = limited({"scripted_2": 1200})
    cfg["env"]["remote"] = "localhost:50051"
    with pytest.raises(ValueError, match=r"'opponents\.time_limit_s'.*env\.remote"):
        RunSettings.from_dict(cfg)


def test_a_jump_start_hand_over_must_come_before_its_opponents_own_length():
    cfg = limited({"scripted_3": 200}, jump_start={"guide": "scripted_3", "opponent": "scripted_3",
                                                   "handover_s": [300.0, 100.0]})
    with pytest.raises(ValueError, match=r"'opponents\.jump_start\.handover_s'.*200 s"):
        RunSettings.from_dict(cfg)
    cfg["opponents"]["time_limit_s"] = {"scripted_3": 1200}
    RunSettings.from_dict(cfg)


def test_a_runners_matchups_carry_the_length_to_the_envs_reset():
    from training.batched_env_runner import reset_options
    from training.opponents import RunnerOpponents, install_level
    opp = RunnerOpponents(run_config.validate(limited({"scripted_2": 1200, "scripted_3": 900})), seed=0)
    m = opp.matchup("scripted_3")
    assert m["time_limit_s"] == 900.0 and reset_options(m)["time_limit_s"] == 900.0
    first = opp.matchup("curriculum")
    assert first["agent"] == "random" and "time_limit_s" not in first and "time_limit_s" not in reset_options(first)
    install_level(SimpleNamespace(matchups=SimpleNamespace(opponents=opp)), "scripted_2")  # as the driver pushes it
    top = opp.matchup("curriculum")
    assert top["agent"] in ("scripted_1", "scripted_2")  # the review share plays the level below
    assert [opp.matchup("curriculum").get("time_limit_s") for _ in range(200)].count(1200.0) > 100


def test_a_runner_plays_the_longer_games_against_their_opponent_only(ray_session):
    """Two envs, 5 s games (38 steps) against `random` and 8 s (60 steps) against `scripted`, half and half: every
    game the runner started lasts its opponent's length."""
    from test_five_learner import runner_and_learner
    runner, _ = runner_and_learner(tiny_smoke(opponents__fixed={"scripted": 0.5, "random": 0.5},
                                              opponents__time_limit_s={"scripted": 8},
                                              resources__num_envs_per_env_runner=2))
    seen = []
    for _ in range(6):
        runner.sample(num_timesteps=80, explore=True)
        for g in runner._games:
            env = g.env
            while not hasattr(env, "games_started"):  # under the reward post-processing's wrapper
                env = env.env
            seen.append((g.matchup["agent"], env.game.setup.time_limit_s))
    assert set(seen) == {("scripted", 8.0), ("random", 5.0)}
