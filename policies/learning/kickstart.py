"""Kickstarting from an agent that needs no network: the scripted bot as a teacher, online.

Kickstarting (Schmitt et al. 2018) trains the student on its own states with an auxiliary loss towards the teacher's
policy, weighted by a coefficient annealed to 0. With a module teacher (``init.teacher: PATH``) the learner computes
the teacher's distribution itself (``policies/learning/five_learner.py``). With an agent teacher (``init.teacher:
scripted_3``, any name of ``policies/agents.AGENTS``) the teacher cannot run in the learner: it is stateful and reads
one game at a time. So the batched env runner runs it in shadow on "main"'s heroes of every game, from the game's
start (``training/batched_env_runner.py``), and ships its action for each step in the column ``TEACHER_ACTION``; the
learner adds ``kickstart_coeff * -log pi(teacher's action)``, the KL from the teacher's (deterministic) policy to
the student's, over the parameters the teacher's primary action reads. This is DAgger's relabeling (Ross et al. 2011)
inside PPO: every label is on the student's own states, so errors do not compound as they do for a clone trained
on the teacher's games. Every step counts alike: weighted by its primary action's class as behaviour cloning weighs
them (policies/pretrain/cloning.py), the student copied the rare abilities and items and won fewer games
(docs/results.md, run 5).
"""
from __future__ import annotations

import numpy as np
import torch

from moba.env.actions import ACTION_KEYS, N_PRIMARY, NOOP_ACTION

TEACHER_ACTION = "teacher_action"  # extra model output column: the teacher's action, ACTION_KEYS order (int64)
# -log pi of a teacher action is clamped here: an action the student's masks rule out (the teacher reads the same
# masks, so only through a bug) must not blow up the loss
TEACHER_NLL_CAP = 20.0
NOOP_LABEL = np.array([NOOP_ACTION[k] for k in ACTION_KEYS], np.int64)  # the label while the loss is off
MAX_CLASS_WEIGHT = 20.0  # the largest class weight of a primary action (behaviour cloning's and the kickstart's)
CLASS_WEIGHT_HEADS = ("all", "primary")  # what the kickstart's class weights weigh (TeacherClassWeights.heads)


def agent_teacher(teacher) -> str | None:
    """The teacher's agent name when `teacher` (the run's ``init.teacher``) names an agent (not a module
    checkpoint), else None."""
    from policies.agents.by_name import AGENTS
    return teacher if isinstance(teacher, str) and teacher in AGENTS else None


def label(action: dict, action_mask: np.ndarray | None = None) -> np.ndarray:
    """An agent's action (a dict of ACTION_KEYS) as one TEACHER_ACTION row; with the state's ``action_mask``
    (its observation's), a primary action the mask rules out is the no-op the env plays in its place
    (moba/env/actions.py ``decode_team``). The scripted bot attacks a target its unit mask allows without reading the
    primary mask, which is all zero while the hero is stunned: about 1% of its attacks in 5v5, which no student can
    take (their log-probability is the masked logits')."""
    if action_mask is not None and not action_mask[int(action["primary"])]:
        return NOOP_LABEL.copy()
    return np.array([int(action[k]) for k in ACTION_KEYS], np.int64)


def label_action(labels: torch.Tensor) -> dict:
    """TEACHER_ACTION rows ([..., len(ACTION_KEYS)]) as an action dict of long tensors, ACTION_KEYS -> [...]."""
    labels = labels.long()
    return {k: labels[..., i] for i, k in enumerate(ACTION_KEYS)}


def teacher_nll(dist, labels: torch.Tensor) -> torch.Tensor:
    """-log pi(teacher's action) per step under the student's action distribution `dist`
    (policies/model/action_distribution.py: only the parameters the teacher's primary action reads count), capped at
    TEACHER_NLL_CAP; `labels`: the TEACHER_ACTION column, [..., len(ACTION_KEYS)]."""
    return capped_nll(teacher_nll_by_head(dist, labels))


def teacher_nll_by_head(dist, labels: torch.Tensor) -> dict:
    """Each head's part of ``teacher_nll`` per step, before the cap: {head (FiveActionDistribution.HEADS):
    -log pi of the teacher's choice there}; a parameter head's part is 0 where the teacher's primary does not read
    it."""
    return {head: -logp for head, logp in dist.head_logps(label_action(labels)).items()}


def capped_nll(by_head: dict) -> torch.Tensor:
    """``teacher_nll`` from its parts (``teacher_nll_by_head``): their sum, capped at TEACHER_NLL_CAP."""
    return sum(by_head.values()).clamp(max=TEACHER_NLL_CAP)


