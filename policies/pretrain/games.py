"""The kickstart's games: the data a student network is cloned from.

- Teacher games: the teacher plays one side against an opponent (the teacher itself or another agent); every hero the
  teacher plays is recorded, its own actions as the labels.
- DAgger games (Ross et al. 2011, "dataset aggregation"): the student (an RLModule) plays, sampling its actions; the
  teacher runs in shadow on the student's observations from the game's start (so that a stateful teacher's memory
  follows the game) and labels every student step. With probability ``beta`` a step executes the teacher's action
  instead of the student's (the DAgger mixture); the label is the teacher's either way. Only the student's heroes are
  recorded (a teacher opponent's steps are not the student's states). ``override`` instead hands one kind of the
  student's decisions to the teacher (``policies/pretrain/overrides.py``): which gap loses the student's games.
- Check games: the student against an agent, nothing recorded (win rates).

Games run in the training env (a callable ``make_env``: ``training.algorithm.make_training_env`` with the run's
settings,
i.e. ``PostprocessedRewardEnv`` over ``MobaEnv``), so the recorded rewards are the post-processed ones PPO sees.
Several games run at once in a process (``PARALLEL_GAMES``): the student acts for all of them in one forward pass
(``ModuleAgent`` keyed by game and agent id), which makes a student step cost about what a scripted one does.
``GameWorkers`` spreads the games over processes.

A recorded hero's game is a ``Trajectory``: its observations stored compactly as numpy arrays (the large float
tables as float16, the integer tables as uint8: ~3 KB per 1v1 hero-step instead of 6.4 KB), the labels, the
rewards, and how the game ended.
"""
from __future__ import annotations

import math
import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch
from scipy.signal import lfilter

from moba.env.reward_wrapper import ReturnScaler
from moba.game.constants import TEAM_NAMES, TICKS_PER_SECOND
from moba.game.teams import DEFAULT_TIME_LIMIT_S, NO_WINNER, side_of_agent
from policies.agents.by_name import make_agent
from policies.agents.module_agent import ModuleAgent
from policies.learning.kickstart import label
from policies.pretrain.overrides import check_rule, override
from policies.league.series import end_with_parent

TEACHER = "teacher"  # a side the teacher plays (recorded, its own actions as labels)
STUDENT = "student"  # a side the student plays (recorded in DAgger games, labelled by the teacher in shadow)
# the large float tables, stored as float16: their values stay below ~1.1e4 (map coordinates, distances, health), so
# rounding is at most ~0.05% of a value (a few map units); the other floats stay float32
HALF_PRECISION_KEYS = ("units", "private_minimap")
PARALLEL_GAMES = 16  # games one process plays at once: the student acts for all of them in one forward pass
PROGRESS_EVERY_STEPS = 50  # a worker reports its game steps this often


@dataclass
class GamePlan:
    """One game to play: who plays each side (TEACHER, STUDENT or an agent name of policies.agents.by_name), its seed,
    the
    dataset its trajectories join (``source``), whether they are recorded, and the DAgger mixture ``beta``."""
    seed: int
    radiant: str
    dire: str
    source: str = TEACHER
    record: bool = True
    beta: float = 0.0
    override: str = ""  # a rule of policies/pretrain/overrides.py: the teacher takes over one kind of the student's
    # decisions (its labels are recorded as ever)

    def __post_init__(self):
        if self.override:
            check_rule(self.override, "GamePlan.override")
            if self.beta > 0:
                raise ValueError("GamePlan: beta (the DAgger mixture) and override (one kind of decision) each choose "
                                 f"the executed actions; give one, got beta {self.beta} and override {self.override!r}")

    def side(self, side: str) -> str:
        return self.radiant if side == TEAM_NAMES[0] else self.dire

    @property
    def recorded_side(self) -> str:
        """Who is recorded: the student where it plays (a teacher opponent's steps are not its states), else the
        teacher."""
        return STUDENT if STUDENT in (self.radiant, self.dire) else TEACHER


