"""Where "main" starts. ``init.checkpoint``: from a module checkpoint's weights (a kickstart from
``python -m app.pretrain``, or a run's checkpoint) instead of random ones, its observation statistics included.
``init.restore``: from a whole algorithm checkpoint, typically written by model surgery (``python -m app.surgery``):
weights, optimizer state, league pool, curriculum and iteration, with the learning rate held at ``init.lr_hold_lr``
for ``init.lr_hold_iterations`` iterations after the restored one (Five app. B, "Smooth Training Restart").
Applied when the algorithm is built; a restored checkpoint (``--resume``) overwrites it afterwards, as it should."""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.annotations import override

from policies.model.five_module import FiveModelConfig
from policies.model.module_ids import MAIN
from training.settings import run_settings
from callbacks.schedules import ScheduleCallback


def check_same_layout(path: str, state: dict, expected: dict, checkpoint_model: dict | None = None,
                      run_model: dict | None = None) -> None:
    """Raises a ValueError naming init.checkpoint unless `state` has the parameters and shapes of `expected`; with the
    checkpoint's and the run's model settings (FiveModelConfig as dicts), it names the model keys that differ."""
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    shapes = [k for k in expected if k in state and np.shape(state[k]) != np.shape(expected[k])]
    if missing or extra or shapes:
        if checkpoint_model is not None and run_model is not None:  # a key a module predates has its default value
            defaults = asdict(FiveModelConfig())
            checkpoint_model, run_model = {**defaults, **checkpoint_model}, {**defaults, **run_model}
        differ = sorted(k for k in (checkpoint_model or {}) if k in (run_model or {})
                        and checkpoint_model[k] != run_model[k])
        keys = "" if not differ else (
            "; its model differs in " + ", ".join(f"{k} (the checkpoint's {checkpoint_model[k]}, this run's "
                                                  f"{run_model[k]})" for k in differ)
            + ": set " + " ".join(f"model.{k}={str(checkpoint_model[k]).lower()}" for k in differ))
        raise ValueError(f"init.checkpoint {path!r}: its module does not fit this run's model (missing {missing[:3]}, "
                         f"unexpected {extra[:3]}, other shapes {shapes[:3]}){keys}; the run's model keys and mode "
                         f"must be those it was trained with")


def check_same_frame(path: str, checkpoint_team_frame: bool, run_team_frame: bool) -> None:
    """Raises a ValueError naming init.checkpoint and model.team_frame unless the checkpoint's module reads the
    observations in the run's frame: the setting changes no parameter's shape, so check_same_layout cannot see it, and
    a module read in the other frame plays Dire as if it were Radiant (policies/model/team_frame.py)."""
    theirs, ours = bool(checkpoint_team_frame), bool(run_team_frame)
    if theirs != ours:
        raise ValueError(f"init.checkpoint {path!r}: its module has team_frame {theirs}, this run's model.team_frame "
                         f"is {ours}: set model.team_frame to {str(theirs).lower()}, or pretrain the clone with "
                         f"--model team_frame={str(ours).lower()}")


class InitWeightsCallback(RLlibCallback):
    @override(RLlibCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        path = run_settings(algorithm.config).init.checkpoint
        if not path:
            return
        from policies.league.references import load_module
        module = load_module(path)
        state = module.get_state()
        expected = algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        ours = FiveModelConfig.from_dict(run_settings(algorithm.config).model)
        theirs = getattr(module, "cfg", None)
        check_same_layout(path, state, expected, asdict(theirs) if isinstance(theirs, FiveModelConfig) else None,
                          asdict(ours))
        check_same_frame(path, getattr(theirs, "team_frame", False), ours.team_frame)
        algorithm.learner_group.foreach_learner(lambda learner: learner.module[MAIN].set_state(state))
        # set on every runner and waited for (RLlib's sync_weights does not wait, and may skip a busy runner)
        algorithm.env_runner_group.foreach_env_runner(
            lambda er: er.module[MAIN].set_state(state) if er.module is not None else None, local_env_runner=True)


def _iteration_of(path: str) -> int:
    import pickle
    import os

    from ray.tune.result import TRAINING_ITERATION
    with open(os.path.join(path, "algorithm_state.pkl"), "rb") as f:
        return int(pickle.load(f).get(TRAINING_ITERATION, 0))


class RestoreCallback(RLlibCallback):
    """``init.restore``: the algorithm continues from a whole checkpoint. Listed after the callbacks whose state a
    checkpoint carries (league pool, schedules, reward scale), so that they have set up before the restore's
    ``on_checkpoint_loaded`` reaches them; only the value warm-up, which counts from the restored iteration, follows."""

    @override(RLlibCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        init = run_settings(algorithm.config).init
        path = init.restore
        if not path:
            return
        start = _iteration_of(path)
        if init.lr_hold_iterations > 0:  # read by the schedules (callbacks/schedules.py) from now on
            ScheduleCallback.of(algorithm).lr_hold = (start + 1, start + int(init.lr_hold_iterations),
                                                      float(init.lr_hold_lr))
        algorithm.load_checkpoint(path)  # restore_from_path, then every callback's on_checkpoint_loaded
        state = algorithm.learner_group.get_weights(module_ids=[MAIN])[MAIN]
        # set on every runner and waited for (RLlib's sync_weights does not wait, and may skip a busy runner)
        algorithm.env_runner_group.foreach_env_runner(
            lambda er: er.module[MAIN].set_state(state) if er.module is not None else None, local_env_runner=True)
