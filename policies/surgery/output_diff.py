"""How far apart two Five modules' outputs are on the same games (model surgery's check, policies/surgery/weights.py):
every
head's logits, the value and the win probability, with the LSTM state carried through whole sequences of recorded
observations.

``record_games`` plays games with the scripted bot on both sides and keeps every hero's observations, in the layout
of each given env config (the same game in each: same seed, same actions). ``pad_actions`` adds masked primary actions
to observations (a surgery's added action while it is not legal). ``max_output_diff`` runs both modules over the
sequences in chunks of their unroll length, state carried from chunk to chunk, and returns the largest absolute
difference per output.
"""
from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from moba.env.moba_env import MobaEnv
from policies.agents.scripted import ScriptedAgent
from policies.model.five_module import WIN_LOGIT

OUTPUTS = ("primary", "unit", "delay", "offset_x", "offset_y", "value", "win_prob")


def record_games(env_configs: list[dict], steps: int, seed: int = 0, games: int = 1) -> list[dict]:
    """For each env config, {key: array (heroes * games, steps, ...)}: `games` games of `steps` steps (a finished game
    is followed by the next seed's), played by the scripted bot on both sides with the actions the first config's
    observations give it."""
    per_config = [[] for _ in env_configs]
    for g in range(games):
        envs = [MobaEnv({**c, "seed": seed + g}) for c in env_configs]
        for e in envs:
            e.set_seed_stream(0, g)  # the same game in every env (a training env mixes its instance into the seed)
        obs = [e.reset(seed=seed + g)[0] for e in envs]
        bot = ScriptedAgent(seed + g)
        bot.reset(envs[0].possible_agents)
        agents = envs[0].possible_agents
        hist = [[o] for o in obs]
        for _ in range(steps - 1):
            action = bot.act(obs[0])
            out = [e.step(action) for e in envs]
            obs = [o[0] for o in out]
            for h, o in zip(hist, obs):
                h.append(o)
            if out[0][2]["__all__"] or out[0][3]["__all__"]:
                break
        for c, h in enumerate(hist):
            per_config[c].append({k: np.stack([np.stack([o[a][k] for o in h]) for a in agents])
                                  for k in h[0][agents[0]]})
    out = []
    for parts in per_config:
        t = min(p["global"].shape[1] for p in parts)
        out.append({k: np.concatenate([p[k][:, :t] for p in parts]) for k in parts[0]})
    return out


def pad_actions(obs: dict, count: int, first_id: int) -> dict:
    """Observations with `count` more primary actions, never legal (mask 0), with embedding ids first_id, ...; the
    other columns of an added action (target type, unit kind) are 0."""
    out = dict(obs)
    b, t = obs["action_mask"].shape[:2]
    out["action_mask"] = np.concatenate([obs["action_mask"], np.zeros((b, t, count), obs["action_mask"].dtype)], -1)
    for k in ("action_target_type", "action_unit_kind"):
        out[k] = np.concatenate([obs[k], np.zeros((b, t, count), obs[k].dtype)], -1)
    ids = np.broadcast_to(np.arange(first_id, first_id + count, dtype=obs["action_id"].dtype), (b, t, count))
    out["action_id"] = np.concatenate([obs["action_id"], ids], -1)
    return out


@torch.no_grad()
def sequence_outputs(module, obs: dict) -> dict:
    """{output: tensor (B, T, ...)} of a module over sequences (B, T, ...), from a zero LSTM state, in chunks of its
    unroll length with the state carried."""
    b, t = obs["global"].shape[:2]
    obs = {k: torch.as_tensor(np.ascontiguousarray(v)) for k, v in obs.items()}
    state = {k: torch.zeros(b, *np.shape(v)) for k, v in module.get_initial_state().items()}
    chunk = module.cfg.max_seq_len
    dist = module.get_train_action_dist_cls()
    parts = {k: [] for k in OUTPUTS}
    for s in range(0, t, chunk):
        batch = {Columns.OBS: {k: v[:, s:s + chunk] for k, v in obs.items()}, Columns.STATE_IN: state}
        out = module.forward_train(batch)
        state = out[Columns.STATE_OUT]
        logits = out[Columns.ACTION_DIST_INPUTS]
        d = dist.from_logits(logits)
        parts["primary"].append(d.primary)
        parts["unit"].append(d.unit)
        parts["delay"].append(d.delay)
        # each primary action's offsets (..., P, 9): the same with one offset parameter or one per group
        for k, v in zip(("offset_x", "offset_y"), d.offsets_by_primary()):
            parts[k].append(v)
        parts["value"].append(module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS]))
        parts["win_prob"].append(torch.sigmoid(out[WIN_LOGIT]))
    return {k: torch.cat(v, 1) for k, v in parts.items()}


def max_output_diff(old_module, new_module, old_obs: dict, new_obs: dict | None = None) -> dict:
    """{output: max |new - old|} over every step of the sequences, and "all": the largest. The new module may have
    more primary actions (the last ones): their logits are compared with nothing, and must be masked."""
    a = sequence_outputs(old_module, old_obs)
    b = sequence_outputs(new_module, old_obs if new_obs is None else new_obs)
    p = a["primary"].shape[-1]
    for k in ("unit", "offset_x", "offset_y"):
        b[k] = b[k][..., :p, :]
    b["primary"] = b["primary"][..., :p]
    diffs = {k: float((a[k].double() - b[k].double()).abs().max()) for k in OUTPUTS}
    diffs["all"] = max(diffs.values())
    diffs["observations"] = int(old_obs["global"].shape[0] * old_obs["global"].shape[1])
    return diffs
