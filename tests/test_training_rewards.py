"""Training-side reward post-processing (moba/env/reward_wrapper.py) and the win-probability label
(policies/learning/win_label.py)."""
from __future__ import annotations

import numpy as np
import pytest

from moba.env.moba_env import MobaEnv
from moba.env.reward_wrapper import SCALE_WARMUP, PostprocessedRewardEnv, ReturnScaler
from moba.env.rewards import TIME_DECAY_BASE, TIME_DECAY_PERIOD_S, postprocess_rewards
from policies.agents.scripted import RandomAgent
from policies.learning.win_label import DRAW_LABEL, segment_label

STEPS = 50


def play(env, steps=STEPS, seed=0, on_step=None):
    """Random legal actions for every hero; yields (step, rewards, infos)."""
    agent = RandomAgent(seed)
    obs, _ = env.reset(seed=seed)
    for t in range(steps):
        if on_step:
            on_step(t)
        obs, rewards, term, trunc, infos = env.step(agent.act(obs))
        yield t, rewards, infos
        if term["__all__"] or trunc["__all__"]:
            return


def arrays(env, rewards, infos):
    ids = env.possible_agents
    r = np.array([rewards[a] for a in ids])
    raw = np.array([infos[a]["raw_reward"] for a in ids])
    win = np.array([infos[a]["reward_signals"]["win"] for a in ids])
    return r, raw, win, infos[ids[0]]["game_time_s"]


def test_wrapper_keeps_spaces_and_agents():
    base = MobaEnv({"mode": "5v5", "seed": 0})
    env = PostprocessedRewardEnv(base)
    assert env.possible_agents == base.possible_agents and len(env.possible_agents) == 10
    assert env.observation_spaces == base.observation_spaces and env.action_spaces == base.action_spaces
    assert env.unwrapped is env and env.team_spirit == pytest.approx(0.3)


def test_postprocessed_rewards_are_zero_sum_and_match_postprocess_rewards():
    env = PostprocessedRewardEnv(MobaEnv({"mode": "5v5", "seed": 1}), team_spirit=0.3)
    team_of = np.array([0] * 5 + [1] * 5)
    nonzero_raw = 0
    for _, rewards, infos in play(env, seed=1):
        r, raw, win, game_time = arrays(env, rewards, infos)
        assert abs(r.sum()) < 1e-9, f"not zero sum: {r}"
        for a in env.possible_agents:
            # the raw reward is the env's: the weighted signals summed
            assert infos[a]["raw_reward"] == pytest.approx(sum(infos[a]["reward_signals"].values()), abs=1e-12)
            assert infos[a]["team_spirit"] == pytest.approx(0.3)
        expected = postprocess_rewards(raw - win, win, team_of, 0.3, game_time)
        np.testing.assert_allclose(r, expected, rtol=1e-12, atol=1e-12)
        # and by hand (Five app. G): decay, team spirit, minus the enemy team's mean
        d = (raw - win) * TIME_DECAY_BASE ** (game_time / TIME_DECAY_PERIOD_S) + win
        means = np.array([d[:5].mean(), d[5:].mean()])
        by_hand = 0.7 * d + 0.3 * means[team_of] - means[1 - team_of]
        np.testing.assert_allclose(r, by_hand, rtol=1e-12, atol=1e-12)
        nonzero_raw += np.any(raw != 0)
    assert nonzero_raw > STEPS // 2, "the raw rewards were almost always zero: nothing was tested"


