"""Plays one game between two agents through ``MobaEnv`` and prints its summary.

    python scripts/play.py --mode 5v5 --radiant scripted --dire random --seed 0 \\
        [--replay FILE] [--time-limit S] [--eval | --train] [--json]

Agents: "noop" (built in: every hero does nothing), and every name that ``policies.agents.make_agent(name, seed)``
knows ("scripted", "random", ...), imported only when such an agent is asked for. An agent is an object with
``reset(agent_ids)`` (or ``reset(env, agent_ids)``) and ``act(observations) -> {agent_id: action}``; each team's agent is given only its own
team's agent ids and observations. Radiant's agent is made with ``--seed``, Dire's with ``--seed + 1``.

``--eval`` (the default) sets the env config ``evaluation: True`` (every randomization off, the default lineup);
``--train`` plays with the training randomizations. ``--time-limit`` is in game seconds (0 = the mode's default).

``--replay FILE`` writes the game as JSON lines: a header {"mode", "lineup", "unit_types", "teams", "map_size",
"frameskip", "seed", "agents"}, then one ``Game.replay_record()`` per game second ({"t", "units": [[uid, team,
type, x, y, hp], ...]}), the first at t=0 and the last at the end of the game.

Progress goes to stderr every 60 game seconds. With ``--json`` the last line of stdout is the summary dict
(``Game.summary()`` plus "agents", "seed", "steps", "wall_time_s").
"""
from __future__ import annotations

import os
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

BUILTIN_AGENTS = ("noop",)
PROGRESS_EVERY_S = 60.0


class NoopAgent:
    """Every hero does nothing (primary action 0; the other parameters are ignored)."""

    def __init__(self, seed: int | None = None):
        self.agent_ids: list[str] = []

    def reset(self, agent_ids=None):
        self.agent_ids = list(agent_ids or [])

    def act(self, observations: dict) -> dict:
        return {a: {"primary": 0, "delay": 0, "target_unit": 0, "offset_x": 4, "offset_y": 4} for a in observations}


def make_agent(name: str, seed: int):
    """A built-in agent, or one from ``policies.agents.make_agent`` (imported lazily)."""
    if name == "noop":
        return NoopAgent(seed)
    try:
        from policies.agents import make_agent as policies_make_agent
    except ImportError as e:
        raise SystemExit(f"play.py: agent {name!r} needs policies.agents.make_agent, which could not be imported "
                         f"({e}); built-in agents: {list(BUILTIN_AGENTS)}")
    try:
        return policies_make_agent(name, seed)
    except ValueError as e:  # unknown name
        raise SystemExit(f"play.py: {e}; built-in agents: {list(BUILTIN_AGENTS)}")


def reset_agent(agent, env, agent_ids):
    """Calls ``agent.reset(agent_ids)`` (the policies.agents protocol), or ``agent.reset(env, agent_ids)`` for an
    agent whose reset takes the env first."""
    import inspect
    try:
        params = list(inspect.signature(agent.reset).parameters)
    except (TypeError, ValueError):
        params = []
    if params and params[0] == "env":
        return agent.reset(env, list(agent_ids))
    return agent.reset(list(agent_ids))


def fmt_time(seconds: float) -> str:
    m, s = divmod(int(seconds + 1e-6), 60)
    return f"{m:02d}:{s:02d}"


def buildings_left(game) -> dict:
    """Alive towers per team (by team name)."""
    from app.game.constants import TEAM_NAMES, UT_TOWER
    from app.game.state import I_ALIVE, I_TEAM, I_TYPE, I_USED
    ui = game.s.ui
    towers = (ui[:, I_USED] == 1) & (ui[:, I_ALIVE] == 1) & (ui[:, I_TYPE] == UT_TOWER)
    return {name: int((towers & (ui[:, I_TEAM] == t)).sum()) for t, name in enumerate(TEAM_NAMES)}


def progress_line(game) -> str:
    tw = buildings_left(game)
    k = [game.stats[t].kills for t in (0, 1)]
    return (f"[{fmt_time(game.time)}] towers left radiant {tw['radiant']} / dire {tw['dire']}   "
            f"kills radiant {k[0]} / dire {k[1]}")