@dataclass
class Trajectory:
    """One recorded hero in one game, T steps: compact observations, the teacher's actions (T, 5) int16 in
    ACTION_KEYS order, the post-processed rewards (T,) before normalization, and the game's end: ``truncated`` (the
    time limit) and ``win`` (1 won, 0 lost, 0.5 time limit)."""
    obs: dict
    actions: np.ndarray
    rewards: np.ndarray
    truncated: bool
    win: float
    source: str
    seed: int
    agent_id: str = ""
    extra: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rewards)

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self.obs.values()) + self.actions.nbytes + self.rewards.nbytes


def storage_dtypes(obs_space) -> dict:
    """The dtype each observation key is stored with: float16 for HALF_PRECISION_KEYS, uint8 for integer tables whose
    values fit (the masks, ids, types), the space's own dtype otherwise."""
    out = {}
    for k, s in obs_space.spaces.items():
        if k in HALF_PRECISION_KEYS:
            out[k] = np.float16
        elif np.issubdtype(s.dtype, np.integer) and s.low.min() >= 0 and s.high.max() <= np.iinfo(np.uint8).max:
            out[k] = np.uint8
        else:
            out[k] = s.dtype
    return out


def _base(env):
    """The MobaEnv of `env` (itself, or the one a reward wrapper holds as ``.env``)."""
    return getattr(env, "env", env)


def game_step_limit(env) -> int:
    """The most agent steps a game of `env` (MobaEnv, or a wrapper of one as ``.env``) lasts."""
    cfg = _base(env).cfg
    limit = cfg.time_limit_s or DEFAULT_TIME_LIMIT_S[cfg.mode]
    return math.ceil(limit * TICKS_PER_SECOND / cfg.frameskip)


# ---- one process: several games at once ------------------------------------------------------------------------------
class _Game:
    """A running game: its env, the agent of each side (for a student side: the teacher in shadow, when recorded),
    and the recorded heroes' steps so far."""

    def __init__(self, plan: GamePlan, env, make_teacher, dtypes: dict):
        self.plan, self.env, self.dtypes = plan, env, dtypes
        self.obs, _ = env.reset(seed=plan.seed)
        self.ids = {s: [a for a in env.possible_agents if side_of_agent(a) == s] for s in TEAM_NAMES}
        self.agents = {}
        for k, side in enumerate(TEAM_NAMES):
            who = plan.side(side)
            if who == STUDENT and not plan.record:
                continue  # nobody labels a check game
            agent = make_teacher(plan.seed + k) if who in (TEACHER, STUDENT) else make_agent(who, plan.seed + k)
            agent.reset(self.ids[side])
            self.agents[side] = agent
        self.student_ids = [a for s in TEAM_NAMES if plan.side(s) == STUDENT for a in self.ids[s]]
        self.recorded = [a for s in TEAM_NAMES if plan.record and plan.side(s) == plan.recorded_side
                         for a in self.ids[s]]
        self.steps = {a: {"obs": [], "actions": [], "rewards": []} for a in self.recorded}
        self.rng = np.random.default_rng(plan.seed)
        self.raw_return = {s: 0.0 for s in TEAM_NAMES}
        self.n = 0
        self.overridden = 0  # the student's hero-steps the plan's override executed another action for

    def step(self, student_actions: dict) -> bool:
        """Steps the game with the student's sampled actions (keyed by agent id); returns whether it ended."""
        actions, labels = dict(student_actions), {}
        for side, agent in self.agents.items():
            acts = agent.act({a: self.obs[a] for a in self.ids[side]})
            labels.update(acts)
            if self.plan.side(side) != STUDENT:
                actions.update(acts)
            elif self.plan.beta > 0:
                actions.update({a: acts[a] for a in self.ids[side] if self.rng.random() < self.plan.beta})
            elif self.plan.override:
                for a in self.ids[side]:
                    executed = override(self.plan.override, actions[a], acts[a])
                    self.overridden += executed is not actions[a]
                    actions[a] = executed
        for a in self.recorded:
            rec = self.steps[a]
            rec["obs"].append({k: np.asarray(v, self.dtypes[k]) for k, v in self.obs[a].items()})
            rec["actions"].append(label(labels[a], self.obs[a]["action_mask"]))  # what the env plays
        self.obs, rewards, term, trunc, infos = self.env.step(actions)
        self.n += 1
        for a in self.env.possible_agents:
            self.raw_return[side_of_agent(a)] += infos[a].get("raw_reward", rewards[a])
        for a in self.recorded:
            self.steps[a]["rewards"].append(infos[a].get("postprocessed_reward", rewards[a]))
        self.done = term["__all__"] or trunc["__all__"]
        if self.done:
            self.winner = infos[self.env.possible_agents[0]]["winner"]
            self.truncated = bool(trunc["__all__"])
            self.game_time_s = float(infos[self.env.possible_agents[0]]["game_time_s"])
            self.objective = infos[self.env.possible_agents[0]].get("objective")
        return self.done

    def result(self) -> tuple[dict, list[Trajectory]]:
        p = self.plan
        summary = {"seed": p.seed, "source": p.source, "radiant": p.radiant, "dire": p.dire, "winner": self.winner,
                   "truncated": self.truncated, "game_time_s": self.game_time_s, "steps": self.n,
                   "raw_return": dict(self.raw_return), "objective": self.objective, "overridden": self.overridden}
        trajs = []
        for a in self.recorded:
            rec = self.steps.pop(a)
            side = side_of_agent(a)
            win = 0.5 if self.winner == NO_WINNER else float(self.winner == side)
            trajs.append(Trajectory(
                obs={k: np.stack([o[k] for o in rec["obs"]]) for k in rec["obs"][0]},
                actions=np.asarray(rec["actions"], np.int16), rewards=np.asarray(rec["rewards"], np.float32),
                truncated=self.truncated, win=win, source=p.source, seed=p.seed, agent_id=a))
        return summary, trajs


