"""The OpenAI Five network as an RLlib ``TorchRLModule`` (seeds/003 app. H, figures 17 and 18).

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
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from torch import nn

from app.env.actions import N_OFFSETS, N_PRIMARY
from app.env.observation import MINIMAP_N, N_ACTION_IDS, N_MINIMAP_CHANNELS, UNIT_IS_ENEMY
from app.game.abilities import N_UNIT_KINDS, TARGET_TYPE_READS_OFFSET, TARGET_TYPE_READS_UNIT
from app.game.constants import N_DELAYS, N_UNIT_TYPES
from app.game.heroes import HEROES
from app.game.items import ITEMS
from policies.action_distribution import FiveActionDistribution
from policies.normalization import RunningNorm

MASK_VALUE = -1e9  # masked logits: a large negative number, never -inf
WIN_LOGIT = "win_logit"
WIN_PROB = "win_prob"
CROSS_HERO_POOL_FRACTION = 0.25  # app. H: max-pool the first 25% of the vector across the five replicas


@dataclass
class FiveModelConfig:
    """Network sizes. The paper's LSTM has 4096 units (Table 2); the CPU default is small."""
    lstm_size: int = 128
    unit_embed: int = 64
    hero_embed: int = 64
    global_embed: int = 32
    private_embed: int = 64
    replica_size: int = 256  # the fully connected layer before the cross-hero pool and the LSTM
    action_embed: int = 64
    categorical_embed: int = 16
    max_seq_len: int = 16  # LSTM unroll length (Table 2)

    @classmethod
    def from_dict(cls, d: dict) -> "FiveModelConfig":
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ValueError(f"model config: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
        cfg = cls(**d)
        for k, v in asdict(cfg).items():
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"model config {k!r}: must be a positive int, got {v!r}")
        return cfg


def gated_unit_logits(keys, gate, query):
    """Target-unit logits of figure 18: logits[n, p, u] = sum_k keys[n, u, k] * gate[n, p, k] * query[n, k], i.e.
    attention of the LSTM's query over the unit keys, gated per primary action. One batched matmul of the gated
    queries with the keys: a 3-operand einsum materializes an (N, P, U, K) tensor and made the learner 2.3x slower."""
    return torch.bmm(gate * query.unsqueeze(1), keys.transpose(1, 2))


def _mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


def _masked_max_nonneg(x, mask, dim):
    """Max over `dim` of x >= 0 (a ReLU output) where mask; 0 where nothing is valid. Zeroing the masked entries
    gives the same max as excluding them because x >= 0, at a fraction of the cost of a -inf fill."""
    return (x * mask.unsqueeze(-1).to(x.dtype)).max(dim).values


