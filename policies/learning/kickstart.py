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
on the teacher's games. ``ppo.kickstart_class_weight_power`` weights each step by its teacher primary action's class
weight (``TeacherClassWeights``), as behaviour cloning does (policies/pretrain/cloning.py): abilities and items are
~1% of
the labels and the student that imitates without weights rarely uses them.
"""
from __future__ import annotations

import numpy as np
import torch

from moba.env.actions import ACTION_KEYS, N_PRIMARY, NOOP_ACTION

TEACHER_ACTION = "teacher_action"  # extra model output column: the teacher's action, ACTION_KEYS order (int64)
# -log pi of a teacher action is clamped here: an action the student's masks rule out (the teacher reads the same
# masks, so only through a bug) must not blow up the loss
TEACHER_NLL_CAP = 20.0
MAX_CLASS_WEIGHT = 20.0  # the largest class weight of a primary action (behaviour cloning's and the kickstart's)
NOOP_LABEL = np.array([NOOP_ACTION[k] for k in ACTION_KEYS], np.int64)  # the label while the loss is off


def agent_teacher(init: dict) -> str | None:
    """The teacher's agent name when ``init.teacher`` names an agent (not a module checkpoint), else None."""
    from policies.agents.by_name import AGENTS
    teacher = (init or {}).get("teacher")
    return teacher if isinstance(teacher, str) and teacher in AGENTS else None


def label(action: dict) -> np.ndarray:
    """An agent's action (a dict of ACTION_KEYS) as one TEACHER_ACTION row."""
    return np.array([int(action[k]) for k in ACTION_KEYS], np.int64)


def teacher_nll(dist, labels: torch.Tensor) -> torch.Tensor:
    """-log pi(teacher's action) per step under the student's action distribution `dist`
    (policies/model/action_distribution.py: only the parameters the teacher's primary action reads count), split in
    two on
    the last axis: [..., 0] the primary action's part, [..., 1] the parameter heads' (delay, unit, offsets), each capped
    at TEACHER_NLL_CAP; `labels`: the TEACHER_ACTION column, [..., len(ACTION_KEYS)]."""
    labels = labels.long()
    primary, params = primary_and_params(dist.head_logps({k: labels[..., i] for i, k in enumerate(ACTION_KEYS)}))
    return -torch.stack([primary, params], -1).clamp(min=-TEACHER_NLL_CAP)


def primary_and_params(parts: dict) -> tuple:
    """A per-head split (FiveActionDistribution.head_logps, head_kls) as the kickstart weighs it: (the primary
    action's part, the parameter heads' parts summed)."""
    return parts["primary"], sum(v for k, v in parts.items() if k != "primary")


def head_weights(kickstart_coeff: float, params_floor: float) -> tuple[float, float]:
    """The kickstart loss's weights on (the primary action, the parameter heads): the schedule's kickstart_coeff, and
    for the parameter heads at least ``ppo.kickstart_params_floor``, so that the student can leave the teacher's
    choice of action while it keeps the teacher's way of doing it (where to move, whom to hit)."""
    return float(kickstart_coeff), max(float(kickstart_coeff), float(params_floor))


def kickstart_on(kickstart_coeff: float, params_floor: float) -> bool:
    """Whether the kickstart loss weighs any head (``head_weights``): the learner needs the teacher, and the env
    runners label the student's steps."""
    return max(head_weights(kickstart_coeff, params_floor)) > 0


def primary_class_weights(counts: np.ndarray, power: float, cap: float = MAX_CLASS_WEIGHT) -> np.ndarray:
    """(N_PRIMARY,) weights of the teacher's primary actions from their label counts: (f_max / f_c) ** power, capped
    at `cap`; 1 for actions never seen."""
    w = np.ones(N_PRIMARY)
    seen = counts > 0
    w[seen] = np.minimum((counts.max() / counts[seen]) ** power, cap)
    return w.astype(np.float32)


class TeacherClassWeights:
    """The kickstart loss over a batch with each step weighted by its teacher primary action's class weight
    (``primary_class_weights``), the frequencies counted over every label this learner has trained on: the weighted
    mean, divided by the summed weights. ``power`` 0: the plain mean over the batch."""

    def __init__(self, power: float):
        self.power = float(power)
        self.counts = np.zeros(N_PRIMARY, np.float64)

    def loss(self, nll: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The loss of `nll` (per step and part, ``teacher_nll``: [..., parts]), one per part, `labels` the
        TEACHER_ACTION column, `mask` the steps that count."""
        if self.power <= 0:
            return nll[mask].sum(0) / mask.sum().clamp_min(1)
        primary = labels[..., ACTION_KEYS.index("primary")].long()
        self.counts += np.bincount(primary[mask].cpu().numpy(), minlength=N_PRIMARY)
        w = torch.as_tensor(primary_class_weights(self.counts, self.power), device=nll.device)[primary] * mask
        return (w[..., None] * nll).flatten(0, -2).sum(0) / w.sum().clamp_min(1e-8)
