"""Which of a trained agent's decisions lose its games against its teacher: the agent plays the teacher, and the
teacher, in shadow on the agent's heroes, takes over one kind of decision per rule.

    python scripts/teacher_override.py CHECKPOINT [--mode 1v1|5v5] [--teacher scripted_3] [--games 30]
        [--time-limit SECONDS] [--seed S] [--workers N] [--consumable-filters true|false] [--greedy]
        [--rules none all rare_teacher ...] [--primary-bias NAME=LOGIT ...]

CHECKPOINT is a run's checkpoint, an RLModule checkpoint or a shipped model (``models/X``). Every rule plays the same
``--games`` games (seeds from ``--seed``, sides alternating) in the mode's training env
(``app.pretrain.imitation_env_config``), the agent sampling its actions (``--greedy``: its most likely ones). The
rules (``policies/pretrain/overrides.py``): "none" the agent alone, "all" the teacher alone (the mirror at these
seeds and sides: the parity the agent is measured against), "rare_teacher" the teacher's casts and items at its own
moments, "rare_student" the teacher's action where only the agent chose a cast or item, "rare" both, "attack" the
teacher's action wherever either attacks, "move_offsets" the teacher's direction wherever both move, "primary" the
teacher's action wherever the primary actions differ. A capped game is decided by the objective (buildings, then
hero kills). ``--primary-bias`` adds a constant to the agent's logits of the named primary actions before each draw
(``ModuleAgent``'s decode-time prior; a name of ``moba.env.actions.PRIMARY_NAMES``, or "rare" for every cast, item,
buyback and shrine action), e.g. ``--primary-bias rare=-0.7`` halves the odds of the rare actions against the others.
Prints a row per rule (games won and lost, kills, buildings, the mean raw-reward margin, the share of
the agent's hero-steps overridden) and a JSON line last.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys

from training.cli import user_errors  # noqa: E402

DEFAULT_RULES = ("none", "all", "rare_teacher", "rare_student", "attack", "move_offsets")
SEED = 1_000_000  # the evaluations' seeds: the games `app.evaluate` plays against the same opponent


def parse_args(argv=None):
    from app import pretrain
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pretrain.add_probe_args(p, "5v5", 30, SEED, "games per rule")
    p.add_argument("--greedy", action="store_true", help="the agent's most likely actions (default: sampled)")
    p.add_argument("--rules", nargs="+", default=list(DEFAULT_RULES),
                   help=f"override rules, in order (default {' '.join(DEFAULT_RULES)})")
    p.add_argument("--primary-bias", nargs="+", default=[], metavar="NAME=LOGIT",
                   help="added to the agent's logits of these primary actions (a name, or rare: the casts, items, "
                        "buyback and shrine); default none")
    return p.parse_args(argv)


def primary_bias(items: list[str]):
    """--primary-bias's NAME=LOGIT items as (N_PRIMARY,) logits, or None when there are none; a ValueError names the
    item and the allowed names."""
    import numpy as np

    from moba.env.actions import N_PRIMARY, PRIMARY_NAMES
    from policies.pretrain.overrides import RARE_PRIMARIES
    if not items:
        return None
    bias = np.zeros(N_PRIMARY, np.float32)
    for item in items:
        name, _, value = item.partition("=")
        try:
            logit = float(value)
        except ValueError:
            raise ValueError(f"--primary-bias: {item!r} must be NAME=LOGIT with a number") from None
        if name == "rare":
            bias[sorted(RARE_PRIMARIES)] += logit
        elif name in PRIMARY_NAMES:
            bias[PRIMARY_NAMES.index(name)] += logit
        else:
            raise ValueError(f"--primary-bias: unknown primary action {name!r}; allowed: rare, "
                             f"{', '.join(PRIMARY_NAMES)}")
    return bias


def rule_row(plans, summaries, heroes: int) -> dict:
    """One rule's games from the agent's side: won / drawn / lost (a capped game by the objective), kills and
    buildings for and against, the mean raw-reward margin, and the share of the agent's hero-steps (`heroes` a
    side) that the rule overrode."""
    import numpy as np

    from moba.game.teams import TEAM_NAMES, enemy_side
    from policies.league.ratings import DRAW, LIMIT_OBJECTIVE, WIN, game_score, objective_margin, team_margin
    from policies.pretrain.games import STUDENT
    row = {"games": len(plans), "won": 0, "drawn": 0, "lost": 0, "kills": [0, 0], "buildings": [0, 0]}
    margins = []
    for p, s in zip(plans, summaries):
        side = TEAM_NAMES[0] if p.radiant == STUDENT else TEAM_NAMES[1]
        margin = team_margin(side, s["raw_return"])
        score = game_score(side, s["winner"], margin, LIMIT_OBJECTIVE, objective_margin(side, s["objective"]))
        row["won" if score == WIN else "drawn" if score == DRAW else "lost"] += 1
        for k in ("kills", "buildings"):
            row[k] = [row[k][0] + s["objective"][side][k], row[k][1] + s["objective"][enemy_side(side)][k]]
        margins.append(margin)
    row["margin"] = float(np.mean(margins))
    row["overridden_share"] = sum(s["overridden"] for s in summaries) / max(
        sum(s["steps"] for s in summaries) * heroes, 1)
    return row


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    from policies.pretrain.overrides import check_rule
    for r in args.rules:
        check_rule(r)
    bias = primary_bias(args.primary_bias)
    from app import pretrain
    from moba.game.teams import n_heroes
    from training.algorithm import make_training_env
    from policies.agents.by_name import make_agent
    from policies.pretrain.games import STUDENT, TEACHER, GamePlan, GameWorkers
    from policies.pretrain.pipeline import sides
    module, _, env_config = pretrain.teacher_probe(args)
    rows = {}
    with GameWorkers(args.workers) as workers:
        for rule in args.rules:
            plans = [GamePlan(args.seed + k, *sides(STUDENT, TEACHER, k), source="override", override=rule)
                     for k in range(args.games)]
            summaries, _ = workers.play(functools.partial(make_training_env, env_config), plans,
                                        functools.partial(make_agent, args.teacher), module, not args.greedy,
                                        primary_bias=bias)
            rows[rule] = r = rule_row(plans, summaries, n_heroes(args.mode) // 2)
            print(f"{rule:>13}: won {r['won']:3d}, drawn {r['drawn']:3d}, lost {r['lost']:3d} of {r['games']}; "
                  f"kills {r['kills'][0]}-{r['kills'][1]}, buildings {r['buildings'][0]}-{r['buildings'][1]}; "
                  f"margin {r['margin']:+.1f}; overridden {r['overridden_share']:.4f} of the hero-steps", flush=True)
    print(json.dumps({"checkpoint": args.checkpoint, "mode": args.mode, "teacher": args.teacher,
                      "greedy": args.greedy, "primary_bias": args.primary_bias, "games": args.games,
                      "seed": args.seed, "rules": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
