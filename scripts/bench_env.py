"""Single-core throughput benchmark of the engine and of the environment, with random legal actions.

    python scripts/bench_env.py [--steps 3000] [--warmup 100] [--modes 5v5 1v1] [--seed 0] [--cpu N | --all-cores]

For each mode it measures:

- "engine only": ``Game.step(orders)`` with random engine orders built directly in engine terms (move to a random
  point near the hero, attack a random enemy unit near the hero, cast a random ability at a nearby enemy unit or
  point, or nothing);
- "engine + observations": ``MobaEnv.step(actions)`` with random legal actions (primary action uniform over the
  legal ones of ``obs["action_mask"]``, a legal unit row from ``obs["unit_masks"]``, random delay and offsets),
  which includes validating and decoding the actions, the rewards and the observations of every hero.

``--all-cores`` runs one such process on every core this process may use, all at once (each pinned to its core,
``--cpu``), and reports their sum per mode beside each core's figure: the engine's capacity on a box of many cores,
against which training there is a fraction (docs/performance.md, the GPU path).

Only the ``step`` calls are timed: the random agent's time (drawing actions from pre-generated numbers) is reported
separately. Decisions/s = steps/s x number of heroes. Games that end are restarted (the reset is not timed).
The last line of output is a single JSON object with the figures.
"""
from __future__ import annotations

import os
import sys

# one core: set before numpy / numba are imported
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"


import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from moba.game.teams import MODES, n_heroes  # noqa: E402
from policies.agents.scripted import PredrawnRandomActions  # noqa: E402

TARGETS = {"5v5_env_decisions_per_s": 4000.0, "5v5_engine_decisions_per_s": 10000.0}


