"""Rate agents by TrueSkill (Five app. J) and Elo (HoK app. H.4) against a pool of reference agents.

    python -m app.rate --rate-references --references refs.json [--mode 1v1] [--games 20]
    python -m app.rate --checkpoint PATH [--references refs.json] [--games 40] [--elo] [--csv out.csv]

``--rate-references`` plays every pair of references (--games per pair, both sides) and writes their ratings into
the references file, anchored so that the random agent has mu = 0; a missing file starts from the whole reference
ladder (random, scripted_1, scripted_2, scripted_3: ``policies/agents/ladder.py``). ``--checkpoint`` rates a checkpoint
(``model:PATH`` or PATH: an algorithm checkpoint, an RLModule directory, a shipped ``models/X``): it plays references
within 10 points of its current mu, updates its TrueSkill after each game with the references held constant, prints
a table per reference (games, outright wins, draws, losses, the win rate of outright wins, the mean score TrueSkill
saw, the reference's mu and sigma), and writes the games and the table as CSV (``--csv``, default
``results/ratings/<checkpoint>/trueskill_games.csv``). A ``--time-limit`` other than the one the references were
rated with is warned about: a rating from games of another length is not comparable with theirs.
``--elo`` adds Elo ratings (K = 200) from the same games. ``--time-limit-outcome points`` decides games stopped by
the time limit by the teams' raw returns instead of counting them as draws; the references file records the rule it
was rated with, and a version is rated only under the same rule. The file format and the rating itself are
``policies/league/references.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

from moba.game.teams import DEFAULT_TIME_LIMIT_S, MODE_1V1, MODES
from policies.league import ratings as R
from policies.league.references import (VersionRater, checkpoint_path, load_module, load_references,
                                        rate_reference_pool, summary_table)
from training.cli import user_errors

RESULTS_DIR = os.path.join("results", "ratings")  # the games' CSVs without --csv
DEFAULT_GAMES = 20  # per version (per pair with --rate-references); the paper plays 750 (ratings.PAPER_GAMES...)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="the checkpoint to rate: model:PATH or PATH (a run's checkpoint, an RLModule "
                                        "checkpoint, a shipped models/X)")
    p.add_argument("--rate-references", action="store_true", help="rate the reference pool by playing it")
    p.add_argument("--references", help="reference pool JSON (default: the reference ladder, unrated)")
    p.add_argument("--mode", default=MODE_1V1, choices=list(MODES))
    p.add_argument("--games", type=int, default=DEFAULT_GAMES,
                   help="games per version (per pair with --rate-references)")
    p.add_argument("--time-limit", type=float, default=0.0, help="game time limit in s (0 = the mode's default)")
    p.add_argument("--time-limit-outcome", default=None, choices=list(R.TIME_LIMIT_OUTCOMES),
                   help="how a game stopped by the time limit counts: won on buildings, then hero kills "
                        "(objective), a draw, or won by the team with the higher raw return (points); default: the "
                        f"references' own rule with --checkpoint, {R.DEFAULT_TIME_LIMIT_OUTCOME} with "
                        "--rate-references")
    p.add_argument("--start-mu", type=float, default=0.0, help="the version's initial mu (the previous version's)")
    p.add_argument("--elo", action="store_true", help="also print Elo ratings (K = 200)")
    p.add_argument("--greedy", action="store_true",
                   help="play the most likely actions (default: sample them, as in training)")
    p.add_argument("--csv", help=f"where to write the games (default: {RESULTS_DIR}/<checkpoint>/trueskill_games.csv; "
                                 f"the table goes next to it, *_summary.csv)")
    p.add_argument("--consumable-filters", action="store_true",
                   help="the env's consumables' need filters on, for both sides, as the checkpoint trained with them "
                        "(env config consumable_filters)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if bool(args.checkpoint) == args.rate_references:
        p.error("give exactly one of --checkpoint and --rate-references")
    if args.games < 1:
        p.error("--games must be >= 1")
    if args.rate_references and not args.references:
        p.error("--rate-references needs --references FILE to write the ratings to")
    return args


def rate_references(args, refs: dict) -> int:
    refs = rate_reference_pool(refs, args.games, args.time_limit, args.seed,
                               time_limit_outcome=args.time_limit_outcome)
    with open(args.references, "w") as f:
        json.dump(refs, f, indent=1)
    for n, s in sorted(refs["agents"].items(), key=lambda kv: kv[1]["mu"]):
        print(f"{n:12s} mu {s['mu']:7.2f} sigma {s['sigma']:5.2f}")
    print(json.dumps({"references": args.references,
                      "ratings": {n: {"mu": s["mu"], "sigma": s["sigma"]} for n, s in refs["agents"].items()}}))
    return 0


def log_game(games: int):
    def log(row: dict):
        outcome = {R.WIN: "win", R.DRAW: "draw", R.LOSS: "loss"}[row["score"]]
        print(f"game {row['game'] + 1:3d}/{games} vs {row['reference']:10s} as {row['side']:7s}: {outcome:4s}  "
              f"mu {row['mu']:6.2f} sigma {row['sigma']:5.2f}")
    return log


def games_csv_path(args) -> str:
    """Where the games go: --csv, else results/ratings/<the checkpoint's path as one name>/trueskill_games.csv (never
    inside the checkpoint: a shipped model's folder is tracked by git)."""
    if args.csv:
        return args.csv
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.normpath(checkpoint_path(args.checkpoint, "--checkpoint")))
    return os.path.join(RESULTS_DIR, label.strip("_.") or "checkpoint", "trueskill_games.csv")


