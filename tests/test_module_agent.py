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
