"""The OpenAI Five network as an RLlib ``TorchRLModule`` (Five app. H, figures 17 and 18).

Per hero (one row of the batch), at each time step:

1. floats are normalized by running statistics (app. E, ``normalization.py``);
2. "process set" encoders: one MLP shared by all units (unit features + a unit-type embedding) gives the unit
   embeddings, max-pooled over valid units (all, and enemies only); one MLP shared by all heroes (hero features +
   hero-id and item embeddings), max-pooled over allies and over enemies; the global features; together the game
   state vector;
3. for each of the team's heroes (the five "replicas"), its private inputs (nearby map, previous action, lane
   assignment) and its unit embedding are appended to the game state and passed through a fully connected layer;
   the cross-hero pool max-pools the first 25% of that vector across the replicas and appends it to this hero's;
4. a single-layer LSTM;
5. heads: the primary action by a dot product of an LSTM projection with action embeddings (masked to the legal
   actions); the target unit by attention over the unit embeddings, the keys gated by a learned per-action mask
   (computed for every primary action, the distribution picks the sampled one's row) and masked by validity; delay
   and offsets by linear heads; the value; an auxiliary win-probability logit (app. D).

Masking uses a large negative number, never -inf, and no-op is always legal (zero-padded LSTM steps would
otherwise turn the gradients into NaN; docs/rllib_notes.md section 2).

How it is computed (the function above, with less work; tests/test_five_network.py checks it against the plain
per-hero computation, tests/reference_five_network.py):

- Work shared by a team is done once per team and step. The heroes, global and private inputs are the same for the
  five heroes of a team (``TEAM_SHARED_KEYS`` of moba/env/observation.py): rows with equal inputs are found by a
  random projection of them, checked for exact equality, and encoded once (``team_groups``); in a learner batch by
  its ``TEAM_STEP`` column instead, one number per team and step (``step_groups``). The replica layer is
  linear before its ReLU, so its team part (game state without the units, private inputs) is computed per team and
  its per-hero part (pooled units, own units: the unit table has hero-relative columns) per hero. Of the other four
  replicas only the pooled quarter is computed: the rest is never read.
- Only valid unit rows go through the unit MLP; an empty row's embedding is the same for every empty row (its input is
  all zeros), so it is computed once. The unit-type embedding enters the first layer as a table lookup.
- The gated attention keys are folded into the queries (one matmul per primary action instead of one per unit).

With ``team_unit_table`` (a model option, not Five's network) the unit encoder reads only the team's columns of the
unit rows (all but ``UNIT_HERO_COLUMNS``: a team's heroes see the same units in the same rows), so one table per team
and step serves the five heroes: rows with equal unit inputs are grouped as the team inputs are (``unit_groups``), the
MLP and its pools run once per group, and the target head multiplies each table once by the stacked queries of its
heroes (``table_products``). The hero columns (its distance to each unit, whether it targets it or is targeted) enter
the target head's keys as a linear term of their own (``unit_key_hero``); the replicas read the team's pools and the
hero's own row, and the hero's surroundings through its private nearby map.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from torch import nn

from moba.env.actions import A_MOVE, A_NOOP, N_OFFSETS, action_sizes
from moba.env.observation import (GLOBAL_FEATURES, HERO_FEATURES, LANE_FEATURES, MINIMAP_CHANNELS, MINIMAP_N,
                                  N_MINIMAP_CHANNELS, PRIVATE_KEYS, UNIT_FEATURES, UNIT_HERO_COLUMNS, UNIT_IS_ENEMY,
                                  feature_names)
from moba.game.abilities import (N_UNIT_KINDS, TARGET_TYPE_READS_OFFSET, TARGET_TYPE_READS_UNIT, TT_NO_TARGET, TT_POINT,
                                 TT_TELEPORT, TT_UNIT, TT_UNIT_OFFSET, TT_WARD)
from moba.game.constants import N_DELAYS, N_UNIT_TYPES
from moba.game.heroes import HEROES
from moba.game.items import ITEMS
from policies.model.action_distribution import FiveActionDistribution
from policies.model.normalization import RunningNorm, batch_moments, merge_moments
from policies.model.team_frame import flip_offsets, is_dire, to_team_frame

MASK_VALUE = -1e9  # masked logits: a large negative number, never -inf
WIN_LOGIT = "win_logit"
WIN_PROB = "win_prob"
CROSS_HERO_POOL_FRACTION = 0.25  # app. H: max-pool the first 25% of the vector across the five replicas
# the observation keys the team encoder reads: all of them are the same for every hero of a team (TEAM_SHARED_KEYS)
TEAM_ENCODER_KEYS = ("global", "heroes", "hero_id", "hero_items") + PRIVATE_KEYS
# the observation keys the team unit table reads (FiveModelConfig.team_unit_table): of "units" only the team's columns
UNIT_TABLE_KEYS = ("units", "unit_type", "unit_valid")
# a learner batch's column: one number per team, step and game (policies/learning/team_steps.py), read by step_groups
TEAM_STEP = "team_step"
TEAM_STEP_CHECK_EVERY = 64  # step_groups compares the rows of its groups at its first call and every 64th after
NORM_BLOCK_STEPS = 1024  # steps a block of update_normalizers (the team's frame's copies stay in the cache)


BOOL_FIELDS = ("team_frame", "team_unit_table", "offset_groups")  # FiveModelConfig's switches; the rest positive ints
# FiveModelConfig.offset_groups: the offset parameters, and the one each target type reads (Five app. F, Table 5:
# "Regular" offsets from the selected unit, "Caster" offsets from the caster, "Ward" placement offsets), plus a group of
# its own for move, which reads the caster's offsets in Five but here is the most common action by far (99% of the
# scripted bot's offsets in 5v5) and points a direction to the grid's border, where a point spell aims at a unit
OFFSET_GROUPS = ("move", "caster", "regular", "ward")
OFFSET_GROUP_MOVE = OFFSET_GROUPS.index("move")
TARGET_TYPE_OFFSET_GROUP = {TT_NO_TARGET: "caster", TT_POINT: "caster", TT_UNIT: "caster",  # no target, unit: unread
                            TT_UNIT_OFFSET: "regular", TT_TELEPORT: "regular", TT_WARD: "ward"}


@dataclass
class FiveModelConfig:
    """Network sizes. The paper's LSTM has 4096 units (Table 2); the CPU default is small."""
    lstm_size: int = 128
    unit_hidden: int = 128  # the hidden layer of the unit encoder (process set, figure 17)
    unit_embed: int = 64
    hero_hidden: int = 128  # the hidden layer of the hero encoder
    hero_embed: int = 64
    global_embed: int = 32
    private_hidden: int = 128  # the hidden layer of the private-input encoder (nearby map, previous action, lanes)
    private_embed: int = 64
    replica_size: int = 256  # the fully connected layer before the cross-hero pool and the LSTM
    action_embed: int = 64
    categorical_embed: int = 16
    max_seq_len: int = 16  # LSTM unroll length (Table 2)
    # Dire's observations turned 180 degrees into Radiant's frame and the offsets turned back (team_frame.py); not in
    # Five (Dota's map is not symmetric). Off by default: a module trained without it reads the map's frame.
    team_frame: bool = False
    # One unit table per team and step instead of one per hero: the unit MLP, its pools and the target head's keys
    # read only the team's columns of a unit row (all but UNIT_HERO_COLUMNS, the same for every hero of a team), and the
    # hero's own columns (its distance to the unit, whether it targets it, ...) enter the target head's keys through
    # a linear term of their own. In 5v5 the unit encoder was three quarters of a learner row (docs/performance.md);
    # this computes it once for the team's five heroes. Not in Five (whose unit encoder is per hero); off by default,
    # and a module trained with one table cannot load weights of the other.
    team_unit_table: bool = False
    # with team_unit_table: the width of the hero's own pools over the units (all, enemies), from the team table and the
    # hero columns, that the replica layer reads beside the team's pools (the hero's view of what is near it)
    unit_hero_pool: int = 16
    # The offsets as mutually exclusive parameters per kind of primary action (OFFSET_GROUPS), as in Five (app. F:
    # "Similarly, the Offset parameter is split into Regular Offset, Caster Offset ... and Ward Placement Offset"),
    # with move's apart: one pair of offset heads for all of them spends the head on where to walk, and a student's
    # point spells then aim where it would walk (docs/results.md, "The offsets by kind of action"). Off by default: a
    # module trained with one pair cannot load weights of the other without surgery (app.surgery turns it on, each
    # group a copy of the one pair).
    offset_groups: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> "FiveModelConfig":
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ValueError(f"model config: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
        cfg = cls(**d)
        for k, v in asdict(cfg).items():
            if k in BOOL_FIELDS:
                if not isinstance(v, bool):
                    raise ValueError(f"model config {k!r}: must be true or false, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"model config {k!r}: must be a positive int, got {v!r}")
        return cfg


def gated_unit_logits(unit_emb, key_weight, key_bias, gate, query):
    """Target-unit logits of figure 18: logits[n, p, u] = sum_k key[n, u, k] * gate[n, p, k] * query[n, k], with
    key = unit_emb @ key_weight.T + key_bias, i.e. attention of the LSTM's query over the unit keys, gated per primary
    action. The key projection is folded into the gated queries: (gate * query) @ key_weight is one (P, E) matrix per
    row, so no (U, K) key table is built."""
    gated = gate * query.unsqueeze(1)  # (N, P, K)
    return torch.bmm(gated @ key_weight, unit_emb.transpose(1, 2)) + (gated @ key_bias).unsqueeze(-1)


def table_products(tables, index, queries, max_group: int):
    """queries[n] @ tables[index[n]].T for every row n: (N, P, U) from tables (K, U, E), index (N,) and queries
    (N, P, E), without a (N, U, E) copy of the tables: the rows of one table, up to `max_group` of them, are stacked and
    multiplied with it in one product; the rest (a learner batch's zero-padded steps share one table) one row at a
    time."""
    n, p, e = queries.shape
    k = tables.shape[0]
    counts = torch.bincount(index, minlength=k)
    order = torch.argsort(index, stable=True)
    rank = torch.empty_like(index)
    rank[order] = torch.arange(n, device=index.device) - (counts.cumsum(0) - counts)[index[order]]
    largest = int(counts.max())
    s = min(largest, max_group)
    if largest <= max_group:
        stacked = queries.new_zeros(k, s, p, e).index_put((index, rank), queries)
    else:
        fits = rank < s
        stacked = queries.new_zeros(k, s, p, e).index_put((index[fits], rank[fits]), queries[fits])
    out = torch.bmm(stacked.reshape(k, s * p, e), tables.transpose(1, 2)).reshape(k, s, p, -1)
    # one flat row index, not (index, rank): a gather whose backward is index_add, where advanced indexing's backward
    # is an accumulating index_put, 5-9x slower on the CPU (docs/performance.md, 2026-12-03)
    out = out.reshape(k * s, p, -1).index_select(0, index * s + rank.clamp(max=s - 1))
    if largest > max_group:
        rest = (rank >= s).nonzero().squeeze(1)
        out = out.index_put((rest,), torch.bmm(queries[rest], tables[index[rest]].transpose(1, 2)))
    return out


@dataclass
class UnitTable:
    """The unit encoder's output for N rows. `emb` (K, U, E): K tables of unit embeddings, `index` (N,) the table of
    each row (None: row n reads table n); `own_rows` (K, n, E): each table's first n rows (the team's heroes), taken
    from the unit MLP's outputs and not from `emb`, so that no gradient of the whole table flows through a slice of
    it; `pooled` (N, 2E): each row's max-pools over its valid units and over the enemies; `hero_columns` (N, U,
    len(UNIT_HERO_COLUMNS)): each row's hero-relative unit columns, normalized, and `hero_pooled` (N, 2
    unit_hero_pool): each row's own pools over the units (team tables only, else None)."""
    emb: torch.Tensor
    index: torch.Tensor | None
    own_rows: torch.Tensor
    pooled: torch.Tensor
    hero_columns: torch.Tensor | None = None
    hero_pooled: torch.Tensor | None = None

    def own(self) -> torch.Tensor:
        """(N, n, E): the embeddings of the team's heroes' rows (the first n unit rows) as each row sees them."""
        return _per_row(self.own_rows, self.index)


def _per_row(x: torch.Tensor, index: torch.Tensor | None) -> torch.Tensor:
    """x (K, ...), one entry per group of rows, as (N, ...) one per row by `index` (N,) (``_group_rows``); x itself
    when every row is its own group (index None)."""
    return x if index is None else x.index_select(0, index)  # not x[index]: table_products' note


def _step_rows(steps: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor | None:
    """The steps' (N,) validity over the rows of x (N, ..., F), for batch_moments; None when every step is valid."""
    return None if steps is None else steps.reshape(-1, *(1,) * (x.dim() - 2)).expand(x.shape[:-1])


def _mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


def _fingerprint_weights(space, keys, seed=0, zero_columns=None):
    """Fixed random projections (float64) of a group's inputs, one vector per key; `zero_columns` {key: last-axis
    columns}: columns the projection leaves out (weight 0)."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for k in keys:
        w = torch.randn(space[k].shape, generator=g, dtype=torch.float64)
        if zero_columns and k in zero_columns:
            w[..., list(zero_columns[k])] = 0.0
        out[k] = w.flatten()
    return out


def _groups_of(keys: torch.Tensor):
    """(representatives, index) of the rows of equal `keys` (N,): `index` (N,) maps each row to its group, and
    `representatives` (K,) holds each group's first row; (None, None) when every row is its own group."""
    n = keys.shape[0]
    _, index = torch.unique(keys, return_inverse=True)
    k = int(index.max()) + 1
    if k == n:
        return None, None
    rows = torch.arange(n, device=index.device)
    reps = torch.full((k,), n, dtype=torch.long, device=index.device).scatter_reduce(0, index, rows, "amin")
    return reps, index


def _group_rows(flat: dict, weights: dict, ignored: dict | None = None):
    """(representatives, index) of rows (flat: {key: (N, D)}) whose inputs are all equal, found by a fixed random
    projection (weights: {key: (D,)}) and checked for exact equality outside the `ignored` {key: (D,) bool} entries;
    (None, None) when every row is its own group or on a projection collision."""
    reps, index = _groups_of(sum(x.double() @ weights[k] for k, x in flat.items()))
    if reps is None or not _equal_in_groups(flat, reps, index, ignored):  # a projection collision: no sharing
        return None, None
    return reps, index


def _unequal_in_groups(flat: dict, reps, index, ignored: dict | None = None) -> str | None:
    """The first key of `flat` ({key: (N, D)}) in which some row's inputs differ from those of its group's
    representative (reps[index]), outside the `ignored` {key: (D,) bool} entries; None when every row's are equal."""
    of_row = reps.index_select(0, index)  # one gather per key, not x[reps][index]
    for key, x in flat.items():
        differs = x != x.index_select(0, of_row)
        if ignored and key in ignored:
            differs = differs & ~ignored[key]
        if bool(differs.any()):
            return key
    return None


def _equal_in_groups(flat: dict, reps, index, ignored: dict | None = None) -> bool:
    """Whether every row's inputs (flat: {key: (N, D)}) equal those of its group's representative (reps[index]),
    outside the `ignored` {key: (D,) bool} entries."""
    return _unequal_in_groups(flat, reps, index, ignored) is None


class FiveRLModule(TorchRLModule, ValueFunctionAPI):
    """model_config: the FiveModelConfig fields (dict)."""

    @override(TorchRLModule)
    def setup(self):
        # RLlib's seeding (set_torch_seed) turns on torch's deterministic algorithms on a CPU-only torch, which also
        # fills every new tensor with NaN to expose reads of uninitialized memory. This network reads none, so the fill
        # is only cost (about 9% of a learner update on 2 cores, tens of thousands of fills an update); the
        # deterministic algorithms stay on. Set here because every process that acts or learns builds its module
        # after RLlib has seeded it.
        torch.utils.deterministic.fill_uninitialized_memory = False
        cfg = FiveModelConfig.from_dict({k: v for k, v in (self.model_config or {}).items()
                                         if k in {f.name for f in fields(FiveModelConfig)}})
        self.cfg = cfg
        sp = self.observation_space
        self.team_size = sp["me"].shape[0]
        self._step_group_calls = 0  # step_groups' calls, for its periodic comparison
        self.max_units, n_unit = sp["units"].shape
        n_hero_feat = sp["heroes"].shape[1]
        e = cfg.categorical_embed
        # the primary actions and the action embedding ids come from the spaces (moba/env: N_PRIMARY, N_ACTION_IDS), so
        # that a module can be built for a space with an added action (model surgery, policies/surgery/weights.py)
        self.n_primary = int(self.action_space["primary"].n)
        self.n_action_ids = int(np.max(sp["action_id"].high)) + 1
        self.norm = nn.ModuleDict({
            "global": RunningNorm(sp["global"].shape[0]), "units": RunningNorm(n_unit),
            "heroes": RunningNorm(n_hero_feat),
            "private_minimap": RunningNorm(N_MINIMAP_CHANNELS * MINIMAP_N * MINIMAP_N),
            "private_lanes": RunningNorm(sp["private_lanes"].shape[1])})
        self.unit_type_emb = nn.Embedding(N_UNIT_TYPES + 1, e)
        hero_cols = list(UNIT_HERO_COLUMNS) if cfg.team_unit_table else []
        team_cols = [c for c in range(n_unit) if c not in hero_cols]
        self.register_buffer("unit_team_columns", torch.tensor(team_cols, dtype=torch.long), persistent=False)
        self.register_buffer("unit_hero_columns", torch.tensor(hero_cols, dtype=torch.long), persistent=False)
        self.unit_mlp = _mlp([len(team_cols) + e, cfg.unit_hidden, cfg.unit_embed])
        self.hero_id_emb = nn.Embedding(len(HEROES) + 1, e)
        self.item_emb = nn.Embedding(len(ITEMS) + 1, e, padding_idx=0)
        self.hero_mlp = _mlp([n_hero_feat + 2 * e, cfg.hero_hidden, cfg.hero_embed])
        self.global_mlp = _mlp([sp["global"].shape[0], cfg.global_embed])
        n_prev = sp["private_prev_action"].shape[1]
        # one embedding per action parameter (ACTION_KEYS order)
        sizes = action_sizes(self.max_units, self.n_primary)
        self.prev_emb = nn.ModuleList([nn.Embedding(n, e) for n in sizes][:n_prev])
        mini = N_MINIMAP_CHANNELS * MINIMAP_N * MINIMAP_N
        self.private_mlp = _mlp([mini + sp["private_lanes"].shape[1] + n_prev * e, cfg.private_hidden,
                                 cfg.private_embed])
        # the replica layer's input, in order: global, pooled units (all, enemies), pooled heroes (allies, enemies),
        # private, own unit embedding
        self.replica_parts = (cfg.global_embed, 2 * cfg.unit_embed, 2 * cfg.hero_embed, cfg.private_embed,
                              cfg.unit_embed) + ((2 * cfg.unit_hero_pool,) if cfg.team_unit_table else ())
        self.replica_fc = _mlp([sum(self.replica_parts), cfg.replica_size])
        self.pool_size = int(cfg.replica_size * CROSS_HERO_POOL_FRACTION)
        self.lstm = nn.LSTM(cfg.replica_size + self.pool_size, cfg.lstm_size, batch_first=True)
        h = cfg.lstm_size
        self.action_emb = nn.Embedding(self.n_action_ids, cfg.action_embed)
        self.action_query = nn.Linear(h, cfg.action_embed)
        self.unit_key = nn.Linear(cfg.unit_embed, cfg.action_embed)
        if cfg.team_unit_table:  # the hero's own unit columns' part of the target head's keys, and its own pools
            self.unit_key_hero = nn.Linear(len(hero_cols), cfg.action_embed, bias=False)
            self.unit_pool_team = nn.Linear(cfg.unit_embed, cfg.unit_hero_pool)
            self.unit_pool_hero = nn.Linear(len(hero_cols), cfg.unit_hero_pool, bias=False)
        self.unit_query = nn.Linear(h, cfg.action_embed)
        self.action_gate = nn.Embedding(self.n_action_ids, cfg.action_embed)  # the learned per-action mask of figure 18
        self.delay_head = nn.Linear(h, N_DELAYS)
        self.n_offset_groups = len(OFFSET_GROUPS) if cfg.offset_groups else 1
        self.offset_x_head = nn.Linear(h, self.n_offset_groups * N_OFFSETS)
        self.offset_y_head = nn.Linear(h, self.n_offset_groups * N_OFFSETS)
        self.value_head = nn.Linear(h, 1)
        self.win_head = nn.Linear(h, 1)
        self.action_dist_cls = FiveActionDistribution.make(self.n_primary, self.max_units, self.n_offset_groups)
        self.register_buffer("reads_unit_table", torch.tensor(TARGET_TYPE_READS_UNIT, dtype=torch.bool),
                             persistent=False)
        self.register_buffer("reads_offset_table", torch.tensor(TARGET_TYPE_READS_OFFSET, dtype=torch.bool),
                             persistent=False)
        groups = [OFFSET_GROUPS.index(TARGET_TYPE_OFFSET_GROUP[t]) for t in range(len(TARGET_TYPE_READS_OFFSET))]
        self.register_buffer("offset_group_table", torch.tensor(groups, dtype=torch.long), persistent=False)
        for k, w in _fingerprint_weights(sp, TEAM_ENCODER_KEYS).items():
            self.register_buffer(f"_fingerprint_{k}", w, persistent=False)
        if cfg.team_unit_table:
            for k, w in _fingerprint_weights(sp, UNIT_TABLE_KEYS, seed=1, zero_columns={"units": hero_cols}).items():
                self.register_buffer(f"_unit_fingerprint_{k}", w, persistent=False)
            ignored = torch.zeros(sp["units"].shape, dtype=torch.bool)
            ignored[:, hero_cols] = True
            self.register_buffer("_unit_fingerprint_ignored", ignored.flatten(), persistent=False)

    # ---- RLlib plumbing ----------------------------------------------------------------------------------------------
    @override(TorchRLModule)
    def get_initial_state(self):
        return {"h": np.zeros(self.cfg.lstm_size, np.float32), "c": np.zeros(self.cfg.lstm_size, np.float32)}

    @override(TorchRLModule)
    def get_inference_action_dist_cls(self):
        return self.action_dist_cls

    @override(TorchRLModule)
    def get_exploration_action_dist_cls(self):
        return self.action_dist_cls

    @override(TorchRLModule)
    def get_train_action_dist_cls(self):
        return self.action_dist_cls

    @override(TorchRLModule)
    def _forward(self, batch, **kwargs):
        """Acting (env runners, agents): the action logits, the LSTM state, the win probability and the value (the
        env runners hand the values to GAE, so the learner does not recompute them)."""
        out, emb, state = self._core(batch)
        out[Columns.STATE_OUT] = state
        out[WIN_PROB] = torch.sigmoid(self.win_head(emb).squeeze(-1))
        out[Columns.VF_PREDS] = self.value_head(emb).squeeze(-1)
        return out

    @override(TorchRLModule)
    def _forward_train(self, batch, **kwargs):
        """The learner's pass: as ``_forward``'s, but the target-unit logits only of the primary actions that read a
        unit in some row of the batch (the others' are 0 where legal): no loss reads them (``FiveActionDistribution``
        weights the unit head by whether the primary reads it), and they are 9-10 of the 16 primary actions in the
        shipped agents' batches. The env runners' pass (``_forward``) computes them all: the drawn unit of every
        action becomes the next observation's previous action."""
        out, emb, state = self._core(batch, reading_only=True)
        out[Columns.STATE_OUT] = state
        out[Columns.EMBEDDINGS] = emb
        out[WIN_LOGIT] = self.win_head(emb).squeeze(-1)
        return out

    @override(ValueFunctionAPI)
    def compute_values(self, batch, embeddings=None):
        if embeddings is None:
            _, embeddings, _ = self._core(batch, heads=False)
        return self.value_head(embeddings).squeeze(-1)

    # ---- the network -------------------------------------------------------------------------------------------------
    @torch.no_grad()
    def update_normalizers(self, obs: dict, loss_mask: torch.Tensor | None):
        """Adds the float observations of the valid time steps to the running statistics (learner only); a
        non-finite value raises FloatingPointError naming its observation and feature (RunningNorm.update), and
        leaves every statistic unchanged. The steps go through in blocks of NORM_BLOCK_STEPS (the team's frame and
        the moments of each block, then one merge a statistic): the whole batch's turned copy was about a third of
        the statistics' update before (docs/performance.md, 2026-12-04)."""
        lead = obs["global"].shape[:-1]
        flat = {k: v.reshape(-1, *v.shape[len(lead):]) for k, v in obs.items()}
        m = None if loss_mask is None else loss_mask.reshape(-1).bool()
        cells = MINIMAP_N * MINIMAP_N
        names = {"global": feature_names(GLOBAL_FEATURES), "units": feature_names(UNIT_FEATURES),
                 "heroes": feature_names(HERO_FEATURES), "private_lanes": feature_names(LANE_FEATURES),
                 "private_minimap": tuple(f"{c} cell {i}" for c in MINIMAP_CHANNELS for i in range(cells))}
        total = dict.fromkeys(names)
        for start in range(0, flat["global"].shape[0], NORM_BLOCK_STEPS):
            steps = None if m is None else m[start:start + NORM_BLOCK_STEPS]
            if steps is not None and not bool(steps.any()):
                continue
            block = {k: v[start:start + NORM_BLOCK_STEPS] for k, v in flat.items()}
            if self.cfg.team_frame:
                block = to_team_frame(block)
            valid_units = block["unit_valid"] > 0
            mini = block["private_minimap"].flatten(-3)
            rows = {"global": (block["global"], steps),
                    "units": (block["units"], valid_units if steps is None else valid_units & steps.unsqueeze(-1)),
                    "heroes": (block["heroes"], _step_rows(steps, block["heroes"])),
                    "private_minimap": (mini, _step_rows(steps, mini)),
                    "private_lanes": (block["private_lanes"], _step_rows(steps, block["private_lanes"]))}
            for name, (x, mask) in rows.items():
                total[name] = merge_moments(total[name], batch_moments(x, mask, name, names[name]))
        for name, moments in total.items():
            self.norm[name].merge(moments)

    def _core(self, batch, heads=True, reading_only=False):
        obs = batch[Columns.OBS]
        b, t = obs["global"].shape[:2]
        flat = {k: v.reshape(b * t, *v.shape[2:]) for k, v in obs.items()}
        dire = None
        if self.cfg.team_frame:
            dire = is_dire(flat)
            flat = to_team_frame(flat)
        team_steps = batch.get(TEAM_STEP)
        if team_steps is not None:  # a learner batch (policies/learning/team_steps.py)
            groups = self.step_groups(flat, team_steps.reshape(-1))
        else:
            groups = self.team_groups(flat)
        units = self._encode_units(flat, groups, team_steps is not None)
        x = self._replicas(self._encode_team(flat, groups), units, flat).reshape(b, t, -1)
        st = batch[Columns.STATE_IN]
        o, (h, c) = self.lstm(x, (st["h"].unsqueeze(0), st["c"].unsqueeze(0)))
        state_out = {"h": h.squeeze(0), "c": c.squeeze(0)}
        if not heads:
            return None, o, state_out
        out = {Columns.ACTION_DIST_INPUTS: self._heads(o.reshape(b * t, -1), units, flat, dire,
                                                      reading_only).reshape(b, t, -1)}
        return out, o, state_out

    def _encode_units(self, obs, team_groups=None, team_steps: bool = False) -> UnitTable:
        """The unit embeddings and their max-pools over the valid units and over the enemies. Only valid rows go
        through the unit MLP. In the embeddings, the rows of the team's heroes hold an empty row's embedding when the
        hero is dead (the replicas read them); the other rows without a unit hold 0 (the heads mask them). With
        `team_unit_table` the table is computed once per group of rows with equal team unit columns
        (``unit_groups``; `team_groups`: the rows' ``team_groups``, tried first, or their ``step_groups`` where
        `team_steps`), from those columns only."""
        units, valid = obs["units"], obs["unit_valid"] > 0
        reps, index = self.unit_groups(obs, team_groups, team_steps) if self.cfg.team_unit_table else (None, None)
        hero_columns = None
        if self.cfg.team_unit_table:
            hero_columns = self.norm["units"](units[..., self.unit_hero_columns], self.unit_hero_columns)
        if reps is not None:
            units, valid, unit_type = units[reps], valid[reps], obs["unit_type"][reps]
        else:
            unit_type = obs["unit_type"]
        first, second = self.unit_mlp[0], self.unit_mlp[2]
        team_cols = self.unit_team_columns
        n_feat = len(team_cols)
        # the first layer on [features, type embedding] as one matmul of [features, one-hot type]: the embedding's part
        # (and the bias) become a (types, hidden) table
        type_table = F.linear(self.unit_type_emb.weight, first.weight[:, n_feat:], first.bias)
        weight = torch.cat([first.weight[:, :n_feat], type_table.T], 1)
        every_column = n_feat == units.shape[-1]

        def mlp(x, unit_type):
            onehot = F.one_hot(unit_type.long(), type_table.shape[0]).to(x.dtype)
            x = self.norm["units"](x) if every_column else self.norm["units"](x[:, team_cols], team_cols)
            # in-place ReLUs on the fresh matmul outputs: the (M, hidden) tensors are the largest of the network
            hidden = F.relu(F.linear(torch.cat([x, onehot], -1), weight), inplace=True)
            return F.relu(second(hidden), inplace=True)

        rows, cols = valid.nonzero(as_tuple=True)  # row-major: rows ascending, as segment_reduce needs
        emb = mlp(units[rows, cols], unit_type[rows, cols])  # (M, E)
        # the pools: ReLU outputs are >= 0, so a max starting from 0 is the max over the segment (0 when empty)
        enemy = (units[rows, cols, UNIT_IS_ENEMY] > 0.5).nonzero().squeeze(1)  # indices: index_select, not emb[mask]
        pooled = torch.cat([
            torch.segment_reduce(emb, "max", lengths=valid.sum(1), unsafe=True, initial=0.0),
            torch.segment_reduce(emb.index_select(0, enemy), "max",
                                 lengths=(valid & (units[..., UNIT_IS_ENEMY] > 0.5)).sum(1), unsafe=True, initial=0.0)],
            -1)
        unit_emb, own_rows = self._unit_table(emb, rows, cols, valid, mlp(
            units.new_zeros(1, units.shape[-1]), torch.zeros(1, device=units.device)))  # an empty row: zeros, type 0
        hero_pooled = None
        if self.cfg.team_unit_table:  # the hero's own pools: the team table's projection and its hero columns
            team_part = self.unit_pool_team(unit_emb)
            near = F.relu(self.unit_pool_hero(hero_columns) + _per_row(team_part, index))
            valid_rows = (obs["unit_valid"] > 0).unsqueeze(-1).to(near.dtype)
            enemy_rows = valid_rows * (obs["units"][..., UNIT_IS_ENEMY:UNIT_IS_ENEMY + 1] > 0.5).to(near.dtype)
            # max, not amax: the same values, and its backward one scatter where amax's shares ties by masks (2x on
            # the CPU); the ties here are zeros, whose gradient the ReLU stops either way
            hero_pooled = torch.cat([(near * valid_rows).max(1).values, (near * enemy_rows).max(1).values], -1)
        return UnitTable(unit_emb, index, own_rows, _per_row(pooled, index), hero_columns, hero_pooled)

    def _unit_table(self, emb, rows, cols, valid, empty):
        """The (K, U, E) unit table of K tables' valid units' embeddings `emb` (M, E) at (rows, cols), and its first
        n rows (K, n, E): the team's heroes', each a dead hero's (an invalid row) holding the `empty` (1, E) row's
        embedding; the other rows without a unit hold 0. Written by one in-place copy into fresh zeros, and the
        heroes' rows gathered from the copy's source: the table's gradient reaches `emb` through one gather, where
        an out-of-place index_put and slice writes cost copies, fills and sums of the whole table in backward
        (docs/performance.md, 2026-12-03, later). Without a backward (acting), the slice write and the copy in place."""
        k, u = valid.shape
        n = self.team_size
        if not (emb.requires_grad and torch.is_grad_enabled()):  # acting: no backward, the fewest operators
            table = emb.new_zeros(k, u, emb.shape[-1])
            table[:, :n] = empty
            table.view(k * u, -1).index_copy_(0, rows * u + cols, emb)
            return table, table[:, :n]
        # each row's first n slots: their position in [emb; empty], M (the empty row) for a dead hero
        position = torch.full((k, u), emb.shape[0], dtype=torch.long, device=valid.device)
        position[rows, cols] = torch.arange(emb.shape[0], device=valid.device)
        heroes = position[:, :n]
        source = torch.cat([emb, empty])
        own_rows = source.index_select(0, heroes.flatten()).reshape(k, n, -1)
        dead = (heroes == emb.shape[0]).nonzero(as_tuple=True)
        destination = torch.cat([rows * u + cols, dead[0] * u + dead[1]])
        written = torch.cat([emb, empty.expand(len(dead[0]), -1)])
        table = emb.new_zeros(k * u, emb.shape[-1]).index_copy_(0, destination, written)
        return table.reshape(k, u, -1), own_rows

    def unit_groups(self, obs, team_groups=None, team_steps: bool = False):
        """(representatives, index) of a batch of rows as ``team_groups``, by the unit table's inputs (the team's
        columns of the unit rows, the unit types, the valid flags): the rows of one team at one step. `team_groups`
        ((representatives, index) of the same rows by ``team_groups``): taken when the unit table's inputs are equal
        within each of them (checked exactly; a team at one step sees one set of units), which saves the unit
        rows' fingerprint, the largest of the two; taken unchecked when they are the batch's ``step_groups``
        (`team_steps`), whose groups are one team at one step by construction."""
        n = obs["units"].shape[0]
        if self.team_size == 1 or n < 2:
            return None, None
        if team_steps and team_groups is not None:
            return team_groups
        flat, ignored = self._unit_table_inputs(obs, n)
        if team_groups is not None and team_groups[0] is not None and _equal_in_groups(flat, *team_groups, ignored):
            return team_groups
        weights = {k: getattr(self, f"_unit_fingerprint_{k}") for k in UNIT_TABLE_KEYS}
        return _group_rows(flat, weights, ignored)

    def _unit_table_inputs(self, obs, n: int):
        """({key: (n, D)} of the unit table's inputs, {key: (D,) bool} of their entries that differ between a
        team's heroes by design: the hero-relative unit columns)."""
        return ({k: obs[k].reshape(n, -1) for k in UNIT_TABLE_KEYS}, {"units": self._unit_fingerprint_ignored})

    def team_groups(self, obs):
        """(representatives, index) of a batch of rows (obs: N, ...): the rows whose team encoder inputs are all equal
        form a group; `index` (N,) maps each row to its group and `representatives` (K,) holds one row of each. Equal
        rows are found by a random projection, then checked for exact equality; (None, None) when every row is its own
        group."""
        n = obs["global"].shape[0]
        if self.team_size == 1 or n < 2:
            return None, None
        flat = {k: obs[k].reshape(n, -1) for k in TEAM_ENCODER_KEYS}
        return _group_rows(flat, {k: getattr(self, f"_fingerprint_{k}") for k in TEAM_ENCODER_KEYS})

    def step_groups(self, obs, team_steps: torch.Tensor):
        """(representatives, index) of a learner batch's rows (obs: N, ...) as ``team_groups``, from their
        ``TEAM_STEP`` numbers (N,) instead of their inputs: the rows of one team at one step of one game hold equal
        team inputs and team unit columns by the observation's contract (TEAM_SHARED_KEYS, tested in
        tests/test_five_network.py), which saves the fingerprints and the exact comparison of every row at every
        minibatch. The first call and every TEAM_STEP_CHECK_EVERY-th after compare the rows anyway, and raise
        ValueError naming the observation key where a group's rows differ."""
        reps, index = _groups_of(team_steps) if self.team_size > 1 and len(team_steps) > 1 else (None, None)
        check = self._step_group_calls % TEAM_STEP_CHECK_EVERY == 0
        self._step_group_calls += 1
        if reps is not None and check:
            n = len(team_steps)
            flat = {k: obs[k].reshape(n, -1) for k in TEAM_ENCODER_KEYS}
            differs = _unequal_in_groups(flat, reps, index)
            if differs is None and self.cfg.team_unit_table:
                flat, ignored = self._unit_table_inputs(obs, n)
                differs = _unequal_in_groups(flat, reps, index, ignored)
            if differs is not None:
                raise ValueError(f"the batch's {TEAM_STEP!r} column groups rows whose observation key {differs!r} "
                                 f"differs: a team's heroes must see equal team inputs at one step "
                                 f"(TEAM_SHARED_KEYS of moba/env/observation.py)")
        return reps, index

    def _encode_team(self, obs, groups=None):
        """The team part of every replica's pre-activation (N, n, R), computed once per group of equal team inputs
        (`groups`: the rows' ``team_groups``, None: found here): replica layer (global, pooled heroes, private
        inputs; its bias)."""
        reps, index = self.team_groups(obs) if groups is None else groups
        if reps is not None:
            obs = {k: obs[k][reps] for k in TEAM_ENCODER_KEYS}
        heroes = self.norm["heroes"](obs["heroes"])
        items = self.item_emb(obs["hero_items"].long()).sum(-2)
        hero_emb = self.hero_mlp(torch.cat([heroes, self.hero_id_emb(obs["hero_id"].long()), items], -1))
        n = self.team_size
        pooled_heroes = torch.cat([hero_emb[:, :n].max(1).values, hero_emb[:, n:].max(1).values], -1)
        glob = self.global_mlp(self.norm["global"](obs["global"]))
        mini = self.norm["private_minimap"](obs["private_minimap"].flatten(-3))
        lanes = self.norm["private_lanes"](obs["private_lanes"])
        prev = obs["private_prev_action"].long()
        prev_e = torch.cat([emb(prev[..., k].clamp(0, emb.num_embeddings - 1))
                            for k, emb in enumerate(self.prev_emb)], -1)
        private = self.private_mlp(torch.cat([mini, lanes, prev_e], -1))  # (K, n, P)
        w_glob, _, w_heroes, w_private = self.replica_fc[0].weight.split(self.replica_parts, dim=1)[:4]
        team = F.linear(glob, w_glob, self.replica_fc[0].bias) + F.linear(pooled_heroes, w_heroes)
        team = team.unsqueeze(1) + F.linear(private, w_private)  # (K, n, R)
        return _per_row(team, index)

    def _replicas(self, team, units: UnitTable, obs):
        """The LSTM input (N, R + pool): this hero's replica and the cross-hero pool of the first quarter of all the
        team's replicas. Adds the per-hero parts (pooled units, own unit embedding; the hero's own pools with a team
        unit table) to the team part."""
        parts = self.replica_fc[0].weight.split(self.replica_parts, dim=1)
        w_units, w_own = parts[1], parts[4]
        n, pool = self.team_size, self.pool_size
        me = obs["me"]
        mine_index = me.argmax(-1)
        rows = torch.arange(me.shape[0], device=me.device)
        per_hero = F.linear(units.pooled, w_units)  # (N, R)
        if units.hero_pooled is not None:
            per_hero = per_hero + F.linear(units.hero_pooled, parts[5])
        own = units.own()  # the team's heroes occupy the first n unit rows
        mine_rows = rows * n + mine_index  # this hero's row of the (N * n, ...) flattened team tensors
        mine = F.relu(team.flatten(0, 1).index_select(0, mine_rows) + per_hero
                      + F.linear(own.flatten(0, 1).index_select(0, mine_rows), w_own))
        mine = mine * me.sum(-1, keepdim=True).to(mine.dtype)  # a zero-padded step has no "me": its replica is 0
        pooled = F.relu(team[..., :pool] + per_hero[:, None, :pool] + F.linear(own, w_own[:pool])).max(1).values
        return torch.cat([mine, pooled], -1)

    def _unit_logits(self, o, units: UnitTable, ids):
        """(N, P', U): the target-unit logits (figure 18's gated attention) of the primary actions `ids` (N, P')."""
        # (N, P', K): the sigmoid on the table, then the lookup
        gate = torch.sigmoid(self.action_gate.weight).index_select(0, ids.flatten()).reshape(*ids.shape, -1)
        query = self.unit_query(o)
        if units.hero_columns is None:
            return gated_unit_logits(units.emb, self.unit_key.weight, self.unit_key.bias, gate, query)
        # gated_unit_logits with the keys' hero part (hero columns) and each table multiplied once by its rows
        e = units.emb.shape[-1]
        weight = torch.cat([self.unit_key.weight, self.unit_key_hero.weight, self.unit_key.bias.unsqueeze(1)], 1)
        folded = (gate * query.unsqueeze(1)) @ weight  # (N, P', E + hero columns + 1)
        team_part = (torch.bmm(folded[..., :e], units.emb.transpose(1, 2)) if units.index is None
                     else table_products(units.emb, units.index, folded[..., :e], self.team_size))
        return team_part + torch.bmm(folded[..., e:-1], units.hero_columns.transpose(1, 2)) + folded[..., -1:]

    def _heads(self, o, units: UnitTable, obs, dire=None, reading_only: bool = False):
        """The action distribution's inputs; `dire` (N,) marks the rows of Dire heroes in the team's frame, whose
        offsets are turned back into the map's frame (None: the map's frame). `reading_only`: the target-unit logits
        of the primary actions that no row reads a unit with are 0 where legal (``_forward_train``)."""
        ids = obs["action_id"].long()  # (N, P)
        legal = obs["action_mask"] > 0
        legal = legal.clone()
        legal[:, A_NOOP] = True  # no-op is always legal
        # the dot product of the query with every action embedding, then the row's actions picked: cheaper than
        # gathering an (N, P, E) table of embeddings (there are n_action_ids ids in all)
        primary = torch.gather(self.action_query(o) @ self.action_emb.weight.T, 1, ids)  # (N, P)
        primary = torch.where(legal, primary, torch.full_like(primary, MASK_VALUE))
        tt = obs["action_target_type"].long()
        reads_unit = self.reads_unit_table[tt]  # (N, P)
        columns = reads_unit.any(0).nonzero().squeeze(1) if reading_only else None
        if columns is None or len(columns) == ids.shape[1]:  # every primary action's logits
            unit = self._unit_logits(o, units, ids)
        else:  # the read primaries' logits into their columns, 0 in the others (all 0: zero-padded steps only)
            unit = o.new_zeros(*ids.shape, units.emb.shape[1])
            if len(columns):
                unit = unit.index_copy_(1, columns, self._unit_logits(o, units, ids.index_select(1, columns)))
        kind = obs["action_unit_kind"].long().clamp(0, N_UNIT_KINDS - 1)  # (N, P)
        # each kind's legal targets, then each primary action's by its kind: the valid-unit check and the fallback
        # on (N, kinds, U), not on (N, P, U)
        umask = (obs["unit_masks"] > 0) & (obs["unit_valid"] > 0).unsqueeze(1)  # (N, kinds, U)
        umask[..., 0] = umask[..., 0] | ~umask.any(-1)  # never an all-masked row
        per_action = torch.gather(umask, 1, kind.unsqueeze(-1).expand(-1, -1, umask.shape[-1]))
        unit = unit.masked_fill(~per_action, MASK_VALUE)
        offset_x, offset_y = self.offset_x_head(o), self.offset_y_head(o)
        offset_group = None
        if self.n_offset_groups > 1:  # (N, G, 9), and the group each primary action reads
            offset_x = offset_x.unflatten(-1, (self.n_offset_groups, N_OFFSETS))
            offset_y = offset_y.unflatten(-1, (self.n_offset_groups, N_OFFSETS))
            offset_group = self.offset_group_table[tt]
            offset_group[:, A_MOVE] = OFFSET_GROUP_MOVE
        if dire is not None:  # the offsets of the team's frame back into the map's
            offset_x, offset_y = flip_offsets(offset_x, dire), flip_offsets(offset_y, dire)
        return FiveActionDistribution.pack(primary, unit, self.delay_head(o), offset_x, offset_y,
                                           reads_unit, self.reads_offset_table[tt], offset_group)
