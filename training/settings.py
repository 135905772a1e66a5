"""A run's settings, typed: one frozen dataclass per section of a run config (tune_configs/*.yaml), each field's
default the paper's number with its citation, each section validated where it is built.

``RunSettings.from_dict(raw)`` builds the settings of a raw run config (the YAML mapping) or raises ValueError naming
the key (``config 'ppo.clip_param': must be > 0, got -1``); ``to_dict()`` gives the plain nested dicts back (what
validation filled in included), and ``from_dict(settings.to_dict())`` rebuilds the same settings. The sections::

    name, seed                       # run name (results/<name>), the seed
    env: {...}                       # moba.env.config.EnvConfig keys (+ "remote": "host:port" or a list, and the
                                     # game-server client's timeout_s, retries)
    reward: RewardSettings           # training-side post-processing; team spirit is a schedule
    model: {...}                     # policies.model.five_module.FiveModelConfig (network sizes)
    ppo: PPOSettings
    schedules: {name: {"unit", "points"}}   # training/schedules.py specs, SCHEDULE_DEFAULTS
    resources: ResourceSettings
    evaluation: EvaluationSettings   # win rates against reference agents, in the driver
    trueskill: TrueSkillSettings     # the in-training TrueSkill evaluator (Five app. J)
    league: LeagueSettings           # past opponents (Five app. N)
    opponents: OpponentSettings      # fixed agents, a ladder curriculum, Jump-Start RL, the late starts' stages
    init: InitSettings               # pretrained weights, the kickstart loss's teacher, a restore after surgery
    stop: {...}                      # any of STOP_KEYS
    checkpoint: CheckpointSettings
    storage_path                     # a local path, or a URI every node of a cluster reaches (s3://, gs://, file://)
    sweep: {"section.key": [values, ...]}   # a Tune grid search
"""
from __future__ import annotations

import copy
import json
import math
import os
import dataclasses
import weakref
from dataclasses import dataclass, field, fields, is_dataclass

from moba.env.config import EnvConfig
from moba.env.reward_wrapper import NORMALIZE_SCOPES
from moba.env.rewards import TEAM_SPIRIT
from moba.env.start_state import checked_start_state
from moba.game.constants import DEFAULT_FRAMESKIP
from moba.game.teams import DEFAULT_TIME_LIMIT_S, TEAM_NAMES
from policies.agents.ladder import LADDER
from policies.league.curriculum import (CURRICULUM, CURRICULUM_PROMOTE_AT, CURRICULUM_REVIEW, CURRICULUM_WINDOW, LEAGUE,
                                       SELF)
from policies.league.jump_start import JUMP_START_HANDOVER_S, JUMP_START_PROMOTE_AT, JUMP_START_WINDOW
from policies.league.pool import PAST_OPPONENT_FRACTION, QUALITY_LEARNING_RATE, SNAPSHOT_EVERY_ITERATIONS
from policies.league.ratings import DEFAULT_TIME_LIMIT_OUTCOME, TIME_LIMIT_OUTCOMES
from policies.league.references import references_outcome_rule
from policies.league.start_stages import START_STAGES_PROMOTE_AT, START_STAGES_WINDOW
from policies.learning.five_learner import AUX_WIN_COEFF, SETTINGS_KEY, TARGET_KL
from policies.learning.kickstart import CLASS_WEIGHT_HEADS
from policies.learning.self_imitation import SIL_VALUE_COEFF
from policies.model.five_module import FiveModelConfig
from training.schedules import ENV_GAME_SCHEDULED, SCHEDULED, Schedule, schedule_values

SCHEDULE_DEFAULTS = {  # Five Table 2, "Baseline" column, unless noted
    "team_spirit": TEAM_SPIRIT,  # Table 2, Baseline (0.3)
    "lr": 5e-5,  # Table 2, Baseline
    "entropy_coeff": 0.01,  # Table 2, Baseline
    "gae_horizon_s": 180.0,  # Table 2, Baseline: GAE horizon 180 s (gamma = 1 - T/H, eq. 3)
    # weight of the kickstart loss, KL(teacher || policy) on the training batch (Schmitt et al. 2018; the teacher is
    # init.teacher or init.checkpoint); 0 = off, the reproduction's default: OpenAI Five learned from scratch
    "kickstart_coeff": 0.0,
    # the share of games in which the env config's new_actions are legal (Five app. B: new actions are annealed
    # in "starting with 0% of rollout games ... slowly ramping up to 100%"); 1 = always (no new action)
    "new_action_share": 1.0,
    # both ancients' health (1v1: the crystals') as a share of the game's, in the training games from the next one
    # on: a curriculum on the goal, so that an agent that cannot yet finish a game meets the win it is paid for
    # (docs/training.md); 1 = the game as it is. Not from the papers: Five's games end by the ancient alone
    "ancient_hp_scale": 1.0,
}
SCHEDULE_RANGES = {"team_spirit": (0.0, 1.0), "lr": (0.0, 1.0), "entropy_coeff": (0.0, 10.0),
                   "gae_horizon_s": (0.2, 1e5), "kickstart_coeff": (0.0, 100.0), "new_action_share": (0.0, 1.0),
                   "ancient_hp_scale": (0.01, 1.0)}
# Five app. B "Smooth Training Restart": after surgery, "a learning rate of 0 for the first several hours of
# training" while Adam's moments adjust and the rollouts reach steady state. Several hours of OpenAI Five are a few
# iterations here (a CPU run makes 30-90 iterations an hour)
SURGERY_LR_HOLD_ITERATIONS = 5
SURGERY_LR_HOLD_LR = 0.0
# options the results rejected, removed; a config that still sets one is refused with the reason
REMOVED_KEYS = {
    "ppo.kickstart_params_floor": "the kickstart loss has one weight, schedules.kickstart_coeff: kept on the parameter "
                                  "heads only, PPO dropped the attacks (docs/results.md, runs 15, 16)",
}
STALENESS_VALUES = (0, 1)  # ppo.staleness
ENTROPY_BONUSES = ("action", "heads")  # ppo.entropy_bonus
# the action's heads, the keys of ppo.entropy_head_weights: FiveActionDistribution.HEADS, named here without torch
ACTION_HEADS = ("primary", "delay", "unit", "offsets")
# the ppo keys the learner reads from its settings, which a sweep can therefore vary per trial (the others are
# RLlib's own training settings)
LEARNER_PPO_KEYS = ("dual_clip", "aux_win_coeff", "entropy_bonus", "entropy_head_weights", "adam_beta1",
                    "adam_beta2", "win_advantage_coeff", "win_head_lr_factor")
ENV_RUNNERS = ("batched", "classic")  # training/batched_env_runner.py, or RLlib's MultiAgentEnvRunner
REFERENCES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tune_configs")
# timestamp: a wall-clock deadline (Unix seconds; Tune's time_total_s counts only the iterations' own time, not the
# evaluation games, checkpoints and Ray's start-up between them)
STOP_KEYS = ("training_iteration", "time_total_s", "num_env_steps_sampled_lifetime", "timestamp")
STOP_DEFAULT = {"training_iteration": 10}
TOP_KEYS = ("name", "seed", "env", "reward", "model", "ppo", "schedules", "resources", "evaluation", "trueskill",
            "league", "opponents", "init", "stop", "checkpoint", "storage_path", "sweep")
ENV_CLIENT_KEYS = ("timeout_s", "retries")  # RemoteMobaEnv's client settings in the env section


def _bad(key, msg):
    raise ValueError(f"config {key!r}: {msg}")


def _plain(value):
    """A field's value as YAML would hold it: sections as dicts, tuples as lists."""
    if is_dataclass(value):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return copy.deepcopy(value)