def pin_one_core(cpu: int | None = None) -> str:
    """Pins this process to one CPU (`cpu`, or the first one it may run on). Returns a description."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
        if cpu is not None and cpu not in allowed:
            raise ValueError(f"--cpu: {cpu} is not a CPU this process may run on; allowed: {allowed}")
        cpu = allowed[0] if cpu is None else cpu
        os.sched_setaffinity(0, {cpu})
        return f"pinned to cpu {cpu}"
    except (AttributeError, OSError, IndexError) as e:  # not Linux, or not permitted
        return f"not pinned ({e.__class__.__name__})"


def peak_rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return kb / (1024.0 * 1024.0) if sys.platform == "darwin" else kb / 1024.0


# ---- engine only -----------------------------------------------------------------------------------------------------
class RandomEngineOrders:
    """Random engine orders (state.P_* rows) drawn from pre-generated numbers."""

    NEAR = 1500.0  # attack / spell targets are picked among enemy units this close to the hero
    MOVE_RADIUS = 800.0

    def __init__(self, n_heroes: int, n_draws: int, rng: np.random.Generator):
        self.n = n_heroes
        self.kind = rng.choice(4, size=(n_draws, n_heroes), p=(0.2, 0.4, 0.3, 0.1))  # noop, move, attack, ability
        self.r = rng.random((n_draws, n_heroes))  # picks the target among the candidates
        self.dxy = rng.uniform(-self.MOVE_RADIUS, self.MOVE_RADIUS, size=(n_draws, n_heroes, 2))
        self.tick = rng.integers(0, 4, size=(n_draws, n_heroes))
        self.arg = rng.integers(0, 4, size=(n_draws, n_heroes))
        self.i = 0

    def __call__(self, game) -> np.ndarray:
        from moba.game.abilities import TT_POINT, TT_WARD
        from moba.game.constants import UT_FOUNTAIN
        from moba.game.state import (F_X, F_Y, H_UNIT, I_ALIVE, I_TEAM, I_TYPE, I_USED, NP, OK_ABILITY, OK_ATTACK,
                                    OK_MOVE, P_ACTIVE, P_ARG, P_KIND, P_TICK, P_UNIT, P_X, P_Y)
        from moba.game.tables import A_TT
        s = game.s
        i = self.i % self.kind.shape[0]
        self.i += 1
        orders = np.zeros((self.n, NP), np.float64)
        live = (s.ui[:, I_USED] == 1) & (s.ui[:, I_ALIVE] == 1) & (s.ui[:, I_TYPE] != UT_FOUNTAIN)
        for h in range(self.n):
            k = self.kind[i, h]
            if k == 0:
                continue
            u = s.hi[h, H_UNIT]
            x, y = s.uf[u, F_X], s.uf[u, F_Y]
            o = orders[h]
            o[P_ACTIVE], o[P_TICK] = 1.0, min(int(self.tick[i, h]), game.frameskip - 1)
            o[P_X], o[P_Y] = x + self.dxy[i, h, 0], y + self.dxy[i, h, 1]
            o[P_UNIT] = -1
            if k == 1:
                o[P_KIND] = OK_MOVE
                continue
            near = np.flatnonzero(live & (s.ui[:, I_TEAM] != s.ui[u, I_TEAM])
                                  & (np.abs(s.uf[:, F_X] - x) < self.NEAR) & (np.abs(s.uf[:, F_Y] - y) < self.NEAR))
            if len(near):
                o[P_UNIT] = near[int(self.r[i, h] * len(near))]
            if k == 2:
                if len(near) == 0:  # nothing to attack: move instead
                    o[P_KIND] = OK_MOVE
                else:
                    o[P_KIND] = OK_ATTACK
            else:
                arg = int(self.arg[i, h])
                o[P_KIND], o[P_ARG] = OK_ABILITY, arg
                if game.abi[game.hero_ab[h, arg], A_TT] not in (TT_POINT, TT_WARD):
                    o[P_X], o[P_Y] = 0.5 * self.dxy[i, h, 0], 0.5 * self.dxy[i, h, 1]  # offset from the unit
        return orders


def bench_engine(mode: str, steps: int, warmup: int, seed: int) -> dict:
    from moba.game.engine import Game, GameSetup
    rng = np.random.default_rng(seed)
    agent = RandomEngineOrders(n_heroes(mode), 4096, rng)

    def new_game():
        return Game(GameSetup(mode=mode))

    game = new_game()
    for _ in range(warmup):  # numba compile / cache load
        game.step(agent(game))
        if game.terminated or game.truncated:
            game = new_game()
    game = new_game()
    step_t = agent_t = 0.0
    games, game_s = 1, 0.0
    for _ in range(steps):
        t0 = time.perf_counter()
        orders = agent(game)
        t1 = time.perf_counter()
        game.step(orders)
        t2 = time.perf_counter()
        agent_t += t1 - t0
        step_t += t2 - t1
        if game.terminated or game.truncated:
            game_s += game.time
            game = new_game()
            games += 1
    game_s += game.time
    n = game.n_heroes
    return {"steps": steps, "heroes": n, "time_s": step_t, "agent_time_s": agent_t, "games": games,
            "game_seconds": game_s, "steps_per_s": steps / step_t, "decisions_per_s": steps * n / step_t}


# ---- engine + observations -------------------------------------------------------------------------------------------
def bench_env(mode: str, steps: int, warmup: int, seed: int) -> dict:
    from moba.env.moba_env import MobaEnv
    env = MobaEnv({"mode": mode, "seed": seed})
    rng = np.random.default_rng(seed + 1)
    agent = PredrawnRandomActions(env.possible_agents, env.cfg.max_units, 4096, rng)
    obs, _ = env.reset()
    for _ in range(warmup):
        obs, _, term, trunc, _ = env.step(agent(obs))
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    obs, _ = env.reset()
    step_t = agent_t = 0.0
    games, game_s = 1, 0.0
    n_legal = 0
    for _ in range(steps):
        t0 = time.perf_counter()
        actions = agent(obs)
        t1 = time.perf_counter()
        obs, _, term, trunc, _ = env.step(actions)
        t2 = time.perf_counter()
        agent_t += t1 - t0
        step_t += t2 - t1
        n_legal += sum(int(o["action_mask"].sum()) for o in obs.values())
        if term["__all__"] or trunc["__all__"]:
            game_s += env.game.time
            obs, _ = env.reset()
            games += 1
    game_s += env.game.time
    n = env.n_heroes
    return {"steps": steps, "heroes": n, "time_s": step_t, "agent_time_s": agent_t, "games": games,
            "game_seconds": game_s, "steps_per_s": steps / step_t, "decisions_per_s": steps * n / step_t,
            "mean_legal_primary": n_legal / (steps * n)}


def all_cores(args) -> int:
    """One process of this benchmark per allowed core, all started together, each pinned to its core; prints each
    core's env decisions/s and the sum per mode, then a JSON line (per mode: the sum, the cores, each core's)."""
    import subprocess
    cpus = sorted(os.sched_getaffinity(0))
    base = [sys.executable, os.path.abspath(__file__), "--steps", str(args.steps), "--warmup", str(args.warmup),
            "--modes", *args.modes]
    procs = [subprocess.Popen(base + ["--seed", str(args.seed + i), "--cpu", str(cpu)], stdout=subprocess.PIPE,
                              text=True) for i, cpu in enumerate(cpus)]
    figures = []
    for cpu, proc in zip(cpus, procs):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"bench_env.py on cpu {cpu} exited {proc.returncode}")
        figures.append(json.loads(out.strip().splitlines()[-1]))
    out = {"cores": len(cpus), "steps": args.steps}
    for mode in args.modes:
        per_core = [f[mode]["env_decisions_per_s"] for f in figures]
        out[mode] = {"env_decisions_per_s": round(sum(per_core), 1), "per_core": per_core,
                     "engine_decisions_per_s": round(sum(f[mode]["engine_decisions_per_s"] for f in figures), 1)}
        print(f"{mode}: engine + obs on {len(cpus)} cores at once: {sum(per_core):.0f} decisions/s "
              f"({min(per_core):.0f}-{max(per_core):.0f} per core)")
    print(json.dumps(out))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000, help="timed steps per mode and measurement (default 3000)")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first (numba compile; default 100)")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--seed", type=int, default=0)
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--cpu", type=int, default=None, help="the CPU to pin to (default: the first allowed)")
    where.add_argument("--all-cores", action="store_true",
                       help="one pinned process per allowed core, all at once; their sum per mode")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be >= 1 and --warmup >= 0")
    if args.all_cores:
        return all_cores(args)
    pinned = pin_one_core(args.cpu)
    t_import = time.perf_counter()
    import moba.env.moba_env  # noqa: F401
    from moba.game.constants import DEFAULT_FRAMESKIP, TICKS_PER_SECOND  # noqa: F401  (imports numba kernels)
    t_import = time.perf_counter() - t_import

    print(f"bench_env: python {platform.python_version()}, {platform.machine()}, {pinned}, "
          f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}, {args.steps} timed steps "
          f"(+{args.warmup} warm-up) per measurement, imports {t_import:.1f}s", flush=True)
    results = {}
    for mode in args.modes:
        eng = bench_engine(mode, args.steps, args.warmup, args.seed)
        env = bench_env(mode, args.steps, args.warmup, args.seed)
        results[mode] = {"engine": eng, "env": env}

    # ---- table -----------------------------------------------------------------------------------------------------
    hdr = (f"{'mode':<5} {'measurement':<24} {'steps/s':>9} {'decisions/s':>12} {'ms/step':>8} "
           f"{'game s/wall s':>13} {'agent ms/step':>13} {'game time':>9} {'games':>5}")
    print()
    print(hdr)
    print("-" * len(hdr))
    for mode, r in results.items():
        for key, label in (("engine", "engine only"), ("env", "engine + obs (MobaEnv)")):
            m = r[key]
            speed = m["steps_per_s"] * DEFAULT_FRAMESKIP / TICKS_PER_SECOND
            print(f"{mode:<5} {label:<24} {m['steps_per_s']:>9.0f} {m['decisions_per_s']:>12.0f} "
                  f"{1000 * m['time_s'] / m['steps']:>8.3f} {speed:>13.0f} "
                  f"{1000 * m['agent_time_s'] / m['steps']:>13.3f} {m['game_seconds']:>8.0f}s {m['games']:>5}")
    rss = peak_rss_mb()
    print(f"\npeak RSS: {rss:.0f} MB")
    out = {}
    for mode, r in results.items():
        out[mode] = {"engine_steps_per_s": round(r["engine"]["steps_per_s"], 1),
                     "engine_decisions_per_s": round(r["engine"]["decisions_per_s"], 1),
                     "env_steps_per_s": round(r["env"]["steps_per_s"], 1),
                     "env_decisions_per_s": round(r["env"]["decisions_per_s"], 1),
                     "env_agent_ms_per_step": round(1000 * r["env"]["agent_time_s"] / args.steps, 3),
                     "game_seconds_simulated": round(r["env"]["game_seconds"], 1)}
    meets = None
    if "5v5" in out:
        meets = (out["5v5"]["env_decisions_per_s"] >= TARGETS["5v5_env_decisions_per_s"]
                 and out["5v5"]["engine_decisions_per_s"] >= TARGETS["5v5_engine_decisions_per_s"])
        for k, target in TARGETS.items():
            mode, key = k.split("_", 1)
            got = out[mode][key]
            print(f"target {k}: {target:.0f}  got {got:.0f}  {'OK' if got >= target else 'BELOW'}")
    out.update({"steps": args.steps, "peak_rss_mb": round(rss, 1), "targets": TARGETS, "meets_targets": meets})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
