"""TrueSkill / Elo evaluation of a trained agent against a pool of reference agents (seeds/003 app. J,
seeds/004 app. H.4).

    python -m app.evaluate --rate-references --references refs.json [--mode 1v1] [--games 20]
    python -m app.evaluate --checkpoint PATH [--references refs.json] [--games 40] [--elo] [--csv out.csv]

The references file (JSON) lists the reference agents and, once rated, their TrueSkill::

    {"mode": "1v1", "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.2},
                               "scripted": {"kind": "scripted", "mu": 17.3, "sigma": 1.1},
                               "v40": {"kind": "checkpoint", "path": "results/run/.../checkpoint_000003"}}}

``--rate-references`` plays every pair of references (--games per pair, both sides) and writes their ratings,
anchored so that the random agent has mu = 0. A missing file starts from the random agent and the scripted bot.
``--checkpoint`` rates a checkpoint (an algorithm checkpoint or an RLModule directory): it plays references within
10 points of its current mu, updates its TrueSkill after each game with the references held constant, prints a table
of mu, sigma and win rate per reference, and writes the games and the table as CSV. ``--elo`` adds Elo ratings
(K = 200) computed from the same games. ``--time-limit-outcome points`` decides games stopped by the time limit by
the teams' raw returns (ratings.game_score) instead of counting them as draws; the references file records the rule it
was rated with, and a version is rated only under the same rule.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys

import numpy as np

from app import ratings as R

DEFAULT_GAMES = 20  # CPU default; the paper plays 750 games per version (app. J)
BUILTIN_REFERENCES = {"random": {"kind": "random"}, "scripted": {"kind": "scripted"}}
REFERENCE_KINDS = ("random", "scripted", "checkpoint")


def load_module(path: str):
    """The "main" RLModule of an algorithm checkpoint, or an RLModule checkpoint directory."""
    from ray.rllib.core.rl_module.rl_module import RLModule
    for candidate in (os.path.join(path, "learner_group", "learner", "rl_module", "main"), path):
        if os.path.isfile(os.path.join(candidate, "class_and_ctor_args.pkl")):
            return RLModule.from_checkpoint(os.path.abspath(candidate))
    raise ValueError(f"checkpoint {path!r}: neither an algorithm checkpoint (with learner_group/learner/rl_module/"
                     f"main) nor an RLModule checkpoint directory")


def make_reference_agent(name: str, spec: dict, seed: int):
    from policies.agents import make_agent
    from policies.module_agent import ModuleAgent
    kind = spec.get("kind")
    if kind == "checkpoint":
        return ModuleAgent(load_module(spec["path"]))
    if kind in ("random", "scripted"):
        return make_agent(kind, seed)
    raise ValueError(f"reference {name!r}: kind must be one of {list(REFERENCE_KINDS)}, got {kind!r}")


def load_references(path: str | None, mode: str) -> dict:
    if path is None or not os.path.exists(path):
        return {"mode": mode, "agents": {k: dict(v) for k, v in BUILTIN_REFERENCES.items()}}
    with open(path) as f:
        refs = json.load(f)
    if refs.get("mode") != mode:
        raise ValueError(f"references {path!r} were rated in mode {refs.get('mode')!r}, not {mode!r}")
    for name, spec in refs.get("agents", {}).items():
        if spec.get("kind") not in REFERENCE_KINDS:
            raise ValueError(f"references {path!r}: agent {name!r} kind must be one of {list(REFERENCE_KINDS)}")
    return refs


def play(mode: str, agent_a, agent_b, a_side: str, seed: int, time_limit_s: float, on_step=None,
         time_limit_outcome: str = "draw") -> float:
    """One game; returns a's score (1 win, 0.5 draw, 0 loss; a game stopped by the time limit counts as
    `time_limit_outcome` says, ratings.game_score). `on_step(env)` runs after every step."""
    from app.env.moba_env import MobaEnv
    from policies.agents import play_game
    env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": time_limit_s, "seed": seed})
    radiant, dire = (agent_a, agent_b) if a_side == "radiant" else (agent_b, agent_a)
    s = play_game(env, radiant, dire, seed=seed, on_step=on_step)
    return R.game_score(a_side, s["winner"], R.team_margin(a_side, s["raw_return"]), time_limit_outcome)


def references_outcome_rule(refs: dict, time_limit_outcome: str) -> None:
    """Raises unless the references were rated under the same time-limit rule (a file without one: "draw"): a rating
    measured with capped games as draws is not comparable to one where they are decided on points."""
    rated = refs.get("time_limit_outcome", "draw")
    if rated != time_limit_outcome:
        raise ValueError(f"time_limit_outcome {time_limit_outcome!r}: the references were rated with "
                         f"{rated!r}; rate them again with --rate-references --time-limit-outcome "
                         f"{time_limit_outcome}")


def rate_reference_pool(refs: dict, games: int, time_limit_s: float, seed: int = 0, log=print,
                        time_limit_outcome: str = "draw") -> dict:
    names = sorted(refs["agents"])
    if R.ANCHOR_AGENT not in names:
        raise ValueError(f"the reference pool needs the {R.ANCHOR_AGENT!r} agent (it anchors mu = 0)")
    results = []
    for a, b in itertools.combinations(names, 2):
        for g in range(games):
            side = "radiant" if g % 2 == 0 else "dire"
            agents = [make_reference_agent(n, refs["agents"][n], seed + g) for n in (a, b)]
            s = play(refs["mode"], agents[0], agents[1], side, seed + g, time_limit_s,
                     time_limit_outcome=time_limit_outcome)
            results.append((a, b, s))
        wins = sum(s for x, y, s in results if (x, y) == (a, b))
        log(f"{a} vs {b}: {wins:.1f}/{games} for {a}")
    rated = R.rate_references(results)
    for n, r in rated.items():
        refs["agents"][n].update({"mu": r.mu, "sigma": r.sigma})
    refs["games"] = [list(x) for x in results]
    refs["time_limit_outcome"] = time_limit_outcome
    return refs


def evaluate_checkpoint(path: str, refs: dict, games: int, time_limit_s: float, start_mu: float = 0.0,
                        seed: int = 0, log=print, explore: bool = True, time_limit_outcome: str = "draw"):
    """Returns (final rating, per-game rows)."""
    from policies.module_agent import ModuleAgent
    references_outcome_rule(refs, time_limit_outcome)
    unrated = [n for n, s in refs["agents"].items() if "mu" not in s]
    if unrated:
        raise ValueError(f"references {unrated} have no rating yet: run --rate-references first")
    env = R.trueskill_env()
    pool = {n: env.create_rating(mu=s["mu"], sigma=s["sigma"]) for n, s in refs["agents"].items()}
    module = load_module(path)
    rating = env.create_rating(mu=start_mu)
    rows = []
    counts = {n: 0 for n in pool}
    for g in range(games):
        name = R.pick_reference(rating.mu, pool, counts)
        counts[name] += 1
        side = "radiant" if g % 2 == 0 else "dire"
        opponent = make_reference_agent(name, refs["agents"][name], seed + g)
        score = play(refs["mode"], ModuleAgent(module, explore=explore), opponent, side, seed + g, time_limit_s,
                     time_limit_outcome=time_limit_outcome)
        rating = R.update_against_reference(rating, pool[name], score)
        rows.append({"game": g, "reference": name, "reference_mu": pool[name].mu, "side": side, "score": score,
                     "mu": rating.mu, "sigma": rating.sigma})
        log(f"game {g + 1:3d}/{games} vs {name:10s} as {side:7s}: {['loss', 'draw', 'win'][int(2 * score)]:4s}  "
            f"mu {rating.mu:6.2f} sigma {rating.sigma:5.2f}")
    return rating, rows


def summary_table(rows, refs):
    import pandas as pd
    df = pd.DataFrame(rows)
    t = df.groupby("reference").agg(games=("score", "size"), wins=("score", lambda s: int((s == 1).sum())),
                                    draws=("score", lambda s: int((s == 0.5).sum())), win_rate=("score", "mean"))
    t["reference_mu"] = [refs["agents"][n]["mu"] for n in t.index]
    t["reference_sigma"] = [refs["agents"][n]["sigma"] for n in t.index]
    return t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", help="an algorithm or RLModule checkpoint to rate")
    p.add_argument("--rate-references", action="store_true", help="rate the reference pool by playing it")
    p.add_argument("--references", help="reference pool JSON (default: random + scripted, unrated)")
    p.add_argument("--mode", default="1v1", choices=["1v1", "5v5"])
    p.add_argument("--games", type=int, default=DEFAULT_GAMES, help="games per version (per pair with "
                                                                       "--rate-references)")
    p.add_argument("--time-limit", type=float, default=0.0, help="game time limit in s (0 = the mode's default)")
    p.add_argument("--time-limit-outcome", default="draw", choices=list(R.TIME_LIMIT_OUTCOMES),
                   help="how a game stopped by the time limit counts: a draw, or won by the team with the higher "
                        "raw return (points)")
    p.add_argument("--start-mu", type=float, default=0.0, help="the version's initial mu (the previous version's)")
    p.add_argument("--elo", action="store_true", help="also print Elo ratings (K = 200)")
    p.add_argument("--greedy", action="store_true", help="play the most likely actions (default: sample them, as "
                                                          "in training)")
    p.add_argument("--csv", help="where to write the games (default: next to the checkpoint)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if bool(args.checkpoint) == args.rate_references:
        p.error("give exactly one of --checkpoint and --rate-references")
    if args.games < 1:
        p.error("--games must be >= 1")
    try:
        refs = load_references(args.references, args.mode)
        if args.rate_references:
            if not args.references:
                p.error("--rate-references needs --references FILE to write the ratings to")
            refs = rate_reference_pool(refs, args.games, args.time_limit, args.seed,
                                       time_limit_outcome=args.time_limit_outcome)
            with open(args.references, "w") as f:
                json.dump(refs, f, indent=1)
            for n, s in sorted(refs["agents"].items(), key=lambda kv: kv[1]["mu"]):
                print(f"{n:12s} mu {s['mu']:7.2f} sigma {s['sigma']:5.2f}")
            print(json.dumps({"references": args.references,
                              "ratings": {n: {"mu": s["mu"], "sigma": s["sigma"]} for n, s in refs["agents"].items()}}))
            return 0
        rating, rows = evaluate_checkpoint(args.checkpoint, refs, args.games, args.time_limit, args.start_mu,
                                           args.seed, explore=not args.greedy,
                                           time_limit_outcome=args.time_limit_outcome)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import pandas as pd
    table = summary_table(rows, refs)
    print(table.to_string(float_format=lambda x: f"{x:.2f}"))
    print(f"\nTrueSkill of {args.checkpoint}: mu {rating.mu:.2f} sigma {rating.sigma:.2f} over {len(rows)} games")
    out = {"checkpoint": args.checkpoint, "mu": rating.mu, "sigma": rating.sigma, "games": len(rows),
           "win_rate": {n: float(v) for n, v in table["win_rate"].items()}}
    if args.elo:
        # the references' games first: sequential Elo depends on the order, and the references were played first
        elo_games = [tuple(g) for g in refs.get("games", [])] + [("agent", r["reference"], r["score"]) for r in rows]
        elo = R.elo_ratings(elo_games, anchor=R.ANCHOR_AGENT)
        print("\nElo (K = 200, random anchored at 1000): " + ", ".join(f"{n} {v:.0f}" for n, v in sorted(
            elo.items(), key=lambda kv: kv[1])))
        out["elo"] = elo
    csv_path = args.csv or os.path.join(os.path.abspath(args.checkpoint), "trueskill_games.csv")
    pd.DataFrame(rows).to_csv(csv_path, index=False)
    table.to_csv(os.path.splitext(csv_path)[0] + "_summary.csv")
    out["csv"] = csv_path
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