class _Section:
    """What every section shares: its defaults as a mapping, the check of a given mapping against them, to_dict."""

    @classmethod
    def defaults(cls) -> dict:
        """The section's defaults as plain values (a nested section as a dict)."""
        return cls().to_dict()

    @classmethod
    def _checked(cls, given, key: str) -> dict:
        """The defaults updated by `given`, each given value of the default's type (a bool for a bool, an int for an
        int, a number for a float, a list for a list; anything for a None, str or mapping default: the section
        checks it)."""
        defaults = cls.defaults()
        if not isinstance(given, dict):
            _bad(key, f"must be a mapping, got {type(given).__name__}")
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            dotted = f"{key}.{unknown[0]}"
            _bad(dotted, f"{'removed: ' + REMOVED_KEYS[dotted] if dotted in REMOVED_KEYS else 'unknown key'}; "
                         f"allowed: {sorted(defaults)}")
        out = dict(defaults)
        for k, v in given.items():
            d = defaults[k]
            if isinstance(d, bool):
                ok = isinstance(v, bool)
            elif isinstance(d, int):
                ok = isinstance(v, int) and not isinstance(v, bool)
            elif isinstance(d, float):
                ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            elif isinstance(d, list):
                ok = isinstance(v, list)
            else:
                ok = True  # a None default: the section checks the value
            if not ok:
                _bad(f"{key}.{k}", f"must be {type(d).__name__}, got {v!r}")
            out[k] = v
        return out

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_validated(cls, d: dict):
        """The section of a validated ``to_dict()``, rebuilt without checks: the learner and the env runners read
        the settings the driver checked, where its paths may not exist (another node of a cluster)."""
        default = cls()
        values = {}
        for f in fields(cls):
            v, dv = d[f.name], getattr(default, f.name)
            values[f.name] = (type(dv).from_validated(v) if isinstance(dv, _Section) else
                              tuple(v) if isinstance(dv, tuple) else v)
        return cls(**values)


@dataclass(frozen=True)
class RewardSettings(_Section):
    """Training-side reward post-processing (moba/env/reward_wrapper.py); team spirit is a schedule."""
    zero_sum: bool = True  # Five app. G
    time_decay: bool = True  # Five app. G
    normalize: bool = True  # Five Table 2 footnote c: rewards divided by a running std (of the discounted returns)
    # whose std: "run", one for the whole run (the env runners' return statistics merged on the driver, the std sent
    # back with each iteration's weights and kept in checkpoints: callbacks/reward_scale.py); "process", each env
    # runner process its own running std (the behaviour before: two runners scaled returns differently, issue 29)
    normalize_scope: str = "run"
    # with the run's scope: when the std changes, the value head's weights are multiplied by old std / new std on the
    # learner and every env runner, so that its predictions keep their meaning in the new scale (PopArt's "preserving
    # outputs precisely", van Hasselt et al. 2016, without the mean shift: rewards are only divided by the std)
    rescale_value_head: bool = True
    # per no-op decision of a hero that could do something else (moba/env/reward_wrapper.py); 0: none, the papers'
    # (neither Five nor HoK has one). A counter to the no-op's inherited credit, to be chosen by measurement
    noop_penalty: float = 0.0

    @classmethod
    def from_dict(cls, d, key: str = "reward") -> "RewardSettings":
        reward = cls._checked(d, key)
        if not reward["noop_penalty"] >= 0:
            _bad(f"{key}.noop_penalty", f"must be >= 0 (0: none), got {reward['noop_penalty']}")
        if reward["normalize_scope"] not in NORMALIZE_SCOPES:
            _bad(f"{key}.normalize_scope",
                 f"must be one of {list(NORMALIZE_SCOPES)}, got {reward['normalize_scope']!r}")
        return cls(**reward)


