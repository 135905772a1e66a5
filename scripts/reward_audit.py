"""Reward audit: the post-processed return that each player of the ladder collects against each ladder level, signal
by signal. A reward that training can climb pays more to a stronger player: against every opponent, the mean return
must rise with the player's level (noop < scripted_1 < scripted_2 < scripted_3).

    python scripts/reward_audit.py --config tune_configs/hok_1v1_kickstart.yaml --seeds 10
    python scripts/reward_audit.py --preset hok_2022 --mode 5v5 --seeds 10 --workers 2 --out results/reward_audit

The reward is a run config's (--config: env.reward_preset, env.reward_weights, reward.zero_sum, reward.time_decay,
and the team spirit schedule's value at iteration 0) or a preset's with a run config's defaults (--preset). It is
post-processed as training does (moba/env/reward_wrapper.py: time decay, team spirit, zero sum), without reward
normalization, so the return is in reward units. A game's return is the player's team's post-processed reward summed
over the game's steps and the team's heroes, undiscounted; each signal's part is that signal's weighted reward
post-processed alone (the post-processing is linear), so the parts add up to the return and, with zero sum on, are
zero-summed like it. With a no-op penalty (``reward.noop_penalty``, or --noop-penalty) the part ``noop_penalty`` is
what the team's no-ops cost it (per no-op while the hero could act, as moba/env/reward_wrapper.py charges it: not
zero-summed, not decayed).

Each matchup (player, opponent) plays --seeds seeds on both sides: the player plays Radiant in game 2s and Dire in
game 2s + 1 (sides alternating as policies/league/series.py does), both games reset with seed ``--seed + s``, in
training-mode envs (training's randomizations on but the first game's shortened length; the game stream of env
runner 0's first env: a game replays for its seed).
Games are --time-limit s long (600 in 1v1, 300 in 5v5) unless an ancient falls. Games run in --workers processes.

Prints a line per matchup (mean return +- standard error over its games, outright wins and losses, the signals
that contribute most), the table player x opponent, the order check per opponent (the players are taken weakest
first: does the mean return rise along them? the pairs that break it), and a JSON line last with the table and the
check. --out DIR writes games.csv (a row per game: player, opponent, side, seed, return, opponent_return, each
signal's part, winner, game_time_s, buildings, buildings_lost), table.md (the table and the check) and audit.json
(the JSON line).
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402
from ray.rllib.utils.annotations import override  # noqa: E402

from moba.env.actions import able_to_act, noops_while_able, primaries_of  # noqa: E402
from moba.env.reward_wrapper import wrap  # noqa: E402
from moba.env.rewards import (DEFAULT_PRESET, REWARD_PRESETS, SIGNALS, TIME_DECAY_BASE,  # noqa: E402
                              TIME_DECAY_PERIOD_S, postprocess_rewards, reward_weights)
from moba.game.constants import DEFAULT_FRAMESKIP  # noqa: E402
from moba.game.teams import MODE_1V1, MODE_5V5, MODES, NO_WINNER, TEAM_NAMES, side_of_agent, side_of_game  # noqa: E402
from policies.agents.by_name import make_agent  # noqa: E402
from policies.agents.ladder import LADDER  # noqa: E402
from training import run_config  # noqa: E402
from training.cli import user_errors  # noqa: E402
from training.schedules import schedule_values  # noqa: E402

SEED = 8_000_000  # seeds of these games: apart from training's, the evaluations' (1,000,000), the cards' (2,000,000)
PLAYERS = ("noop", *LADDER[1:])  # weakest first: the order the return must rise in
OPPONENTS = LADDER
DEFAULT_TIME_LIMIT_S = {MODE_1V1: 600.0, MODE_5V5: 300.0}
TOP_SIGNALS = 3  # the signals named on a matchup's line
WIN_SIGNAL = SIGNALS.index("win")
NOOP_PART = "noop_penalty"  # the return's part that the no-op penalty takes
PARTS = (*SIGNALS, NOOP_PART)
CSV_FIELDS = ("player", "opponent", "side", "seed", "return", "opponent_return", *PARTS, "winner", "game_time_s",
              "buildings", "buildings_lost", "kills", "kills_lost")


# ---- the reward ----------------------------------------------------------------------------------------------------
def audit_reward(config: str | None = None, preset: str | None = None) -> dict:
    """The reward settings audited: those of the run config at path `config`, or the defaults of a run config with
    reward preset `preset` (DEFAULT_PRESET when neither is given). A plain dict (it goes to worker processes):
    reward_preset, reward_weights, zero_sum, time_decay, team_spirit (the schedule's value at iteration 0),
    noop_penalty and mode (the config's env mode)."""
    if config is not None and preset is not None:
        raise ValueError("give --config or --preset, not both")
    if config is not None:
        settings = run_config.load(config)
    else:
        preset = DEFAULT_PRESET if preset is None else preset
        if preset not in REWARD_PRESETS:
            raise ValueError(f"--preset {preset!r}: unknown; allowed: {sorted(REWARD_PRESETS)}")
        settings = run_config.validate({"env": {"reward_preset": preset}})
    d = settings.to_dict() if hasattr(settings, "to_dict") else settings  # a RunSettings, or the plain dicts
    env, reward = d["env"], d["reward"]
    frameskip = int(env.get("frameskip", DEFAULT_FRAMESKIP))
    return {"reward_preset": env.get("reward_preset", DEFAULT_PRESET),
            "reward_weights": dict(env.get("reward_weights", {})),
            "zero_sum": bool(reward["zero_sum"]), "time_decay": bool(reward["time_decay"]),
            "team_spirit": float(schedule_values(d["schedules"], 0, 0, frameskip)["team_spirit"]),
            "noop_penalty": float(reward["noop_penalty"]), "mode": env.get("mode", MODE_5V5)}


class AuditEnv(MultiAgentEnv):
    """The env of an audit game: a MobaEnv whose weights are all 1, so that its ``reward_signals`` are the signals'
    raw quantities, and which sums them per hero over the game, undecayed (``raw``) and scaled by eq. 11's time
    decay at each step (``decayed``), heroes x SIGNALS, and counts each hero's no-ops while its action mask offered
    more (``noops``). The game itself does not depend on the reward (the players are fixed agents), so one game's
    sums score it under any reward (score_game); ``game`` is the MobaEnv's."""

    def __init__(self, env):
        super().__init__()
        wrap(self, env)
        self.raw = np.zeros((len(self.possible_agents), len(SIGNALS)))
        self.decayed = np.zeros_like(self.raw)
        self.noops = np.zeros(len(self.possible_agents))
        self._able = {}

    @property
    def game(self):
        return self.env.game

    @override(MultiAgentEnv)
    def reset(self, *, seed=None, options=None):
        self.raw[:] = 0.0
        self.decayed[:] = 0.0
        self.noops[:] = 0.0
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = self.env.agents
        self._remember_masks(obs)
        return obs, infos

    def _remember_masks(self, obs: dict):
        self._able = able_to_act([obs[a] for a in self.possible_agents])

    @override(MultiAgentEnv)
    def step(self, action_dict):
        ids = self.possible_agents
        self.noops += noops_while_able(primaries_of(action_dict, ids), self._able)
        obs, rewards, terms, truncs, infos = self.env.step(action_dict)
        self._remember_masks(obs)
        signals = np.array([[infos[a]["reward_signals"][k] for k in SIGNALS] for a in ids])
        self.raw += signals
        self.decayed += signals * TIME_DECAY_BASE ** (infos[ids[0]]["game_time_s"] / TIME_DECAY_PERIOD_S)
        self.agents = self.env.agents
        return obs, rewards, terms, truncs, infos


_ENVS: dict = {}  # per process: the AuditEnv of each (mode, time limit)
UNIT_WEIGHTS = {k: 1.0 for k in SIGNALS}  # the audit env's weights: its signals are the raw quantities


def audit_env(mode: str, time_limit_s: float) -> AuditEnv:
    from moba.env.moba_env import MobaEnv
    key = (mode, time_limit_s)
    if key not in _ENVS:
        # training's randomizations but the first game's length: every game here is its env's first (a seeded
        # reset), and each must run to the time limit
        base = MobaEnv({"mode": mode, "time_limit_s": time_limit_s, "reward_weights": UNIT_WEIGHTS,
                        "randomize": {"first_game_length": False}})
        base.set_seed_stream(0, 0)  # a game is decided by its seed, in any process
        _ENVS[key] = AuditEnv(base)
    return _ENVS[key]


def game_key(mode: str, player: str, opponent: str, game: int, seed: int, time_limit_s: float) -> str:
    """What decides an audit game (its entry in a --games file)."""
    return f"{mode}|{player}|{opponent}|{game}|{seed}|{float(time_limit_s):g}"


def play_signal_game(mode: str, player: str, opponent: str, game: int, seed: int, time_limit_s: float) -> dict:
    """Game `game` of the matchup `player` against `opponent`: the player plays side_of_game(game), the env is reset
    with seed ``seed + game // 2``, the agents are seeded with seed + 2 game and seed + 2 game + 1. The game as the
    audit keeps it: who played, the outcome (winner, game time, buildings and hero kills of each side) and, per
    hero, the raw signal sums (``raw``, ``decayed``: lists heroes x SIGNALS) and whether it is the player's."""
    from policies.league.series import play_series_game
    env = audit_env(mode, time_limit_s)
    side = side_of_game(game)
    env_seed = seed + game // 2
    record = play_series_game(env, make_agent(player, seed + 2 * game, "--players"),
                              make_agent(opponent, seed + 2 * game + 1, "--opponents"), side, env_seed, game)
    return {"key": game_key(mode, player, opponent, game, seed, time_limit_s), "player": player,
            "opponent": opponent, "side": side, "seed": env_seed, "winner": record["winner"],
            "game_time_s": record["game_time_s"], "buildings": record["buildings"],
            "buildings_lost": record["buildings_lost"], "kills": record["kills"], "kills_lost": record["kills_lost"],
            "mine": [bool(side_of_agent(a) == side) for a in env.possible_agents],
            "team_of": [int(t) for t in team_of_agent_ids(env.possible_agents)],
            "raw": env.raw.tolist(), "decayed": env.decayed.tolist(), "noops": env.noops.tolist()}


def team_of_agent_ids(ids) -> np.ndarray:
    from moba.game.teams import team_of_agent
    return np.array([team_of_agent(a) for a in ids])


def score_game(game: dict, reward: dict) -> dict:
    """The CSV row of an audit game under `reward` (audit_reward's dict): the player's team's return (its heroes'
    post-processed rewards summed over the game), the opponent's, and each signal's part of the player's return
    (the signal's weighted reward post-processed alone). The post-processing (moba/env/rewards.postprocess_rewards)
    is linear in the rewards, so it applies to the game's sums as to each step's rewards: the time decay of each
    step is in ``decayed``. The no-op penalty is each hero's own, undecayed: its count of no-ops times the penalty."""
    w = reward_weights(reward["reward_preset"], reward["reward_weights"])
    raw, decayed = np.asarray(game["raw"]), np.asarray(game["decayed"])
    team_of, mine = np.asarray(game["team_of"]), np.asarray(game["mine"], bool)
    zero = np.zeros(len(team_of))
    parts = np.zeros_like(raw)
    for k in range(len(SIGNALS)):
        if w[k] == 0.0:
            continue
        col = w[k] * (decayed[:, k] if reward["time_decay"] and k != WIN_SIGNAL else raw[:, k])
        rest, win = (zero, col) if k == WIN_SIGNAL else (col, zero)
        parts[:, k] = postprocess_rewards(rest, win, team_of, reward["team_spirit"], 0.0,
                                          zero_sum=reward["zero_sum"], time_decay_base=1.0)
    penalty = reward.get("noop_penalty", 0.0)
    if penalty and "noops" not in game:
        raise ValueError(f"--games: game {game['key']!r} was played before the audit counted no-ops; play it again "
                         f"(a new --games file) to score a no-op penalty")
    noop = -penalty * np.asarray(game.get("noops", zero), np.float64)
    returns = parts.sum(axis=1) + noop
    return {"player": game["player"], "opponent": game["opponent"], "side": game["side"], "seed": game["seed"],
            "return": float(returns[mine].sum()), "opponent_return": float(returns[~mine].sum()),
            **{k: float(v) for k, v in zip(SIGNALS, parts[mine].sum(axis=0))}, NOOP_PART: float(noop[mine].sum()),
            "winner": game["winner"],
            "game_time_s": game["game_time_s"], "buildings": game["buildings"],
            "buildings_lost": game["buildings_lost"], "kills": game["kills"], "kills_lost": game["kills_lost"]}


def play_audit_game(mode: str, reward: dict, player: str, opponent: str, game: int, seed: int,
                    time_limit_s: float) -> dict:
    """Game `game` of the matchup `player` against `opponent` (play_signal_game), scored under `reward`: its CSV
    row."""
    return score_game(play_signal_game(mode, player, opponent, game, seed, time_limit_s), reward)


def load_games(path: str | None) -> dict:
    """The games of a --games file (JSON lines, one game of play_signal_game a line) by key; none for a missing
    file."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {g["key"]: g for g in map(json.loads, filter(str.strip, f))}


# ---- the summary ---------------------------------------------------------------------------------------------------
def matchup_stats(rows: list) -> dict:
    """Mean return, its standard error (0 with one game), games, the player's outright wins and losses (an ancient
    destroyed), and the mean part of each signal, over one matchup's game rows."""
    returns = np.array([r["return"] for r in rows])
    n = len(rows)
    se = float(returns.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    return {"mean": float(returns.mean()), "se": se, "games": n,
            "wins": sum(r["winner"] == r["side"] for r in rows),
            "losses": sum(r["winner"] not in (r["side"], NO_WINNER) for r in rows),
            "parts": {k: float(np.mean([r[k] for r in rows])) for k in PARTS}}


def top_signals(parts: dict, n: int = TOP_SIGNALS) -> list:
    """The `n` signals with the largest mean part in magnitude, [(signal, part)], largest first; parts under 0.005
    (0.00 printed; a mirror matchup's cancel) left out."""
    ranked = sorted(((k, v) for k, v in parts.items() if abs(v) >= 0.005), key=lambda kv: -abs(kv[1]))
    return ranked[:n]


def matchup_line(player: str, opponent: str, stats: dict) -> str:
    tops = ", ".join(f"{k} {v:+.2f}" for k, v in top_signals(stats["parts"])) or "no signal (the parts cancel)"
    return (f"{player} vs {opponent}: return {stats['mean']:+.2f} +- {stats['se']:.2f} over {stats['games']} games, "
            f"{stats['wins']} won and {stats['losses']} lost outright; most from: {tops}")


def order_check(means: dict, players, opponents) -> dict:
    """Does the mean return rise with the player's level against each opponent? `means[player][opponent]` is a
    matchup's mean return, `players` are weakest first. Per opponent: "holds" (every stronger player's mean above
    every weaker one's) and "broken", the pairs that break it: [weaker, stronger, weaker's mean, stronger's mean]
    for every weaker player listed before a stronger one whose mean is not above it. "holds" overall: for every
    opponent."""
    out = {}
    for opp in opponents:
        broken = [[a, b, means[a][opp], means[b][opp]]
                  for i, a in enumerate(players) for b in players[i + 1:] if not means[b][opp] > means[a][opp]]
        out[opp] = {"holds": not broken, "broken": broken}
    return {"holds": all(v["holds"] for v in out.values()), "by_opponent": out}


def order_lines(check: dict, players) -> list:
    lines = [f"order check ({' < '.join(players)}): {'holds' if check['holds'] else 'BROKEN'}"]
    for opp, c in check["by_opponent"].items():
        if c["holds"]:
            lines.append(f"  against {opp}: holds")
        else:
            pairs = "; ".join(f"{a} {ma:+.2f} >= {b} {mb:+.2f}" for a, b, ma, mb in c["broken"])
            lines.append(f"  against {opp}: broken by {pairs}")
    return lines


def markdown_table(table: dict, players, opponents) -> str:
    """The table player x opponent, each cell the mean return +- its standard error, as markdown."""
    lines = ["| player \\ opponent | " + " | ".join(opponents) + " |", "|---" * (len(opponents) + 1) + "|"]
    for p in players:
        cells = [f"{table[p][o]['mean']:+.2f} ± {table[p][o]['se']:.2f}" for o in opponents]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_out(out_dir: str, rows: list, table_md: str, check_lines: list, result: dict) -> None:
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "games.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table_md + "\n\n" + "\n".join(check_lines) + "\n")
    with open(os.path.join(out_dir, "audit.json"), "w") as f:
        json.dump(result, f, indent=1)


# ---- the command ---------------------------------------------------------------------------------------------------
def names(text: str) -> list:
    return [x.strip() for x in text.split(",") if x.strip()]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", help="a run config (tune_configs/X.yaml) whose reward is audited")
    src.add_argument("--preset", help=f"a reward preset, {sorted(REWARD_PRESETS)}, with a run config's defaults "
                                      f"(default {DEFAULT_PRESET})")
    p.add_argument("--mode", choices=list(MODES), help="the game mode (default: the config's env.mode; 1v1 with "
                                                       "--preset)")
    p.add_argument("--players", type=names, default=list(PLAYERS),
                   help=f"agent names, weakest first (default {','.join(PLAYERS)})")
    p.add_argument("--opponents", type=names, default=list(OPPONENTS),
                   help=f"agent names (default {','.join(OPPONENTS)})")
    p.add_argument("--seeds", type=int, default=10, help="seeds per matchup, each played on both sides (default 10)")
    p.add_argument("--time-limit", type=float, default=None,
                   help=f"game time limit in s (default {DEFAULT_TIME_LIMIT_S[MODE_1V1]:.0f} in 1v1, "
                        f"{DEFAULT_TIME_LIMIT_S[MODE_5V5]:.0f} in 5v5)")
    p.add_argument("--workers", type=int, default=1, help="processes playing games (default 1)")
    p.add_argument("--seed", type=int, default=SEED, help=f"seed of the first games (default {SEED})")
    p.add_argument("--out", help="a folder for games.csv, table.md and audit.json")
    p.add_argument("--games", help="a JSON-lines file of played games (their signal sums): the games it holds are "
                                   "scored from it, not played again, and the games played are added to it. A game "
                                   "does not depend on the reward, so one file scores any reward")
    p.add_argument("--weights", type=json.loads, default=None,
                   help="reward weights over the config's or preset's, as JSON: '{\"health\": 1.0}'")
    p.add_argument("--zero-sum", choices=("on", "off"), default=None,
                   help="zero sum on or off, over the config's or preset's")
    p.add_argument("--noop-penalty", type=float, default=None,
                   help="a no-op penalty over the config's (reward.noop_penalty; default 0): per no-op of a hero that "
                        "could act")
    args = p.parse_args(argv)
    if args.weights is not None and not isinstance(args.weights, dict):
        p.error(f"--weights must be a JSON object, got {args.weights!r}")
    if args.seeds < 1 or args.workers < 1:
        p.error("--seeds and --workers must be >= 1")
    if args.noop_penalty is not None and not args.noop_penalty >= 0:
        p.error(f"--noop-penalty must be >= 0, got {args.noop_penalty}")
    if args.time_limit is not None and not args.time_limit > 0:
        p.error(f"--time-limit must be > 0 s, got {args.time_limit}")
    if not args.players or not args.opponents:
        p.error("--players and --opponents need at least one agent name each")
    return args


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    for flag, agents in (("--players", args.players), ("--opponents", args.opponents)):
        for name in agents:
            make_agent(name, flag=flag)  # an unknown name fails here, before any game
    reward = audit_reward(args.config, args.preset)
    if args.weights:
        reward["reward_weights"] = {**reward["reward_weights"], **args.weights}
        reward_weights(reward["reward_preset"], reward["reward_weights"])  # a bad key or value fails here
    if args.zero_sum is not None:
        reward["zero_sum"] = args.zero_sum == "on"
    if args.noop_penalty is not None:
        reward["noop_penalty"] = args.noop_penalty
    mode = args.mode or (reward["mode"] if args.config else MODE_1V1)
    time_limit_s = args.time_limit or DEFAULT_TIME_LIMIT_S[mode]
    print(f"reward: preset {reward['reward_preset']}, weights {reward['reward_weights'] or 'as the preset'}, "
          f"zero_sum {reward['zero_sum']}, time_decay {reward['time_decay']}, team_spirit {reward['team_spirit']}, "
          f"noop_penalty {reward['noop_penalty']:g}; "
          f"{mode}, {time_limit_s:.0f} s games, {args.seeds} seeds x {len(TEAM_NAMES)} sides", flush=True)
    matchups = [(p, o) for p in args.players for o in args.opponents]
    games = range(2 * args.seeds)
    rows = {m: [] for m in matchups}
    table = {p: {} for p in args.players}
    t0 = time.time()

    def collect(row):
        m = (row["player"], row["opponent"])
        rows[m].append(row)
        if len(rows[m]) == len(games):
            rows[m].sort(key=lambda r: (r["seed"], TEAM_NAMES.index(r["side"])))
            table[m[0]][m[1]] = stats = matchup_stats(rows[m])
            print(matchup_line(*m, stats) + f" [{time.time() - t0:.0f} s]", flush=True)

    stored = load_games(args.games)
    # seed by seed (both sides), every matchup: a run cut short leaves whole seeds in its --games file
    tasks = [(mode, p, o, g, args.seed, time_limit_s) for g in games for p, o in matchups]
    todo = [t for t in tasks if game_key(*t) not in stored]
    for t in tasks:
        if game_key(*t) in stored:
            collect(score_game(stored[game_key(*t)], reward))
    if todo:
        print(f"playing {len(todo)} games ({len(tasks) - len(todo)} from {args.games})" if args.games else
              f"playing {len(todo)} games", flush=True)
    sink = open(args.games, "a") if args.games and todo else None

    def played(g):
        if sink:
            sink.write(json.dumps(g) + "\n")
            sink.flush()
        collect(score_game(g, reward))

    try:
        if args.workers == 1:
            for t in todo:
                played(play_signal_game(*t))
        else:
            with ProcessPoolExecutor(max_workers=args.workers) as pool:
                for f in as_completed([pool.submit(play_signal_game, *t) for t in todo]):
                    played(f.result())
    finally:
        if sink:
            sink.close()

    means = {p: {o: table[p][o]["mean"] for o in args.opponents} for p in args.players}
    check = order_check(means, args.players, args.opponents)
    table_md = markdown_table(table, args.players, args.opponents)
    check_lines = order_lines(check, args.players)
    print("\nmean return (post-processed, undiscounted, per game of the player's team) +- standard error:")
    print(table_md)
    print("\n".join(check_lines))
    result = {"mode": mode, "config": args.config, "reward": {k: v for k, v in reward.items() if k != "mode"},
              "seeds": args.seeds, "games_per_matchup": len(games), "time_limit_s": time_limit_s,
              "players": args.players, "opponents": args.opponents,
              "table": {p: {o: {**{k: round(v, 4) if isinstance(v, float) else v
                                   for k, v in table[p][o].items() if k != "parts"},
                                "parts": {k: round(v, 4) for k, v in table[p][o]["parts"].items() if v != 0.0}}
                            for o in args.opponents} for p in args.players},
              "order_check": check, "wall_s": round(time.time() - t0, 1)}
    if args.out:
        write_out(args.out, [r for m in matchups for r in rows[m]], table_md, check_lines, result)
        print(f"wrote {args.out}/games.csv, table.md, audit.json")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
