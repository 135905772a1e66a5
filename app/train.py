"""Training CLI: PPO self-play with the OpenAI Five network, through Ray Tune.

    python -m app.train --config tune_configs/smoke.yaml [--set key=value ...] [--resume]

Runs on an embedded local Ray, or on the cluster named by RAY_ADDRESS (e.g. through ``ray job submit``). Prints a
progress line per iteration (iteration, env and agent steps/s, episode return, win rates, schedule values), and
writes TensorBoard logs and progress.csv (Tune), a compact metrics.csv and checkpoints under
``<storage_path>/<name>/``. ``--resume`` continues a stopped run, schedules included. A malformed config fails
before Ray starts, with a message that names the key. The run config is ``training/run_config.py``, the algorithm it
builds ``training/algorithm.py``, the progress lines ``training/progress.py``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

from training import ray_output

ray_output.quiet_ray_env()  # before anything imports Ray: it reads some of these settings at import

from training import cluster_checks, run_config, run_storage  # noqa: E402
from training.cli import print_error, user_errors  # noqa: E402
from training.algorithm import ENV_NAME, build_algo_config, make_training_env, param_space  # noqa: E402
from training.progress import ProgressCallback, progress_row  # noqa: E402
from callbacks import run_callbacks  # noqa: E402


def local_num_cpus(resources: dict) -> int:
    """The CPUs an embedded Ray advertises: `resources.num_cpus` if set, else at least what the trial asks for (the
    driver and learner, plus one per env runner). These are logical: on 2 cores the fastest layout is 2 env runners
    sharing the cores with the driver (docs/rllib_notes.md section 6)."""
    return resources["num_cpus"] or max(os.cpu_count() or 1, resources["num_env_runners"] + 1)


def save_experiment_state_at_every_checkpoint() -> bool:
    """Makes Tune write its experiment state to the storage after every trial checkpoint, so that ``--resume`` after a
    killed driver continues from the latest checkpoint. Tune forces that write only every ``num_to_keep`` trial
    checkpoints and otherwise syncs it every 300 s (SyncConfig.sync_period): a driver killed in between would resume
    from an older checkpoint (docs/rllib_notes.md section 8). Returns False if this Ray has no such hook."""
    from ray.tune.execution import experiment_state
    manager = getattr(experiment_state, "_ExperimentCheckpointManager", None)
    if manager is None or not hasattr(manager, "on_trial_checkpoint"):
        return False

    def on_trial_checkpoint(self, trial):
        self._should_force_sync_up = True  # read by the manager's next checkpoint(): written and synced, waited for

    manager.on_trial_checkpoint = on_trial_checkpoint
    return True


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="a YAML run config (tune_configs/)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set ppo.num_epochs=2 --set env.mode=5v5")
    p.add_argument("--resume", action="store_true", help="continue the stopped run of the same name")
    return p.parse_args(argv)


def stop_rule_met(trial_metrics: list, stop: dict) -> bool:
    """Whether every trial of a run already meets the stop rule `stop` (Tune's result keys; the rule of
    run_config.RunStopper, without its process-wide criteria) by its last reported result; `trial_metrics` holds
    each trial's last result (None or {} for a trial that reported none)."""
    from ray.tune.utils import flatten_dict

    def met(result: dict) -> bool:  # RunStopper's rule: any criterion reached
        flat = flatten_dict(result)
        return any(k in flat and flat[k] >= v for k, v in stop.items())
    return bool(trial_metrics) and all(m and met(m) for m in trial_metrics)


def last_results(run_dir: str) -> list:
    """Each trial's last reported result in the run at `run_dir` (its experiment state; Ray need not run)."""
    from ray.tune import ExperimentAnalysis
    return [t.last_result for t in ExperimentAnalysis(run_dir).trials]


