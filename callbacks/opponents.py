"""The driver's side of the training opponents (training/opponents.py): after every iteration the games against fixed
agents are pulled from the runners, the curriculum (``OpponentsCallback.curriculum``) takes them and may move a level,
the current level is pushed to the runners, a row per opponent goes to ``<trial dir>/opponents.csv`` (iteration,
opponent, share, games, wins, draws, win rate) and a summary to ``result["opponents"]``.

The curriculum's state is saved with the learner's state (``FivePPOLearner.curriculum_state``), so that every
checkpoint has it; restoring a checkpoint reads it back and pushes its level to the runners: ``--resume`` continues at
the same level."""
from __future__ import annotations

import math
from collections import defaultdict

from ray.rllib.utils.annotations import override

from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, Curriculum
from policies.league.ratings import DRAW, WIN
from training.csv_files import append_csv_rows
from training.opponents import CSV_NAME, CSV_COLUMNS, collect_from_runner, has_opponent_mix, install_level
from training.settings import run_settings
from callbacks.trial_files import TrialFilesCallback


class OpponentsCallback(TrialFilesCallback):
    """On the driver: the curriculum (``self.curriculum``, when the run climbs a ladder), fed with the games against
    fixed agents after every iteration; its level is pushed to the runners, opponents.csv and ``result["opponents"]``
    get a row and a summary per opponent."""
    CSV_FILES = (CSV_NAME,)

    def __init__(self):
        super().__init__()
        self.curriculum: Curriculum | None = None  # on the driver, when the opponents mix has a curriculum

    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        cur = run_settings(algorithm.config).opponents.curriculum
        if cur.share > 0:
            self.curriculum = Curriculum(list(cur.ladder), cur.window, cur.promote_at, cur.demote_at)

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        cur = run_settings(algorithm.config).opponents.curriculum
        if not cur.share > 0:
            return
        results = algorithm.learner_group.foreach_learner(lambda learner: learner.curriculum_state)
        state = next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
        if state:
            self.curriculum = Curriculum.from_state_dict(state, list(cur.ladder), cur.demote_at)
            self.push_level(algorithm)

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        settings = run_settings(algorithm.config)
        if not has_opponent_mix(settings):
            return
        it = algorithm.iteration
        collected = algorithm.env_runner_group.foreach_env_runner(collect_from_runner, local_env_runner=True)
        curriculum = self.curriculum
        level_before = curriculum.level if curriculum is not None else None
        played = {}  # opponent -> {WIN: n, DRAW: n, LOSS: n}, games in the order they were collected
        for part in collected:
            for name, score in part:
                played.setdefault(name, defaultdict(int))[score] += 1
                if curriculum is not None:
                    curriculum.record(name, score, it)
        shares = settings.opponents.shares(settings.league)
        if curriculum is not None:
            shares[curriculum.current] = shares.get(curriculum.current, 0.0) + shares.pop(CURRICULUM, 0.0)
            self.push_level(algorithm)
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

    def push_level(self, algorithm):
        """The curriculum's current agent to every env runner."""
        agent = self.curriculum.current
        algorithm.env_runner_group.foreach_env_runner(lambda er: install_level(er, agent), local_env_runner=True)
