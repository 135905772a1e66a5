"""The driver's side of the training opponents (training/opponents.py): after every iteration the games against fixed
agents are pulled from the runners, the curriculum (``OpponentsCallback.curriculum``) takes them and may move a level,
the current level is pushed to the runners, a row per opponent goes to ``<trial dir>/opponents.csv`` (iteration,
opponent, share, games, wins, draws, win rate; the games won outright, in all and as Radiant) and a summary to
``result["opponents"]`` (``fixed_outright_win_rate``: the share of the games against fixed agents that "main" won by
destroying the enemy ancient; ``fixed_games`` and the win rates count the full games, not those that started late,
which have rows of their own, policies.league.start_stages.late_start_label).

With Jump-Start RL (``opponents.jump_start``) the same games move its stages (``OpponentsCallback.jump_start``,
policies/league/jump_start.py), and the current stage's hand-over time is pushed to the runners. With start stages
(``opponents.start_stages``) the late games won outright or not move the late starts' stage
(``OpponentsCallback.start_stages``, policies/league/start_stages.py), and the current stage is pushed to the runners.

The curriculum's, Jump-Start RL's and the start stages' states are saved with the learner's state
(``FivePPOLearner.curriculum_state``, ``jump_start_state``, ``start_stages_state``), so that every checkpoint has them;
restoring a checkpoint reads them back and pushes the level, the hand-over and the stage to the runners: ``--resume``
continues at the same level and stages."""
from __future__ import annotations

import math
from collections import defaultdict

from ray.rllib.utils.annotations import override

from moba.game.teams import TEAM_NAMES
from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, Curriculum
from policies.league.jump_start import JumpStart
from policies.league.start_stages import StartStages, is_late_start
from policies.league.ratings import DRAW, WIN
from training.csv_files import append_csv_rows
from training.opponents import (AS_RADIANT, CSV_NAME, CSV_COLUMNS, OUTRIGHT, OUTRIGHT_AS_RADIANT, collect_from_runner,
                                has_opponent_mix, install_handover, install_level, install_start_stage)
from training.settings import run_settings
from callbacks.trial_files import TrialFilesCallback

RADIANT_SIDE = TEAM_NAMES[0]


def full_game_totals(rows: list) -> tuple[int, int, int]:
    """The games, wins and outright wins of an iteration's opponents.csv rows that judge the agent: the full games,
    not those that started late (the env's start_state: rows of their own, policies.league.start_stages
    .late_start_label)."""
    full = [r for r in rows if not is_late_start(r["opponent"])]
    return sum(r["games"] for r in full), sum(r["wins"] for r in full), sum(r[OUTRIGHT] for r in full)


