"""Self-imitation of the games "main" won outright (Oh et al., ICML 2018, "Self-Imitation Learning"; issue 29).

The shipped 1v1 agent finishes about half its Radiant games against a bot casting half its spells, and what separates
those games is a walk to the crystal after a kill (docs/results.md). PPO sees each such game once; self-imitation keeps
the end of each game "main" won outright and trains on it again, where the policy did better than its value expected:

    L_sil = coeff * mean_t[ -log pi(a_t | s_t) * (R_t - V(s_t))+ ] + value_coeff * mean_t[ 0.5 * ((R_t - V(s_t))+)^2 ]

over steps drawn from the buffer, R_t the discounted return from step t to the game's end (the post-processed
rewards the value head predicts, at the discount GAE uses), V(s_t) the value head now, with no gradient through it in
the policy term. The paper's policy weight is 1 and its value weight 0.01 (its A2C and PPO experiments); it samples
by priority (R - V)+, here uniformly over stored sequences.

- ``AddSelfImitationReturn`` (a learner connector): for an episode chunk that ends the game with "main"'s side the
  winner (terminated, not cut by the time limit), the return of each step (``SIL_RETURN``) and 1 in ``SIL_STEP``; 0 in
  both for every other chunk. The chunk is the game's last sample, its steps since the env runner's previous one
  (about a minute of a 1,200 s 1v1 game at the top rung's settings): the finish.
- ``SelfImitationBuffer``: the zero-padded sequences (observation, LSTM state at the sequence's start, action, loss
  mask, return) of those chunks, first in first out, up to a number of real steps. The learner fills it from each
  update's batch (the columns are then removed from the batch: PPO's minibatches do not read them) and draws
  ``steps`` real steps' worth of sequences for each minibatch's loss.
- ``self_imitation_loss``: the loss above, and its figures.

The buffer is not saved with checkpoints: a restored run refills it from its next won games.
"""
from __future__ import annotations

import collections

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from moba.game.teams import side_of_agent
from policies.learning.advantages import discounted_returns
from policies.learning.episode_columns import EpisodeColumns

SIL_RETURN = "sil_return"  # the batch column of R_t (0 outside won games' last chunks)
SIL_STEP = "sil_step"  # 1.0 at a step of a won game's last chunk, else 0.0
# the sequence columns the buffer keeps (and a replayed minibatch holds)
KEPT = (Columns.OBS, Columns.STATE_IN, Columns.ACTIONS, Columns.LOSS_MASK, SIL_RETURN)
SIL_VALUE_COEFF = 0.01  # Oh et al. 2018, app. A: the value loss weight beta^sil


def won_outright(sa_ep) -> bool:
    """Whether an episode chunk ends its game with the agent's side destroying the enemy's ancient."""
    if not sa_ep.is_terminated or len(sa_ep) == 0:
        return False
    winner = (sa_ep.get_infos(-1) or {}).get("winner")
    return winner is not None and winner == side_of_agent(str(sa_ep.agent_id))


class AddSelfImitationReturn(EpisodeColumns):
    """Adds ``SIL_RETURN`` and ``SIL_STEP`` to the learner's batch (module docstring), before RLlib's connectors pad
    it; ``gamma`` follows the discount's schedule (the learner's set_schedule_values)."""

    def __init__(self, *args, gamma: float = 0.99, **kwargs):
        super().__init__(*args, **kwargs)
        self.gamma = float(gamma)

    @override(EpisodeColumns)
    def columns(self, sa_ep) -> dict[str, np.ndarray]:
        n = len(sa_ep)
        if not won_outright(sa_ep):
            return {SIL_RETURN: np.zeros(n, np.float32), SIL_STEP: np.zeros(n, np.float32)}
        # the game ends at the chunk's last step: nothing bootstrapped
        return {SIL_RETURN: discounted_returns(sa_ep.get_rewards(), self.gamma).astype(np.float32),
                SIL_STEP: np.ones(n, np.float32)}