def play_games(make_env, plans: list[GamePlan], make_teacher, student=None, explore: bool = True, progress=None,
               parallel: int = PARALLEL_GAMES, primary_bias=None) -> tuple[list[dict], list[Trajectory]]:
    """Plays `plans` in this process, `parallel` games at a time. `make_teacher(seed)` builds the teacher;
    `student` is the RLModule of the STUDENT sides (sampling its actions; explore=False: its most likely ones;
    `primary_bias`: ModuleAgent's decode-time prior on its primary actions);
    `progress(n)` is called with game steps
    as they are played (a game that ends early adds the steps it did not play, so that the total is
    ``len(plans) * game_step_limit``). Returns the games' summaries and the recorded trajectories, in plan order."""
    return _flatten(_play(make_env, plans, make_teacher, student, explore, progress, parallel, primary_bias))


def _flatten(results) -> tuple[list[dict], list[Trajectory]]:
    return [s for s, _ in results], [t for _, trajs in results for t in trajs]


def _play(make_env, plans, make_teacher, student, explore, progress, parallel=PARALLEL_GAMES,
          primary_bias=None) -> list:
    """play_games' work: (summary, trajectories) per plan, in plan order."""
    if any(STUDENT in (p.radiant, p.dire) for p in plans) and student is None:
        raise ValueError("plans with a student side need the student module")
    pending = list(enumerate(plans))[::-1]
    envs, running, out = [], {}, {}
    agent = ModuleAgent(student, explore=explore, primary_bias=primary_bias) if student is not None else None
    dtypes = None
    unreported = 0
    while pending or running:
        while pending and len(running) < parallel:
            i, plan = pending.pop()
            if not envs:
                envs.append(make_env())
                _base(envs[-1]).set_seed_stream(0, 0)  # a game's seed alone decides it, in any process or env
            env = envs.pop()
            dtypes = dtypes or storage_dtypes(env.observation_spaces[env.possible_agents[0]])
            running[i] = _Game(plan, env, make_teacher, dtypes)
        student_obs = {(i, a): g.obs[a] for i, g in running.items() for a in g.student_ids}
        sampled = agent.act(student_obs) if student_obs else {}
        unreported += len(running)
        for i, g in list(running.items()):
            if g.step({a: sampled[(i, a)] for a in g.student_ids}):
                out[i] = g.result()
                for a in g.student_ids:
                    agent.state.pop((i, a), None)  # the ModuleAgent's LSTM state of a finished game
                unreported += game_step_limit(g.env) - g.n
                envs.append(running.pop(i).env)
        if progress is not None and (unreported >= PROGRESS_EVERY_STEPS or not (pending or running)):
            progress(unreported)
            unreported = 0
    return [out[i] for i in range(len(plans))]


