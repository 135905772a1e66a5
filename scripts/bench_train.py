"""Training throughput: env steps/s and agent steps/s of PPO training on a run config, next to the same pipeline
(same spaces, same model, same callbacks and reward wrapper) on a trivial environment that replays one real
observation. The ratio is what our environment costs RLlib. Target: ratio >= 0.8.

    python scripts/bench_train.py --configs tune_configs/smoke.yaml tune_configs/five_5v5_baseline.yaml \
        [--iterations 3] [--set key=value ...] [--trueskill]

--trueskill also measures the real environment with the in-training TrueSkill actor kept busy (a version submitted
every iteration) and reports the slowdown it causes (issue budget: 15%).

Each measurement builds the algorithm in this process (embedded Ray, 2 CPUs), runs one warm-up iteration, then
times --iterations iterations. Prints a table and a JSON line last.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGET_RATIO = 0.8


def make_trivial_env(env_config):
    """Same spaces and agents as the real training env; every step returns the observation captured at reset of a
    real game, zero rewards, and ends after the same number of steps as a full-length real game would take."""
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    from app.algorithm import make_training_env
    from app.game.constants import TICKS_PER_SECOND

    real = make_training_env(env_config)

    class TrivialEnv(MultiAgentEnv):
        def __init__(self):
            super().__init__()
            self.possible_agents = real.possible_agents
            self.agents = list(self.possible_agents)
            self.observation_spaces = real.observation_spaces
            self.action_spaces = real.action_spaces
            self.obs, _ = real.reset(seed=0)
            base = real.env
            self.limit = int(base.cfg.time_limit_s or base.game.time_limit_s) * TICKS_PER_SECOND // base.cfg.frameskip
            self.t = 0

        def reset(self, *, seed=None, options=None):
            self.t = 0
            return dict(self.obs), {a: {} for a in self.agents}

        def step(self, actions):
            self.t += 1
            done = self.t >= self.limit
            info = {"reward_signals": {"win": 0.0}, "game_time_s": self.t * 4 / 30, "raw_reward": 0.0}
            return (dict(self.obs), {a: 0.0 for a in self.agents}, {"__all__": False},
                    {"__all__": done}, {a: dict(info) for a in self.agents})

    return TrivialEnv()


def measure(cfg: dict, env_name: str, iterations: int) -> dict:

    from app.algorithm import build_algo_config
    algo_config = build_algo_config(cfg).environment(env_name)
    algo = algo_config.build_algo()
    try:
        algo.train()  # warm-up: compilation, first episodes
        env_steps = agent_steps = 0
        t0 = time.time()
        for _ in range(iterations):
            r = algo.train()
            er = r["env_runners"]
            env_steps += er.get("num_env_steps_sampled", 0)
            a = er.get("num_agent_steps_sampled", 0)
            agent_steps += sum(a.values()) if isinstance(a, dict) else a
        dt = time.time() - t0
    finally:
        algo.stop()
    return {"env_steps_per_s": round(env_steps / dt, 1), "agent_steps_per_s": round(agent_steps / dt, 1),
            "seconds_per_iteration": round(dt / iterations, 2)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", nargs="+", default=["tune_configs/smoke.yaml", "tune_configs/five_5v5_baseline.yaml"])
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--trueskill", action="store_true", help="also measure with the TrueSkill actor busy")
    args = p.parse_args(argv)
    import ray
    from ray.tune.registry import register_env

    from app import train_config
    from app.algorithm import ENV_NAME, make_training_env
    from app.env.config import EnvConfig
    cfgs = [train_config.load(c, args.set + ["evaluation.interval=0", "trueskill.every=0"]) for c in args.configs]
    ray.init(num_cpus=2, include_dashboard=False)
    register_env(ENV_NAME, make_training_env)
    register_env("openfive_trivial", make_trivial_env)
    out = {}
    for path, cfg in zip(args.configs, cfgs):
        real = measure(cfg, ENV_NAME, args.iterations)
        trivial = measure(cfg, "openfive_trivial", args.iterations)
        ratio = real["env_steps_per_s"] / max(trivial["env_steps_per_s"], 1e-9)
        res = cfg["resources"]
        out[cfg["name"]] = {"config": path, "mode": cfg["env"].get("mode", EnvConfig.mode),
                            "layout": f"{res['num_env_runners']} runners x {res['num_envs_per_env_runner']} envs",
                            "train_batch_size": cfg["ppo"]["train_batch_size"], "real": real, "trivial": trivial,
                            "ratio": round(ratio, 3)}
        if args.trueskill:
            busy = measure(train_config.load(path, args.set + ["evaluation.interval=0", "trueskill.every=1"]),
                           ENV_NAME, args.iterations)
            slowdown = 1.0 - busy["env_steps_per_s"] / max(real["env_steps_per_s"], 1e-9)
            out[cfg["name"]].update(real_with_trueskill=busy, trueskill_slowdown=round(slowdown, 3))
            print(f"{cfg['name']:22s} with the TrueSkill actor busy: {busy['env_steps_per_s']:7.1f} env/s "
                  f"(slowdown {100 * slowdown:.0f}%)", flush=True)
        print(f"{cfg['name']:22s} {out[cfg['name']]['layout']:22s} real {real['env_steps_per_s']:7.1f} env/s "
              f"{real['agent_steps_per_s']:8.1f} agent/s ({real['seconds_per_iteration']:.1f} s/iter) | trivial "
              f"{trivial['env_steps_per_s']:7.1f} env/s | ratio {ratio:.2f}", flush=True)
    ray.shutdown()
    print(json.dumps({"results": out, "target_ratio": TARGET_RATIO,
                      "meets_target": all(v["ratio"] >= TARGET_RATIO for v in out.values())}))


if __name__ == "__main__":
    main()
