"""The compiled hot loops of the game and the environment, compiled ahead with a message.

Numba compiles the engine's kernels (``moba/game/kernels.py``) and the environment's observation and mask kernels on
first use and caches the machine code in ``__pycache__`` beside them (with ``NUMBA_CACHE_DIR``: in that directory,
``moba/game/numba_cache.py``). On a fresh checkout that is about a minute of silence in the first process that plays a
game, and every env runner started at the same time would compile the same code again. ``compile_ahead`` plays one
step of each mode up front, saying what it does when the cache is cold, so that the processes started after it (env
runners, game servers) load the cache instead.
"""
from __future__ import annotations

import time

from moba.env import observation
from moba.env.actions import NOOP_ACTION, decode_team, need_filters
from moba.game import kernels
from moba.game.teams import MODES

# the compiled functions a game step calls from Python: when these are cached, so is everything they call
ENTRY_POINTS = (kernels.run_ticks, kernels.update_vision, observation.encode_team, decode_team, need_filters)


def is_cached(dispatcher) -> bool:
    """Whether numba has compiled code for this function of the current source on disk (False when unknown)."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())  # numba's own check: the index of this source
    except Exception:  # another numba version's internals: say it is not cached (at worst a needless message)
        return False


def cache_location() -> str:
    """The directory of the engine kernels' numba cache."""
    try:
        return kernels.run_ticks._cache.cache_path
    except Exception:  # another numba version's internals
        return "__pycache__"


def compile_ahead(log=print, agents=()) -> float:
    """Compiles (or loads) every kernel a game step runs, in both modes; logs a line before and after when the cache
    is cold. Returns the seconds it took. ``agents``: agents (from the layers above, such as the scripted bot) that
    choose Radiant's actions in that step, so that their compiled code is built too; the dispatchers each one lists
    in its ``compiled`` attribute join the cache check."""
    from moba.env.moba_env import MobaEnv
    entry_points = ENTRY_POINTS + tuple(f for agent in agents for f in getattr(agent, "compiled", ()))
    cold = not all(is_cached(f) for f in entry_points)
    if cold:
        log("Compiling the game engine with numba: about a minute, on the first run of a checkout only "
            f"(the machine code is cached in {cache_location()})...")
    t0 = time.time()
    for mode in MODES:
        env = MobaEnv({"mode": mode, "seed": 0, "evaluation": True, "consumable_filters": True})  # all of it runs
        obs, _ = env.reset()
        actions = {a: dict(NOOP_ACTION) for a in env.possible_agents}
        for agent in agents:
            agent.reset()
            actions.update(agent.act({a: obs[a] for a in env.possible_agents if a.startswith("radiant")}))
        env.step(actions)
    seconds = time.time() - t0
    if cold:
        log(f"Compiled in {seconds:.0f} s.")
    return seconds
