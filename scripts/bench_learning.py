"""Learning benchmark: trains for a wall-time budget on this machine, from scratch or kickstarted, and
reports when the agent first beat each level of the reference ladder, then evaluates the final agent independently.

    python scripts/bench_learning.py [--minutes 60] [--env-steps N] [--config tune_configs/hok_1v1.yaml] [--kickstart]
        [--pretrain-arg=--games=40 ...] [--kickstart-from CLONE] [--final-games 100] [--workers 2]
        [--set key=value ...]
    python scripts/bench_learning.py --from-run results/NAME_bench_TIMESTAMP [--final-games 100 ...]

- ``--kickstart`` first runs ``python -m app.pretrain`` (behaviour cloning of the scripted bot with DAgger, the
  config's ``model`` keys given as ``--model``), inside the budget, then trains from its weights
  (``init.checkpoint``); the config's ``kickstart_coeff`` schedule decides the KL-to-teacher loss.
  ``--kickstart-from CLONE`` starts from a clone pretrained before, its card's wall time counted in the budget and the
  curve's minutes as if it had been pretrained here.
- Training runs ``app.train`` for what is left of the budget (a fresh run named <name>_bench_<timestamp>); with
  ``--env-steps N`` it stops sooner once it has sampled N env steps, so that the arms of a paired check (the same
  config, seed and data, before and after a change) stop at the same data whatever their speed. The config's
  opponents decide what the agent plays; with the curriculum (``opponents.curriculum``) it climbs the ladder.
- "Reached a level": the first moment (wall minutes since the benchmark started, pretraining included) at which the
  agent had won at least 80% of its last >= 20 training games against that level (``opponents.csv``; a game stopped
  by the time limit counts as the config's ``opponents.time_limit_outcome`` says). Levels it never played stay
  unreached.
- At the end, the final checkpoint plays ``--final-games`` evaluation games (seeds from 1,000,000 on: never used in
  training) against the full scripted bot and ``--lower-games`` against every lower level, sides alternating, actions
  sampled as in training (``--greedy``: the most likely ones), in ``--workers`` processes, each game as long as the
  mode's (1,200 s in 1v1) unless ``--final-time-limit S``: a run trained on 600 s games can be judged at that length
  too, where it never played the ten minutes after. A win is a destroyed ancient; the win rate comes with a 95%
  Wilson interval.

- ``--from-run RUN_DIR`` trains nothing: it reads the curve of a benchmark run trained before (its minutes counted
  from the time in its name, <name>_bench_<timestamp>) and plays the final games of its last checkpoint, as for a
  benchmark whose final games were cut short.
- ``--windows MINUTES`` also prints the run by windows of that many wall minutes, as a Markdown table: the
  curriculum's level at each window's end, the training games won against each opponent (opponents.csv), the
  update's medians (approx_kl, explained variance, entropy; metrics.csv), its KL stops, the policy gradient's
  gradient-noise cosine (the mean ± its standard error over the updates that measured it: near 0, the gradient of
  ``ppo.diagnostics_steps`` steps is mostly noise; docs/results.md has the noise scale it gives), and the agent steps
  sampled by the window's end. With ``--from-run --final-games 0 --lower-games 0`` it plays no game.

Prints the curve and a JSON line last.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import subprocess
import sys
import time


GOAL_WIN_RATE = 0.8  # a level is reached at >= 80% wins ...
GOAL_MIN_GAMES = 20  # ... over >= 20 games
STOP_MARGIN_S = 30  # training stops this long before the budget's end (the last iteration and checkpoint)
FINAL_SEED = 1_000_000  # the final evaluation's seeds start here (training seeds are small)
TOP_LEVEL = "scripted_3"  # the full scripted bot


def wilson(wins: int, n: int, z: float = 1.96) -> tuple:
    """The 95% Wilson score interval of a win rate."""
    if n == 0:
        return (math.nan, math.nan)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 3) + 0.0, round(min(1.0, centre + half), 3))  # + 0.0: no "-0.0"


def first_reached(rows: list, wall_of_iteration: dict) -> dict:
    """Opponent -> (wall minutes, iteration) at which its last >= GOAL_MIN_GAMES games (whole iterations, newest
    first) were won at >= GOAL_WIN_RATE, the first time; from opponents.csv rows."""
    history, reached = {}, {}
    for r in sorted(rows, key=lambda r: int(r["iteration"])):
        games, wins = int(r["games"] or 0), int(r["wins"] or 0)
        if not games:
            continue
        name, it = r["opponent"], int(r["iteration"])
        history.setdefault(name, []).append((games, wins))
        if name in reached:
            continue
        n = w = 0
        for g, v in reversed(history[name]):
            n, w = n + g, w + v
            if n >= GOAL_MIN_GAMES:
                break
        if n >= GOAL_MIN_GAMES and w / n >= GOAL_WIN_RATE:
            reached[name] = (wall_of_iteration.get(it), it)
    return reached


def first_promoted(metrics: list, wall_of_iteration: dict) -> dict:
    """Level -> (wall minutes, iteration) at which the curriculum first moved past it (metrics.csv's
    curriculum_agent changed from it to the next level up; the curriculum's own promote_at and window decided)."""
    passed, level, last = {}, None, -1
    for r in sorted(metrics, key=lambda r: int(r["iteration"])):
        agent, it = r.get("curriculum_agent") or None, int(r["iteration"])
        if agent is None:
            continue
        lvl = int(float(r["curriculum_level"])) if r.get("curriculum_level") not in (None, "") else None
        if level is not None and lvl is not None and lvl > last and level not in passed:
            passed[level] = (wall_of_iteration.get(it), it)
        level, last = agent, lvl if lvl is not None else last
    return passed


def curve_levels(cfg) -> list:
    """The levels the curve reports, weakest first: the reference ladder's and any other level of the run's
    curriculum (the warm-up levels, policies/agents/ladder.py; other agents after them)."""
    from policies.agents.ladder import LADDER, WARMUP_LADDER
    order = {n: i for i, n in enumerate(WARMUP_LADDER)}
    return sorted(dict.fromkeys([*LADDER, *cfg.opponents.curriculum.ladder]),
                  key=lambda n: order.get(n, len(order)))


def read_csv(path: str) -> list:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def latest_checkpoint(run_dir: str) -> str | None:
    found = sorted(glob.glob(os.path.join(run_dir, "*", "checkpoint_*")), key=os.path.getmtime)
    return found[-1] if found else None


def final_evaluation(checkpoint: str, mode: str, opponents: dict, greedy: bool, workers: int, log=print,
                     seed: int = FINAL_SEED, time_limit_s: float = 0.0, consumable_filters: bool = False) -> dict:
    """Opponent -> the checkpoint's games against it (app.evaluate: evaluation mode, sides alternating, seeds from
    `seed`), with the win rate's 95% Wilson interval; `consumable_filters`: the env's need filters on, as the run
    trained with them (its env config's ``consumable_filters``)."""
    from app.evaluate import CONSUMABLE_KEYS, FIGHT_KEYS, consumables_text, evaluate, fights_text
    out = {}
    for opponent, games in opponents.items():
        if games <= 0:
            continue
        args = argparse.Namespace(agent=checkpoint, opponent=opponent, mode=mode, games=games, time_limit=time_limit_s,
                                  seed=seed, greedy=greedy, replay_dir=None, replay_every=1.0, html=False,
                                  workers=workers, consumable_filters=consumable_filters)
        s = evaluate(args, log=lambda line: None)
        out[opponent] = {k: s[k] for k in ("games", "wins", "draws", "losses", "win_rate", "objective_win_rate",
                                           "points_win_rate", "wins_as_radiant", "games_as_radiant", "wins_as_dire",
                                           "games_as_dire", *FIGHT_KEYS, *CONSUMABLE_KEYS)}
        out[opponent]["win_rate_ci95"] = wilson(s["wins"], s["games"])
        log(f"final: vs {opponent}: {s['wins']}/{s['games']} won ({s['win_rate']:.0%}, 95% CI "
            f"{out[opponent]['win_rate_ci95']}), {s['draws']} drawn, {s['losses']} lost; "
            f"{s['objective_win_rate']:.0%} won on the objective (capped games: buildings, then kills); "
            f"{fights_text(s)}; {consumables_text(s)}; won as radiant {s['wins_as_radiant']}/{s['games_as_radiant']}, "
            f"as dire {s['wins_as_dire']}/{s['games_as_dire']}")
    return out


def window_table(metrics: list, opponents_rows: list, wall_of_iteration: dict, minutes: float) -> list:
    """The run by windows of `minutes` wall minutes (wall_of_iteration: iteration -> minute), as Markdown lines: the
    curriculum's level at the window's end, the training games won against each opponent (and of them, won outright:
    opponents.csv's outright_wins), the medians of approx_kl,
    explained variance and entropy, the KL stops, the gradient-noise cosine's mean ± standard error (and the updates
    that measured it), and the agent steps by the window's end."""
    import statistics

    def values(rows, key):
        return [float(r[key]) for r in rows if r.get(key) not in (None, "", "nan", "NaN")]

    def median(rows, key):
        v = values(rows, key)
        return statistics.median(v) if v else math.nan

    def mean_se(rows, key):
        v = values(rows, key)
        if not v:
            return "-"
        se = statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 1 else math.nan
        return f"{statistics.mean(v):.3f} ± {se:.3f} ({len(v)})"

    lines = ["| wall minutes | level at the end | training games won | approx_kl | KL stops | explained variance | "
             "entropy | gradient-noise cosine | agent steps |", "|---|---|---|---|---|---|---|---|---|"]
    timed = sorted((wall_of_iteration[int(r["iteration"])], int(r["iteration"]), r) for r in metrics
                   if int(r["iteration"]) in wall_of_iteration)
    if not timed:
        return lines
    start, end = math.floor(timed[0][0] / minutes) * minutes, timed[-1][0]
    while start <= end:
        rows = [r for m, _, r in timed if start <= m < start + minutes]
        if rows:
            its = {int(r["iteration"]) for r in rows}
            games = {}
            for o in opponents_rows:
                if int(o["iteration"]) in its and int(o["games"] or 0):
                    g = games.setdefault(o["opponent"], [0, 0, 0])
                    g[0], g[1] = g[0] + int(o["games"]), g[1] + int(o["wins"] or 0)
                    g[2] += int(o.get("outright_wins") or 0)  # a run written before the column: 0
            won = ", ".join(f"{name}: {w}/{n} ({out} outright)" for name, (n, w, out) in games.items()) or "-"
            stops = sum(float(r["kl_stopped"]) > 0 for r in rows if r.get("kl_stopped") not in (None, "", "nan"))
            steps, level = rows[-1].get("agent_steps"), rows[-1].get("curriculum_agent") or "-"
            lines.append(f"| {start:g}-{min(start + minutes, round(end, 1)):g} | {level} | {won} | "
                         f"{median(rows, 'approx_kl'):.1e} | {stops} | {median(rows, 'vf_explained_var'):.2f} | "
                         f"{median(rows, 'entropy'):.2f} | {mean_se(rows, 'gradient_noise_cosine')} | "
                         f"{'-' if steps in (None, '') else f'{float(steps) / 1e6:.2f}M'} |")
        start += minutes
    return lines


def final_games(top_games: int, lower_games: int) -> dict:
    """The default final games: `top_games` against the full bot, `lower_games` against every lower ladder level."""
    from policies.agents.ladder import LADDER
    return {**{level: lower_games for level in LADDER if level != TOP_LEVEL}, TOP_LEVEL: top_games}


def parse_final_against(items: list) -> dict:
    """--final-against AGENT=GAMES lines -> {agent: games}; errors name the bad item and the allowed agents."""
    from policies.agents.by_name import AGENTS
    out = {}
    for item in items:
        agent, sep, games = item.partition("=")
        if not sep or not games.strip().isdigit():
            raise ValueError(f"--final-against {item!r}: must be AGENT=GAMES, GAMES a whole number >= 0")
        if agent not in AGENTS:
            raise ValueError(f"--final-against {item!r}: unknown agent {agent!r}; allowed: {sorted(AGENTS)}")
        out[agent] = int(games)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="tune_configs/hok_1v1.yaml")
    p.add_argument("--minutes", type=float, default=60.0, help="wall-time budget, pretraining included")
    p.add_argument("--env-steps", type=int, metavar="N",
                   help="also stop training once it has sampled N env steps (whichever comes first)")
    p.add_argument("--kickstart", action="store_true", help="pretrain (python -m app.pretrain) and start from it")
    p.add_argument("--kickstart-from", metavar="DIR",
                   help="start from a clone app.pretrain wrote before (its card's wall time counts in the budget and "
                        "the curve's minutes, as if pretrained here)")
    p.add_argument("--pretrain-arg", action="append", default=[], metavar="ARG",
                   help="an argument for app.pretrain (e.g. --pretrain-arg=--games=40)")
    p.add_argument("--final-games", type=int, default=100, help="final games against the full scripted bot")
    p.add_argument("--lower-games", type=int, default=20, help="final games against every lower ladder level")
    p.add_argument("--final-against", action="append", default=[], metavar="AGENT=GAMES",
                   help="final games against this agent instead of the ladder's (repeatable; e.g. random=20 for a "
                        "run from scratch)")
    p.add_argument("--workers", type=int, default=2, help="processes for the final games")
    p.add_argument("--greedy", action="store_true", help="final games with the most likely actions")
    p.add_argument("--final-time-limit", type=float, default=0.0, metavar="S",
                   help="the final games' length in game seconds (0: the mode's, 1,200 s in 1v1)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--from-run", metavar="RUN_DIR", help="train nothing: the curve and final games of a benchmark run "
                                                          "trained before")
    p.add_argument("--windows", type=float, metavar="MINUTES",
                   help="also print the run by windows of this many wall minutes (a Markdown table)")
    args = p.parse_args(argv)
    if args.env_steps is not None and args.env_steps < 1:
        p.error(f"--env-steps must be >= 1, got {args.env_steps}")
    if not args.final_time_limit >= 0:
        p.error(f"--final-time-limit must be >= 0 seconds (0: the mode's game length), got {args.final_time_limit}")
    if args.windows is not None and not args.windows > 0:
        p.error(f"--windows must be > 0 (minutes), got {args.windows}")
    try:
        args.final_against = parse_final_against(args.final_against)
    except ValueError as e:
        p.error(str(e))
    if args.from_run:
        return report(args, *from_run(p, args.from_run))
    from app import train
    from training import run_config

    t0 = time.time()
    if args.kickstart and args.kickstart_from:
        p.error("--kickstart and --kickstart-from: give one of them")
    # the run's name, mode and storage; a kickstart loss's teacher (the pretrained clone) does not exist yet
    kickstarted = args.kickstart or args.kickstart_from
    cfg0 = run_config.load(args.config, args.set + (["schedules.kickstart_coeff=0"] if kickstarted else []))
    mode = cfg0.env.get("mode", "1v1")
    name = f"{cfg0.name}_bench_{time.strftime('%Y%m%d_%H%M%S')}"
    sets = list(args.set) + [f"name={name}"]
    pretrain = None
    if args.kickstart_from:
        with open(os.path.join(args.kickstart_from, "card.json")) as f:
            card = json.load(f)
        if card.get("mode") != mode:
            p.error(f"--kickstart-from {args.kickstart_from}: a {card.get('mode')} clone, the config is {mode}")
        t0 -= float(card["wall_s"])  # the clone's pretraining counts as if it had run here
        out = os.path.abspath(args.kickstart_from)
        pretrain = {"command": card.get("command"), "rc": 0, "minutes": round(float(card["wall_s"]) / 60, 2),
                    "out": out, "reused": True}
        sets.append(f"init.checkpoint={out}")
    if args.kickstart:
        # next to the run's directory, not inside it (app.train starts a fresh run only in a new directory)
        out = os.path.join(os.path.abspath(cfg0.storage_path), f"{name}_kickstart")
        cmd = pretrain_command(mode, out, cfg0.model, args.pretrain_arg)
        print("pretraining:", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd)
        pretrain = {"command": cmd, "rc": rc, "minutes": round((time.time() - t0) / 60, 2), "out": out}
        if rc != 0:
            print(json.dumps({"error": "pretraining failed", "pretrain": pretrain}))
            return 1
        sets.append(f"init.checkpoint={out}")
    # a wall-clock deadline (Tune's time_total_s leaves out the evaluation games and checkpoints), a margin before
    # the budget's end for the last iteration and checkpoint
    sets.append(stop_setting(max(t0 + args.minutes * 60 - STOP_MARGIN_S, time.time() + 60), args.env_steps))
    rc = train.main(["--config", args.config] + sum((["--set", s] for s in sets), []))
    cfg = run_config.load(args.config, sets)
    run_dir = os.path.join(os.path.abspath(cfg.storage_path), cfg.name)
    return report(args, cfg, run_dir, t0, rc, round((time.time() - t0) / 60, 2), pretrain, kickstarted)


