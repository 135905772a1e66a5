"""Training throughput, the batched env runner against RLlib's classic one, for run configs (by default the shipped
agents' configs: the 1v1 agent's two stages and the 5v5 agent's, at their own batch, epochs and games per runner),
each beside the engine's speed.

    python scripts/bench_train.py [--configs tune_configs/hok_1v1_kickstart.yaml tune_configs/five_5v5_kickstart.yaml] \
        [--iterations 3] [--rounds 6] [--set key=value ...] [--trueskill] [--no-engine] [--only learner]

First the engine with observations (``scripts/bench_env.py`` in its own process, one core, before Ray starts): agent
decisions/s per core of each mode; it is measured again once Ray has stopped, and the fractions below take the mean
of the two (``bracket_engine``), since this machine's speed moves by up to a third within minutes. Then per config
(without evaluation games or a critic-only warm-up) it measures:

- sampling only: one env runner of each kind, built in this process from the config (its envs per runner, one torch
  thread), sampling in alternation so that both see the same machine; agent steps/s of each (the median over
  --rounds samples of 256 env steps; every hero's decisions, the fixed agents' included, as the engine's figure
  counts them) and their ratio (batched over classic). A config RLlib's classic runner cannot run (fixed agents,
  the curriculum or an agent teacher: the shipped kickstart configs) is measured on the batched runner alone;
- the learner: rows/s of ``Learner.update`` on one iteration's batch (train_batch_size env steps, the config's
  minibatch size and epochs, its learner threads, the KL stop off so that every minibatch is applied): agent steps
  times epochs over seconds, the median of updates repeated for at least 5 s. Both env runners feed the same
  learner;
- all-in training: the algorithm of each kind on an embedded Ray of 2 CPUs (the config's runners and envs, league and
  TrueSkill as configured, evaluation off), one warm-up iteration, then --iterations timed ones: agent steps trained
  per second of wall time (same batch and epochs for both paths).

--trueskill also measures the batched path with the TrueSkill actor rating a version every iteration, and reports the
slowdown it causes (the budget is 15%). Each all-in figure is also given as a fraction of the engine on the same
cores, ``<mode>_batched_fraction_of_engine`` = trained agent steps/s / (2 x the engine's per-core decisions/s),
against the targets (TARGET_FRACTION: 25% in 1v1, 12% in 5v5). Each config's own fraction (``configs``) takes the
engine measured just before and just after its batched all-in training (``engine_around`` in its details; Ray up and
idle), since this machine's speed moved by a quarter within one run: the mode's figures bracket the whole run. Prints
a JSON line last, with at least ``<mode>_sampling_ratio``, ``<mode>_trained_agent_steps_per_s`` and
``<mode>_classic_trained_agent_steps_per_s`` for each mode (the first config of that mode), ``configs`` (every config
by its file's name: its mode, all-in agent steps/s and fraction of the engine, and the target) and ``details`` (every
config's measurements, by the same name).
"""
from __future__ import annotations

import argparse
import json
import time


SAMPLE_ENV_STEPS = 256  # env steps per sample() call of the sampling measurement
# the configs people train with (the shipped agents' configs: the 1v1 agent's two stages, the 5v5 agent's one), at
# their own batch, epochs and games per runner
DEFAULT_CONFIGS = ["tune_configs/hok_1v1_kickstart.yaml", "tune_configs/hok_1v1_top_rung.yaml",
                   "tune_configs/five_5v5_kickstart.yaml"]
TRAINING_CORES = 2  # the all-in measurement's embedded Ray (ray.init(num_cpus=2)); the engine's figure is per core
# issue 30's targets: all-in training as a fraction of the engine's agent decisions/s on the same cores
TARGET_FRACTION = {"1v1": 0.25, "5v5": 0.12}
ENGINE_STEPS = 6000  # bench_env.py's timed steps per mode, each time the engine is measured
TARGET_SAMPLING_RATIO = 2.0
TARGET_TRAINED = {"1v1": 2700.0, "5v5": 1800.0}  # agent steps trained per second on 2 cores (the targets)
PATHS = ("batched", "classic")
LEARNER_MIN_S = 5.0  # the learner's figure: updates on one batch until this many seconds have passed ...
LEARNER_UPDATES = 3  # ... and at least this many (one 5v5 update takes under a second)


def load(path: str, sets: list, *extra: str) -> dict:
    """The run config, without evaluation games or a critic-only warm-up (a few iterations at a run's start): the
    figures are those of the update that trains the policy."""
    from training import run_config
    return run_config.load(path, list(sets) + ["evaluation.interval=0", "init.value_warmup_iterations=0", *extra])


