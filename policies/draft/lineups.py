"""The score of a 5v5 lineup: the model's win probability for Radiant from the first frames of a game started with
that lineup (Five app. D.2: "we can precompute agent's predicted win probability from the first few frames of every
lineup"), for every lineup of a pool of heroes, batched, and cached on disk keyed by the model and the pool.

How a lineup is scored (``score_lineups``):

- the game: ``MobaEnv`` in evaluation mode (no randomization), mode 5v5, the lineup given (each team's heroes in hero
  order, ``canonical_lineup``), reset with seed ``SCORE_SEED``: every lineup starts from the same spawn jitter and
  first creep wave, so lineups differ by their heroes only;
- the frames: the model plays both teams with its most likely actions (deterministic) for ``SCORE_DECISIONS``
  decisions: decision 0 reads the observation of the reset, decision k the one after k env steps (4 ticks each), i.e.
  the game's first 0.93 s;
- the estimate: at each decision, the mean over Radiant's five heroes of their win probability (``WIN_PROB``, the
  module's auxiliary head, Five app. D) is Radiant's view, the same over Dire's heroes Dire's view; each view is
  averaged over the decisions. A lineup's score is Radiant's win probability with both views averaged,
  ``(radiant_view + 1 - dire_view) / 2`` (``lineup_scores``): the model plays both teams, and the two heads
  disagree a little.

A pool of P heroes has C(P, 5) x C(P - 5, 5) lineups (252 for 10 heroes, 16,632 for 12, 252,252 for 14; all 18
heroes, 11 million: too many for two cores); ``MAX_POOL`` bounds a pool. The cache file of a pool is
``<cache_dir>/<model name>-<key>.npz``, key a hash of the model's checkpoint files, the pool, the seed, the decisions
and ``SCORE_VERSION``: a retrained model or another pool is scored again, anything else is read back.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import time

import numpy as np

from moba.env.moba_env import MobaEnv
from moba.game.heroes import HERO_INDEX, HEROES
from moba.game.teams import MODE_5V5, TEAM_SIZE, agent_ids, side_of_agent
from policies.league.references import MODELS_DIR

DRAFT_MODE = MODE_5V5  # Five app. D.2 drafts 5v5 lineups
TEAM = TEAM_SIZE[DRAFT_MODE]
SCORE_DECISIONS = 8  # "the first few frames" (app. D.2): decisions 0..7, the game's first 0.93 s (4 ticks each)
SCORE_SEED = 0  # the evaluation seed of every scored game (the spawn jitter and first wave, moba/env/randomization)
SCORE_BATCH = 32  # lineups per forward pass (320 rows)
SCORE_VERSION = 1  # in the cache key: bump when the way a lineup is scored changes
MIN_POOL = 2 * TEAM  # a draft picks ten heroes
MAX_POOL = 14  # 252,252 lineups; 15 heroes would be 756,756
# three heroes of each role (moba/game/heroes.py): 16,632 lineups, scored once in minutes on two cores, then cached
DEFAULT_POOL = ("blademaster", "marksman", "phantom", "frost_mage", "storm_spirit", "flame_lord", "berserker",
                "tidal_giant", "sand_warden", "frost_priestess", "grave_keeper", "war_priest")
DEFAULT_CACHE_DIR = os.path.join("results", "draft_cache")
DEFAULT_MODEL = os.path.join(MODELS_DIR, "five_5v5_kickstart")  # the best shipped 5v5 agent (its card: TrueSkill 26.0)


# ---- pools and lineups -----------------------------------------------------------------------------------------------
def check_pool(pool, flag: str = "--pool") -> tuple[str, ...]:
    """The pool's hero names in hero order (moba/game/heroes.py); a ValueError names `flag` for an unknown hero, a
    hero listed twice, or a pool smaller than MIN_POOL or larger than MAX_POOL."""
    names = list(pool)
    for name in names:
        if name not in HERO_INDEX:
            raise ValueError(f"{flag}: unknown hero {name!r}; allowed: {sorted(HERO_INDEX)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{flag}: hero(es) listed twice: {twice}")
    if not MIN_POOL <= len(names) <= MAX_POOL:
        raise ValueError(f"{flag}: a pool has {MIN_POOL} to {MAX_POOL} heroes (a draft picks {MIN_POOL}; "
                         f"{MAX_POOL} heroes are {n_lineups(MAX_POOL):,} lineups to score), got {len(names)}")
    return tuple(sorted(names, key=HERO_INDEX.__getitem__))


def n_lineups(pool_size: int) -> int:
    return math.comb(pool_size, TEAM) * math.comb(pool_size - TEAM, TEAM)


def canonical_lineup(radiant, dire) -> tuple[str, ...]:
    """The env's lineup (Radiant's heroes, then Dire's), each team in hero order: a team's slot order is not part of
    the draft."""
    return tuple(sorted(radiant, key=HERO_INDEX.__getitem__)) + tuple(sorted(dire, key=HERO_INDEX.__getitem__))


def pool_lineups(pool) -> np.ndarray:
    """Every lineup of a checked pool (check_pool): an (n, 10) int array of hero indices, Radiant's five then Dire's
    five, each team in hero order; Radiant's teams in combination order, and for each Dire's."""
    idx = sorted(HERO_INDEX[h] for h in pool)
    rows = [r + d for r in itertools.combinations(idx, TEAM)
            for d in itertools.combinations([h for h in idx if h not in r], TEAM)]
    return np.array(rows, np.int64).reshape(-1, 2 * TEAM)


def lineup_names(row) -> tuple[str, ...]:
    return tuple(HEROES[int(i)].name for i in row)


# ---- the model -------------------------------------------------------------------------------------------------------
def check_draft_module(module, spec: str, flag: str = "--model") -> None:
    """A ValueError naming `flag` unless `module` plays 5v5 (the observation space of a 5v5 MobaEnv)."""
    env = MobaEnv({"mode": DRAFT_MODE})
    if module.observation_space != env.observation_spaces[env.possible_agents[0]]:
        raise ValueError(f"{flag} {spec!r}: not a {DRAFT_MODE} model (its observation space is not that of mode "
                         f"{DRAFT_MODE!r}); the draft needs a {DRAFT_MODE} model, e.g. {DEFAULT_MODEL}")


def load_draft_module(spec: str, flag: str = "--model"):
    """The RLModule of a checkpoint or shipped model (``model:PATH`` or PATH), checked to play 5v5."""
    from policies.league.references import load_module
    module = load_module(spec, flag)
    check_draft_module(module, spec, flag)
    return module


def model_fingerprint(spec: str, flag: str = "--model") -> str:
    """A hash of the files of a model's RLModule checkpoint directory (its weights and class): the cache's model
    key."""
    from policies.league.references import checkpoint_module_dir, checkpoint_path
    path = checkpoint_module_dir(checkpoint_path(spec, flag))
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            h.update(os.path.relpath(full, path).encode() + b"\0")
            with open(full, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


# ---- scoring ---------------------------------------------------------------------------------------------------------
def score_lineups(module, lineups: np.ndarray, seed: int = SCORE_SEED, decisions: int = SCORE_DECISIONS,
                  batch: int = SCORE_BATCH, progress=None) -> np.ndarray:
    """Radiant's and Dire's views of each lineup (rows of hero indices, pool_lineups): an (n, 2) float64 array, as
    the module docstring says. `batch` lineups share each forward pass; `progress(done, total)` is called after each
    batch. The same module, lineups, seed, decisions and batch give the same numbers, bit for bit."""
    import torch

    from policies.agents.module_agent import ModuleAgent
    if decisions < 1:
        raise ValueError(f"decisions must be >= 1, got {decisions!r}")
    lineups = np.asarray(lineups).reshape(-1, 2 * TEAM)
    ids = agent_ids(DRAFT_MODE)
    radiant = np.array([side_of_agent(a) == "radiant" for a in ids])
    views = np.zeros((len(lineups), 2), np.float64)
    with torch.no_grad():
        for start in range(0, len(lineups), batch):
            rows = lineups[start:start + batch]
            envs = [MobaEnv({"mode": DRAFT_MODE, "evaluation": True, "seed": seed, "lineup": lineup_names(r)})
                    for r in rows]
            obs = [env.reset(seed=seed)[0] for env in envs]
            agent = ModuleAgent(module, explore=False)
            keys = [(b, a) for b in range(len(envs)) for a in ids]
            agent.reset(keys)
            total = np.zeros((len(envs), len(ids)), np.float64)
            for k in range(decisions):
                actions = agent.act({(b, a): obs[b][a] for b, a in keys})
                total += np.array([agent.decisions[key]["win_prob"] for key in keys]).reshape(len(envs), len(ids))
                if k + 1 < decisions:
                    obs = [env.step({a: actions[(b, a)] for a in ids})[0] for b, env in enumerate(envs)]
            mean = total / decisions
            views[start:start + len(rows), 0] = mean[:, radiant].mean(axis=1)
            views[start:start + len(rows), 1] = mean[:, ~radiant].mean(axis=1)
            if progress:
                progress(start + len(rows), len(lineups))
    return views


def lineup_scores(views: np.ndarray) -> np.ndarray:
    """Radiant's win probability of each lineup from both teams' views (score_lineups): (radiant + 1 - dire) / 2."""
    views = np.asarray(views, np.float64)
    return (views[:, 0] + 1.0 - views[:, 1]) / 2.0


class LineupTable:
    """The scores of every lineup of a pool: ``pool`` (names, hero order), ``lineups`` ((n, 10) hero indices),
    ``views`` ((n, 2): Radiant's and Dire's), ``scores`` (Radiant's win probability, lineup_scores), ``meta`` (the
    model, its fingerprint, the seed, the decisions, when and how long it was scored, the cache file)."""

    def __init__(self, pool, lineups, views, meta: dict):
        self.pool = tuple(pool)
        self.lineups = np.asarray(lineups, np.int64)
        self.views = np.asarray(views, np.float64)
        self.scores = lineup_scores(self.views)
        self.meta = dict(meta)

    def save(self, path: str) -> str:
        """Writes the table to `path` (an .npz), complete or not at all (a temporary file renamed into place)."""
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp.npz"
        np.savez(tmp, lineups=self.lineups, views=self.views, meta=np.array(json.dumps(
            {**self.meta, "pool": list(self.pool)})))
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str) -> "LineupTable":
        with np.load(path) as f:
            meta = json.loads(str(f["meta"]))
            return cls(meta.pop("pool"), f["lineups"], f["views"], meta)


def cache_path(cache_dir: str, model: str, fingerprint: str, pool, seed: int, decisions: int) -> str:
    """The cache file of a model's table of a pool (see the module docstring)."""
    key = json.dumps({"model": fingerprint, "pool": sorted(pool), "seed": seed, "decisions": decisions,
                      "version": SCORE_VERSION}, sort_keys=True)
    name = os.path.basename(os.path.normpath(model.removeprefix("model:"))) or "model"
    return os.path.join(cache_dir, f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz")


def cached_table(path: str) -> LineupTable:
    """The table in a cache file (cache_path), ``meta["cached"]`` true."""
    table = LineupTable.load(path)
    table.meta.update(cached=True, cache_file=path)
    return table


def lineup_table(model: str, pool, cache_dir: str = DEFAULT_CACHE_DIR, seed: int = SCORE_SEED,
                 decisions: int = SCORE_DECISIONS, progress=None, module=None, flag: str = "--model") -> LineupTable:
    """The table of a pool (check_pool) for the model at `model` (``model:PATH`` or PATH): read from the cache when
    it holds it, else scored (score_lineups; `module`: the model already loaded) and written there.
    ``meta["cached"]`` says which."""
    pool = check_pool(pool)
    fingerprint = model_fingerprint(model, flag)
    path = cache_path(cache_dir, model, fingerprint, pool, seed, decisions)
    if os.path.exists(path):
        return cached_table(path)
    module = module if module is not None else load_draft_module(model, flag)
    lineups = pool_lineups(pool)
    t0 = time.monotonic()
    views = score_lineups(module, lineups, seed, decisions, progress=progress)
    meta = {"model": model, "fingerprint": fingerprint, "seed": seed, "decisions": decisions,
            "version": SCORE_VERSION, "seconds": round(time.monotonic() - t0, 1),
            "scored": time.strftime("%Y-%m-%d %H:%M:%S")}
    table = LineupTable(pool, lineups, views, meta)
    table.save(path)
    table.meta.update(cached=False, cache_file=path)
    return table
