"""In-training evaluation: every N iterations the current "main" plays games against reference agents (the random
agent, the scripted bot) on both sides, with the training randomization off; the win rates land in
``result["evaluation_games"]`` (and so in progress.csv and TensorBoard). Every ``replay_every``-th evaluation game of
the run (counted over all evaluations) is written as a replay to ``<trial dir>/replays/`` (moba/env/replay_file.py;
``python -m app.replay`` plays it, ``scripts/report.py`` links it).
"""
from __future__ import annotations

import os

from moba.env.moba_env import MobaEnv
from moba.env.replay_file import ReplayWriter
from moba.game.teams import enemy_side, side_of_game
from policies.agents import by_name as agents
from policies.agents.module_agent import ModuleAgent
from policies.league.series import play_series, summarize_series


# the env settings evaluation games share with training (the rest, e.g. randomization and time limit, are their own)
EVAL_ENV_KEYS = ("mode", "frameskip", "max_units", "lineup", "reward_preset", "evaluation_jitter",
                 "observation_groups", "constant_observations",  # these two: the observation layout (surgery)
                 "consumable_filters")  # the rules of the actions the agent trained with


SEED_STRIDE = 1000  # the evaluation after iteration i plays games with seeds SEED_STRIDE * i + g
REPLAY_DIR = "replays"  # in the trial directory
AGENT_NAME = "main"  # the module's name in the replays' headers


def evaluate_module(module, env_config: dict, opponents, games: int, seed: int = 0, explore: bool = True,
                    replays=None) -> dict:
    """Plays `games` games of the module (actions sampled as in training, or the most likely ones with
    explore=False) against each opponent agent name, a series (policies/league/series.py: sides alternating, game g
    seeded seed + g, the opponent made with that seed); `replays(opponent, game)`, if given, is the path to write that
    game's replay to, or None. Per opponent:
    win and draw rates, game minutes, the reward margin (the module team's summed raw reward minus the opponent's,
    per game), the points win rate (games won outright, or drawn at the time limit with the higher raw return: capped
    games are rarely won outright by a young policy), the objective win rate (won outright, or at the time limit
    on more buildings destroyed, then more hero kills: ratings.LIMIT_OBJECTIVE) and the buildings (towers, barracks,
    shrines) each side
    destroyed per game: the margin, points and buildings show progress long before games are won."""
    env = MobaEnv({**env_config, "evaluation": True})
    out = {}
    for name in opponents:
        def watch(g, players, name=name):
            replay = replays and replays(name, g)
            if not replay:
                return None
            side = side_of_game(g)
            return ReplayWriter(replay, {side: AGENT_NAME, enemy_side(side): name}, seed + g, players=players).on_step

        records = play_series(env, lambda g: ModuleAgent(module, explore=explore, seed=seed + g),
                              lambda g, name=name: agents.make_agent(name, seed + g), games, seed, watch)
        r = summarize_series(records)
        out[f"win_rate_vs_{name}"] = r["outright_win_rate"]
        out[f"draw_rate_vs_{name}"] = r["draw_rate"]
        out[f"points_win_rate_vs_{name}"] = r["points_win_rate"]
        out[f"objective_win_rate_vs_{name}"] = r["objective_win_rate"]
        out[f"game_minutes_vs_{name}"] = r["game_minutes"]
        out[f"reward_margin_vs_{name}"] = r["reward_margin"]
        out[f"buildings_vs_{name}"] = r["buildings"]
        out[f"buildings_lost_vs_{name}"] = r["buildings_lost"]
    return out


def replay_paths(directory: str, iteration: int, evaluation: int, opponents, games: int, every: int):
    """`replays(opponent, game)` for evaluate_module: a path in `directory` for every `every`-th game of the run,
    counting the games of the evaluations before this one (the `evaluation`-th, from 0) first; None otherwise."""
    def path(opponent: str, game: int):
        number = (evaluation * len(opponents) + list(opponents).index(opponent)) * games + game
        if not every or number % every:
            return None
        os.makedirs(directory, exist_ok=True)
        return os.path.join(directory, f"iter{iteration:06d}_vs_{opponent}_game{game}.jsonl")
    return path