# ---- several processes -----------------------------------------------------------------------------------------------
_COUNTER = None  # a worker process's shared step counter (GameWorkers)


def _init_worker(counter, torch_threads: int, parent_pid: int):
    global _COUNTER
    _COUNTER = counter
    torch.set_num_threads(torch_threads)
    end_with_parent(parent_pid)  # a stopped pretraining run leaves no worker playing on


def _count(n: int):
    with _COUNTER.get_lock():
        _COUNTER.value += n


def _play_in_worker(make_env, plans, make_teacher, student_spec, student_state, explore, primary_bias):
    student = None
    if student_spec is not None:
        student = student_spec.build()
        student.load_state_dict(student_state)
        student.eval()
    return _play(make_env, plans, make_teacher, student, explore, progress=_count, primary_bias=primary_bias)


class GameWorkers:
    """Plays games in `workers` processes (spawned once, used for every call; 0 or 1: in this process), each with
    `torch_threads` torch threads. A context manager."""

    def __init__(self, workers: int, torch_threads: int = 1):
        self.workers = workers
        self.torch_threads = torch_threads
        self.pool = None
        if workers > 1:
            ctx = mp.get_context("spawn")  # torch's thread pools do not survive a fork
            self.counter = ctx.Value("q", 0)
            self.pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                            initargs=(self.counter, torch_threads, os.getpid()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None

    def play(self, make_env, plans: list[GamePlan], make_teacher, student=None, explore: bool = True,
             progress=None, primary_bias=None):
        """play_games over the workers (plans dealt round-robin); the same results, in plan order."""
        if self.pool is None:
            return play_games(make_env, plans, make_teacher, student, explore, progress, primary_bias=primary_bias)
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec
        spec = RLModuleSpec.from_module(student) if student is not None else None
        state = student.state_dict() if student is not None else None
        shares = [list(range(w, len(plans), self.workers)) for w in range(self.workers)]
        with self.counter.get_lock():
            self.counter.value = 0
        futures = [self.pool.submit(_play_in_worker, make_env, [plans[i] for i in share], make_teacher, spec, state,
                                    explore, primary_bias) for share in shares if share]
        reported = 0
        while not all(f.done() for f in futures):
            time.sleep(0.25)
            if progress is not None and self.counter.value > reported:
                progress(self.counter.value - reported)
                reported = self.counter.value
        if progress is not None and self.counter.value > reported:
            progress(self.counter.value - reported)
        results = [None] * len(plans)
        for share, f in zip([s for s in shares if s], futures):
            for i, r in zip(share, f.result()):
                results[i] = r
        return _flatten(results)


# ---- returns ---------------------------------------------------------------------------------------------------------
def return_scale(trajectories: list[Trajectory], gamma: float) -> float:
    """The std that PPO's reward normalization divides rewards by (moba/env/reward_wrapper.ReturnScaler, Table 2
    footnote c), estimated on these games: the std of the running discounted sums R_t = gamma R_{t-1} + r_t over every
    hero and step, as the wrapper accumulates them."""
    scaler = ReturnScaler()
    for t in trajectories:
        scaler.update(lfilter([1.0], [1.0, -gamma], np.asarray(t.rewards, np.float64)))
    return scaler.std
