"""Agents by name, and the loop that plays one game between two of them through MobaEnv.

An agent controls one team: ``reset(agent_ids)`` before a game, ``act(observations) -> actions`` each step, where
both dicts are keyed by the team's agent ids.
"""
from __future__ import annotations

from functools import partial

from moba.env.actions import NOOP_ACTION
from moba.game.teams import TEAM_NAMES, side_of_agent
from policies.agents.ladder import BRIDGE_HANDICAPS, LADDER_HANDICAPS, WARMUP_HANDICAPS
from policies.agents.scripted import RandomAgent, ScriptedAgent


class NoopAgent:
    """Every hero does nothing."""

    def __init__(self, seed: int = 0):
        pass

    def reset(self, agent_ids=None):
        pass

    def act(self, observations: dict) -> dict:
        return {a: dict(NOOP_ACTION) for a in observations}


# "scripted" is the full bot (the ladder's top level, scripted_3); the ladder's levels, the curriculum's warm-up
# levels and the top rung's bridge levels are policies/agents/ladder.py
HANDICAPS = {**LADDER_HANDICAPS, **WARMUP_HANDICAPS, **BRIDGE_HANDICAPS}
AGENTS = {"scripted": ScriptedAgent, "random": RandomAgent, "noop": NoopAgent,
          **{name: partial(ScriptedAgent, handicap=h) for name, h in HANDICAPS.items()}}


def make_agent(name: str, seed: int = 0, flag: str = "agent"):
    """The agent called `name` (one of AGENTS), seeded with `seed`; an unknown name is a ValueError naming `flag`
    (the option or key it came from) and the allowed names. A tool that also takes checkpoints parses its agent
    with policies.league.references.agent_path."""
    if name not in AGENTS:
        raise ValueError(f"{flag} {name!r}: unknown agent; allowed: {sorted(AGENTS)}")
    return AGENTS[name](seed=seed)


def play_game(env, radiant, dire, seed=None, on_step=None, options=None) -> dict:
    """Plays one game of `env` (a MobaEnv) between two agents; returns the game's summary, with each team's summed
    raw (shaped, Table 6) reward under "raw_return". `on_step(env)` is called after reset and after every step
    (progress, replays); `options` are the reset's (``{"attacker": side}``: the side a start state starts around)."""
    obs, _ = env.reset(seed=seed, options=options)
    teams = dict(zip(TEAM_NAMES, (radiant, dire)))
    ids = {t: [a for a in env.possible_agents if side_of_agent(a) == t] for t in teams}
    for t, agent in teams.items():
        agent.reset(ids[t])
    if on_step:
        on_step(env)
    raw_return = {t: 0.0 for t in teams}
    while True:
        actions = {}
        for t, agent in teams.items():
            acts = agent.act({a: obs[a] for a in ids[t]})
            stray = sorted(set(acts) - set(ids[t]))
            if stray:
                raise ValueError(f"the {t} agent returned actions for agents not on its team: {stray}")
            actions.update(acts)
        obs, rewards, term, trunc, _ = env.step(actions)
        for t in teams:
            raw_return[t] += sum(rewards[a] for a in ids[t])
        if on_step:
            on_step(env)
        if term["__all__"] or trunc["__all__"]:
            return {**env.game.summary(), "raw_return": raw_return}
