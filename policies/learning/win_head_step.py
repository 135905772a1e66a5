"""The win-probability head's step, a multiple of the scheduled learning rate (``ppo.win_head_lr_factor``).

The head (Five app. D) is one linear layer on the LSTM's output, and its label reaches back one chunk per update from
a game's end (policies/learning/win_label.py). At the policy's learning rate (1e-4 in the top-rung configs) a weight
moves at most ~1e-4 an Adam step, and after ~1,100 steps the shipped 1v1 agent's head was still at a weight norm of
0.08-0.23, predicting about 0.53 everywhere (docs/results.md, "the win head's outcome term"). With a factor k its
parameters take k times their Adam step (``StepScale``, as the value warm-up scales the actor's:
policies/learning/value_warmup.py); in a critic-only warm-up iteration that is k times ``init.value_warmup_lr``.
"""
from __future__ import annotations

import torch

from policies.learning.value_warmup import WIN_HEAD, StepScale


class WinHeadStep:
    """Hooks on the module's optimizer that scale the win head's step by `factor` (1: nothing to do)."""

    def __init__(self, module: torch.nn.Module, factor: float):
        if not factor > 0:
            raise ValueError(f"the win head's learning-rate factor must be > 0, got {factor}")
        self.factor = float(factor)
        self._step = StepScale([p for n, p in module.named_parameters() if n.split(".")[0] == WIN_HEAD])

    def attach(self, optimizer: torch.optim.Optimizer):
        if self.factor != 1.0 and self._step.params:
            optimizer.register_step_pre_hook(lambda *_: self._step.remember())
            optimizer.register_step_post_hook(lambda *_: self._step.scale(self.factor))
