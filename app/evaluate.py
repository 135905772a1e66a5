"""Plays one agent against another over several games, both sides, and can keep every game as a replay.

    python -m app.evaluate --agent results/<run>/<trial>/checkpoint_000003 --opponent scripted --mode 1v1 \\
        [--games 4] [--time-limit S] [--seed 0] [--greedy] [--workers 1] [--replay-dir DIR [--replay-every S] [--html]]
        [--randomize all|KEY,...] [--lineup HERO,...] [--start-state YAML] [--mask-actions NAME,...]
        [--consumable-filters]

An agent is a name of ``policies.agents.by_name.AGENTS`` ("scripted", "random", "noop", the ladder's levels) or a
checkpoint, ``model:PATH`` or PATH (an algorithm checkpoint, an RLModule directory or a shipped model ``models/X``;
its actions are sampled as in training unless ``--greedy``): ``policies.league.references.agent_path`` parses it. The
games are a series (``policies/league/series.py``): the agent plays Radiant in even games and Dire in odd ones, in
evaluation mode (no randomization), game g with seed ``--seed + g``. Prints a line per game and a JSON summary
last: wins, draws, losses, the win rate (outright wins), the objective win rate (a capped game counts as won by the
team that destroyed more buildings, then killed more heroes: the rule training and rating use) and the points win
rate (a capped game won by the team with the higher raw return; policies/league/ratings.game_score), the agent's
consumables (gold spent on them, charges used, town portal scrolls cast and finished: a move or an attack during the
3 s channel cancels a scroll already spent), the results by the agent's side and by its heroes (``by_hero``:
evaluation games give each side its fixed lineup, so the two are one figure unless ``--randomize lineup`` or
``--lineup``), the replays and the pages written.

``--lineup HERO,...`` names the heroes, Radiant's then Dire's (``marksman,marksman``: the agent plays marksman on
both sides), in place of the evaluation lineup (the pool's first heroes: blademaster and marksman in 1v1).

``--start-state '{destroyed: [tower_mid_1, tower_mid_2], distance: 800, level: 10}'`` plays every game from a late
start around the agent (the env config's ``start_state``, moba/env/start_state.py): the opponent's named buildings
down, the agent's heroes ``distance`` units from the opponent's ancient, every hero at ``level``; ``share`` is 1
unless given. A reverse curriculum's stage is measured with it: can the agent finish from there?

``--randomize`` plays training's games instead: the named randomizations on (``all``, or keys of
``moba.env.config.RANDOMIZATION_KEYS``: hero stats, lineup, item builds and skill orders, ...), no evaluation jitter.
``first_game_length`` is not one of them: it would cut every game short (``all`` leaves it off since 2026-12-06;
before, every game of ``--randomize all`` ended at a random 5-100% of its time limit).
A gap between the two win rates is what the randomizations change for the matchup (the full bot's designed item
builds, its fixed heroes).

``--mask-actions NAME,...`` plays the agent (not its opponent) with those primary actions (names of
``moba.env.actions.PRIMARY_NAMES``: ``item_healing_salve,item_clarity``) out of its action mask
(policies/agents/masked_actions.py): what it does without them. ``--consumable-filters`` plays the games with the
env's consumables' need filters on (the env config's ``consumable_filters``, moba/env/actions.py ``need_filters``: a
salve or clarity only when it can do its work, a scroll only toward a far building and not cancelled by the hero's
own next order), for both sides, as an agent trained with them played.

``--replay-dir DIR`` writes each game's replay to ``DIR/game<g>_<agent>_vs_<opponent>.jsonl`` (moba/env/replay_file.py:
with a checkpoint, its heroes' win probability and actions are in it), one record every ``--replay-every`` game
seconds; ``--html`` also writes each replay's page (``python -m app.replay``) next to it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

from moba.game.teams import MODE_1V1, MODES, TEAM_NAMES, enemy_side, side_of_game
from training.cli import user_errors


# the fights and the push of a game record or a summary: the agent's side's, then the opponent's
FIGHT_KEYS = ("kills", "kills_lost", "buildings", "buildings_lost")


# the agent's side's consumables in a game record or a summary (Game.summary()'s per-hero counts, summed over its
# heroes): gold spent on them, charges used, town portal scrolls cast and those whose channel finished
CONSUMABLE_KEYS = ("consumables_gold", "consumables_used", "scrolls_cast", "scrolls_finished")


def consumables_text(r: dict) -> str:
    """"consumables 1,230 gold (14 used), scrolls 3 of 5 finished" of a game record or a summary."""
    return (f"consumables {r['consumables_gold']:,.0f} gold ({r['consumables_used']} used), scrolls "
            f"{r['scrolls_finished']} of {r['scrolls_cast']} finished")


def fights_text(r: dict) -> str:
    """"kills 5-7, buildings 2-1" of a game record or a summary (FIGHT_KEYS)."""
    return f"kills {r['kills']}-{r['kills_lost']}, buildings {r['buildings']}-{r['buildings_lost']}"


def agent_label(name: str) -> str:
    """A file-name-safe short name of an agent: its name, or a checkpoint's directory name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(os.path.normpath(name)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agent", required=True, help="agent name or checkpoint path (the agent evaluated)")
    p.add_argument("--opponent", default="scripted", help="agent name or checkpoint path (default: scripted)")
    p.add_argument("--mode", default=MODE_1V1, choices=list(MODES))
    p.add_argument("--games", type=int, default=4, help="games, alternating sides (default 4)")
    p.add_argument("--time-limit", type=float, default=0.0, metavar="S",
                   help="game time limit in seconds (0 = the mode's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--greedy", action="store_true",
                   help="checkpoint agents play their most likely actions (default: sampled, as in training)")
    p.add_argument("--replay-dir", metavar="DIR", help="write every game's replay to DIR")
    p.add_argument("--replay-every", type=float, default=1.0, metavar="S",
                   help="game seconds between replay records (default 1)")
    p.add_argument("--html", action="store_true", help="with --replay-dir: also write each replay's HTML page")
    p.add_argument("--workers", type=int, default=1, help="processes playing the games (default 1)")
    p.add_argument("--randomize", metavar="all|KEY,...",
                   help="play training games: these randomizations on, no evaluation jitter (default: evaluation "
                        "games)")
    p.add_argument("--lineup", metavar="HERO,...",
                   help="the heroes, Radiant's then Dire's (default: the evaluation lineup, the first heroes of the "
                        "pool: blademaster and marksman in 1v1)")
    p.add_argument("--start-state", metavar="YAML",
                   help="every game starts late around the agent: a mapping of the env's start_state keys (share, "
                        "destroyed, distance, level; share 1 unless given)")
    p.add_argument("--mask-actions", metavar="NAME,...",
                   help="the agent plays with these primary actions masked out (e.g. item_healing_salve,item_clarity)")
    p.add_argument("--consumable-filters", action="store_true",
                   help="the env's consumables' need filters on, for both sides (env config consumable_filters)")
    args = p.parse_args(argv)
    if args.mask_actions is not None:
        from policies.agents.masked_actions import blocked_primary
        try:
            args.mask_actions = blocked_primary([n.strip() for n in args.mask_actions.split(",") if n.strip()])
        except ValueError as e:
            p.error(f"--mask-actions {args.mask_actions!r}: {e}")
    if args.start_state is not None:
        try:
            args.start_state = start_state_setting(args.start_state, args.mode)
        except ValueError as e:
            p.error(f"--start-state {args.start_state!r}: {e}")
    if args.randomize is not None:
        try:
            args.randomize = randomize_setting(args.randomize)
        except ValueError as e:
            p.error(f"--randomize {args.randomize!r}: {e}")
    if args.lineup is not None:
        from moba.env.config import EnvConfig
        args.lineup = [h.strip() for h in args.lineup.split(",")]
        try:
            EnvConfig.from_dict({"mode": args.mode, "lineup": args.lineup})
        except ValueError as e:
            p.error(f"--lineup {','.join(args.lineup)!r}: {e}")
        if args.randomize and args.randomize.get("lineup"):
            p.error("--lineup and --randomize with lineup: the lineup would be drawn per game; give one of them")
    if args.games < 1:
        p.error("--games must be >= 1")
    if args.workers < 1:
        p.error("--workers must be >= 1")
    if args.time_limit < 0:
        p.error("--time-limit must be >= 0")
    if args.replay_every <= 0:
        p.error("--replay-every must be > 0")
    if args.html and not args.replay_dir:
        p.error("--html needs --replay-dir")
    return args


