"""The RLlib algorithm of a validated run config (training/run_config.py): the training env, the modules, the learner,
the callbacks, and Tune's param space with the run's sweep.

Everything is wired here and nowhere else: the env each env runner builds (``make_training_env``: MobaEnv, or
RemoteMobaEnv on game servers, inside the reward post-processing wrapper), the OpenAI Five module for "main" and the
league's opponent slots, the PPO learner with the win-label connector, and the callbacks (schedules, game metrics,
evaluation games, league play, TrueSkill rating, episode-chunk compaction). The run's settings travel in
``config.learner_config_dict[SETTINGS_KEY]`` as plain nested dicts (``RunSettings.to_dict()``, where Tune's grid
search of a sweep can sit); the learner, the callbacks and the env runners read them back with
``training.settings.run_settings(config)``. RLlib's own settings (lr, num_epochs, ...) go through ``PPOConfig``.
"""
from __future__ import annotations

import json

from training.settings import SETTINGS_KEY, RunSettings

ENV_NAME = "openfive"
# env_config keys of the reward post-processing wrapper (its own defaults apply to those missing)
WRAPPER_KEYS = ("team_spirit", "zero_sum", "time_decay", "normalize_gamma", "normalize_scope", "noop_penalty")
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


def training_env_config(cfg: RunSettings) -> dict:
    """The env_config of the training env (make_training_env) of a run's settings: its env section, the seed, the
    reward post-processing at the schedules' initial values (and the reward normalization's scope), the env runners'
    torch threads."""
    initial = cfg.initial_schedule_values()
    return {**cfg.env, "seed": cfg.env.get("seed", cfg.seed), "team_spirit": initial["team_spirit"],
            "zero_sum": cfg.reward.zero_sum, "time_decay": cfg.reward.time_decay,
            "normalize_gamma": initial["gamma"] if cfg.reward.normalize else None,
            "normalize_scope": cfg.reward.normalize_scope,  # "run": the std set by callbacks/reward_scale.py
            "torch_threads": cfg.resources.torch_threads,
            **({"noop_penalty": cfg.reward.noop_penalty} if cfg.reward.noop_penalty else {}),
            **({"new_action_share": initial["new_action_share"]} if cfg.env.get("new_actions") else {}),
            **({"ancient_hp_scale": initial["ancient_hp_scale"]} if initial["ancient_hp_scale"] != 1.0 else {})}


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


def travelling_settings(cfg: RunSettings) -> dict:
    """The run's settings as they travel in the algorithm config: ``to_dict()``, with the TrueSkill rating's reference
    pool read in when the rating is on (Five app. J; the rating runs in the trial's process, on any node)."""
    settings = cfg.to_dict()
    if cfg.trueskill.every:
        with open(cfg.trueskill.references) as f:
            settings["trueskill"]["references"] = json.load(f)
    return settings


def build_algo_config(cfg: RunSettings, callbacks: list):
    """The RLlib PPOConfig of a run's settings, with `callbacks` (RLlib callback classes, in the order RLlib calls
    them: ``callbacks.run_callbacks()`` for a training run; the callbacks sit above this package)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from training.batched_env_runner import BatchedEnvRunner
    from training.classic_env_runner import ClassicEnvRunner
    from training.league_play import league_mapping_fn
    from policies.learning.five_learner import FivePPOLearner
    from policies.model.module_ids import MAIN, slot_module_ids
    from policies.learning.self_imitation import AddSelfImitationReturn
    from moba.env.config import EnvConfig
    from moba.game.teams import TEAM_SIZE, check_mode
    from policies.learning.team_steps import AddTeamStep
    from policies.learning.win_label import AddWinLabel

    ppo, res = cfg.ppo, cfg.resources
    initial = cfg.initial_schedule_values()
    # league play: frozen past versions play from a few opponent slots (callbacks/league_play.py)
    modules = [MAIN] + (slot_module_ids(cfg.league.slots) if cfg.league.enabled else [])
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=training_env_config(cfg))
        .framework("torch")
        .env_runners(num_env_runners=res.num_env_runners, num_envs_per_env_runner=res.num_envs_per_env_runner,
                     rollout_fragment_length="auto", batch_mode="truncate_episodes",
                     env_runner_cls=BatchedEnvRunner if res.env_runner == "batched" else ClassicEnvRunner)
        .multi_agent(policies=set(modules), policy_mapping_fn=league_mapping_fn, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: five_module_spec(cfg.model)
                                                                     for m in modules}))
        .training(
            train_batch_size_per_learner=ppo.train_batch_size, minibatch_size=ppo.minibatch_size,
            num_epochs=ppo.num_epochs, lr=initial["lr"], gamma=initial["gamma"], lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_param, vf_loss_coeff=ppo.vf_loss_coeff, vf_clip_param=ppo.vf_clip_param,
            entropy_coeff=initial["entropy_coeff"], use_kl_loss=ppo.use_kl_loss, grad_clip=ppo.grad_clip)
        .learners(
            num_gpus_per_learner=res.num_gpus_per_learner,
            learner_class=FivePPOLearner, learner_connector=lambda obs_space, act_space: [AddWinLabel(
                time_limit_outcome=cfg.opponents.time_limit_outcome)] + ([AddSelfImitationReturn(
                    gamma=initial["gamma"])] if ppo.self_imitation_coeff > 0 else []) + (
                    [AddTeamStep()] if TEAM_SIZE[check_mode(cfg.env.get("mode", EnvConfig.mode))] > 1 else []),
            learner_config_dict={SETTINGS_KEY: travelling_settings(cfg)})
        .callbacks(list(callbacks))
        .debugging(seed=cfg.seed)
    )


def param_space(cfg: RunSettings, algo_config):
    """The Tune param space: the algorithm config, with the run config's sweep as grid searches (a schedule or a ppo
    key inside the travelling settings, an env key in the env config)."""
    from ray import tune

    from training.schedules import Schedule
    space = algo_config.to_dict()
    settings = space["learner_config_dict"][SETTINGS_KEY]
    for key, values in cfg.sweep.items():
        section, _, name = key.partition(".")
        if section == "schedules":
            settings["schedules"][name] = tune.grid_search([Schedule.parse(name, v).to_dict() for v in values])
        elif section == "env":
            space["env_config"][name] = tune.grid_search(values)
        else:  # ppo.<one of LEARNER_PPO_KEYS> (training/settings.py refuses the others)
            settings["ppo"][name] = tune.grid_search(values)
    return space
