"""The factorized action distribution of OpenAI Five (Five app. F and H, fig. 18).

An action is (primary, delay, target_unit, offset_x, offset_y). The target unit's logits depend on the sampled
primary action (its attention keys are masked by a learned per-action gate), so the distribution receives unit
logits for every primary action and picks the row of the sampled one. The primary action's target type decides
which parameters it reads (Table 5): log-probability, entropy and KL count only the read parameters, so the
gradients of ignored ones (pure noise) are masked out of the loss, as in app. F. Delay is always read.

Inputs, concatenated on the last axis (``FiveActionDistribution.input_layout``):
primary logits (P) | unit logits (P x U) | delay (4) | offset x (G x 9) | offset y (G x 9) | reads_unit (P) |
reads_offset (P) [| offset_group (P), when G > 1]

G is the number of offset parameters (``FiveModelConfig.offset_groups``): with one (G = 1) every primary action that
reads an offset reads the same pair of heads; with several, as in Five (app. F: "Unit Selection and Offset are
actually implemented within the model as several different, mutually exclusive parameters depending on the primary
action"), primary action p reads the pair of group ``offset_group[p]``, as it reads the unit logits of its own row.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from ray.rllib.core.distribution.distribution import Distribution
from ray.rllib.utils.annotations import override

from moba.env.actions import N_OFFSETS
from moba.game.constants import N_DELAYS


def _entropy(logits):
    logp = F.log_softmax(logits, -1)
    return -(logp.exp() * logp).sum(-1)


def _kl(logits_p, logits_q):
    lp, lq = F.log_softmax(logits_p, -1), F.log_softmax(logits_q, -1)
    return (lp.exp() * (lp - lq)).sum(-1)


def _pick(logits, idx):
    return F.log_softmax(logits, -1).gather(-1, idx.long().unsqueeze(-1)).squeeze(-1)


class FiveActionDistribution(Distribution):
    n_primary: int = 0
    max_units: int = 0
    n_delay: int = N_DELAYS
    n_offset: int = N_OFFSETS
    n_offset_groups: int = 1
    HEADS = ("primary", "delay", "unit", "offsets")  # the parts of the action's entropy (head_entropies)

    def __init__(self, primary, unit, delay, offset_x, offset_y, reads_unit, reads_offset, offset_group=None,
                 deterministic=False):
        """`offset_x`, `offset_y`: (..., 9) with one offset parameter (`offset_group` None), (..., G, 9) with G, and
        then `offset_group` (..., P): the group each primary action reads."""
        self.primary, self.unit, self.delay = primary, unit, delay
        self.offset_x, self.offset_y = offset_x, offset_y
        self.reads_unit, self.reads_offset = reads_unit, reads_offset
        self.offset_group = None if offset_group is None else offset_group.long()
        self.deterministic = deterministic

    # ---- construction ------------------------------------------------------------------------------------------------
    @classmethod
    def make(cls, n_primary: int, max_units: int, n_offset_groups: int = 1) -> type:
        """The distribution class for a given number of primary actions, unit rows and offset parameters."""
        return type("FiveActionDistribution", (cls,), {"n_primary": n_primary, "max_units": max_units,
                                                        "n_offset_groups": n_offset_groups})

    @classmethod
    def input_layout(cls):
        p, u, g = cls.n_primary, cls.max_units, cls.n_offset_groups
        return ((("primary", p), ("unit", p * u), ("delay", cls.n_delay), ("offset_x", g * cls.n_offset),
                 ("offset_y", g * cls.n_offset), ("reads_unit", p), ("reads_offset", p))
                + ((("offset_group", p),) if g > 1 else ()))

    @classmethod
    @override(Distribution)
    def required_input_dim(cls, space=None, **kwargs) -> int:
        return sum(n for _, n in cls.input_layout())

    @classmethod
    @override(Distribution)
    def from_logits(cls, logits, **kwargs) -> "FiveActionDistribution":
        parts = dict(zip([k for k, _ in cls.input_layout()],
                         torch.split(logits, [n for _, n in cls.input_layout()], dim=-1)))
        parts["unit"] = parts["unit"].reshape(*logits.shape[:-1], cls.n_primary, cls.max_units)
        parts["reads_unit"] = parts["reads_unit"] > 0.5
        parts["reads_offset"] = parts["reads_offset"] > 0.5
        if cls.n_offset_groups > 1:
            for k in ("offset_x", "offset_y"):
                parts[k] = parts[k].reshape(*logits.shape[:-1], cls.n_offset_groups, cls.n_offset)
            parts["offset_group"] = parts["offset_group"].round().long()
        return cls(**parts)

    @staticmethod
    def pack(primary, unit, delay, offset_x, offset_y, reads_unit, reads_offset, offset_group=None):
        """The inverse of from_logits: the module's head outputs -> one logits tensor."""
        groups = []
        if offset_group is not None:  # (..., G, 9) offsets, and the group of each primary action
            offset_x, offset_y, groups = offset_x.flatten(-2), offset_y.flatten(-2), [offset_group.to(primary.dtype)]
        return torch.cat([primary, unit.flatten(-2), delay, offset_x, offset_y, reads_unit.float(),
                          reads_offset.float()] + groups, dim=-1)

    @override(Distribution)
    def to_deterministic(self) -> "FiveActionDistribution":
        return type(self)(self.primary, self.unit, self.delay, self.offset_x, self.offset_y, self.reads_unit,
                          self.reads_offset, self.offset_group, deterministic=True)

    # ---- helpers -----------------------------------------------------------------------------------------------------
    def _unit_logits_of(self, p):
        idx = p.long()[..., None, None].expand(*p.shape, 1, self.max_units)
        return self.unit.gather(-2, idx).squeeze(-2)

    def _offset_logits_of(self, p) -> tuple:
        """(x, y) offset logits (..., 9) that primary actions `p` (...) read."""
        if self.offset_group is None:
            return self.offset_x, self.offset_y
        g = self.offset_group.gather(-1, p.long().unsqueeze(-1))  # (..., 1)
        idx = g.unsqueeze(-1).expand(*g.shape, self.offset_x.shape[-1])
        return self.offset_x.gather(-2, idx).squeeze(-2), self.offset_y.gather(-2, idx).squeeze(-2)

    def offsets_by_primary(self) -> tuple:
        """(x, y) offset logits (..., P, 9) of every primary action (the rows of its group)."""
        p = self.primary.shape[-1]
        if self.offset_group is None:
            return tuple(o.unsqueeze(-2).expand(*o.shape[:-1], p, o.shape[-1]) for o in (self.offset_x, self.offset_y))
        idx = self.offset_group.unsqueeze(-1).expand(*self.offset_group.shape, self.offset_x.shape[-1])
        return self.offset_x.gather(-2, idx), self.offset_y.gather(-2, idx)

    def _offset_group_weights(self, prob):
        """(..., G): the probability that the primary action reads each group's offsets (G = 1: (..., 1))."""
        read = prob * self.reads_offset
        if self.offset_group is None:
            return read.sum(-1, keepdim=True)
        return read.new_zeros(*read.shape[:-1], self.offset_x.shape[-2]).scatter_add(-1, self.offset_group, read)

    def _grouped(self, o):
        """Offset logits with a group axis: (..., 1, 9) with one offset parameter."""
        return o.unsqueeze(-2) if self.offset_group is None else o

    def _reads(self, p):
        pl = p.long().unsqueeze(-1)
        return self.reads_unit.gather(-1, pl).squeeze(-1), self.reads_offset.gather(-1, pl).squeeze(-1)

    def _draw(self, logits, generator=None):
        if self.deterministic:
            return logits.argmax(-1)
        # Categorical(logits=logits).sample() without building the distribution object: the same draws
        probs = F.softmax(logits, -1).reshape(-1, logits.shape[-1])
        return torch.multinomial(probs, 1, True, generator=generator).reshape(logits.shape[:-1])

    # ---- Distribution API --------------------------------------------------------------------------------------------
    @override(Distribution)
    def sample(self, *, sample_shape=None, return_logp: bool = False, generator=None, **kwargs):
        """One action per row; `generator` (a torch.Generator) draws it instead of torch's global generator."""
        p = self._draw(self.primary, generator)
        ox, oy = self._offset_logits_of(p)
        action = {"primary": p, "delay": self._draw(self.delay, generator),
                  "target_unit": self._draw(self._unit_logits_of(p), generator),
                  "offset_x": self._draw(ox, generator), "offset_y": self._draw(oy, generator)}
        if return_logp:
            return action, self.logp(action)
        return action

    @override(Distribution)
    def rsample(self, *, sample_shape=None, return_logp: bool = False, **kwargs):
        raise NotImplementedError("a categorical action has no reparameterized sample")

    @override(Distribution)
    def logp(self, value, **kwargs):
        return sum(self.head_logps(value).values())

    def head_logps(self, value) -> dict:
        """Each head's part of ``logp(value)`` (HEADS; they sum to it): a parameter head's is 0 where the primary
        action of `value` does not read it."""
        p = value["primary"]
        ru, ro = self._reads(p)
        primary = _pick(self.primary, p)
        zero = torch.zeros_like(primary)
        ox, oy = self._offset_logits_of(p)
        off = _pick(ox, value["offset_x"]) + _pick(oy, value["offset_y"])
        return {"primary": primary, "delay": _pick(self.delay, value["delay"]),
                "unit": torch.where(ru, _pick(self._unit_logits_of(p), value["target_unit"]), zero),
                "offsets": torch.where(ro, off, zero)}

    def head_entropies(self, constant_reads: bool = False) -> dict:
        """Each head's part of the action's entropy; they sum to ``entropy()``: "primary" H(primary), "delay"
        H(delay), "unit" sum_p pi(p) [reads unit] H(unit | p), "offsets" sum_g P(the primary reads group g's offsets)
        (H(x_g) + H(y_g)).
        ``constant_reads``: the probabilities that weight the parameter heads carry no gradient (the "heads" entropy
        bonus, ppo.entropy_bonus): the same value, but an entropy bonus on it keeps each head from collapsing without
        moving the primary action toward the primaries that read more parameters."""
        prob = F.softmax(self.primary, -1)
        if constant_reads:
            prob = prob.detach()
        return {"primary": _entropy(self.primary), "delay": _entropy(self.delay),
                "unit": self._unit_entropy(prob),
                "offsets": (self._offset_group_weights(prob) * (_entropy(self._grouped(self.offset_x))
                                                                + _entropy(self._grouped(self.offset_y)))).sum(-1)}

    def _unit_entropy(self, prob):
        """sum_p prob[p] [reads unit] H(unit | p), computed on the primary actions that read a unit and have a
        probability above 0 only: the others add exactly 0, and their gradient is 0 (a masked primary's probability is
        0, and so is its softmax gradient). In the learner's batches that is 7-10% of the (P, U) unit logits (the
        entropy over all of them cost 10% of a 5v5 minibatch's update)."""
        p, u = self.unit.shape[-2:]
        chosen = (self.reads_unit & (prob > 0)).flatten().nonzero().squeeze(1)  # flat (row, primary) indices
        row = torch.div(chosen, p, rounding_mode="floor")
        # (rows, P, U) is a view of the distribution's inputs (a flat (rows * P, U) one would be a copy of them)
        terms = prob.flatten().index_select(0, chosen) * _entropy(self.unit.reshape(-1, p, u)[row, chosen - row * p])
        rows = prob.new_zeros(prob[..., 0].numel()).index_add(0, row, terms)
        return rows.reshape(prob.shape[:-1])

    @override(Distribution)
    def entropy(self, **kwargs):
        """H(primary) + H(delay) + sum_p pi(p) [reads unit] H(unit | p) + sum_p pi(p) [reads offset] H(offsets):
        the exact entropy of the action, counting only the parameters each primary action reads."""
        return sum(self.head_entropies().values())

    @override(Distribution)
    def kl(self, other: "FiveActionDistribution", **kwargs):
        return sum(self.head_kls(other).values())

    def head_kls(self, other: "FiveActionDistribution") -> dict:
        """Each head's part of ``kl(other)`` (HEADS; they sum to it), a parameter head's weighted by this
        distribution's probability that the primary action reads it."""
        prob = F.softmax(self.primary, -1)
        k_off = (_kl(self._grouped(self.offset_x), other._grouped(other.offset_x))
                 + _kl(self._grouped(self.offset_y), other._grouped(other.offset_y)))  # (..., G)
        return {"primary": _kl(self.primary, other.primary), "delay": _kl(self.delay, other.delay),
                "unit": (prob * self.reads_unit * _kl(self.unit, other.unit)).sum(-1),
                "offsets": (self._offset_group_weights(prob) * k_off).sum(-1)}
