"""What one PPO update did, beyond its losses: the figures that tell a policy gradient from noise.

- ``term_grad_norms``: each loss term's own gradient norm over the module's parameters (which term moves the
  weights: the policy surrogate, the value loss, the entropy bonus, the kickstart loss, ...);
- ``gradient_noise_cosine``: the cosine between the policy-surrogate gradients of two halves of the steps. Near 1
  the batch agrees on a direction; near 0 the gradient is mostly noise at this batch size (McCandlish et al. 2018's
  gradient noise scale, which Five sec. 4.4 and app. M use to choose the batch size, measured the cheap way);
- ``advantage_by_primary``: the mean advantage of the steps that took each primary action (which actions the
  update pushes up or down: a negative mean for every ability cast says the reward charges casts);
- ``teacher_agreement``: how often the student's most likely action matches the teacher's, per action head (the
  primary, and each parameter the teacher's primary reads);
- ``nonfinite_report``: when a loss is not finite, which of its terms, the batch's columns and the module's
  parameters and buffers are not.

The learner (policies/learning/five_learner.py) calls them; nothing here steps an optimizer or logs.
"""
from __future__ import annotations

from collections.abc import Mapping

import torch

from moba.env.actions import PRIMARY_NAMES

TERM_GRAD_PREFIX = "grad_norm_"  # metrics: grad_norm_<term>
ADVANTAGE_PREFIX = "advantage_"  # metrics: advantage_<primary action name>
AGREEMENT_PREFIX = "teacher_agreement_"  # metrics: teacher_agreement_<head>
AGREEMENT_HEADS = ("primary", "delay", "unit", "offsets")
# metrics: kickstart_kl_<head>, each head's part of the kickstart loss (the teacher's KL or -log pi of its action,
# before the agent teacher's cap; FiveActionDistribution.HEADS): which head holds the student away from its teacher
KICKSTART_HEAD_PREFIX = "kickstart_kl_"


def _grads(loss: torch.Tensor, params: list) -> list:
    if not loss.requires_grad:
        return [torch.zeros_like(p) for p in params]
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    return [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)]


def _norm(grads: list) -> float:
    return float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads)))


def term_grad_norms(terms: dict, params: list) -> dict:
    """{name: the L2 norm of d term / d params} for each scalar loss term (0 for a term without a graph)."""
    return {name: _norm(_grads(term, params)) for name, term in terms.items()}


def half_masks(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two disjoint halves of the real steps `mask` ([B] or [B, T] bool): the even and the odd sequences (rows), so
    that each half holds whole sequences; with one row, the even and odd steps. The learner's minibatches are
    shuffled, so these are random sequences of all the batch's games: in the runners' order they alternated along
    one game (docs/results.md, the negative cosine without the teacher)."""
    rows = torch.arange(mask.shape[0], device=mask.device)
    if mask.dim() == 1 or mask.shape[0] == 1:
        idx = torch.arange(mask.numel(), device=mask.device).reshape(mask.shape)
        return mask & (idx % 2 == 0), mask & (idx % 2 == 1)
    even = (rows % 2 == 0).reshape(-1, *([1] * (mask.dim() - 1)))
    return mask & even, mask & ~even


def gradient_noise_cosine(per_step_loss: torch.Tensor, mask: torch.Tensor, params: list) -> float:
    """The cosine between the gradients of `per_step_loss` averaged over each half of the real steps (half_masks);
    NaN when a half is empty or a gradient is 0."""
    a, b = half_masks(mask)
    if not a.any() or not b.any():
        return float("nan")
    ga = _grads(per_step_loss[a].mean(), params)
    gb = _grads(per_step_loss[b].mean(), params)
    dot = float(sum((x.double() * y.double()).sum() for x, y in zip(ga, gb)))
    na, nb = _norm(ga), _norm(gb)
    return dot / (na * nb) if na > 0 and nb > 0 else float("nan")


def advantage_by_primary(advantages: torch.Tensor, primary: torch.Tensor, mask: torch.Tensor) -> dict:
    """{primary action name: (sum of the advantages, steps)} over the real steps that took it (names with no step
    left out), for a mean over a whole update's minibatches."""
    adv, prim = advantages[mask].detach().double(), primary[mask].long()
    n_names = len(PRIMARY_NAMES)
    # one histogram and one copy to the host (a GPU learner would otherwise wait on the GPU twice per action)
    totals = torch.stack([torch.bincount(prim, weights=adv, minlength=n_names)[:n_names],
                          torch.bincount(prim, minlength=n_names)[:n_names].double()]).tolist()
    return {name: (totals[0][i], int(totals[1][i])) for i, name in enumerate(PRIMARY_NAMES) if totals[1][i]}


def teacher_agreement(student, teacher_action: dict, mask: torch.Tensor) -> dict:
    """{head: the share of the real steps where the student's most likely choice is the teacher's} for the primary
    action, the delay, and the target unit and the offsets where the teacher's primary reads them (the student's
    unit and offsets read under the teacher's primary); a head the teacher never read is left out. `student`: the
    student's FiveActionDistribution; `teacher_action`: ACTION_KEYS -> long tensors."""
    with torch.no_grad():
        p = teacher_action["primary"].long()
        reads_unit, reads_offset = student._reads(p)
        offset_x, offset_y = student._offset_logits_of(p)
        same = {
            "primary": (student.primary.argmax(-1) == p, mask),
            "delay": (student.delay.argmax(-1) == teacher_action["delay"].long(), mask),
            "unit": (student._unit_logits_of(p).argmax(-1) == teacher_action["target_unit"].long(),
                     mask & reads_unit),
            "offsets": ((offset_x.argmax(-1) == teacher_action["offset_x"].long())
                        & (offset_y.argmax(-1) == teacher_action["offset_y"].long()), mask & reads_offset),
        }
        return {head: float(hit[where].float().mean()) for head, (hit, where) in same.items() if where.any()}


def first_rows(batch: dict, mask: torch.Tensor, max_steps: int) -> dict:
    """The first sequences (rows) of a minibatch holding at most `max_steps` real steps (at least one row): every
    tensor of the nested batch sliced on its first axis."""
    per_row = mask.reshape(mask.shape[0], -1).sum(-1)
    n = max(1, int((torch.cumsum(per_row, 0) <= max_steps).sum()))

    def cut(v):
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == mask.shape[0]:
            return v[:n]
        return v
    return {k: cut(v) for k, v in batch.items()}


def _nonfinite_names(items, prefix: str = "") -> list:
    """The names of the float tensors among (name, value) `items` (nested mappings walked) that are not finite."""
    out = []
    for name, value in items:
        if isinstance(value, Mapping):
            out += _nonfinite_names(value.items(), f"{prefix}{name}/")
        elif isinstance(value, torch.Tensor) and value.is_floating_point() and not bool(torch.isfinite(value).all()):
            out.append(f"{prefix}{name}")
    return out


def nonfinite_report(terms: dict, batch, module: torch.nn.Module) -> str:
    """What is not finite in a minibatch whose loss is not: the loss's terms, the batch's columns (observations by
    key) and the module's parameters and buffers (the observation statistics among them)."""
    return (f"non-finite loss terms {_nonfinite_names(terms.items())}; batch columns "
            f"{_nonfinite_names((str(k), v) for k, v in batch.items())}; module parameters and buffers "
            f"{_nonfinite_names(list(module.named_parameters()) + list(module.named_buffers()))}")