def test_team_spirit_zero_and_one():
    env = PostprocessedRewardEnv(MobaEnv({"mode": "5v5", "seed": 2}), team_spirit=0.0)
    team_of = np.array([0] * 5 + [1] * 5)
    half = STEPS // 2

    def switch(t):
        if t == half:
            env.set_team_spirit(1.0)

    seen = {0.0: 0, 1.0: 0}
    for t, rewards, infos in play(env, seed=2, on_step=switch):
        r, raw, win, game_time = arrays(env, rewards, infos)
        tau = 0.0 if t < half else 1.0
        assert infos[env.possible_agents[0]]["team_spirit"] == tau
        d = (raw - win) * TIME_DECAY_BASE ** (game_time / TIME_DECAY_PERIOD_S) + win
        means = np.array([d[:5].mean(), d[5:].mean()])
        if tau == 0.0:  # every hero keeps its own reward, minus the enemies' mean
            np.testing.assert_allclose(r, d - means[1 - team_of], atol=1e-12)
        else:  # every hero gets its team's mean: teammates get the same reward
            np.testing.assert_allclose(r[:5], r[0], atol=1e-12)
            np.testing.assert_allclose(r[5:], r[5], atol=1e-12)
            assert r[0] == pytest.approx(means[0] - means[1], abs=1e-12)
        seen[tau] += np.any(np.abs(d - means[team_of]) > 1e-9)  # steps where tau makes a difference
    assert seen[0.0] > 0 and seen[1.0] > 0


def test_without_post_processing_rewards_are_raw():
    env = PostprocessedRewardEnv(MobaEnv({"mode": "5v5", "seed": 3}), team_spirit=0.0, zero_sum=False,
                                 time_decay=False)
    for _, rewards, infos in play(env, steps=20, seed=3):
        r, raw, _, _ = arrays(env, rewards, infos)
        np.testing.assert_allclose(r, raw, atol=1e-12)


def test_set_team_spirit_rejects_values_outside_0_1():
    env = PostprocessedRewardEnv(MobaEnv({"mode": "1v1", "seed": 0}))
    for bad in (-0.1, 1.2, float("nan")):
        with pytest.raises(ValueError, match="team_spirit"):
            env.set_team_spirit(bad)
    assert env.team_spirit == pytest.approx(0.3)  # unchanged by a rejected value
    for good in (0.0, 0.5, 1.0, 1):
        env.set_team_spirit(good)
        assert env.team_spirit == float(good)
    with pytest.raises(ValueError, match="team_spirit"):
        PostprocessedRewardEnv(MobaEnv({"mode": "1v1", "seed": 0}), team_spirit=1.5)


class StubEnv:
    """A 1v1 base env whose rewards and infos are set by the test: a win at game time 1200 s."""
    possible_agents = ["radiant_0", "dire_0"]
    agents = possible_agents
    observation_spaces = action_spaces = {}

    def __init__(self, raw, win, game_time):
        self.raw, self.win, self.game_time = raw, win, game_time

    def reset(self, *, seed=None, options=None):
        return {a: 0 for a in self.agents}, {}

    def step(self, actions):
        rewards = {a: float(r + w) for a, r, w in zip(self.agents, self.raw, self.win)}
        infos = {a: {"reward_signals": {"win": float(w), "xp": float(r)}, "game_time_s": self.game_time,
                     "winner": "radiant"} for a, r, w in zip(self.agents, self.raw, self.win)}
        done = {a: True for a in self.agents} | {"__all__": True}
        return {}, rewards, done, {a: False for a in self.agents} | {"__all__": False}, infos


def test_win_reward_is_not_time_decayed():
    decay = TIME_DECAY_BASE ** (1200.0 / TIME_DECAY_PERIOD_S)  # 0.36
    env = PostprocessedRewardEnv(StubEnv(raw=[1.0, 1.0], win=[5.0, -5.0], game_time=1200.0), team_spirit=0.3)
    env.reset()
    _, rewards, _, _, infos = env.step({})
    assert infos["radiant_0"]["raw_reward"] == 6.0 and infos["dire_0"]["raw_reward"] == -4.0
    r0 = (1.0 * decay + 5.0) - (1.0 * decay - 5.0)  # team spirit does nothing in teams of one
    assert rewards["radiant_0"] == pytest.approx(r0) and rewards["dire_0"] == pytest.approx(-r0)
    assert r0 == pytest.approx(10.0)
    # without time decay the shaped part counts fully; without zero sum each keeps its own
    env = PostprocessedRewardEnv(StubEnv(raw=[1.0, 0.5], win=[5.0, -5.0], game_time=1200.0), team_spirit=0.0,
                                 zero_sum=False, time_decay=False)
    _, rewards, _, _, _ = env.step({})
    assert rewards == {"radiant_0": pytest.approx(6.0), "dire_0": pytest.approx(-4.5)}


