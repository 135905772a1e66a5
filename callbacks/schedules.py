"""Applies the hyperparameter schedules (training/schedules.py) to a run: before the first iteration, after each
iteration (the values of the next one), after a checkpoint is restored (``--resume`` continues where the schedules
were) and when env runners are recreated (their team spirit and new-action share are set again). The learner gets the
learning rate, entropy coefficient, gamma and kickstart weight; the env runners the team spirit, the new-action share
and whether the kickstart's agent teacher labels the steps. The values used by each iteration are logged in
``result["schedule"]``.

After model surgery (``init.restore`` of a surgered checkpoint, callbacks/init_weights.py) the learning rate is held
(``init.lr_hold_iterations`` at ``init.lr_hold_lr``, app. B "Smooth Training Restart") for the first iterations after
the restored one, while Adam's moments of the new parameters and the observation statistics settle."""
from __future__ import annotations

from ray.rllib.utils.annotations import override
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

from policies.learning.kickstart import kickstart_on
from training.schedules import ENV_SCHEDULED, schedule_values, set_on_envs
from training.settings import run_settings
from callbacks import RunCallback


def _set_runner_values(vals: dict):
    """A function of an env runner that sets the runner-side scheduled values: those of its envs (ENV_SCHEDULED)
    and whether the kickstart's agent teacher labels "main"'s steps (the batched env runner; only while the
    kickstart loss is on)."""
    items = [(method, vals[name]) for name, method in ENV_SCHEDULED.items() if name in vals]
    labels_on = kickstart_on(vals.get("kickstart_coeff", 0.0))

    def apply(env_runner):
        if hasattr(env_runner, "set_teacher_labels"):
            env_runner.set_teacher_labels(labels_on)
        return [set_on_envs(env_runner, method, v) for method, v in items]
    return apply


class ScheduleCallback(RunCallback):
    """Sets the schedules' values for the next iteration on the learner and the env runners, and holds them
    (``values``); ``lr_hold`` (set by callbacks/init_weights.RestoreCallback after model surgery) holds the learning
    rate: (first iteration, last iteration, lr)."""

    def __init__(self):
        super().__init__()
        self.values: dict = {}  # the values set for the coming iteration
        self.lr_hold: tuple[int, int, float] | None = None

    def _apply(self, algorithm, iteration: int) -> dict:
        settings = run_settings(algorithm.config)
        schedules, frameskip = settings.schedules, settings.frameskip
        env_steps = int(algorithm.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0))
        vals = schedule_values(schedules, iteration, env_steps, frameskip, self.lr_hold)
        learner_vals = {k: vals[k] for k in ("lr", "entropy_coeff", "gamma", "kickstart_coeff") if k in vals}
        if learner_vals:
            algorithm.learner_group.foreach_learner(lambda learner: learner.set_schedule_values(learner_vals))
        algorithm.env_runner_group.foreach_env_runner(_set_runner_values(vals), local_env_runner=True)
        self.values = vals
        return vals

    @override(RunCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        self._apply(algorithm, algorithm.iteration)

    @override(RunCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        self._apply(algorithm, algorithm.iteration)

    @override(RunCallback)
    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices, is_evaluation,
                                 **kwargs):
        if is_evaluation:
            return
        vals = self.values or self._apply(algorithm, algorithm.iteration)
        env_runner_group.foreach_env_runner(_set_runner_values(vals), remote_worker_ids=env_runner_indices,
                                            local_env_runner=False)

    @override(RunCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        result["schedule"] = dict(self.values)
        self._apply(algorithm, algorithm.iteration)  # values for the next iteration

