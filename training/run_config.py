"""The training run's configuration: YAML sections, their defaults (the paper's numbers, cited) and validation.

A run config (tune_configs/*.yaml) has these sections; every key is optional and falls back to the defaults below::

    name: smoke                      # run name (results/<name>)
    seed: 0
    env: {...}                       # moba.env.config.EnvConfig keys (+ "remote": "host:port" or a list)
    reward: {zero_sum, time_decay, normalize}   # training-side post-processing (app. G, Table 2 footnote c);
                                     # team spirit is a schedule
    model: {...}                     # policies.model.five_module.FiveModelConfig (network sizes)
    ppo: {...}                       # PPO_DEFAULTS
    schedules: {team_spirit, lr, entropy_coeff, gae_horizon_s, kickstart_coeff}   # callbacks.schedules specs
    resources: {...}                 # RESOURCE_DEFAULTS
    evaluation: {...}                # EVALUATION_DEFAULTS (win rates against reference agents, in the driver)
    trueskill: {...}                 # TRUESKILL_DEFAULTS (the in-training TrueSkill evaluator, app. J)
    league: {...}                    # LEAGUE_DEFAULTS (past opponents, app. N)
    opponents: {fixed, curriculum, time_limit_outcome}   # OPPONENTS_DEFAULTS (fixed agents, a ladder curriculum)
    init: {checkpoint, teacher, restore, lr_hold_iterations, lr_hold_lr}   # INIT_DEFAULTS (start from pretrained
                                     # weights; the kickstart loss's teacher; continue after model surgery)
    stop: {...}                      # any of training_iteration, time_total_s, num_env_steps_sampled_lifetime,
                                     # timestamp (a wall-clock deadline)
    checkpoint: {frequency, num_to_keep, at_end}
    storage_path: results          # a local path, or a URI every node of a cluster reaches (s3://, gs://, file://)
    sweep: {"section.key": [values, ...]}   # a Tune grid search

A malformed config fails here, before Ray starts, with a message that names the key.
"""
from __future__ import annotations

import copy
import json
import os

import yaml
from ray.rllib.utils.annotations import override
from ray.tune.stopper import Stopper  # Tune is imported anyway (through RLlib); Ray is not started

from moba.env.config import EnvConfig
from moba.env.rewards import TEAM_SPIRIT
from moba.game.constants import DEFAULT_FRAMESKIP
from policies.agents.ladder import LADDER
from policies.league.curriculum import CURRICULUM, CURRICULUM_PROMOTE_AT, CURRICULUM_WINDOW, LEAGUE, SELF
from policies.league.pool import PAST_OPPONENT_FRACTION, QUALITY_LEARNING_RATE, SNAPSHOT_EVERY_ITERATIONS
from policies.league.ratings import DEFAULT_TIME_LIMIT_OUTCOME, TIME_LIMIT_OUTCOMES
from policies.league.references import references_outcome_rule
from policies.learning.five_learner import AUX_WIN_COEFF
from policies.model.five_module import FiveModelConfig
from training.schedules import SCHEDULED, Schedule, schedule_values

