"""The OpenAI Five network as it was computed before the throughput work, kept as the reference that
policies/model/five_module.py must equal: every hero's row encodes every unit, hero and replica itself, in float64
normalization, with dense (N, U) unit tensors. It reads the module's own parameters, so both compute with the same
weights. Test code only."""
from __future__ import annotations

import torch
from ray.rllib.core.columns import Columns

from moba.env.observation import UNIT_IS_ENEMY
from policies.model.action_distribution import FiveActionDistribution
from policies.model.five_module import MASK_VALUE
from policies.model.normalization import NORM_CLIP


def _norm(norm, x):
    std = torch.sqrt(norm.m2 / (norm.count - 1).clamp_min(1.0)).clamp_min(1e-6)
    std = torch.where(norm.count >= 2, std, torch.ones_like(std))  # per feature: 1 until two values were seen
    return ((x.double() - norm.mean) / std).clamp(-NORM_CLIP, NORM_CLIP).to(x.dtype)


def _masked_max(x, mask):
    return (x * mask.unsqueeze(-1).to(x.dtype)).max(-2).values


def _encode(m, obs):
    units = _norm(m.norm["units"], obs["units"])
    valid = obs["unit_valid"] > 0
    # with a team unit table the MLP reads the team's columns only (computed here for every hero's row all the same)
    unit_emb = m.unit_mlp(torch.cat([units[..., m.unit_team_columns], m.unit_type_emb(obs["unit_type"].long())], -1))
    enemy = valid & (obs["units"][..., UNIT_IS_ENEMY] > 0.5)
    pooled_units = torch.cat([_masked_max(unit_emb, valid), _masked_max(unit_emb, enemy)], -1)
    heroes = _norm(m.norm["heroes"], obs["heroes"])
    items = m.item_emb(obs["hero_items"].long()).sum(-2)
    hero_emb = m.hero_mlp(torch.cat([heroes, m.hero_id_emb(obs["hero_id"].long()), items], -1))
    n = m.team_size
    pooled_heroes = torch.cat([hero_emb[:, :n].max(1).values, hero_emb[:, n:].max(1).values], -1)
    glob = m.global_mlp(_norm(m.norm["global"], obs["global"]))
    state = torch.cat([glob, pooled_units, pooled_heroes], -1)
    mini = _norm(m.norm["private_minimap"], obs["private_minimap"].flatten(-3))
    lanes = _norm(m.norm["private_lanes"], obs["private_lanes"])
    prev = obs["private_prev_action"].long()
    prev_e = torch.cat([emb(prev[..., k].clamp(0, emb.num_embeddings - 1)) for k, emb in enumerate(m.prev_emb)], -1)
    private = m.private_mlp(torch.cat([mini, lanes, prev_e], -1))
    own_units = unit_emb[:, :n]
    parts = [state.unsqueeze(1).expand(-1, n, -1), private, own_units]
    if m.cfg.team_unit_table:  # the hero's own pools over the units, read by every replica of its row
        near = torch.relu(m.unit_pool_team(unit_emb) + m.unit_pool_hero(units[..., m.unit_hero_columns]))
        hero_pooled = torch.cat([_masked_max(near, valid), _masked_max(near, enemy)], -1)
        parts.append(hero_pooled.unsqueeze(1).expand(-1, n, -1))
    replicas = m.replica_fc(torch.cat(parts, -1))
    return replicas, unit_emb


def _heads(m, o, unit_emb, obs):
    ids = obs["action_id"].long()
    legal = (obs["action_mask"] > 0).clone()
    legal[:, 0] = True
    primary = torch.bmm(m.action_emb(ids), m.action_query(o).unsqueeze(-1)).squeeze(-1)
    primary = torch.where(legal, primary, torch.full_like(primary, MASK_VALUE))
    keys = m.unit_key(unit_emb)
    if m.cfg.team_unit_table:  # the hero's own unit columns' part of the keys
        keys = keys + m.unit_key_hero(_norm(m.norm["units"], obs["units"])[..., m.unit_hero_columns])
    gate = torch.sigmoid(m.action_gate(ids))
    unit = torch.einsum("nuk,npk,nk->npu", keys, gate, m.unit_query(o))
    kind = obs["action_unit_kind"].long()
    umask = obs["unit_masks"] > 0
    per_action = torch.gather(umask, 1, kind.unsqueeze(-1).expand(-1, -1, umask.shape[-1]))
    per_action = per_action & (obs["unit_valid"] > 0).unsqueeze(1)
    per_action[..., 0] = per_action[..., 0] | ~per_action.any(-1)
    unit = torch.where(per_action, unit, torch.full_like(unit, MASK_VALUE))
    tt = obs["action_target_type"].long()
    return FiveActionDistribution.pack(primary, unit, m.delay_head(o), m.offset_x_head(o), m.offset_y_head(o),
                                       m.reads_unit_table[tt], m.reads_offset_table[tt])


def reference_forward(m, batch) -> dict:
    """Logits, value, win probability and the LSTM state of module `m` on `batch` (OBS (B, T, ...), STATE_IN)."""
    obs = batch[Columns.OBS]
    b, t = obs["global"].shape[:2]
    flat = {k: v.reshape(b * t, *v.shape[2:]) for k, v in obs.items()}
    replicas, unit_emb = _encode(m, flat)
    me = flat["me"].float()
    mine = (replicas * me.unsqueeze(-1)).sum(1)
    pooled = replicas[..., :m.pool_size].max(1).values
    x = torch.cat([mine, pooled], -1).reshape(b, t, -1)
    st = batch[Columns.STATE_IN]
    o, (h, c) = m.lstm(x, (st["h"].unsqueeze(0), st["c"].unsqueeze(0)))
    logits = _heads(m, o.reshape(b * t, -1), unit_emb, flat).reshape(b, t, -1)
    return {Columns.ACTION_DIST_INPUTS: logits, "value": m.value_head(o).squeeze(-1),
            "win_prob": torch.sigmoid(m.win_head(o).squeeze(-1)), "h": h.squeeze(0), "c": c.squeeze(0)}


def masked_logit_free(logits, reference):
    """|logits - reference| where the reference is not a masked logit (masked ones are MASK_VALUE in both)."""
    return torch.where(reference <= MASK_VALUE / 2, torch.zeros_like(logits), (logits - reference).abs())


def as_training_pass(m, logits, obs):
    """The reference's logits as the module's training pass gives them (``FiveRLModule._forward_train``): the
    target-unit logits of the primary actions that no row of the batch reads a unit with are 0 where legal."""
    p, u = m.n_primary, m.max_units
    reads = m.reads_unit_table[obs["action_target_type"].long()].reshape(-1, p).any(0)  # (P,)
    unread = torch.zeros(logits.shape[-1], dtype=torch.bool)
    unread[p:p + p * u] = (~reads).repeat_interleave(u)
    return torch.where(unread & (logits > MASK_VALUE / 2), torch.zeros_like(logits), logits)