# not a randomization of the game: it cuts an env's first game at a random point of its time limit (so that parallel
# training envs do not play in lockstep), and every game of a series is its env's first (a seeded reset replays it)
NOT_PLAYED = "first_game_length"


def randomize_setting(text: str) -> dict:
    """--randomize's value (all, or a comma list of keys) -> the env's ``randomize`` mapping, every key not named off;
    "all" is every key but first_game_length, which is refused (NOT_PLAYED). EnvConfig's own check names an unknown
    key and the allowed ones."""
    from moba.env.config import RANDOMIZATION_KEYS, EnvConfig
    played = [k for k in RANDOMIZATION_KEYS if k != NOT_PLAYED]
    named = played if text == "all" else [k for k in text.split(",") if k]
    if not named:
        raise ValueError(f"name at least one key: all or a comma list of {played}")
    if NOT_PLAYED in named:
        raise ValueError(f"{NOT_PLAYED} would cut every game at a random point of its time limit (each game of a "
                         f"series is its env's first); the keys played: {played}")
    setting = {**{k: False for k in RANDOMIZATION_KEYS}, **{k: True for k in named}}
    EnvConfig.from_dict({"randomize": setting})
    return setting


def start_state_setting(text: str, mode: str) -> dict:
    """--start-state's value (a YAML mapping) -> the env's ``start_state``, every game's unless ``share`` is given;
    EnvConfig's own check names a bad key or value and the allowed ones."""
    import yaml
    from moba.env.config import EnvConfig
    try:
        setting = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"not a YAML mapping: {e}") from None
    if not isinstance(setting, dict):
        raise ValueError(f"must be a mapping of the env's start_state keys, got {setting!r}")
    setting = {"share": 1.0, **setting}
    return EnvConfig.from_dict({"mode": mode, "start_state": setting}).start_state