# ---- defaults (Five Table 2, "Baseline" column, unless noted) ---------------------------------------------------
PPO_DEFAULTS = {
    "train_batch_size": 4000,  # env steps per iteration (the paper's 983,040 samples don't fit a laptop)
    "minibatch_size": 4000,  # agent steps per SGD minibatch (at most train_batch_size)
    "num_epochs": 1,  # sample reuse ~1 (Table 2: 1.0 <-> 1.1)
    "gae_lambda": 0.95,  # Table 2: GAE lambda
    "clip_param": 0.2,  # Table 2: PPO clipping
    "vf_loss_coeff": 1.0,  # Table 2: value loss weight
    "vf_clip_param": 100.0,
    "grad_clip": 5.0,
    "use_kl_loss": False,  # the paper's PPO has no KL penalty
    "dual_clip": None,  # HoK app. G: c = 3 gives dual-clip PPO ("... are set as 0.2 and 3")
    "aux_win_coeff": AUX_WIN_COEFF,  # app. D: the win-probability head trains with a very small weight (0.01)
    # what the entropy bonus (schedules.entropy_coeff) rewards. "action": the entropy of the whole action, each
    # parameter head's counted where the sampled primary reads it (policies/model/action_distribution.py): its
    # gradient also
    # moves the primary toward the primaries that read more parameters (a move's offsets add up to 2 ln 9 = 4.4 nats).
    # "heads": each head's own entropy, a parameter head's weighted by the (constant) probability that a primary reading
    # it is picked, so the bonus keeps every head from collapsing without choosing the primary. Measured in 1v1
    # (README "Learning to win", runs 12 and 13): it keeps the primary from collapsing in the first minute, and changed
    # neither a scratch run's outcome nor a kickstarted student's drift
    "entropy_bonus": "action",
    "adam_beta1": 0.9,  # Table 2
    "adam_beta2": 0.999,  # Table 2
    # app. M staleness: versions between the weights that sampled a batch and those that train on it. 0: RLlib's
    # synchronous PPO (sample, then train); 1: the env runners sample the next batch while the learner trains on this
    # one (OpenAI Five's rollout workers never wait for the optimizer), so neither waits for the other. Needs the
    # batched env runner on at least one remote env runner.
    "staleness": 0,
}
SCHEDULE_DEFAULTS = {
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
}
# Five app. B "Smooth Training Restart": after surgery, "a learning rate of 0 for the first several hours of
# training" while Adam's moments adjust and the rollouts reach steady state. Several hours of OpenAI Five are a few
# iterations here (a CPU run makes 30-90 iterations an hour)
SURGERY_LR_HOLD_ITERATIONS = 5
SURGERY_LR_HOLD_LR = 0.0
INIT_DEFAULTS = {  # where "main" starts
    "checkpoint": None,  # None: random weights; PATH: an RLModule checkpoint (python -m app.pretrain) or a run's
    # checkpoint, whose module weights (observation statistics included) "main" starts from
    # the kickstart loss's teacher: a module checkpoint, or an agent's name (scripted_3: labels the student's states
    # in shadow in the env runners, policies/learning/kickstart.py); None: init.checkpoint
    "teacher": None,
    # PATH: continue from a whole algorithm checkpoint (weights, optimizer, league pool, iteration), typically one
    # written by model surgery (python -m app.surgery --out PATH) for this run's model and env
    "restore": None,
    "lr_hold_iterations": SURGERY_LR_HOLD_ITERATIONS,  # with restore: iterations at lr_hold_lr after the restored one
    "lr_hold_lr": SURGERY_LR_HOLD_LR,
}
REWARD_DEFAULTS = {
    "zero_sum": True, "time_decay": True,  # app. G
    "normalize": True,  # Table 2 footnote c: rewards divided by a running std (of the discounted returns)
}
# options the results rejected, removed; a config that still sets one is refused with the reason
REMOVED_KEYS = {
    "ppo.kickstart_class_weight_power": "the online teacher's loss weighs every step alike: class-weighted, the "
                                        "student copied the rare actions and won fewer games (README \"Learning to "
                                        "win\", run 5)",
    "ppo.kickstart_params_floor": "the kickstart loss has one weight, schedules.kickstart_coeff: kept on the parameter "
                                  "heads only, PPO dropped the attacks (README \"Learning to win\", runs 15, 16)",
}
STALENESS_VALUES = (0, 1)  # ppo.staleness
ENTROPY_BONUSES = ("action", "heads")  # ppo.entropy_bonus
# the ppo keys the learner reads from its config dict (training/algorithm.py), which a sweep can therefore vary per
# trial
# (the others are RLlib's own training settings)
LEARNER_PPO_KEYS = ("dual_clip", "aux_win_coeff", "entropy_bonus", "adam_beta1", "adam_beta2")
ENV_RUNNERS = ("batched", "classic")  # training/batched_env_runner.py, or RLlib's MultiAgentEnvRunner
RESOURCE_DEFAULTS = {
    # how env runners sample: "batched" steps all of a runner's games as one batch (one forward per step for every
    # hero); "classic" is RLlib's MultiAgentEnvRunner (connectors and episodes per agent and step)
    "env_runner": "batched",
    "num_env_runners": 2,  # docs/rllib_notes.md section 6: 2 runners x 8 envs was fastest on 2 cores
    "num_envs_per_env_runner": 8,
    "torch_threads": 1,  # docs/rllib_notes.md section 9: one torch thread per process on small machines
    # torch threads of the learner; 0 = measured: each minibatch runs with 1 thread or all cores, whichever has been
    # faster per row lately (policies/learning/learner_threads.py). PPO here is synchronous, so the env runners idle
    # while the
    # learner updates and all cores are 1.3-1.7x faster on a quiet 2-core machine; when another process holds a core
    # they are 2-4x slower than one thread, and the learner switches to one
    "learner_threads": 0,
    "num_cpus": 0,  # CPUs the embedded Ray advertises; 0 = max(cores, env runners + 1) (app.train.local_num_cpus)
    # GPUs of the learner (0: it runs on the CPU; 1: on one GPU, the env runners staying on the CPU)
    "num_gpus_per_learner": 0,
    # the cluster adds nodes on demand (Ray's autoscaler, deploy/cluster.yaml): a run may then ask for more CPUs and
    # GPUs than the cluster has when it starts (false: the training CLI refuses such a run at once,
    # training/cluster_checks)
    "autoscaling": False,
}
EVALUATION_DEFAULTS = {"interval": 0, "games": 4, "opponents": ["random"], "time_limit_s": 600.0,
                       "explore": True,  # sample actions as in training (False: the most likely ones)
                       # write every N-th evaluation game of the run as a replay to <trial>/replays/ (0 = none)
                       "replay_every": 10}
