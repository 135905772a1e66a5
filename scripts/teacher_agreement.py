"""How closely a trained agent follows a teacher on its own states: where a kickstarted student still
differs from the bot it imitates.

    python scripts/teacher_agreement.py CHECKPOINT [--mode 1v1|5v5] [--teacher scripted_3] [--games 4]
        [--time-limit SECONDS] [--seed S] [--workers N] [--consumable-filters true|false]

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
import sys


from training.cli import user_errors  # noqa: E402

SEED = 5_000_000  # seeds of these games: apart from training's, the evaluations' (1,000,000) and the cards' (2,000,000)


def parse_args(argv=None):
    from app import pretrain
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pretrain.add_probe_args(p, "1v1", 4, SEED, "games against the teacher")
    return p.parse_args(argv)


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    from app import pretrain
    from training.algorithm import make_training_env
    from policies.pretrain import cloning as bc
    from policies.agents.by_name import make_agent
    from policies.pretrain.games import STUDENT, TEACHER, GameWorkers, GamePlan, return_scale
    from policies.pretrain.pipeline import sides, student_results
    module, cfg, env_config = pretrain.teacher_probe(args)
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
