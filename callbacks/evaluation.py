"""In-training evaluation: every N iterations the current "main" plays games against reference agents (the random
agent, the scripted bot) on both sides, with the training randomization off; the win rates land in
``result["evaluation_games"]`` (and so in progress.csv and TensorBoard). Every ``replay_every``-th evaluation game of
the run (counted over all evaluations) is written as a replay to ``<trial dir>/replays/`` (moba/env/replay_file.py;
``python -m app.replay`` plays it, ``scripts/report.py`` links it).
"""
from __future__ import annotations

import os
import time

from ray.rllib.utils.annotations import override

from policies.model.module_ids import MAIN
from training import run_storage
from training.evaluation_games import EVAL_ENV_KEYS, REPLAY_DIR, SEED_STRIDE, evaluate_module, replay_paths
from training.settings import run_settings
from callbacks.trial_files import TrialFilesCallback


class EvaluationCallback(TrialFilesCallback):
    @override(TrialFilesCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        settings = run_settings(algorithm.config)
        cfg = settings.evaluation
        if not cfg.interval or algorithm.iteration % cfg.interval != 0:
            return
        t = time.time()
        module = algorithm.get_module(MAIN)
        module.set_state(algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN])
        # the env keys of the run config that evaluation games share with training (their values from the env
        # config: a sweep's included)
        env_keys = [k for k in EVAL_ENV_KEYS if k in settings.env]
        env_config = {k: v for k, v in algorithm.config.env_config.items() if k in env_keys}
        env_config["time_limit_s"] = cfg.time_limit_s
        target = self.trial_path(algorithm, REPLAY_DIR)
        # replays are written as they are played: to a local directory, then copied when the storage is a URI
        local = os.path.join(algorithm.logdir, REPLAY_DIR) if run_storage.is_uri(target) else target
        written = []
        paths = replay_paths(local, algorithm.iteration, algorithm.iteration // cfg.interval - 1, list(cfg.opponents),
                             cfg.games, cfg.replay_every)

        def replays(opponent, game):
            path = paths(opponent, game)
            written.extend([path] if path else [])
            return path

        res = evaluate_module(module, env_config, list(cfg.opponents), cfg.games,
                              seed=SEED_STRIDE * algorithm.iteration, explore=cfg.explore, replays=replays)
        for path in written:
            run_storage.upload_file(path, run_storage.join(target, os.path.basename(path)))
        res["wall_s"] = time.time() - t
        result["evaluation_games"] = res