def kickstart_on(kickstart_coeff: float) -> bool:
    """Whether the kickstart loss has a weight: the learner needs the teacher, and the env runners label the
    student's steps."""
    return float(kickstart_coeff) > 0


def primary_class_weights(counts: np.ndarray, power: float, cap: float = MAX_CLASS_WEIGHT) -> np.ndarray:
    """(N_PRIMARY,) weights of the teacher's primary actions from their label counts: (f_max / f_c) ** power, capped
    at `cap`; 1 for actions never seen."""
    w = np.ones(N_PRIMARY)
    seen = counts > 0
    w[seen] = np.minimum((counts.max() / counts[seen]) ** power, cap)
    return w.astype(np.float32)


class TeacherClassWeights:
    """The agent teacher's loss with each step weighted by the class of the teacher's primary action
    (``ppo.kickstart_class_weight_power``; ``primary_class_weights``), the classes' frequencies counted over every
    label this learner has trained on since it was built (a restored run counts again from its first update).

    A weighted cross-entropy is minimized by a student whose primary action's probabilities are weight x the
    teacher's frequencies: it takes the rare actions more often than its teacher. ``logit_adjust``
    (``ppo.kickstart_class_logit_adjust``; Menon et al., ICLR 2021) scores the teacher's primary on the student's
    logits plus log(weight): the same larger gradients on the rare labels, and the optimum back at the teacher's
    frequencies, since softmax(logits + log w) proportional to w x frequency means softmax(logits) proportional to
    the frequency.

    ``heads`` (``ppo.kickstart_class_weight_heads``): "all" weighs a step's whole -log-probability, its parameters'
    too, so that every rare label takes a share of the update from the common ones (the moves, whose offsets hold
    most of the 5v5 kickstart KL); "primary" weighs the primary action's part only, and the parameter heads keep the
    plain mean."""

    def __init__(self, power: float, logit_adjust: bool = False, heads: str = "all"):
        if heads not in CLASS_WEIGHT_HEADS:
            raise ValueError(f"heads must be one of {list(CLASS_WEIGHT_HEADS)}, got {heads!r}")
        self.power = float(power)
        self.logit_adjust = bool(logit_adjust)
        self.heads = heads
        self.counts = np.zeros(N_PRIMARY, np.float64)

    def loss(self, by_head: dict, labels: torch.Tensor, mask: torch.Tensor,
             primary_logits: torch.Tensor | None = None) -> torch.Tensor:
        """The loss over the steps of `mask` from each head's -log-probability of the teacher's choice (`by_head`,
        ``teacher_nll_by_head``), each step's parts summed and capped at TEACHER_NLL_CAP: weighted by class as
        ``heads`` says; `labels`: the TEACHER_ACTION column; `primary_logits` ([..., N_PRIMARY], the student's,
        masked): needed by ``logit_adjust``, whose primary part is -log softmax(logits + log w) of the teacher's
        primary in the place of -log softmax(logits). ``power`` 0: the plain mean of ``teacher_nll``."""
        def mean(x, w=None):  # over the steps of `mask`; `w`: their weights
            if w is None:
                return x[mask].sum() / mask.sum().clamp_min(1)
            return (w * x[mask]).sum() / w.sum().clamp_min(1e-8)

        if self.power <= 0:
            return mean(capped_nll(by_head))
        primary = labels[..., ACTION_KEYS.index("primary")].long()
        self.counts += np.bincount(primary[mask].cpu().numpy(), minlength=N_PRIMARY)[:N_PRIMARY]
        weights = torch.as_tensor(primary_class_weights(self.counts, self.power), device=primary.device)
        primary_nll = by_head["primary"]
        params_nll = sum(v for k, v in by_head.items() if k != "primary")
        if self.logit_adjust:
            if primary_logits is None:
                raise ValueError("TeacherClassWeights(logit_adjust=True).loss needs the student's primary_logits")
            log_w = weights.log().to(primary_logits.dtype)
            # -log softmax(logits + log w)[y] - (-log softmax(logits)[y]): the two normalizers' difference minus
            # log w[y]
            primary_nll = primary_nll + (torch.logsumexp(primary_logits + log_w, -1)
                                         - torch.logsumexp(primary_logits, -1) - log_w[primary])
        w = weights[primary][mask]
        if self.heads == "all":
            return mean((primary_nll + params_nll).clamp(max=TEACHER_NLL_CAP), w)
        return mean(primary_nll.clamp(max=TEACHER_NLL_CAP), w) + mean(params_nll.clamp(max=TEACHER_NLL_CAP))
