"""Training CLI: PPO self-play with the OpenAI Five network, through Ray Tune.

    python -m app.train --config tune_configs/smoke.yaml [--set key=value ...] [--resume]

Runs on an embedded local Ray, or on the cluster named by RAY_ADDRESS (e.g. through ``ray job submit``). Prints a
progress line per iteration (iteration, env and agent steps/s, episode return, win rates, schedule values), and
writes TensorBoard logs and progress.csv (Tune), a compact metrics.csv and checkpoints under
``<storage_path>/<name>/``. ``--resume`` continues a stopped run, schedules included. A malformed config fails
before Ray starts, with a message that names the key.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from app import train_config
from app.env.rewards import SIGNALS

ENV_NAME = "openfive"
TRAINING_ENV_KEYS = ("team_spirit", "zero_sum", "time_decay", "normalize_gamma", "torch_threads")


def make_training_env(env_config):
    """The env each RLlib env runner builds: MobaEnv (or RemoteMobaEnv when "remote" is set) wrapped by the
    training-side reward post-processing."""
    import torch
    from ray.rllib.env.env_context import EnvContext

    from callbacks.reward_postprocessing import PostprocessedRewardEnv
    torch.set_num_threads(int(env_config.get("torch_threads", 1)))
    base_cfg = {k: v for k, v in env_config.items() if k not in TRAINING_ENV_KEYS}
    ctx = EnvContext(base_cfg, worker_index=getattr(env_config, "worker_index", 0),
                     vector_index=getattr(env_config, "vector_index", 0))
    if base_cfg.get("remote"):
        from app.server.remote_env import make_moba_env
        base = make_moba_env(ctx)
    else:
        from app.env.moba_env import MobaEnv
        base = MobaEnv(ctx)
    return PostprocessedRewardEnv(base, team_spirit=env_config.get("team_spirit", 0.3),
                                  zero_sum=env_config.get("zero_sum", True),
                                  time_decay=env_config.get("time_decay", True),
                                  normalize_gamma=env_config.get("normalize_gamma"))


def load_trueskill_settings(cfg: dict) -> dict:
    """The in-training TrueSkill evaluator's settings, with the rated reference pool read in (app. J)."""
    ts = dict(cfg["trueskill"])
    if ts["every"]:
        with open(ts["references"]) as f:
            ts["references"] = json.load(f)
    return ts


