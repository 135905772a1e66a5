"""The value warm-up's driver side (``init.value_warmup_iterations``, ``init.actor_lr_warmup_iterations``; the
learner's side and the recipe's sources: policies/learning/value_warmup.py).

The iterations count from the run's start: iteration 0 for a run from a module checkpoint, a teacher or scratch, the
restored checkpoint's iteration for ``init.restore`` (the callback is listed after RestoreCallback, so that the
algorithm's iteration is the restored one when it reads it). Before every iteration (at the algorithm's start, after
each iteration and after ``--resume`` restores a checkpoint) the phase of the coming iteration goes to the learners
(``FivePPOLearner.set_value_warmup``); ``result["value_warmup"]`` holds the phase the iteration ran with. A resumed run
continues the count, so a warm-up is not repeated."""
from __future__ import annotations

from ray.rllib.utils.annotations import override

from policies.learning.value_warmup import WarmupPhase, warmup_phase
from training.settings import run_settings
from callbacks import RunCallback

RESULT_KEY = "value_warmup"


class ValueWarmupCallback(RunCallback):
    """Sets the warm-up's phase on the learners before every iteration; ``start`` is the iteration the run started
    from (None: no warm-up in this run), ``phase`` the phase set for the coming iteration."""

    def __init__(self):
        super().__init__()
        self.start: int | None = None
        self.phase = WarmupPhase()

    @override(RunCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        init = run_settings(algorithm.config).init
        if init.value_warmup_iterations or init.actor_lr_warmup_iterations:
            self.start = int(algorithm.iteration)
            self._apply(algorithm)

    @override(RunCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        if self.start is not None:  # --resume (init.restore's own load comes before on_algorithm_init sets start)
            self._apply(algorithm)

    @override(RunCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        if self.start is None:
            return
        result[RESULT_KEY] = {"critic_only": float(self.phase.critic_only),
                              "actor_lr_factor": self.phase.actor_lr_factor}
        self._apply(algorithm)

    def _apply(self, algorithm):
        init = run_settings(algorithm.config).init
        coming = int(algorithm.iteration) - self.start + 1  # the coming iteration, counted from the run's start
        phase = warmup_phase(coming, init.value_warmup_iterations, init.actor_lr_warmup_iterations,
                             init.value_warmup_lr)
        algorithm.learner_group.foreach_learner(
            lambda learner: learner.set_value_warmup(phase.critic_only, phase.actor_lr_factor, phase.value_lr))
        self.phase = phase
