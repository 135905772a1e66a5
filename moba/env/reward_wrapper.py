"""``PostprocessedRewardEnv``: the environment as training sees it, with the rewards post-processed (Five app. G):
zero sum, team spirit, time decay and reward normalization.

It wraps the environment (a ``MultiAgentEnv``: MobaEnv or RemoteMobaEnv), because only there are all ten heroes'
rewards of the same env step together (docs/rllib_notes.md section 3: once the env returns, rewards are summed per
agent step and no longer aligned across agents). The math is ``moba.env.rewards.postprocess_rewards``; the raw reward
stays in ``infos[agent]["raw_reward"]``. Team spirit is changed at runtime by the schedule callback
(``set_team_spirit``).

Reward normalization (Five Table 2 footnote c: "we normalize rewards using a running estimate of the standard
deviation, and the value loss weight is applied post-normalization"): the post-processed rewards are divided by a
running standard deviation of the heroes' discounted returns. Where that std comes from is the wrapper's
``normalize_scope``:

- "process" (the default of a wrapper built by hand: scripts, tests): ``PROCESS_SCALER``, one running estimate over
  all envs of the process, updated every step;
- "run" (a training run's default, ``reward.normalize_scope``): one std for the whole run. Each env keeps the
  statistics of its returns since the last sync (``RunReturnScaler``), the driver merges every env runner's into the
  run's (callbacks/reward_scale.py, which also carries them in checkpoints) and sends the merged std back before the
  next sampling round: every env of every runner divides by the same std, fixed for the round.

A no-op penalty (``noop_penalty``, default 0; ``reward.noop_penalty``): each hero whose primary action is the no-op
while its action mask offered something else (it was alive and not stunned) loses that much, after the zero-sum
and team-spirit mixing (it is its own, not handed to the enemy) and before normalization. A no-op continues the
order the hero runs, so it inherits the credit of that order and short-horizon credit leans toward it (issue 29's
audit); the penalty is one of the measured counters (docs/reward_audit.md).

The unnormalized post-processed reward stays in ``infos[agent]["postprocessed_reward"]``.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.annotations import override

from moba.env.actions import able_to_act, noops_while_able, primaries_of
from moba.env.step_arrays import WIN_SIGNAL, StepArrays
from moba.env.step_arrays import step_arrays as inner_step_arrays
from moba.env.rewards import TEAM_SPIRIT, TIME_DECAY_BASE, TIME_DECAY_PERIOD_S, postprocess_rewards
from moba.game.teams import team_of_agent

SCALE_EPS = 1e-8
SCALE_WARMUP = 100  # returns seen before the running std is used (until then rewards pass unscaled)


def wrap(wrapper: MultiAgentEnv, env: MultiAgentEnv):
    """Makes `wrapper` a wrapper of `env`: ``wrapper.env`` is `env`, and it has the same agents and spaces."""
    wrapper.env = env
    wrapper.possible_agents = env.possible_agents
    wrapper.agents = env.agents
    wrapper.observation_spaces = env.observation_spaces
    wrapper.action_spaces = env.action_spaces


class ReturnScaler:
    """Running std of discounted returns (their count, mean and M2); the envs of a process share one
    (``PROCESS_SCALER``) and divide their rewards by its ``std``. The discounted returns themselves are per env."""

    def __init__(self):
        self.count, self.mean, self.m2 = 0, 0.0, 0.0

    def update(self, x: np.ndarray):
        """Merges a batch of values (Chan et al.'s parallel update: exact for any split; compiled, as it runs on every
        env step)."""
        x = np.ascontiguousarray(x, np.float64).ravel()
        if x.size == 0:
            return
        self.merge(x.size, *_moments(x))

    def merge(self, count: int, mean: float, m2: float):
        """Merges the statistics of another set of values (its count, mean and sum of squared deviations M2): the
        result is that of both sets' values together (Chan et al.), whatever the split."""
        count = int(count)
        if count <= 0:
            return
        total = self.count + count
        delta = float(mean) - self.mean
        self.mean += delta * count / total
        self.m2 += float(m2) + delta ** 2 * self.count * count / total
        self.count = total

    def state_dict(self) -> dict:
        return {"count": self.count, "mean": self.mean, "m2": self.m2}

    @classmethod
    def from_state_dict(cls, state: dict) -> "ReturnScaler":
        scaler = cls()
        scaler.merge(state["count"], state["mean"], state["m2"])
        return scaler

    @property
    def std(self) -> float:
        if self.count < SCALE_WARMUP:
            return 1.0
        return max(float(np.sqrt(self.m2 / (self.count - 1))), SCALE_EPS)


