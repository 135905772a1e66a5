"""League play's callback (Five app. N; the runner side is training/league_play.py). On the classic env runner it draws
each episode's matchup; the batched runner draws its own. On the driver it holds the opponent pool
(``LeagueCallback.pool``), and after every iteration (``on_train_result``):

1. the finished league games (version, main's score, p_i) are pulled from every runner and fed to the pool
   (eq. 14);
2. every ``snapshot_every`` iterations the learner's "main" weights are saved and join the pool (q = max q);
3. the pool's table (version, file, probability) is pushed to the runners;
4. a row per version is appended to ``<trial dir>/league.csv`` (iteration, version, quality, probability, games,
   wins: the data of figure 27), and a summary goes to ``result["league"]``;
5. the pool's state is handed to the learner (``FivePPOLearner.league_state``), so that it is in every checkpoint,
   and is read back from there when a checkpoint is restored (``--resume``, ``init.restore``). The state also names
   the trial folder that holds the versions' weight files: a run restored from another run's checkpoint
   (``init.restore``) copies the files it lacks from there."""
from __future__ import annotations

import os
import shutil
import time

from ray.rllib.utils.annotations import override

from policies.league.pool import OpponentPool
from policies.league.ratings import DRAW, LOSS, WIN
from policies.model.module_ids import MAIN
from training import run_storage
from training.csv_files import append_csv_rows
from training.game_metrics import RAW_RETURN_KEY
from training.league_play import (CSV_COLUMNS, CSV_NAME, LEAGUE_KEY, WEIGHTS_DIR, collect_from_runner, install_table,
                                   cut_short, game_ended, game_started, league_settings, objective_of,
                                   save_weights, winner_of)
from callbacks.trial_files import TrialFilesCallback

WEIGHTS_ROOT = "weights_root"  # the league state's key: the trial folder its versions' weight files are under


class LeagueCallback(TrialFilesCallback):
    """On the env runners: each episode's matchup (the classic runner; the batched runner draws its own). On the
    driver: the opponent pool (``self.pool``), fed after every iteration and pushed to the runners."""
    CSV_FILES = (CSV_NAME,)

    def __init__(self):
        super().__init__()
        self.pool: OpponentPool | None = None  # on the driver, when league play is on

    # -- env runners --
    @override(TrialFilesCallback)
    def on_episode_created(self, *, episode, env_runner=None, env_index=0, **kwargs):
        matchup = game_started(env_runner, env_index) if env_runner is not None else None
        if matchup is not None:
            episode.custom_data[LEAGUE_KEY] = matchup

    @override(TrialFilesCallback)
    def on_episode_end(self, *, episode, env_runner=None, env_index=0, **kwargs):
        if env_runner is not None:
            # GameMetricsCallback keeps the teams' raw returns in the episode's custom_data
            game_ended(env_runner, env_index, episode.custom_data.get(LEAGUE_KEY), winner_of(episode),
                       episode.custom_data.get(RAW_RETURN_KEY), objective_of(episode), scored=not cut_short(episode))

    # -- driver --
    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        league = league_settings(algorithm.config)
        if league is not None:
            self.pool = OpponentPool(league.eta, league.past_fraction, league.snapshot_every)

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        if league_settings(algorithm.config) is None:
            return
        results = algorithm.learner_group.foreach_learner(lambda learner: learner.league_state)
        state = next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
        if state:
            self.pool = OpponentPool.from_state_dict(state)
            self.copy_missing_weights(algorithm, state.get(WEIGHTS_ROOT))
            self.push_table(algorithm, forget_slots=True)

    def copy_missing_weights(self, algorithm, source: str | None):
        """The versions' weight files this run's trial folder lacks, copied from the folder that saved them
        (`source`, the checkpoint's league state): a run restored from another run's checkpoint (init.restore) plays
        those versions too. Local folders only; a file found in neither raises, naming it."""
        root = self.trial_dir(algorithm)
        if run_storage.is_uri(root) or (source and run_storage.is_uri(source)):
            return
        for v in self.pool.versions:
            target = os.path.join(root, v.weights_path)
            if os.path.exists(target):
                continue
            origin = os.path.join(source, v.weights_path) if source else None
            if origin is None or not os.path.exists(origin):
                raise FileNotFoundError(
                    f"init.restore: the league's version {v.version} has no weights file, neither {target!r} nor "
                    f"{origin!r} exists; restore with league.enabled: false to train without the past versions")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(origin, target)

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        pool = self.pool
        if pool is None:
            return
        t0 = time.time()
        it = algorithm.iteration
        collected = algorithm.env_runner_group.foreach_env_runner(collect_from_runner, local_env_runner=True)
        counts = {WIN: 0, LOSS: 0, DRAW: 0}
        for part in collected:
            for version, score, probability in part["results"]:
                pool.record(version, score == WIN, probability)
                counts[score] += 1
        if pool.due(it):
            relative = os.path.join(WEIGHTS_DIR, f"version_{len(pool) + 1:05d}_iter_{it}.pt")
            save_weights(algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN],
                         self.trial_path(algorithm, relative))
            pool.add(it, relative)
        self.push_table(algorithm)
        append_csv_rows(self.trial_path(algorithm, CSV_NAME), CSV_COLUMNS, [
            {"iteration": it, "version": r["version"], "snapshot_iteration": r["iteration"], "quality": r["quality"],
             "probability": r["probability"], "games": r["games"], "current_wins": r["current_wins"]}
            for r in pool.rows()])
        state = {**pool.state_dict(), WEIGHTS_ROOT: self.trial_dir(algorithm)}
        algorithm.learner_group.foreach_learner(lambda learner: learner.set_league_state(state))
        games = sum(counts.values())
        result["league"] = {
            "versions": len(pool), "past_games": games, "past_wins": counts[WIN], "past_draws": counts[DRAW],
            "past_win_rate": counts[WIN] / games if games else float("nan"),
            "slot_loads": sum(p["loads"] for p in collected),
            "slot_fallbacks": sum(p["fallbacks"] for p in collected),
            "max_quality": max((v.quality for v in pool.versions), default=float("nan")),
            "min_quality": min((v.quality for v in pool.versions), default=float("nan")),
            "callback_s": time.time() - t0,  # the driver's league bookkeeping this iteration
        }

    def push_table(self, algorithm, forget_slots: bool = False):
        """The pool's table (versions, weight files, probabilities) to every env runner."""
        root = self.trial_dir(algorithm)
        table = ([v.version for v in self.pool.versions],
                 [run_storage.join(root, v.weights_path) for v in self.pool.versions],
                 self.pool.probabilities().tolist())
        algorithm.env_runner_group.foreach_env_runner(lambda er: install_table(er, table, forget_slots),
                                                      local_env_runner=True)

