"""Domain randomization (Five app. O.2): what a training game randomizes, all off in evaluation mode.

- initial hero state: start level, gold and additive perturbations of hp, armor, move speed, regeneration, magic
  resistance and damage;
- lane assignments: each hero gets a random non-empty subset of the lanes and is penalized for leaving them until
  a random time;
- hero lineup: sampled from the pool;
- item builds (and ability build order): perturbed around the hero's script;
- the first game's length: an env's first game is cut at a random point of the time limit, so that the envs of a
  run, started together, do not play the same game phase in lockstep. Otherwise every iteration's batch would hold
  one phase of the game only (the first minute, then the second, ...), and the policy would be fit to each phase in
  turn and forget the others. OpenAI Five's thousands of games were desynchronized by their number.

Evaluation mode turns all of these off, and instead jitters (``evaluation_jitter``, on by default) what does not
change the game's balance: each hero's spawn point beside its fountain and the time of the first creep wave. Without
it, deterministic agents (the scripted bot) play the same game whatever the seed; with it, games differ by seed and
the same seed still gives the same game.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from moba.env.config import EnvConfig
from moba.env.start_state import late_setup
from moba.game.builds import perturbed_item_build, perturbed_priority
from moba.game.constants import STARTING_GOLD
from moba.game.engine import PERTURB_NAMES, GameSetup
from moba.game.heroes import HEROES
from moba.game.items import ITEMS
from moba.game.teams import MODE_5V5, TEAM_NAMES, n_heroes

START_LEVEL_PROBS = (0.6, 0.3, 0.1)  # start at level 1, 2 or 3
START_GOLD_RANGE = (-100.0, 300.0)  # added to STARTING_GOLD
# half-widths of the uniform additive perturbations, in PERTURB_NAMES order
PERTURB_HALF_WIDTH = {"hp": 60.0, "armor": 1.5, "move_speed": 15.0, "hp_regen": 0.75, "mana_regen": 0.4,
                      "magic_resist": 0.05, "damage": 5.0}
LANE_ASSIGN_UNTIL_RANGE_S = (120.0, 600.0)  # the lane-assignment penalty lasts until a random time in this range
FIRST_GAME_FRACTION_RANGE = (0.05, 1.0)  # an env's first game lasts this fraction of the time limit (uniform)
EVAL_SPAWN_JITTER = 120.0  # evaluation jitter: a hero's spawn point moves by up to this much per axis (uniform)
EVAL_FIRST_WAVE_RANGE_S = (0.0, 3.0)  # evaluation jitter: the first creep wave comes at a uniform time in this range


def sample_game(cfg: EnvConfig, rng: np.random.Generator, first: bool = False, attacker: str | None = None,
                start: dict | None = None, time_limit_s: float | None = None):
    """Returns (GameSetup, lanes (n, 3) int, lane_until (n,) seconds) for one game; `first`: the env's first game;
    `attacker`: the side a late start is set up around (None: drawn); `start`: the late start's checked values
    (moba/env/start_state.py; None: the config's start_state); `time_limit_s`: the game's length in seconds (None:
    the config's). The draws from `rng` do not depend on `time_limit_s`."""
    start = cfg.start_state if start is None else start
    n = n_heroes(cfg.mode)
    if cfg.randomized("lineup"):
        lineup = tuple(HEROES[i].name for i in rng.choice(len(HEROES), size=n, replace=False))
    else:
        lineup = cfg.lineup or tuple(h.name for h in HEROES[:n])
    kw = {}
    if cfg.randomized("hero_state"):
        kw["start_level"] = tuple(int(x) for x in rng.choice(len(START_LEVEL_PROBS), size=n, p=START_LEVEL_PROBS)
                                  + 1)
        kw["start_gold"] = tuple(float(x) for x in STARTING_GOLD + rng.uniform(*START_GOLD_RANGE, size=n))
        hw = np.array([PERTURB_HALF_WIDTH[k] for k in PERTURB_NAMES])
        kw["perturb"] = tuple(tuple(float(x) for x in rng.uniform(-hw, hw)) for _ in range(n))
    if cfg.randomized("item_builds"):
        defs = [HEROES[[h.name for h in HEROES].index(name)] for name in lineup]
        kw["item_builds"] = tuple(tuple(ITEMS[i].name for i in perturbed_item_build(d, rng)) for d in defs)
        kw["skill_priority"] = tuple(perturbed_priority(d, rng) for d in defs)
    if cfg.jittered():
        kw["spawn_offsets"] = tuple(tuple(float(v) for v in rng.uniform(-EVAL_SPAWN_JITTER, EVAL_SPAWN_JITTER, 2))
                                    for _ in range(n))
        kw["first_wave_s"] = float(rng.uniform(*EVAL_FIRST_WAVE_RANGE_S))
    limit = cfg.time_limit_s if time_limit_s is None else time_limit_s
    setup = GameSetup(mode=cfg.mode, lineup=lineup, frameskip=cfg.frameskip, time_limit_s=float(limit),
                      ancient_hp_scale=float(cfg.ancient_hp_scale), **kw)
    lanes = np.ones((n, 3), np.int64)
    lane_until = np.zeros(n, np.float64)
    if cfg.randomized("lane_assignments") and cfg.mode == MODE_5V5:
        for h in range(n):
            mask = 0
            while mask == 0:
                mask = int(rng.integers(1, 8))
            lanes[h] = [(mask >> k) & 1 for k in range(3)]
        lane_until = rng.uniform(*LANE_ASSIGN_UNTIL_RANGE_S, size=n)
    if start["share"] > 0 and rng.random() < start["share"]:  # drawn only when on
        side = attacker if attacker is not None else TEAM_NAMES[int(rng.integers(2))]
        setup = late_setup(setup, start, side, rng)
    if first and cfg.randomized("first_game_length"):  # drawn last: the rest of the game is as without it
        fraction = float(rng.uniform(*FIRST_GAME_FRACTION_RANGE))
        setup = dataclasses.replace(setup, time_limit_s=setup.resolved_time_limit_s() * fraction)
    return setup, lanes, lane_until
