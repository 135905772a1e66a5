"""An agent (policies/agents/by_name.py protocol) that plays one team with a recurrent RLModule, e.g. a trained "main".

After every ``act``, ``decisions`` holds, per agent id, the action chosen and the module's estimate that the agent's
team wins (its win-probability head, Five app. D; None for a module without one): what a replay shows of a
model's play (moba/env/replay_file.py); ``dist`` holds the action distribution the actions came from, one row per agent
in the order of the observations (scripts/policy_heads.py)."""
from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from policies.model.five_module import WIN_PROB


class ModuleAgent:
    def __init__(self, module, explore: bool = False, seed: int | None = None):
        self.module = module
        self.explore = explore
        # with a seed, sampled actions come from the agent's own generator, so that a game is decided by its seed and
        # its agents whatever ran before it in the process (policies/league/series.py); without, torch's global one
        self.generator = None if seed is None else torch.Generator().manual_seed(seed)
        self.state = {}
        self.decisions = {}
        self.dist = None

    def reset(self, agent_ids=None):
        init = self.module.get_initial_state()
        self.state = {a: {k: np.array(v) for k, v in init.items()} for a in (agent_ids or [])}
        self.decisions = {}

    @torch.no_grad()
    def act(self, observations: dict) -> dict:
        ids = list(observations)
        init = self.module.get_initial_state()
        for a in ids:
            self.state.setdefault(a, {k: np.array(v) for k, v in init.items()})
        obs = {k: torch.as_tensor(np.stack([observations[a][k] for a in ids]))[:, None] for k in observations[ids[0]]}
        state = {k: torch.as_tensor(np.stack([self.state[a][k] for a in ids])) for k in init}
        batch = {Columns.OBS: obs, Columns.STATE_IN: state}
        out = self.module.forward_exploration(batch) if self.explore else self.module.forward_inference(batch)
        dist_cls = self.module.get_exploration_action_dist_cls()
        dist = dist_cls.from_logits(out[Columns.ACTION_DIST_INPUTS][:, 0])
        self.dist = dist
        if not self.explore:
            dist = dist.to_deterministic()
        action = dist.sample(generator=self.generator) if self.generator is not None else dist.sample()
        for i, a in enumerate(ids):
            self.state[a] = {k: v[i].numpy() for k, v in out[Columns.STATE_OUT].items()}
        actions = {a: {k: int(v[i]) for k, v in action.items()} for i, a in enumerate(ids)}
        win_prob = out[WIN_PROB].reshape(len(ids)).tolist() if WIN_PROB in out else [None] * len(ids)
        self.decisions = {a: {"action": actions[a], "win_prob": p} for a, p in zip(ids, win_prob)}
        return actions