def config_label(path: str) -> str:
    """A config's name in the figures: its file's name without .yaml."""
    import os
    return os.path.splitext(os.path.basename(path))[0]


def classic_unsupported(path: str, sets: list) -> str | None:
    """Why RLlib's classic env runner cannot run this config (the settings' own message: fixed agents, the curriculum
    and an agent teacher play inside the batched runner only), or None if it can."""
    try:
        load(path, sets, "resources.env_runner=classic")
    except ValueError as e:
        return str(e)
    return None


def measure_engine(modes: list, steps: int = ENGINE_STEPS) -> dict:
    """Mode -> the engine with observations (scripts/bench_env.py, one core, random legal actions, its own process:
    it pins itself to one core), agent decisions/s per core."""
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_env.py")
    out = subprocess.run([sys.executable, script, "--steps", str(steps), "--modes", *modes], capture_output=True,
                         text=True, check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    return {m: figures[m]["env_decisions_per_s"] for m in modes}


def bracket_engine(before: dict, after: dict) -> dict:
    """Mode -> the engine's per-core decisions/s as the mean of its figures before and after the training
    measurements, with both and their spread (after / before - 1), so a fraction is taken against the machine's
    speed over the whole run."""
    return {m: {"before": before[m], "after": after[m], "mean": (before[m] + after[m]) / 2,
                "spread": round(after[m] / before[m] - 1, 4)} for m in before if m in after}


def fraction_of_engine(agent_steps_per_s: float, per_core: float) -> float:
    """All-in training as a fraction of the engine's per-core decisions/s on TRAINING_CORES cores."""
    return round(agent_steps_per_s / (TRAINING_CORES * per_core), 4)


def engine_fractions(figures: dict, engine: dict) -> dict:
    """Per mode with both figures: the engine's per-core decisions/s, and each path's all-in training as a fraction
    of the engine on TRAINING_CORES cores."""
    out = {}
    for m, per_core in engine.items():
        if f"{m}_trained_agent_steps_per_s" not in figures:
            continue
        out[f"{m}_engine_decisions_per_s"] = per_core
        for kind, key in (("batched", "trained_agent_steps_per_s"), ("classic", "classic_trained_agent_steps_per_s")):
            if f"{m}_{key}" in figures:
                out[f"{m}_{kind}_fraction_of_engine"] = fraction_of_engine(figures[f"{m}_{key}"], per_core)
    return out


def config_fractions(details: dict, engine: dict) -> dict:
    """Config label -> its mode, its all-in training (batched) and that as a fraction of its mode's engine on
    TRAINING_CORES cores, beside the mode's target; configs without both figures are left out. A config whose
    training was bracketed by its own engine figures (``engine_around``: measured just before and just after it)
    is taken against their mean, the machine's speed while it trained; any other against its mode's `engine`."""
    out = {}
    for label, d in details.items():
        trained = d.get("batched", {}).get("trained_agent_steps_per_s")
        around = d.get("engine_around")
        if trained is None or (d["mode"] not in engine and around is None):
            continue
        per_core = around["mean"] if around is not None else engine[d["mode"]]
        out[label] = {"mode": d["mode"], "trained_agent_steps_per_s": trained,
                      "fraction_of_engine": fraction_of_engine(trained, per_core),
                      "target": TARGET_FRACTION.get(d["mode"], 0.0)}
        if around is not None:
            out[label]["engine_decisions_per_s"] = per_core
    return out


def local_runner_config(cfg, games: int | None = None):
    """The run's algorithm config for env runners built in this process (no remote ones), with the config's games per
    runner or `games`."""
    from callbacks import run_callbacks
    from training.algorithm import build_algo_config
    config = build_algo_config(cfg, run_callbacks()).env_runners(num_env_runners=0)
    return config if games is None else config.env_runners(num_envs_per_env_runner=games)


def measure_sampling(cfg, rounds: int, kinds: tuple = PATHS) -> dict:
    """Agent steps/s of each runner kind of `kinds` (median over alternating samples) and the ratio, batched over
    classic (None without the classic one)."""
    import numpy as np
    import torch
    from training.batched_env_runner import BatchedEnvRunner
    from training.classic_env_runner import ClassicEnvRunner
    torch.set_num_threads(1)
    algo_config = local_runner_config(cfg)
    runners = {k: {"batched": BatchedEnvRunner, "classic": ClassicEnvRunner}[k](config=algo_config) for k in kinds}
    heroes = len(runners["batched"].env.envs[0].unwrapped.possible_agents)
    seconds = {k: [] for k in runners}
    for r in runners.values():
        r.sample(num_timesteps=SAMPLE_ENV_STEPS, explore=True)  # warm-up: compilation, first games
    for _ in range(rounds):
        for k, r in runners.items():
            t = time.perf_counter()
            r.sample(num_timesteps=SAMPLE_ENV_STEPS, explore=True)
            seconds[k].append(time.perf_counter() - t)
    for r in runners.values():
        r.stop()
    rate = {k: SAMPLE_ENV_STEPS * heroes / float(np.median(v)) for k, v in seconds.items()}
    return {"batched_agent_steps_per_s": round(rate["batched"], 1),
            "classic_agent_steps_per_s": round(rate["classic"], 1) if "classic" in rate else None,
            "ratio": round(rate["batched"] / rate["classic"], 3) if "classic" in rate else None}


def measure_learner(cfg, min_seconds: float = LEARNER_MIN_S) -> dict:
    """Learner rows/s on one iteration's batch from the batched runner: updates on that batch, after a warm-up one,
    until `min_seconds` have passed (at least LEARNER_UPDATES); the median update's rows/s. The KL stop is off
    (ppo.target_kl 0): an update stopped early would be timed for fewer rows than it counts."""
    import dataclasses

    import numpy as np
    from training.algorithm import make_training_env
    from training.batched_env_runner import BatchedEnvRunner
    cfg = dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, target_kl=0.0))
    algo_config = local_runner_config(cfg)
    runner = BatchedEnvRunner(config=algo_config)
    episodes = runner.sample(num_timesteps=cfg.ppo.train_batch_size, explore=True)
    rows = sum(len(e) for e in episodes)
    learner = algo_config.build_learner(env=make_training_env({**cfg.env, "seed": 0}))
    ppo = cfg.ppo
    learner.update(episodes=episodes, minibatch_size=ppo.minibatch_size, num_epochs=1)  # warm-up
    times = []
    while len(times) < LEARNER_UPDATES or sum(times) < min_seconds:
        t = time.perf_counter()
        learner.update(episodes=episodes, minibatch_size=ppo.minibatch_size, num_epochs=ppo.num_epochs)
        times.append(time.perf_counter() - t)
    runner.stop()
    import torch
    dt = float(np.median(times))
    return {"rows": rows, "epochs": ppo.num_epochs, "updates": len(times), "target_kl": ppo.target_kl,
            "update_s": round(dt, 2),
            "rows_per_s": round(rows * ppo.num_epochs / dt, 1), "device": str(learner._device),
            "torch_threads": torch.get_num_threads()}


