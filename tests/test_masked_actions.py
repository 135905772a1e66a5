"""An agent played with some primary actions masked (policies/agents/masked_actions.py) never chooses them, and
``app.evaluate --mask-actions`` plays its agent so."""
import numpy as np
import pytest

from test_training_model import build_module, played_game
from moba.env.actions import PRIMARY_NAMES
from moba.env.replay_file import read_replay
from policies.agents.masked_actions import MaskedActions, blocked_primary
from policies.agents.module_agent import ModuleAgent


def primaries(agent, observations, agent_id="radiant_0"):
    agent.reset([agent_id])
    return [int(agent.act({agent_id: obs[agent_id]})[agent_id]["primary"]) for obs in observations]


def test_a_masked_module_agent_never_chooses_the_blocked_actions_and_otherwise_plays_as_before():
    env, observations = played_game("1v1", steps=150)
    module = build_module(env)
    blocked = blocked_primary(["move", "attack"])
    assert blocked == (PRIMARY_NAMES.index("move"), PRIMARY_NAMES.index("attack"))
    # an untrained module samples widely: unmasked, it moves and attacks within 150 steps
    free = primaries(ModuleAgent(module, explore=True, seed=5), observations)
    assert set(free) & set(blocked)
    masked_agent = MaskedActions(ModuleAgent(module, explore=True, seed=5), blocked)
    masked = primaries(masked_agent, observations)
    assert not set(masked) & set(blocked)
    assert len(set(masked)) >= 2  # it still plays: noop and what else is legal
    # the wrapped agent's attributes show through (the replay writer reads decisions)
    assert masked_agent.decisions["radiant_0"]["action"]["primary"] == masked[-1]
    # the observations the game gave are left as they were
    before = [obs["radiant_0"]["action_mask"].copy() for obs in observations]
    primaries(MaskedActions(ModuleAgent(module, explore=True, seed=5), blocked), observations)
    assert all(np.array_equal(b, obs["radiant_0"]["action_mask"]) for b, obs in zip(before, observations))
    # with nothing legal but noop, noop
    everything = blocked_primary([n for n in PRIMARY_NAMES if n != "noop"])
    assert set(primaries(MaskedActions(ModuleAgent(module, explore=True, seed=5), everything), observations)) == {0}


def test_blocked_actions_are_named_and_noop_cannot_be_blocked():
    with pytest.raises(ValueError, match=r"unknown or unmaskable primary action\(s\) \['atack'\]: allowed \['move'"):
        blocked_primary(["atack"])
    with pytest.raises(ValueError, match=r"unmaskable primary action\(s\) \['noop'\]"):
        blocked_primary(["noop"])
    with pytest.raises(ValueError, match="name at least one primary action"):
        blocked_primary([])
    with pytest.raises(ValueError, match="noop cannot be blocked"):
        MaskedActions(None, [0])


def hero_path(replay) -> list:
    """The agent's hero's (x, y) in each record of a replay (the Radiant hero: unit 0)."""
    _, records = read_replay(replay)
    return [tuple(next(u for u in r["units"] if u[0] == 0)[4:6]) for r in records]


def test_evaluate_plays_its_agent_with_the_actions_masked(tmp_path, capsys):
    """The full bot leaves its fountain within 30 s; with every action that moves its hero masked it stays there."""
    from app import evaluate
    base = ["--agent", "scripted_3", "--opponent", "noop", "--mode", "1v1", "--games", "1", "--time-limit", "30",
            "--replay-every", "5"]
    assert evaluate.parse_args(base).mask_actions is None
    still = "move,attack,ability_1,ability_2,ability_3,ability_4,item_town_portal_scroll,item_blink_dagger"
    args = evaluate.parse_args(base + ["--mask-actions", still, "--replay-dir", str(tmp_path / "masked")])
    assert args.mask_actions == (1, 2, 3, 4, 5, 6, 9, 11)
    masked = hero_path(evaluate.evaluate(args, log=lambda line: None)["replays"][0])
    free = hero_path(evaluate.evaluate(evaluate.parse_args(base + ["--replay-dir", str(tmp_path / "free")]),
                                       log=lambda line: None)["replays"][0])
    assert len(masked) == len(free) >= 6 and masked[0] == free[0]
    assert set(masked) == {masked[0]}
    assert max(abs(x - free[0][0]) + abs(y - free[0][1]) for x, y in free) > 500
    with pytest.raises(SystemExit):
        evaluate.parse_args(base + ["--mask-actions", "attack,shrines"])
    err = capsys.readouterr().err
    assert "--mask-actions 'attack,shrines': unknown or unmaskable primary action(s) ['shrines']: allowed" in err
    assert "'item_clarity'" in err
