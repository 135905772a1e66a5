"""Where an agent step's time goes, in sampling and in learning, and how the sampler scales with games per runner.

    python scripts/profile_training.py [--config tune_configs/hok_1v1_kickstart.yaml] [--games 8 32 128 512]
        [--env-steps 4096] [--no-learner | --no-sampler] [--trace N] [--set key=value ...]

One process, one torch thread for sampling (as an env runner has), no Ray cluster: the config's BatchedEnvRunner is
built in this process.

- **The profile** (at the config's games per runner): every phase of ``sample()`` and of ``Learner.update`` is timed
  by wrapping its function (``PHASES``, ``LEARNER_PHASES``), and each phase's time is its own (exclusive): a phase's
  time excludes the phases it calls, and the root's own time is what no phase covers (the loops, metrics, lists).
  The table gives microseconds per agent step and the share of the total; beside it, what the sample's episodes cost
  to move to the driver (pickled and unpickled, as Ray's serializer does, and their bytes). The learner's rows are
  one update on one iteration's batch at the config's minibatch size and epochs, with its learner threads. With
  ``--set resources.num_gpus_per_learner=1`` the learner runs on the GPU, and every timed phase waits for the GPU at
  its start and end, so that the GPU's work is counted in the phase that queued it.
- **The trace** (``--trace N``): one more update under torch's profiler: the N operators with the most time of
  their own, on the host and on the GPU, and the counts that say what bounds a small network's step on a GPU: kernel
  launches, host-device synchronizations and device-to-host copies, per minibatch.
- **The scaling curve** (``--games``): per number of games per runner, agent steps/s of ``sample()`` (the median of
  3 samples of ``--env-steps`` env steps, at least 16 per game, after a warm-up), the rows per forward pass of
  "main", and the process's resident memory after the warm-up; memory per game is the slope between the first and
  the last point.

Prints the tables and a JSON line last. Wrapping costs ~1 us per call, small beside the phases it times; the scaling
curve runs without it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict

from training.cli import user_errors

# (label, owner, attribute): the functions timed in sample(); the owner is a module path or a class path
PHASES = (
    ("sample(): loop, metrics", "training.batched_env_runner:BatchedEnvRunner", "_sample_games"),
    ("reward post-processing", "moba.env.reward_wrapper:PostprocessedRewardEnv", "step"),
    ("reward post-processing", "moba.env.reward_wrapper:PostprocessedRewardEnv", "step_arrays"),
    ("reward post-processing", "moba.env.reward_wrapper:PostprocessedRewardEnv", "_postprocess"),
    ("env step: infos, dicts", "moba.env.moba_env:MobaEnv", "step"),
    ("env step: infos, dicts", "moba.env.moba_env:MobaEnv", "step_arrays"),
    ("env step: infos, dicts", "moba.env.moba_env:MobaEnv", "_step"),
    ("env step: infos, dicts", "moba.env.step_arrays:StepArrays", "infos"),
    ("game reset", "moba.env.moba_env:MobaEnv", "reset"),
    ("action checks", "moba.env.moba_env", "validate_actions"),
    ("action checks", "moba.env.moba_env", "check_action_array"),
    ("action decoding", "moba.env.moba_env:MobaEnv", "_decode"),
    ("engine", "moba.game.engine:Game", "step"),
    ("reward signals", "moba.env.rewards:RewardTracker", "step"),
    ("observation encoding", "moba.env.observation:ObservationEncoder", "encode"),
    ("act: action sampling, buffers", "training.batched_env_runner:BatchedEnvRunner", "_act"),
    ("stacking for the forward pass", "training.batched_env_runner:BatchedEnvRunner", "_forward"),
    ("network forward", "policies.model.five_module:FiveRLModule", "_forward"),
    ("fixed agents, teacher, guide", "policies.agents.scripted:ScriptedAgent", "act"),
    ("record step", "training.batched_env_runner:BatchedEnvRunner", "_record_step"),
    ("episode building", "training.batched_env_runner:BatchedEnvRunner", "_episode"),
    ("bootstrap values", "training.batched_env_runner:BatchedEnvRunner", "_set_bootstrap_values"),
)
LEARNER_PHASES = (
    ("update(): minibatches, metrics", None, "update"),
    ("batch preparation (learner connector)", None, "_learner_connector"),
    ("forward", "policies.model.five_module:FiveRLModule", "_forward_train"),
    ("loss", "policies.learning.five_learner:FivePPOLearner", "compute_loss_for_module"),
    ("backward", None, "compute_gradients"),
    ("gradient clipping", None, "postprocess_gradients"),
    ("optimizer step", None, "apply_gradients"),
)
ROUNDS = 3  # timed samples per point of the scaling curve
MIN_STEPS_PER_GAME = 16  # each timed sample steps every game at least this often


class PhaseTimer:
    """Times wrapped functions, each call's own time (its callees' wrapped time excluded), by label. `sync` (e.g.
    torch.cuda.synchronize) is called at each call's start and end, so that asynchronous device work is counted in
    the call that queued it."""

    def __init__(self, sync=None):
        self.sync = sync or (lambda: None)
        self.own = defaultdict(float)  # label -> seconds of its own
        self.calls = defaultdict(int)
        self._stack = []  # per active call: the time its wrapped callees took
        self._undo = []

    def wrap(self, owner, attribute: str, label: str):
        """Replaces owner.attribute (a class's, a module's or an object's) by a timed call of it."""
        original = getattr(owner, attribute)
        timer = self

        def timed(*args, **kwargs):
            timer.sync()
            timer._stack.append(0.0)
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timer.sync()
                dt = time.perf_counter() - t
                inner = timer._stack.pop()
                timer.own[label] += dt - inner
                timer.calls[label] += 1
                if timer._stack:
                    timer._stack[-1] += dt

        had = attribute in vars(owner) if hasattr(owner, "__dict__") else True
        self._undo.append((owner, attribute, original if had else None))
        setattr(owner, attribute, timed)

    def restore(self):
        for owner, attribute, original in reversed(self._undo):
            if original is None:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, original)
        self._undo = []


