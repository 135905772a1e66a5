"""Reference agents and rating by games (Five app. J, HoK app. H.4): the references file, the agents it
names, one rated game, rating the references against each other, and rating versions of a trained agent against
them. The rating math is ``policies/league/ratings.py``; the CLI is ``python -m app.rate``; rating beside training is
``callbacks/trueskill_rating.py``.

The references file (JSON) lists the reference agents and, once rated, their TrueSkill::

    {"mode": "1v1", "time_limit_outcome": "objective", "time_limit_s": 1200.0,
     "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.2},
                "scripted_2": {"kind": "scripted_2", "mu": 17.3, "sigma": 1.1},
                "v40": {"kind": "checkpoint", "path": "results/run/.../checkpoint_000003"}}}

An agent's kind is an agent name (``policies/agents.AGENTS``: the ladder's levels of ``policies/agents/ladder.py``,
"scripted"
or "random") or "checkpoint". A new pool is the whole ladder, from the random agent to the full scripted bot.
``time_limit_outcome`` is the rule the pool was rated with (ratings.game_score; a file without one: "draw"): a
version is rated only under the same rule, since a rating measured with capped games as draws is not comparable to
one where they are decided on points. ``time_limit_s`` records the rating games' time limit.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import time

from moba.env.moba_env import MobaEnv
from moba.env.observation import groups_of_space
from moba.game.teams import DEFAULT_TIME_LIMIT_S, NO_WINNER, TEAM_NAMES, side_of_game
from policies.agents.by_name import AGENTS, make_agent
from policies.agents.ladder import LADDER
from policies.agents.module_agent import ModuleAgent
from policies.league import ratings as R
from policies.league.series import play_series, play_series_game, series_score
from policies.model.module_ids import module_checkpoint_dir

CHECKPOINT_KIND = "checkpoint"
BUILTIN_REFERENCES = {name: {"kind": name} for name in LADDER}  # a new pool: the whole ladder
REFERENCE_KINDS = (*AGENTS, CHECKPOINT_KIND)


# ---- the references file ---------------------------------------------------------------------------------------------
def load_references(path: str | None, mode: str) -> dict:
    """The references file at `path`; a missing file (or None) starts an unrated pool of the whole ladder (the random
    agent to the full scripted bot)."""
    if path is None or not os.path.exists(path):
        return {"mode": mode, "agents": {k: dict(v) for k, v in BUILTIN_REFERENCES.items()}}
    with open(path) as f:
        refs = json.load(f)
    if refs.get("mode") != mode:
        raise ValueError(f"references {path!r} were rated in mode {refs.get('mode')!r}, not {mode!r}")
    for name, spec in refs.get("agents", {}).items():
        if spec.get("kind") not in REFERENCE_KINDS:
            raise ValueError(f"references {path!r}: agent {name!r} kind must be one of {list(REFERENCE_KINDS)}")
    return refs


def references_outcome_rule(refs: dict, time_limit_outcome: str) -> None:
    """Raises unless the references were rated under the same time-limit rule (a file without one: "draw")."""
    rated = refs.get("time_limit_outcome", R.UNRECORDED_TIME_LIMIT_OUTCOME)
    if rated != time_limit_outcome:
        raise ValueError(f"time_limit_outcome {time_limit_outcome!r}: the references were rated with "
                         f"{rated!r}; rate them again with --rate-references --time-limit-outcome "
                         f"{time_limit_outcome}")


def reference_ratings(refs: dict) -> dict:
    """The pool's TrueSkill by name, from a rated references dict; an unrated agent is an error naming it."""
    env = R.trueskill_env()
    pool = {}
    for name, spec in refs.get("agents", {}).items():
        if "mu" not in spec or "sigma" not in spec:
            raise ValueError(f"reference {name!r} has no rating (mu, sigma) yet: run --rate-references first "
                             f"(python -m app.rate --rate-references --references FILE)")
        pool[name] = env.create_rating(mu=spec["mu"], sigma=spec["sigma"])
    if not pool:
        raise ValueError("the references list no agent")
    return pool


# ---- agents and games ------------------------------------------------------------------------------------------------
# the shipped agents (scripts/ship_model.py writes them; "model:models/NAME"), found from any working directory
MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "models")
MODEL_PREFIX = "model:"  # an agent named "model:PATH" is the module checkpoint at PATH (a bare path works too)
AGENT_SPEC_HELP = (f"{MODEL_PREFIX}PATH or PATH of a checkpoint: a run's checkpoint_NNNNNN directory, an RLModule "
                   f"checkpoint directory (python -m app.pretrain --out) or a shipped model (models/NAME)")


