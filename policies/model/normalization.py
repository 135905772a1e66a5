"""Running mean/std normalization of float observations (Five app. E): "for each observation, we keep a
running mean and standard deviation of all data ever observed; at each timestep we subtract the mean and divide by
the st dev, clipping the final result to be within (-5, 5)".

The statistics are registered buffers, so they travel with the module's state (checkpoints, and the weights the
learner pushes to the env runners): runners and learner always normalize alike. Only the learner updates them.
Each feature keeps its own count, so that a feature added by model surgery (policies/surgery/weights.py) starts fresh
statistics beside the others; a state saved with one count for all features (before surgery existed) loads as that
count for each feature.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

NORM_CLIP = 5.0  # app. E: clip normalized observations to (-5, 5)
NORM_EPS = 1e-6
MOMENT_BLOCK_ROWS = 4096  # rows a block of batch_moments' pass (its temporaries stay in the cache)


class RunningNorm(nn.Module):
    def __init__(self, n_features: int):
        super().__init__()
        self.register_buffer("count", torch.zeros(n_features, dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(n_features, dtype=torch.float64))
        self.register_buffer("m2", torch.zeros(n_features, dtype=torch.float64))

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        key = prefix + "count"
        count = state_dict.get(key)
        if count is not None and torch.as_tensor(count).dim() == 0:  # one count for all features (older states)
            state_dict[key] = torch.as_tensor(count, dtype=torch.float64).expand(self.count.shape).clone()
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @property
    def std(self) -> torch.Tensor:
        """The running standard deviation per feature (1 until two values were seen); computed without a host sync."""
        std = torch.sqrt(self.m2.clamp_min(0.0) / (self.count - 1).clamp_min(1.0)).clamp_min(NORM_EPS)
        return torch.where(self.count < 2, torch.ones_like(std), std)

    def forward(self, x: torch.Tensor, columns: torch.Tensor | None = None) -> torch.Tensor:
        """Normalizes the last axis of x and clips to (-NORM_CLIP, NORM_CLIP); `columns`: the features x holds (a
        subset, in that order; None: all). The statistics are kept in float64; the data is normalized in its own dtype
        (a float64 copy of the unit table cost more than the unit encoder)."""
        mean, inv_std = self._scale(x.dtype)
        if columns is not None:
            mean, inv_std = mean[columns], inv_std[columns]
        return ((x - mean) * inv_std).clamp_(-NORM_CLIP, NORM_CLIP)

    def _scale(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(mean, 1 / std) in `dtype`, kept until the statistics change: an env runner's forward pass of a few dozen
        rows spent ~30 us a call, six calls a pass, recomputing them from float64 between weight syncs. The key is each
        buffer's identity and version counter (bumped by every in-place change: update(), load_state_dict(), a
        weight sync), and inference mode (a tensor made in it cannot enter a graph that is differentiated)."""
        key = (dtype, torch.is_inference_mode_enabled(),
               *((id(b), b._version) for b in (self.count, self.mean, self.m2)))
        cached = self.__dict__.get("_scale_cache")
        if cached is None or cached[0] != key:
            with torch.no_grad():
                cached = (key, self.mean.to(dtype), (1.0 / self.std).to(dtype))
            self.__dict__["_scale_cache"] = cached
        return cached[1], cached[2]

    @torch.no_grad()
    def update(self, x: torch.Tensor, mask: torch.Tensor | None = None, name: str = "observation",
               features: tuple | None = None):
        """Merges the rows of x (..., F) where mask (...) is true into the statistics (Chan et al.'s parallel
        variance update, exact for any batch split). Raises FloatingPointError, naming the observation (`name`)
        and its non-finite features (`features`: their names, else column numbers), before a non-finite value
        reaches the statistics: one inf would turn them, and so every forward pass of the learner and the env
        runners that receive them, to NaN."""
        self.merge(batch_moments(x, mask, name, features))

    @torch.no_grad()
    def merge(self, moments: Moments | None):
        """Merges a batch's moments (batch_moments, merge_moments) into the statistics; None changes nothing."""
        if moments is None:
            return
        n, b_mean, b_m2 = moments
        total = self.count + n
        delta = b_mean - self.mean
        self.mean += delta * (n / total)
        # rounding can leave a constant feature's M2 a hair below 0; its square root would be NaN
        self.m2 += (b_m2 + delta ** 2 * (self.count * n / total)).clamp_min(0.0)
        self.count += n


