"""The value warm-up of a run that starts from a checkpoint, a clone or a teacher (``init.value_warmup_iterations``,
``init.actor_lr_warmup_iterations``; issue 29, item 3).

A policy that starts competent meets a value head that knows nothing of its returns (a scratch head, or one cloned on
the teacher's games and another reward scale): its advantages are noise, and PPO's first updates move the policy on
them. AlphaStar trained the value function alone before any policy update; PIRLNav (Ramrakhya et al., CVPR 2023)
found the same for fine-tuning a behaviour-cloned policy with PPO: a critic-only phase, then the actor's learning
rate warmed up from 0, or the clone collapses before the critic has learnt. Here, counted in iterations from the
run's start:

1. critic-only, iterations 1 .. V: only the critics' own parameters train, at ``init.value_warmup_lr`` (or the
   scheduled learning rate without one: a fine-tuning rate moves the head little in a few iterations). The critics
   are the heads nothing acts on (``CRITIC_HEADS``): the value head and the win-probability head (Five app. D, whose
   prediction ``ppo.win_advantage_coeff`` reads). In the OpenAI Five module each is one linear layer on the LSTM's
   output, which every policy head reads (policies/model/five_module.py), so the LSTM and the encoders stay as they
   are: everything but the critics keeps its weights bit for bit, the
   observation statistics included (the learner skips their merge), and the env runners keep acting with the
   starting policy. The other loss terms are computed and logged as usual; their gradients are dropped before the
   gradient clipping, so the critics' step is that of their own losses alone, and Adam's moments of the frozen
   parameters are not touched;
2. actor learning-rate warm-up, iterations V + 1 .. V + A: every parameter trains; the parameters other than the
   critics' take an Adam step scaled by k / (A + 1) at the k-th of these iterations (Adam's step is linear in its
   learning rate, so this is their learning rate scaled, with one optimizer and its checkpoint layout unchanged);
3. from then on, the usual update.

``warmup_phase`` says what an iteration is; ``ValueWarmup`` holds the learner's side (which parameters are the value
head's, the phase of the coming update, the optimizer's step hooks). The driver sets the phase before every iteration
(callbacks/value_warmup.py). ``scale_value_head`` is the other operation on the value head alone: the run's reward
scale (callbacks/reward_scale.py) rescales it when the std changes, so that its predictions keep their meaning.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

VALUE_HEAD = "value_head"  # the value head's submodule in FiveRLModule (policies/model/five_module.py)
WIN_HEAD = "win_head"  # the win-probability head's (Five app. D)
# what a critic-only update trains (those of them the module has): the heads no action reads, the value head and the
# win-probability head (Five app. D)
CRITIC_HEADS = (VALUE_HEAD, WIN_HEAD)


class StepScale:
    """An optimizer step of `params` scaled by a factor after the optimizer took it: Adam's step is linear in its
    learning rate, so this is their learning rate scaled, with one optimizer and its checkpoint layout unchanged.
    ``remember`` before the step, ``scale`` after it."""

    def __init__(self, params: list):
        self.params = params
        self._before = None

    def remember(self):
        self._before = [p.detach().clone() for p in self.params]

    def scale(self, factor: float):
        """Moves each parameter to before + factor * (after - before); nothing without a remembered step."""
        if self._before is None:
            return
        with torch.no_grad():
            for p, before in zip(self.params, self._before):
                p.lerp_(before, 1.0 - factor)
        self._before = None


def value_head_parameters(module: torch.nn.Module, value_head: str = VALUE_HEAD) -> list:
    """The parameters of the module's value head (a ValueError if it has none)."""
    params = [p for n, p in module.named_parameters() if n.split(".")[0] == value_head]
    if not params:
        raise ValueError(f"this operation acts on the module's {value_head!r} alone, and this module "
                         f"({type(module).__name__}) has no parameters under that name")
    return params


def scale_value_head(module: torch.nn.Module, ratio: float):
    """Multiplies the value head's weights and bias by `ratio`: a linear head's predictions are then `ratio` times
    what they were, for every input. With ratio = old std / new std, a head that predicted returns divided by the old
    std predicts them divided by the new one (PopArt's "preserving outputs precisely", van Hasselt et al. 2016, for
    a scale without a shift)."""
    if not ratio > 0:
        raise ValueError(f"the value head's scale ratio must be > 0, got {ratio}")
    with torch.no_grad():
        for p in value_head_parameters(module):
            p.mul_(float(ratio))