@user_errors
def main(argv=None) -> int:
    args = parse_args(argv)
    cfg = run_config.load(args.config, args.set)
    import ray
    import torch
    from ray import tune
    from ray.rllib.algorithms.ppo import PPO
    from ray.tune.registry import register_env

    from moba.env.compiled import compile_ahead
    from policies.agents.scripted import ScriptedAgent
    torch.set_num_threads(cfg.resources.torch_threads)
    storage = run_storage.absolute(cfg.storage_path)  # a job runs in a copy of the directory
    cfg = cfg.replace(storage_path=storage)
    address = os.environ.get("RAY_ADDRESS")
    # the cluster boundary, before anything starts (training/cluster_checks.py)
    cluster_checks.check_storage(storage)
    if address and not ray.is_initialized():
        cluster_checks.check_ray_address(address)
    elif not ray.is_initialized():  # a local Ray started below
        cluster_checks.check_local_resources(cfg.resources.to_dict(), os.cpu_count() or 1)
    run_dir = run_storage.join(storage, cfg.name)
    if args.resume and not tune.Tuner.can_restore(run_dir):
        return print_error(f"--resume: no run to continue in {run_dir}")
    stop = {{"num_env_steps_sampled_lifetime": "env_runners/num_env_steps_sampled_lifetime"}.get(k, k): v
            for k, v in cfg.stop.items()}
    if args.resume and stop_rule_met(last_results(run_dir), stop):
        # Tune would restart every trial from its checkpoint and train an iteration before asking the stopper
        print(f"{cfg.name!r} already met its stop rule ({', '.join(f'{k} >= {v}' for k, v in stop.items())}): "
              f"nothing to train; raise it to continue, e.g. --set stop.training_iteration=N", flush=True)
        return 0
    if not args.resume and run_storage.exists(run_dir):
        cfg = cfg.replace(name=f"{cfg.name}_{time.strftime('%Y%m%d_%H%M%S')}")
        print(f"a run named {os.path.basename(run_dir)!r} exists: this one is {cfg.name!r} "
              f"(--resume continues the existing one)", flush=True)
        run_dir = run_storage.join(storage, cfg.name)
    # compile the engine and the scripted bot once, here and with a message, rather than silently in every env
    # runner at once
    compile_ahead(log=lambda line: print(line, flush=True), agents=[ScriptedAgent()])
    ray_output.drop_noise_records()
    if ray.is_initialized():
        pass  # an embedding process (a test session, a notebook) already started Ray: use it
    elif address:
        try:
            ray.init()
        except (ConnectionError, RuntimeError, ValueError) as e:
            return print_error(f"RAY_ADDRESS={address!r}: cannot connect ({type(e).__name__}: {e}); "
                               f"{cluster_checks.ADDRESS_HELP}")
    else:
        ray.init(num_cpus=local_num_cpus(cfg.resources.to_dict()), include_dashboard=False,
                 logging_level=logging.WARNING, runtime_env=ray_output.worker_runtime_env())
    register_env(ENV_NAME, make_training_env)
    save_experiment_state_at_every_checkpoint()
    algo_config = build_algo_config(cfg, run_callbacks())
    cluster_checks.check_resources(PPO.default_resource_request(algo_config).required_resources,
                                   ray.cluster_resources(), cfg.resources.to_dict())
    run_config.RunStopper.current = stop  # also what a resumed run stops at
    ck = cfg.checkpoint
    tune_run_config = tune.RunConfig(
        name=cfg.name, storage_path=storage, stop=run_config.RunStopper(stop), verbose=0,
        callbacks=[ProgressCallback(run_dir)],
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=ck.frequency, num_to_keep=ck.num_to_keep,
                                                checkpoint_at_end=ck.at_end))
    t0 = time.time()
    if args.resume:
        from ray.tune import ResumeConfig
        # finished trials too (from their latest checkpoint): a run that reached its stop criteria continues to
        # the raised ones (RunStopper.current)
        resume = ResumeConfig(finished=ResumeConfig.ResumeType.RESUME, unfinished=ResumeConfig.ResumeType.RESUME,
                              errored=ResumeConfig.ResumeType.RESUME)
        tuner = tune.Tuner.restore(run_dir, trainable=PPO, _resume_config=resume)
    else:
        import yaml
        run_storage.write_bytes(run_storage.join(run_dir, "run_config.yaml"),
                                yaml.safe_dump(cfg.to_dict(), sort_keys=False).encode())
        tuner = tune.Tuner(PPO, param_space=param_space(cfg, algo_config), run_config=tune_run_config)
    print(f"{'resuming' if args.resume else 'training'} {cfg.name!r}: progress lines below; metrics.csv, "
          f"checkpoints and TensorBoard files in {run_dir} (tensorboard --logdir {run_dir})", flush=True)
    results = tuner.fit()
    summary = {"name": cfg.name, "run_dir": run_dir, "wall_s": round(time.time() - t0, 1), "trials": []}
    for r in results:
        m = r.metrics or {}
        summary["trials"].append({"checkpoint": r.checkpoint.path if r.checkpoint else None,
                                  "error": str(r.error) if r.error else None, **progress_row(m)})
    for t in summary["trials"]:
        print(f"finished after {t['iteration']} iterations in {summary['wall_s']:.0f} s: "
              + (f"error {t['error']}" if t["error"] else f"checkpoint {t['checkpoint']}"), flush=True)
    print(json.dumps(summary, default=str))
    return 0 if all(t["error"] is None for t in summary["trials"]) else 1


if __name__ == "__main__":
    sys.exit(main())