class FiveRLModule(TorchRLModule, ValueFunctionAPI):
    """model_config: the FiveModelConfig fields (dict)."""

    @override(TorchRLModule)
    def setup(self):
        cfg = FiveModelConfig.from_dict({k: v for k, v in (self.model_config or {}).items()
                                         if k in {f.name for f in fields(FiveModelConfig)}})
        self.cfg = cfg
        sp = self.observation_space
        self.team_size = sp["me"].shape[0]
        self.max_units, n_unit = sp["units"].shape
        n_hero_feat = sp["heroes"].shape[1]
        e = cfg.categorical_embed
        self.norm = nn.ModuleDict({
            "global": RunningNorm(sp["global"].shape[0]), "units": RunningNorm(n_unit),
            "heroes": RunningNorm(n_hero_feat),
            "private_minimap": RunningNorm(N_MINIMAP_CHANNELS * MINIMAP_N * MINIMAP_N),
            "private_lanes": RunningNorm(sp["private_lanes"].shape[1])})
        self.unit_type_emb = nn.Embedding(N_UNIT_TYPES + 1, e)
        self.unit_mlp = _mlp([n_unit + e, 128, cfg.unit_embed])
        self.hero_id_emb = nn.Embedding(len(HEROES) + 1, e)
        self.item_emb = nn.Embedding(len(ITEMS) + 1, e, padding_idx=0)
        self.hero_mlp = _mlp([n_hero_feat + 2 * e, 128, cfg.hero_embed])
        self.global_mlp = _mlp([sp["global"].shape[0], cfg.global_embed])
        n_prev = sp["private_prev_action"].shape[1]
        sizes = (N_PRIMARY, N_DELAYS, self.max_units, N_OFFSETS, N_OFFSETS)  # the action parameters, ACTION_KEYS order
        self.prev_emb = nn.ModuleList([nn.Embedding(n, e) for n in sizes][:n_prev])
        mini = N_MINIMAP_CHANNELS * MINIMAP_N * MINIMAP_N
        self.private_mlp = _mlp([mini + sp["private_lanes"].shape[1] + n_prev * e, 128, cfg.private_embed])
        state_size = cfg.global_embed + 2 * cfg.unit_embed + 2 * cfg.hero_embed
        self.replica_fc = _mlp([state_size + cfg.private_embed + cfg.unit_embed, cfg.replica_size])
        self.pool_size = int(cfg.replica_size * CROSS_HERO_POOL_FRACTION)
        self.lstm = nn.LSTM(cfg.replica_size + self.pool_size, cfg.lstm_size, batch_first=True)
        h = cfg.lstm_size
        self.action_emb = nn.Embedding(N_ACTION_IDS, cfg.action_embed)
        self.action_query = nn.Linear(h, cfg.action_embed)
        self.unit_key = nn.Linear(cfg.unit_embed, cfg.action_embed)
        self.unit_query = nn.Linear(h, cfg.action_embed)
        self.action_gate = nn.Embedding(N_ACTION_IDS, cfg.action_embed)  # the learned per-action mask of figure 18
        self.delay_head = nn.Linear(h, N_DELAYS)
        self.offset_x_head = nn.Linear(h, 9)
        self.offset_y_head = nn.Linear(h, 9)
        self.value_head = nn.Linear(h, 1)
        self.win_head = nn.Linear(h, 1)
        self.action_dist_cls = FiveActionDistribution.make(N_PRIMARY, self.max_units)
        self.register_buffer("reads_unit_table", torch.tensor(TARGET_TYPE_READS_UNIT, dtype=torch.bool),
                             persistent=False)
        self.register_buffer("reads_offset_table", torch.tensor(TARGET_TYPE_READS_OFFSET, dtype=torch.bool),
                             persistent=False)

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
        out, emb, state = self._core(batch)
        win_logit = self.win_head(emb).squeeze(-1)
        out[Columns.STATE_OUT] = state
        out[WIN_PROB] = torch.sigmoid(win_logit)
        return out

    @override(TorchRLModule)
    def _forward_train(self, batch, **kwargs):
        out, emb, state = self._core(batch)
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
        """Adds the float observations of the valid time steps to the running statistics (learner only)."""
        m = loss_mask if loss_mask is not None else torch.ones(obs["global"].shape[:2], dtype=torch.bool,
                                                               device=obs["global"].device)
        self.norm["global"].update(obs["global"], m)
        unit_mask = m.unsqueeze(-1) & (obs["unit_valid"] > 0)
        self.norm["units"].update(obs["units"], unit_mask)
        self.norm["heroes"].update(obs["heroes"], m.unsqueeze(-1).expand(*obs["heroes"].shape[:-1]))
        mini = obs["private_minimap"].flatten(-3)
        self.norm["private_minimap"].update(mini, m.unsqueeze(-1).expand(*mini.shape[:-1]))
        lanes = obs["private_lanes"]
        self.norm["private_lanes"].update(lanes, m.unsqueeze(-1).expand(*lanes.shape[:-1]))

    def _encode(self, obs):
        """Observations (N, ...) -> (per-replica vectors (N, n, R), unit embeddings (N, U, E))."""
        units = self.norm["units"](obs["units"])
        valid = obs["unit_valid"] > 0
        u_in = torch.cat([units, self.unit_type_emb(obs["unit_type"].long())], -1)
        unit_emb = self.unit_mlp(u_in)
        enemy = valid & (obs["units"][..., UNIT_IS_ENEMY] > 0.5)
        pooled_units = torch.cat([_masked_max_nonneg(unit_emb, valid, -2), _masked_max_nonneg(unit_emb, enemy, -2)], -1)
        heroes = self.norm["heroes"](obs["heroes"])
        items = self.item_emb(obs["hero_items"].long()).sum(-2)
        h_in = torch.cat([heroes, self.hero_id_emb(obs["hero_id"].long()), items], -1)
        hero_emb = self.hero_mlp(h_in)
        n = self.team_size
        pooled_heroes = torch.cat([hero_emb[:, :n].max(1).values, hero_emb[:, n:].max(1).values], -1)
        glob = self.global_mlp(self.norm["global"](obs["global"]))
        state = torch.cat([glob, pooled_units, pooled_heroes], -1)  # the game state vector
        mini = self.norm["private_minimap"](obs["private_minimap"].flatten(-3))
        lanes = self.norm["private_lanes"](obs["private_lanes"])
        prev = obs["private_prev_action"].long()
        prev_e = torch.cat([emb(prev[..., k].clamp(0, emb.num_embeddings - 1))
                            for k, emb in enumerate(self.prev_emb)], -1)
        private = self.private_mlp(torch.cat([mini, lanes, prev_e], -1))  # (N, n, P)
        own_units = unit_emb[:, :n]  # the team's heroes occupy the first n unit rows
        replicas = self.replica_fc(torch.cat([state.unsqueeze(1).expand(-1, n, -1), private, own_units], -1))
        return replicas, unit_emb

    def _core(self, batch, heads=True):
        obs = batch[Columns.OBS]
        b, t = obs["global"].shape[:2]
        flat = {k: v.reshape(b * t, *v.shape[2:]) for k, v in obs.items()}
        replicas, unit_emb = self._encode(flat)
        me = flat["me"].float()  # (N, n) one-hot
        mine = (replicas * me.unsqueeze(-1)).sum(1)
        pooled = replicas[..., :self.pool_size].max(1).values  # the cross-hero pool
        x = torch.cat([mine, pooled], -1).reshape(b, t, -1)
        st = batch[Columns.STATE_IN]
        o, (h, c) = self.lstm(x, (st["h"].unsqueeze(0), st["c"].unsqueeze(0)))
        state_out = {"h": h.squeeze(0), "c": c.squeeze(0)}
        if not heads:
            return None, o, state_out
        out = {Columns.ACTION_DIST_INPUTS: self._heads(o.reshape(b * t, -1), unit_emb, flat).reshape(b, t, -1)}
        return out, o, state_out

    def _heads(self, o, unit_emb, obs):
        ids = obs["action_id"].long()  # (N, P)
        legal = obs["action_mask"] > 0
        legal = legal.clone()
        legal[:, 0] = True  # no-op is always legal
        primary = torch.bmm(self.action_emb(ids), self.action_query(o).unsqueeze(-1)).squeeze(-1)  # (N, P)
        primary = torch.where(legal, primary, torch.full_like(primary, MASK_VALUE))
        keys = self.unit_key(unit_emb)  # (N, U, K)
        gate = torch.sigmoid(self.action_gate(ids))  # (N, P, K)
        unit = gated_unit_logits(keys, gate, self.unit_query(o))
        kind = obs["action_unit_kind"].long().clamp(0, N_UNIT_KINDS - 1)  # (N, P)
        umask = obs["unit_masks"] > 0  # (N, kinds, U)
        per_action = torch.gather(umask, 1, kind.unsqueeze(-1).expand(-1, -1, umask.shape[-1]))
        per_action = per_action & (obs["unit_valid"] > 0).unsqueeze(1)
        per_action[..., 0] = per_action[..., 0] | ~per_action.any(-1)  # never an all-masked row
        unit = torch.where(per_action, unit, torch.full_like(unit, MASK_VALUE))
        tt = obs["action_target_type"].long()
        return FiveActionDistribution.pack(primary, unit, self.delay_head(o), self.offset_x_head(o),
                                           self.offset_y_head(o), self.reads_unit_table[tt],
                                           self.reads_offset_table[tt])