TRUESKILL_DEFAULTS = {  # the in-training TrueSkill evaluator (Five app. J; callbacks/trueskill_rating.py)
    "every": 0,  # rate "main" every N iterations (0 = off)
    "games": 8,  # games per version (750 in the paper; small on CPU)
    "time_limit_s": 600.0,  # game time limit of the rating games (0 = the mode's default)
    "references": None,  # rated reference pool JSON (app.rate --rate-references); None = the shipped one
    "explore": True,  # sample actions as in training (False: the most likely ones)
    # of one core: the most the rating games take from training (1.0 = no throttle); unthrottled, they cost a learner
    # that uses every core a third of its speed
    "cpu_share": 0.1,
    # how a capped game counts: "draw" or "points" (policies/ratings.TIME_LIMIT_OUTCOMES)
    "time_limit_outcome": DEFAULT_TIME_LIMIT_OUTCOME,
}
LEAGUE_DEFAULTS = {  # league play against past versions (Five app. N; callbacks/league_play.py)
    "enabled": False,
    "past_fraction": PAST_OPPONENT_FRACTION,  # app. N / Table 2: 20% of games against past versions
    "snapshot_every": SNAPSHOT_EVERY_ITERATIONS,  # app. N: the current agent joins every 10 iterations
    "eta": QUALITY_LEARNING_RATE,  # app. N eq. 14 / Table 2: past opponents learning rate 0.01
    "slots": 2,  # opponent modules per env runner: with 20% past games and 8 envs, ~1.6 are busy on average
    # how a game stopped by the time limit counts (policies/ratings.game_score): "draw" (no quality update) or
    # "points" (won by the team with the higher raw return). Capped games are the rule on one machine
    "time_limit_outcome": DEFAULT_TIME_LIMIT_OUTCOME,
}
OPPONENTS_DEFAULTS = {  # training opponents beyond self-play (callbacks/opponents.py). Self-play gets the
    # share left by the league (league.past_fraction when league.enabled), the fixed agents and the curriculum
    "fixed": {},  # agent (a name of policies/agents.AGENTS, or model:PATH of a module checkpoint) -> share of games
    "curriculum": {},  # CURRICULUM_DEFAULTS: a share of games against the current level of a ladder of agents
    # how a game against a fixed agent stopped by the time limit counts (policies/ratings.game_score)
    "time_limit_outcome": DEFAULT_TIME_LIMIT_OUTCOME,
}
CURRICULUM_DEFAULTS = {
    "share": 0.0,  # share of games against the current level (0 = no curriculum)
    "ladder": list(LADDER),  # weakest first (policies/agents/ladder.py: random, scripted_1 .. scripted_3)
    "window": CURRICULUM_WINDOW,  # the last games against the current level that decide a promotion
    "promote_at": CURRICULUM_PROMOTE_AT,  # win rate over the window that moves up a level
    "demote_at": None,  # win rate over the window that moves back down a level (None: never down)
}
CHECKPOINT_DEFAULTS = {"frequency": 10, "num_to_keep": 5, "at_end": True}
REFERENCES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tune_configs")
# timestamp: a wall-clock deadline (Unix seconds; Tune's time_total_s counts only the iterations' own time, not the
# evaluation games, checkpoints and Ray's start-up between them)
STOP_KEYS = ("training_iteration", "time_total_s", "num_env_steps_sampled_lifetime", "timestamp")
TOP_KEYS = ("name", "seed", "env", "reward", "model", "ppo", "schedules", "resources", "evaluation", "trueskill",
            "league", "opponents", "init", "stop", "checkpoint", "storage_path", "sweep")


