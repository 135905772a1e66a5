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
import sys


from moba.game.teams import MODES  # noqa: E402
from training.cli import user_errors  # noqa: E402

SEED = 6_000_000  # seeds of these games: apart from training's, the evaluations' (1,000,000), the cards' (2,000,000)
TOP_PRIMARIES = 4


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoints", nargs="+", help="run checkpoints, RLModule checkpoints or models/X")
    p.add_argument("--mode", default="1v1", help=f"one of {list(MODES)} (default 1v1)")
    p.add_argument("--opponent", default="random", help="an agent name, model:PATH or a checkpoint (default random)")
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
    from policies.agents.module_agent import ModuleAgent
    from policies.league.references import agent_maker, module_layout
    from policies.league.series import play_series
    names = FiveActionDistribution.HEADS

    heads, primary = [], []

    class Recording(ModuleAgent):
        def act(self, observations):
            actions = super().act(observations)
            parts = self.dist.head_entropies()
            heads.append(torch.stack([parts[k] for k in names], -1).numpy())
            primary.append(torch.softmax(self.dist.primary, -1).numpy())
            return actions

    env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": time_limit_s, "seed": seed,
                   **module_layout(module)})
    make_other = agent_maker(opponent, True, env, "--opponent")
    records = play_series(env, lambda k: Recording(module, explore=True), lambda k: make_other(seed + k), games, seed)
    margins = [r["margin"] for r in records]
    h = np.concatenate(heads).mean(0)
    p = np.concatenate(primary).mean(0)
    entropy = {name: float(v) for name, v in zip(names, h)}
    entropy["action"] = float(h.sum())
    return {"entropy": entropy, "primary": {n: float(v) for n, v in zip(PRIMARY_NAMES, p)},
            "reward_margin": float(np.mean(margins)), "steps": int(sum(len(x) for x in heads))}


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    from policies.league.references import agent_path, checkpoint_path
    if args.mode not in MODES:
        raise ValueError(f"--mode: must be one of {list(MODES)}, got {args.mode!r}")
    agent_path(args.opponent, "--opponent")
    for path in args.checkpoints:
        checkpoint_path(path, "CHECKPOINT")
    if args.games < 1 or args.time_limit <= 0:
        raise ValueError("--games must be >= 1 and --time-limit > 0")
    from policies.league.references import load_module
    from policies.league.series import one_torch_thread
    one_torch_thread()
    results = {}
    for path in args.checkpoints:
        module = load_module(path, "CHECKPOINT")
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
