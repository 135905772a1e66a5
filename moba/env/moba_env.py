"""``MobaEnv``: the RLlib ``MultiAgentEnv`` over the engine, for modes "5v5" and "1v1". Its class docstring is the
environment's contract; ``docs/observations.md``, ``docs/actions.md`` and ``docs/rewards.md`` have the tables."""
from __future__ import annotations

import itertools
import math

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.annotations import override

from moba.env.actions import N_ACTION_KEYS, action_space, check_action_array, decode_team, validate_actions
from moba.env.config import EnvConfig
from moba.env.observation import ObservationEncoder, observation_space
from moba.env.randomization import sample_game
from moba.env.start_state import checked_start_state, late_start_side
from moba.env.step_arrays import StepArrays
from moba.env.rewards import RewardTracker, reward_weights
from moba.game.constants import TICKS_PER_SECOND
from moba.game.engine import Game
from moba.game.state import H_UNIT, NP
from moba.game.teams import TEAM_NAMES, TEAM_SIZE, agent_ids, team_name, winner_name

_instance_counter = itertools.count()
CUT_SHORT_INFO = "cut_short"  # a last info's key: the game ended at its first-game cut, not at the time limit
LATE_START_INFO = "late_start"  # a last info's key: the side the game started late around (the config's start_state)


def next_instance_id() -> int:
    """A process-wide counter that tells env instances of one process apart (mixed into their seeds)."""
    return next(_instance_counter)


def agent_spaces(agents: list[str], team_size: int, max_units: int, groups=()) -> tuple[dict, dict]:
    """Every agent's observation and action space (the same for all heroes); `groups`: optional observation feature
    groups (observation.OBSERVATION_GROUPS)."""
    obs_space, act_space = observation_space(team_size, max_units, groups), action_space(max_units)
    return {a: obs_space for a in agents}, {a: act_space for a in agents}


