"""Win rate of one agent against another over many games, both sides, in each mode; or of every step of the
reference ladder (``--ladder``).

    python scripts/win_rate.py --agent scripted --opponent random --games 40 --modes 1v1 5v5
    python scripts/win_rate.py --ladder --games 40 --workers 1

An agent is an agent name (``policies.agents.by_name.AGENTS``), ``model:PATH`` or the path of a checkpoint (a run's
checkpoint, an RLModule checkpoint, a shipped ``models/X``: play it in its own mode, ``--modes 1v1``), sampling its
actions as in training. The agent plays Radiant in even games and Dire in odd ones; training-mode randomization
(random lineups, perturbed builds and hero state) is on unless --eval is given. Evaluation games differ by seed (the
env's evaluation jitter) and replay for the same seed. ``--ladder`` plays each level of
``policies/agents/ladder.py`` against the level below it (scripted_1 vs random, scripted_2 vs scripted_1, scripted_3
vs scripted_2) in evaluation games, and checks that each wins at least 75% of them in every mode. A game stopped by
the time limit is not won under the default rule (``--time-limit-outcome draw``: only a destroyed ancient decides);
``points`` gives it to the team with the higher raw return (``policies/ratings.game_score``). Games run in --workers
processes. Prints a line per finished game, a table, and a JSON line last. The scripted bot's bar: at least 95% wins
against the random agent over at least 40 games in both modes.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from moba.game.teams import MODE_1V1, MODE_5V5, MODES, TEAM_NAMES  # noqa: E402
from policies.league import ratings as R  # noqa: E402
from policies.agents.ladder import LADDER_TARGET_WIN_RATE, ladder_pairs  # noqa: E402
from policies.league.series import summarize_series  # noqa: E402
from training.cli import user_errors  # noqa: E402

TARGET_WIN_RATE = 0.95  # the scripted bot against the random agent


def play_one(mode: str, agent: str, opponent: str, game: int, seed: int, evaluation: bool,
             time_limit_s: float) -> dict:
    """Game `game` of the series of `agent` against `opponent` (agent specs, policies.league.references.agent_path);
    the agents are made with seeds seed + 2 game and seed + 2 game + 1."""
    from moba.env.moba_env import MobaEnv
    from policies.league.references import agents_layout
    from policies.league.series import one_torch_thread, play_series
    one_torch_thread()
    layout = agents_layout([(agent, "--agent"), (opponent, "--opponent")])  # a checkpoint's own observation layout
    env = MobaEnv({"mode": mode, "evaluation": evaluation, "seed": seed, "time_limit_s": time_limit_s, **layout})
    make_a, make_b = makers(agent, env, "--agent"), makers(opponent, env, "--opponent")
    t = time.time()
    r = next(play_series(env, lambda g: make_a(seed + 2 * g), lambda g: make_b(seed + 2 * g + 1), [game], seed))
    return {"mode": mode, "agent": agent, "opponent": opponent, "game": game, "side": r["side"],
            "winner": r["winner"], "margin": r["margin"], "game_time_s": r["game_time_s"],
            "buildings": r["buildings"], "buildings_lost": r["buildings_lost"],
            "wall_s": round(time.time() - t, 2), "lineup": [h["hero"] for h in r["summary"]["heroes"]]}


_MAKERS: dict = {}  # per worker process: an agent spec's maker (a checkpoint is loaded once)


def makers(spec: str, env, flag: str):
    from policies.league.references import agent_maker
    key = (spec, env.cfg.mode)
    if key not in _MAKERS:
        _MAKERS[key] = agent_maker(spec, explore=True, env=env, flag=flag)
    return _MAKERS[key]


def summarize(rs: list, rule: str) -> dict:
    """Games, wins (under `rule`: a game stopped by the time limit counts as ratings.game_score says), outright
    wins, draws (time limit) and losses, win rates and wins per side of one matchup in one mode."""
    s = summarize_series(rs, rule)
    return {"games": s["games"], "wins": s["wins"], "outright_wins": s["outright_wins"], "draws": s["draws"],
            "losses": s["losses"], "win_rate": round(s["win_rate"], 4),
            "mean_game_minutes": round(sum(r["game_time_s"] for r in rs) / len(rs) / 60, 2),
            **{f"wins_as_{side}": s[f"wins_as_{side}"] for side in TEAM_NAMES}}


LIMIT_RULE_WORDS = {R.LIMIT_DRAW: "not won", R.LIMIT_POINTS: "won by the higher raw return",
                    R.LIMIT_OBJECTIVE: "won on buildings, then hero kills"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", default="scripted",
                   help="an agent name, model:PATH or a checkpoint path (default scripted)")
    p.add_argument("--opponent", default="random",
                   help="an agent name, model:PATH or a checkpoint path (default random)")
    p.add_argument("--ladder", action="store_true",
                   help="every level of the reference ladder against the level below it (evaluation games)")
    p.add_argument("--games", type=int, default=40, help="games per matchup and mode (half on each side)")
    p.add_argument("--modes", nargs="+", default=[MODE_1V1, MODE_5V5], choices=list(MODES))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval", action="store_true", help="evaluation mode: no randomization, fixed lineup")
    p.add_argument("--time-limit", type=float, default=0.0, help="game time limit in s (0 = the mode's default)")
    p.add_argument("--time-limit-outcome", default=R.LIMIT_DRAW, choices=list(R.TIME_LIMIT_OUTCOMES),
                   help="how a game stopped by the time limit counts: not won (draw), or won by the team with the "
                        "higher raw return (points)")
    args = p.parse_args(argv)
    if args.games < 1 or args.workers < 1:
        p.error("--games and --workers must be >= 1")
    if args.time_limit < 0:
        p.error("--time-limit must be >= 0 (0 = the mode's default)")
    args.eval = args.eval or args.ladder
    return args


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    from policies.league.references import agent_path
    agent_path(args.agent, "--agent")  # before any worker starts
    agent_path(args.opponent, "--opponent")
    matchups = ladder_pairs() if args.ladder else [(args.agent, args.opponent)]
    target = LADDER_TARGET_WIN_RATE if args.ladder else TARGET_WIN_RATE
    results = {(a, b, m): [] for a, b in matchups for m in args.modes}
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futs = [pool.submit(play_one, m, a, b, g, args.seed, args.eval, args.time_limit)
                for a, b, m in results for g in range(args.games)]
        for f in as_completed(futs):
            try:
                r = f.result()
            except ValueError:  # an agent that cannot play this mode: the same in every game, stop them all
                pool.shutdown(cancel_futures=True)
                raise
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
          f"{LIMIT_RULE_WORDS[args.time_limit_outcome]}")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
