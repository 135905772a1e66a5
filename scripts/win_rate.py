"""Win rate of one agent against another over many games, both sides, in each mode; or of every step of the
reference ladder (``--ladder``).

    python scripts/win_rate.py --agent scripted --opponent random --games 40 --modes 1v1 5v5
    python scripts/win_rate.py --ladder --games 40 --workers 1

The agent plays Radiant in even games and Dire in odd ones; training-mode randomization (random lineups, perturbed
builds and hero state) is on unless --eval is given. Evaluation games differ by seed (the env's evaluation jitter)
and replay for the same seed. ``--ladder`` plays each level of ``policies/agents/ladder.py`` against the level below it
(scripted_1 vs random, scripted_2 vs scripted_1, scripted_3 vs scripted_2) in evaluation games, and checks that each
wins at least 75% of them in every mode. A game stopped by the time limit is not won under the default rule
(``--time-limit-outcome draw``: only a destroyed ancient decides); ``points`` gives it to the team with the higher raw
return (``policies/ratings.game_score``). Games run in --workers processes. Prints a line per finished game, a table,
and a JSON line last. The scripted bot's bar: at least 95% wins against the random agent over at least 40
games in both modes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from moba.game.teams import MODE_1V1, MODE_5V5, MODES, NO_WINNER, TEAM_NAMES  # noqa: E402
from policies.league import ratings as R  # noqa: E402
from policies.agents.ladder import LADDER_TARGET_WIN_RATE, ladder_pairs  # noqa: E402

TARGET_WIN_RATE = 0.95  # the scripted bot against the random agent


def play_one(mode: str, agent: str, opponent: str, game: int, seed: int, evaluation: bool,
             time_limit_s: float) -> dict:
    from moba.env.moba_env import MobaEnv
    from moba.game.teams import TEAM_NAMES, side_of_game
    from policies.agents.by_name import make_agent, play_game
    env = MobaEnv({"mode": mode, "evaluation": evaluation, "seed": seed, "time_limit_s": time_limit_s})
    a, b = make_agent(agent, seed + 2 * game), make_agent(opponent, seed + 2 * game + 1)
    side = side_of_game(game)
    radiant, dire = (a, b) if side == TEAM_NAMES[0] else (b, a)
    t = time.time()
    s = play_game(env, radiant, dire, seed=seed + game)
    return {"mode": mode, "agent": agent, "opponent": opponent, "game": game, "side": side, "winner": s["winner"],
            "margin": R.team_margin(side, s["raw_return"]), "game_time_s": s["game_time_s"],
            "wall_s": round(time.time() - t, 2), "lineup": [h["hero"] for h in s["heroes"]]}


def summarize(rs: list, rule: str) -> dict:
    """Games, wins (under `rule`: a game stopped by the time limit counts as ratings.game_score says), outright
    wins, draws (time limit) and losses, win rates and wins per side of one matchup in one mode."""
    won = [R.game_score(r["side"], r["winner"], r["margin"], rule) == R.WIN for r in rs]
    draws = sum(r["winner"] == NO_WINNER for r in rs)
    outright = sum(r["winner"] == r["side"] for r in rs)
    return {"games": len(rs), "wins": sum(won), "outright_wins": outright, "draws": draws,
            "losses": sum(r["winner"] not in (r["side"], NO_WINNER) for r in rs),
            "win_rate": round(sum(won) / len(rs), 4),
            "mean_game_minutes": round(sum(r["game_time_s"] for r in rs) / len(rs) / 60, 2),
            **{f"wins_as_{side}": sum(w for w, r in zip(won, rs) if r["side"] == side) for side in TEAM_NAMES}}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="scripted")
    p.add_argument("--opponent", default="random")
    p.add_argument("--ladder", action="store_true",
                   help="every level of the reference ladder against the level below it (evaluation games)")
    p.add_argument("--games", type=int, default=40, help="games per matchup and mode (half on each side)")
    p.add_argument("--modes", nargs="+", default=[MODE_1V1, MODE_5V5], choices=list(MODES))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval", action="store_true", help="evaluation mode: no randomization, fixed lineup")
    p.add_argument("--time-limit", type=float, default=0.0, help="game time limit in s (0 = the mode's default)")
    p.add_argument("--time-limit-outcome", default=R.DEFAULT_TIME_LIMIT_OUTCOME, choices=list(R.TIME_LIMIT_OUTCOMES),
                   help="how a game stopped by the time limit counts: not won (draw), or won by the team with the "
                        "higher raw return (points)")
    args = p.parse_args(argv)
    if args.games < 1 or args.workers < 1:
        p.error("--games and --workers must be >= 1")
    if args.time_limit < 0:
        p.error("--time-limit must be >= 0 (0 = the mode's default)")
    args.eval = args.eval or args.ladder
    return args


def main(argv=None):
    args = parse_args(argv)
    matchups = ladder_pairs() if args.ladder else [(args.agent, args.opponent)]
    target = LADDER_TARGET_WIN_RATE if args.ladder else TARGET_WIN_RATE
    results = {(a, b, m): [] for a, b in matchups for m in args.modes}
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futs = [pool.submit(play_one, m, a, b, g, args.seed, args.eval, args.time_limit)
                for a, b, m in results for g in range(args.games)]
        for f in as_completed(futs):
            r = f.result()
            results[(r["agent"], r["opponent"], r["mode"])].append(r)
            done = sum(len(v) for v in results.values())
            print(f"[{time.time() - t0:6.0f}s] {r['mode']} {r['agent']} vs {r['opponent']} game {r['game']:3d} as "
                  f"{r['side']:7s}: winner {r['winner']:7s} at {r['game_time_s'] / 60:5.1f} min  ({done}/{len(futs)})",
                  file=sys.stderr, flush=True)
    rows = [{"agent": a, "opponent": b, "mode": m, **summarize(sorted(rs, key=lambda r: r["game"]),
                                                                   args.time_limit_outcome)}
            for (a, b, m), rs in results.items()]
    limits = "the mode's time limit" if not args.time_limit else f"{args.time_limit:.0f} s games"
    print(f"\n{args.games} games per matchup and mode, {limits}, "
          f"{'evaluation mode' if args.eval else 'training randomization'}, a game at the time limit counts as "
          f"{'not won' if args.time_limit_outcome == R.LIMIT_DRAW else 'won by the higher raw return'}")
    print(f"{'agent':12s} {'opponent':12s} {'mode':5s} {'games':>5s} {'wins':>5s} {'losses':>6s} {'draws':>5s} "
          f"{'win rate':>8s} {'mean game min':>13s}")
    for r in rows:
        print(f"{r['agent']:12s} {r['opponent']:12s} {r['mode']:5s} {r['games']:5d} {r['wins']:5d} {r['losses']:6d} "
              f"{r['draws']:5d} {r['win_rate']:8.1%} {r['mean_game_minutes']:13.1f}")
    out = {"evaluation": args.eval, "time_limit_s": args.time_limit, "time_limit_outcome": args.time_limit_outcome,
           "target_win_rate": target, "meets_target": all(r["win_rate"] >= target for r in rows),
           "wall_s": round(time.time() - t0, 1)}
    if args.ladder:
        out["ladder"] = rows
    else:
        out.update({"agent": args.agent, "opponent": args.opponent,
                    "results": {r["mode"]: {k: v for k, v in r.items() if k not in ("agent", "opponent", "mode")}
                                for r in rows}})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