def env_games(args) -> dict:
    """The env settings of the games: evaluation games, or with --randomize training's with those randomizations;
    --lineup's heroes; --start-state's late start; --consumable-filters."""
    setting = getattr(args, "randomize", None)
    extra = {"lineup": args.lineup} if getattr(args, "lineup", None) else {}
    if getattr(args, "consumable_filters", False):
        extra["consumable_filters"] = True
    if getattr(args, "start_state", None):
        extra["start_state"] = {**args.start_state, "destroyed": list(args.start_state["destroyed"])}
    return {"evaluation": False, "randomize": setting, **extra} if setting else {"evaluation": True, **extra}


def play_games(args, games: list) -> list:
    """Plays the games with the given indices of the series (policies/league/series.py: game g, the agent plays
    side_of_game(g), seed args.seed + g); returns a result dict per game. Each call loads the agents once."""
    from moba.env.moba_env import MobaEnv
    from moba.env.replay_file import ReplayWriter, read_replay
    from app.replay import page_path, write_page
    from policies.league.references import agent_maker
    from policies.league.series import one_torch_thread, play_series

    one_torch_thread()
    env = MobaEnv({"mode": args.mode, "time_limit_s": args.time_limit, "seed": args.seed, **env_games(args),
                   **agents_layout(args)})
    make_agent, make_opponent = (agent_maker(a, not args.greedy, env, flag)
                                 for a, flag in ((args.agent, "--agent"), (args.opponent, "--opponent")))
    if getattr(args, "mask_actions", None):
        from policies.agents.masked_actions import MaskedActions
        make_plain = make_agent
        make_agent = lambda seed: MaskedActions(make_plain(seed), args.mask_actions)  # noqa: E731
    labels = agent_label(args.agent), agent_label(args.opponent)
    if args.replay_dir:
        os.makedirs(args.replay_dir, exist_ok=True)
    writers = {}

    def watch(g, players):
        if not args.replay_dir:
            return None
        side = side_of_game(g)
        path = os.path.join(args.replay_dir, f"game{g}_{labels[0]}_vs_{labels[1]}.jsonl")
        writers[g] = ReplayWriter(path, {side: labels[0], enemy_side(side): labels[1]}, args.seed + g,
                                  args.replay_every, players)
        return writers[g].on_step

    out = []
    for r in play_series(env, lambda g: make_agent(args.seed + g), lambda g: make_opponent(args.seed + g + args.games),
                         games, args.seed, watch, attacker=bool(getattr(args, "start_state", None))):
        # the series record (policies/league/series.py), its game summary replaced by the agent's heroes
        own = [h for h in r["summary"]["heroes"] if h["team"] == r["side"]]
        result = {**{k: v for k, v in r.items() if k != "summary"}, "heroes": [h["hero"] for h in own],
                  **{k: sum(h[k] for h in own) for k in CONSUMABLE_KEYS}, "replay": None, "page": None}
        writer = writers.pop(r["game"], None)
        if writer:
            result["replay"] = writer.path
            if args.html:
                result["page"] = write_page(*read_replay(writer.path), page_path(writer.path))
        out.append(result)
    return out


