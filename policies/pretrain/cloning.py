"""Behaviour cloning of the Five module on recorded games (pretraining; the games are
``policies/pretrain/games.py``).

Sequences as in play. The module is recurrent, so it is trained on consecutive steps with its LSTM state carried
along each game, never on shuffled single steps from a zero state: every epoch cuts each recorded game into
segments of ``SEGMENT_STEPS`` at a random phase, shuffles the segments and deals them to ``BATCH_LANES`` lanes; an
SGD step takes the next chunk of ``max_seq_len`` steps (the module's unroll length) of every lane, starts it from
the state the lane's previous chunk ended in (detached: truncated backpropagation through time), and a lane that
starts a new segment starts from the zero state. A segment that starts mid-game has no true state to start from: its
first chunk only warms the state up (no loss). Batches then mix every phase of the game, and the state at every
trained step is the one play would have had (up to the warm-up).

The loss of a step:

- policy: -log p(teacher action) of ``FiveActionDistribution`` (app. F: only the parameters the teacher's primary
  action reads count), weighted by the teacher primary action's class weight, ``(f_max / f_c) ** CLASS_WEIGHT_POWER``
  capped at ``MAX_CLASS_WEIGHT`` (f_c the class's share of the training labels): abilities and items are ~1% of the
  labels but decide fights. The weighted mean over the batch (divided by the summed weights);
- value: ``VALUE_LOSS_WEIGHT`` x 0.5 (V - G)^2, G the discounted return (the run's gamma) of the rewards PPO sees
  (post-processed, divided by the std PPO's reward normalization would divide them by, ``return_scale``). The last
  ``1 / (1 - gamma)`` steps of a game cut by the time limit have no value target (their return is cut short);
- win probability (app. D): binary cross-entropy of the auxiliary head against the game's result (1 won, 0 lost,
  0.5 time limit), with PPO's weight ``AUX_WIN_COEFF``.

Observation normalizers (app. E) are updated from the data before training (``update_normalizers``), as the PPO
learner updates them from its batches.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from ray.rllib.core.columns import Columns

from moba.env.actions import ACTION_KEYS, N_OFFSETS, N_PRIMARY, PRIMARY_NAMES
from moba.game.abilities import TARGET_TYPE_READS_OFFSET, TARGET_TYPE_READS_UNIT
from policies.learning.five_learner import AUX_WIN_COEFF
from policies.learning.kickstart import MAX_CLASS_WEIGHT, primary_class_weights
from policies.model.five_module import WIN_LOGIT
from policies.learning.advantages import discounted_returns
from policies.pretrain.games import Trajectory

# ---- the trainer's defaults -----------------------------------------------------------------------------------------
LEARNING_RATE = 5e-4  # Adam (PPO's betas 0.9, 0.999)
BATCH_LANES = 64  # sequences per SGD step: 64 x 16 = 1,024 steps (2 cores: ~18k steps/s, vs ~12k at 16 lanes)
SEGMENT_STEPS = 1024  # an epoch cuts each game into segments of this many steps (a multiple of max_seq_len)
VALUE_LOSS_WEIGHT = 0.5  # of the value regression, next to the policy's cross-entropy
CLASS_WEIGHT_POWER = 0.5  # class weight (f_max / f_c) ** power of the teacher's primary action
# share of the training steps whose previous-action input (private_prev_action) is swapped with another random step's:
# the teacher's next action is nearly always its previous one, so a clone can learn to repeat its last action (the
# "copycat" problem of behaviour cloning with action histories, Wen et al. 2020); in play it then kept walking up the
# lane at 4% health. With the swap the previous action stops being a reliable answer
PREV_ACTION_NOISE = 0.5
GRAD_CLIP = 5.0  # global gradient norm, as PPO's grad_clip (training/settings.PPOSettings)
EVAL_LANES = 256  # lanes of the no-gradient passes (normalizer updates, agreement)
# the agreement's bins of the angle between the teacher's offset direction and the module's, in degrees: the same,
# a lane's angle, ..., the other way
ANGLE_BINS = (0, 1, 30, 60, 90, 180)


# ---- labels and targets ----------------------------------------------------------------------------------------------
def class_weights(trajectories: list[Trajectory], power: float = CLASS_WEIGHT_POWER,
                  cap: float = MAX_CLASS_WEIGHT) -> np.ndarray:
    """(N_PRIMARY,) weights of the teacher's primary actions from their label counts: (f_max / f_c) ** power, capped
    at `cap`; 1 for actions never seen."""
    counts = np.zeros(N_PRIMARY, np.float64)
    for t in trajectories:
        counts += np.bincount(t.actions[:, 0], minlength=N_PRIMARY)
    return primary_class_weights(counts, power, cap)


def value_targets(t: Trajectory, gamma: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(targets, mask) of a trajectory's value head: the discounted return of its rewards divided by `scale`; the
    mask drops the last 1 / (1 - gamma) steps of a game cut by the time limit (their return is cut short)."""
    g = discounted_returns(t.rewards / scale, gamma).astype(np.float32)
    mask = np.ones(len(t), bool)
    if t.truncated:
        mask[max(0, len(t) - int(round(1.0 / (1.0 - gamma)))):] = False
    return g, mask


