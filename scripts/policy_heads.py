"""What a checkpoint's policy does, head by head: which primary actions it picks and how much of its
action's entropy each head holds, on its own states. Tells a collapsed policy (always "noop") from a drifted one (a
move whose offsets are untrained: the offsets' part near 2 ln 9 = 4.4) from a working one.

    python scripts/policy_heads.py CHECKPOINT [CHECKPOINT ...] [--mode 1v1|5v5] [--opponent random] [--games 1]
        [--time-limit SECONDS] [--seed S]

A CHECKPOINT is a run's checkpoint, an RLModule checkpoint or a shipped model (``models/X``). Each plays ``--games``
evaluation games (``app.evaluate``'s env, seeded) against ``--opponent``, sides alternating, sampling its actions as
in training. Per step of its heroes: the probability of each primary action, and the entropy of each head as the
action distribution splits it (``head_entropies``: primary, delay, the target unit where read, the offsets where
read; they sum to the action's entropy, metrics.csv's ``entropy``). Prints a line per checkpoint (the entropies, the
most likely primaries, the games' reward margin) and a JSON line last.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from moba.game.teams import MODES, TEAM_NAMES, check_mode, enemy_side  # noqa: E402

SEED = 6_000_000  # seeds of these games: apart from training's, the evaluations' (1,000,000), the cards' (2,000,000)
TOP_PRIMARIES = 4


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", help="run checkpoints, RLModule checkpoints or models/X")
    p.add_argument("--mode", default="1v1", help=f"one of {list(MODES)} (default 1v1)")
    p.add_argument("--opponent", default="random", help="an agent name (default random)")
    p.add_argument("--games", type=int, default=1, help="games per checkpoint (default 1)")
    p.add_argument("--time-limit", type=float, default=300.0, help="game time limit in seconds (default 300)")
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the first game (default {SEED})")
    return p.parse_args(argv)


def policy_heads(module, opponent: str, mode: str, games: int, time_limit_s: float, seed: int) -> dict:
    """Plays `games` games of `module` (sampling) against the agent `opponent`; returns the mean over its heroes'
    steps of each head's entropy ("entropy": {head: nats, "action": their sum}), of each primary action's
    probability ("primary": {name: probability}, summing to 1), and the games' mean reward margin of its team."""
    import numpy as np
    import torch

    from moba.env.actions import PRIMARY_NAMES
    from moba.env.moba_env import MobaEnv
    from policies.model.action_distribution import FiveActionDistribution
    from policies.agents.by_name import make_agent, play_game
    from policies.agents.module_agent import ModuleAgent
    names = FiveActionDistribution.HEADS

    heads, primary, margins = [], [], []

    class Recording(ModuleAgent):
        def act(self, observations):
            actions = super().act(observations)
            parts = self.dist.head_entropies()
            heads.append(torch.stack([parts[k] for k in names], -1).numpy())
            primary.append(torch.softmax(self.dist.primary, -1).numpy())
            return actions

    for k in range(games):
        env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": time_limit_s, "seed": seed + k})
        agent = Recording(module, explore=True)
        side = TEAM_NAMES[k % 2]
        other = make_agent(opponent, seed=seed + k)
        summary = play_game(env, *((agent, other) if side == TEAM_NAMES[0] else (other, agent)), seed=seed + k)
        margins.append(summary["raw_return"][side] - summary["raw_return"][enemy_side(side)])
    h = np.concatenate(heads).mean(0)
    p = np.concatenate(primary).mean(0)
    entropy = {name: float(v) for name, v in zip(names, h)}
    entropy["action"] = float(h.sum())
    return {"entropy": entropy, "primary": {n: float(v) for n, v in zip(PRIMARY_NAMES, p)},
            "reward_margin": float(np.mean(margins)), "steps": int(sum(len(x) for x in heads))}


def main(argv=None) -> int:
    args = parse_args(argv)
    from policies.agents.by_name import make_agent
    for flag, check in (("--mode", lambda: check_mode(args.mode)), ("--opponent", lambda: make_agent(args.opponent))):
        try:
            check()
        except ValueError as e:
            print(f"error: {flag}: {e}", file=sys.stderr)
            return 2
    if args.games < 1 or args.time_limit <= 0:
        print("error: --games must be >= 1 and --time-limit > 0", file=sys.stderr)
        return 2
    import torch

    from policies.league.references import load_module
    torch.set_num_threads(1)
    results = {}
    for path in args.checkpoints:
        try:
            module = load_module(path)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        r = policy_heads(module, args.opponent, args.mode, args.games, args.time_limit, args.seed)
        results[path] = r
        top = sorted(r["primary"].items(), key=lambda kv: -kv[1])[:TOP_PRIMARIES]
        print(f"{path}: entropy {r['entropy']['action']:.2f} = "
              + " + ".join(f"{k} {v:.2f}" for k, v in r["entropy"].items() if k != "action")
              + " | primary " + " ".join(f"{n} {v:.2f}" for n, v in top)
              + f" | margin vs {args.opponent} {r['reward_margin']:+.1f}")
    print(json.dumps({"mode": args.mode, "opponent": args.opponent, "games": args.games,
                      "time_limit_s": args.time_limit, "checkpoints": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