def print_summary(summary: dict, agents: dict, wall_s: float, steps: int, out=sys.stdout):
    w = summary["winner"]
    how = " (time limit)" if summary["truncated"] else ""
    print(f"\n{summary['mode']}: radiant ({agents['radiant']}) vs dire ({agents['dire']})", file=out)
    print(f"winner: {w}{how}   game time {fmt_time(summary['game_time_s'])}   "
          f"({steps} steps in {wall_s:.1f}s wall, {steps / max(wall_s, 1e-9):.0f} steps/s)", file=out)
    print(f"\n{'team':<8} {'towers':>6} {'barracks':>8} {'shrines':>7} {'kills':>5}   (destroyed / killed by the team)",
          file=out)
    for team in ("radiant", "dire"):
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
         replay_path: str | None = None, progress: bool = True) -> dict:
    from app.env.moba_env import MobaEnv
    from app.game.constants import MAP_SIZE, TEAM_NAMES, UNIT_TYPE_NAMES

    env = MobaEnv({"mode": mode, "seed": seed, "evaluation": evaluation, "time_limit_s": float(time_limit_s)})
    agents = {"radiant": make_agent(radiant, seed), "dire": make_agent(dire, seed + 1)}
    ids = {team: [a for a in env.possible_agents if a.startswith(team + "_")] for team in TEAM_NAMES}
    obs, _ = env.reset(seed=seed)
    game = env.game
    for team in TEAM_NAMES:
        reset_agent(agents[team], env, ids[team])

    replay = open(replay_path, "w") if replay_path else None
    try:
        if replay:
            header = {"mode": mode, "lineup": list(game.setup.lineup), "unit_types": list(UNIT_TYPE_NAMES),
                      "teams": list(TEAM_NAMES), "map_size": MAP_SIZE, "frameskip": game.frameskip, "seed": seed,
                      "agents": {"radiant": radiant, "dire": dire}}
            replay.write(json.dumps(header) + "\n")
            replay.write(json.dumps(game.replay_record()) + "\n")
        last_second = 0
        next_progress = PROGRESS_EVERY_S
        steps = 0
        t0 = time.perf_counter()
        done = False
        while not done:
            actions = {}
            for team in TEAM_NAMES:
                team_obs = {a: obs[a] for a in ids[team]}
                acts = agents[team].act(team_obs)
                stray = [a for a in acts if a not in team_obs]
                if stray:
                    raise RuntimeError(f"{team} agent returned actions for other agents: {stray}")
                actions.update(acts)
            obs, _, term, trunc, _ = env.step(actions)
            steps += 1
            done = term["__all__"] or trunc["__all__"]
            if replay and (int(game.time + 1e-6) > last_second or done):
                last_second = int(game.time + 1e-6)
                replay.write(json.dumps(game.replay_record()) + "\n")
            if progress and game.time >= next_progress - 1e-6:
                next_progress += PROGRESS_EVERY_S
                print(progress_line(game), file=sys.stderr, flush=True)
        wall = time.perf_counter() - t0
    finally:
        if replay:
            replay.close()
    summary = game.summary()
    summary.update({"agents": {"radiant": radiant, "dire": dire}, "seed": seed, "evaluation": evaluation,
                    "steps": steps, "wall_time_s": round(wall, 2)})
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", default="5v5", choices=["5v5", "1v1"])
    ap.add_argument("--radiant", default="scripted", help="agent name (built in: noop; else policies.agents)")
    ap.add_argument("--dire", default="random", help="agent name (built in: noop; else policies.agents)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replay", metavar="FILE", help="write the game as JSON lines to FILE")
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

    summary = play(args.mode, args.radiant, args.dire, args.seed, evaluation=args.evaluation,
                   time_limit_s=args.time_limit, replay_path=args.replay, progress=not args.quiet)
    print_summary(summary, summary["agents"], summary["wall_time_s"], summary["steps"])
    if args.replay:
        print(f"\nreplay written to {args.replay}")
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
