"""``MobaEnv``: the RLlib ``MultiAgentEnv`` over the engine, for modes "5v5" and "1v1".

Agent ids are "radiant_0".."radiant_{n-1}" and "dire_0".."dire_{n-1}". Every hero, alive or dead, gets an observation
every step until the game ends (a dead hero's legal actions are no-op and buyback), so the heroes' steps stay
aligned (see shared/notes/rllib.md, section 1). An ancient (or crystal) destroyed ends the game as `terminated`; the
time limit ends it as `truncated`. Rewards are the weighted raw signals of ``rewards.py``; zero sum, team spirit and
time decay are left to the training side (``rewards.postprocess_rewards``).
"""
from __future__ import annotations

import itertools

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from app.env.actions import action_space, decode_action, validate_action
from app.env.config import EnvConfig
from app.env.observation import ObservationEncoder, observation_space
from app.env.randomization import sample_game
from app.env.rewards import SIGNAL_INDEX, SIGNALS, RewardTracker, reward_weights
from app.game.constants import TEAM_NAMES, TICKS_PER_SECOND
from app.game.engine import TEAM_SIZE, Game
from app.game.state import F_X, F_Y, H_UNIT, NP, P_ACTIVE, P_TICK

_instance_counter = itertools.count()


def next_instance_id() -> int:
    """A process-wide counter that tells env instances of one process apart (mixed into their seeds)."""
    return next(_instance_counter)


def agent_ids(mode: str) -> list[str]:
    n = TEAM_SIZE[mode]
    return [f"{team}_{i}" for team in TEAM_NAMES for i in range(n)]


def agent_spaces(agents: list[str], team_size: int, max_units: int) -> tuple[dict, dict]:
    """Every agent's observation and action space (the same for all heroes)."""
    obs_space, act_space = observation_space(team_size, max_units), action_space(max_units)
    return {a: obs_space for a in agents}, {a: act_space for a in agents}