def _bad(key, msg):
    raise ValueError(f"config {key!r}: {msg}")


def _check_section(name, given, defaults):
    if not isinstance(given, dict):
        _bad(name, f"must be a mapping, got {type(given).__name__}")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        key = f"{name}.{unknown[0]}"
        _bad(key, f"{'removed: ' + REMOVED_KEYS[key] if key in REMOVED_KEYS else 'unknown key'}; allowed: "
                  f"{sorted(defaults)}")
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
            ok = True  # a None default: the caller checks the value
        if not ok:
            _bad(f"{name}.{k}", f"must be {type(d).__name__}, got {v!r}")
        out[k] = v
    return out


def validate(raw: dict) -> dict:
    """Returns the full config (defaults filled in) or raises ValueError naming the key."""
    if not isinstance(raw, dict):
        raise ValueError("config: the YAML file must contain a mapping")
    unknown = sorted(set(raw) - set(TOP_KEYS))
    if unknown:
        _bad(unknown[0], f"unknown key; allowed: {list(TOP_KEYS)}")
    cfg = {"name": raw.get("name", "run"), "seed": raw.get("seed", 0),
           "storage_path": raw.get("storage_path", "results")}
    if not isinstance(cfg["name"], str) or not cfg["name"] or "/" in cfg["name"]:
        _bad("name", f"must be a non-empty string without '/', got {cfg['name']!r}")
    if isinstance(cfg["seed"], bool) or not isinstance(cfg["seed"], int):
        _bad("seed", f"must be an int, got {cfg['seed']!r}")
    env = dict(raw.get("env") or {})
    client = {k: env.pop(k) for k in ("timeout_s", "retries") if k in env}  # RemoteMobaEnv's client settings
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
    cfg["env"] = {**env, **client, **({"remote": remote} if remote is not None else {})}
    cfg["reward"] = _check_section("reward", raw.get("reward") or {}, REWARD_DEFAULTS)
    model = raw.get("model") or {}
    try:
        FiveModelConfig.from_dict(model)
    except ValueError as e:
        raise ValueError(f"config 'model': {e}") from None
    cfg["model"] = dict(model)
    ppo = _check_section("ppo", raw.get("ppo") or {}, PPO_DEFAULTS)
    for k in ("train_batch_size", "minibatch_size", "num_epochs"):
        if ppo[k] < 1:
            _bad(f"ppo.{k}", f"must be >= 1, got {ppo[k]}")
    if not 0.0 <= ppo["gae_lambda"] <= 1.0:
        _bad("ppo.gae_lambda", f"must be in [0, 1], got {ppo['gae_lambda']}")
    for k in ("adam_beta1", "adam_beta2"):
        if not 0.0 <= ppo[k] < 1.0:
            _bad(f"ppo.{k}", f"must be in [0, 1) (Adam's betas), got {ppo[k]}")
    if ppo["minibatch_size"] > ppo["train_batch_size"]:
        _bad("ppo.minibatch_size", f"must be <= ppo.train_batch_size ({ppo['train_batch_size']}), got "
                                   f"{ppo['minibatch_size']}")
    if ppo["entropy_bonus"] not in ENTROPY_BONUSES:
        _bad("ppo.entropy_bonus", f"must be one of {list(ENTROPY_BONUSES)}, got {ppo['entropy_bonus']!r}")
    if ppo["clip_param"] <= 0:
        _bad("ppo.clip_param", f"must be > 0, got {ppo['clip_param']}")
    if ppo["dual_clip"] is not None and (isinstance(ppo["dual_clip"], bool) or
                                         not isinstance(ppo["dual_clip"], (int, float)) or ppo["dual_clip"] <= 1):
        _bad("ppo.dual_clip", f"must be null or a number > 1 (HoK uses 3), got {ppo['dual_clip']!r}")
    cfg["ppo"] = ppo
    sched = raw.get("schedules") or {}
    if not isinstance(sched, dict):
        _bad("schedules", "must be a mapping")
    unknown = sorted(set(sched) - set(SCHEDULED))
    if unknown:
        _bad(f"schedules.{unknown[0]}", f"unknown schedule; allowed: {list(SCHEDULED)}")
    cfg["schedules"] = {}
    for name in SCHEDULED:
        s = Schedule.parse(name, sched.get(name, SCHEDULE_DEFAULTS[name]))
        lo, hi = {"team_spirit": (0.0, 1.0), "lr": (0.0, 1.0), "entropy_coeff": (0.0, 10.0),
                  "gae_horizon_s": (0.2, 1e5), "kickstart_coeff": (0.0, 100.0), "new_action_share": (0.0, 1.0)}[name]
        for _, y in s.points:
            if not lo <= y <= hi:
                _bad(f"schedules.{name}", f"values must be in [{lo}, {hi}], got {y}")
        cfg["schedules"][name] = s.to_dict()
    cfg["resources"] = _check_section("resources", raw.get("resources") or {}, RESOURCE_DEFAULTS)
    for k in ("num_env_runners", "num_cpus", "learner_threads", "num_gpus_per_learner"):
        if cfg["resources"][k] < 0:
            _bad(f"resources.{k}", f"must be >= 0, got {cfg['resources'][k]}")
    for k in ("num_envs_per_env_runner", "torch_threads"):
        if cfg["resources"][k] < 1:
            _bad(f"resources.{k}", f"must be >= 1, got {cfg['resources'][k]}")
    if cfg["resources"]["env_runner"] not in ENV_RUNNERS:
        _bad("resources.env_runner", f"must be one of {list(ENV_RUNNERS)}, got {cfg['resources']['env_runner']!r}")
    if ppo["staleness"] not in STALENESS_VALUES or isinstance(ppo["staleness"], bool):
        _bad("ppo.staleness", f"must be one of {list(STALENESS_VALUES)}, got {ppo['staleness']!r}")
    if ppo["staleness"] and (cfg["resources"]["env_runner"] != "batched" or cfg["resources"]["num_env_runners"] < 1):
        _bad("ppo.staleness", "1 (sampling while the learner trains) needs resources.env_runner: batched and "
                              f"resources.num_env_runners >= 1, got {cfg['resources']['env_runner']!r} and "
                              f"{cfg['resources']['num_env_runners']}")
    ev = _check_section("evaluation", raw.get("evaluation") or {}, EVALUATION_DEFAULTS)
    from policies.agents.by_name import AGENTS
    for o in ev["opponents"]:
        if o not in AGENTS:
            _bad("evaluation.opponents", f"unknown agent {o!r}; allowed: {sorted(AGENTS)}")
    if ev["replay_every"] < 0:
        _bad("evaluation.replay_every", f"must be >= 0 (0 = no replays), got {ev['replay_every']}")
    cfg["evaluation"] = ev
    cfg["league"] = _validate_league(raw.get("league") or {})
    cfg["opponents"] = _validate_opponents(raw.get("opponents") or {}, cfg["league"], cfg["resources"])
    cfg["init"] = _validate_init(raw.get("init") or {}, cfg["schedules"]["kickstart_coeff"], cfg["resources"])
    cfg["trueskill"] = _validate_trueskill(raw.get("trueskill") or {}, cfg["env"].get("mode", EnvConfig.mode))
    stop = raw.get("stop") or {"training_iteration": 10}
    if not isinstance(stop, dict) or not stop:
        _bad("stop", f"must be a non-empty mapping with keys from {list(STOP_KEYS)}")
    for k, v in stop.items():
        if k not in STOP_KEYS:
            _bad(f"stop.{k}", f"unknown stop criterion; allowed: {list(STOP_KEYS)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            _bad(f"stop.{k}", f"must be a positive number, got {v!r}")
    cfg["stop"] = dict(stop)
    cfg["checkpoint"] = _check_section("checkpoint", raw.get("checkpoint") or {}, CHECKPOINT_DEFAULTS)
    sweep = raw.get("sweep") or {}
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
            validate(set_key(copy.deepcopy({x: y for x, y in raw.items() if x != "sweep"}), k, v))
    cfg["sweep"] = dict(sweep)
    if not isinstance(cfg["storage_path"], str) or not cfg["storage_path"]:
        _bad("storage_path", f"must be a path or a URI (s3://bucket/path, gs://..., file:///...), got "
                             f"{cfg['storage_path']!r}")
    return cfg


def _validate_league(given: dict) -> dict:
    league = _check_section("league", given, LEAGUE_DEFAULTS)
    if not 0.0 <= league["past_fraction"] <= 1.0:
        _bad("league.past_fraction", f"must be in [0, 1], got {league['past_fraction']}")
    if league["eta"] < 0:
        _bad("league.eta", f"must be >= 0, got {league['eta']}")
    for k in ("snapshot_every", "slots"):
        if league[k] < 1:
            _bad(f"league.{k}", f"must be >= 1, got {league[k]}")
    _check_outcome_rule("league", league["time_limit_outcome"])
    return league


def run_frameskip(cfg: dict) -> int:
    """The frameskip of a validated run config's env (the engine's default when the config leaves it out)."""
    return int(cfg["env"].get("frameskip", DEFAULT_FRAMESKIP))


def initial_schedule_values(cfg: dict) -> dict:
    """The schedules' values at the start of a validated run config (callbacks/schedules.schedule_values at
    iteration 0): what the env, the learner and the kickstart start from."""
    return schedule_values(cfg["schedules"], 0, 0, run_frameskip(cfg))


def opponent_shares(opponents: dict, league: dict) -> dict:
    """The probability of each kind of opponent per game (policies/league/curriculum.py): self, league (the league's
    past_fraction), curriculum, or an agent name; only those above 0."""
    shares = {LEAGUE: league["past_fraction"] if league["enabled"] else 0.0, **opponents["fixed"],
              CURRICULUM: opponents["curriculum"]["share"]}
    shares[SELF] = max(0.0, 1.0 - sum(shares.values()))
    return {k: float(v) for k, v in shares.items() if v > 0}


def _validate_opponents(given: dict, league: dict, resources: dict) -> dict:
    from policies.league.references import agent_path
    opp = _check_section("opponents", given, OPPONENTS_DEFAULTS)
    if not isinstance(opp["fixed"], dict):
        _bad("opponents.fixed", f"must be a mapping of agent name to share, got {opp['fixed']!r}")
    opp["curriculum"] = _check_section("opponents.curriculum", opp["curriculum"] or {}, CURRICULUM_DEFAULTS)
    cur = opp["curriculum"]
    _check_outcome_rule("opponents", opp["time_limit_outcome"])
    for name, share in opp["fixed"].items():
        if name in (SELF, LEAGUE, CURRICULUM):
            _bad(f"opponents.fixed.{name}", "is not an agent; use league.past_fraction or opponents.curriculum")
        try:
            agent_path(name)
        except ValueError as e:
            _bad(f"opponents.fixed.{name}", str(e))
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
            _bad(f"opponents.fixed.{name}", f"share must be a number in [0, 1], got {share!r}")
    if not 0.0 <= cur["share"] <= 1.0:
        _bad("opponents.curriculum.share", f"must be in [0, 1], got {cur['share']}")
    if cur["share"] > 0:
        if not isinstance(cur["ladder"], list) or not cur["ladder"]:
            _bad("opponents.curriculum.ladder", f"must be a non-empty list of agents, got {cur['ladder']!r}")
        for name in cur["ladder"]:
            try:
                agent_path(name)
            except ValueError as e:
                _bad("opponents.curriculum.ladder", str(e))
        if cur["window"] < 1:
            _bad("opponents.curriculum.window", f"must be >= 1, got {cur['window']}")
        if not 0.0 < cur["promote_at"] <= 1.0:
            _bad("opponents.curriculum.promote_at", f"must be in (0, 1], got {cur['promote_at']}")
        d = cur["demote_at"]
        number = isinstance(d, (int, float)) and not isinstance(d, bool)
        if d is not None and not (number and 0.0 <= d < cur["promote_at"]):
            _bad("opponents.curriculum.demote_at", f"must be null (never down) or a number in [0, promote_at = "
                 f"{cur['promote_at']}), got {d!r}")
    taken = (league["past_fraction"] if league["enabled"] else 0.0) + sum(opp["fixed"].values()) + cur["share"]
    if taken > 1.0 + 1e-9:
        _bad("opponents", f"the league's past_fraction, the fixed agents' and the curriculum's shares sum to "
                          f"{taken:.3f}; they must leave self-play a share >= 0 (sum <= 1)")
    if (opp["fixed"] or cur["share"] > 0) and resources["env_runner"] != "batched":
        _bad("opponents", f"fixed agents and the curriculum play inside the batched env runner; set "
                          f"resources.env_runner: batched (got {resources['env_runner']!r})")
    return opp


def _validate_init(given: dict, kickstart: dict, resources: dict) -> dict:
    from policies.agents.by_name import AGENTS
    from policies.learning.kickstart import kickstart_on
    init = _check_section("init", given, INIT_DEFAULTS)
    kickstarting = kickstart_on(max(y for _, y in kickstart["points"]))  # at any point of the schedule
    agent = isinstance(init["teacher"], str) and init["teacher"] in AGENTS  # an agent teacher, online
    for k in ("checkpoint",) if agent else ("checkpoint", "teacher"):
        if init[k] is not None and (not isinstance(init[k], str) or not os.path.exists(init[k])):
            _bad(f"init.{k}", "must be the path of a module checkpoint (python -m app.pretrain --out PATH) or a "
                              "run's checkpoint" + (f", or an agent name ({sorted(AGENTS)})" if k == "teacher"
                                                     else "") + f", got {init[k]!r}")
        if init[k] is not None:
            init[k] = os.path.abspath(init[k])
    if init["restore"] is not None:
        if not isinstance(init["restore"], str) or not os.path.isfile(os.path.join(init["restore"],
                                                                                   "algorithm_state.pkl")):
            _bad("init.restore", f"must be the path of an algorithm checkpoint (a run's checkpoint_N, or python -m "
                                 f"app.surgery --out PATH), got {init['restore']!r}")
        if init["checkpoint"] is not None:
            _bad("init.restore", "and init.checkpoint both set: restore continues a whole checkpoint (its weights "
                                 "included); set one of them")
        init["restore"] = os.path.abspath(init["restore"])
    if init["lr_hold_iterations"] < 0:
        _bad("init.lr_hold_iterations", f"must be >= 0, got {init['lr_hold_iterations']}")
    if not 0.0 <= init["lr_hold_lr"] <= 1.0:
        _bad("init.lr_hold_lr", f"must be in [0, 1], got {init['lr_hold_lr']}")
    if agent:
        if resources["env_runner"] != "batched":
            _bad("init.teacher", f"an agent teacher ({init['teacher']!r}) labels the student's states inside the "
                                 f"batched env runner; set resources.env_runner: batched (got "
                                 f"{resources['env_runner']!r})")
        if not kickstarting:
            init["teacher"] = None  # no kickstart loss: the runners label nothing
        return init
    if init["teacher"] is None:
        init["teacher"] = init["checkpoint"]
    if kickstarting and init["teacher"] is None:
        _bad("schedules.kickstart_coeff", "is above 0 but there is no teacher: set init.checkpoint (or init.teacher)")
    if not kickstarting:
        init["teacher"] = None  # no kickstart loss: the learner loads no teacher
    return init


def _check_outcome_rule(section: str, rule) -> None:
    if rule not in TIME_LIMIT_OUTCOMES:
        _bad(f"{section}.time_limit_outcome", f"must be one of {list(TIME_LIMIT_OUTCOMES)}, got {rule!r}")


def _validate_trueskill(given: dict, mode: str) -> dict:
    ts = _check_section("trueskill", given, TRUESKILL_DEFAULTS)
    for k in ("every", "games"):
        if ts[k] < (0 if k == "every" else 1):
            _bad(f"trueskill.{k}", f"must be >= {0 if k == 'every' else 1}, got {ts[k]}")
    if ts["time_limit_s"] < 0:
        _bad("trueskill.time_limit_s", f"must be >= 0, got {ts['time_limit_s']}")
    if not 0.0 < ts["cpu_share"] <= 1.0:
        _bad("trueskill.cpu_share", f"must be in (0, 1], got {ts['cpu_share']}")
    if ts["references"] is None:
        ts["references"] = os.path.join(REFERENCES_DIR, f"references_{mode}.json")
    if ts["every"] and not isinstance(ts["references"], str) or not os.path.isfile(ts["references"]):
        _bad("trueskill.references", f"must be a rated reference pool JSON file (python -m app.rate "
                                     f"--rate-references), got {ts['references']!r}")
    _check_outcome_rule("trueskill", ts["time_limit_outcome"])
    if ts["every"]:
        with open(ts["references"]) as f:
            refs = json.load(f)
        try:
            references_outcome_rule(refs, ts["time_limit_outcome"])
        except ValueError as e:
            _bad("trueskill.time_limit_outcome", f"{e} (file {ts['references']})")
    return ts


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


def _parse_value(text: str):
    """A --set value as YAML; a number YAML 1.1 leaves as a string ("1e-4") becomes a float."""
    v = yaml.safe_load(text)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    return v


def load(path: str, overrides: list[str] = ()) -> dict:
    """Reads a YAML run config, applies "--set key=value" overrides (values parsed as YAML) and validates."""
    if not os.path.isfile(path):
        raise ValueError(f"config file {path!r} not found")
    with open(path) as f:
        try:
            raw = yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"config file {path!r}: not valid YAML, {_yaml_error(e)}") from None
    for item in overrides:
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected key=value, e.g. ppo.num_epochs=2")
        k, v = item.split("=", 1)
        try:
            value = _parse_value(v)
        except yaml.YAMLError as e:
            raise ValueError(f"--set {item!r}: the value is not valid YAML, {_yaml_error(e)}") from None
        set_key(raw, k.strip(), value)
    return validate(raw)


