"""Plays one game between two agents through ``MobaEnv`` and prints its summary.

    python scripts/play.py --mode 5v5 --radiant scripted --dire random --seed 0 \\
        [--replay FILE] [--time-limit S] [--eval | --train] [--json]

Agents: every name ``policies.agents.by_name.make_agent(name, seed)`` knows ("scripted", "random", "noop", the
ladder's levels), or a trained agent's checkpoint, ``model:PATH`` or PATH (a run's checkpoint, an RLModule
checkpoint, a shipped ``models/X``; ``--greedy``: it plays its most likely actions; by default it samples them, as
in training), with one torch thread. Each team's agent is given only its own team's agent ids and observations.
Radiant's agent is made with ``--seed``, Dire's with ``--seed + 1``.

``--eval`` (the default) sets the env config ``evaluation: True`` (every randomization off, the default lineup);
``--train`` plays with the training randomizations. ``--time-limit`` is in game seconds (0 = the mode's default).

``--replay FILE`` writes the game as a replay (``moba/env/replay_file.py``: a header, then a record of every unit,
the fog, the events and, for a trained agent, its win probability and actions, per game second, or every
``--replay-every`` game seconds); ``python -m app.replay FILE`` turns it into a page that plays it in a browser.

Progress goes to stderr every 60 game seconds. With ``--json`` the last line of stdout is the summary dict
(``Game.summary()`` plus "agents", "seed", "steps", "wall_time_s").
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from moba.game.teams import MODES, TEAM_NAMES
from training.cli import user_errors

PROGRESS_EVERY_S = 60.0


def fmt_time(seconds: float) -> str:
    m, s = divmod(int(seconds + 1e-6), 60)
    return f"{m:02d}:{s:02d}"


def buildings_left(game) -> dict:
    """Alive towers per team (by team name)."""
    from moba.game.constants import TEAM_NAMES, UT_TOWER
    from moba.game.state import I_ALIVE, I_TEAM, I_TYPE, I_USED
    ui = game.s.ui
    towers = (ui[:, I_USED] == 1) & (ui[:, I_ALIVE] == 1) & (ui[:, I_TYPE] == UT_TOWER)
    return {name: int((towers & (ui[:, I_TEAM] == t)).sum()) for t, name in enumerate(TEAM_NAMES)}


def progress_line(game) -> str:
    tw = buildings_left(game)
    k = [game.stats[t].kills for t in (0, 1)]
    return (f"[{fmt_time(game.time)}] towers left radiant {tw['radiant']} / dire {tw['dire']}   "
            f"kills radiant {k[0]} / dire {k[1]}")


def print_summary(summary: dict, agents: dict, wall_s: float, steps: int, out=None):
    out = out or sys.stdout  # at the time of the call (a test's captured stream)
    w = summary["winner"]
    how = " (time limit)" if summary["truncated"] else ""
    print(f"\n{summary['mode']}: radiant ({agents['radiant']}) vs dire ({agents['dire']})", file=out)
    print(f"winner: {w}{how}   game time {fmt_time(summary['game_time_s'])}   "
          f"({steps} steps in {wall_s:.1f}s wall, {steps / max(wall_s, 1e-9):.0f} steps/s)", file=out)
    print(f"\n{'team':<8} {'towers':>6} {'barracks':>8} {'shrines':>7} {'kills':>5}   (destroyed / killed by the team)",
          file=out)
    for team in TEAM_NAMES:
        d = summary["destroyed_by"][team]
        print(f"{team:<8} {d['towers']:>6} {d['barracks']:>8} {d['shrines']:>7} {d['kills']:>5}", file=out)
    heroes = summary["heroes"]
    hw = max([len("hero")] + [len(h["hero"]) for h in heroes])
    print(f"\n{'team':<8} {'hero':<{hw}} {'lvl':>3} {'K/D/A':>9} {'LH':>4} {'DN':>3} {'gold':>7}  items", file=out)
    for h in heroes:
        kda = f"{h['kills']}/{h['deaths']}/{h['assists']}"
        print(f"{h['team']:<8} {h['hero']:<{hw}} {h['level']:>3} {kda:>9} {h['last_hits']:>4} {h['denies']:>3} "
              f"{h['gold_earned']:>7.0f}  {', '.join(h['items']) or '-'}", file=out)


def play(mode: str, radiant: str, dire: str, seed: int, evaluation: bool = True, time_limit_s: float = 0.0,
         replay_path: str | None = None, progress: bool = True, replay_every_s: float = 1.0,
         explore: bool = True) -> dict:
    from moba.env.moba_env import MobaEnv
    from moba.env.replay_file import ReplayWriter
    from policies.agents.by_name import play_game
    from policies.league.references import agent_maker, agents_layout
    from policies.league.series import one_torch_thread

    one_torch_thread()  # a model's forward passes: more threads only slow them on a busy machine
    names = dict(zip(TEAM_NAMES, (radiant, dire)))
    layout = agents_layout([(name, f"--{side}") for side, name in names.items()])  # a checkpoint's own layout
    env = MobaEnv({"mode": mode, "seed": seed, "evaluation": evaluation, "time_limit_s": float(time_limit_s),
                   **layout})
    agents = {side: agent_maker(name, explore, env, f"--{side}")(seed + k)
              for k, (side, name) in enumerate(names.items())}
    replay = replay_path and ReplayWriter(replay_path, names, seed, replay_every_s, players=agents)
    clock = {"next_progress": PROGRESS_EVERY_S, "steps": -1}

    def on_step(env):
        game = env.game
        clock["steps"] += 1
        if replay:
            replay.on_step(env)
        if progress and game.time >= clock["next_progress"] - 1e-6:
            clock["next_progress"] += PROGRESS_EVERY_S
            print(progress_line(game), file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    try:
        summary = play_game(env, *agents.values(), seed=seed, on_step=on_step)
    finally:
        if replay:
            replay.close()
    summary.update({"agents": names, "seed": seed, "evaluation": evaluation,
                    "steps": clock["steps"], "wall_time_s": round(time.perf_counter() - t0, 2)})
    return summary


@user_errors
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default=MODES[0], choices=list(MODES))
    ap.add_argument("--radiant", default="scripted",
                    help="agent name (policies.agents.by_name.AGENTS), model:PATH or checkpoint path")
    ap.add_argument("--dire", default="random",
                    help="agent name (policies.agents.by_name.AGENTS), model:PATH or checkpoint path")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replay", metavar="FILE", help="write the game's replay to FILE (JSON lines)")
    ap.add_argument("--replay-every", type=float, default=1.0, metavar="S",
                    help="game seconds between replay records (default 1)")
    ap.add_argument("--greedy", action="store_true",
                    help="a checkpoint agent plays its most likely actions (default: sampled, as in training)")
    ap.add_argument("--time-limit", type=float, default=0.0, metavar="S",
                    help="game time limit in seconds (0 = the mode's default)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--eval", dest="evaluation", action="store_true", default=True,
                   help="evaluation mode: no randomization (default)")
    g.add_argument("--train", dest="evaluation", action="store_false", help="training randomizations on")
    ap.add_argument("--json", action="store_true", help="print the summary dict as the last line")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    if args.time_limit < 0:
        ap.error("--time-limit must be >= 0")
    from policies.league.references import agent_path
    agent_path(args.radiant, "--radiant")  # both parsed before anything loads
    agent_path(args.dire, "--dire")

    summary = play(args.mode, args.radiant, args.dire, args.seed, evaluation=args.evaluation,
                   time_limit_s=args.time_limit, replay_path=args.replay, progress=not args.quiet,
                   replay_every_s=args.replay_every, explore=not args.greedy)
    print_summary(summary, summary["agents"], summary["wall_time_s"], summary["steps"])
    if args.replay:
        print(f"\nreplay written to {args.replay} (watch it: python -m app.replay {args.replay})")
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
