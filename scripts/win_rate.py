"""Win rate of one agent against another over many games, both sides, in each mode.

    python scripts/win_rate.py --agent scripted --opponent random --games 40 --modes 1v1 5v5

The agent plays Radiant in even games and Dire in odd ones; training-mode randomization (random lineups, perturbed
builds and hero state) is on unless --eval is given. Games run in --workers processes. Prints a line per finished
game batch, a table, and a JSON line last. The scripted bot's bar (issue 2): at least 95% wins against the random
agent over at least 40 games in both modes.
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

from app.game.teams import MODE_1V1, MODE_5V5, MODES, NO_WINNER, TEAM_NAMES  # noqa: E402

TARGET_WIN_RATE = 0.95


def play_one(mode: str, agent: str, opponent: str, game: int, seed: int, evaluation: bool) -> dict:
    from app.env.moba_env import MobaEnv
    from app.game.teams import TEAM_NAMES, side_of_game
    from policies.agents import make_agent, play_game
    env = MobaEnv({"mode": mode, "evaluation": evaluation, "seed": seed})
    a, b = make_agent(agent, seed + 2 * game), make_agent(opponent, seed + 2 * game + 1)
    side = side_of_game(game)
    radiant, dire = (a, b) if side == TEAM_NAMES[0] else (b, a)
    t = time.time()
    s = play_game(env, radiant, dire, seed=seed + game)
    return {"mode": mode, "game": game, "side": side, "winner": s["winner"], "won": s["winner"] == side,
            "game_time_s": s["game_time_s"], "wall_s": round(time.time() - t, 2),
            "lineup": [h["hero"] for h in s["heroes"]]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="scripted")
    p.add_argument("--opponent", default="random")
    p.add_argument("--games", type=int, default=40, help="games per mode (half on each side)")
    p.add_argument("--modes", nargs="+", default=[MODE_1V1, MODE_5V5], choices=list(MODES))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval", action="store_true", help="evaluation mode: no randomization, fixed lineup")
    args = p.parse_args(argv)

    results = {m: [] for m in args.modes}
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futs = [pool.submit(play_one, m, args.agent, args.opponent, g, args.seed, args.eval)
                for m in args.modes for g in range(args.games)]
        for f in as_completed(futs):
            r = f.result()
            results[r["mode"]].append(r)
            done = sum(len(v) for v in results.values())
            print(f"[{time.time() - t0:6.0f}s] {r['mode']} game {r['game']:3d} as {r['side']:7s}: "
                  f"winner {r['winner']:7s} at {r['game_time_s'] / 60:5.1f} min  ({done}/{len(futs)})",
                  file=sys.stderr, flush=True)
    summary = {}
    print(f"\n{args.agent} vs {args.opponent}, {args.games} games per mode"
          f"{' (evaluation mode)' if args.eval else ' (training randomization)'}")
    print(f"{'mode':5s} {'games':>5s} {'wins':>5s} {'losses':>6s} {'draws':>5s} {'win rate':>8s} "
          f"{'mean game min':>13s}")
    for m, rs in results.items():
        wins = sum(r["won"] for r in rs)
        draws = sum(r["winner"] == NO_WINNER for r in rs)
        rate = wins / len(rs)
        mean_min = sum(r["game_time_s"] for r in rs) / len(rs) / 60
        summary[m] = {"games": len(rs), "wins": wins, "draws": draws, "losses": len(rs) - wins - draws,
                      "win_rate": round(rate, 4), "mean_game_minutes": round(mean_min, 2),
                      **{f"wins_as_{side}": sum(r["won"] for r in rs if r["side"] == side) for side in TEAM_NAMES}}
        print(f"{m:5s} {len(rs):5d} {wins:5d} {len(rs) - wins - draws:6d} {draws:5d} {rate:8.1%} {mean_min:13.1f}")
    out = {"agent": args.agent, "opponent": args.opponent, "evaluation": args.eval, "results": summary,
           "target_win_rate": TARGET_WIN_RATE,
           "meets_target": all(v["win_rate"] >= TARGET_WIN_RATE for v in summary.values()),
           "wall_s": round(time.time() - t0, 1)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