@dataclass(frozen=True)
class WarmupPhase:
    """What the coming update trains: with ``critic_only`` the critics alone, at ``value_lr`` (None: the scheduled
    learning rate); otherwise every parameter, those outside the critics at ``actor_lr_factor`` times the scheduled
    learning rate."""
    critic_only: bool = False
    actor_lr_factor: float = 1.0
    value_lr: float | None = None


def warmup_phase(iteration: int, value_iterations: int, actor_lr_iterations: int,
                 value_lr: float | None = None) -> WarmupPhase:
    """The phase of `iteration`, counted from the run's start (1: its first iteration): critic-only for the first
    `value_iterations` (at `value_lr`), then the actor's learning rate at k / (actor_lr_iterations + 1) for the k-th
    of the next `actor_lr_iterations`, then the usual update."""
    if iteration <= value_iterations:
        return WarmupPhase(critic_only=True, actor_lr_factor=0.0, value_lr=value_lr)
    k = iteration - value_iterations
    if k <= actor_lr_iterations:
        return WarmupPhase(critic_only=False, actor_lr_factor=k / (actor_lr_iterations + 1))
    return WarmupPhase()


class ValueWarmup:
    """The learner's side of the warm-up for one module: its parameters split into the critics' (``value_params``: the
    value head's and the win head's) and the others (the "actor's": everything the policy reads), the phase of the
    coming update (``phase``, set by the driver), and
    the hooks on the module's optimizer that apply it."""

    def __init__(self, module: torch.nn.Module, heads: tuple = CRITIC_HEADS):
        value_head_parameters(module)  # a module without a value head has nothing to warm up
        self.value_params = [p for n, p in module.named_parameters() if n.split(".")[0] in heads]
        self.actor_params = [p for n, p in module.named_parameters() if n.split(".")[0] not in heads]
        self._actor_ids = {id(p) for p in self.actor_params}
        self.phase = WarmupPhase()
        self._actor_step = StepScale(self.actor_params)  # the actor's step at a learning-rate factor below 1
        self._scheduled_lrs = None  # the optimizer's learning rates, while a critic-only step runs at value_lr

    def attach(self, optimizer: torch.optim.Optimizer):
        """Hooks the phase onto `optimizer`'s steps (the module's optimizer): before a critic-only step the actor's
        gradients are cleared, so Adam skips those parameters (weights and moments), and the learning rate is the
        phase's value_lr for that step; around a step at an actor learning-rate factor f < 1 the actor's parameters
        are moved back to f times their step."""
        optimizer.register_step_pre_hook(self._before_step)
        optimizer.register_step_post_hook(self._after_step)

    def set_phase(self, phase: WarmupPhase):
        if not 0.0 <= phase.actor_lr_factor <= 1.0:
            raise ValueError(f"actor_lr_factor must be in [0, 1], got {phase.actor_lr_factor}")
        if phase.value_lr is not None and not 0.0 < phase.value_lr <= 1.0:
            raise ValueError(f"value_lr must be None or in (0, 1], got {phase.value_lr}")
        self.phase = phase

    def is_actor(self, param) -> bool:
        return id(param) in self._actor_ids

    def drop_actor_gradients(self, gradients: dict, params: dict) -> dict:
        """RLlib's flat gradients (param ref -> gradient; `params`: param ref -> parameter) without the actor's in a
        critic-only phase (so that the gradient clipping measures the critics' alone); as they are otherwise."""
        if not self.phase.critic_only:
            return gradients
        return {ref: g for ref, g in gradients.items() if not self.is_actor(params[ref])}

    def _before_step(self, optimizer, args, kwargs):
        if self.phase.critic_only:
            for p in self.actor_params:
                p.grad = None  # Adam skips a parameter without a gradient: weights and moments stay as they are
            if self.phase.value_lr is not None:
                self._scheduled_lrs = [g["lr"] for g in optimizer.param_groups]
                for g in optimizer.param_groups:
                    g["lr"] = self.phase.value_lr
        elif self.phase.actor_lr_factor < 1.0:
            self._actor_step.remember()

    def _after_step(self, optimizer, args, kwargs):
        if self._scheduled_lrs is not None:
            for g, lr in zip(optimizer.param_groups, self._scheduled_lrs):
                g["lr"] = lr
            self._scheduled_lrs = None
        self._actor_step.scale(self.phase.actor_lr_factor)