class RunReturnScaler(ReturnScaler):
    """One env's part of the run-wide scale (``normalize_scope`` "run"): it divides by the std the driver set
    (``set_std``; 1 until the first sync), which stays fixed between syncs, and accumulates the statistics of its
    returns since the last sync, which ``take_increment`` hands over (count, mean, M2) and clears."""

    def __init__(self):
        super().__init__()
        self.fixed_std = 1.0

    def set_std(self, std: float):
        if not np.isfinite(std) or std <= 0:
            raise ValueError(f"the run's return std must be a positive number, got {std}")
        self.fixed_std = float(std)

    def take_increment(self) -> tuple[int, float, float]:
        """The statistics accumulated since the last call, cleared."""
        out = (self.count, self.mean, self.m2)
        self.count, self.mean, self.m2 = 0, 0.0, 0.0
        return out

    @property
    def std(self) -> float:
        return self.fixed_std


@njit(cache=True)
def _moments(x):
    """The mean and the sum of squared deviations (M2) of the values `x`, two compiled passes (ReturnScaler.update
    runs on every env step)."""
    mean = 0.0
    for v in x:
        mean += v
    mean /= x.size
    m2 = 0.0
    for v in x:
        m2 += (v - mean) ** 2
    return mean, m2


PROCESS_SCALER = ReturnScaler()
NORMALIZE_SCOPES = ("run", "process")  # PostprocessedRewardEnv's normalize_scope (module docstring)