@dataclass(frozen=True)
class PPOSettings(_Section):
    """PPO (Five Table 2, "Baseline" column, unless noted). ``staleness`` is checked against the resources by
    ``check_resources`` (RunSettings.from_dict calls it after the resources section)."""
    train_batch_size: int = 4000  # env steps per iteration (the paper's 983,040 samples don't fit a laptop)
    minibatch_size: int = 4000  # agent steps per SGD minibatch (at most train_batch_size)
    num_epochs: int = 1  # sample reuse ~1 (Table 2: 1.0 <-> 1.1)
    gae_lambda: float = 0.95  # Table 2: GAE lambda
    clip_param: float = 0.2  # Table 2: PPO clipping
    vf_loss_coeff: float = 1.0  # Table 2: value loss weight
    vf_clip_param: float = 100.0
    grad_clip: float = 5.0
    use_kl_loss: bool = False  # the paper's PPO has no KL penalty
    dual_clip: float | None = None  # HoK app. G: c = 3 gives dual-clip PPO ("... are set as 0.2 and 3")
    aux_win_coeff: float = AUX_WIN_COEFF  # Five app. D: the win-probability head trains with a very small weight (0.01)
    # the kickstart loss from an agent teacher (init.teacher: scripted_3) with each step weighted by the class of the
    # teacher's primary action, (f_max / f_c) ** power capped at 20 (f_c: the class's share of the labels the learner
    # has trained on; behaviour cloning's weights, policies/pretrain/cloning.py, at 0.5). 0: every step alike. Not in
    # Five. With every step alike the 5v5 student cast its teacher's spells at a recall of 0.24-0.47 on its own states
    # after 2 hours (docs/results.md, 2026-12-07); in 1v1 power 0.5 raised that recall (run 5, 2026-11-24) and won
    # fewer games on points, a measure later found to charge every cast
    kickstart_class_weight_power: float = 0.0
    # with those weights, the teacher's primary action scored on the student's logits plus log(weight) (logit
    # adjustment, Menon et al., ICLR 2021): the rare labels keep their larger gradients, and the loss's optimum is the
    # teacher's own frequencies again, where plain weights make it weight x frequency (the student then casts 2-2.5x
    # as often as its teacher: docs/results.md, 2026-12-07). Not in Five. Needs kickstart_class_weight_power > 0
    kickstart_class_logit_adjust: bool = False
    # what those weights weigh: "all", a step's whole -log-probability (the rare labels then take update share from the
    # moves' offsets too: their part of the 5v5 kickstart KL rose under the weights, docs/results.md 2026-12-07);
    # "primary", the primary action's part only, the parameter heads at the plain mean. Not in Five
    kickstart_class_weight_heads: str = "all"
    # the outcome term added to GAE's standardized advantages (policies/learning/advantages.py): this times the win
    # probability's temporal difference to the end of the chunk (1 or 0 at an outright win or loss, 0.5 at the time
    # limit), undiscounted. Not in Five (0: off); issue 29's credit for the finish beyond GAE's horizon. Needs the
    # batched env runner, which records the head's prediction at every step
    win_advantage_coeff: float = 0.0
    # the win-probability head's learning rate as a multiple of the scheduled one (policies/learning/win_head_step.py;
    # 1: Five's single rate). Its label reaches back one chunk per update, and at lr 1e-4 the head stayed near a
    # constant for a whole top-rung stage
    win_head_lr_factor: float = 1.0
    # self-imitation of the games "main" won outright (Oh et al., ICML 2018; policies/learning/self_imitation.py): each
    # minibatch adds coeff x -log pi(a|s) (R - V)+ over self_imitation_steps real steps drawn from a buffer of the last
    # self_imitation_buffer_steps real steps of won games' last chunks, and value_coeff x 0.5 ((R - V)+)^2 (the paper:
    # 1 and 0.01). Not in Five (0: off); issue 29's lever on a finish the policy makes in some games and not others.
    # Not sweepable in one Tune run (the learner connector that marks won games is built only when coeff > 0)
    self_imitation_coeff: float = 0.0
    self_imitation_value_coeff: float = SIL_VALUE_COEFF
    self_imitation_buffer_steps: int = 32000
    self_imitation_steps: int = 1024
    # what the entropy bonus (schedules.entropy_coeff) rewards. "action": the entropy of the whole action, each
    # parameter head's counted where the sampled primary reads it (policies/model/action_distribution.py): its
    # gradient also moves the primary toward the primaries that read more parameters (a move's offsets add up to
    # 2 ln 9 = 4.4 nats). "heads": each head's own entropy, a parameter head's weighted by the (constant) probability
    # that a primary reading it is picked, so the bonus keeps every head from collapsing without choosing the
    # primary. Measured in 1v1 (docs/results.md, runs 12 and 13): it keeps the primary from collapsing in
    # the first minute, and changed neither a scratch run's outcome nor a kickstarted student's drift
    entropy_bonus: str = "action"
    # each head's weight in the entropy bonus ({head: weight >= 0} over primary, delay, unit, offsets; a head not named
    # weighs 1; null: 1 each, the action's entropy). Not in Five. In the scratch curriculum the primary action's
    # entropy fell to 0.002-0.003 nats at entropy_coeff 0.001 and 0.003 on the sum alike, while the delay head stayed
    # near uniform (docs/results.md, 2026-12-05): {primary: 10, delay: 0} aims the bonus at the choice of action
    entropy_head_weights: dict | None = None
    # the bounded update: an update stops before the minibatch whose approx_kl (the KL from the sampling policy, k3
    # estimate, over that minibatch's steps) is above target_kl; its remaining minibatches and epochs are skipped
    # (Spinning Up's and Stable-Baselines3's early stop; 0 turns it off). Five has no such stop: its batches are
    # large and reused ~once (Five sec. 4.4, fig. 5). Here lr 3e-4 with 4 epochs of 1,000 steps reached approx_kl
    # 0.33 and a clip fraction of 0.45-0.69 per update, and lost a kickstarted policy's skill (docs/results.md)
    target_kl: float = TARGET_KL
    # the update's diagnostics (policies/learning/update_diagnostics.py: each loss term's gradient norm, and the
    # cosine between the policy gradients of two halves of the steps) every this many updates (0: never), on at most
    # diagnostics_steps real steps of the update's first minibatch (one extra forward and ~8 backward passes on them)
    diagnostics_every: int = 5
    diagnostics_steps: int = 1024
    adam_beta1: float = 0.9  # Table 2
    adam_beta2: float = 0.999  # Table 2
    # Five app. M staleness: versions between the weights that sampled a batch and those that train on it. 0: RLlib's
    # synchronous PPO (sample, then train); 1: the env runners sample the next batch while the learner trains on this
    # one (OpenAI Five's rollout workers never wait for the optimizer), so neither waits for the other. Needs the
    # batched env runner on at least one remote env runner.
    staleness: int = 0

    @classmethod
    def from_dict(cls, d, key: str = "ppo") -> "PPOSettings":
        ppo = cls._checked(d, key)
        for k in ("train_batch_size", "minibatch_size", "num_epochs"):
            if ppo[k] < 1:
                _bad(f"{key}.{k}", f"must be >= 1, got {ppo[k]}")
        if not 0.0 <= ppo["gae_lambda"] <= 1.0:
            _bad(f"{key}.gae_lambda", f"must be in [0, 1], got {ppo['gae_lambda']}")
        for k in ("adam_beta1", "adam_beta2"):
            if not 0.0 <= ppo[k] < 1.0:
                _bad(f"{key}.{k}", f"must be in [0, 1) (Adam's betas), got {ppo[k]}")
        if ppo["minibatch_size"] > ppo["train_batch_size"]:
            _bad(f"{key}.minibatch_size", f"must be <= {key}.train_batch_size ({ppo['train_batch_size']}), got "
                                          f"{ppo['minibatch_size']}")
        if ppo["entropy_bonus"] not in ENTROPY_BONUSES:
            _bad(f"{key}.entropy_bonus", f"must be one of {list(ENTROPY_BONUSES)}, got {ppo['entropy_bonus']!r}")
        _check_head_weights(f"{key}.entropy_head_weights", ppo["entropy_head_weights"])
        if ppo["target_kl"] < 0:
            _bad(f"{key}.target_kl", f"must be >= 0 (0: no early stop), got {ppo['target_kl']}")
        for k in ("diagnostics_every", "diagnostics_steps"):
            if ppo[k] < (1 if k == "diagnostics_steps" else 0):
                _bad(f"{key}.{k}", f"must be >= {1 if k == 'diagnostics_steps' else 0}, got {ppo[k]}")
        if ppo["clip_param"] <= 0:
            _bad(f"{key}.clip_param", f"must be > 0, got {ppo['clip_param']}")
        if not ppo["win_head_lr_factor"] > 0:
            _bad(f"{key}.win_head_lr_factor", f"must be > 0 (1: the scheduled learning rate), got "
                                              f"{ppo['win_head_lr_factor']}")
        for k in ("self_imitation_coeff", "self_imitation_value_coeff"):
            if ppo[k] < 0:
                _bad(f"{key}.{k}", f"must be >= 0 (0: off), got {ppo[k]}")
        for k in ("self_imitation_buffer_steps", "self_imitation_steps"):
            if isinstance(ppo[k], bool) or not isinstance(ppo[k], int) or ppo[k] < 1:
                _bad(f"{key}.{k}", f"must be an integer >= 1 (real steps), got {ppo[k]!r}")
        w = ppo["kickstart_class_weight_power"]
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            _bad(f"{key}.kickstart_class_weight_power", f"must be a number >= 0 (0: every step alike), got {w!r}")
        heads = ppo["kickstart_class_weight_heads"]
        if heads not in CLASS_WEIGHT_HEADS:
            _bad(f"{key}.kickstart_class_weight_heads", f"must be one of {list(CLASS_WEIGHT_HEADS)}, got {heads!r}")
        if heads != "all" and not w:
            _bad(f"{key}.kickstart_class_weight_heads", f"chooses what the class weights weigh: needs "
                                                        f"{key}.kickstart_class_weight_power > 0, got {w!r}")
        if ppo["kickstart_class_logit_adjust"] and not w:
            _bad(f"{key}.kickstart_class_logit_adjust", "adjusts the logits by the class weights: needs "
                                                        f"{key}.kickstart_class_weight_power > 0, got {w!r}")
        if ppo["win_advantage_coeff"] < 0:
            _bad(f"{key}.win_advantage_coeff", f"must be >= 0 (0: off), got {ppo['win_advantage_coeff']}")
        c = ppo["dual_clip"]
        if c is not None and (isinstance(c, bool) or not isinstance(c, (int, float)) or c <= 1):
            _bad(f"{key}.dual_clip", f"must be null or a number > 1 (HoK uses 3), got {c!r}")
        return cls(**ppo)

    def check_resources(self, resources: "ResourceSettings", key: str = "ppo") -> None:
        """Raises unless ``staleness`` is one of STALENESS_VALUES and, when 1, the env runners can sample ahead; and
        unless the env runners record what ``win_advantage_coeff`` reads."""
        if self.staleness not in STALENESS_VALUES or isinstance(self.staleness, bool):
            _bad(f"{key}.staleness", f"must be one of {list(STALENESS_VALUES)}, got {self.staleness!r}")
        if self.win_advantage_coeff and resources.env_runner != "batched":
            _bad(f"{key}.win_advantage_coeff", "> 0 needs resources.env_runner: batched (it records the win "
                                               f"probability of every step), got {resources.env_runner!r}")
        if self.staleness and (resources.env_runner != "batched" or resources.num_env_runners < 1):
            _bad(f"{key}.staleness", "1 (sampling while the learner trains) needs resources.env_runner: batched and "
                                     f"resources.num_env_runners >= 1, got {resources.env_runner!r} and "
                                     f"{resources.num_env_runners}")


