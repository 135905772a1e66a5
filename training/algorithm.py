"""The RLlib algorithm of a validated run config (training/run_config.py): the training env, the modules, the learner,
the callbacks, and Tune's param space with the run's sweep.

Everything is wired here and nowhere else: the env each env runner builds (``make_training_env``: MobaEnv, or
RemoteMobaEnv on game servers, inside the reward post-processing wrapper), the OpenAI Five module for "main" and the
league's opponent slots, the PPO learner with the win-label connector, and the callbacks (schedules, game metrics,
evaluation games, league play, TrueSkill rating, episode-chunk compaction). The settings of the learner and the
callbacks travel in ``config.learner_config_dict`` under their keys.
"""
from __future__ import annotations

import json

ENV_NAME = "openfive"
TRUESKILL_KEY = "five_trueskill"  # where the TrueSkill settings travel inside config.learner_config_dict
# env_config keys of the reward post-processing wrapper (its own defaults apply to those missing)
WRAPPER_KEYS = ("team_spirit", "zero_sum", "time_decay", "normalize_gamma")
TRAINING_ENV_KEYS = WRAPPER_KEYS + ("torch_threads",)


def make_training_env(env_config):
    """The env each RLlib env runner builds: MobaEnv (or RemoteMobaEnv when "remote" is set) wrapped by the
    training-side reward post-processing."""
    import torch
    from ray.rllib.env.env_context import EnvContext

    from moba.env.reward_wrapper import PostprocessedRewardEnv
    if "torch_threads" in env_config:
        torch.set_num_threads(int(env_config["torch_threads"]))
    base_cfg = {k: v for k, v in env_config.items() if k not in TRAINING_ENV_KEYS}
    ctx = EnvContext(base_cfg, worker_index=getattr(env_config, "worker_index", 0),
                     vector_index=getattr(env_config, "vector_index", 0))
    if base_cfg.get("remote"):
        from moba.server.remote_env import make_moba_env
        base = make_moba_env(ctx)
    else:
        from moba.env.moba_env import MobaEnv
        base = MobaEnv(ctx)
    return PostprocessedRewardEnv(base, **{k: env_config[k] for k in WRAPPER_KEYS if k in env_config})


def training_env_config(cfg: dict) -> dict:
    """The env_config of the training env (make_training_env) of a validated run config: its env section, the seed,
    the reward post-processing at the schedules' initial values, the env runners' torch threads."""
    from training.run_config import initial_schedule_values
    initial = initial_schedule_values(cfg)
    return {**cfg["env"], "seed": cfg["env"].get("seed", cfg["seed"]), "team_spirit": initial["team_spirit"],
            "zero_sum": cfg["reward"]["zero_sum"], "time_decay": cfg["reward"]["time_decay"],
            "normalize_gamma": initial["gamma"] if cfg["reward"]["normalize"] else None,
            "torch_threads": cfg["resources"]["torch_threads"],
            **({"new_action_share": initial["new_action_share"]} if cfg["env"].get("new_actions") else {})}


def five_module_spec(model: dict, env=None):
    """The RLModuleSpec of "main" (and of the league's slots): FiveRLModule with the run config's `model` sizes
    (FiveModelConfig, defaults filled in). With `env` (a MultiAgentEnv), its observation and action spaces; training
    leaves them to RLlib, which takes them from the env. The kickstart (app/pretrain.py) builds its module here, so
    that a run can load its weights into "main"."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from policies.model.five_module import FiveModelConfig, FiveRLModule
    spaces = {}
    if env is not None:
        agent = env.possible_agents[0]
        spaces = {"observation_space": env.observation_spaces[agent], "action_space": env.action_spaces[agent]}
    return RLModuleSpec(module_class=FiveRLModule, model_config={**FiveModelConfig.from_dict(model).__dict__},
                        **spaces)


def load_trueskill_settings(cfg: dict) -> dict:
    """The in-training TrueSkill rating's settings, with the rated reference pool read in (app. J)."""
    ts = dict(cfg["trueskill"])
    if ts["every"]:
        with open(ts["references"]) as f:
            ts["references"] = json.load(f)
    return ts


def opponent_mix(cfg: dict) -> dict:
    """What the env runners and the opponents callback read of the opponents section ({} when every game is self-play
    or league play: the league then draws its own games, as without the section)."""
    from training.run_config import opponent_shares
    opponents = cfg["opponents"]
    cur = opponents["curriculum"]
    if not opponents["fixed"] and not cur["share"] > 0:
        return {}
    return {"shares": opponent_shares(opponents, cfg["league"]), "time_limit_outcome": opponents["time_limit_outcome"],
            **({"ladder": list(cur["ladder"]), "window": cur["window"], "promote_at": cur["promote_at"],
                "demote_at": cur["demote_at"]}
               if cur["share"] > 0 else {})}


