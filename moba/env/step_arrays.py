"""``StepArrays``: one env step of every hero as arrays, in ``possible_agents`` order: what ``step()`` turns into the
dicts of RLlib's ``MultiAgentEnv`` API, kept as arrays for a caller that steps many games (the batched env runner:
training/batched_env_runner.py). ``MobaEnv.step_arrays`` and ``PostprocessedRewardEnv.step_arrays`` make them
directly; ``from_dicts`` reads them back from any env's dicts (a remote game), and ``as_dicts`` gives ``step()``'s
five dicts, so that both APIs say the same.

Every hero's per-step info holds its weighted reward signals by name and the game time; the wrapper's adds the raw
and the post-processed reward and the team spirit. A step that ends the game adds ``last_infos`` to every hero's
(the winner, the objective, and ``cut_short`` and ``late_start`` where they apply: MobaEnv's contract).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from moba.env.actions import ACTION_KEYS
from moba.env.rewards import SIGNAL_INDEX, SIGNALS

WIN_SIGNAL = SIGNAL_INDEX["win"]


@dataclass(slots=True)
class StepArrays:
    """One env step of every hero (rows in ``possible_agents`` order). See the module docstring."""

    obs: list  # per hero, its observation (a dict of arrays)
    rewards: np.ndarray  # (heroes,) float64: the env's reward (the wrapper's: post-processed and normalized)
    signals: np.ndarray  # (heroes, len(SIGNALS)) float64: the weighted reward signals
    game_time_s: float
    terminated: bool
    truncated: bool  # by the time limit, and not terminated
    last_infos: dict | None = None  # at the game's end: the keys every hero's last info adds; else None
    raw: np.ndarray | None = None  # the wrapper's: the raw reward (heroes,)
    postprocessed: np.ndarray | None = None  # the wrapper's: the post-processed reward before normalization
    team_spirit: float | None = None  # the wrapper's

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    def infos(self, agents, only=None) -> dict:
        """Every hero's info dict, as ``step()`` returns it (`agents`: the rows' agent ids; `only`: just these
        agents')."""
        out = {}
        for i, a in enumerate(agents):
            if only is not None and a not in only:
                continue
            info = {"reward_signals": dict(zip(SIGNALS, self.signals[i].tolist())), "game_time_s": self.game_time_s}
            if self.last_infos is not None:
                info.update(self.last_infos)
            if self.raw is not None:
                info["raw_reward"] = float(self.raw[i])
                info["postprocessed_reward"] = float(self.postprocessed[i])
                info["team_spirit"] = self.team_spirit
            out[a] = info
        return out

    def as_dicts(self, agents) -> tuple[dict, dict, dict, dict, dict]:
        """``step()``'s (obs, rewards, terminateds, truncateds, infos), keyed by agent (``"__all__"`` included)."""
        obs = {a: self.obs[i] for i, a in enumerate(agents)}
        rewards = {a: float(r) for a, r in zip(agents, self.rewards.tolist())}
        terminateds = {a: self.terminated for a in agents}
        truncateds = {a: self.truncated for a in agents}
        terminateds["__all__"], truncateds["__all__"] = self.terminated, self.truncated
        return obs, rewards, terminateds, truncateds, self.infos(agents)

    @classmethod
    def from_dicts(cls, agents, obs: dict, rewards: dict, terminateds: dict, truncateds: dict,
                   infos: dict) -> "StepArrays":
        """The arrays of any env's ``step()`` dicts (signals read by name: a remote game may send them in another
        order; a missing one is 0)."""
        signals = np.zeros((len(agents), len(SIGNALS)))
        game_time, last = 0.0, None
        for i, a in enumerate(agents):
            info = infos.get(a, {})
            for name, v in info.get("reward_signals", {}).items():
                if name in SIGNAL_INDEX:
                    signals[i, SIGNAL_INDEX[name]] = v
            game_time = info.get("game_time_s", game_time)
            if "winner" in info and last is None:
                last = {k: v for k, v in info.items() if k not in ("reward_signals", "game_time_s")}
        terminated = bool(terminateds["__all__"])
        return cls(obs=[obs.get(a) for a in agents], rewards=np.array([rewards[a] for a in agents], np.float64),
                   signals=signals, game_time_s=float(game_time), terminated=terminated,
                   truncated=bool(truncateds["__all__"]) and not terminated, last_infos=last)


def step_arrays(env, acts) -> StepArrays:
    """Steps `env` (any MultiAgentEnv of this game's agents) on every hero's action as one (heroes, 5) int array:
    through its own ``step_arrays`` where it has one (MobaEnv, PostprocessedRewardEnv), else through ``step``'s
    dicts (a remote game)."""
    if hasattr(env, "step_arrays"):
        return env.step_arrays(acts)
    agents = env.possible_agents
    action_dict = {a: dict(zip(ACTION_KEYS, row)) for a, row in zip(agents, np.asarray(acts).tolist())}
    return StepArrays.from_dicts(agents, *env.step(action_dict))