@dataclass(frozen=True)
class ResourceSettings(_Section):
    """Processes, threads, CPUs and GPUs of a run."""
    # how env runners sample: "batched" steps all of a runner's games as one batch (one forward per step for every
    # hero); "classic" is RLlib's MultiAgentEnvRunner (connectors and episodes per agent and step)
    env_runner: str = "batched"
    num_env_runners: int = 2  # docs/rllib_notes.md section 6: 2 runners x 8 envs was fastest on 2 cores
    num_envs_per_env_runner: int = 8
    torch_threads: int = 1  # docs/rllib_notes.md section 9: one torch thread per process on small machines
    # torch threads of the learner; 0 = measured: each minibatch runs with 1 thread or all cores, whichever has been
    # faster per row lately (policies/learning/learner_threads.py). PPO here is synchronous, so the env runners idle
    # while the learner updates and all cores are 1.3-1.7x faster on a quiet 2-core machine; when another process
    # holds a core they are 2-4x slower than one thread, and the learner switches to one
    learner_threads: int = 0
    num_cpus: int = 0  # CPUs the embedded Ray advertises; 0 = max(cores, env runners + 1) (app.train.local_num_cpus)
    # GPUs of the learner (0: it runs on the CPU; 1: on one GPU, the env runners staying on the CPU)
    num_gpus_per_learner: int = 0
    # the cluster adds nodes on demand (Ray's autoscaler, deploy/cluster.yaml): a run may then ask for more CPUs and
    # GPUs than the cluster has when it starts (false: the training CLI refuses such a run at once,
    # training/cluster_checks)
    autoscaling: bool = False

    @classmethod
    def from_dict(cls, d, key: str = "resources") -> "ResourceSettings":
        res = cls._checked(d, key)
        for k in ("num_env_runners", "num_cpus", "learner_threads", "num_gpus_per_learner"):
            if res[k] < 0:
                _bad(f"{key}.{k}", f"must be >= 0, got {res[k]}")
        for k in ("num_envs_per_env_runner", "torch_threads"):
            if res[k] < 1:
                _bad(f"{key}.{k}", f"must be >= 1, got {res[k]}")
        if res["env_runner"] not in ENV_RUNNERS:
            _bad(f"{key}.env_runner", f"must be one of {list(ENV_RUNNERS)}, got {res['env_runner']!r}")
        return cls(**res)


@dataclass(frozen=True)
class EvaluationSettings(_Section):
    """Win rates against reference agents, played in the driver (callbacks/evaluation.py)."""
    interval: int = 0  # evaluate every N iterations (0 = off)
    games: int = 4  # games per opponent
    opponents: tuple = ("random",)  # agent names (policies/agents/by_name.AGENTS)
    time_limit_s: float = 600.0
    explore: bool = True  # sample actions as in training (False: the most likely ones)
    replay_every: int = 10  # write every N-th evaluation game of the run as a replay to <trial>/replays/ (0 = none)

    @classmethod
    def from_dict(cls, d, key: str = "evaluation") -> "EvaluationSettings":
        from policies.agents.by_name import AGENTS
        ev = cls._checked(d, key)
        for o in ev["opponents"]:
            if o not in AGENTS:
                _bad(f"{key}.opponents", f"unknown agent {o!r}; allowed: {sorted(AGENTS)}")
        if ev["replay_every"] < 0:
            _bad(f"{key}.replay_every", f"must be >= 0 (0 = no replays), got {ev['replay_every']}")
        return cls(**{**ev, "opponents": tuple(ev["opponents"])})


def _check_outcome_rule(key: str, rule) -> None:
    if rule not in TIME_LIMIT_OUTCOMES:
        _bad(f"{key}.time_limit_outcome", f"must be one of {list(TIME_LIMIT_OUTCOMES)}, got {rule!r}")


@dataclass(frozen=True)
class TrueSkillSettings(_Section):
    """The in-training TrueSkill evaluator (Five app. J; callbacks/trueskill_rating.py)."""
    every: int = 0  # rate "main" every N iterations (0 = off)
    games: int = 8  # games per version (750 in the paper; small on CPU)
    time_limit_s: float = 600.0  # game time limit of the rating games (0 = the mode's default)
    # rated reference pool JSON (app.rate --rate-references); None = the shipped one of the env's mode
    # (in an algorithm config, training/algorithm.travelling_settings: the pool itself, read in by the driver)
    references: str | dict | None = None
    explore: bool = True  # sample actions as in training (False: the most likely ones)
    # of one core: the most the rating games take from training (1.0 = no throttle); unthrottled, they cost a learner
    # that uses every core a third of its speed
    cpu_share: float = 0.1
    # how a capped game counts: "objective" (buildings, then hero kills), "draw" or "points" (the raw return)
    # (policies/league/ratings.TIME_LIMIT_OUTCOMES); the references must have been rated under the same rule
    time_limit_outcome: str = DEFAULT_TIME_LIMIT_OUTCOME

    @classmethod
    def from_dict(cls, d, key: str = "trueskill", mode: str = EnvConfig.mode) -> "TrueSkillSettings":
        """`mode`: the env's, whose shipped reference pool is the default."""
        ts = cls._checked(d, key)
        for k in ("every", "games"):
            if ts[k] < (0 if k == "every" else 1):
                _bad(f"{key}.{k}", f"must be >= {0 if k == 'every' else 1}, got {ts[k]}")
        if ts["time_limit_s"] < 0:
            _bad(f"{key}.time_limit_s", f"must be >= 0, got {ts['time_limit_s']}")
        if not 0.0 < ts["cpu_share"] <= 1.0:
            _bad(f"{key}.cpu_share", f"must be in (0, 1], got {ts['cpu_share']}")
        if ts["references"] is None:
            ts["references"] = os.path.join(REFERENCES_DIR, f"references_{mode}.json")
        if ts["every"] and not isinstance(ts["references"], str) or not os.path.isfile(ts["references"]):
            _bad(f"{key}.references", f"must be a rated reference pool JSON file (python -m app.rate "
                                      f"--rate-references), got {ts['references']!r}")
        _check_outcome_rule(key, ts["time_limit_outcome"])
        if ts["every"]:
            with open(ts["references"]) as f:
                refs = json.load(f)
            try:
                references_outcome_rule(refs, ts["time_limit_outcome"])
            except ValueError as e:
                _bad(f"{key}.time_limit_outcome", f"{e} (file {ts['references']})")
        return cls(**ts)


@dataclass(frozen=True)
class LeagueSettings(_Section):
    """League play against past versions (Five app. N; callbacks/league_play.py)."""
    enabled: bool = False
    past_fraction: float = PAST_OPPONENT_FRACTION  # app. N / Table 2: 20% of games against past versions
    snapshot_every: int = SNAPSHOT_EVERY_ITERATIONS  # app. N: the current agent joins every 10 iterations
    eta: float = QUALITY_LEARNING_RATE  # app. N eq. 14 / Table 2: past opponents learning rate 0.01
    slots: int = 2  # opponent modules per env runner: with 20% past games and 8 envs, ~1.6 are busy on average
    # how a game stopped by the time limit counts (policies/league/ratings.game_score): "objective" (won by the team
    # that destroyed more buildings, then killed more heroes), "draw" (no quality update) or "points" (won by the
    # team with the higher raw return). Capped games are the rule on one machine
    time_limit_outcome: str = DEFAULT_TIME_LIMIT_OUTCOME

    @classmethod
    def from_dict(cls, d, key: str = "league") -> "LeagueSettings":
        league = cls._checked(d, key)
        if not 0.0 <= league["past_fraction"] <= 1.0:
            _bad(f"{key}.past_fraction", f"must be in [0, 1], got {league['past_fraction']}")
        if league["eta"] < 0:
            _bad(f"{key}.eta", f"must be >= 0, got {league['eta']}")
        for k in ("snapshot_every", "slots"):
            if league[k] < 1:
                _bad(f"{key}.{k}", f"must be >= 1, got {league[k]}")
        _check_outcome_rule(key, league["time_limit_outcome"])
        return cls(**league)