def stop_setting(deadline: float, env_steps: int | None = None) -> str:
    """The ``--set`` of the run's whole stop section: the wall-clock deadline (Unix seconds), and with `env_steps` the
    env steps sampled too; training stops at whichever comes first (training.run_config.RunStopper)."""
    extra = f", num_env_steps_sampled_lifetime: {int(env_steps)}" if env_steps else ""
    return f"stop={{timestamp: {deadline:.0f}{extra}}}"


def pretrain_command(mode: str, out: str, model: dict, extra: list) -> list:
    """The command line of app.pretrain for a run of `mode` whose config has these ``model`` keys: the clone gets
    them (its widths and its frame), so that the run's ``init.checkpoint`` fits its model; `extra` after them."""
    model_args = sum((["--model", f"{k}={json.dumps(v)}"] for k, v in model.items()), [])  # JSON is YAML
    return [sys.executable, "-m", "app.pretrain", "--mode", mode, "--out", out] + model_args + list(extra)


def from_run(p, run_dir: str) -> tuple:
    """report()'s arguments for a benchmark run trained before: its config (run_config.yaml), its start (the time in
    its name), and its training's wall minutes (to its last metrics row)."""
    from training import run_config
    run_dir = os.path.abspath(run_dir)
    path = os.path.join(run_dir, "run_config.yaml")
    if not os.path.isfile(path):
        p.error(f"--from-run {run_dir}: no run_config.yaml there (a run directory of app.train is needed)")
    cfg, moved = run_config.load_record(run_dir)
    for key, (recorded, used) in moved.items():
        print(f"--from-run: the run's {key} {recorded!r} is not on this machine; "
              + (f"read as {used!r}" if used else "left out"))
    try:
        t0 = time.mktime(time.strptime(os.path.basename(run_dir).rsplit("_bench_", 1)[1], "%Y%m%d_%H%M%S"))
    except (IndexError, ValueError):
        t0 = os.path.getmtime(path)
    stamps = [float(r["timestamp"]) for r in read_csv(os.path.join(run_dir, "metrics.csv")) if r.get("timestamp")]
    train_minutes = round((max(stamps, default=t0) - t0) / 60, 2)
    return cfg, run_dir, t0, None, train_minutes, None, bool(cfg.init.checkpoint)