def agents_layout(args) -> dict:
    """The games' observation layout: a checkpoint agent's own (its unit rows and observation groups, read from its
    observation space: a surgered agent plays in the layout it was trained in; references.agents_layout)."""
    from policies.league.references import agents_layout as layout
    return layout([(args.agent, "--agent"), (args.opponent, "--opponent")])


def check_agents(args) -> None:
    """--agent and --opponent parsed, and their observation layouts found to agree, before any game or worker starts
    (a ValueError names the flag)."""
    from policies.league.references import agent_path
    agent_path(args.agent, "--agent")
    agent_path(args.opponent, "--opponent")
    agents_layout(args)


def tally(results: list) -> dict:
    """Games, outright wins and wins on the objective in these results of play_games (none: zeros)."""
    from policies.league.series import summarize_series
    s = summarize_series(results) if results else {"games": 0, "outright_wins": 0, "objective_wins": 0}
    return {"games": s["games"], "wins": s["outright_wins"], "objective_wins": s["objective_wins"]}


def evaluate(args, log=print) -> dict:
    """All of args.games games, in args.workers processes (each loads the agents once)."""
    check_agents(args)
    labels = agent_label(args.agent), agent_label(args.opponent)
    workers = max(1, min(getattr(args, "workers", 1), args.games))
    if workers == 1:
        results = play_games(args, list(range(args.games)))
    else:
        from policies.league.series import game_pool
        with game_pool(workers) as pool:
            parts = pool.map(play_games, [args] * workers, [list(range(k, args.games, workers))
                                                             for k in range(workers)])
            results = sorted((r for part in parts for r in part), key=lambda r: r["game"])
    for r in results:
        log(f"game {r['game'] + 1}/{args.games}: {labels[0]} as {r['side']} ({', '.join(r['heroes'])}) vs {labels[1]}: "
            f"winner {r['winner']} at {r['game_time_s'] / 60:.1f} min, reward margin {r['margin']:+.2f}, "
            f"{fights_text(r)}, {consumables_text(r)}"
            + (f", replay {r['replay']}" if r["replay"] else ""))
    from policies.league.series import summarize_series
    s = summarize_series(results)  # a capped game is not won outright: "draw", the rule's default
    by_side = {}  # an agent that plays one side only (its moves in the map's frame) shows here
    for side in TEAM_NAMES:
        by_side.update({f"{k}_as_{side}": v for k, v in tally([r for r in results if r["side"] == side]).items()})
    # by the agent's heroes: evaluation games fix each side's lineup, so a side's figure is also its heroes'; with
    # --randomize lineup or --lineup the two come apart
    by_hero = {hero: tally([r for r in results if hero in r["heroes"]])
               for hero in sorted({h for r in results for h in r["heroes"]})}
    start = getattr(args, "start_state", None)
    return {"agent": args.agent, "opponent": args.opponent, "mode": args.mode, "games": s["games"],
            "start_state": {**start, "destroyed": list(start["destroyed"])} if start else None,
            "consumable_filters": bool(getattr(args, "consumable_filters", False)),
            "wins": s["outright_wins"], "draws": s["draws"], "losses": s["losses"], "win_rate": s["outright_win_rate"],
            "points_win_rate": s["points_win_rate"], "objective_win_rate": s["objective_win_rate"],
            **{k: sum(r[k] for r in results) for k in FIGHT_KEYS + CONSUMABLE_KEYS},  # summed over the games
            **by_side,
            "by_hero": by_hero,
            "replays": [r["replay"] for r in results if r["replay"]],
            "pages": [r["page"] for r in results if r["page"]]}


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    summary = evaluate(args)
    print(f"\n{summary['agent']} vs {summary['opponent']}: {summary['wins']} wins, {summary['draws']} draws, "
          f"{summary['losses']} losses in {summary['games']} games (objective win rate "
          f"{summary['objective_win_rate']:.0%}: a capped game won on buildings, then hero kills; points win rate "
          f"{summary['points_win_rate']:.0%}); {fights_text(summary)}; {consumables_text(summary)}; won as radiant "
          f"{summary['wins_as_radiant']} of {summary['games_as_radiant']}, as dire {summary['wins_as_dire']} of "
          f"{summary['games_as_dire']}; by hero "
          + ", ".join(f"{hero} {h['wins']} of {h['games']}" for hero, h in summary["by_hero"].items()))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