@dataclass(frozen=True)
class CurriculumSettings(_Section):
    """A share of games against the current level of a ladder of agents (policies/league/curriculum.py)."""
    share: float = 0.0  # share of games against the current level (0 = no curriculum)
    ladder: tuple = tuple(LADDER)  # weakest first (policies/agents/ladder.py: random, scripted_1 .. scripted_3)
    window: int = CURRICULUM_WINDOW  # the last games against the current level that decide a promotion
    promote_at: float = CURRICULUM_PROMOTE_AT  # win rate over the window that moves up a level
    demote_at: float | None = None  # win rate over the window that moves back down a level (None: never down)
    review: float = CURRICULUM_REVIEW  # share of the curriculum's games against the level below the current one
    sides: tuple = TEAM_NAMES  # the sides "main" plays whose games count toward a move (["radiant"]: its Radiant ones)
    # True: each window of `window` games is judged once, when full, then emptied; False: the window slides by one
    # game and is judged after every game, so a run of luck promotes (docs/results.md, 2026-12-05: at a 42% rate, 75%
    # of 20 sliding games came twice in an hour)
    judge_once: bool = False

    @classmethod
    def from_dict(cls, d, key: str = "opponents.curriculum") -> "CurriculumSettings":
        from policies.league.references import agent_path
        cur = cls._checked(d, key)
        if not 0.0 <= cur["share"] <= 1.0:
            _bad(f"{key}.share", f"must be in [0, 1], got {cur['share']}")
        if cur["share"] > 0:
            if not isinstance(cur["ladder"], list) or not cur["ladder"]:
                _bad(f"{key}.ladder", f"must be a non-empty list of agents, got {cur['ladder']!r}")
            for name in cur["ladder"]:
                try:
                    agent_path(name)
                except ValueError as e:
                    _bad(f"{key}.ladder", str(e))
            if cur["window"] < 1:
                _bad(f"{key}.window", f"must be >= 1, got {cur['window']}")
            if not 0.0 < cur["promote_at"] <= 1.0:
                _bad(f"{key}.promote_at", f"must be in (0, 1], got {cur['promote_at']}")
            d = cur["demote_at"]
            number = isinstance(d, (int, float)) and not isinstance(d, bool)
            if d is not None and not (number and 0.0 <= d < cur["promote_at"]):
                _bad(f"{key}.demote_at", f"must be null (never down) or a number in [0, promote_at = "
                                         f"{cur['promote_at']}), got {d!r}")
            r = cur["review"]
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0.0 <= r < 1.0:
                _bad(f"{key}.review", f"must be a number in [0, 1), got {r!r}")
            _check_sides(f"{key}.sides", cur["sides"])
        return cls(**{**cur, "ladder": tuple(cur["ladder"]), "sides": tuple(cur["sides"])})


def _check_head_weights(key: str, weights) -> None:
    """ppo.entropy_head_weights: null, or a mapping from action heads to numbers >= 0."""
    if weights is None:
        return
    heads = list(ACTION_HEADS)
    if not isinstance(weights, dict) or any(h not in heads for h in weights):
        _bad(key, f"must be null or a mapping from heads in {heads} to weights >= 0, got {weights!r}")
    for h, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0:
            _bad(f"{key}.{h}", f"must be a number >= 0, got {w!r}")


def _check_sides(key: str, sides) -> None:
    """The sides whose games count (the curriculum's, the start stages'): a non-empty list of team names."""
    if not isinstance(sides, (list, tuple)) or not sides or any(x not in TEAM_NAMES for x in sides):
        _bad(key, f"must be a non-empty list of sides from {list(TEAM_NAMES)}, got {sides!r}")


def _check_stage_rule(key: str, section: dict, fixed: dict | None, ladder: tuple) -> None:
    """What Jump-Start RL's and the start stages' sections share: their ``opponent`` is played (one of the run's
    fixed agents or its curriculum's ladder), and a stage moves on at ``promote_at`` in (0, 1] of a ``window`` >= 1."""
    played = sorted(set(fixed or {}) | set(ladder))
    if section["opponent"] not in played:
        _bad(f"{key}.opponent", f"{section['opponent']!r} is not played: it must be one of opponents.fixed or the "
                                f"curriculum's ladder ({played})")
    if section["window"] < 1:
        _bad(f"{key}.window", f"must be >= 1, got {section['window']}")
    if not 0.0 < section["promote_at"] <= 1.0:
        _bad(f"{key}.promote_at", f"must be in (0, 1], got {section['promote_at']}")


@dataclass(frozen=True)
class JumpStartSettings(_Section):
    """Jump-Start RL (policies/league/jump_start.py): in the games against ``opponent``, the ``guide`` agent plays
    "main"'s heroes up to the current stage's hand-over time, and "main" the rest."""
    guide: str | None = None  # an agent name or model:PATH; None: off
    opponent: str = "scripted_3"  # whose games start with the guide: an agent of opponents.fixed or the ladder
    handover_s: tuple = JUMP_START_HANDOVER_S  # the stages' hand-over times in game seconds, latest first
    window: int = JUMP_START_WINDOW  # the last games at the current stage that decide a move
    promote_at: float = JUMP_START_PROMOTE_AT  # win rate over the window that moves the hand-over earlier

    @classmethod
    def from_dict(cls, d, key: str = "opponents.jump_start", fixed: dict | None = None, ladder: tuple = (),
                  time_limit_s: float | None = None) -> "JumpStartSettings":
        """`fixed` and `ladder`: the run's fixed agents and curriculum ladder (the opponent must be played);
        `time_limit_s`: the games' length (every hand-over comes before it; None: not checked)."""
        from policies.league.references import agent_path
        js = cls._checked(d, key)
        if js["guide"] is not None:
            for k in ("guide", "opponent"):
                if not isinstance(js[k], str):
                    _bad(f"{key}.{k}", f"must be an agent name or model:PATH, got {js[k]!r}")
                try:
                    agent_path(js[k])
                except ValueError as e:
                    _bad(f"{key}.{k}", str(e))
            _check_stage_rule(key, js, fixed, ladder)
            h = js["handover_s"]
            if not h or any(isinstance(x, bool) or not isinstance(x, (int, float)) or x < 0 for x in h) \
                    or any(a <= b for a, b in zip(h, h[1:])):
                _bad(f"{key}.handover_s", f"must be a non-empty list of game seconds >= 0, latest first (strictly "
                                          f"decreasing), got {h!r}")
            if time_limit_s is not None and h[0] >= time_limit_s:
                _bad(f"{key}.handover_s", f"a hand-over at or after the games' time limit ({time_limit_s:g} s, "
                                          f"env.time_limit_s) leaves main no steps; got {list(h)}")
        return cls(**{**js, "handover_s": tuple(float(x) for x in js["handover_s"])})


@dataclass(frozen=True)
class StartStagesSettings(_Section):
    """A reverse curriculum over the late starts (policies/league/start_stages.py): the games against ``opponent``
    that start late (env.start_state) start at the current stage, whose values are laid over env.start_state; the
    stage moves on once "main" has won outright ``promote_at`` of its last ``window`` late games there, counting
    those it played as one of ``sides``."""
    # per stage, easiest first, start_state values laid over env.start_state ({defender_dead_s: [10, 20]}); empty: off
    stages: tuple = ()
    opponent: str = "scripted_3"  # whose late games start at the stage: an agent of opponents.fixed or the ladder
    window: int = START_STAGES_WINDOW  # the last late games at the current stage that decide a move
    promote_at: float = START_STAGES_PROMOTE_AT  # share of them won outright that moves the stage on
    sides: tuple = TEAM_NAMES  # the sides "main" plays whose late games count

    @classmethod
    def from_dict(cls, d, key: str = "opponents.start_stages", fixed: dict | None = None, ladder: tuple = (),
                  env: dict | None = None) -> "StartStagesSettings":
        """`fixed` and `ladder`: the run's fixed agents and curriculum ladder (the opponent must be played); `env`:
        the run's checked env section (its start_state, which each stage's values are laid over)."""
        ss = cls._checked(d, key)
        stages = ss["stages"]
        if not isinstance(stages, (list, tuple)) or any(not isinstance(st, dict) for st in stages):
            _bad(f"{key}.stages", f"must be a list of mappings of env.start_state keys (one per stage, easiest "
                                  f"first; {{}}: env.start_state as it is), got {stages!r}")
        if stages:
            env = env or {}
            mode = env.get("mode", EnvConfig.mode)
            base = env.get("start_state") or {}
            if not isinstance(base, dict) or not base.get("share", 0.0) > 0:
                _bad(f"{key}.stages", "move the late starts of env.start_state, and there are none: set "
                                      "env.start_state.share > 0")
            if "remote" in env:
                _bad(f"{key}.stages", "start the local env's games (reset options), not a game server's (env.remote)")
            for i, st in enumerate(stages):
                def bad(k, message, i=i):
                    _bad(f"{key}.stages[{i}]{k.removeprefix('start_state')}", message)
                checked_start_state({**base, **st}, mode, bad)
            _check_stage_rule(key, ss, fixed, ladder)
            _check_sides(f"{key}.sides", ss["sides"])
        return cls(**{**ss, "stages": tuple(dict(st) for st in stages), "sides": tuple(ss["sides"])})


