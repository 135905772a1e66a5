"""A series of games between two agents, and its summary: what every tool that pits one agent against another plays
(app.evaluate, app.rate, scripts/win_rate.py, scripts/policy_heads.py, training's evaluation games).

In game g of a series the agent plays ``side_of_game(g)`` (Radiant in even games, Dire in odd ones: both sides of the
asymmetric map equally) and the env is reset with seed ``seed + g``: a game is decided by its seed and its agents, so
a series replays in any process and any order of games. Each game gives a record::

    {"game": g, "side": "radiant", "winner": "dire" | "radiant" | "none", "game_time_s": 412.0,
     "margin": -3.1,            # the agent's team's summed raw reward minus the opponent's (ratings.team_margin)
     "buildings": 1, "buildings_lost": 3,  # towers, barracks and shrines destroyed by each side
     "kills": 2, "kills_lost": 5,           # enemy heroes killed by each side's units (towers and creeps too)
     "summary": {...}}          # Game.summary() with "raw_return"
"""
from __future__ import annotations

import os
import threading
import time

from moba.game.teams import NO_WINNER, TEAM_NAMES, enemy_side, side_of_game
from policies.agents import by_name
from policies.league.ratings import LIMIT_DRAW, LIMIT_OBJECTIVE, LIMIT_POINTS, WIN, game_score, team_margin


def buildings(destroyed: dict) -> int:
    """Towers, barracks and shrines in one side's ``destroyed_by`` counts."""
    return destroyed["towers"] + destroyed["barracks"] + destroyed["shrines"]


def game_record(game: int, side: str, summary: dict) -> dict:
    """The record of game `game` of a series, the agent playing `side`, from play_game's summary."""
    enemy = enemy_side(side)
    return {"game": game, "side": side, "winner": summary["winner"], "game_time_s": summary["game_time_s"],
            "margin": team_margin(side, summary["raw_return"]),
            "buildings": buildings(summary["destroyed_by"][side]),
            "buildings_lost": buildings(summary["destroyed_by"][enemy]),
            "kills": summary["destroyed_by"][side]["kills"], "kills_lost": summary["destroyed_by"][enemy]["kills"],
            "summary": summary}


def play_series_game(env, agent, opponent, side: str, seed: int, game: int = 0, on_step=None,
                     attacker: bool = False) -> dict:
    """One game of `env` (a MobaEnv, reset with `seed`): `agent` plays `side`, `opponent` the other; its record.
    `attacker`: the agent's side is the one the env's start state (``start_state``) starts around."""
    if side not in TEAM_NAMES:
        raise ValueError(f"side must be one of {list(TEAM_NAMES)}, got {side!r}")
    radiant, dire = (agent, opponent) if side == TEAM_NAMES[0] else (opponent, agent)
    options = {"attacker": side} if attacker else None
    return game_record(game, side, by_name.play_game(env, radiant, dire, seed=seed, on_step=on_step, options=options))


def play_series(env, make_agent, make_opponent, games, seed: int = 0, watch=None, attacker: bool = False):
    """Plays the games numbered `games` (an int: range(games); or an iterable of game numbers) of a series on `env`
    and yields each game's record as it ends. Game g: the agent ``make_agent(g)`` plays side_of_game(g) against
    ``make_opponent(g)`` (made in that order), the env reset with seed ``seed + g``. `watch(g, players)`, if given,
    is called with the game's {side: agent} before it starts and returns the game's ``on_step(env)`` or None (a
    replay writer's). `attacker`: every game's start state (the env's ``start_state``) starts around the agent."""
    for g in (range(games) if isinstance(games, int) else games):
        side = side_of_game(g)
        players = {side: make_agent(g)}
        players[enemy_side(side)] = make_opponent(g)
        on_step = watch(g, players) if watch else None
        yield play_series_game(env, players[side], players[enemy_side(side)], side, seed + g, g, on_step, attacker)


