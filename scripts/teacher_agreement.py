"""How closely a trained agent follows a teacher on its own states: where a kickstarted student still
differs from the bot it imitates.

    python scripts/teacher_agreement.py CHECKPOINT [--mode 1v1|5v5] [--teacher scripted_3] [--games 4]
        [--time-limit SECONDS] [--seed S] [--workers N]

CHECKPOINT is a run's checkpoint, an RLModule checkpoint (``python -m app.pretrain``) or a shipped model
(``models/X``). The agent plays ``--games`` games against the teacher, sides alternating, sampling its actions as in
training, in the mode's training env (``app.pretrain.imitation_env_config``: the games the kickstart's DAgger rounds
play); the teacher labels every step of the agent's heroes in shadow from the game's start, as the online kickstart
teacher does (``init.teacher``). Then the agent's most likely action is compared with the teacher's label on those
states, the LSTM state carried (``policies.pretrain.cloning.agreement``): the primary action, all the parameters the
teacher's primary reads together, and recall per primary action (the rare ones, abilities and items, decide fights);
for the primary actions that read offsets, the agent's offsets under the teacher's primary (exact, within one grid
step) and the angle between the two directions (a move the other way is a decision, not the grid's rounding).
Prints the games' results, the table, and a JSON line last.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys


from moba.game.teams import MODES  # noqa: E402
from training.cli import user_errors  # noqa: E402

DEFAULT_TEACHER = "scripted_3"
SEED = 5_000_000  # seeds of these games: apart from training's, the evaluations' (1,000,000) and the cards' (2,000,000)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="a run's checkpoint, an RLModule checkpoint or models/X (model:PATH or PATH)")
    p.add_argument("--mode", default="1v1", help=f"one of {list(MODES)} (default 1v1)")
    p.add_argument("--teacher", default=DEFAULT_TEACHER, help=f"an agent name (default {DEFAULT_TEACHER})")
    p.add_argument("--games", type=int, default=4, help="games against the teacher (default 4)")
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="game time limit in seconds (default: the mode config's evaluation time limit)")
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the first game (default {SEED})")
    p.add_argument("--workers", type=int, default=0, help="processes playing the games (default 0: this one)")
    return p.parse_args(argv)


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    from policies.agents.by_name import AGENTS
    from policies.league.references import checkpoint_path
    if args.mode not in MODES:
        raise ValueError(f"--mode: must be one of {list(MODES)}, got {args.mode!r}")
    if args.teacher not in AGENTS:  # the teacher labels states: a scripted agent, by name
        raise ValueError(f"--teacher: unknown agent {args.teacher!r}; allowed: {sorted(AGENTS)}")
    if args.games < 1 or args.time_limit < 0 or args.workers < 0:
        raise ValueError("--games must be >= 1, --time-limit >= 0 and --workers >= 0")
    checkpoint_path(args.checkpoint, "CHECKPOINT")
    import torch

    from app import pretrain
    from training import run_config
    from training.algorithm import make_training_env
    from policies.pretrain import cloning as bc
    from policies.agents.by_name import make_agent
    from policies.pretrain.games import STUDENT, TEACHER, GameWorkers, GamePlan, return_scale
    from policies.pretrain.pipeline import sides, student_results
    from policies.league.references import load_module
    torch.set_num_threads(1)
    module = load_module(args.checkpoint, "CHECKPOINT")
    cfg = run_config.load(os.path.join(pretrain.REPO, pretrain.MODE_CONFIGS[args.mode]))
    env_config = pretrain.imitation_env_config(cfg, args.seed)
    env_config["time_limit_s"] = args.time_limit or cfg.evaluation.time_limit_s
    plans = [GamePlan(args.seed + k, *sides(STUDENT, TEACHER, k), source="agreement")
             for k in range(args.games)]
    with GameWorkers(args.workers) as workers:
        summaries, trajectories = workers.play(functools.partial(make_training_env, env_config), plans,
                                               functools.partial(make_agent, args.teacher), module, True)
    gamma = pretrain.run_gamma(cfg)
    agreement = bc.agreement(module, bc.prepare(trajectories, gamma, return_scale(trajectories, gamma)))
    games = student_results(plans, summaries)[TEACHER]
    print(f"vs {args.teacher}: {games['games']} games, win {games['win_rate']:.2f}, points "
          f"{games['points_win_rate']:.2f}, margin {games['reward_margin']:+.1f}")
    pretrain.print_agreement(agreement, f"the agent's own states, {args.teacher} labelling")
    print(json.dumps({"checkpoint": args.checkpoint, "mode": args.mode, "teacher": args.teacher, "games": games,
                      "agreement": agreement}, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