def _checked_time_limits(key: str, limits, fixed: dict, ladder: tuple, env: dict) -> dict:
    """``opponents.time_limit_s`` checked: a mapping of played agents (of `fixed` or the curriculum's `ladder`) to
    game lengths in seconds > 0, on the local env (a game server's games take no reset options)."""
    if not isinstance(limits, dict):
        _bad(key, f"must be a mapping of agent name to game length in seconds, got {limits!r}")
    played = sorted(set(fixed) | set(ladder))
    for name, seconds in limits.items():
        if name not in played:
            _bad(f"{key}.{name}", f"is not played: it must be one of opponents.fixed or the curriculum's ladder "
                                  f"({played})")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or seconds <= 0:
            _bad(f"{key}.{name}", f"must be a number of seconds > 0, got {seconds!r}")
    if limits and "remote" in env:
        _bad(key, "sets the local env's games' length (reset options), not a game server's (env.remote)")
    return {name: float(seconds) for name, seconds in limits.items()}


@dataclass(frozen=True)
class OpponentSettings(_Section):
    """Training opponents beyond self-play (callbacks/opponents.py). Self-play gets the share left by the league
    (league.past_fraction when league.enabled), the fixed agents and the curriculum."""
    # agent (a name of policies/agents/by_name.AGENTS, or model:PATH of a module checkpoint) -> share of games
    fixed: dict = field(default_factory=dict)
    curriculum: CurriculumSettings = field(default_factory=CurriculumSettings)
    jump_start: JumpStartSettings = field(default_factory=JumpStartSettings)
    start_stages: StartStagesSettings = field(default_factory=StartStagesSettings)
    # how a game against a fixed agent stopped by the time limit counts (policies/league/ratings.game_score)
    time_limit_outcome: str = DEFAULT_TIME_LIMIT_OUTCOME
    # the share of the games against fixed agents and the curriculum in which "main" plays Radiant (0.5: sides at
    # random, evenly). A mode with a fixed lineup gives each side its heroes (1v1: Radiant the blademaster), so this
    # also weights which hero "main" trains
    radiant_share: float = 0.5
    # agent (of `fixed` or the curriculum's ladder) -> the length in seconds of the training games against it, in
    # place of env.time_limit_s: the late game trained against the opponents "main" meets it with (a from-scratch run
    # keeps short games on the ladder's lower rungs). Empty: every game env.time_limit_s long
    time_limit_s: dict = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d, key: str = "opponents", league: LeagueSettings = LeagueSettings(),
                  resources: ResourceSettings = ResourceSettings(),
                  time_limit_s: float | None = None, env: dict | None = None) -> "OpponentSettings":
        """`league`, `resources`, `time_limit_s` (the games' length) and `env` (the checked env section): the run's
        (the shares of the league and the opponents sum to at most 1; fixed agents and the curriculum need the batched
        env runner; Jump-Start RL's hand-over comes before the games' end; the start stages move env.start_state's
        late starts)."""
        from policies.league.references import agent_path
        opp = cls._checked(d, key)
        if not isinstance(opp["fixed"], dict):
            _bad(f"{key}.fixed", f"must be a mapping of agent name to share, got {opp['fixed']!r}")
        cur = CurriculumSettings._checked(opp["curriculum"] or {}, f"{key}.curriculum")
        _check_outcome_rule(key, opp["time_limit_outcome"])
        if not 0.0 <= opp["radiant_share"] <= 1.0:  # its type: _checked
            _bad(f"{key}.radiant_share", f"must be in [0, 1] (the share of games main plays as Radiant), "
                                         f"got {opp['radiant_share']}")
        for name, share in opp["fixed"].items():
            if name in (SELF, LEAGUE, CURRICULUM):
                _bad(f"{key}.fixed.{name}", "is not an agent; use league.past_fraction or opponents.curriculum")
            try:
                agent_path(name)
            except ValueError as e:
                _bad(f"{key}.fixed.{name}", str(e))
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
                _bad(f"{key}.fixed.{name}", f"share must be a number in [0, 1], got {share!r}")
        curriculum = CurriculumSettings.from_dict(cur, f"{key}.curriculum")
        limits = _checked_time_limits(f"{key}.time_limit_s", opp["time_limit_s"], opp["fixed"],
                                      curriculum.ladder if curriculum.share > 0 else (), env or {})
        js_opponent = (opp["jump_start"] or {}).get("opponent", JumpStartSettings.opponent)
        jump_start = JumpStartSettings.from_dict(opp["jump_start"] or {}, f"{key}.jump_start", fixed=opp["fixed"],
                                                 time_limit_s=limits.get(js_opponent, time_limit_s),
                                                 ladder=curriculum.ladder if curriculum.share > 0 else ())
        start_stages = StartStagesSettings.from_dict(opp["start_stages"] or {}, f"{key}.start_stages",
                                                     fixed=opp["fixed"], env=env,
                                                     ladder=curriculum.ladder if curriculum.share > 0 else ())
        taken = (league.past_fraction if league.enabled else 0.0) + sum(opp["fixed"].values()) + curriculum.share
        if taken > 1.0 + 1e-9:
            _bad(key, f"the league's past_fraction, the fixed agents' and the curriculum's shares sum to "
                      f"{taken:.3f}; they must leave self-play a share >= 0 (sum <= 1)")
        if (opp["fixed"] or curriculum.share > 0) and resources.env_runner != "batched":
            _bad(key, f"fixed agents and the curriculum play inside the batched env runner; set "
                      f"resources.env_runner: batched (got {resources.env_runner!r})")
        return cls(fixed=dict(opp["fixed"]), curriculum=curriculum, jump_start=jump_start, start_stages=start_stages,
                   time_limit_outcome=opp["time_limit_outcome"], radiant_share=float(opp["radiant_share"]),
                   time_limit_s=limits)

    def shares(self, league: LeagueSettings) -> dict:
        """The probability of each kind of opponent per game (policies/league/curriculum.py): self, league (the
        league's past_fraction), curriculum, or an agent name; only those above 0."""
        shares = {LEAGUE: league.past_fraction if league.enabled else 0.0, **self.fixed,
                  CURRICULUM: self.curriculum.share}
        shares[SELF] = max(0.0, 1.0 - sum(shares.values()))
        return {k: float(v) for k, v in shares.items() if v > 0}