def report(args, cfg, run_dir: str, t0: float, rc, train_minutes: float, pretrain, kickstarted) -> int:
    """The curve (the minute and agent step each level was reached), the final games, and the JSON line."""
    mode = cfg.env.get("mode", "1v1")
    name = cfg.name
    metrics = read_csv(os.path.join(run_dir, "metrics.csv"))
    wall = {int(r["iteration"]): round((float(r["timestamp"]) - t0) / 60, 2) for r in metrics if r.get("timestamp")}
    agent_steps = {int(r["iteration"]): int(float(r["agent_steps"])) for r in metrics if r.get("agent_steps")}
    opponents_rows = read_csv(next(iter(glob.glob(os.path.join(run_dir, "*", "opponents.csv"))), ""))
    reached = first_reached(opponents_rows, wall)
    promoted = first_promoted(metrics, wall)
    curve = []
    for r in opponents_rows:
        if int(r["games"] or 0):
            curve.append({"minutes": wall.get(int(r["iteration"])), "iteration": int(r["iteration"]),
                          "opponent": r["opponent"], "games": int(r["games"]), "wins": int(r["wins"]),
                          "curriculum_level": r.get("curriculum_level")})
    levels = curve_levels(cfg)
    print(f"\n{'opponent':>14s} {'reached 80% at (wall min)':>26s} {'iteration':>9s} "
          f"{'curriculum passed it at (wall min)':>35s}")
    for level in levels:
        m, it = reached.get(level, (None, None))
        p = promoted.get(level, (None,))[0]
        print(f"{level:>14s} {('-' if m is None else f'{m:.1f}'):>26s} {('-' if it is None else it):>9} "
              f"{('-' if p is None else f'{p:.1f}'):>35s}")

    if args.windows:
        print("\n" + "\n".join(window_table(metrics, opponents_rows, wall, args.windows)))

    checkpoint = latest_checkpoint(run_dir)
    final = {}
    if checkpoint:
        games = args.final_against or final_games(args.final_games, args.lower_games)
        final = final_evaluation(checkpoint, mode, games, args.greedy, args.workers,
                                 time_limit_s=args.final_time_limit,
                                 consumable_filters=bool(cfg.env.get("consumable_filters", False)))
    top = final.get(TOP_LEVEL, {})
    print(json.dumps({
        "config": os.path.join(run_dir, "run_config.yaml") if args.from_run else args.config, "run": name,
        "run_dir": run_dir, "kickstart": bool(kickstarted), "pretrain": pretrain,
        "train_rc": rc, "budget_minutes": None if args.from_run else args.minutes,
        "budget_env_steps": None if args.from_run else args.env_steps, "train_wall_minutes": train_minutes,
        "total_wall_minutes": train_minutes if args.from_run else round((time.time() - t0) / 60, 2),
        "reached_80pct_minutes": {level: reached.get(level, (None,))[0] for level in levels},
        # the agent steps sampled up to the iteration that reached the level (metrics.csv's agent_steps)
        "reached_80pct_agent_steps": {level: agent_steps.get(reached[level][1]) if level in reached else None
                                      for level in levels},
        # the curriculum's own promotions (opponents.curriculum.promote_at over its window, e.g. 75% of 20 games)
        "promoted_minutes": {level: promoted.get(level, (None,))[0] for level in levels},
        "promoted_agent_steps": {level: agent_steps.get(promoted[level][1]) if level in promoted else None
                                 for level in levels},
        "checkpoint": checkpoint, "final_time_limit_s": args.final_time_limit or None, "final": final,
        "final_win_rate_vs_full_bot": top.get("win_rate"),
        "meets_goal": bool(top) and top["win_rate"] >= GOAL_WIN_RATE, "curve": curve}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
