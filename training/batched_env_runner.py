"""``BatchedEnvRunner``: the env runner of training. It steps all of a runner's games as one batch.

RLlib's ``MultiAgentEnvRunner`` keeps one ``MultiAgentEpisode`` per game and runs its connector pipelines per agent
and per step. On this project's games only ~45% of its time is the games and the network (docs/rllib_notes.md and the
throughput notes); the rest is bookkeeping. This runner keeps the same envs (built, seeded and reset by RLlib exactly
as the classic runner does) and the same modules, and per step:

- runs one forward pass of "main" for every learning hero of every game, and one per league slot for the heroes a
  frozen past version plays (their steps never become training data), with the LSTM states carried per hero;
- samples the actions from the module's distribution (or takes the most likely ones without exploration);
- steps each game (the reward post-processing wrapper included) through its array step (``step_arrays``,
  moba/env/step_arrays.py: the game's actions as one int array, the step back as arrays; an env without one, a
  remote game, through its dicts) and keeps, per hero of "main", the step's data in plain lists, the value of the
  step's observation among them (``Columns.VF_PREDS``).

A chunk that does not end its game in a terminal state gets the value of the observation after its last step (a
cut chunk, or a game stopped by the time limit), from one forward pass over all such chunks at the end of
``sample()``: GAE then takes every value it needs from the runner (policies/learning/advantages.py) and the learner
does not
run the value network over the batch a second time.

At the end of ``sample()`` it builds one ``SingleAgentEpisode`` per hero of "main" and game chunk (module "main"), in
bulk. Chunks continue across ``sample()`` calls with ``t_started`` and a lookback of ``episode_lookback_horizon`` steps,
as RLlib's ``MultiAgentEpisode.cut`` makes them, so that the learner's connectors see what they see from the classic
runner: the same learner batch for the same games, weights and actions (tests/test_batched_env_runner.py). Once
the runner's ``on_sample_end`` callbacks have seen them, each chunk's infos are emptied but the last
(``keep_last_info``: the learner reads the winner there), which halves the time spent pickling the chunks to the
driver. A finished
game is reset on the next step, as RLlib's vector env does. Episode ids are unique per chunk: a chunk's id (and its
``multi_agent_episode_id``) is its hero's (its game's) id and the chunk's number in the game (``chunk_id``,
``chunk_origin`` reads them back). RLlib's cut keeps one id for every chunk, and its learner connectors then rename the
chunks of a ``MultiAgentEpisode`` (``AddOneTsToEpisodesAndTruncate``), but not those of single-agent episodes, whose
batch key is (``multi_agent_episode_id``, agent, module): two chunks of one hero in one update (PPO samples a runner
again until ``train_batch_size`` env steps are in, e.g. with ``rollout_fragment_length`` a divisor of it) would share
one row of sequences, their LSTM states, sequence lengths and GAE inputs out of line (tests/test_five_learner.py).

The callbacks' per-game duties run here instead of in RLlib's episode hooks: the opponent of each game and its
result (callbacks/opponents.game_started / game_ended: self-play, a past version of the league in a slot module, or
a fixed agent such as the scripted bot, which plays its side here and whose steps never become training data), the
game metrics (callbacks/metrics.GameTally) and RLlib's own episode and step counts. Schedules reach the games
through ``env.envs`` as with the classic runner. With an agent as the kickstart teacher (``init.teacher:
scripted_3``, policies/learning/kickstart.py) each game also runs that agent in shadow on "main"'s heroes from the
game's start, and each step of "main" carries the agent's action (``TEACHER_ACTION``) while the kickstart loss is
on. With Jump-Start RL (``opponents.jump_start``, policies/league/jump_start.py) a game against its opponent starts
with the guide agent playing "main"'s heroes up to the matchup's hand-over time: "main" runs its forward pass on every
step (its LSTM state follows the game), but the guide's actions are played, and the guided steps are dropped from
the data (a chunk cut at the hand-over, kept only as the next chunk's lookback), so that only "main"'s own steps
reach the learner. Guided steps do not count toward the sample's env steps either: a batch holds its
``train_batch_size`` of "main"'s own steps, as without a guide (sampling it takes longer). With start stages
(``opponents.start_stages``) a game against their opponent is reset with the current stage's start-state values
(``reset_options``). A fixed agent or
guide that is a checkpoint (``model:PATH``, a ``ModuleAgent`` per game) plays all of the runner's games in one forward
pass per step (``ModuleAgent.act_together``), not one pass per game. Only ``sample(num_timesteps=...)`` with
``batch_mode="truncate_episodes"`` is supported (what training uses); evaluation games are played outside RLlib's env
runners.
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict

import numpy as np
import torch
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.core.columns import Columns
from ray.rllib.env.env_runner import NUM_ENV_STEP_FAILURES_LIFETIME
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.annotations import override
from ray.rllib.utils.metrics import (NUM_AGENT_STEPS_SAMPLED, NUM_AGENT_STEPS_SAMPLED_LIFETIME, NUM_ENV_STEPS_SAMPLED,
                                     NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_EPISODES, NUM_EPISODES_LIFETIME,
                                     NUM_MODULE_STEPS_SAMPLED, NUM_MODULE_STEPS_SAMPLED_LIFETIME, SAMPLE_TIMER,
                                     TIME_BETWEEN_SAMPLING, WEIGHTS_SEQ_NO)

from moba.env.actions import ACTION_KEYS, N_ACTION_KEYS, action_row, action_sizes
from moba.env.step_arrays import StepArrays, step_arrays
from moba.game.constants import TICKS_PER_SECOND
from moba.game.teams import NO_WINNER, enemy_side, side_of_agent
from policies.agents.module_agent import ModuleAgent
from policies.learning.advantages import BOOTSTRAP_VALUE
from policies.league.jump_start import handover_steps
from policies.learning.kickstart import NOOP_LABEL, TEACHER_ACTION, agent_teacher, label
from policies.model.five_module import WIN_PROB
from policies.model.module_ids import MAIN
from training.game_metrics import CUT_SHORT_KEY, LATE_START_KEY, OBJECTIVE_KEY, RAW_RETURN_KEY, WINNER_KEY, GameTally
from training.opponents import RunnerMatchups, game_ended, game_started, late_game_started, unstaged
from training.settings import run_settings

logger = logging.getLogger(__name__)
FIXED_AGENT = "fixed agent"  # _Game.module_of for the heroes a fixed agent plays (no module: never training data)
CHUNK_SEP = "-"  # between a game's (a hero's) id and the chunk's number in an episode id


def chunk_id(base: str, chunk: int) -> str:
    """The episode id of chunk number `chunk` of a game or hero whose id is `base` (unique per chunk)."""
    return f"{base}{CHUNK_SEP}{chunk}"


def chunk_origin(episode) -> tuple[str, int]:
    """A chunk's hero id (the same in every chunk of one hero in one game) and the chunk's number in that game, read
    from a ``SingleAgentEpisode`` of this runner (before the learner's connectors rename it)."""
    base, _, chunk = episode.id_.rpartition(CHUNK_SEP)
    return base, int(chunk)


def stack(items: list):
    """A list of items (arrays, scalars, or flat dicts of them) as one batch, exactly as RLlib's
    ``space_utils.batch`` stacks an episode's lists (dict keys sorted as dm-tree sorts them; scalars through
    ``np.array``, which keeps numpy scalars' dtypes and makes Python floats float64), without its tree traversal."""
    first = items[0]
    if isinstance(first, dict):
        return {k: stack([item[k] for item in items]) for k in sorted(first)}
    return np.array(items)  # same-shaped arrays of one dtype are stacked (the dtype kept), scalars as batch() does


def action_columns(rows: list) -> dict:
    """A chunk's action rows (each the 5 values of ACTION_KEYS) as the dict of columns RLlib's ``batch`` makes of
    the action dicts: keys sorted, each column int64."""
    table = np.array(rows, np.int64).reshape(len(rows), N_ACTION_KEYS)
    return {k: np.ascontiguousarray(table[:, ACTION_KEYS.index(k)]) for k in sorted(ACTION_KEYS)}


def keep_last_info(episode: SingleAgentEpisode):
    """Empties every info of `episode` but its last, once the runner's callbacks have seen them all: the learner
    reads only the last (policies/learning/win_label.py: the winner), and the per-step infos (each hero's reward
    signals by name) were the larger part of the time spent pickling the episodes to the driver."""
    infos = episode.infos
    n = len(infos.data)
    if n > 1:
        episode.infos = InfiniteLookbackBuffer([{} for _ in range(n - 1)] + [infos.data[-1]], infos.lookback)


def reset_options(matchup: dict | None) -> dict | None:
    """The env's reset options for a game of `matchup`: the side "main" plays is the attacker of a late start (the
    env config's start_state), the start stage's values are laid over that start state (opponents.start_stages), and
    the game lasts the matchup's time limit where it has one (opponents.time_limit_s); None where "main" plays both
    sides."""
    if matchup is None or "side" not in matchup:
        return None
    options = {"attacker": enemy_side(matchup["side"])}
    for key in ("start_state", "time_limit_s"):
        if key in matchup:
            options[key] = matchup[key]
    return options


class _Game:
    """One env of the runner and the game it plays: the latest observations, who plays each hero, the LSTM states,
    and the data of "main"'s heroes since the chunk began."""

    def __init__(self, index: int, env):
        self.index = index
        self.env = env  # the vector env's sub-env (RLlib's OrderEnforcing wrapper around the training env)
        self.agents = list(env.unwrapped.possible_agents)
        self.row = {a: i for i, a in enumerate(self.agents)}  # agent -> its row of the step's action array
        self.sides = [side_of_agent(a) for a in self.agents]
        self.max_units = env.unwrapped.action_spaces[self.agents[0]]["target_unit"].n
        self.action_sizes = action_sizes(self.max_units)
        self.needs_reset = False
        self.sampled = 0  # env steps of the game not yet counted in the sample's step counts

    def start(self, obs: dict, infos: dict, matchup: dict | None, initial_state: dict, fixed_agent=None,
              teacher=None, guide=None, guide_steps: int = 0):
        """A new game: its first observations, its matchup (None: "main" plays every hero; a league matchup names the
        slot module of the other side; a fixed-agent matchup comes with `fixed_agent`, which plays that side), the
        kickstart's agent teacher (None: none), which labels "main"'s heroes in shadow, and Jump-Start RL's guide
        (None: none), which plays "main"'s heroes for the game's first `guide_steps` steps."""
        self.obs, self.needs_reset = obs, False
        # the game's and its heroes' ids; each chunk's episode ids add the chunk's number (chunk_id): unique per chunk
        self.game_id = uuid.uuid4().hex
        self.chunk = 0  # the current chunk's number in this game
        opponent = None if matchup is None else (FIXED_AGENT if fixed_agent is not None else matchup["module"])
        self.module_of = {a: opponent if opponent is not None and side_of_agent(a) == matchup["side"] else MAIN
                          for a in self.agents}
        self.matchup = matchup
        self.main_agents = [a for a in self.agents if self.module_of[a] == MAIN]
        self.fixed_agents = [a for a in self.agents if self.module_of[a] == FIXED_AGENT]
        self.fixed = fixed_agent
        if fixed_agent is not None:
            fixed_agent.reset(self.fixed_agents)
        self.hero_ids = {a: uuid.uuid4().hex for a in self.main_agents}
        self.teacher = teacher
        if teacher is not None:
            teacher.reset(self.main_agents)
        self.guide, self.guide_steps = guide, guide_steps if guide is not None else 0
        if guide is not None:
            guide.reset(self.main_agents)
        self.state = {a: {k: np.array(v) for k, v in initial_state[self.module_of[a]].items()}
                      for a in self.agents if self.module_of[a] != FIXED_AGENT}
        self.t = 0  # env steps of this game
        self.t0 = 0  # the step the current chunk began at
        self.record = {}  # GameTally's record of the game
        self.returns = np.zeros(len(self.agents))  # post-processed return per agent (rows of self.agents)
        self.started = time.time()
        # per hero of "main": the chunk's data, with the lookback in front (lists: appended per step)
        self.lookback = 0
        self.buf = {a: {"obs": [obs[a]], "infos": [infos.get(a, {})], "actions": [], "rewards": [],
                        "emo": defaultdict(list)} for a in self.main_agents}

    @property
    def guided(self) -> bool:
        """Whether the next step is the guide's (Jump-Start RL)."""
        return self.t < self.guide_steps

    @property
    def chunk_guided(self) -> bool:
        """Whether the current chunk's steps are the guide's (they never become training data)."""
        return self.t0 < self.guide_steps


class _Boot:
    """A hero's observation and LSTM state after a chunk's last step, shaped as _forward reads a game."""

    def __init__(self, agent: str, obs: dict, state: dict):
        self.agent, self.obs, self.state = agent, {agent: obs}, {agent: state}


class BatchedEnvRunner(MultiAgentEnvRunner):
    """A ``MultiAgentEnvRunner`` that samples every game of the runner as one batch (see the module docstring)."""

    @override(MultiAgentEnvRunner)
    def __init__(self, config, **kwargs):
        # the opponents of this runner's games (league slots, fixed agents, the curriculum level), which the driver's
        # callbacks update; made first, as the callbacks may ask for it from the first episode on
        self.matchups = RunnerMatchups.for_runner(config, kwargs.get("worker_index"))
        super().__init__(config=config, **kwargs)
        self._games: list[_Game] = []
        self._pending_bootstrap = []  # [(episode, _Boot)]: chunks of this sample that need a bootstrap value
        self._tally = GameTally()
        self._ship_dist_inputs = bool(self.config.use_kl_loss)  # only a KL loss reads them in the learner
        # the kickstart's agent teacher (init.teacher: an agent name), and whether its loss is on (the schedule:
        # set_teacher_labels); while it is off the games skip the teacher and label every step with a no-op
        settings = run_settings(self.config)
        self._teacher_name = agent_teacher(settings.init.teacher)
        self._teacher_labels = self._teacher_name is not None
        self._frameskip = settings.frameskip  # game ticks per step (Jump-Start RL's hand-over step)
        # ppo.staleness 1: the next batch is sampled in a thread while the learner trains (see sample())
        self._sample_ahead = settings.ppo.staleness > 0
        self._ahead_args = None  # the arguments of the batch to sample ahead once the current call returns
        self._ahead = None  # (thread, result holder, arguments) of the batch being sampled ahead
        self._ahead_result = None  # (result holder, arguments) of the last batch sampled ahead, until sample() takes it

    # ---- sampling ahead (ppo.staleness: 1) ----------------------------------------------------------------------
    @override(MultiAgentEnvRunner)
    def apply(self, func, *args, **kwargs):
        """Every call from the driver (RLlib sends them all through apply) first waits for the batch being sampled
        ahead, so that nothing touches the games, the modules or the metrics while the thread does; a sample() call
        asks for the next batch to be sampled ahead once it has returned."""
        self._finish_ahead()
        self._ahead_args = None
        try:
            return super().apply(func, *args, **kwargs)
        finally:
            if self._ahead_args is not None:
                args_ahead, self._ahead_args = self._ahead_args, None
                holder = {}
                # OpenMP's thread count is per thread: a new thread would start with one per core
                thread = threading.Thread(target=self._run_ahead, args=(args_ahead, holder, torch.get_num_threads()),
                                          daemon=True, name="sample-ahead")
                self._ahead = (thread, holder, args_ahead)
                thread.start()

    def _run_ahead(self, args: dict, holder: dict, torch_threads: int):
        torch.set_num_threads(torch_threads)
        try:
            holder["episodes"] = self._sample_now(**args)
        except BaseException as e:  # raised in the driver's next call
            holder["error"] = e

    def _finish_ahead(self) -> tuple | None:
        """Waits for the batch being sampled ahead; returns (holder, its arguments), or None if none is."""
        if self._ahead is None:
            return None
        thread, holder, args = self._ahead
        thread.join()
        self._ahead = None
        self._ahead_result = (holder, args)
        if "error" in holder:
            self._ahead_result = None
            raise holder["error"]
        return self._ahead_result

    @override(MultiAgentEnvRunner)
    def stop(self):
        if self._ahead is not None:
            self._ahead[0].join()
            self._ahead = None
        super().stop()

    # ---- RLlib's sample() ---------------------------------------------------------------------------------------
    @override(MultiAgentEnvRunner)
    def make_module(self):
        super().make_module()
        if self.module is not None:  # it only infers here: no per-forward switch in and out of training mode
            self.module.foreach_module(lambda mid, module: module.eval())

    @override(MultiAgentEnvRunner)
    def sample(self, *, num_timesteps: int = None, num_episodes: int = None, explore: bool = None,
               random_actions: bool = False, force_reset: bool = False) -> list:
        """RLlib's sample(). With ppo.staleness 1 it returns the batch sampled ahead while the learner trained on the
        previous one (with the weights of one update before) and starts the next; the first call samples at once."""
        args = dict(num_timesteps=num_timesteps, num_episodes=num_episodes, explore=explore,
                    random_actions=random_actions, force_reset=force_reset)
        if not self._sample_ahead:
            return self._sample_now(**args)
        self._finish_ahead()  # called directly (not through apply): a batch may still be on its way
        ready, self._ahead_result = self._ahead_result, None
        episodes = ready[0]["episodes"] if ready is not None and ready[1] == args and not force_reset else None
        if episodes is None:
            episodes = self._sample_now(**args)
        self._ahead_args = args
        return episodes

    def _sample_now(self, *, num_timesteps: int = None, num_episodes: int = None, explore: bool = None,
                    random_actions: bool = False, force_reset: bool = False) -> list:
        if self.env is None:
            raise ValueError(f"{self} doesn't have an env! Can't call `sample()` on it.")
        if num_episodes is not None or random_actions or self.config.batch_mode != "truncate_episodes":
            raise ValueError("BatchedEnvRunner samples timesteps only (batch_mode 'truncate_episodes', no random "
                             "actions); use resources.env_runner: classic for anything else")
        if self._time_after_sampling is not None:
            self.metrics.log_value(key=TIME_BETWEEN_SAMPLING, value=time.perf_counter() - self._time_after_sampling)
        self.metrics.log_value(key=WEIGHTS_SEQ_NO, value=self._weights_seq_no, window=1)
        with self.metrics.log_time(SAMPLE_TIMER):
            if explore is None:
                explore = self.config.explore
            if num_timesteps is None:
                num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self.num_envs
            episodes = self._sample_games(num_timesteps, explore, force_reset)
            make_callback("on_sample_end", callbacks_objects=self._callbacks,
                          callbacks_functions=self.config.callbacks_on_sample_end,
                          kwargs=dict(env_runner=self, metrics_logger=self.metrics, samples=episodes))
            for episode in episodes:
                keep_last_info(episode)
        self._time_after_sampling = time.perf_counter()
        return episodes

    def _sample_games(self, num_timesteps: int, explore: bool, force_reset: bool) -> list:
        done = []
        if force_reset or self._needs_initial_reset or not self._games:
            self._reset_all_games()
        env_ts = 0
        steps_by_agent, steps_by_module = defaultdict(int), defaultdict(int)
        while env_ts < num_timesteps:
            running = []
            for g in self._games:
                if g.needs_reset:  # a game that ended last step: reset now, stepped from the next step on
                    obs, infos = g.env.reset(options=reset_options(g.matchup))
                    self._start_game(g, obs, infos, g.matchup, self._initial_states())
                else:
                    if g.chunk_guided and not g.guided:  # the hand-over: the guide's steps are dropped
                        self._next_chunk(g)
                    running.append(g)
            if not running:
                continue
            actions = self._act(running, explore)
            for g in running:
                try:
                    step = step_arrays(g.env.unwrapped, actions[g.index])
                except Exception as e:
                    self._env_step_failed(e)  # raises unless the envs may be recreated
                    self._reset_all_games()  # as RLlib's runner: the data of the games so far is dropped
                    env_ts = 0
                    steps_by_agent.clear(), steps_by_module.clear()
                    break
                env_ts += not g.guided  # a guide's step (Jump-Start RL) is no training data: it does not count
                g.sampled += 1
                self._record_step(g, actions[g.index], step)
                if step.done:
                    self._count_steps(g, steps_by_agent, steps_by_module)
                    done.extend(self._finish_game(g, terminated=step.terminated))
        for g in self._games:
            self._count_steps(g, steps_by_agent, steps_by_module)
        self._log_counts(env_ts, steps_by_agent, steps_by_module)
        self._tally.log_sample(self.metrics)
        chunks = self._cut_chunks()
        self._set_bootstrap_values(self._pending_bootstrap)
        self._pending_bootstrap = []
        return done + chunks

    # ---- games ----------------------------------------------------------------------------------------------------
    def _start_game(self, g: _Game, obs: dict, infos: dict, matchup: dict | None, initial: dict):
        """Starts game `g` with its matchup's fixed agent, guide (Jump-Start RL) and the kickstart's teacher."""
        guide, guide_steps = None, 0
        if matchup is not None and "guide" in matchup:
            guide = self.matchups.opponents.make_agent({"agent": matchup["guide"], "seed": matchup["seed"]})
            guide_steps = handover_steps(matchup["guide_until_s"], self._frameskip, TICKS_PER_SECOND)
        g.start(obs, infos, matchup, initial, self._fixed_agent(matchup), self._teacher(), guide, guide_steps)
        late_game_started(self, matchup, next(iter(infos.values()), {}).get(LATE_START_KEY))

    def _fixed_agent(self, matchup: dict | None):
        """The agent of a fixed-agent matchup (callbacks/opponents.py), None for any other."""
        if matchup is None or "agent" not in matchup:
            return None
        return self.matchups.opponents.make_agent(matchup)

    def _teacher(self):
        """A new game's shadow teacher (init.teacher's agent), or None."""
        if self._teacher_name is None:
            return None
        from policies.agents.by_name import make_agent
        return make_agent(self._teacher_name, seed=self._seed or 0)

    def set_teacher_labels(self, on: bool):
        """The kickstart schedule's switch (callbacks/schedules.py): label "main"'s steps with the agent teacher's
        actions (on) or with no-ops (off: the loss weight is 0, the teacher's time is saved). Takes effect at the
        next step; a teacher switched back on reads the game from where it is (the scripted bot's memory is a few
        flags, such as its retreat)."""
        self._teacher_labels = bool(on) and self._teacher_name is not None

    def _initial_states(self) -> dict:
        return {mid: self.module[mid].get_initial_state() for mid in self.module.keys()}

    def _reset_all_games(self):
        """Resets every env as RLlib's runner does (seeded on the first reset), each game with a new matchup."""
        obs, infos = self._try_env_reset(seed=self._seed if self._needs_initial_reset else None, options=None)
        self._needs_initial_reset = False
        if len(self._games) != self.num_envs or any(g.env is not e for g, e in zip(self._games, self.env.envs)):
            self._games = [_Game(i, env) for i, env in enumerate(self.env.envs)]
        initial = self._initial_states()
        opp = self.matchups.opponents
        if opp is not None:
            opp.abandon_late_games()
        for g in self._games:  # reset before their matchups were drawn: at env.start_state as it is, not at a stage
            self._start_game(g, obs[g.index], infos[g.index], unstaged(game_started(self, g.index)), initial)

    def _env_step_failed(self, error: Exception):
        """RLlib's handling of a failed env step (EnvRunner._try_env_step): with restart_failed_sub_environments the
        envs are recreated, else the error is raised."""
        self.metrics.log_value(NUM_ENV_STEP_FAILURES_LIFETIME, 1, reduce="lifetime_sum")
        if not self.config.restart_failed_sub_environments:
            raise RuntimeError(f"{type(self).__name__}: an env step failed and restart_failed_sub_environments is "
                               f"off: {type(error).__name__}: {error}") from error
        logger.exception("%s: an env step failed; recreating and resetting the envs", type(self).__name__)
        self.make_env()
        self._games = []

    def _forward(self, module_id: str, who: list, explore: bool) -> dict:
        """One forward pass of a module over the heroes `who` ([(game, agent)]): their latest observations and LSTM
        states as a batch of one time step."""
        g0, a0 = who[0]
        # np.array of same-shaped arrays stacks them, and faster than np.stack for small ones
        obs = {k: torch.from_numpy(np.array([g.obs[a][k] for g, a in who]))[:, None] for k in g0.obs[a0]}
        state = {k: torch.from_numpy(np.array([g.state[a][k] for g, a in who])) for k in g0.state[a0]}
        batch = {Columns.OBS: obs, Columns.STATE_IN: state}
        module = self.module[module_id]
        # the module is in eval mode already: skip RLlib's per-call mode switch (forward_exploration)
        return module._forward_exploration(batch) if explore else module._forward_inference(batch)

    def _act(self, games: list, explore: bool) -> dict:
        """One forward pass per module over the heroes it plays in `games`; returns each game's actions as an
        (heroes, 5) int array (rows in the game's agent order, columns ACTION_KEYS: what step_arrays takes) and
        records "main"'s model outputs in the games' buffers."""
        rows = defaultdict(list)  # module id -> [(game, agent)]
        actions = {g.index: np.zeros((len(g.agents), N_ACTION_KEYS), np.int64) for g in games}
        fixed = []  # (game, its fixed agent, the heroes it plays)
        for g in games:
            for a in g.agents:
                if g.module_of[a] != FIXED_AGENT:
                    rows[g.module_of[a]].append((g, a))
            if g.fixed is not None:  # a fixed agent (scripted bot, ...) plays its side, outside the modules
                fixed.append((g, g.fixed, g.fixed_agents))
            if g.teacher is not None:  # the kickstart's agent teacher, in shadow on "main"'s heroes
                labels = g.teacher.act({a: g.obs[a] for a in g.main_agents}) if self._teacher_labels else {}
                for a in g.main_agents:
                    g.buf[a]["emo"][TEACHER_ACTION].append(label(labels[a], g.obs[a]["action_mask"])
                                                           if a in labels else NOOP_LABEL)
        self._agents_act(fixed, actions)
        guided = [g for g in games if g.guided]  # Jump-Start RL: the guide plays "main"'s heroes (after its forward)
        for mid, who in rows.items():
            module = self.module[mid]
            with torch.inference_mode():  # lighter than no_grad: the outputs only become numpy arrays
                out = self._forward(mid, who, explore)
                logits = out[Columns.ACTION_DIST_INPUTS][:, 0]
                dist_cls = (module.get_exploration_action_dist_cls() if explore
                            else module.get_inference_action_dist_cls())
                dist = dist_cls.from_logits(logits)
                if not explore:
                    dist = dist.to_deterministic()
                act = dist.sample()
                logp = dist.logp(act)
            act = np.stack([act[k].numpy() for k in ACTION_KEYS], axis=1)  # (rows, 5): the env's action rows
            state_out = {k: v.numpy() for k, v in out[Columns.STATE_OUT].items()}
            if mid == MAIN:
                logp, win, value = logp.numpy(), out[WIN_PROB][:, 0].numpy(), out[Columns.VF_PREDS][:, 0].numpy()
                dist_inputs = logits.numpy() if self._ship_dist_inputs else None
            for i, (g, a) in enumerate(who):
                actions[g.index][g.row[a]] = act[i]
                g.state[a] = {k: v[i] for k, v in state_out.items()}
                if mid == MAIN:
                    emo = g.buf[a]["emo"]
                    emo[Columns.ACTION_LOGP].append(logp[i])
                    emo[WIN_PROB].append(win[i])
                    emo[Columns.VF_PREDS].append(value[i])
                    emo[Columns.STATE_OUT].append(g.state[a])
                    emo[WEIGHTS_SEQ_NO].append(self._weights_seq_no)
                    if dist_inputs is not None:
                        emo[Columns.ACTION_DIST_INPUTS].append(dist_inputs[i])
        self._agents_act([(g, g.guide, g.main_agents) for g in guided], actions)
        return actions

    def _agents_act(self, plays: list, actions: dict):
        """Agents outside the modules (fixed agents, Jump-Start RL's guides) act in their games: `plays` holds (game,
        agent, the heroes it plays). The agents of one checkpoint (ModuleAgent) act together, in one forward pass
        over all their games' heroes; any other agent acts on its own game. Their actions (dicts, checked) fill the
        heroes' rows of the games' action arrays."""
        together = defaultdict(list)  # (module, explore) -> plays
        for g, agent, heroes in plays:
            if isinstance(agent, ModuleAgent):
                together[(id(agent.module), agent.explore)].append((g, agent, heroes))
            else:
                self._fill_rows(g, actions[g.index], agent.act({a: g.obs[a] for a in heroes}))
        for group in together.values():
            played = ModuleAgent.act_together([agent for _, agent, _ in group],
                                              [{a: g.obs[a] for a in heroes} for g, _, heroes in group])
            for (g, _, _), acts in zip(group, played):
                self._fill_rows(g, actions[g.index], acts)

    def _fill_rows(self, g: _Game, rows: np.ndarray, action_dict: dict):
        for a, action in action_dict.items():
            rows[g.row[a]] = action_row(a, action, g.max_units, g.action_sizes)

    def _set_bootstrap_values(self, pending: list):
        """GAE's bootstrap value of each chunk that does not end in a terminal state: the value of the observation
        after its last step, in one forward pass of "main" (policies/learning/advantages.py). `pending`: [(episode,
        _Boot)]."""
        if not pending:
            return
        with torch.inference_mode():
            values = self._forward(MAIN, [(boot, boot.agent) for _, boot in pending], False)[Columns.VF_PREDS]
        for (episode, _), v in zip(pending, values[:, 0].tolist()):
            episode.custom_data[BOOTSTRAP_VALUE] = v

    def _record_step(self, g: _Game, actions: np.ndarray, step: StepArrays):
        """A game's step in its buffers: "main"'s heroes' action rows, rewards, observations and infos (the infos
        of "main"'s heroes only: the others' are never read)."""
        g.t += 1
        g.obs = obs = dict(zip(g.agents, step.obs))
        g.returns += step.rewards
        infos = step.infos(g.agents, g.buf)
        rewards = step.rewards.tolist()
        for a in g.main_agents:
            b, i = g.buf[a], g.row[a]
            b["actions"].append(actions[i])
            b["rewards"].append(rewards[i])
            b["obs"].append(obs[a])
            b["infos"].append(infos[a])
        self._tally.add_step_arrays(step, g.record, g.sides)

    def _finish_game(self, g: _Game, terminated: bool) -> list:
        """The finished game's last chunks (none when the guide played them), its metrics and league result; a new
        matchup for the env's next game."""
        episodes = [] if g.chunk_guided else [self._episode(g, a, terminated=terminated, truncated=not terminated)
                                              for a in g.main_agents]
        for a, episode in zip(g.main_agents, episodes):
            if terminated:
                episode.custom_data[BOOTSTRAP_VALUE] = 0.0  # no state after a terminal one
            else:  # a time limit: GAE bootstraps from the last observation
                self._pending_bootstrap.append((episode, _Boot(a, g.obs[a], g.state[a])))
        GameTally.log_game_end(g.record, self.metrics)
        self.metrics.log_value(NUM_EPISODES, 1, reduce="sum")
        self.metrics.log_value(NUM_EPISODES_LIFETIME, 1, reduce="lifetime_sum")
        modules = defaultdict(float)
        returns = g.returns.tolist()
        for a, r in zip(g.agents, returns):
            if g.module_of[a] != FIXED_AGENT:
                modules[g.module_of[a]] += r
        self._log_episode_metrics(g.t, sum(returns), time.time() - g.started,
                                  {str(a): r for a, r in zip(g.agents, returns)}, dict(modules),
                                  {str(a): g.t for a in g.agents})
        game_ended(self, g.index, g.matchup, g.record.get(WINNER_KEY, NO_WINNER), g.record.get(RAW_RETURN_KEY),
                   g.record.get(OBJECTIVE_KEY), scored=not g.record.get(CUT_SHORT_KEY, False),
                   late_start=g.record.get(LATE_START_KEY))
        g.matchup = game_started(self, g.index)  # as RLlib creates the next episode right away
        g.needs_reset = True
        return episodes

    # ---- episodes for the learner ------------------------------------------------------------------------------
    def _episode(self, g: _Game, a: str, terminated: bool = False, truncated: bool = False) -> SingleAgentEpisode:
        """Hero `a`'s data since the chunk began (and its lookback) as a numpy SingleAgentEpisode of "main": what
        ``to_numpy()`` makes of the lists, stacked here directly (``stack``)."""
        b, n = g.buf[a], g.lookback
        env = g.env.unwrapped
        return SingleAgentEpisode(
            id_=chunk_id(g.hero_ids[a], g.chunk), agent_id=a, module_id=MAIN,
            multi_agent_episode_id=chunk_id(g.game_id, g.chunk),
            observations=InfiniteLookbackBuffer(stack(b["obs"]), n, env.observation_spaces[a]),
            actions=InfiniteLookbackBuffer(action_columns(b["actions"]), n, env.action_spaces[a]),
            rewards=InfiniteLookbackBuffer(stack(b["rewards"]), n),
            infos=InfiniteLookbackBuffer(list(b["infos"]), n),
            extra_model_outputs={k: InfiniteLookbackBuffer(stack(v), n) for k, v in b["emo"].items()},
            terminated=terminated, truncated=truncated, t_started=g.t0,
            observation_space=env.observation_spaces[a], action_space=env.action_spaces[a])

    def _cut_chunks(self) -> list:
        """The chunks of the games still playing, each continued by a new chunk with the lookback of RLlib's cut."""
        out = []
        for g in self._games:
            if g.needs_reset or g.t == g.t0:  # finished (already returned) or not stepped since the chunk began
                continue
            if not g.chunk_guided:  # the guide's steps (Jump-Start RL) are dropped
                for a in g.main_agents:
                    out.append(self._episode(g, a))
                    self._pending_bootstrap.append((out[-1], _Boot(a, g.obs[a], g.state[a])))
            self._next_chunk(g)
        return out

    def _next_chunk(self, g: _Game):
        """Begins game `g`'s next chunk at its current step, with the lookback of RLlib's cut."""
        n = min(self.config.episode_lookback_horizon, g.t)  # steps of lookback the next chunk keeps
        for a in g.main_agents:
            b = g.buf[a]
            b["obs"], b["infos"] = b["obs"][-(n + 1):], b["infos"][-(n + 1):]
            b["actions"], b["rewards"] = b["actions"][-n:] if n else [], b["rewards"][-n:] if n else []
            b["emo"] = defaultdict(list, {k: v[-n:] if n else [] for k, v in b["emo"].items()})
        g.lookback = n
        g.t0 = g.t
        g.chunk += 1

    @staticmethod
    def _count_steps(g: _Game, steps_by_agent: dict, steps_by_module: dict):
        """Adds game `g`'s env steps since its last count to the sample's counts by agent and by module (counted per
        game when it ends and at the sample's end, not per step; the same sums)."""
        if not g.sampled:
            return
        for a in g.agents:
            steps_by_agent[a] += g.sampled
            if g.module_of[a] != FIXED_AGENT:
                steps_by_module[g.module_of[a]] += g.sampled
        g.sampled = 0

    def _log_counts(self, env_ts: int, steps_by_agent: dict, steps_by_module: dict):
        """RLlib's step counts of the sample, logged once instead of per step (the same sums)."""
        if env_ts <= 0:
            return
        self.metrics.log_value(NUM_ENV_STEPS_SAMPLED, env_ts, reduce="sum")
        self.metrics.log_value(NUM_ENV_STEPS_SAMPLED_LIFETIME, env_ts, reduce="lifetime_sum", with_throughput=True)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=env_ts)
        for a, n in steps_by_agent.items():
            self.metrics.log_value((NUM_AGENT_STEPS_SAMPLED, str(a)), n, reduce="sum")
            self.metrics.log_value((NUM_AGENT_STEPS_SAMPLED_LIFETIME, str(a)), n, reduce="lifetime_sum")
        for m, n in steps_by_module.items():
            self.metrics.log_value((NUM_MODULE_STEPS_SAMPLED, m), n, reduce="sum")
            self.metrics.log_value((NUM_MODULE_STEPS_SAMPLED_LIFETIME, m), n, reduce="lifetime_sum")