@dataclass(frozen=True)
class InitSettings(_Section):
    """Where "main" starts: pretrained weights, the kickstart loss's teacher, or a whole algorithm checkpoint (a
    restore after model surgery). After validation ``teacher`` is None unless the kickstart loss is on at some point
    of its schedule; with a checkpoint teacher it defaults to ``checkpoint``; paths are absolute."""
    # None: random weights; PATH: an RLModule checkpoint (python -m app.pretrain) or a run's checkpoint, whose module
    # weights (observation statistics included) "main" starts from
    checkpoint: str | None = None
    # the kickstart loss's teacher: a module checkpoint, or an agent's name (scripted_3: labels the student's states
    # in shadow in the env runners, policies/learning/kickstart.py); None: init.checkpoint
    teacher: str | None = None
    # PATH: continue from a whole algorithm checkpoint (weights, optimizer, league pool, iteration), typically one
    # written by model surgery (python -m app.surgery --out PATH) for this run's model and env
    restore: str | None = None
    # with restore: iterations at lr_hold_lr after the restored one
    lr_hold_iterations: int = SURGERY_LR_HOLD_ITERATIONS
    lr_hold_lr: float = SURGERY_LR_HOLD_LR
    # the value warm-up (policies/learning/value_warmup.py) of a run that starts from a checkpoint, a clone or a
    # teacher: for the first value_warmup_iterations iterations only the value head trains, and the env runners act
    # with the starting policy, its weights and observation statistics unchanged (AlphaStar's critic-only start;
    # PIRLNav, Ramrakhya et al. CVPR 2023: fine-tuning a cloned policy with PPO needs a critic-only phase, or the clone
    # collapses first). 0: none, a run from scratch's default
    value_warmup_iterations: int = 0
    # the value head's learning rate in those iterations; None: the scheduled lr. A fine-tuning lr (3e-5) moves a
    # linear head on fixed features little in a few iterations (docs/training.md, the value warm-up's figures)
    value_warmup_lr: float | None = None
    # then the policy's learning rate rises linearly from 0 to the scheduled one over this many iterations (PIRLNav's
    # actor learning-rate warm-up); the value head's stays the scheduled one. 0: the scheduled one at once
    actor_lr_warmup_iterations: int = 0

    @classmethod
    def from_dict(cls, d, key: str = "init", kickstart_coeff: dict | None = None,
                  resources: ResourceSettings = ResourceSettings()) -> "InitSettings":
        """`kickstart_coeff`: the run's schedule of the kickstart loss's weight (a Schedule dict; None: the default,
        off); `resources`: the run's (an agent teacher needs the batched env runner)."""
        from policies.agents.by_name import AGENTS
        from policies.learning.kickstart import kickstart_on
        if kickstart_coeff is None:
            kickstart_coeff = Schedule.parse("kickstart_coeff", SCHEDULE_DEFAULTS["kickstart_coeff"]).to_dict()
        init = cls._checked(d, key)
        kickstarting = kickstart_on(max(y for _, y in kickstart_coeff["points"]))  # at any point of the schedule
        agent = isinstance(init["teacher"], str) and init["teacher"] in AGENTS  # an agent teacher, online
        for k in ("checkpoint",) if agent else ("checkpoint", "teacher"):
            if init[k] is not None and (not isinstance(init[k], str) or not os.path.exists(init[k])):
                _bad(f"{key}.{k}", "must be the path of a module checkpoint (python -m app.pretrain --out PATH) or a "
                                   "run's checkpoint" + (f", or an agent name ({sorted(AGENTS)})" if k == "teacher"
                                                         else "") + f", got {init[k]!r}")
            if init[k] is not None:
                init[k] = os.path.abspath(init[k])
        if init["restore"] is not None:
            if not isinstance(init["restore"], str) or not os.path.isfile(os.path.join(init["restore"],
                                                                                       "algorithm_state.pkl")):
                _bad(f"{key}.restore", f"must be the path of an algorithm checkpoint (a run's checkpoint_N, or python "
                                       f"-m app.surgery --out PATH), got {init['restore']!r}")
            if init["checkpoint"] is not None:
                _bad(f"{key}.restore", "and init.checkpoint both set: restore continues a whole checkpoint (its "
                                       "weights included); set one of them")
            init["restore"] = os.path.abspath(init["restore"])
        if init["lr_hold_iterations"] < 0:
            _bad(f"{key}.lr_hold_iterations", f"must be >= 0, got {init['lr_hold_iterations']}")
        if not 0.0 <= init["lr_hold_lr"] <= 1.0:
            _bad(f"{key}.lr_hold_lr", f"must be in [0, 1], got {init['lr_hold_lr']}")
        for k in ("value_warmup_iterations", "actor_lr_warmup_iterations"):
            if init[k] < 0:
                _bad(f"{key}.{k}", f"must be >= 0 (0: none), got {init[k]}")
        lr = init["value_warmup_lr"]
        if lr is not None and (isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0.0 < lr <= 1.0):
            _bad(f"{key}.value_warmup_lr", f"must be null (the scheduled lr) or a number in (0, 1], got {lr!r}")
        if agent:
            if resources.env_runner != "batched":
                _bad(f"{key}.teacher", f"an agent teacher ({init['teacher']!r}) labels the student's states inside "
                                       f"the batched env runner; set resources.env_runner: batched (got "
                                       f"{resources.env_runner!r})")
            if not kickstarting:
                init["teacher"] = None  # no kickstart loss: the runners label nothing
        else:
            if init["teacher"] is None:
                init["teacher"] = init["checkpoint"]
            if kickstarting and init["teacher"] is None:
                _bad("schedules.kickstart_coeff", "is above 0 but there is no teacher: set init.checkpoint (or "
                                                  "init.teacher)")
            if not kickstarting:
                init["teacher"] = None  # no kickstart loss: the learner loads no teacher
        if init["value_warmup_iterations"] and not any(init[k] for k in ("checkpoint", "restore", "teacher")):
            _bad(f"{key}.value_warmup_iterations",
                 "a value warm-up keeps the starting policy while the value head learns it: set init.checkpoint, "
                 "init.restore, or init.teacher with the kickstart loss on (a run from scratch has no policy to "
                 "keep)")
        return cls(**init)


@dataclass(frozen=True)
class CheckpointSettings(_Section):
    """Tune's checkpoints of a run."""
    frequency: int = 10  # every N iterations (0: none but the last)
    num_to_keep: int = 5  # the latest N; a run compared by windows (bench_learning's erosion) keeps them all
    at_end: bool = True

    @classmethod
    def from_dict(cls, d, key: str = "checkpoint") -> "CheckpointSettings":
        ck = cls._checked(d, key)
        if ck["frequency"] < 0:
            _bad(f"{key}.frequency", f"must be >= 0 (0: only the last checkpoint), got {ck['frequency']}")
        if ck["num_to_keep"] < 1:
            _bad(f"{key}.num_to_keep", f"must be >= 1, got {ck['num_to_keep']}")
        return cls(**ck)


def set_key(raw: dict, dotted: str, value) -> dict:
    """raw["a"]["b"] = value for dotted = "a.b" (creating sections)."""
    parts = dotted.split(".")
    if parts[0] not in TOP_KEYS:
        _bad(parts[0], f"unknown key; allowed: {list(TOP_KEYS)}")
    node = raw
    for p in parts[:-1]:
        if node.get(p) is None:
            node[p] = {}
        if not isinstance(node[p], dict):
            _bad(dotted, f"{p!r} is not a section")
        node = node[p]
    node[parts[-1]] = value
    return raw


def _env_section(raw_env) -> dict:
    """The env section checked: EnvConfig's keys, and the game server's address and client settings."""
    env = dict(raw_env or {})
    client = {k: env.pop(k) for k in ENV_CLIENT_KEYS if k in env}  # RemoteMobaEnv's client settings
    remote = env.pop("remote", None)
    try:
        EnvConfig.from_dict(env)
    except ValueError as e:
        raise ValueError(f"config 'env': {e}") from None
    if remote is not None and not (isinstance(remote, str) or (isinstance(remote, list) and remote and all(
            isinstance(r, str) for r in remote))):
        _bad("env.remote", f"must be 'host:port' or a list of them, got {remote!r}")
    if client and remote is None:
        _bad(f"env.{sorted(client)[0]}", "only applies with env.remote (a game server)")
    for k, v in client.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < (1e-3 if k == "timeout_s" else 0):
            _bad(f"env.{k}", f"must be a {'positive' if k == 'timeout_s' else 'non-negative'} number, got {v!r}")
    return {**env, **client, **({"remote": remote} if remote is not None else {})}


def _schedules_section(sched) -> dict:
    """Every schedule of SCHEDULED as a Schedule dict ({"unit", "points"}), SCHEDULE_DEFAULTS for those missing."""
    if not isinstance(sched, dict):
        _bad("schedules", "must be a mapping")
    unknown = sorted(set(sched) - set(SCHEDULED))
    if unknown:
        _bad(f"schedules.{unknown[0]}", f"unknown schedule; allowed: {list(SCHEDULED)}")
    out = {}
    for name in SCHEDULED:
        s = Schedule.parse(name, sched.get(name, SCHEDULE_DEFAULTS[name]))
        lo, hi = SCHEDULE_RANGES[name]
        for _, y in s.points:
            if not lo <= y <= hi:
                _bad(f"schedules.{name}", f"values must be in [{lo}, {hi}], got {y}")
        out[name] = s.to_dict()
    return out


