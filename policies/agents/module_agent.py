"""An agent (policies/agents/by_name.py protocol) that plays one team with a recurrent RLModule, e.g. a trained "main".

After every ``act``, ``decisions`` holds, per agent id, the action chosen and the module's estimate that the agent's
team wins (its win-probability head, Five app. D; None for a module without one): what a replay shows of a
model's play (moba/env/replay_file.py); ``dist`` holds the action distribution the actions came from, one row per agent
in the order of the observations (scripts/policy_heads.py).

``primary_bias`` ((P,) logits, or None) is added to every row's primary-action logits before the draw, sampled or
greedy: a decode-time prior on the primary action, the same for every game (scripts/teacher_override.py
--primary-bias, e.g. to undo the over-prediction of a class-weighted imitation: measured on the 5v5 pilot, not a
lever, docs/results.md); ``dist`` holds the shifted logits.
An action the mask rules out stays ruled out (its logit is the mask's, far below any bias)."""
from __future__ import annotations

import numpy as np
import torch
from ray.rllib.core.columns import Columns

from policies.model.five_module import WIN_PROB


def _same_bias(a, b) -> bool:
    return a is b or (a is not None and b is not None and torch.equal(a, b))


class ModuleAgent:
    def __init__(self, module, explore: bool = False, seed: int | None = None, primary_bias=None):
        self.module = module
        self.explore = explore
        self.primary_bias = None
        if primary_bias is not None:
            n = module.get_exploration_action_dist_cls().n_primary
            self.primary_bias = torch.as_tensor(primary_bias, dtype=torch.float32)
            if self.primary_bias.shape != (n,):
                raise ValueError(f"ModuleAgent: primary_bias must hold {n} logits, one per primary action, got shape "
                                 f"{tuple(self.primary_bias.shape)}")
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
        actions, self.dist = self._play([self], [observations], self.generator)
        return actions[0]

    @staticmethod
    @torch.no_grad()
    def act_together(agents: list, observations: list) -> list:
        """The actions of several agents of one module, each with its own heroes' observations (``observations[i]``
        for ``agents[i]``, e.g. one game each), from one forward pass over all their rows: a runner's games with a
        checkpoint guide or opponent (training/batched_env_runner.py). Each agent's LSTM state and ``decisions``
        move as its own ``act`` moves them. The actions are sampled in one draw from torch's global generator, not
        from the agents' seeds, and ``dist`` is left as it was."""
        first = agents[0]
        if any(ag.module is not first.module or ag.explore != first.explore
               or not _same_bias(ag.primary_bias, first.primary_bias) for ag in agents):
            raise ValueError("ModuleAgent.act_together: every agent must play the same module with the same explore "
                             "and primary_bias")
        return ModuleAgent._play(agents, observations, None)[0]

    @staticmethod
    def _play(agents: list, observations: list, generator) -> tuple:
        """One forward pass over the rows of `agents` (ModuleAgents of one module), one action draw from
        `generator` (None: torch's global one); returns each agent's actions and the distribution of all rows."""
        module, explore = agents[0].module, agents[0].explore
        init = module.get_initial_state()
        ids = [list(o) for o in observations]
        for ag, agent_ids in zip(agents, ids):
            for a in agent_ids:
                ag.state.setdefault(a, {k: np.array(v) for k, v in init.items()})
        rows = [(ag, o, a) for ag, o, agent_ids in zip(agents, observations, ids) for a in agent_ids]
        obs = {k: torch.as_tensor(np.stack([o[a][k] for _, o, a in rows]))[:, None] for k in observations[0][ids[0][0]]}
        state = {k: torch.as_tensor(np.stack([ag.state[a][k] for ag, _, a in rows])) for k in init}
        batch = {Columns.OBS: obs, Columns.STATE_IN: state}
        out = module.forward_exploration(batch) if explore else module.forward_inference(batch)
        logits = out[Columns.ACTION_DIST_INPUTS][:, 0]
        bias = agents[0].primary_bias
        if bias is not None:  # the primary logits come first (FiveActionDistribution.input_layout)
            logits = torch.cat([logits[:, :len(bias)] + bias, logits[:, len(bias):]], dim=-1)
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        sampled = dist if explore else dist.to_deterministic()
        action = sampled.sample(generator=generator) if generator is not None else sampled.sample()
        action = {k: v.tolist() for k, v in action.items()}
        state_out = {k: v.numpy() for k, v in out[Columns.STATE_OUT].items()}
        win_prob = out[WIN_PROB].reshape(len(rows)).tolist() if WIN_PROB in out else [None] * len(rows)
        results, i = [], 0
        for ag, agent_ids in zip(agents, ids):
            actions, decisions = {}, {}
            for a in agent_ids:
                ag.state[a] = {k: v[i] for k, v in state_out.items()}
                actions[a] = {k: v[i] for k, v in action.items()}
                decisions[a] = {"action": actions[a], "win_prob": win_prob[i]}
                i += 1
            ag.decisions = decisions
            results.append(actions)
        return results, dist