class MobaEnv(MultiAgentEnv):
    metadata = {"render_modes": []}

    def __init__(self, config=None):
        super().__init__()
        config = {} if config is None else config  # an empty EnvContext is falsy: never `config or {}`
        self.cfg = EnvConfig.from_dict(config)
        self.worker_index = int(getattr(config, "worker_index", 0) or 0)
        self.instance_id = next_instance_id()
        self.team_size = TEAM_SIZE[self.cfg.mode]
        self.n_heroes = 2 * self.team_size
        self.possible_agents = agent_ids(self.cfg.mode)
        self.agents = list(self.possible_agents)
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces, self.action_spaces = agent_spaces(self.possible_agents, self.team_size,
                                                                   self.cfg.max_units)
        self.weights = reward_weights(self.cfg.reward_preset, self.cfg.reward_weights)
        self._win = SIGNAL_INDEX["win"]
        self._rng = np.random.default_rng(self._seed_sequence(self.cfg.seed))
        self.game: Game | None = None
        self._done = True
        self.games_started = 0

    def set_seed_stream(self, worker_index: int, instance_id: int):
        """Seeds the game stream as the env `instance_id` of env runner `worker_index` would be seeded, so that an
        env built elsewhere (a game server) replays the games of a local one."""
        self.worker_index, self.instance_id = int(worker_index), int(instance_id)
        self._rng = np.random.default_rng(self._seed_sequence(self.cfg.seed))

    def _seed_sequence(self, seed):
        # seed 42 on every runner and sub-env would play identical games: mix in the worker and the instance
        return None if seed is None else [int(seed), self.worker_index, self.instance_id]

    # ---- gymnasium API -------------------------------------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(self._seed_sequence(seed))
            self.games_started = 0  # a seeded reset replays the same game, first-game length included
        setup, self.lanes, self.lane_until = sample_game(self.cfg, self._rng, first=self.games_started == 0)
        self.games_started += 1
        self.game = Game(setup)
        self.encoder = ObservationEncoder(self.game, self.cfg.max_units)
        self.tracker = RewardTracker(self.game, self.lanes, self.lane_until)
        self.prev_actions = np.zeros((self.n_heroes, 5), np.int64)
        self._queued = None  # action offset (app. L): orders decided at T, applied at T+1
        self._done = False
        self.agents = list(self.possible_agents)
        self._obs = self.encoder.encode(self.prev_actions, self.lanes, self.lane_until)
        infos = {a: {"hero": self.game.hero_name(i), "lanes": self.lanes[i].tolist()}
                 for i, a in enumerate(self.agents)}
        return {a: self._obs[i] for i, a in enumerate(self.agents)}, infos

    def step(self, action_dict):
        if self._done:
            raise RuntimeError("MobaEnv.step called on a finished game: call reset() first")
        acts = self._validate(action_dict)  # raises before anything changes
        orders = self._decode(acts)
        self.prev_actions[:] = acts
        if self.cfg.action_offset:
            orders, self._queued = self._queued, orders
        events = self.game.step(orders)
        signals = self.tracker.step(self.game.frameskip / TICKS_PER_SECOND)
        weighted = signals * self.weights
        rewards_arr = weighted.sum(axis=1)
        self._obs = self.encoder.encode(self.prev_actions, self.lanes, self.lane_until)
        terminated = self.game.terminated
        truncated = self.game.truncated
        self._done = terminated or truncated
        obs, rewards, infos = {}, {}, {}
        for i, a in enumerate(self.possible_agents):
            obs[a] = self._obs[i]
            rewards[a] = float(rewards_arr[i])
            infos[a] = {"reward_signals": dict(zip(SIGNALS, weighted[i].tolist())), "game_time_s": self.game.time}
            if self._done:
                infos[a]["winner"] = {0: "radiant", 1: "dire"}.get(self.game.winner, "none")
        terminateds = {a: terminated for a in self.possible_agents}
        truncateds = {a: truncated and not terminated for a in self.possible_agents}
        terminateds["__all__"] = terminated
        truncateds["__all__"] = truncated and not terminated
        self.last_events = events
        return obs, rewards, terminateds, truncateds, infos

    # ---- helpers -------------------------------------------------------------------------------------------------------
    def _validate(self, action_dict) -> np.ndarray:
        if not isinstance(action_dict, dict):
            raise ValueError(f"actions: expected a dict keyed by agent id, got {type(action_dict).__name__}")
        unknown = [a for a in action_dict if a not in self._index]
        if unknown:
            raise ValueError(f"actions: unknown agent id(s) {unknown}; allowed: {self.possible_agents}")
        missing = [a for a in self.possible_agents if a not in action_dict]
        if missing:
            raise ValueError(f"actions: missing agent id(s) {missing}: every hero acts every step")
        acts = np.zeros((self.n_heroes, 5), np.int64)
        for a, act in action_dict.items():
            acts[self._index[a]] = validate_action(a, act, self.cfg.max_units)
        return acts

    def _decode(self, acts: np.ndarray) -> np.ndarray:
        s = self.game.s
        orders = np.zeros((self.n_heroes, NP), np.float64)
        for h in range(self.n_heroes):
            team = h // self.team_size
            o = self._obs[h]
            u = s.hi[h, H_UNIT]
            decode_action(acts[h], h, (s.uf[u, F_X], s.uf[u, F_Y]), self.encoder.tt[h], self.encoder.uk[h],
                          o["action_mask"], o["unit_masks"], self.encoder.slot_units[team], orders[h])
        orders[:, P_TICK] = np.minimum(orders[:, P_TICK], self.game.frameskip - 1)
        orders[orders[:, P_ACTIVE] == 0, P_TICK] = 0
        return orders

    def observations(self) -> dict:
        """The latest observation of every agent (for scripted agents and tools)."""
        return {a: self._obs[i] for i, a in enumerate(self.possible_agents)}