def measure_training(cfg, iterations: int) -> dict:
    """Agent steps trained per second of wall time over `iterations` iterations after a warm-up one."""
    from training.algorithm import build_algo_config
    from callbacks import run_callbacks
    algo = build_algo_config(cfg, run_callbacks()).build_algo()
    try:
        algo.train()  # warm-up: compilation, first episodes
        agent_steps = env_steps = 0
        t0 = time.time()
        for _ in range(iterations):
            er = algo.train()["env_runners"]
            env_steps += er.get("num_env_steps_sampled", 0)
            a = er.get("num_agent_steps_sampled", 0)
            agent_steps += sum(a.values()) if isinstance(a, dict) else a
        dt = time.time() - t0
    finally:
        algo.stop()
    return {"trained_agent_steps_per_s": round(agent_steps / dt, 1), "env_steps_per_s": round(env_steps / dt, 1),
            "seconds_per_iteration": round(dt / iterations, 2)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS)
    p.add_argument("--no-engine", action="store_true", help="skip the engine's figure (scripts/bench_env.py)")
    p.add_argument("--iterations", type=int, default=3, help="timed training iterations per path")
    p.add_argument("--rounds", type=int, default=6, help="alternating samples per runner kind")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--trueskill", action="store_true", help="also train with the TrueSkill actor busy")
    p.add_argument("--only", choices=["learner"], help="measure the learner only (e.g. on a GPU box: --set "
                                                         "resources.num_gpus_per_learner=1)")
    args = p.parse_args(argv)
    import ray
    from ray.tune.registry import register_env

    from training.algorithm import ENV_NAME, make_training_env
    from moba.env.config import EnvConfig
    modes = {path: load(path, args.set).env.get("mode", EnvConfig.mode) for path in args.configs}
    engine = {}
    if args.only is None and not args.no_engine:  # first, on the machine as quiet as training will find it
        engine = measure_engine(sorted(set(modes.values())))
        print("engine + observations, one core: " + ", ".join(f"{m} {v:.0f} agent decisions/s"
                                                              for m, v in engine.items()), flush=True)
    ray.init(num_cpus=TRAINING_CORES if args.only is None else None, include_dashboard=False)
    register_env(ENV_NAME, make_training_env)
    out, details = {}, {}
    for path in args.configs:
        cfg = load(path, args.set, "trueskill.every=0")
        mode = cfg.env.get("mode", EnvConfig.mode)
        label = config_label(path)
        # the figures keyed by mode are the first config's of each mode; every config's are in details and configs
        first = not any(d["mode"] == mode for d in details.values())
        if args.only == "learner":
            d = details[label] = {"config": path, "mode": mode, "learner": measure_learner(cfg)}
            print(f"{label} ({mode}) learner: {d['learner']['rows_per_s']:.0f} rows/s", flush=True)
            if first:
                out[f"{mode}_learner_rows_per_s"] = d["learner"]["rows_per_s"]
            continue
        unsupported = classic_unsupported(path, args.set)
        kinds = PATHS if unsupported is None else ("batched",)
        d = details[label] = {"config": path, "mode": mode, "sampling": measure_sampling(cfg, args.rounds, kinds),
                              "learner": measure_learner(cfg), "classic_unsupported": unsupported}
        sampled = d["sampling"]
        classic = ("classic not measured: it cannot run this config" if unsupported else
                   f"classic {sampled['classic_agent_steps_per_s']:.0f} (ratio {sampled['ratio']:.2f})")
        print(f"{label} ({mode}) sampling: batched {sampled['batched_agent_steps_per_s']:.0f} agent steps/s, "
              f"{classic}; learner {d['learner']['rows_per_s']:.0f} rows/s", flush=True)
        for kind in kinds:
            if kind == "batched" and engine:  # the engine just before and just after: the speed while it trained
                before = measure_engine([mode])
            d[kind] = measure_training(load(path, args.set, "trueskill.every=0", f"resources.env_runner={kind}"),
                                       args.iterations)
            if kind == "batched" and engine:
                d["engine_around"] = bracket_engine(before, measure_engine([mode]))[mode]
            print(f"{label} ({mode}) training, {kind}: {d[kind]['trained_agent_steps_per_s']:.0f} agent steps/s "
                  f"({d[kind]['seconds_per_iteration']:.1f} s/iteration)", flush=True)
        if args.trueskill:
            busy = measure_training(load(path, args.set, "trueskill.every=1"), args.iterations)
            d["with_trueskill"] = busy
            d["trueskill_slowdown"] = round(1 - busy["trained_agent_steps_per_s"]
                                            / d["batched"]["trained_agent_steps_per_s"], 3)
            print(f"{label} ({mode}) training with the TrueSkill actor busy: "
                  f"{busy['trained_agent_steps_per_s']:.0f} agent steps/s (slowdown "
                  f"{100 * d['trueskill_slowdown']:.0f}%)", flush=True)
        if not first:
            continue
        out.update({f"{mode}_sampling_ratio": d["sampling"]["ratio"],
                    f"{mode}_learner_rows_per_s": d["learner"]["rows_per_s"],
                    f"{mode}_trained_agent_steps_per_s": d["batched"]["trained_agent_steps_per_s"]})
        if "classic" in d:
            out[f"{mode}_classic_trained_agent_steps_per_s"] = d["classic"]["trained_agent_steps_per_s"]
    ray.shutdown()
    if engine:  # again, on the quiet machine: the fractions take the mean of the two
        bracket = bracket_engine(engine, measure_engine(sorted(engine)))
        engine = {m: b["mean"] for m, b in bracket.items()}
        for m, b in bracket.items():
            out[f"{m}_engine_before_after"] = [b["before"], b["after"]]
            print(f"engine + observations, one core, {m}: {b['before']:.0f} before, {b['after']:.0f} after "
                  f"({100 * b['spread']:+.0f}%)", flush=True)
    out.update(engine_fractions(out, engine))
    out["configs"] = config_fractions(details, engine)
    for label, c in out["configs"].items():
        print(f"{label} ({c['mode']}): all-in training {c['trained_agent_steps_per_s']:.0f} agent steps/s = "
              f"{100 * c['fraction_of_engine']:.1f}% of the engine on {TRAINING_CORES} cores ({TRAINING_CORES} x "
              f"{c.get('engine_decisions_per_s', engine[c['mode']]):.0f}; target {100 * c['target']:.0f}%)", flush=True)
    if engine:  # issue 30's targets: fractions of the engine, for every config measured
        out["meets_targets"] = args.only is None and len(out["configs"]) == len(details) and all(
            c["fraction_of_engine"] >= c["target"] for c in out["configs"].values())
    else:
        out["meets_targets"] = args.only is None and all(
            (d["sampling"]["ratio"] or 0.0) >= TARGET_SAMPLING_RATIO
            and d["batched"]["trained_agent_steps_per_s"] >= TARGET_TRAINED.get(d["mode"], 0.0)
            for d in details.values())
    out["details"] = details
    print(json.dumps(out))


if __name__ == "__main__":
    main()