class Moments(NamedTuple):
    """A batch's rows' count, and per feature their mean and M2 (the sum of squared deviations from it), float64."""
    count: int
    mean: torch.Tensor
    m2: torch.Tensor


@torch.no_grad()
def batch_moments(x: torch.Tensor, mask: torch.Tensor | None = None, name: str = "observation",
                  features: tuple | None = None) -> Moments | None:
    """The moments of the rows of x (..., F) where mask (...) is true (None: every row); None when there are none.
    Raises FloatingPointError naming `name` and the non-finite features (RunningNorm.update).

    One pass over blocks of MOMENT_BLOCK_ROWS rows: each block's sums of (x - s) and (x - s)^2 in x's dtype, s the
    first block's mean (so that the squares do not cancel), summed over the blocks in float64. A block's temporaries
    stay in the cache: 5-10x the speed of torch.var_mean's Welford pass over a 5v5 batch's unit table (~0.1 s an
    update, about as much as the rest of the statistics' update), to float32's rounding of each block's sums."""
    x = x.reshape(-1, x.shape[-1])
    if mask is not None:
        mask = mask.reshape(-1).bool()
        if bool(mask.all()):
            mask = None
    n = x.shape[0] if mask is None else int(mask.sum())
    if n == 0:
        return None
    shift = None
    s1 = torch.zeros(x.shape[-1], dtype=torch.float64, device=x.device)
    s2 = torch.zeros_like(s1)
    for start in range(0, x.shape[0], MOMENT_BLOCK_ROWS):
        block = x[start:start + MOMENT_BLOCK_ROWS]
        if mask is not None:
            block = block[mask[start:start + MOMENT_BLOCK_ROWS]]
            if block.shape[0] == 0:
                continue
        if shift is None:
            shift = block.mean(0)
        d = block - shift
        s1 += d.sum(0).double()
        s2 += (d * d).sum(0).double()
    if not bool(torch.isfinite(s2).all()):  # a non-finite value anywhere in a column makes its sums so
        _raise_non_finite(x if mask is None else x[mask], s2, name, features)
    mean = s1 / n
    return Moments(n, shift.double() + mean, (s2 - s1 * mean).clamp_min(0.0))


def merge_moments(a: Moments | None, b: Moments | None) -> Moments | None:
    """The moments of two batches' rows together (Chan et al.), exact for any split; None is an empty batch."""
    if a is None or b is None:
        return a if b is None else b
    total = a.count + b.count
    delta = b.mean - a.mean
    return Moments(total, a.mean + delta * (b.count / total), a.m2 + b.m2 + delta ** 2 * (a.count * b.count / total))


def _raise_non_finite(x: torch.Tensor, s2: torch.Tensor, name: str, features: tuple | None):
    def named(columns: list) -> list:
        return [features[i] if features is not None and i < len(features) else f"column {i}" for i in columns]
    finite = torch.isfinite(x)
    bad = (~finite).any(0).nonzero().flatten().tolist()
    if not bad:  # finite values whose squares overflow x's dtype
        over = named((~torch.isfinite(s2)).nonzero().flatten().tolist())
        raise FloatingPointError(f"{name}: the variance of features {over} overflows {x.dtype}; the running "
                                 "statistics were left unchanged")
    raise FloatingPointError(
        f"{name}: {int((~finite).any(1).sum())} of {x.shape[0]} rows hold non-finite values, in features {named(bad)} "
        f"(e.g. {x[~finite][:4].tolist()}); the running statistics were left unchanged")
