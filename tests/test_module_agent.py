"""A module agent's sampled actions come from its own seed (policies/agents/module_agent.py): a game between a
sampling checkpoint and the bot is decided by its seed and its agents, whatever ran before it in the process, so that
evaluations with one worker and with two play the same games."""
import torch

from test_training_model import build_module, played_game
from policies.agents.module_agent import ModuleAgent


def actions_of(agent, observations):
    agent.reset(["radiant_0"])
    return [agent.act({"radiant_0": obs["radiant_0"]})["radiant_0"] for obs in observations]


def test_a_seeded_module_agent_samples_the_same_actions_whatever_the_global_generator():
    env, observations = played_game("1v1", steps=60)
    module = build_module(env)
    torch.manual_seed(1)
    first = actions_of(ModuleAgent(module, explore=True, seed=7), observations)
    torch.manual_seed(2)
    torch.rand(1000)  # whatever else ran in the process before this game
    again = actions_of(ModuleAgent(module, explore=True, seed=7), observations)
    other = actions_of(ModuleAgent(module, explore=True, seed=8), observations)
    assert again == first
    assert other != first  # an untrained module samples widely: 60 steps of 5 heads never agree by chance
    # without a seed it draws from torch's global generator, as before
    torch.manual_seed(3)
    unseeded = actions_of(ModuleAgent(module, explore=True), observations)
    torch.manual_seed(3)
    assert actions_of(ModuleAgent(module, explore=True), observations) == unseeded
    # the most likely actions need no generator
    assert actions_of(ModuleAgent(module, seed=1), observations) == actions_of(ModuleAgent(module, seed=2),
                                                                              observations)


def test_agents_of_one_module_act_together_as_each_would_alone():
    """A runner's games with a checkpoint guide or opponent play it in one forward pass (act_together): each agent's
    actions, LSTM state and decisions are those of its own act."""
    import numpy as np
    import pytest
    env, observations = played_game("1v1", steps=12)
    module = build_module(env)
    alone = [ModuleAgent(module) for _ in range(3)]
    together = [ModuleAgent(module) for _ in range(3)]
    heroes = [["radiant_0"], ["dire_0"], ["radiant_0", "dire_0"]]  # one agent plays both heroes of its game
    for agents in (alone, together):
        for agent, ids in zip(agents, heroes):
            agent.reset(ids)
    for t, obs in enumerate(observations):
        # each agent sees another step's observations, so that rows differ within the pass
        seen = [{a: observations[(t + 5 * i) % len(observations)][a] for a in ids} for i, ids in enumerate(heroes)]
        expected = [agent.act(o) for agent, o in zip(alone, seen)]
        assert ModuleAgent.act_together(together, seen) == expected, t
        for a1, a2 in zip(alone, together):
            assert a1.state.keys() == a2.state.keys()
            for hero in a1.state:
                for k in a1.state[hero]:
                    np.testing.assert_allclose(a2.state[hero][k], a1.state[hero][k], atol=1e-5)
            assert [d["action"] for d in a2.decisions.values()] == [d["action"] for d in a1.decisions.values()]
            assert np.allclose([d["win_prob"] for d in a2.decisions.values()],
                               [d["win_prob"] for d in a1.decisions.values()], atol=1e-5)
    with pytest.raises(ValueError, match="same module with the same explore"):
        ModuleAgent.act_together([alone[0], ModuleAgent(module, explore=True)], seen[:2])


def test_a_primary_bias_shifts_the_primary_logits_before_the_draw():
    """ModuleAgent's decode-time prior (scripts/teacher_override.py --primary-bias): added to the primary logits of
    every row, sampled or greedy; masked actions stay masked; a zero bias changes nothing."""
    import numpy as np
    import pytest

    from moba.env.actions import A_MOVE, N_PRIMARY
    env, observations = played_game("1v1", steps=30)
    module = build_module(env)
    plain = ModuleAgent(module)
    assert actions_of(ModuleAgent(module, primary_bias=np.zeros(N_PRIMARY)), observations) == actions_of(
        plain, observations)
    bias = np.zeros(N_PRIMARY, np.float32)
    bias[A_MOVE] = 3.0
    shifted = ModuleAgent(module, primary_bias=bias)
    shifted.reset(["radiant_0"])
    plain.reset(["radiant_0"])
    legal_move = []
    for obs in observations:
        moved = shifted.act({"radiant_0": obs["radiant_0"]})["radiant_0"]
        plain.act({"radiant_0": obs["radiant_0"]})
        np.testing.assert_allclose(shifted.dist.primary - plain.dist.primary, np.broadcast_to(bias, (1, N_PRIMARY)),
                                   atol=1e-4)
        legal_move.append(bool(obs["radiant_0"]["action_mask"][A_MOVE]))
        if not legal_move[-1]:
            assert moved["primary"] != A_MOVE  # a masked action stays masked whatever the bias
    # +100 on move: the greedy primary is move wherever it is legal
    big = ModuleAgent(module, primary_bias=np.where(np.arange(N_PRIMARY) == A_MOVE, 100.0, 0.0))
    moves = [a["primary"] == A_MOVE for a in actions_of(big, observations)]
    assert moves == legal_move and any(moves)
    with pytest.raises(ValueError, match=f"primary_bias must hold {N_PRIMARY} logits, one per primary action"):
        ModuleAgent(module, primary_bias=[1.0, 2.0])
    with pytest.raises(ValueError, match="same explore and primary_bias"):
        ModuleAgent.act_together([ModuleAgent(module), big], [observations[0], observations[0]])
    # equal biases from two arrays play together
    twins = [ModuleAgent(module, primary_bias=bias.copy()) for _ in range(2)]
    for agent in twins:
        agent.reset(["radiant_0"])
    both = ModuleAgent.act_together(twins, [{"radiant_0": observations[0]["radiant_0"]}] * 2)
    assert both[0] == both[1]