class MobaEnv(MultiAgentEnv):
    """A MOBA game of two teams, one agent per hero: 5v5 (Dota-like, Five) or 1v1 (Honor of Kings Arena-like,
    HoK), on the engine of ``moba/game``.

    ## Agents

    ``possible_agents`` are ``"radiant_0" .. "radiant_{n-1}"`` then ``"dire_0" .. "dire_{n-1}"`` (n = 5 or 1,
    ``moba/game/teams.py``); ``agents`` is always all of them: a dead hero stays an agent (its legal actions are
    no-op and buyback), so that every hero gets an observation and acts at every step until the game ends.

    ## Action space

    Per agent, ``Dict`` of five ``Discrete`` parameters (``moba/env/actions.py``, Five app. F, Table 5):
    ``primary`` (N_PRIMARY actions: no-op, move, attack, 4 abilities, 7 item actions, buyback, shrine), ``delay``
    (the tick inside the frameskip, 0..3), ``target_unit`` (a row of the observation's unit table, 0..max_units-1),
    ``offset_x`` and ``offset_y`` (0..8, i.e. -4..4 grid steps). The primary action's target type decides which
    parameters are read. A masked primary action or unit (``action_mask``, ``unit_masks``) is a no-op, never an
    error. ``step`` needs an action for every agent; a missing or unknown agent, a missing field or a value out of
    range raises ``ValueError`` naming the agent, the field and the allowed range, before anything changes.

    ## Observation space

    Per agent, ``Dict`` of float32/int32 ``Box`` es (``moba/env/observation.py``, modelled on Five app. E,
    Table 4): the global features, up to max_units units (the team's heroes first, then visible units nearest to
    them), every hero's features, ids and items, ``me`` (which teammate this is), each teammate's private inputs
    (minimap, previous action, lane assignment), and the action masks. Floats are not normalized (the model does
    that). Enemy heroes in the fog of war are reported where and as they were last seen.

    ## Rewards

    Per agent, the sum of the raw signals of Five Table 6 (``moba/env/rewards.py``: win, hero death, xp, gold,
    health, last hits, buildings, lane assignment, ...) weighted by ``reward_preset`` and ``reward_weights``.
    ``infos[agent]["reward_signals"]`` has the weighted signals by name, ``infos[agent]["game_time_s"]`` the game
    time. Zero sum, team spirit and time decay are not applied here: the training side does
    (``moba/env/reward_wrapper.PostprocessedRewardEnv``).

    ## Episode end

    Destroying the enemy ancient (the crystal in 1v1) ends the game as ``terminated`` for every agent; the time limit
    ends it as ``truncated`` (``"__all__"`` keys included). Every agent gets an observation at the last step, and
    ``infos[agent]["winner"]`` is ``"radiant"``, ``"dire"`` or ``"none"`` (time limit), and
    ``infos[agent]["objective"]`` what each side destroyed, ``{"radiant": {"buildings": n, "kills": n}, "dire": ...}``
    (towers, barracks and shrines; enemy heroes killed by the side's units: what decides a capped game under the
    "objective" rule, policies/league/ratings.py). A training env's first game may be cut at a random point of the
    time limit (``randomize.first_game_length``); when such a game ends by that cut, the last infos also hold
    ``infos[agent]["cut_short"] = True``: its outcome is not a game's result (the training side leaves it out of the
    win rates against opponents, the curriculum and the league). A game that started late (``start_state``) says
    around which side in its first and last infos: ``infos[agent]["late_start"] = "radiant"`` (training keeps its
    result apart).
    ``step`` after the end raises
    ``RuntimeError``: call ``reset``.

    ## Stepping many games

    ``step_arrays(acts)`` is ``step`` for a caller that steps many games (training's batched env runner): every
    hero's action as one (heroes, 5) int array (rows in ``possible_agents`` order, columns ``ACTION_KEYS``), and the
    step as arrays (``moba/env/step_arrays.StepArrays``: observations, rewards, weighted signals, game time, the end
    and its last infos). The same game and values as ``step``, without the dicts; a value out of range raises
    ``ValueError`` naming the row and the field.

    ## Arguments

    ``config``: a dict or RLlib ``EnvContext`` of ``EnvConfig`` keys (``moba/env/config.py``): ``mode`` ("5v5" or
    "1v1"), ``seed``, ``frameskip`` (4: an agent acts every 4th of 30 ticks a second), ``time_limit_s`` (0: the mode's
    default), ``max_units`` (0: 64 in 5v5, 32 in 1v1), ``action_offset`` (app. L), ``evaluation`` (true turns every
    domain randomization off), ``evaluation_jitter`` (true by default; in evaluation mode, seeded jitter of the heroes'
    spawn points and of the first creep wave, so that games between deterministic agents differ by seed), ``randomize``
    (which randomizations of app. O.2 are on), ``lineup``, ``reward_preset``, ``reward_weights``, ``ancient_hp_scale``
    (both ancients' health as a share of the game's, in (0, 1]: a training curriculum on the goal; 1 by default, and in
    every game that judges an agent) and ``start_state`` (a share of games that start late around one side,
    ``moba/env/start_state.py``; ``reset(options={"attacker": side})`` names the side, else it is drawn, and
    ``reset(options={"start_state": {...}})`` lays values over the config's start_state for that game: a stage of a
    reverse curriculum, policies/league/start_stages.py). ``reset(options={"time_limit_s": s})`` makes that game s
    seconds long (> 0) in place of the config's ``time_limit_s``: longer games against some opponents, the runner's
    ``opponents.time_limit_s``; a late start's own ``time_limit_s`` still comes first. A bad key or
    value raises ``ValueError`` naming it and the allowed values. A seeded training env mixes RLlib's worker index and a
    per-process instance number into the seed, so that parallel envs play different games; an evaluation env's game is
    decided by the seed alone. ``reset(seed=s)`` replays the same game for the same seed.
    """

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
                                                                   self.cfg.max_units, self.cfg.observation_groups)
        self.weights = reward_weights(self.cfg.reward_preset, self.cfg.reward_weights)
        self._rng = np.random.default_rng(self._seed_sequence(self.cfg.seed))
        self.game: Game | None = None
        self._done = True
        self._cut_short = False
        self.games_started = 0

    def set_seed_stream(self, worker_index: int, instance_id: int):
        """Seeds the game stream as the env `instance_id` of env runner `worker_index` would be seeded, so that an
        env built elsewhere (a game server) replays the games of a local one."""
        self.worker_index, self.instance_id = int(worker_index), int(instance_id)
        self._rng = np.random.default_rng(self._seed_sequence(self.cfg.seed))

    def _seed_sequence(self, seed):
        # seed 42 on every runner and sub-env would play identical games: mix in the worker and the instance. An
        # evaluation game is decided by its seed alone, so that it replays in any process
        if seed is None:
            return None
        return [int(seed)] if self.cfg.evaluation else [int(seed), self.worker_index, self.instance_id]

    # ---- gymnasium API -----------------------------------------------------------------------------------------------
    @override(MultiAgentEnv)
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(self._seed_sequence(seed))
            self.games_started = 0  # a seeded reset replays the same game, first-game length included
        attacker, start, time_limit_s = self._reset_options(options or {})
        setup, self.lanes, self.lane_until = sample_game(self.cfg, self._rng, first=self.games_started == 0,
                                                         attacker=attacker, start=start, time_limit_s=time_limit_s)
        self.games_started += 1
        self.late_start = late_start_side(setup)
        # the game's time limit: the config's (or the reset options'), or a late start's own; the first game's random
        # length is the one change sample_game makes to it
        limit = time_limit_s or self.cfg.time_limit_s
        if self.late_start is not None:
            limit = start["time_limit_s"] or limit
        self._cut_short = setup.time_limit_s != float(limit)
        self.game = Game(setup)
        # a new action (model surgery, app. B) is legal in a share of games (drawn only when there is one, so that the
        # game stream of a config without new actions stays as it was)
        disabled = tuple(a for a in self.cfg.new_action_ids() if self._rng.random() >= self.cfg.new_action_share)
        self.encoder = ObservationEncoder(self.game, self.cfg.max_units, self.cfg.observation_groups,
                                          self.cfg.constant_columns(), disabled, self.cfg.consumable_filters)
        self.tracker = RewardTracker(self.game, self.lanes, self.lane_until)
        self.prev_actions = np.zeros((self.n_heroes, N_ACTION_KEYS), np.int64)
        self._queued = None  # action offset (app. L): orders decided at T, applied at T+1
        self._done = False
        self.agents = list(self.possible_agents)
        self._obs = self.encoder.encode(self.prev_actions, self.lanes, self.lane_until)
        infos = {a: {"hero": self.game.hero_name(i), "lanes": self.lanes[i].tolist()}
                 for i, a in enumerate(self.agents)}
        if self.late_start is not None:
            for info in infos.values():
                info[LATE_START_INFO] = self.late_start
        return {a: self._obs[i] for i, a in enumerate(self.agents)}, infos

    def _reset_options(self, options: dict) -> tuple:
        """The attacker (a side's name or None), the checked start state and the game's time limit (seconds, or None:
        the config's) of reset's `options`: the config's start_state with the values of ``options["start_state"]``
        laid over it (a start stage); a bad option raises ValueError naming it. The check costs ~0.2 ms, once a
        game."""
        allowed = ["attacker", "start_state", "time_limit_s"]
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ValueError(f"reset options {unknown}: unknown; allowed: {allowed}")
        attacker = options.get("attacker")
        if attacker is not None and attacker not in TEAM_NAMES:
            raise ValueError(f"reset options 'attacker': must be one of {list(TEAM_NAMES)}, got {attacker!r}")
        limit = options.get("time_limit_s")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))
                                  or not math.isfinite(limit) or limit <= 0):
            raise ValueError(f"reset options 'time_limit_s': must be a number of seconds > 0 (None: the config's "
                             f"time_limit_s), got {limit!r}")
        limit = None if limit is None else float(limit)
        over = options.get("start_state")
        if over is None:
            return attacker, self.cfg.start_state, limit
        def bad(key, message):
            raise ValueError(f"reset options '{key}': {message}")
        if not isinstance(over, dict):
            bad("start_state", f"must be a mapping of start_state keys to values, got {over!r}")
        return attacker, checked_start_state({**self.cfg.start_state, **over}, self.cfg.mode, bad), limit

    @override(MultiAgentEnv)
    def step(self, action_dict):
        if self._done:
            raise RuntimeError("MobaEnv.step called on a finished game: call reset() first")
        acts = validate_actions(action_dict, self._index, self.cfg.max_units)  # raises before anything changes
        return self._step(acts).as_dicts(self.possible_agents)

    def step_arrays(self, acts) -> StepArrays:
        """``step`` on every hero's action as one (heroes, 5) int array (rows in ``possible_agents`` order, columns
        ``ACTION_KEYS``), returning the step as arrays (``moba/env/step_arrays.py``): the same game and the same
        values as ``step``, without its dicts. A value out of range raises ValueError naming the row and the field,
        before anything changes."""
        if self._done:
            raise RuntimeError("MobaEnv.step_arrays called on a finished game: call reset() first")
        return self._step(check_action_array(acts, self.n_heroes, self.cfg.max_units))

    def _step(self, acts: np.ndarray) -> StepArrays:
        orders = self._decode(acts)
        self.prev_actions[:] = acts
        if self.cfg.action_offset:
            orders, self._queued = self._queued, orders
        self.game.step(orders)
        signals = self.tracker.step(self.game.frameskip / TICKS_PER_SECOND)
        weighted = signals * self.weights
        self._obs = self.encoder.encode(self.prev_actions, self.lanes, self.lane_until)
        terminated = self.game.terminated
        truncated = self.game.truncated and not terminated
        self._done = terminated or truncated
        last = None
        if self._done:
            last = {"winner": winner_name(self.game.winner), "objective": self.objective()}
            if self._cut_short and not terminated:
                last[CUT_SHORT_INFO] = True
            if self.late_start is not None:
                last[LATE_START_INFO] = self.late_start
        return StepArrays(obs=self._obs, rewards=weighted.sum(axis=1), signals=weighted, game_time_s=self.game.time,
                          terminated=terminated, truncated=truncated, last_infos=last)

    def objective(self) -> dict:
        """What each side destroyed so far: {side: {"buildings": towers + barracks + shrines, "kills": hero kills}}
        (the engine's team statistics, read only)."""
        return {team_name(t): {"buildings": st.towers + st.barracks + st.shrines, "kills": st.kills}
                for t, st in enumerate(self.game.stats)}

    # ---- helpers -----------------------------------------------------------------------------------------------------
    def _decode(self, acts: np.ndarray) -> np.ndarray:
        """The engine orders of every hero's validated action, read against the observation it acted on (compiled:
        moba.env.actions.decode_team, one call a team)."""
        s, n, enc = self.game.s, self.team_size, self.encoder
        orders = np.zeros((self.n_heroes, NP), np.float64)
        for team in (0, 1):
            action_mask, unit_masks = enc.masks[team]
            decode_team(acts, team * n, s.uf, s.hi[:, H_UNIT], enc.tt, enc.uk, action_mask, unit_masks,
                        enc.slot_units[team], self.game.frameskip, orders)
        return orders

    def set_new_action_share(self, share: float):
        """The share of the next games in which the env config's new_actions are legal (the new_action_share
        schedule, callbacks/schedules.py)."""
        if not 0.0 <= float(share) <= 1.0:
            raise ValueError(f"new_action_share must be in [0, 1], got {share!r}")
        self.cfg.new_action_share = float(share)

    def set_ancient_hp_scale(self, scale: float):
        """Both ancients' health as a share of the game's, from the next game on (the ancient_hp_scale schedule,
        callbacks/schedules.py)."""
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0.0 < float(scale) <= 1.0:
            raise ValueError(f"ancient_hp_scale must be a number in (0, 1], got {scale!r}")
        self.cfg.ancient_hp_scale = float(scale)

    def observations(self) -> dict:
        """The latest observation of every agent (for scripted agents and tools)."""
        return {a: self._obs[i] for i, a in enumerate(self.possible_agents)}
