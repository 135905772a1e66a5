"""League play inside training (Five app. N): in a share of the games the whole enemy team is a frozen past
version of "main", sampled by quality from the opponent pool (policies/league/pool.py).

How it scales. The pool on the driver only knows where each version's weights are: one file per version under
``<trial dir>/league/`` (paths relative to the trial directory, callbacks/trial_files.py). Every env runner holds a
few opponent *slots*, the modules ``league_slot_0`` .. ``league_slot_{K-1}`` (policies/model/module_ids.py), which never
train and which the learner never syncs. When a game starts (``on_episode_created``, before the env's reset and so
before any agent is mapped to a module), the runner draws the matchup: self-play with probability 1 - past_fraction,
else a past version sampled with p_i proportional to exp(q_i) (the game keeps its p_i for the quality update),
loaded from its file into a free slot (or shared with a game already playing that version; with every slot busy the
game falls back to self-play and is counted). A runner therefore holds K modules however large the pool is.
The past version plays radiant or dire with equal probability.

Why not ``Algorithm.add_module`` per snapshot (docs/rllib_notes.md section 4): it puts every version in every
runner and in the learner. The notes' sync trap does not arise here: slot weights are set on the runner itself by
``module.set_state`` from the saved file, and the learner's post-update ``sync_weights`` only carries "main".

Driver side, after every iteration (``on_train_result``):

1. the finished league games (version, main's score, p_i) are pulled from every runner and fed to the pool
   (eq. 14);
2. every ``snapshot_every`` iterations the learner's "main" weights are saved and join the pool (q = max q);
3. the pool's table (version, file, probability) is pushed to the runners;
4. a row per version is appended to ``<trial dir>/league.csv`` (iteration, version, quality, probability, games,
   wins: the data of figure 27), and a summary goes to ``result["league"]``;
5. the pool's state is handed to the learner (``FivePPOLearner.league_state``), so that it is in every checkpoint,
   and is read back from there when a checkpoint is restored (``--resume``).
"""

from __future__ import annotations

import os
import time

from ray.rllib.utils.annotations import override

from policies.league.pool import OpponentPool
from policies.league.ratings import DRAW, LOSS, WIN
from policies.model.module_ids import MAIN
from training import run_storage
from training.csv_files import append_csv_rows
from training.game_metrics import RAW_RETURN_KEY
from training.league_play import (CSV_COLUMNS, CSV_NAME, LEAGUE_KEY, WEIGHTS_DIR, collect_from_runner, install_table,
                                   game_ended, game_started, league_settings, save_weights, winner_of)
from callbacks.trial_files import TrialFilesCallback


class LeagueCallback(TrialFilesCallback):
    CSV_FILES = (CSV_NAME,)

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
                       episode.custom_data.get(RAW_RETURN_KEY))

    # -- driver --
    @override(TrialFilesCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        cfg = league_settings(algorithm.config)
        if cfg:
            algorithm._five_pool = OpponentPool(cfg["eta"], cfg["past_fraction"], cfg["snapshot_every"])

    @override(TrialFilesCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        super().on_checkpoint_loaded(algorithm=algorithm, **kwargs)
        if not league_settings(algorithm.config):
            return
        results = algorithm.learner_group.foreach_learner(lambda learner: learner.league_state)
        state = next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
        if state:
            algorithm._five_pool = OpponentPool.from_state_dict(state)
            push_table(algorithm, forget_slots=True)

    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        pool = getattr(algorithm, "_five_pool", None)
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
        push_table(algorithm)
        append_csv_rows(self.trial_path(algorithm, CSV_NAME), CSV_COLUMNS, [
            {"iteration": it, "version": r["version"], "snapshot_iteration": r["iteration"], "quality": r["quality"],
             "probability": r["probability"], "games": r["games"], "current_wins": r["current_wins"]}
            for r in pool.rows()])
        state = pool.state_dict()
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


def push_table(algorithm, forget_slots: bool = False):
    pool, root = algorithm._five_pool, TrialFilesCallback.trial_dir(algorithm)
    table = ([v.version for v in pool.versions], [run_storage.join(root, v.weights_path) for v in pool.versions],
             pool.probabilities().tolist())
    algorithm.env_runner_group.foreach_env_runner(lambda er: install_table(er, table, forget_slots),
                                                  local_env_runner=True)