# RLlib's own RLModule.__init__ builds the deprecated RLModuleConfig and logs that deprecation for every module it
# builds, whatever its caller passes (training/ray_output.py drops the same record in a run's processes)
MODULE_CONFIG_DEPRECATION = ("ray._common.deprecation",
                             "DeprecationWarning: `RLModule(config=[RLModuleConfig object])`")


class _DropModuleConfigDeprecation(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(MODULE_CONFIG_DEPRECATION[1])


@contextlib.contextmanager
def quiet_module_config_warning():
    """Drops RLlib's RLModuleConfig deprecation record while a module is built (nothing of this project's to
    change: RLModule.__init__ makes that config itself); every other record passes."""
    logger = logging.getLogger(MODULE_CONFIG_DEPRECATION[0])
    drop = _DropModuleConfigDeprecation()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


def checkpoint_module_dir(path: str) -> str | None:
    """The RLModule checkpoint directory of a checkpoint at `path` (an algorithm checkpoint's "main", or `path`
    itself), or None when `path` is neither."""
    for candidate in (module_checkpoint_dir(path), path):
        if os.path.isfile(os.path.join(candidate, "class_and_ctor_args.pkl")):
            return candidate
    return None


def agent_path(spec: str, flag: str = "agent", names: bool = True) -> str | None:
    """The parser of an agent spec, for every tool that takes one: None for an agent name of
    policies.agents.by_name.AGENTS, the checkpoint path for "model:PATH" or PATH. Anything else is a ValueError that
    names `flag` (the option or config key) and lists what is allowed. names=False: only checkpoints are allowed."""
    if names and spec in AGENTS:
        return None
    path = spec[len(MODEL_PREFIX):] if spec.startswith(MODEL_PREFIX) else spec
    if path and checkpoint_module_dir(path) is not None:
        return path
    if not os.path.exists(path):
        why = f" ({path!r} does not exist)" if spec.startswith(MODEL_PREFIX) or os.sep in path else ""
    else:
        why = (f" ({path!r} is neither an algorithm checkpoint, with {module_checkpoint_dir('')}, nor an RLModule "
               f"checkpoint directory)")
    allowed = (f"an agent name (one of {sorted(AGENTS)}) or {AGENT_SPEC_HELP}" if names else AGENT_SPEC_HELP)
    raise ValueError(f"{flag} {spec!r}: unknown{why}; allowed: {allowed}")


def checkpoint_path(spec: str, flag: str = "checkpoint") -> str:
    """agent_path for the options that take a checkpoint only ("model:PATH" or PATH)."""
    return agent_path(spec, flag, names=False)


def load_module(spec: str, flag: str = "checkpoint"):
    """The "main" RLModule of an algorithm checkpoint, or an RLModule checkpoint directory; `spec` is a path or
    "model:PATH" (checkpoint_path; a ValueError names `flag`)."""
    from ray.rllib.core.rl_module.rl_module import RLModule
    path = checkpoint_path(spec, flag)
    with quiet_module_config_warning():
        return RLModule.from_checkpoint(os.path.abspath(checkpoint_module_dir(path)))


def module_layout(module) -> dict:
    """The env config keys of a module's observation layout, read from its observation space: its unit rows and its
    observation groups (a surgered model plays in the layout it was trained in)."""
    sp = module.observation_space
    return {"max_units": int(sp["units"].shape[0]), "observation_groups": list(groups_of_space(sp))}


def agents_layout(specs: list) -> dict:
    """The env layout (module_layout) of the checkpoints among the agents `specs` ([(spec, flag)]), for a game between
    them; {} when none is a checkpoint. Two checkpoints of different layouts are a ValueError naming both flags: one
    game has one layout."""
    layouts = {flag: module_layout(load_module(path, flag)) for spec, flag in specs
               if (path := agent_path(spec, flag)) is not None}
    if len({json.dumps(v, sort_keys=True) for v in layouts.values()}) > 1:
        raise ValueError("the checkpoints were trained on different observation layouts, and a game has one: "
                         + "; ".join(f"{flag} {v}" for flag, v in layouts.items()))
    return next(iter(layouts.values()), {})


def agent_maker(name: str, explore: bool = True, env=None, flag: str = "agent"):
    """A function seed -> a fresh agent: one of policies.agents.by_name.AGENTS by name, or a ModuleAgent of the
    checkpoint at "model:PATH" or PATH (agent_path; loaded once; explore: sample its actions as in training; False:
    the most likely ones). With `env` (a MobaEnv), a checkpoint trained on another game (mode, max_units) is a
    ValueError."""
    path = agent_path(name, flag)
    if path is None:
        return lambda seed: make_agent(name, seed)
    module = load_module(path, flag)
    if env is not None and module.observation_space != env.observation_spaces[env.possible_agents[0]]:
        raise ValueError(f"{flag} {name!r} was trained on another game: its observation space is not that of "
                         f"mode {env.cfg.mode!r} with max_units {env.cfg.max_units} (play it in its own mode)")
    return lambda seed: ModuleAgent(module, explore=explore, seed=seed)


def make_reference_agent(name: str, spec: dict, seed: int):
    kind = spec.get("kind")
    if kind == CHECKPOINT_KIND:
        return ModuleAgent(load_module(spec["path"]))
    if kind in AGENTS:
        return make_agent(kind, seed)
    raise ValueError(f"reference {name!r}: kind must be one of {list(REFERENCE_KINDS)}, got {kind!r}")


def play_rated_game(mode: str, agent_a, agent_b, a_side: str, seed: int, time_limit_s: float, on_step=None,
                    time_limit_outcome: str = R.DEFAULT_TIME_LIMIT_OUTCOME, env: dict | None = None) -> float:
    """One evaluation-mode game of agent a (playing `a_side`) against agent b; returns a's score (ratings.WIN, DRAW
    or LOSS; a game stopped by the time limit counts as `time_limit_outcome` says, ratings.game_score).
    `on_step(env)` runs after every step; `env`: more env config keys (the observation groups of a surgered model)."""
    if a_side not in TEAM_NAMES:
        raise ValueError(f"a_side must be one of {list(TEAM_NAMES)}, got {a_side!r}")
    return series_score(play_rated_record(mode, agent_a, agent_b, a_side, seed, time_limit_s, on_step, env),
                        time_limit_outcome)


def play_rated_record(mode: str, agent_a, agent_b, a_side: str, seed: int, time_limit_s: float, on_step=None,
                      env: dict | None = None) -> dict:
    """play_rated_game's game record (policies/league/series.py), agent a's."""
    return play_series_game(rated_game_env(mode, seed, time_limit_s, env), agent_a, agent_b, a_side, seed,
                            on_step=on_step)


def rated_game_env(mode: str, seed: int, time_limit_s: float, env: dict | None = None) -> MobaEnv:
    """The env of rated games: evaluation mode (no randomization), the time limit, more env config keys `env`."""
    return MobaEnv({**(env or {}), "mode": mode, "evaluation": True, "time_limit_s": time_limit_s, "seed": seed})


# ---- rating ----------------------------------------------------------------------------------------------------------
def rate_reference_pool(refs: dict, games: int, time_limit_s: float, seed: int = 0, log=print,
                        time_limit_outcome: str = R.DEFAULT_TIME_LIMIT_OUTCOME) -> dict:
    """Plays every pair of references (`games` per pair, alternating sides) and writes their ratings into `refs`,
    anchored so that the random agent has mu = 0, with the games, the time-limit rule and the time limit."""
    names = sorted(refs["agents"])
    if R.ANCHOR_AGENT not in names:
        raise ValueError(f"the reference pool needs the {R.ANCHOR_AGENT!r} agent (it anchors mu = 0)")
    results = []
    game_env = rated_game_env(refs["mode"], seed, time_limit_s)  # a seeded game is decided by its seed alone
    for a, b in itertools.combinations(names, 2):
        series = play_series(game_env, lambda g, a=a: make_reference_agent(a, refs["agents"][a], seed + g),
                             lambda g, b=b: make_reference_agent(b, refs["agents"][b], seed + g), games, seed)
        results += [(a, b, series_score(r, time_limit_outcome)) for r in series]
        wins = sum(s for x, y, s in results if (x, y) == (a, b))
        log(f"{a} vs {b}: {wins:.1f}/{games} for {a}")
    rated = R.rate_references(results)
    for n, r in rated.items():
        refs["agents"][n].update({"mu": r.mu, "sigma": r.sigma})
    refs["games"] = [list(x) for x in results]
    refs["time_limit_outcome"] = time_limit_outcome
    refs["time_limit_s"] = float(time_limit_s or DEFAULT_TIME_LIMIT_S[refs["mode"]])
    return refs


class VersionRater:
    """Rates versions of an agent against a fixed pool of rated references (app. J): a version starts at the
    previous version's mu, plays the eligible reference (within 10 points of its mu) played least so far, on
    alternating sides against each reference, and its rating moves after each game while the references stay
    constant."""

    def __init__(self, references: dict, start_mu: float | None = None, explore: bool = True,
                 time_limit_outcome: str | None = None, env: dict | None = None):
        """references: a rated references dict; start_mu: the mu of the version rated before (a resumed run, or the
        CLI's --start-mu), if any; explore: sample the version's actions as in training (False: the most likely
        ones); time_limit_outcome: how a game stopped by the time limit counts (ratings.game_score; None: the rule
        the references were rated with); env: env config keys of the rated games, the rules the version trained
        under (e.g. ``consumable_filters``; the module's observation layout is added to them)."""
        if "mode" not in references:
            raise ValueError("the references have no game mode ('mode')")
        if time_limit_outcome is None:
            time_limit_outcome = references.get("time_limit_outcome", R.UNRECORDED_TIME_LIMIT_OUTCOME)
        references_outcome_rule(references, time_limit_outcome)
        self.time_limit_outcome = time_limit_outcome
        self.mode = references["mode"]
        self.specs = references["agents"]
        self.pool = reference_ratings(references)
        self.explore = explore
        self.env = dict(env or {})
        self.ratings: dict = {}  # version -> trueskill.Rating
        self.start = None if start_mu is None else R.new_version_rating(R.trueskill_env().create_rating(start_mu))

    def previous_rating(self, version: int):
        """The rating of the latest rated version before `version`, or None."""
        earlier = [v for v in self.ratings if v < version]
        return self.ratings[max(earlier)] if earlier else self.start

    def rate(self, version: int, module, games: int, time_limit_s: float, seed: int, on_step=None,
             log=None) -> dict:
        """Plays `games` games of `module` (an RLModule with the version's weights) and returns its rating, the game
        counts and one row per game. `on_step(env)` runs after every game step (the background rater's throttle);
        `log(row)` after every game."""
        t0 = time.time()
        agent = ModuleAgent(module, explore=self.explore)
        # the games in the module's observation layout (a surgered model's groups; its checkpoint references were
        # surgered with it, app/surgery.py --references)
        env = {**self.env, **module_layout(module)}
        rating = R.new_version_rating(self.previous_rating(version))
        counts, rows = {}, []
        for g in range(games):
            name = R.pick_reference(rating.mu, self.pool, counts)
            counts[name] = counts.get(name, 0) + 1
            # sides alternate per reference: by the game's index they line up with an alternation of the references
            # (two references in turn put one of them on one side in every game)
            side = side_of_game(counts[name] - 1)
            opponent = make_reference_agent(name, self.specs[name], seed + g)
            record = play_rated_record(self.mode, agent, opponent, side, seed + g, time_limit_s, on_step, env)
            score = series_score(record, self.time_limit_outcome)
            rating = R.update_against_reference(rating, self.pool[name], score)
            rows.append({"game": g, "reference": name, "reference_mu": self.pool[name].mu, "side": side,
                         "winner": record["winner"], "score": score, "mu": rating.mu, "sigma": rating.sigma})
            if log is not None:
                log(rows[-1])
        self.ratings[version] = rating
        scores = [r["score"] for r in rows]
        return {"version": version, "mu": rating.mu, "sigma": rating.sigma, "games": games,
                "wins": scores.count(R.WIN), "draws": scores.count(R.DRAW), "losses": scores.count(R.LOSS),
                "wall_s": time.time() - t0, "opponents": counts, "rows": rows}


def summary_table(rows, refs):
    """Per reference: games, outright wins (its ancient destroyed), draws (stopped by the time limit) and losses, the
    win rate (outright wins per game), the mean score TrueSkill saw (a draw counts 0.5; under the "objective" rule a
    capped game counts as won or lost on buildings, then hero kills, and under "points" by the raw returns), and the
    reference's rating (a pandas DataFrame)."""
    import pandas as pd
    df = pd.DataFrame(rows)
    won, drawn = df["winner"] == df["side"], df["winner"] == NO_WINNER
    df = df.assign(won=won.astype(int), drawn=drawn.astype(int), lost=(~won & ~drawn).astype(int))
    t = df.groupby("reference").agg(games=("score", "size"), wins=("won", "sum"), draws=("drawn", "sum"),
                                    losses=("lost", "sum"), score=("score", "mean"))
    t.insert(4, "win_rate", t["wins"] / t["games"])
    t["reference_mu"] = [refs["agents"][n]["mu"] for n in t.index]
    t["reference_sigma"] = [refs["agents"][n]["sigma"] for n in t.index]
    return t