class PostprocessedRewardEnv(MultiAgentEnv):
    """Wraps MobaEnv (or RemoteMobaEnv): same spaces and agents, post-processed rewards."""

    def __init__(self, env, team_spirit: float = TEAM_SPIRIT, zero_sum: bool = True,
                 time_decay: bool = True, normalize_gamma: float | None = None, scaler: ReturnScaler | None = None,
                 normalize_scope: str = "process", noop_penalty: float = 0.0):
        """`normalize_gamma`: when set, rewards are divided by the running std of returns discounted by it (footnote
        c); `scaler` holds that std: by default the process-wide one (`normalize_scope` "process") or this env's
        RunReturnScaler ("run", its std set by ``set_return_std``); `noop_penalty`: what a hero loses for a no-op
        while it could act (module docstring)."""
        super().__init__()
        wrap(self, env)
        self.team_of = np.array([team_of_agent(a) for a in self.possible_agents])
        self.zero_sum = zero_sum
        self.time_decay_base = TIME_DECAY_BASE if time_decay else 1.0
        self.set_team_spirit(team_spirit)
        if normalize_gamma is not None and not 0.0 <= normalize_gamma < 1.0:
            raise ValueError(f"normalize_gamma must be in [0, 1), got {normalize_gamma}")
        self.normalize_gamma = normalize_gamma
        if normalize_scope not in NORMALIZE_SCOPES:
            raise ValueError(f"normalize_scope must be one of {list(NORMALIZE_SCOPES)}, got {normalize_scope!r}")
        self.normalize_scope = normalize_scope
        self.scaler = scaler or (RunReturnScaler() if normalize_scope == "run" else PROCESS_SCALER)
        self.returns = np.zeros(len(self.possible_agents))
        if isinstance(noop_penalty, bool) or not isinstance(noop_penalty, (int, float)) or not noop_penalty >= 0:
            raise ValueError(f"noop_penalty must be a number >= 0, got {noop_penalty!r}")
        self.noop_penalty = float(noop_penalty)
        self._able = np.zeros(len(self.possible_agents), bool)  # per hero: its latest action mask offered more
        # than the no-op (able_to_act)

    def set_team_spirit(self, tau: float):
        if not 0.0 <= float(tau) <= 1.0:
            raise ValueError(f"team_spirit must be in [0, 1], got {tau}")
        self.team_spirit = float(tau)

    # ---- the run-wide scale (normalize_scope "run"): set and read by callbacks/reward_scale.py -----------------------
    def set_return_std(self, std: float):
        """The std this env divides rewards by from now on (the run's; "run" scope only)."""
        self._run_scaler("set_return_std").set_std(std)

    def take_return_stats(self) -> tuple[int, float, float]:
        """(count, mean, M2) of this env's discounted returns since the last call ("run" scope only)."""
        return self._run_scaler("take_return_stats").take_increment()

    def _run_scaler(self, method: str) -> RunReturnScaler:
        if not isinstance(self.scaler, RunReturnScaler):
            raise ValueError(f"{method}: this env normalizes rewards by a {type(self.scaler).__name__} "
                             f"(normalize_scope {self.normalize_scope!r}), not by the run's std")
        return self.scaler

    @override(MultiAgentEnv)
    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = self.env.agents
        self.returns[:] = 0.0
        self._remember_masks([obs[a] for a in self.possible_agents])
        return obs, infos

    def _remember_masks(self, obs: list):
        if self.noop_penalty:
            self._able = able_to_act(obs)

    @override(MultiAgentEnv)
    def step(self, action_dict):
        obs, rewards, terms, truncs, infos = self.env.step(action_dict)
        step = StepArrays.from_dicts(self.possible_agents, obs, rewards, terms, truncs, infos)
        self._postprocess(step, primaries_of(action_dict, self.possible_agents))
        new_rewards = {}
        for i, a in enumerate(self.possible_agents):  # the env's infos kept as they are (a remote game may add keys)
            infos[a]["raw_reward"] = float(step.raw[i])
            infos[a]["postprocessed_reward"] = float(step.postprocessed[i])
            infos[a]["team_spirit"] = self.team_spirit
            new_rewards[a] = float(step.rewards[i])
        self.agents = self.env.agents
        return obs, new_rewards, terms, truncs, infos

    def step_arrays(self, acts) -> StepArrays:
        """``step`` on every hero's action as one (heroes, 5) int array (``MobaEnv.step_arrays``), returning the
        step as arrays with the post-processed rewards; an env without ``step_arrays`` (a remote game) is stepped
        through its dicts."""
        step = inner_step_arrays(self.env, acts)
        out = self._postprocess(step, np.asarray(acts)[:, 0])
        self.agents = self.env.agents
        return out

    def _postprocess(self, step: StepArrays, primary: np.ndarray) -> StepArrays:
        """The step with the post-processed rewards (the module docstring); `primary`: each hero's primary action
        (the no-op penalty's)."""
        raw = step.rewards
        win = step.signals[:, WIN_SIGNAL]
        out = postprocess_rewards(raw - win, win, self.team_of, self.team_spirit, step.game_time_s,
                                  zero_sum=self.zero_sum, time_decay_base=self.time_decay_base,
                                  time_decay_period_s=TIME_DECAY_PERIOD_S)
        if self.noop_penalty:
            out = out - self.noop_penalty * noops_while_able(primary, self._able)
            self._remember_masks(step.obs)
        scaled = out
        if self.normalize_gamma is not None:
            self.returns = self.returns * self.normalize_gamma + out
            self.scaler.update(self.returns)
            scaled = out / self.scaler.std
        step.raw, step.postprocessed, step.rewards, step.team_spirit = raw, out, scaled, self.team_spirit
        return step

    @override(MultiAgentEnv)
    def close(self):
        if hasattr(self.env, "close"):
            self.env.close()

    @property
    @override(MultiAgentEnv)
    def unwrapped(self):
        return self
