"""Training opponents beyond self-play: the ``opponents:`` section's mix of self-play, past versions and
fixed agents, and the curriculum up a ladder of fixed agents (policies/league/curriculum.py).

Env runner side (training/batched_env_runner.py calls ``game_started`` / ``game_ended`` for every game): each game draws
its opponent kind from the mix. A past version goes through the league (callbacks/league_play.py, its slots and
quality updates unchanged); a fixed agent (the curriculum's current level, or an agent named in ``fixed``) gets the
matchup {"agent": name, "side": side, "seed": seed}, and the runner builds that agent and lets it play the side's
heroes: its steps never become training data. Finished games against fixed agents are kept as (name, main's score).

Driver side, after every iteration (``on_train_result``): the results are pulled from the runners, the curriculum
takes them (and may move up a level), the current level is pushed to the runners, a row per opponent goes to
``<trial dir>/opponents.csv`` (iteration, opponent, share, games, wins, draws, win rate) and a summary to
``result["opponents"]``; the curriculum's state rides in the learner's state (``FivePPOLearner``), so that every
checkpoint has it and ``--resume`` continues at the same level.
"""

from __future__ import annotations

import math
from collections import defaultdict

from ray.rllib.utils.annotations import override

from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, Curriculum
from policies.league.ratings import DRAW, WIN
from training.csv_files import append_csv_rows
from training.opponents import CSV_NAME, CSV_COLUMNS, opponent_settings, collect_from_runner, install_level
from callbacks.trial_files import TrialFilesCallback


# ---- driver side -----------------------------------------------------------------------------------------------------
class OpponentsCallback(TrialFilesCallback):
    CSV_FILES = (CSV_NAME,)

    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        settings = opponent_settings(algorithm.config)
        if settings.get("ladder"):
            algorithm._five_curriculum = Curriculum(settings["ladder"], settings["window"], settings["promote_at"],
                                                    settings["demote_at"])

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        settings = opponent_settings(algorithm.config)
        if not settings.get("ladder"):
            return
        results = algorithm.learner_group.foreach_learner(lambda learner: learner.curriculum_state)
        state = next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
        if state:
            algorithm._five_curriculum = Curriculum.from_state_dict(state, settings["ladder"], settings["demote_at"])
            push_level(algorithm)

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        settings = opponent_settings(algorithm.config)
        if not settings:
            return
        it = algorithm.iteration
        collected = algorithm.env_runner_group.foreach_env_runner(collect_from_runner, local_env_runner=True)
        curriculum = getattr(algorithm, "_five_curriculum", None)
        level_before = curriculum.level if curriculum is not None else None
        played = {}  # opponent -> {WIN: n, DRAW: n, LOSS: n}, games in the order they were collected
        for part in collected:
            for name, score in part:
                played.setdefault(name, defaultdict(int))[score] += 1
                if curriculum is not None:
                    curriculum.record(name, score, it)
        shares = dict(settings["shares"])
        if curriculum is not None:
            shares[curriculum.current] = shares.get(curriculum.current, 0.0) + shares.pop(CURRICULUM, 0.0)
            push_level(algorithm)
            state = curriculum.state_dict()
            algorithm.learner_group.foreach_learner(lambda learner: learner.set_curriculum_state(state))
        rows, summary = [], {}
        for name in sorted(set(played) | {k for k in shares if k not in (SELF, LEAGUE)}):
            counts = played.get(name, {})
            games = sum(counts.values())
            win_rate = counts.get(WIN, 0) / games if games else math.nan
            rows.append({"iteration": it, "opponent": name, "share": shares.get(name, 0.0), "games": games,
                         "wins": counts.get(WIN, 0), "draws": counts.get(DRAW, 0), "win_rate": win_rate,
                         "curriculum_level": curriculum.level if curriculum is not None else ""})
            summary[name] = {"games": games, "win_rate": win_rate, "share": shares.get(name, 0.0)}
        append_csv_rows(self.trial_path(algorithm, CSV_NAME), CSV_COLUMNS, rows)
        fixed_games = sum(v["games"] for v in summary.values())
        fixed_wins = sum(played.get(n, {}).get(WIN, 0) for n in summary)
        result["opponents"] = {
            "mix": {k: v for k, v in shares.items()}, "by_opponent": summary,
            "fixed_games": fixed_games, "fixed_win_rate": fixed_wins / fixed_games if fixed_games else math.nan,
            **({"curriculum_level": curriculum.level, "curriculum_agent": curriculum.current,
                "curriculum_window_win_rate": curriculum.window_win_rate(),
                "curriculum_level_changed": curriculum.level != level_before} if curriculum is not None else {}),
        }


def push_level(algorithm):
    agent = algorithm._five_curriculum.current
    algorithm.env_runner_group.foreach_env_runner(lambda er: install_level(er, agent), local_env_runner=True)