def record_objective(record: dict) -> tuple[int, int] | None:
    """The agent's objective margin in a game record (ratings.objective_margin: buildings destroyed minus lost,
    hero kills minus deaths to the enemy); None for a record without them (made before they were recorded)."""
    if not all(k in record for k in ("buildings", "buildings_lost", "kills", "kills_lost")):
        return None
    return record["buildings"] - record["buildings_lost"], record["kills"] - record["kills_lost"]


def series_score(record: dict, rule: str = LIMIT_DRAW) -> float:
    """The agent's score in one game (ratings.WIN, DRAW or LOSS): a game stopped by the time limit counts as `rule`
    says (ratings.game_score: "draw", "points" on the raw return's margin, "objective" on buildings then kills)."""
    return game_score(record["side"], record["winner"], record["margin"], rule, record_objective(record))


def summarize_series(records, rule: str = LIMIT_DRAW) -> dict:
    """What a series of game records says about the agent:

    - games; outright_wins (the enemy's ancient destroyed), draws (stopped by the time limit), losses (the agent's
      ancient destroyed), outright_win_rate and draw_rate;
    - wins and win_rate under `rule` (ratings.game_score: "draw", a capped game is not won; "points", it is won by
      the team with the higher raw return), and wins_as_radiant, wins_as_dire under it;
    - points_wins and points_win_rate: wins under the "points" rule, whatever `rule` is; objective_wins and
      objective_win_rate: wins under the "objective" rule (capped games won on buildings, then hero kills);
    - the means per game of game_minutes, reward_margin, buildings (destroyed by the agent) and buildings_lost."""
    rs = list(records)
    if not rs:
        raise ValueError("a series needs at least one game")
    n = len(rs)
    won = [series_score(r, rule) == WIN for r in rs]
    outright = sum(r["winner"] == r["side"] for r in rs)
    draws = sum(r["winner"] == NO_WINNER for r in rs)
    points = sum(series_score(r, LIMIT_POINTS) == WIN for r in rs)
    objective = sum(series_score(r, LIMIT_OBJECTIVE) == WIN for r in rs)
    out = {"games": n, "wins": sum(won), "outright_wins": outright, "draws": draws,
           "losses": sum(r["winner"] not in (r["side"], NO_WINNER) for r in rs), "points_wins": points,
           "win_rate": sum(won) / n, "outright_win_rate": outright / n, "draw_rate": draws / n,
           "points_win_rate": points / n, "objective_wins": objective, "objective_win_rate": objective / n,
           **{f"wins_as_{side}": sum(w for w, r in zip(won, rs) if r["side"] == side) for side in TEAM_NAMES}}
    # the means, summed in game order as every tool did before (they are compared bit for bit); a key whose field
    # some record lacks (a record a tool made without it) is left out
    for key, field, scale in (("game_minutes", "game_time_s", 60.0), ("reward_margin", "margin", 1.0),
                              ("buildings", "buildings", 1.0), ("buildings_lost", "buildings_lost", 1.0)):
        if all(field in r for r in rs):
            total = 0.0
            for r in rs:
                total += r[field] / scale if scale != 1.0 else r[field]
            out[key] = total / n
    return out


def end_with_parent(parent_pid: int, poll_s: float = 1.0) -> None:
    """A pool worker's initializer (or a call inside one): the worker exits once the process that started it is gone.
    A tool stopped by SIGTERM or SIGKILL runs no cleanup, and its spawned game workers would otherwise play on as
    orphans (they did, for 40 minutes, beside a later run)."""
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(1)
    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def game_pool(workers: int):
    """A ProcessPoolExecutor of `workers` processes for playing games: spawned, not forked (a fork of a process whose
    torch or numba threads already run can deadlock), each ending with the process that started it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=end_with_parent,
                               initargs=(os.getpid(),))


def one_torch_thread() -> None:
    """One torch thread for this process, for the tools that play games with a model in them: a forward pass of one
    team's heroes is too small to share, and with every core busy (training, other workers) more threads made it
    10-50x slower (55 ms a step in a measured game; scripts/play.py's game ran at 21 steps/s instead of 296)."""
    import torch
    torch.set_num_threads(1)