def resolve(path: str):
    """The object a "module:Class" or "module" path names."""
    import importlib
    module, _, name = path.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, name) if name else obj


def profile_table(own: dict, steps: int) -> list:
    """Rows (label, microseconds per step, share of the total), largest first, and the total last."""
    total = sum(own.values())
    rows = [(label, round(1e6 * s / steps, 2), round(s / total, 4) if total else 0.0) for label, s in own.items()]
    rows.sort(key=lambda r: -r[1])
    return rows + [("total", round(1e6 * total / steps, 2), 1.0)]


def rss_bytes() -> int:
    """This process's resident memory (Linux /proc; elsewhere the peak, from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory_slope(points: list) -> float | None:
    """Bytes per game between the first and the last (games, rss) point of the curve."""
    if len(points) < 2 or points[-1][0] == points[0][0]:
        return None
    (g0, m0), (g1, m1) = points[0], points[-1]
    return (m1 - m0) / (g1 - g0)


def build_runner(cfg, games: int):
    from ray.tune.registry import register_env

    from scripts.bench_train import local_runner_config
    from training.algorithm import ENV_NAME, make_training_env
    from training.batched_env_runner import BatchedEnvRunner
    register_env(ENV_NAME, make_training_env)
    algo_config = local_runner_config(cfg, games)
    return algo_config, BatchedEnvRunner(config=algo_config)


def agent_steps(episodes) -> int:
    return sum(len(e) for e in episodes)


def profile(cfg, env_steps: int, learner: bool, sampler: bool = True, trace: int = 0) -> dict:
    """The sampler's and the learner's phase tables at the config's games per runner; the sampler's per agent step of
    "main" (a row of training data). `trace` > 0: the learner's operator trace too, its `trace` largest rows."""
    import torch
    torch.set_num_threads(1)
    games = cfg.resources.num_envs_per_env_runner
    algo_config, runner = build_runner(cfg, games)
    runner.sample(num_timesteps=max(env_steps // 4, games * 4), explore=True)  # warm-up: compilation, first games
    out = {"games": games, **(profile_sampler(runner, env_steps) if sampler else {})}
    if learner:
        out.update(profile_learner(cfg, algo_config, runner, trace))
    runner.stop()
    return out


def profile_sampler(runner, env_steps: int) -> dict:
    """One timed sample() of `env_steps` env steps, every phase of PHASES by its own time per agent step of "main",
    and what its episodes cost to move to the driver."""
    timer = PhaseTimer()
    for label, owner, attribute in PHASES:
        timer.wrap(resolve(owner), attribute, label)
    try:
        t = time.perf_counter()
        episodes = runner.sample(num_timesteps=env_steps, explore=True)
        wall = time.perf_counter() - t
    finally:
        timer.restore()
    rows = agent_steps(episodes)
    return {"env_steps": timer.calls["engine"], "agent_steps": rows, "sample_wall_s": round(wall, 2),
            "sample_agent_steps_per_s": round(rows / wall, 1), "sampler_table": profile_table(dict(timer.own), rows),
            **transfer_cost(episodes, rows)}


def transfer_cost(episodes, rows: int) -> dict:
    """What moving a sample's episodes from a runner to the driver costs outside sample(): they are pickled (protocol
    5, as Ray's serializer) and unpickled, per agent step of "main", and their size (the median of 3)."""
    import pickle
    dumps, loads = [], []
    for _ in range(3):
        t = time.perf_counter()
        blob = pickle.dumps(episodes, protocol=5)
        dumps.append(time.perf_counter() - t)
        t = time.perf_counter()
        pickle.loads(blob)
        loads.append(time.perf_counter() - t)
    us = 1e6 / max(rows, 1)
    return {"transfer_pickle_us": round(statistics.median(dumps) * us, 2),
            "transfer_unpickle_us": round(statistics.median(loads) * us, 2),
            "transfer_bytes_per_agent_step": round(len(blob) / max(rows, 1), 1)}


def profile_learner(cfg, algo_config, runner, trace: int = 0) -> dict:
    import torch

    from training.algorithm import make_training_env
    episodes = runner.sample(num_timesteps=cfg.ppo.train_batch_size, explore=True)
    rows = agent_steps(episodes)
    learner = algo_config.build_learner(env=make_training_env({**cfg.env, "seed": 0}))
    ppo = cfg.ppo
    learner.update(episodes=list(episodes), minibatch_size=ppo.minibatch_size, num_epochs=1)  # warm-up
    cuda = learner._device is not None and torch.device(learner._device).type == "cuda"
    timer = PhaseTimer(torch.cuda.synchronize if cuda else None)
    for label, owner, attribute in LEARNER_PHASES:
        timer.wrap(learner if owner is None else resolve(owner), attribute, label)
    try:
        t = time.perf_counter()
        learner.update(episodes=episodes, minibatch_size=ppo.minibatch_size, num_epochs=ppo.num_epochs)
        wall = time.perf_counter() - t
    finally:
        timer.restore()
    out = {"learner_rows": rows, "learner_epochs": ppo.num_epochs, "learner_wall_s": round(wall, 2),
           "learner_rows_per_s": round(rows * ppo.num_epochs / wall, 1), "learner_threads": torch.get_num_threads(),
           "learner_device": str(learner._device),
           "learner_table": profile_table(dict(timer.own), rows * ppo.num_epochs)}
    if trace > 0:
        out["learner_trace"] = trace_update(learner, episodes, ppo, cuda, trace)
    return out


# the host-side calls that a trace counts, by what they mean: a launch queues a kernel; a synchronization makes the
# host wait for the GPU (an .item(), a nonzero, a boolean mask, a device-to-host copy all do)
TRACE_COUNTS = {"kernel_launches": ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx"),
                "synchronizations": ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize"),
                "memcpy_calls": ("cudaMemcpyAsync", "cudaMemcpy")}


def trace_update(learner, episodes, ppo, cuda: bool, top: int) -> dict:
    """One update under torch's profiler: the `top` operators by time of their own on the host (and on the GPU), the
    GPU's busy time, and the counts of TRACE_COUNTS in all and per minibatch."""
    import torch
    from torch.profiler import ProfilerActivity, profile as torch_profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    counter = PhaseTimer()  # counts the minibatches: one gradient computation each
    counter.wrap(learner, "compute_gradients", "minibatch")
    t = time.perf_counter()
    try:
        with torch_profile(activities=activities) as prof:
            learner.update(episodes=episodes, minibatch_size=ppo.minibatch_size, num_epochs=ppo.num_epochs)
            if cuda:
                torch.cuda.synchronize()
    finally:
        counter.restore()
    wall = time.perf_counter() - t
    events = prof.key_averages()
    minibatches = max(1, counter.calls["minibatch"])
    counts = {name: sum(e.count for e in events if e.key in keys) for name, keys in TRACE_COUNTS.items()}
    device_us = sum(getattr(e, "self_device_time_total", 0.0) for e in events if e.device_type.name == "CUDA") \
        if cuda else 0.0

    def rows(key):
        ranked = sorted(events, key=lambda e: -getattr(e, key, 0.0))[:top]
        return [(e.key, e.count, round(getattr(e, key, 0.0) / 1e3, 2)) for e in ranked if getattr(e, key, 0.0) > 0]

    return {"wall_s": round(wall, 3), "minibatches": minibatches, "device_busy_s": round(device_us / 1e6, 3),
            **counts, **{f"{k}_per_minibatch": round(v / minibatches, 1) for k, v in counts.items()},
            "host_ops": rows("self_cpu_time_total"), "device_ops": rows("self_device_time_total") if cuda else []}


def scaling_curve(cfg, games_list: list, env_steps: int) -> list:
    """Per games per runner: agent steps/s of sample() ("main"'s steps, the training data), rows per forward pass of
    "main" while acting, resident memory after the warm-up."""
    import torch
    torch.set_num_threads(1)
    points = []
    for games in games_list:
        _, runner = build_runner(cfg, games)
        n = max(env_steps, games * MIN_STEPS_PER_GAME)
        runner.sample(num_timesteps=n, explore=True)  # warm-up: every game started
        rss = rss_bytes()
        acting = {"rows": 0, "calls": 0}
        original = runner._act

        def counting_act(games_now, explore, _original=original):
            acting["rows"] += sum(len(g.main_agents) for g in games_now)
            acting["calls"] += 1
            return _original(games_now, explore)

        runner._act = counting_act
        rates = []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            rows = agent_steps(runner.sample(num_timesteps=n, explore=True))
            rates.append(rows / (time.perf_counter() - t))
        point = {"games": games, "agent_steps_per_s": round(statistics.median(rates), 1),
                 "rows_per_forward": round(acting["rows"] / max(1, acting["calls"]), 1),
                 "rss_mb": round(rss / 2**20, 1)}
        points.append(point)
        print(json.dumps(point), flush=True)
        runner.stop()
        del runner
    return points


def print_table(title: str, rows: list):
    print(f"\n{title}\n\n| phase | us per agent step | share |\n|---|---|---|")
    for label, us, share in rows:
        print(f"| {label} | {us:.1f} | {100 * share:.1f}% |")


def print_trace(tr: dict):
    print(f"\nOne update traced: {tr['wall_s']} s, {tr['minibatches']} minibatches, "
          f"the GPU busy {tr['device_busy_s']} s; per minibatch {tr['kernel_launches_per_minibatch']} kernel launches, "
          f"{tr['synchronizations_per_minibatch']} synchronizations, {tr['memcpy_calls_per_minibatch']} copies")
    for title, key in (("host", "host_ops"), ("GPU", "device_ops")):
        if tr[key]:
            print(f"\n| operator ({title}) | calls | own ms |\n|---|---|---|")
            for name, calls, ms in tr[key]:
                print(f"| {name[:90]} | {calls} | {ms:.1f} |")


@user_errors
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="tune_configs/hok_1v1_kickstart.yaml")
    p.add_argument("--games", type=int, nargs="*", default=[8, 32, 128, 512],
                   help="games per runner of the scaling curve (none: no curve)")
    p.add_argument("--env-steps", type=int, default=4096, help="env steps per timed sample")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--no-learner", action="store_true", help="profile the sampler only")
    which.add_argument("--no-sampler", action="store_true", help="profile the learner only (e.g. on a GPU box)")
    p.add_argument("--trace", type=int, default=0, metavar="N",
                   help="also trace one learner update with torch's profiler and print its N largest operators")
    p.add_argument("--no-profile", action="store_true", help="the scaling curve only")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args(argv)
    if args.env_steps < 1 or any(g < 1 for g in args.games):
        raise ValueError(f"--env-steps and --games: must be >= 1, got {args.env_steps} and {args.games}")
    from training import run_config
    if args.trace < 0:
        raise ValueError(f"--trace: must be >= 0, got {args.trace}")
    # the KL stop off (as bench_train's learner figure): an update stopped early would be timed for rows it skipped
    cfg = run_config.load(args.config, ["ppo.target_kl=0.0"] + list(args.set) + ["evaluation.interval=0"])
    out = {"config": args.config, "mode": cfg.env.get("mode", "5v5")}
    if not args.no_profile:
        prof = profile(cfg, args.env_steps, not args.no_learner, not args.no_sampler, args.trace)
        if "sampler_table" in prof:
            print_table(f"Sampling, {prof['games']} games per runner, {prof['env_steps']} env steps",
                        prof["sampler_table"])
            print(f"\nThe episodes to the driver (outside sample()): pickled {prof['transfer_pickle_us']} us and "
                  f"unpickled {prof['transfer_unpickle_us']} us per agent step, "
                  f"{prof['transfer_bytes_per_agent_step']:.0f} bytes each")
        if "learner_table" in prof:
            print_table(f"Learning on {prof['learner_device']}, {prof['learner_rows']} rows x "
                        f"{prof['learner_epochs']} epochs, {prof['learner_threads']} threads: "
                        f"{prof['learner_rows_per_s']} rows/s", prof["learner_table"])
        if "learner_trace" in prof:
            print_trace(prof["learner_trace"])
        out.update(prof)
    if args.games:
        points = scaling_curve(cfg, args.games, args.env_steps)
        slope = memory_slope([(p["games"], p["rss_mb"] * 2**20) for p in points])
        print("\n| games per runner | agent steps/s | rows per forward | RSS (MB) |\n|---|---|---|---|")
        for pt in points:
            print(f"| {pt['games']} | {pt['agent_steps_per_s']:.0f} | {pt['rows_per_forward']:.1f} | "
                  f"{pt['rss_mb']:.0f} |")
        out["scaling"] = points
        out["rss_mb_per_game"] = None if slope is None else round(slope / 2**20, 2)
        print(f"\nmemory per game: {out['rss_mb_per_game']} MB")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