def build_algo_config(cfg: dict, callbacks: list):
    """The RLlib PPOConfig of a validated run config, with `callbacks` (RLlib callback classes, in the order RLlib
    calls them: ``callbacks.run_callbacks()`` for a training run; the callbacks sit above this package)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from training.batched_env_runner import STALENESS_KEY, BatchedEnvRunner
    from training.classic_env_runner import ClassicEnvRunner
    from training.run_config import LEARNER_PPO_KEYS, initial_schedule_values, run_frameskip
    from training.evaluation_games import EVAL_ENV_KEYS, EVAL_KEY
    from training.league_play import LEAGUE_KEY, league_mapping_fn
    from training.opponents import OPPONENTS_KEY
    from training.run_storage import STORAGE_KEY
    from training.schedules import SCHEDULES_KEY
    from policies.learning.five_learner import INIT_KEY, FivePPOLearner
    from policies.model.module_ids import MAIN, slot_module_ids
    from policies.learning.win_label import AddWinLabel

    ppo, res = cfg["ppo"], cfg["resources"]
    frameskip = run_frameskip(cfg)
    initial = initial_schedule_values(cfg)
    env_config = training_env_config(cfg)
    eval_cfg = {**cfg["evaluation"], "env_keys": [k for k in EVAL_ENV_KEYS if k in cfg["env"]]}
    # league play: frozen past versions play from a few opponent slots (callbacks/league_play.py)
    modules = [MAIN] + (slot_module_ids(cfg["league"]["slots"]) if cfg["league"]["enabled"] else [])
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=res["num_env_runners"], num_envs_per_env_runner=res["num_envs_per_env_runner"],
                     rollout_fragment_length="auto", batch_mode="truncate_episodes",
                     env_runner_cls=BatchedEnvRunner if res["env_runner"] == "batched" else ClassicEnvRunner)
        .multi_agent(policies=set(modules), policy_mapping_fn=league_mapping_fn, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: five_module_spec(cfg["model"])
                                                                     for m in modules}))
        .training(
            train_batch_size_per_learner=ppo["train_batch_size"], minibatch_size=ppo["minibatch_size"],
            num_epochs=ppo["num_epochs"], lr=initial["lr"], gamma=initial["gamma"], lambda_=ppo["gae_lambda"],
            clip_param=ppo["clip_param"], vf_loss_coeff=ppo["vf_loss_coeff"], vf_clip_param=ppo["vf_clip_param"],
            entropy_coeff=initial["entropy_coeff"], use_kl_loss=ppo["use_kl_loss"], grad_clip=ppo["grad_clip"])
        .learners(
            num_gpus_per_learner=res["num_gpus_per_learner"],
            learner_class=FivePPOLearner, learner_connector=lambda obs_space, act_space: AddWinLabel(),
            learner_config_dict={SCHEDULES_KEY: cfg["schedules"], "frameskip": frameskip,
                                 **{k: ppo[k] for k in LEARNER_PPO_KEYS},
                                 "learner_threads": res["learner_threads"], STALENESS_KEY: ppo["staleness"],
                                 EVAL_KEY: eval_cfg, LEAGUE_KEY: cfg["league"],
                                 OPPONENTS_KEY: opponent_mix(cfg), INIT_KEY: cfg["init"],
                                 STORAGE_KEY: cfg["storage_path"],
                                 TRUESKILL_KEY: load_trueskill_settings(cfg)})
        .callbacks(list(callbacks))
        .debugging(seed=cfg["seed"])
    )


def param_space(cfg: dict, algo_config):
    """The Tune param space: the algorithm config, with the run config's sweep as grid searches."""
    from ray import tune

    from training.schedules import SCHEDULES_KEY, Schedule
    space = algo_config.to_dict()
    for key, values in cfg["sweep"].items():
        section, _, name = key.partition(".")
        if section == "schedules":
            space["learner_config_dict"][SCHEDULES_KEY][name] = tune.grid_search(
                [Schedule.parse(name, v).to_dict() for v in values])
        elif section == "env":
            space["env_config"][name] = tune.grid_search(values)
        else:  # ppo.<one of LEARNER_PPO_KEYS> (training/run_config.py refuses the others)
            space["learner_config_dict"][name] = tune.grid_search(values)
    return space