def time_limit_warning(args, refs: dict) -> str | None:
    """A warning when the games' time limit differs from the one the references were rated with (a file records it
    from --rate-references on): a rating from games of another length is not comparable with theirs."""
    rated = refs.get("time_limit_s")
    played = float(args.time_limit or DEFAULT_TIME_LIMIT_S[args.mode])
    if rated is None or abs(float(rated) - played) < 1e-9:
        return None
    return (f"warning: --time-limit: these games last {played:g} s, the references were rated on {float(rated):g} s "
            f"games: the rating is not comparable with theirs (use --time-limit {float(rated):g}, or rate the "
            f"references again with --rate-references --time-limit {played:g})")


def rate_checkpoint(args, refs: dict) -> int:
    import pandas as pd
    warning = time_limit_warning(args, refs)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    rater = VersionRater(refs, start_mu=args.start_mu, explore=not args.greedy,
                         time_limit_outcome=args.time_limit_outcome,
                         env={"consumable_filters": True} if args.consumable_filters else None)
    result = rater.rate(0, load_module(args.checkpoint, "--checkpoint"), args.games, args.time_limit, args.seed,
                        log=log_game(args.games))
    rows = result["rows"]
    table = summary_table(rows, refs)
    print(table.to_string(float_format=lambda x: f"{x:.2f}"))
    totals = {k: int(table[k].sum()) for k in ("wins", "draws", "losses")}
    print(f"\nTrueSkill of {args.checkpoint}: mu {result['mu']:.2f} sigma {result['sigma']:.2f} over {len(rows)} "
          f"games: {totals['wins']} wins, {totals['draws']} draws, {totals['losses']} losses (win_rate: outright wins "
          f"per game; score: the mean score TrueSkill saw, a draw 0.5, time limit rule {args.time_limit_outcome!r})")
    out = {"checkpoint": args.checkpoint, "mu": result["mu"], "sigma": result["sigma"], "games": len(rows),
           **totals, "win_rate": {n: float(v) for n, v in table["win_rate"].items()}}
    if args.elo:
        # the references' games first: sequential Elo depends on the order, and the references were played first
        elo_games = [tuple(g) for g in refs.get("games", [])] + [("agent", r["reference"], r["score"]) for r in rows]
        elo = R.elo_ratings(elo_games, anchor=R.ANCHOR_AGENT)
        print("\nElo (K = 200, random anchored at 1000): " + ", ".join(f"{n} {v:.0f}" for n, v in sorted(
            elo.items(), key=lambda kv: kv[1])))
        out["elo"] = elo
    csv_path = games_csv_path(args)
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    pd.DataFrame(rows).to_csv(csv_path, index=False)
    table.to_csv(os.path.splitext(csv_path)[0] + "_summary.csv")
    out["csv"] = csv_path
    print(json.dumps(out))
    return 0


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    if args.checkpoint:
        checkpoint_path(args.checkpoint, "--checkpoint")  # before anything loads or plays
    refs = load_references(args.references, args.mode)
    if args.time_limit_outcome is None:
        args.time_limit_outcome = (R.DEFAULT_TIME_LIMIT_OUTCOME if args.rate_references else
                                   refs.get("time_limit_outcome", R.UNRECORDED_TIME_LIMIT_OUTCOME))
    return rate_references(args, refs) if args.rate_references else rate_checkpoint(args, refs)


if __name__ == "__main__":
    sys.exit(main())