def test_rewards_are_divided_by_the_running_std_of_discounted_returns():
    """Table 2 footnote c: after a warm-up, each reward is the post-processed reward over the running std of the
    heroes' discounted returns (all heroes and steps so far pooled)."""
    gamma, steps = 0.5, 2 * SCALE_WARMUP
    scaler = ReturnScaler()
    env = PostprocessedRewardEnv(StubEnv(raw=[1.0, 0.25], win=[0.0, 0.0], game_time=0.0), team_spirit=0.0,
                                 zero_sum=False, time_decay=False, normalize_gamma=gamma, scaler=scaler)
    env.reset()
    pooled, ret = [], np.zeros(2)
    for t in range(steps):
        _, rewards, _, _, infos = env.step({})
        ret = ret * gamma + np.array([1.0, 0.25])
        pooled.extend(ret)
        assert infos["radiant_0"]["postprocessed_reward"] == pytest.approx(1.0)
        std = np.std(pooled, ddof=1) if len(pooled) >= SCALE_WARMUP else 1.0
        assert rewards["radiant_0"] == pytest.approx(1.0 / std), t
        assert rewards["dire_0"] == pytest.approx(0.25 / std), t
    assert scaler.count == 2 * steps and scaler.std == pytest.approx(np.std(pooled, ddof=1))
    env.reset()  # a new game starts its discounted returns at zero
    assert np.all(env.returns == 0.0)
    with pytest.raises(ValueError, match="normalize_gamma"):
        PostprocessedRewardEnv(StubEnv(raw=[1.0, 0.25], win=[0.0, 0.0], game_time=0.0), normalize_gamma=1.0)


# ---- the win-probability label (Five app. D, eq. 10) ---------------------------------------------------------
@pytest.mark.parametrize("agent,terminated,truncated,winner,pred,expected", [
    # the game's last segment, the hero's team won or lost: the ground truth
    ("radiant_0", True, False, "radiant", 0.2, 1.0),
    ("radiant_3", True, False, "dire", 0.9, 0.0),
    ("dire_1", True, False, "dire", 0.1, 1.0),
    ("dire_0", True, False, "radiant", 0.8, 0.0),
    # a game cut by the time limit has no winner: its last segment is a draw
    ("radiant_0", False, True, "none", 0.9, DRAW_LABEL),
    ("dire_0", False, True, "none", 0.1, DRAW_LABEL),
    ("dire_0", True, False, "none", 0.1, DRAW_LABEL),
    # not the last segment: the model's own prediction at the end of the segment
    ("radiant_0", False, False, None, 0.73, 0.73),
    ("dire_4", False, False, None, 0.05, 0.05),
    ("radiant_0", False, True, None, 0.61, 0.61),  # cut without a game result: no ground truth
])
def test_segment_label(agent, terminated, truncated, winner, pred, expected):
    assert segment_label(agent, terminated, truncated, winner, pred) == pytest.approx(expected)
    assert DRAW_LABEL == 0.5