def _stop_section(stop) -> dict:
    stop = stop or dict(STOP_DEFAULT)
    if not isinstance(stop, dict) or not stop:
        _bad("stop", f"must be a non-empty mapping with keys from {list(STOP_KEYS)}")
    for k, v in stop.items():
        if k not in STOP_KEYS:
            _bad(f"stop.{k}", f"unknown stop criterion; allowed: {list(STOP_KEYS)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            _bad(f"stop.{k}", f"must be a positive number, got {v!r}")
    return dict(stop)


def _sweep_section(sweep, raw: dict) -> dict:
    """The sweep checked: only keys a trial can vary, each value valid in the rest of `raw` (the raw run config)."""
    sweep = sweep or {}
    if not isinstance(sweep, dict):
        _bad("sweep", "must be a mapping of 'section.key' to a list of values")
    for k, vals in sweep.items():
        section, _, name = str(k).partition(".")
        if k in REMOVED_KEYS:
            _bad(f"sweep.{k}", f"removed: {REMOVED_KEYS[k]}")
        if section not in ("schedules", "env", "ppo") or (section == "ppo" and name not in LEARNER_PPO_KEYS):
            _bad(f"sweep.{k}", f"cannot be swept; allowed: schedules.*, env.* and "
                               f"{', '.join('ppo.' + x for x in LEARNER_PPO_KEYS)}")
        if not isinstance(vals, list) or not vals:
            _bad(f"sweep.{k}", f"must be a non-empty list of values, got {vals!r}")
        for v in vals:
            RunSettings.from_dict(set_key(copy.deepcopy({x: y for x, y in raw.items() if x != "sweep"}), k, v))
    return dict(sweep)


@dataclass(frozen=True)
class RunSettings(_Section):
    """A whole run config, validated (module docstring)."""
    name: str = "run"  # results/<name>
    seed: int = 0
    env: dict = field(default_factory=dict)  # EnvConfig keys (+ remote, timeout_s, retries)
    reward: RewardSettings = field(default_factory=RewardSettings)
    model: dict = field(default_factory=dict)  # FiveModelConfig keys
    ppo: PPOSettings = field(default_factory=PPOSettings)
    schedules: dict = field(default_factory=lambda: _schedules_section({}))  # name -> Schedule dict
    resources: ResourceSettings = field(default_factory=ResourceSettings)
    evaluation: EvaluationSettings = field(default_factory=EvaluationSettings)
    trueskill: TrueSkillSettings = field(default_factory=TrueSkillSettings)
    league: LeagueSettings = field(default_factory=LeagueSettings)
    opponents: OpponentSettings = field(default_factory=OpponentSettings)
    init: InitSettings = field(default_factory=InitSettings)
    stop: dict = field(default_factory=lambda: dict(STOP_DEFAULT))  # criterion (STOP_KEYS) -> value
    checkpoint: CheckpointSettings = field(default_factory=CheckpointSettings)
    storage_path: str = "results"
    sweep: dict = field(default_factory=dict)  # "section.key" -> [values]

    @classmethod
    def from_dict(cls, raw, key: str = "") -> "RunSettings":
        """The settings of a raw run config (a YAML mapping), defaults filled in, or a ValueError naming the key.
        `key` is unused: the sections' keys are the top-level ones."""
        if not isinstance(raw, dict):
            raise ValueError("config: the YAML file must contain a mapping")
        unknown = sorted(set(raw) - set(TOP_KEYS))
        if unknown:
            _bad(unknown[0], f"unknown key; allowed: {list(TOP_KEYS)}")
        name, seed, storage_path = raw.get("name", "run"), raw.get("seed", 0), raw.get("storage_path", "results")
        if not isinstance(name, str) or not name or "/" in name:
            _bad("name", f"must be a non-empty string without '/', got {name!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            _bad("seed", f"must be an int, got {seed!r}")
        env = _env_section(raw.get("env"))
        reward = RewardSettings.from_dict(raw.get("reward") or {})
        model = raw.get("model") or {}
        try:
            FiveModelConfig.from_dict(model)
        except ValueError as e:
            raise ValueError(f"config 'model': {e}") from None
        ppo = PPOSettings.from_dict(raw.get("ppo") or {})
        schedules = _schedules_section(raw.get("schedules") or {})
        if "remote" in env:  # a game server's games take the env config at their creation, and no setter after it
            for name in ENV_GAME_SCHEDULED:
                if len({y for _, y in schedules[name]["points"]}) > 1:
                    _bad(f"schedules.{name}", "changes during the run, and a game server's games (env.remote) keep "
                                              "the value they were created with: give it one number")
        resources = ResourceSettings.from_dict(raw.get("resources") or {})
        ppo.check_resources(resources)
        evaluation = EvaluationSettings.from_dict(raw.get("evaluation") or {})
        league = LeagueSettings.from_dict(raw.get("league") or {})
        time_limit_s = float(env.get("time_limit_s") or DEFAULT_TIME_LIMIT_S[env.get("mode", EnvConfig.mode)])
        opponents = OpponentSettings.from_dict(raw.get("opponents") or {}, league=league, resources=resources,
                                               time_limit_s=time_limit_s, env=env)
        from policies.learning.kickstart import agent_teacher
        init = InitSettings.from_dict(raw.get("init") or {}, kickstart_coeff=schedules["kickstart_coeff"],
                                      resources=resources)
        if ppo.kickstart_class_weight_power and init.teacher is not None and not agent_teacher(init.teacher):
            _bad("ppo.kickstart_class_weight_power", "weighs the labels of an agent teacher (init.teacher: an agent "
                                                     f"name); this run's teacher is a module ({init.teacher!r})")
        trueskill = TrueSkillSettings.from_dict(raw.get("trueskill") or {}, mode=env.get("mode", EnvConfig.mode))
        stop = _stop_section(raw.get("stop"))
        checkpoint = CheckpointSettings.from_dict(raw.get("checkpoint") or {})
        sweep = _sweep_section(raw.get("sweep"), raw)
        if not isinstance(storage_path, str) or not storage_path:
            _bad("storage_path", f"must be a path or a URI (s3://bucket/path, gs://..., file:///...), got "
                                 f"{storage_path!r}")
        return cls(name=name, seed=seed, env=env, reward=reward, model=dict(model), ppo=ppo, schedules=schedules,
                   resources=resources, evaluation=evaluation, trueskill=trueskill, league=league,
                   opponents=opponents, init=init, stop=stop, checkpoint=checkpoint, storage_path=storage_path,
                   sweep=sweep)

    def replace(self, **changes) -> "RunSettings":
        """A copy with some top-level fields changed (the training CLI's absolute storage path, a new run name)."""
        return dataclasses.replace(self, **changes)

    @property
    def frameskip(self) -> int:
        """The env's frameskip (the engine's default when the config leaves it out)."""
        return int(self.env.get("frameskip", DEFAULT_FRAMESKIP))

    def initial_schedule_values(self) -> dict:
        """The schedules' values at iteration 0 (training/schedules.schedule_values): what the env, the learner and
        the kickstart start from."""
        return schedule_values(self.schedules, 0, 0, self.frameskip)


_BUILT = weakref.WeakKeyDictionary()  # AlgorithmConfig -> (its settings dict, the RunSettings rebuilt from it)


def run_settings(config) -> RunSettings:
    """The run's settings of an AlgorithmConfig built by training.algorithm.build_algo_config (its
    ``learner_config_dict[SETTINGS_KEY]``, a sweep's values resolved by Tune; the TrueSkill reference pool read in),
    rebuilt once per config object."""
    d = (config.learner_config_dict or {}).get(SETTINGS_KEY)
    if d is None:
        raise ValueError(f"the algorithm config carries no run settings (learner_config_dict[{SETTINGS_KEY!r}]): "
                         "build it with training.algorithm.build_algo_config")
    try:
        built = _BUILT.get(config)
    except TypeError:  # an object without weak references (a test's stand-in): no cache
        return RunSettings.from_validated(d)
    if built is None or built[0] is not d:
        built = _BUILT[config] = (d, RunSettings.from_validated(d))
    return built[1]