@dataclass
class Prepared:
    """A trajectory with its training targets."""
    traj: Trajectory
    value: np.ndarray
    value_mask: np.ndarray


def prepare(trajectories: list[Trajectory], gamma: float, scale: float) -> list[Prepared]:
    return [Prepared(t, *value_targets(t, gamma, scale)) for t in trajectories]


# ---- sequences -------------------------------------------------------------------------------------------------------
@dataclass
class Chunk:
    """Steps [start, stop) of trajectory `index`, at most max_seq_len of them; `fresh`: the lane starts a segment here
    (zero state); `warm_up`: ... and the segment starts mid-game (this chunk has no loss)."""
    index: int
    start: int
    stop: int
    fresh: bool
    warm_up: bool


def epoch_segments(lengths, segment_steps: int, seq_len: int, rng) -> list[tuple[int, int, int]]:
    """(trajectory, start, stop) segments of at most `segment_steps` steps, cut at a random phase (a multiple of
    seq_len) per trajectory, shuffled."""
    segments = []
    for i, n in enumerate(lengths):
        phase = int(rng.integers(segment_steps // seq_len)) * seq_len
        cuts = [0] + list(range(phase or segment_steps, n, segment_steps)) + [n]
        segments += [(i, a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    order = rng.permutation(len(segments))
    return [segments[k] for k in order]


def lane_chunks(segments, lanes: int, seq_len: int):
    """Yields, per SGD step, {lane: Chunk} of the lanes that have steps left: each lane plays its segments one after
    another, chunk by chunk."""
    queue = list(segments)[::-1]
    current = [None] * lanes  # per lane: [index, position, stop, segment start]
    while True:
        step = {}
        for lane in range(lanes):
            cur = current[lane]
            if cur is None or cur[1] >= cur[2]:
                if not queue:
                    current[lane] = None
                    continue
                i, a, b = queue.pop()
                cur = current[lane] = [i, a, b, a]
            i, pos, stop, seg_start = cur
            end = min(pos + seq_len, stop)
            step[lane] = Chunk(i, pos, end, fresh=pos == seg_start, warm_up=pos == seg_start and pos > 0)
            cur[1] = end
        if not step:
            return
        yield step


def full_game_chunks(lengths, lanes: int, seq_len: int):
    """lane_chunks over whole games in order (evaluation: every step from the game's start, no warm-up)."""
    return lane_chunks([(i, 0, n) for i, n in enumerate(lengths)], lanes, seq_len)


def gather(prepared: list[Prepared], chunks: list[Chunk], seq_len: int, obs_space) -> dict:
    """The batch of `chunks` (N, seq_len, ...): observations in the space's dtypes (zero-padded past a chunk's end,
    as RLlib pads), the teacher's actions, the loss mask, value targets and mask, the win label."""
    n = len(chunks)
    obs = {k: np.zeros((n, seq_len) + s.shape, s.dtype) for k, s in obs_space.spaces.items()}
    actions = np.zeros((n, seq_len, len(ACTION_KEYS)), np.int64)
    mask = np.zeros((n, seq_len), bool)
    value = np.zeros((n, seq_len), np.float32)
    value_mask = np.zeros((n, seq_len), bool)
    win = np.zeros(n, np.float32)
    for j, c in enumerate(chunks):
        p = prepared[c.index]
        m = c.stop - c.start
        for k, v in p.traj.obs.items():
            obs[k][j, :m] = v[c.start:c.stop]
        actions[j, :m] = p.traj.actions[c.start:c.stop]
        mask[j, :m] = not c.warm_up
        value[j, :m] = p.value[c.start:c.stop]
        value_mask[j, :m] = p.value_mask[c.start:c.stop] & (not c.warm_up)
        win[j] = p.traj.win
    t = torch.as_tensor
    return {"obs": {k: t(v) for k, v in obs.items()},
            "actions": {k: t(actions[..., i]) for i, k in enumerate(ACTION_KEYS)},
            "mask": t(mask), "value": t(value), "value_mask": t(value_mask),
            "win": t(win)[:, None].expand(n, seq_len), "steps": sum(c.stop - c.start for c in chunks)}


class LaneStates:
    """The LSTM state of every lane, carried from chunk to chunk (detached)."""

    def __init__(self, module, lanes: int):
        init = module.get_initial_state()
        self.state = {k: torch.zeros(lanes, *np.shape(v)) for k, v in init.items()}

    def take(self, lanes: list[int], fresh: list[bool]) -> dict:
        idx = torch.as_tensor(lanes)
        keep = ~torch.as_tensor(fresh)[:, None]
        return {k: v[idx] * keep for k, v in self.state.items()}

    def put(self, lanes: list[int], state_out: dict):
        idx = torch.as_tensor(lanes)
        for k, v in state_out.items():
            self.state[k][idx] = v.detach()


def run_sequences(module, prepared, chunk_stream, seq_len: int, lanes: int, fn):
    """For every SGD step of `chunk_stream`: gathers the active lanes' batch, runs `fn(batch, state_in)` (which returns
    the state out) and carries the state. Returns the number of steps."""
    states = LaneStates(module, lanes)
    n = 0
    for step in chunk_stream:
        ids = list(step)
        chunks = [step[i] for i in ids]
        batch = gather(prepared, chunks, seq_len, module.observation_space)
        state_out = fn(batch, states.take(ids, [c.fresh for c in chunks]))
        states.put(ids, state_out)
        n += sum(c.stop - c.start for c in chunks)
    return n


# ---- the loss --------------------------------------------------------------------------------------------------------
def forward(module, batch, state_in):
    out = module.forward_train({Columns.OBS: batch["obs"], Columns.STATE_IN: state_in})
    dist = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    return out, dist


def bc_loss(module, batch, state_in, weights: torch.Tensor, value_weight: float = VALUE_LOSS_WEIGHT):
    """(total loss, parts, state out) of a batch: the weighted cross-entropy of the teacher's actions over the
    parameters their primary action reads, the value regression, the win-probability loss."""
    out, dist = forward(module, batch, state_in)
    nll = -dist.logp(batch["actions"])
    # a label the masks forbid would have a -1e9 log-probability: such steps (none from a legal teacher) are dropped
    m = batch["mask"] & (nll < 1e6)
    w = weights[batch["actions"]["primary"]] * m
    policy = (w * torch.where(m, nll, torch.zeros_like(nll))).sum() / w.sum().clamp_min(1e-8)
    vm = batch["value_mask"]
    v = module.compute_values({}, embeddings=out[Columns.EMBEDDINGS])
    value = 0.5 * (((v - batch["value"]) ** 2) * vm).sum() / vm.sum().clamp_min(1)
    win = (F.binary_cross_entropy_with_logits(out[WIN_LOGIT], batch["win"], reduction="none") * m).sum() \
        / m.sum().clamp_min(1)
    total = policy + value_weight * value + AUX_WIN_COEFF * win
    parts = {"policy": policy.item(), "value": value.item(), "win": win.item()}
    return total, parts, out[Columns.STATE_OUT]


# ---- training --------------------------------------------------------------------------------------------------------
@torch.no_grad()
def update_normalizers(module, trajectories: list[Trajectory]):
    """Merges every recorded observation into the module's running observation statistics (app. E)."""
    prepared = [Prepared(t, np.zeros(len(t), np.float32), np.zeros(len(t), bool)) for t in trajectories]
    seq_len = module.cfg.max_seq_len
    lengths = [len(t) for t in trajectories]
    segments = [(i, a, min(a + seq_len, n)) for i, n in enumerate(lengths) for a in range(0, n, seq_len)]
    for k in range(0, len(segments), EVAL_LANES):
        chunks = [Chunk(i, a, b, True, False) for i, a, b in segments[k:k + EVAL_LANES]]
        batch = gather(prepared, chunks, seq_len, module.observation_space)
        module.update_normalizers(batch["obs"], batch["mask"])


def make_optimizer(module, lr: float = LEARNING_RATE):
    return torch.optim.Adam(module.parameters(), lr=lr, betas=(0.9, 0.999))


def swap_prev_actions(obs: dict, share: float, generator: torch.Generator):
    """In place: for a `share` of the batch's steps, the previous-action input becomes that of another random step."""
    x = obs["private_prev_action"]
    flat = x.reshape(-1, *x.shape[2:])
    pick = torch.rand(flat.shape[0], generator=generator) < share
    flat[pick] = flat[torch.randint(flat.shape[0], (int(pick.sum()),), generator=generator)]


def fit(module, prepared: list[Prepared], epochs: float, weights: np.ndarray, optimizer, rng,
        lanes: int = BATCH_LANES, value_weight: float = VALUE_LOSS_WEIGHT, prev_action_noise: float = PREV_ACTION_NOISE,
        deadline: float | None = None, progress=None) -> dict:
    """Trains `module` for `epochs` passes over `prepared` (a fraction ends the last pass early; so does
    `deadline`, a time.time()). `progress(steps, parts)` after every SGD step. Returns the steps trained, the
    epochs done and the mean loss parts of the last epoch."""
    module.train()
    seq_len = module.cfg.max_seq_len
    w = torch.as_tensor(weights)
    total = sum(len(p.traj) for p in prepared)
    budget = int(epochs * total)
    done, parts_sum, n_parts = 0, {}, 0
    generator = torch.Generator().manual_seed(int(rng.integers(2 ** 31)))

    def step(batch, state_in):
        nonlocal done, n_parts
        if prev_action_noise > 0:
            swap_prev_actions(batch["obs"], prev_action_noise, generator)
        loss, parts, state_out = bc_loss(module, batch, state_in, w, value_weight)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), GRAD_CLIP)
        optimizer.step()
        done += batch["steps"]
        for k, v in parts.items():
            parts_sum[k] = parts_sum.get(k, 0.0) + v
        n_parts += 1
        if progress is not None:
            progress(done, parts)
        return state_out

    steps = 0
    while steps < budget and (deadline is None or time.time() < deadline):
        parts_sum.clear()
        n_parts = 0
        segments = epoch_segments([len(p.traj) for p in prepared], SEGMENT_STEPS, seq_len, rng)
        stream = _limited(lane_chunks(segments, lanes, seq_len), budget - steps, deadline)
        steps += run_sequences(module, prepared, stream, seq_len, lanes, step)
    module.eval()
    return {"steps": steps, "epochs": steps / max(total, 1),
            **{k: v / max(n_parts, 1) for k, v in parts_sum.items()}}


def _limited(stream, steps: int, deadline: float | None):
    """The chunk stream until `steps` steps were taken or the deadline passed."""
    n = 0
    for step in stream:
        if n >= steps or (deadline is not None and time.time() >= deadline):
            return
        n += sum(c.stop - c.start for c in step.values())
        yield step


# ---- agreement -------------------------------------------------------------------------------------------------------
@torch.no_grad()
def agreement(module, prepared: list[Prepared]) -> dict:
    """How often the module's most likely action matches the teacher's on these games, played from each game's start
    with the state carried: the primary action; all the parameters the teacher's primary reads together; recall,
    support and predicted count per primary action, and for the primary actions that read offsets on some steps
    ("offsets_support": a spell reads them for some heroes only) how often the module's most likely offsets under the
    teacher's primary are the teacher's ("offsets_exact") or within one grid step on both axes ("offsets_within_1"),
    and the angle between the two offsets' directions where neither is the centre ("offsets_angle": steps per
    ANGLE_BINS bin, "0-1" the same direction); the value head's explained variance."""
    module.eval()
    seq_len = module.cfg.max_seq_len
    reads_unit = torch.as_tensor(TARGET_TYPE_READS_UNIT, dtype=torch.bool)
    reads_offset = torch.as_tensor(TARGET_TYPE_READS_OFFSET, dtype=torch.bool)
    hits = np.zeros(N_PRIMARY)
    support = np.zeros(N_PRIMARY)
    predicted = np.zeros(N_PRIMARY)
    # the steps whose teacher's primary reads offsets, and where the module's offsets under it are right
    off_support, off_exact, off_near = np.zeros(N_PRIMARY), np.zeros(N_PRIMARY), np.zeros(N_PRIMARY)
    # the angle between the teacher's offset and the module's, where neither is the centre cell (a direction: the moves)
    angles = np.zeros((N_PRIMARY, len(ANGLE_BINS) - 1))
    acc = {"primary": 0, "all": 0, "n": 0}
    values, targets = [], []

    def step(batch, state_in):
        out, dist = forward(module, batch, state_in)
        pred = dist.to_deterministic().sample()
        lab = batch["actions"]
        m = batch["mask"]
        tt = batch["obs"]["action_target_type"].long().gather(-1, lab["primary"].unsqueeze(-1)).squeeze(-1)
        ru, ro = reads_unit[tt], reads_offset[tt]
        # the unit row and the offsets given the teacher's primary (when the primary is right, those play would use)
        unit = dist._unit_logits_of(lab["primary"]).argmax(-1)
        ox, oy = (o.argmax(-1) for o in dist._offset_logits_of(lab["primary"]))
        dx, dy = (ox - lab["offset_x"]).abs(), (oy - lab["offset_y"]).abs()
        ok_p = pred["primary"] == lab["primary"]
        # with the primary right, the offsets under the teacher's primary are those of the prediction
        ok_all = ok_p & (pred["delay"] == lab["delay"]) & (~ru | (unit == lab["target_unit"])) & (
            ~ro | ((dx == 0) & (dy == 0)))
        acc["primary"] += int((ok_p & m).sum())
        acc["all"] += int((ok_all & m).sum())
        acc["n"] += int(m.sum())
        read = m & ro
        lo = lab["primary"][read].numpy()
        off_support[:] += np.bincount(lo, minlength=N_PRIMARY)
        off_exact[:] += np.bincount(lo, weights=((dx == 0) & (dy == 0))[read].numpy(), minlength=N_PRIMARY)
        off_near[:] += np.bincount(lo, weights=((dx <= 1) & (dy <= 1))[read].numpy(), minlength=N_PRIMARY)
        c = N_OFFSETS // 2
        tx, ty, sx, sy = (v[read].double() - c for v in (lab["offset_x"], lab["offset_y"], ox, oy))
        both = ((tx != 0) | (ty != 0)) & ((sx != 0) | (sy != 0))
        turn = torch.remainder(torch.atan2(ty, tx) - torch.atan2(sy, sx) + torch.pi, 2 * torch.pi) - torch.pi
        deg = torch.rad2deg(turn.abs())[both].numpy()
        np.add.at(angles, (lo[both.numpy()], np.digitize(deg, ANGLE_BINS[1:-1])), 1)
        lp, pp = lab["primary"][m].numpy(), pred["primary"][m].numpy()
        support[:] += np.bincount(lp, minlength=N_PRIMARY)
        predicted[:] += np.bincount(pp, minlength=N_PRIMARY)
        hits[:] += np.bincount(lp[lp == pp], minlength=N_PRIMARY)
        vm = batch["value_mask"]
        values.append(module.compute_values({}, embeddings=out[Columns.EMBEDDINGS])[vm].numpy())
        targets.append(batch["value"][vm].numpy())
        return out[Columns.STATE_OUT]

    run_sequences(module, prepared, full_game_chunks([len(p.traj) for p in prepared], EVAL_LANES, seq_len),
                  seq_len, EVAL_LANES, step)
    v, g = np.concatenate(values or [np.zeros(0)]), np.concatenate(targets or [np.zeros(0)])
    n = max(acc["n"], 1)
    return {"steps": acc["n"], "primary": acc["primary"] / n, "all_read": acc["all"] / n,
            "value_explained_variance": float(1 - np.var(g - v) / np.var(g)) if len(g) > 1 and np.var(g) > 0
            else None,
            "per_primary": {PRIMARY_NAMES[p]: {"support": int(support[p]), "predicted": int(predicted[p]),
                                               "recall": float(hits[p] / support[p]),
                                               **({"offsets_support": int(off_support[p]),
                                                   "offsets_exact": float(off_exact[p] / off_support[p]),
                                                   "offsets_within_1": float(off_near[p] / off_support[p]),
                                                   "offsets_angle": {f"{a}-{b}": int(n) for a, b, n in
                                                                     zip(ANGLE_BINS[:-1], ANGLE_BINS[1:], angles[p])}}
                                                  if off_support[p] else {})}
                            for p in range(N_PRIMARY) if support[p] > 0}}