@pytest.mark.parametrize("agent,objective,rule,expected", [
    # the run decides capped games by the objective: buildings, then hero kills, as the league and the curriculum do
    ("radiant_0", {"radiant": {"buildings": 3, "kills": 1}, "dire": {"buildings": 1, "kills": 5}}, "objective", 1.0),
    ("dire_2", {"radiant": {"buildings": 3, "kills": 1}, "dire": {"buildings": 1, "kills": 5}}, "objective", 0.0),
    ("dire_0", {"radiant": {"buildings": 2, "kills": 1}, "dire": {"buildings": 2, "kills": 5}}, "objective", 1.0),
    ("radiant_0", {"radiant": {"buildings": 2, "kills": 4}, "dire": {"buildings": 2, "kills": 4}}, "objective", 0.5),
    ("radiant_0", None, "objective", 0.5),  # no objective recorded
    # the other rules: a capped game stays a draw (the raw returns of "points" are not the game's outcome)
    ("radiant_0", {"radiant": {"buildings": 3, "kills": 1}, "dire": {"buildings": 1, "kills": 5}}, "draw", 0.5),
    ("radiant_0", {"radiant": {"buildings": 3, "kills": 1}, "dire": {"buildings": 1, "kills": 5}}, "points", 0.5),
])
def test_a_capped_games_label_follows_the_runs_rule(agent, objective, rule, expected):
    assert segment_label(agent, False, True, "none", 0.3, objective, rule) == expected
    # an outright result and a chunk that does not end the game are the same under every rule
    assert segment_label(agent, True, False, "radiant", 0.3, objective, rule) == float(agent.startswith("radiant"))
    assert segment_label(agent, False, False, None, 0.3, objective, rule) == pytest.approx(0.3)


def test_the_label_connector_refuses_an_unknown_rule():
    from policies.learning.win_label import AddWinLabel
    with pytest.raises(ValueError, match=r"time_limit_outcome must be one of \['draw', 'points', 'objective'\]"):
        AddWinLabel(time_limit_outcome="score")


class MaskedStubEnv(StubEnv):
    """StubEnv whose observations carry action masks: Radiant can act, Dire (dead) has only the no-op."""

    def reset(self, *, seed=None, options=None):
        return {"radiant_0": {"action_mask": np.array([1, 1, 0])}, "dire_0": {"action_mask": np.array([1, 0, 0])}}, {}

    def step(self, actions):
        _, *rest = super().step(actions)
        return (self.reset()[0], *rest)


def test_a_noop_costs_the_penalty_only_where_the_hero_could_act_and_is_its_own():
    env = PostprocessedRewardEnv(MaskedStubEnv(raw=[0.0, 0.0], win=[0.0, 0.0], game_time=0.0), team_spirit=0.0,
                                 noop_penalty=0.5)
    env.reset()
    noop, move = {"primary": 0}, {"primary": 1}
    _, rewards, _, _, infos = env.step({"radiant_0": noop, "dire_0": noop})
    assert rewards == {"radiant_0": -0.5, "dire_0": 0.0}  # not zero-summed: Dire, which could only no-op, pays none
    assert infos["radiant_0"]["postprocessed_reward"] == -0.5
    _, rewards, _, _, _ = env.step({"radiant_0": move, "dire_0": noop})
    assert rewards == {"radiant_0": 0.0, "dire_0": 0.0}
    for bad in (-0.1, True, "0.1"):
        with pytest.raises(ValueError, match="noop_penalty"):
            PostprocessedRewardEnv(MaskedStubEnv([0.0, 0.0], [0.0, 0.0], 0.0), noop_penalty=bad)


def test_the_run_config_sets_the_training_envs_noop_penalty():
    from training import run_config
    from training.algorithm import make_training_env, training_env_config
    cfg = run_config.validate({"env": {"mode": "1v1"}, "reward": {"noop_penalty": 0.003}})
    assert make_training_env(training_env_config(cfg)).noop_penalty == 0.003
    assert "noop_penalty" not in training_env_config(run_config.validate({"env": {"mode": "1v1"}}))  # as before
    with pytest.raises(ValueError, match="'reward.noop_penalty': must be >= 0"):
        run_config.validate({"reward": {"noop_penalty": -1.0}})