class OpponentsCallback(TrialFilesCallback):
    """On the driver: the curriculum (``self.curriculum``, when the run climbs a ladder), fed with the games against
    fixed agents after every iteration; its level is pushed to the runners, opponents.csv and ``result["opponents"]``
    get a row and a summary per opponent."""
    CSV_FILES = (CSV_NAME,)

    def __init__(self):
        super().__init__()
        self.curriculum: Curriculum | None = None  # on the driver, when the opponents mix has a curriculum
        self.jump_start: JumpStart | None = None  # on the driver, with opponents.jump_start
        self.start_stages: StartStages | None = None  # on the driver, with opponents.start_stages

    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        opponents = run_settings(algorithm.config).opponents
        cur, js, ss = opponents.curriculum, opponents.jump_start, opponents.start_stages
        if cur.share > 0:
            self.curriculum = Curriculum(list(cur.ladder), cur.window, cur.promote_at, cur.demote_at,
                                         cur.judge_once, sides=cur.sides)
        if js.guide is not None:
            self.jump_start = JumpStart(js.opponent, js.guide, js.handover_s, js.window, js.promote_at)
        if ss.stages:
            self.start_stages = StartStages(ss.opponent, ss.stages, ss.window, ss.promote_at, ss.sides)

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        cur = run_settings(algorithm.config).opponents.curriculum
        if cur.share > 0:
            state = learner_state(algorithm, lambda learner: learner.curriculum_state)
            if state:
                self.curriculum = Curriculum.from_state_dict(state, list(cur.ladder), cur.demote_at,
                                                             cur.judge_once, sides=cur.sides)
                self.push_level(algorithm)
        if self.jump_start is not None:
            state = learner_state(algorithm, lambda learner: learner.jump_start_state)
            if state:
                self.jump_start.load_state_dict(state)
                self.push_handover(algorithm)
        if self.start_stages is not None:
            state = learner_state(algorithm, lambda learner: learner.start_stages_state)
            if state:
                self.start_stages.load_state_dict(state)
                self.push_start_stage(algorithm)

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        settings = run_settings(algorithm.config)
        if not has_opponent_mix(settings):
            return
        it = algorithm.iteration
        collected = algorithm.env_runner_group.foreach_env_runner(collect_from_runner, local_env_runner=True)
        curriculum, jump_start, start_stages = self.curriculum, self.jump_start, self.start_stages
        level_before = curriculum.level if curriculum is not None else None
        played = {}  # opponent -> {WIN: n, DRAW: n, LOSS: n}, games in the order they were collected
        outright = defaultdict(lambda: defaultdict(int))  # opponent -> games and outright wins, in all and as Radiant
        for part in collected:
            for name, score, side, won in part:
                played.setdefault(name, defaultdict(int))[score] += 1
                tally = outright[name]
                tally[OUTRIGHT] += won
                tally[AS_RADIANT] += side == RADIANT_SIDE
                tally[OUTRIGHT_AS_RADIANT] += won and side == RADIANT_SIDE
                if curriculum is not None:
                    curriculum.record(name, score, it, side)
                if jump_start is not None:
                    jump_start.record(name, score, it)
                if start_stages is not None:
                    start_stages.record(name, won, side, it)
        shares = settings.opponents.shares(settings.league)
        if curriculum is not None:
            for agent, share in curriculum.agent_shares(shares.pop(CURRICULUM, 0.0),
                                                        settings.opponents.curriculum.review).items():
                shares[agent] = shares.get(agent, 0.0) + share
            self.push_level(algorithm)
            state = curriculum.state_dict()
            algorithm.learner_group.foreach_learner(lambda learner: learner.set_curriculum_state(state))
        if jump_start is not None:
            self.push_handover(algorithm)
            js_state = jump_start.state_dict()
            algorithm.learner_group.foreach_learner(lambda learner: learner.set_jump_start_state(js_state))
        if start_stages is not None:
            self.push_start_stage(algorithm)
            ss_state = start_stages.state_dict()
            algorithm.learner_group.foreach_learner(lambda learner: learner.set_start_stages_state(ss_state))
        rows, summary = [], {}
        for name in sorted(set(played) | {k for k in shares if k not in (SELF, LEAGUE)}):
            counts = played.get(name, {})
            games = sum(counts.values())
            win_rate = counts.get(WIN, 0) / games if games else math.nan
            tally = outright.get(name, {})
            rows.append({"iteration": it, "opponent": name, "share": shares.get(name, 0.0), "games": games,
                         "wins": counts.get(WIN, 0), "draws": counts.get(DRAW, 0), "win_rate": win_rate,
                         **{k: tally.get(k, 0) for k in (OUTRIGHT, AS_RADIANT, OUTRIGHT_AS_RADIANT)},
                         "curriculum_level": curriculum.level if curriculum is not None else ""})
            summary[name] = {"games": games, "win_rate": win_rate, "share": shares.get(name, 0.0)}
        append_csv_rows(self.trial_path(algorithm, CSV_NAME), CSV_COLUMNS, rows)
        fixed_games, fixed_wins, fixed_outright = full_game_totals(rows)
        result["opponents"] = {
            "mix": {k: v for k, v in shares.items()}, "by_opponent": summary,
            "fixed_games": fixed_games, "fixed_win_rate": fixed_wins / fixed_games if fixed_games else math.nan,
            "fixed_outright_win_rate": fixed_outright / fixed_games if fixed_games else math.nan,
            **({"curriculum_level": curriculum.level, "curriculum_agent": curriculum.current,
                "curriculum_window_win_rate": curriculum.window_win_rate(),
                "curriculum_level_changed": curriculum.level != level_before} if curriculum is not None else {}),
            **({"jump_start_handover_s": jump_start.current_handover_s,
                "jump_start_stage": jump_start.curriculum.level,
                "jump_start_window_win_rate": jump_start.curriculum.window_win_rate()}
               if jump_start is not None else {}),
            **({"start_stage": start_stages.current,
                "start_stage_window_outright_rate": start_stages.curriculum.window_win_rate()}
               if start_stages is not None else {}),
        }

    def push_handover(self, algorithm):
        """Jump-Start RL's current hand-over time to every env runner."""
        handover_s = self.jump_start.current_handover_s
        algorithm.env_runner_group.foreach_env_runner(lambda er: install_handover(er, handover_s),
                                                      local_env_runner=True)

    def push_start_stage(self, algorithm):
        """The start stages' current stage to every env runner."""
        stage = self.start_stages.current
        algorithm.env_runner_group.foreach_env_runner(lambda er: install_start_stage(er, stage),
                                                      local_env_runner=True)

    def push_level(self, algorithm):
        """The curriculum's current agent to every env runner."""
        agent = self.curriculum.current
        algorithm.env_runner_group.foreach_env_runner(lambda er: install_level(er, agent), local_env_runner=True)


def learner_state(algorithm, read):
    """The first learner's state that `read(learner)` returns (None if none has one)."""
    results = algorithm.learner_group.foreach_learner(read)
    return next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