def _rows(tree_or_tensor, index):
    if isinstance(tree_or_tensor, dict):
        return {k: _rows(v, index) for k, v in tree_or_tensor.items()}
    return tree_or_tensor[index]


def _cat(parts: list):
    if isinstance(parts[0], dict):
        return {k: _cat([p[k] for p in parts]) for k in parts[0]}
    return torch.cat(parts)


class SelfImitationBuffer:
    """The won games' sequences (module docstring): at most `capacity` real steps, the oldest dropped first."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"the self-imitation buffer's capacity must be >= 1 real step, got {capacity}")
        self.capacity = int(capacity)
        self._chunks = collections.deque()  # (columns of some sequences, their real steps)
        self.steps = 0  # real steps held

    def add(self, batch) -> int:
        """Keeps the sequences of `batch` (a zero-padded module batch with ``SIL_STEP``) that hold a won game's steps;
        returns their real steps."""
        flags = batch[SIL_STEP]
        mask = batch[Columns.LOSS_MASK]
        keep = ((flags > 0) & mask).any(dim=1).nonzero(as_tuple=True)[0]
        if len(keep) == 0:
            return 0
        rows = {k: _rows(batch[k], keep) for k in KEPT}
        rows[Columns.LOSS_MASK] = rows[Columns.LOSS_MASK] & (_rows(flags, keep) > 0)
        steps = int(rows[Columns.LOSS_MASK].sum())
        self._chunks.append((rows, steps))
        self.steps += steps
        while self.steps > self.capacity and len(self._chunks) > 1:
            _, dropped = self._chunks.popleft()
            self.steps -= dropped
        return steps

    def scale_returns(self, ratio: float):
        """Multiplies every stored return by `ratio` (the value head's new scale over its old one)."""
        for rows, _ in self._chunks:
            rows[SIL_RETURN] = rows[SIL_RETURN] * ratio

    def sample(self, steps: int, generator: np.random.Generator) -> dict | None:
        """About `steps` real steps' worth of stored sequences, drawn uniformly without replacement (every stored
        sequence when it holds fewer), as a batch of KEPT columns; None when empty."""
        if not self._chunks:
            return None
        lengths = np.concatenate([rows[Columns.LOSS_MASK].sum(1).cpu().numpy() for rows, _ in self._chunks])
        n = int(np.clip(round(steps / max(1.0, float(lengths.mean()))), 1, len(lengths)))
        picked = np.sort(generator.choice(len(lengths), size=n, replace=False))
        parts, start = [], 0
        for rows, _ in self._chunks:
            size = rows[Columns.LOSS_MASK].shape[0]
            mine = picked[(picked >= start) & (picked < start + size)] - start
            if len(mine):
                parts.append(_rows(rows, torch.as_tensor(mine, device=rows[Columns.LOSS_MASK].device)))
            start += size
        return _cat([{k: p[k] for k in KEPT} for p in parts])


def self_imitation_loss(module, replay: dict, coeff: float, value_coeff: float) -> tuple[torch.Tensor, dict]:
    """L_sil on a replayed batch (module docstring) and its figures: the share of real steps whose return passed the
    value (``positive``) and the mean clipped advantage (R - V)+ over them (``advantage``)."""
    out = module.forward_train(replay)
    dist = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    values = module.compute_values(replay, embeddings=out.get(Columns.EMBEDDINGS))
    mask = replay[Columns.LOSS_MASK]
    count = mask.sum().clamp_min(1)
    advantage = (replay[SIL_RETURN] - values).clamp_min(0.0)
    policy = -(dist.logp(replay[Columns.ACTIONS]) * advantage.detach())[mask].sum() / count
    value = 0.5 * (advantage ** 2)[mask].sum() / count
    clipped = advantage.detach()[mask]
    figures = {"positive": float((clipped > 0).float().mean()) if len(clipped) else 0.0,
               "advantage": float(clipped.mean()) if len(clipped) else 0.0,
               "steps": int(mask.sum())}
    return coeff * policy + value_coeff * value, figures
