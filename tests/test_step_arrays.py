"""One env step as arrays (moba/env/step_arrays.py): ``step_arrays`` plays the same game and gives the same values as
``step``'s dicts, for MobaEnv, the reward wrapper and a remote-style env without ``step_arrays``; bad arrays are
refused with the row and the field named; the game metrics read the same from arrays as from infos."""
from __future__ import annotations

import numpy as np
import pytest
from moba_testlib import make_env, random_legal_actions

from moba.env.actions import ACTION_KEYS, action_sizes, check_action_array, validate_actions
from moba.env.reward_wrapper import PostprocessedRewardEnv, ReturnScaler
from moba.env.step_arrays import StepArrays, step_arrays
from moba.game.teams import side_of_agent
from training.game_metrics import GameTally


def as_rows(env, action_dict) -> np.ndarray:
    """The action dict as the (heroes, 5) array step_arrays takes (`env`: a MobaEnv, or a wrapper around one)."""
    game = env if hasattr(env, "cfg") else env.env if hasattr(env.env, "cfg") else env.env.env
    return validate_actions(action_dict, {a: i for i, a in enumerate(env.possible_agents)}, game.cfg.max_units)


def assert_same_step(dicts, arrays: StepArrays, agents):
    obs, rewards, terms, truncs, infos = dicts
    a_obs, a_rewards, a_terms, a_truncs, a_infos = arrays.as_dicts(agents)
    assert rewards == a_rewards and terms == a_terms and truncs == a_truncs
    assert infos == a_infos
    for a in agents:
        for k in obs[a]:
            assert np.array_equal(obs[a][k], a_obs[a][k]), (a, k)


class DictOnly:
    """A MobaEnv seen through its dicts alone, as a remote game is (no step_arrays)."""

    def __init__(self, env):
        self.env = env
        self.possible_agents = env.possible_agents
        self.agents = env.agents
        self.observation_spaces, self.action_spaces = env.observation_spaces, env.action_spaces

    def reset(self, **kwargs):
        return self.env.reset(**kwargs)

    def step(self, action_dict):
        return self.env.step(action_dict)


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_step_arrays_plays_the_game_step_plays(mode):
    by_dicts, by_arrays = make_env(mode, time_limit_s=20), make_env(mode, time_limit_s=20)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(160):
        acts = random_legal_actions(by_dicts, rng)
        dicts = by_dicts.step(acts)
        arrays = by_arrays.step_arrays(as_rows(by_arrays, acts))
        assert_same_step(dicts, arrays, by_dicts.possible_agents)
        if arrays.done:
            ends += 1
            assert arrays.last_infos["winner"] == dicts[4][by_dicts.possible_agents[0]]["winner"]
            break
    assert ends == 1  # the time limit's step, with its last infos, was compared too


def test_the_wrapper_step_arrays_post_processes_as_step_does_for_local_and_remote_style_envs():
    def wrapped(inner):
        return PostprocessedRewardEnv(inner, team_spirit=0.3, normalize_gamma=0.99, scaler=ReturnScaler(),
                                      noop_penalty=0.01)

    by_dicts = wrapped(make_env("5v5"))
    local, remote_style = wrapped(make_env("5v5")), wrapped(DictOnly(make_env("5v5")))
    for env in (by_dicts, local, remote_style):
        env.reset(seed=0)
    rng = np.random.default_rng(1)
    agents = by_dicts.possible_agents
    for _ in range(150):  # past the scaler's warm-up: the normalization divides
        acts = random_legal_actions(by_dicts.env, rng)
        dicts = by_dicts.step(acts)
        for env in (local, remote_style):
            arrays = step_arrays(env, as_rows(env, acts))
            assert_same_step(dicts, arrays, agents)
    assert by_dicts.scaler.std != 1.0 and by_dicts.scaler.state_dict() == local.scaler.state_dict()
    assert remote_style.scaler.state_dict() == local.scaler.state_dict()


def test_a_bad_action_array_names_the_row_and_the_field_and_changes_nothing():
    env = make_env("1v1")
    before = env.game.save()
    sizes = action_sizes(env.cfg.max_units)
    good = np.zeros((2, 5), np.int64)
    for row, col, value in [(1, 2, sizes[2]), (0, 0, -1), (1, 4, 9)]:
        bad = good.copy()
        bad[row, col] = value
        message = f"hero row {row}: '{ACTION_KEYS[col]}' must be in \\[0, {sizes[col] - 1}\\]"
        with pytest.raises(ValueError, match=message):
            env.step_arrays(bad)
    with pytest.raises(ValueError, match="expected an \\(2, 5\\) integer array"):
        env.step_arrays(np.zeros((3, 5), np.int64))
    with pytest.raises(ValueError, match="integer array"):
        env.step_arrays(np.zeros((2, 5), np.float32))
    assert env.game.save() == before
    assert check_action_array(np.ones((2, 5), np.int32), 2, env.cfg.max_units).dtype == np.int64


def test_the_game_metrics_read_the_same_from_arrays_as_from_infos():
    env = PostprocessedRewardEnv(make_env("5v5", time_limit_s=3), scaler=ReturnScaler())
    env.reset(seed=0)
    agents = env.possible_agents
    sides = [side_of_agent(a) for a in agents]
    from_infos, from_arrays = GameTally(), GameTally()
    record_infos, record_arrays = {}, {}
    rng = np.random.default_rng(2)
    twin = PostprocessedRewardEnv(make_env("5v5", time_limit_s=3), scaler=ReturnScaler())
    twin.reset(seed=0)
    while True:
        acts = random_legal_actions(env.env, rng)
        *_, infos = env.step(acts)
        step = twin.step_arrays(as_rows(twin, acts))
        from_infos.add_step(infos, record_infos)
        from_arrays.add_step_arrays(step, record_arrays, sides)
        if step.done:
            break
    assert record_arrays.keys() == record_infos.keys() and record_arrays["winner"] == record_infos["winner"]
    for side in ("radiant", "dire"):
        assert record_arrays["raw_return"][side] == pytest.approx(record_infos["raw_return"][side], abs=1e-9)
    assert record_arrays["objective"] == record_infos["objective"]
    np.testing.assert_allclose(from_arrays.signal_sums, from_infos.signal_sums, atol=1e-9)
    assert from_arrays.hero_seconds == pytest.approx(from_infos.hero_seconds)
