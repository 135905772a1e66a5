"""``PostprocessedRewardEnv``: the environment as training sees it, with the rewards post-processed (Five app. G):
zero sum, team spirit, time decay and reward normalization.

It wraps the environment (a ``MultiAgentEnv``: MobaEnv or RemoteMobaEnv), because only there are all ten heroes'
rewards of the same env step together (docs/rllib_notes.md section 3: once the env returns, rewards are summed per
agent step and no longer aligned across agents). The math is ``moba.env.rewards.postprocess_rewards``; the raw reward
stays in ``infos[agent]["raw_reward"]``. Team spirit is changed at runtime by the schedule callback
(``set_team_spirit``).

Reward normalization (Five Table 2 footnote c: "we normalize rewards using a running estimate of the standard
deviation, and the value loss weight is applied post-normalization"): the post-processed rewards are divided by a
running standard deviation of the heroes' discounted returns, estimated over all envs of the process (ReturnScaler).
The unnormalized post-processed reward stays in ``infos[agent]["postprocessed_reward"]``.
"""
from __future__ import annotations

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.annotations import override

from moba.env.rewards import TEAM_SPIRIT, TIME_DECAY_BASE, TIME_DECAY_PERIOD_S, postprocess_rewards
from moba.game.teams import team_of_agent

SCALE_EPS = 1e-8
SCALE_WARMUP = 100  # returns seen before the running std is used (until then rewards pass unscaled)


class ReturnScaler:
    """Running std of discounted returns, shared by every env of a process; ``scale(r, returns)`` divides
    rewards by it. The discounted returns themselves are per env (``step_returns``)."""

    def __init__(self):
        self.count, self.mean, self.m2 = 0, 0.0, 0.0

    def update(self, x: np.ndarray):
        """Merges a batch of values (Chan et al.'s parallel update: exact for any split, one numpy pass per step)."""
        x = np.asarray(x, np.float64).ravel()
        n = x.size
        if n == 0:
            return
        b_mean = float(x.mean())
        total = self.count + n
        delta = b_mean - self.mean
        self.mean += delta * n / total
        self.m2 += float(((x - b_mean) ** 2).sum()) + delta ** 2 * self.count * n / total
        self.count = total

    @property
    def std(self) -> float:
        if self.count < SCALE_WARMUP:
            return 1.0
        return max(float(np.sqrt(self.m2 / (self.count - 1))), SCALE_EPS)


PROCESS_SCALER = ReturnScaler()


class PostprocessedRewardEnv(MultiAgentEnv):
    """Wraps MobaEnv (or RemoteMobaEnv): same spaces and agents, post-processed rewards."""

    def __init__(self, env, team_spirit: float = TEAM_SPIRIT, zero_sum: bool = True,
                 time_decay: bool = True, normalize_gamma: float | None = None, scaler: ReturnScaler | None = None):
        """`normalize_gamma`: when set, rewards are divided by the running std of returns discounted by it (footnote
        c); `scaler` holds that std (the process-wide one by default)."""
        super().__init__()
        self.env = env
        self.possible_agents = env.possible_agents
        self.agents = env.agents
        self.observation_spaces = env.observation_spaces
        self.action_spaces = env.action_spaces
        self.team_of = np.array([team_of_agent(a) for a in self.possible_agents])
        self.zero_sum = zero_sum
        self.time_decay_base = TIME_DECAY_BASE if time_decay else 1.0
        self.set_team_spirit(team_spirit)
        if normalize_gamma is not None and not 0.0 <= normalize_gamma < 1.0:
            raise ValueError(f"normalize_gamma must be in [0, 1), got {normalize_gamma}")
        self.normalize_gamma = normalize_gamma
        self.scaler = scaler or PROCESS_SCALER
        self.returns = np.zeros(len(self.possible_agents))

    def set_team_spirit(self, tau: float):
        if not 0.0 <= float(tau) <= 1.0:
            raise ValueError(f"team_spirit must be in [0, 1], got {tau}")
        self.team_spirit = float(tau)

    @override(MultiAgentEnv)
    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = self.env.agents
        self.returns[:] = 0.0
        return obs, infos

    @override(MultiAgentEnv)
    def step(self, action_dict):
        obs, rewards, terms, truncs, infos = self.env.step(action_dict)
        raw = np.array([rewards[a] for a in self.possible_agents])
        win = np.array([infos[a]["reward_signals"]["win"] for a in self.possible_agents])
        game_time = infos[self.possible_agents[0]]["game_time_s"]
        out = postprocess_rewards(raw - win, win, self.team_of, self.team_spirit, game_time, zero_sum=self.zero_sum,
                                  time_decay_base=self.time_decay_base, time_decay_period_s=TIME_DECAY_PERIOD_S)
        scaled = out
        if self.normalize_gamma is not None:
            self.returns = self.returns * self.normalize_gamma + out
            self.scaler.update(self.returns)
            scaled = out / self.scaler.std
        new_rewards = {}
        for i, a in enumerate(self.possible_agents):
            infos[a]["raw_reward"] = float(raw[i])
            infos[a]["postprocessed_reward"] = float(out[i])
            infos[a]["team_spirit"] = self.team_spirit
            new_rewards[a] = float(scaled[i])
        self.agents = self.env.agents
        return obs, new_rewards, terms, truncs, infos

    @override(MultiAgentEnv)
    def close(self):
        if hasattr(self.env, "close"):
            self.env.close()

    @property
    @override(MultiAgentEnv)
    def unwrapped(self):
        return self
