"""A checkpoint's agents one game at a time against all games in one forward pass (``ModuleAgent.act_together``):
what a runner's fixed opponent or Jump-Start RL's guide given as ``model:PATH`` costs a game step.

    python scripts/bench_module_agents.py [--agent models/hok_1v1_top_rung] [--games 32] [--steps 40] [--rounds 3]

The agent plays one hero in each of --games games on observations recorded from one 1v1 game (random legal actions),
one torch thread, sampled actions as in training. Each round times --steps steps both ways, one after the other, in
microseconds per game step. The last line of output is a JSON object.
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from moba.env.moba_env import MobaEnv
from policies.agents.module_agent import ModuleAgent
from policies.league.references import agent_maker

HERO = "radiant_0"


def recorded_observations(steps: int, seed: int = 0) -> list:
    env = MobaEnv({"mode": "1v1", "seed": seed})
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        out.append(obs[HERO])
        obs = env.step({a: env.action_spaces[a].sample() for a in env.possible_agents})[0]
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", default="models/hok_1v1_top_rung", help="a 1v1 checkpoint (model:PATH or PATH)")
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    make = agent_maker(args.agent, explore=True)
    observations = recorded_observations(args.steps)
    agents = [make(seed) for seed in range(args.games)]
    for agent in agents:
        agent.reset([HERO])
    rounds = []
    for r in range(args.rounds):
        t0 = time.perf_counter()
        for o in observations:
            for agent in agents:
                agent.act({HERO: o})
        alone = (time.perf_counter() - t0) / (len(observations) * args.games) * 1e6
        t0 = time.perf_counter()
        for o in observations:
            ModuleAgent.act_together(agents, [{HERO: o}] * args.games)
        together = (time.perf_counter() - t0) / (len(observations) * args.games) * 1e6
        rounds.append({"alone_us": round(alone, 1), "together_us": round(together, 1),
                       "ratio": round(alone / together, 2)})
        print(f"round {r + 1}: {alone:.0f} us a game step one game at a time, {together:.0f} together "
              f"({alone / together:.1f}x)")
    out = {"agent": args.agent, "games": args.games, "steps": args.steps, "rounds": rounds}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
