"""How much a 5v5 model's win probability is worth: plays recorded games with it, records its win probability over
each game and the winner, and writes the calibration the draft page states (policies/draft/calibration.py).

    python scripts/draft_calibration.py --model models/five_5v5_kickstart --self-play 20 \\
        --opponents scripted_1,scripted_2,scripted_3 --games-per-opponent 10 --time-limit 300 --workers 2

The games: ``--self-play`` games of the model against itself, then ``--games-per-opponent`` games against each of
``--opponents`` (agent names), the model playing Radiant in even games and Dire in odd ones (series order). Game g
is an evaluation-mode game (no randomization) with seed ``--seed + g`` and a random lineup (ten distinct heroes of
the 18, drawn from that seed); the model samples its actions as in training (torch seeded with the game's seed). A
game stopped by the time limit is decided by the objective (DEFAULT_TIME_LIMIT_OUTCOME of
policies/league/ratings.py: buildings, then hero kills); a game still even is a draw and is left out of the
calibration (counted in ``draws_left_out``).

What is calibrated, each against its team's outcome (1 won, 0 lost):

- ``per_decision``: the model's estimate for its team (the mean of its five heroes' ``win_prob``) every
  ``--every`` game seconds of every game, for each team the model plays;
- ``first_frames``: that estimate averaged over the game's first lineups.SCORE_DECISIONS decisions, once per game and
  model team;
- ``draft_score``: in the self-play games only (the draft's scores assume the model plays both teams), the game's
  lineup scored exactly as the draft scores it (policies/draft/lineups.py: greedy first frames, seed SCORE_SEED)
  against Radiant's outcome: what the draft's numbers are worth;
- ``by_minute``: per_decision's Brier score by game minute.

Writes ``--out`` (default ``<model dir>/draft_calibration.json``), prints a line per game and a JSON summary last.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from moba.game.teams import TEAM_NAMES, side_of_game  # noqa: E402
from training.cli import user_errors  # noqa: E402

SELF_PLAY = "self"  # the opponent of a self-play game
DEFAULT_TIME_LIMIT_S = 300.0  # the shipped 5v5 agent's training and model-card games (models/five_5v5_kickstart)
DEFAULT_SEED = 3_000_000  # apart from the model card's evaluation seeds (2,000,000 on) and training's


def parse_args(argv=None):
    from policies.draft.lineups import DEFAULT_MODEL
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"a 5v5 model, model:PATH or PATH (default {DEFAULT_MODEL})")
    p.add_argument("--self-play", type=int, default=20, metavar="N", help="games of the model against itself")
    p.add_argument("--opponents", default="scripted_1,scripted_2,scripted_3",
                   help="comma-separated agent names the model plays (default: the scripted ladder); '' for none")
    p.add_argument("--games-per-opponent", type=int, default=10, metavar="N")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT_S, metavar="S",
                   help=f"game time limit in seconds (default {DEFAULT_TIME_LIMIT_S:g})")
    p.add_argument("--every", type=float, default=1.0, metavar="S",
                   help="game seconds between the recorded estimates of per_decision (default 1)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--workers", type=int, default=1, help="processes playing the games (default 1)")
    p.add_argument("--out", help="the JSON written (default <model dir>/draft_calibration.json)")
    args = p.parse_args(argv)
    for key, low in (("self_play", 0), ("games_per_opponent", 0), ("workers", 1)):
        if getattr(args, key) < low:
            p.error(f"--{key.replace('_', '-')} must be >= {low}")
    if args.time_limit <= 0:
        p.error("--time-limit must be > 0")
    if args.every <= 0:
        p.error("--every must be > 0")
    return args


def game_plan(args) -> list[dict]:
    """Every game: its number, its opponent (SELF_PLAY or an agent name) and the side the model plays (None in
    self-play: both)."""
    opponents = [o for o in args.opponents.split(",") if o]
    plan = [{"game": g, "opponent": SELF_PLAY, "model_side": None} for g in range(args.self_play)]
    for name in opponents:
        for k in range(args.games_per_opponent):
            plan.append({"game": len(plan), "opponent": name, "model_side": side_of_game(k)})
    return plan


def check_args(args) -> list[dict]:
    """The options checked before any game starts (a ValueError names the option); the game plan."""
    from policies.agents.by_name import AGENTS
    from policies.draft.lineups import load_draft_module
    for name in [o for o in args.opponents.split(",") if o]:
        if name not in AGENTS:
            raise ValueError(f"--opponents: unknown agent {name!r}; allowed: {sorted(AGENTS)}")
    load_draft_module(args.model)
    plan = game_plan(args)
    if not plan:
        raise ValueError("--self-play and --games-per-opponent: no game to play (both are 0, or --opponents is '')")
    return plan


class RecordedAgent:
    """An agent whose team estimate (the mean of its heroes' win probability, ModuleAgent.decisions) is recorded
    at every decision with the game time of the observation it read."""

    def __init__(self, agent, env):
        self.agent, self.env = agent, env
        self.times, self.probs = [], []

    def reset(self, agent_ids=None):
        self.agent.reset(agent_ids)
        self.times, self.probs = [], []

    def act(self, observations: dict) -> dict:
        t = self.env.game.time
        actions = self.agent.act(observations)
        probs = [d["win_prob"] for d in self.agent.decisions.values()]
        self.times.append(float(t))
        self.probs.append(float(sum(probs) / len(probs)))
        return actions


def play_games(args, games: list[dict]) -> list[dict]:
    """Plays the games of the plan given; a result dict per game. Loads the model once."""
    import numpy as np
    import torch

    from moba.env.moba_env import MobaEnv
    from moba.game.heroes import HERO_INDEX, HEROES
    from policies.agents.by_name import make_agent, play_game
    from policies.agents.module_agent import ModuleAgent
    from policies.draft import lineups as L
    from policies.league.ratings import DEFAULT_TIME_LIMIT_OUTCOME, DRAW, WIN
    from policies.league.series import game_record, one_torch_thread, series_score

    one_torch_thread()
    module = L.load_draft_module(args.model)
    out = []
    for spec in games:
        g, t0 = spec["game"], time.time()
        seed = args.seed + g
        rng = np.random.default_rng(seed)
        lineup = tuple(HEROES[i].name for i in rng.choice(len(HEROES), size=2 * L.TEAM, replace=False))
        env = MobaEnv({"mode": L.DRAFT_MODE, "evaluation": True, "seed": seed, "time_limit_s": args.time_limit,
                       "lineup": lineup})
        torch.manual_seed(seed)
        model_sides = list(TEAM_NAMES) if spec["opponent"] == SELF_PLAY else [spec["model_side"]]
        players = {}
        for side in TEAM_NAMES:
            if side in model_sides:
                players[side] = RecordedAgent(ModuleAgent(module, explore=True), env)
            else:
                players[side] = make_agent(spec["opponent"], seed, "--opponents")
        summary = play_game(env, players[TEAM_NAMES[0]], players[TEAM_NAMES[1]], seed=seed)
        radiant = series_score(game_record(g, TEAM_NAMES[0], summary), DEFAULT_TIME_LIMIT_OUTCOME)
        decided_by = ("ancient" if summary["winner"] in TEAM_NAMES else "objective" if radiant != DRAW else "draw")
        teams = {}
        for side in model_sides:
            rec = players[side]
            outcome = None if radiant == DRAW else float((radiant == WIN) == (side == TEAM_NAMES[0]))
            sampled, next_t = [], 0.0
            for t, p in zip(rec.times, rec.probs):
                if t >= next_t - 1e-9:
                    sampled.append((t, p))
                    next_t = (math.floor(t / args.every + 1e-9) + 1) * args.every
            teams[side] = {"outcome": outcome, "first_frames": float(np.mean(rec.probs[:L.SCORE_DECISIONS])),
                           "samples": sampled, "mean_prob": float(np.mean(rec.probs))}
        canonical = L.canonical_lineup(lineup[:L.TEAM], lineup[L.TEAM:])
        views = L.score_lineups(module, np.array([[HERO_INDEX[h] for h in canonical]]))
        out.append({**spec, "seed": seed, "lineup": list(lineup), "winner": summary["winner"],
                    "radiant_outcome": None if radiant == DRAW else float(radiant == WIN), "decided_by": decided_by,
                    "game_time_s": summary["game_time_s"], "draft_score": float(L.lineup_scores(views)[0]),
                    "teams": teams, "wall_s": round(time.time() - t0, 1)})
    return out


def summarize(args, results: list[dict]) -> dict:
    """The calibration JSON of the games played (see the module docstring)."""
    from policies.draft.calibration import calibration
    from policies.draft.lineups import SCORE_DECISIONS, SCORE_SEED, model_fingerprint
    from policies.league.ratings import DEFAULT_TIME_LIMIT_OUTCOME

    per_decision, first, minutes = ([], []), ([], []), {}
    for r in results:
        for team in r["teams"].values():
            if team["outcome"] is None:
                continue
            first[0].append(team["first_frames"])
            first[1].append(team["outcome"])
            for t, p in team["samples"]:
                per_decision[0].append(p)
                per_decision[1].append(team["outcome"])
                m = minutes.setdefault(int(t // 60), ([], []))
                m[0].append(p)
                m[1].append(team["outcome"])
    draft = [(r["draft_score"], r["radiant_outcome"]) for r in results
             if r["opponent"] == SELF_PLAY and r["radiant_outcome"] is not None]
    by_minute = []
    for minute in sorted(minutes):
        c = calibration(*minutes[minute])
        by_minute.append({"minute": minute, **{k: c[k] for k in ("n", "base_rate", "mean_prob", "brier")}})
    opponents = {}
    for r in results:
        opponents[r["opponent"]] = opponents.get(r["opponent"], 0) + 1
    decided = {}
    for r in results:
        decided[r["decided_by"]] = decided.get(r["decided_by"], 0) + 1
    command = None
    if sys.argv and sys.argv[0].endswith("draft_calibration.py"):
        command = " ".join(["python scripts/draft_calibration.py", *sys.argv[1:]])
    return {"model": args.model, "fingerprint": model_fingerprint(args.model),
            "measured": time.strftime("%Y-%m-%d"), "command": command,
            "games": len(results), "opponents": opponents, "time_limit_s": args.time_limit,
            "time_limit_outcome": DEFAULT_TIME_LIMIT_OUTCOME, "decided_by": decided,
            "draws_left_out": decided.get("draw", 0), "record_every_s": args.every,
            "score_decisions": SCORE_DECISIONS, "score_seed": SCORE_SEED,
            "per_decision": calibration(*per_decision), "first_frames": calibration(*first),
            "draft_score": calibration([d[0] for d in draft], [d[1] for d in draft]), "by_minute": by_minute,
            "game_results": [{k: v for k, v in r.items() if k != "teams"}
                             | {"model_teams": {s: {k: v for k, v in t.items() if k != "samples"}
                                                for s, t in r["teams"].items()}} for r in results]}


def default_out(model: str) -> str:
    from policies.draft.calibration import CALIBRATION_FILE
    from policies.league.references import checkpoint_path
    return os.path.join(checkpoint_path(model, "--model"), CALIBRATION_FILE)


def run(args, log=print) -> dict:
    plan = check_args(args)
    workers = max(1, min(args.workers, len(plan)))
    if workers == 1:
        results = play_games(args, plan)
    else:
        from policies.league.series import game_pool
        with game_pool(workers) as pool:
            parts = pool.map(play_games, [args] * workers, [plan[k::workers] for k in range(workers)])
            results = sorted((r for part in parts for r in part), key=lambda r: r["game"])
    for r in results:
        sides = ", ".join(f"{s} {t['first_frames']:.4f}" for s, t in r["teams"].items())
        log(f"game {r['game'] + 1}/{len(plan)}: model vs {r['opponent']} ({sides}): winner {r['winner']} at "
            f"{r['game_time_s'] / 60:.1f} min, decided by {r['decided_by']}, draft score {r['draft_score']:.5f}")
    summary = summarize(args, results)
    out = args.out or default_out(args.model)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = f"{out}.tmp"
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(tmp, out)
    summary["out"] = out
    return summary


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    summary = run(args)
    for key in ("draft_score", "first_frames", "per_decision"):
        c = summary[key]
        if c["n"]:
            print(f"{key}: n {c['n']}, Brier {c['brier']:.4f} (base rate {c['brier_base_rate']:.4f}), "
                  f"ECE {c['ece']:.4f}, predictions {c['prob_range'][0]:.4f}..{c['prob_range'][1]:.4f}")
        else:
            print(f"{key}: no decided game")
    print(json.dumps({k: summary[k] for k in ("out", "model", "games", "opponents", "decided_by")}
                     | {k: {m: summary[k][m] for m in ("n", "brier", "brier_base_rate", "ece")}
                        for k in ("draft_score", "first_frames", "per_decision")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