def _yaml_error(e: yaml.YAMLError) -> str:
    """Where PyYAML stopped (line and column, from 1), what it found there and what it was reading."""
    def at(mark):
        return f"line {mark.line + 1}, column {mark.column + 1}"
    mark, context, context_mark = (getattr(e, k, None) for k in ("problem_mark", "context", "context_mark"))
    text = (f"{at(mark)}: " if mark is not None else "") + (getattr(e, "problem", None) or str(e))
    if context:
        text += f" ({context}{' that starts at ' + at(context_mark) if context_mark is not None else ''})"
    return text


class RunStopper(Stopper):
    """The run's stop criteria as a Tune stopper: a trial stops when any flattened result key reaches its value.

    A plain dict ``stop`` is frozen into each trial's saved state, so ``--resume`` could never raise it (e.g.
    ``--set stop.training_iteration=20`` after a 10-iteration run). Tune calls this stopper in the driver process;
    ``app.train.main`` sets ``RunStopper.current`` to the criteria of the current launch, which win over the
    pickled ones. It lives here, not in app/train.py, because ``python -m app.train`` runs that file as
    ``__main__``: a class from there would be pickled by value, detached from the one ``main`` updates."""

    current = None  # the criteria of this process's latest launch (set by app.train.main)

    def __init__(self, criteria: dict):
        self.criteria = dict(criteria)

    @override(Stopper)
    def __call__(self, trial_id, result) -> bool:
        from ray.tune.utils import flatten_dict
        flat = flatten_dict(result)
        crit = RunStopper.current if RunStopper.current is not None else self.criteria
        return any(k in flat and flat[k] >= v for k, v in crit.items())

    @override(Stopper)
    def stop_all(self) -> bool:
        return False
