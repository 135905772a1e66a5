"""The scripted bot's compiled decision (policies/agents/scripted_decision.py): the same decisions as the numpy bot it
replaced, to the bit, and the exact arithmetic that takes (CPython's hypot, numpy's float32 mean)."""
import hashlib
import json
import math

import numpy as np
import pytest

from moba.env.moba_env import MobaEnv
from policies.agents.by_name import make_agent, play_game
from policies.agents.scripted_decision import _mean32, py_hypot

# The digests of every action both bots chose in these games, recorded with the numpy bot (main at 49ef0f1) before
# it was compiled. A change to the engine, the observations or the bot's behaviour changes them: re-record with
# _game_digest only when that change is meant to change the bot's games.
RECORDED = {
    ("1v1", "scripted_3", "scripted_1", 0, 300.0): "8b9debcd2cd04200e2701b88f6059ed06623d9091709eb461fdfaa3199b4d59f",
    ("5v5", "scripted_3", "scripted_2", 1, 150.0): "8a763757c6bf7998d23d570afac922d46d22918246e1ce8681eb136a60551eb1",
    ("5v5", "scripted_1", "scripted_3", 2, 60.0): "f61c077e5355d0670b42e37d3993b6bc0d8f63a472070dc8e5662cb12aa06567",
}


class _Recorder:
    def __init__(self, agent, steps):
        self.agent, self.steps = agent, steps

    def reset(self, agent_ids=None):
        self.agent.reset(agent_ids)

    def act(self, observations):
        actions = self.agent.act(observations)
        self.steps.append(sorted(actions.items()))
        return actions


def _game_digest(mode, radiant, dire, seed, time_limit_s):
    """sha256 of the game's actions, both sides, step by step (json: Python ints only)."""
    steps = []
    env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": time_limit_s})
    play_game(env, _Recorder(make_agent(radiant, 7), steps), _Recorder(make_agent(dire, 8), steps), seed=seed)
    return hashlib.sha256(json.dumps(steps, sort_keys=True).encode()).hexdigest(), len(steps)


@pytest.mark.parametrize("game", sorted(RECORDED))
def test_the_bots_games_are_the_recorded_ones(game):
    digest, steps = _game_digest(*game)
    assert steps > 0 and digest == RECORDED[game]


def test_hypot_is_cpythons_to_the_bit():
    rng = np.random.default_rng(0)
    for scale in (1.0, 8000.0, 1e6):
        xy = rng.uniform(-scale, scale, size=(20000, 2))
        xy[:50, 1] = 0.0
        ours = [py_hypot(x, y) for x, y in xy]
        assert ours == [math.hypot(x, y) for x, y in xy]
    f32 = rng.uniform(-8000, 8000, size=(20000, 2)).astype(np.float32)  # the bot's float32 offsets, as doubles
    assert [py_hypot(float(x), float(y)) for x, y in f32] == [math.hypot(x, y) for x, y in f32]
    assert py_hypot(0.0, 0.0) == 0.0 and py_hypot(-3.0, 4.0) == 5.0


def test_float32_mean_is_numpys_to_the_bit():
    rng = np.random.default_rng(1)
    for n in list(range(1, 40)) + [127, 128, 129, 136, 137, 200, 255, 256]:
        for _ in range(20):
            x = (rng.standard_normal(n) * 300).astype(np.float32)
            assert _mean32(x) == x.mean() and np.float32(_mean32(x)) == x.mean()
