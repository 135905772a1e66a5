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

import torch
from torch import nn

NORM_CLIP = 5.0  # app. E: clip normalized observations to (-5, 5)
NORM_EPS = 1e-6


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
        x = x.reshape(-1, x.shape[-1])
        if mask is not None:
            x = x[mask.reshape(-1).bool()]
        n = x.shape[0]
        if n == 0:
            return
        # the batch's moments in x's dtype by Welford's one pass (torch.var_mean), merged in float64: a float64 copy
        # of the data (the unit table's is the largest tensor of an update) cost a quarter of a 5v5 update
        b_var, b_mean = torch.var_mean(x, dim=0, correction=0)
        if not bool(torch.isfinite(b_var).all()):  # a non-finite value anywhere in a column makes its moments so
            finite = torch.isfinite(x)
            bad = (~finite).any(0).nonzero().flatten().tolist()
            names = [features[i] if features is not None and i < len(features) else f"column {i}" for i in bad]
            if not bad:  # finite values whose variance overflows x's dtype
                names = [features[i] if features is not None and i < len(features) else f"column {i}"
                         for i in (~torch.isfinite(b_var)).nonzero().flatten().tolist()]
                raise FloatingPointError(f"{name}: the variance of features {names} overflows {x.dtype}; the "
                                         f"running statistics were left unchanged")
            raise FloatingPointError(
                f"{name}: {int((~finite).any(1).sum())} of {n} rows hold non-finite values, in features {names} "
                f"(e.g. {x[~finite][:4].tolist()}); the running statistics were left unchanged")
        b_mean, b_m2 = b_mean.double(), b_var.double() * n
        total = self.count + n
        delta = b_mean - self.mean
        self.mean += delta * (n / total)
        # rounding can leave a constant feature's M2 a hair below 0; its square root would be NaN
        self.m2 += (b_m2 + delta ** 2 * (self.count * n / total)).clamp_min(0.0)
        self.count += n