def build_algo_config(cfg: dict):
    """The RLlib PPOConfig of a validated run config."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from callbacks.episode_memory import CompactEpisodeChunks
    from callbacks.evaluation import EVAL_ENV_KEYS, EVAL_KEY, EvaluationCallback
    from callbacks.league_play import LEAGUE_KEY, MAIN, LeagueCallback, league_mapping_fn, slot_module_ids
    from callbacks.metrics import GameMetricsCallback
    from callbacks.schedules import SCHEDULES_KEY, ScheduleCallback, schedule_values
    from callbacks.trueskill_evaluator import TRUESKILL_KEY, TrueSkillCallback
    from callbacks.win_label import AddWinLabel
    from policies.five_learner import FivePPOLearner
    from policies.five_module import FiveModelConfig, FiveRLModule

    ppo, res = cfg["ppo"], cfg["resources"]
    frameskip = cfg["env"].get("frameskip", 4)
    initial = schedule_values(cfg["schedules"], 0, 0, frameskip)
    model = {**FiveModelConfig.from_dict(cfg["model"]).__dict__}
    env_config = {**cfg["env"], "seed": cfg["env"].get("seed", cfg["seed"]), "team_spirit": initial["team_spirit"],
                  "zero_sum": cfg["reward"]["zero_sum"], "time_decay": cfg["reward"]["time_decay"],
                  "normalize_gamma": initial["gamma"] if cfg["reward"]["normalize"] else None,
                  "torch_threads": res["torch_threads"]}
    eval_cfg = {**cfg["evaluation"], "env_keys": [k for k in EVAL_ENV_KEYS if k in cfg["env"]]}
    # league play: frozen past versions play from a few opponent slots (callbacks/league_play.py)
    modules = [MAIN] + (slot_module_ids(cfg["league"]["slots"]) if cfg["league"]["enabled"] else [])
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=res["num_env_runners"], num_envs_per_env_runner=res["num_envs_per_env_runner"],
                     rollout_fragment_length="auto", batch_mode="truncate_episodes")
        .multi_agent(policies=set(modules), policy_mapping_fn=league_mapping_fn, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            m: RLModuleSpec(module_class=FiveRLModule, model_config=model) for m in modules}))
        .training(
            train_batch_size_per_learner=ppo["train_batch_size"], minibatch_size=ppo["minibatch_size"],
            num_epochs=ppo["num_epochs"], lr=initial["lr"], gamma=initial["gamma"], lambda_=ppo["gae_lambda"],
            clip_param=ppo["clip_param"], vf_loss_coeff=ppo["vf_loss_coeff"], vf_clip_param=ppo["vf_clip_param"],
            entropy_coeff=initial["entropy_coeff"], use_kl_loss=ppo["use_kl_loss"], grad_clip=ppo["grad_clip"],
            learner_class=FivePPOLearner, learner_connector=lambda obs_space, act_space: AddWinLabel(),
            learner_config_dict={SCHEDULES_KEY: cfg["schedules"], "frameskip": frameskip,
                                 "dual_clip": ppo["dual_clip"], "aux_win_coeff": ppo["aux_win_coeff"],
                                 "learner_threads": res["learner_threads"],
                                 EVAL_KEY: eval_cfg, LEAGUE_KEY: cfg["league"],
                                 TRUESKILL_KEY: load_trueskill_settings(cfg)})
        .callbacks([ScheduleCallback, GameMetricsCallback, EvaluationCallback, LeagueCallback, TrueSkillCallback,
                    CompactEpisodeChunks])
        .debugging(seed=cfg["seed"])
    )


# ---- progress --------------------------------------------------------------------------------------------------------
SIGNAL_RATE_PREFIX = "per_min_"  # metrics.csv: reward per hero and game minute from each signal of Table 6
PROGRESS_COLUMNS = ("iteration", "time_s", "env_steps", "env_steps_per_s", "agent_steps_per_s", "episode_return",
                    "raw_return_radiant", "win_rate_radiant", "win_rate_dire", "draw_rate", "game_minutes",
                    "win_rate_vs_random", "win_rate_vs_scripted", "points_win_rate_vs_random",
                    "points_win_rate_vs_scripted", "reward_margin_vs_random",
                    "buildings_vs_random", "reward_margin_vs_scripted", "buildings_vs_scripted", "trueskill_version",
                    "trueskill_mu", "trueskill_sigma", "league_versions", "past_games", "past_win_rate",
                    "staleness_mean", "sample_reuse", "team_spirit", "lr", "entropy_coeff", "gamma",
                    "policy_loss", "vf_loss", "entropy", "aux_win_loss") + tuple(
                        f"{SIGNAL_RATE_PREFIX}{name}" for name in SIGNALS)


def progress_row(result: dict) -> dict:
    from callbacks.metrics import signal_rates

    er = result.get("env_runners", {})
    ln = result.get("learners", {}).get("main", {})
    sc = result.get("schedule", {})
    ev = result.get("evaluation_games", {})
    ts = result.get("trueskill", {})
    lg = result.get("league", {})
    dt = max(result.get("time_this_iter_s", 0.0), 1e-9)
    agent_steps = er.get("num_agent_steps_sampled", {})
    agent_steps = sum(agent_steps.values()) if isinstance(agent_steps, dict) else agent_steps
    return {
        "iteration": result.get("training_iteration"), "time_s": round(result.get("time_total_s", 0.0), 1),
        "env_steps": er.get("num_env_steps_sampled_lifetime"),
        "env_steps_per_s": round(er.get("num_env_steps_sampled", 0) / dt, 1),
        "agent_steps_per_s": round((agent_steps or 0) / dt, 1),
        "episode_return": er.get("episode_return_mean"), "raw_return_radiant": er.get("raw_return_radiant"),
        "win_rate_radiant": er.get("win_rate_radiant"), "win_rate_dire": er.get("win_rate_dire"),
        "draw_rate": er.get("win_rate_none"),
        "game_minutes": (er["game_time_s"] / 60.0) if er.get("game_time_s") is not None else None,
        "win_rate_vs_random": ev.get("win_rate_vs_random"), "win_rate_vs_scripted": ev.get("win_rate_vs_scripted"),
        **{f"{k}_vs_{o}": ev.get(f"{k}_vs_{o}") for o in ("random", "scripted")
           for k in ("points_win_rate", "reward_margin", "buildings")},
        "trueskill_version": ts.get("version"), "trueskill_mu": ts.get("mu"), "trueskill_sigma": ts.get("sigma"),
        "league_versions": lg.get("versions"), "past_games": lg.get("past_games"),
        "past_win_rate": lg.get("past_win_rate"), "staleness_mean": ln.get("staleness_mean"),
        "sample_reuse": result.get("sample_reuse"),
        "team_spirit": sc.get("team_spirit"), "lr": sc.get("lr"), "entropy_coeff": sc.get("entropy_coeff"),
        "gamma": sc.get("gamma"), "policy_loss": ln.get("policy_loss"), "vf_loss": ln.get("vf_loss"),
        "entropy": ln.get("entropy"), "aux_win_loss": ln.get("aux_win_loss"),
        **{f"{SIGNAL_RATE_PREFIX}{name}": v for name, v in signal_rates(er).items()},
    }


def _fmt(v, spec):
    """A progress value; "-" when there is none (RLlib reports NaN for an iteration in which no game ended)."""
    return "-" if v is None or v != v else format(v, spec)


def progress_line(row: dict, trial: str = "") -> str:
    return (f"{trial}iter {row['iteration']:4d}  {_fmt(row['env_steps_per_s'], '6.0f')} env steps/s "
            f"{_fmt(row['agent_steps_per_s'], '7.0f')} agent steps/s  "
            # the raw (Table 6) return of a team: the post-processed episode return is ~0 in zero-sum self-play
            f"raw return {_fmt(row['raw_return_radiant'], '7.2f')}  "
            f"win radiant/dire/draw {_fmt(row['win_rate_radiant'], '.2f')}/{_fmt(row['win_rate_dire'], '.2f')}/"
            f"{_fmt(row['draw_rate'], '.2f')}  vs random {_fmt(row['win_rate_vs_random'], '.2f')} "
            f"(points {_fmt(row['points_win_rate_vs_random'], '.2f')}, "
            f"margin {_fmt(row['reward_margin_vs_random'], '.1f')})  "
            + (f"trueskill {_fmt(row['trueskill_mu'], '.1f')}  " if row.get("trueskill_mu") is not None else "")
            + (f"league {row['league_versions']} versions, past win {_fmt(row['past_win_rate'], '.2f')} "
               f"({row['past_games']} games)  " if row.get("league_versions") is not None else "")
            + (f"per hero-min lane {_fmt(row[f'{SIGNAL_RATE_PREFIX}lane_assign'], '.2f')} "
               f"death {_fmt(row[f'{SIGNAL_RATE_PREFIX}hero_death'], '.2f')} "
               f"gold {_fmt(row[f'{SIGNAL_RATE_PREFIX}gold_gained'], '.2f')}  "
               if row.get(f"{SIGNAL_RATE_PREFIX}lane_assign") is not None else "")
            + f"tau {_fmt(row['team_spirit'], '.2f')} lr {_fmt(row['lr'], '.1e')} "
            f"ent {_fmt(row['entropy_coeff'], '.1e')} gamma {_fmt(row['gamma'], '.5f')}")


def make_progress_callback(run_dir: str):
    from ray.tune import Callback

    from callbacks.run_dir import append_csv_rows

    class ProgressCallback(Callback):
        """Prints a line per iteration and appends it to <run_dir>/metrics.csv."""

        def on_trial_result(self, iteration, trials, trial, result, **info):
            row = progress_row(result)
            tag = f"[{trial.trial_id}] " if len(trials) > 1 else ""
            print(progress_line(row, tag), flush=True)
            append_csv_rows(os.path.join(run_dir, "metrics.csv"), ("trial",) + PROGRESS_COLUMNS,
                            [{"trial": trial.trial_id, **row}])

    return ProgressCallback()


# ---- main ------------------------------------------------------------------------------------------------------------
def local_num_cpus(resources: dict) -> int:
    """The CPUs an embedded Ray advertises: `resources.num_cpus` if set, else at least what the trial asks for (the
    driver and learner, plus one per env runner). These are logical: on 2 cores the fastest layout is 2 env runners
    sharing the cores with the driver (shared/notes/rllib.md section 6)."""
    return resources["num_cpus"] or max(os.cpu_count() or 1, resources["num_env_runners"] + 1)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="a YAML run config (tune_configs/)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set ppo.num_epochs=2 --set env.mode=5v5")
    p.add_argument("--resume", action="store_true", help="continue the stopped run of the same name")
    return p.parse_args(argv)


def param_space(cfg: dict, algo_config):
    """The Tune param space: the algorithm config, with the run config's sweep as grid searches."""
    from ray import tune

    from callbacks.schedules import SCHEDULES_KEY, Schedule
    space = algo_config.to_dict()
    for key, values in cfg["sweep"].items():
        section, _, name = key.partition(".")
        if section == "schedules":
            space["learner_config_dict"][SCHEDULES_KEY][name] = tune.grid_search(
                [Schedule.parse(name, v).to_dict() for v in values])
        elif section == "env":
            space["env_config"][name] = tune.grid_search(values)
        else:
            raise ValueError(f"config 'sweep.{key}': only schedules.* and env.* keys can be swept")
    return space


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        cfg = train_config.load(args.config, args.set)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    import ray
    import torch
    from ray import tune
    from ray.rllib.algorithms.ppo import PPO
    from ray.tune.registry import register_env

    torch.set_num_threads(cfg["resources"]["torch_threads"])
    storage = os.path.abspath(cfg["storage_path"])
    run_dir = os.path.join(storage, cfg["name"])
    if args.resume and not tune.Tuner.can_restore(run_dir):
        print(f"error: --resume: no run to continue in {run_dir}", file=sys.stderr)
        return 2
    if not args.resume and os.path.exists(run_dir):
        cfg["name"] = f"{cfg['name']}_{time.strftime('%Y%m%d_%H%M%S')}"
        print(f"a run named {os.path.basename(run_dir)!r} exists: this one is {cfg['name']!r} "
              f"(--resume continues the existing one)", flush=True)
        run_dir = os.path.join(storage, cfg["name"])
    if ray.is_initialized():
        pass  # an embedding process (a test session, a notebook) already started Ray: use it
    elif os.environ.get("RAY_ADDRESS"):
        ray.init()
    else:
        ray.init(num_cpus=local_num_cpus(cfg["resources"]), include_dashboard=False)
    register_env(ENV_NAME, make_training_env)
    algo_config = build_algo_config(cfg)
    stop = {{"num_env_steps_sampled_lifetime": "env_runners/num_env_steps_sampled_lifetime"}.get(k, k): v
            for k, v in cfg["stop"].items()}
    train_config.RunStopper.current = stop  # also what a resumed run stops at
    ck = cfg["checkpoint"]
    run_config = tune.RunConfig(
        name=cfg["name"], storage_path=storage, stop=train_config.RunStopper(stop), verbose=0,
        callbacks=[make_progress_callback(run_dir)],
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=ck["frequency"], num_to_keep=ck["num_to_keep"],
                                                checkpoint_at_end=ck["at_end"]))
    t0 = time.time()
    if args.resume:
        from ray.tune import ResumeConfig
        # finished trials too (from their latest checkpoint): a run that reached its stop criteria continues to
        # the raised ones (RunStopper.current)
        resume = ResumeConfig(finished=ResumeConfig.ResumeType.RESUME, unfinished=ResumeConfig.ResumeType.RESUME,
                              errored=ResumeConfig.ResumeType.RESUME)
        tuner = tune.Tuner.restore(run_dir, trainable=PPO, _resume_config=resume)
    else:
        os.makedirs(run_dir, exist_ok=True)
        with open(os.path.join(run_dir, "run_config.yaml"), "w") as f:
            import yaml
            yaml.safe_dump(cfg, f, sort_keys=False)
        tuner = tune.Tuner(PPO, param_space=param_space(cfg, algo_config), run_config=run_config)
    results = tuner.fit()
    summary = {"name": cfg["name"], "run_dir": run_dir, "wall_s": round(time.time() - t0, 1), "trials": []}
    for r in results:
        m = r.metrics or {}
        summary["trials"].append({"checkpoint": r.checkpoint.path if r.checkpoint else None,
                                  "error": str(r.error) if r.error else None, **progress_row(m)})
    print(json.dumps(summary, default=str))
    return 0 if all(t["error"] is None for t in summary["trials"]) else 1


if __name__ == "__main__":
    sys.exit(main())
