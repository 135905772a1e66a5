"""League play inside training (Five app. N), on the env runners: in a share of the games the whole enemy team is a
frozen past version of "main", sampled by quality from the opponent pool (policies/league/pool.py, held on the driver
by callbacks/league_play.py).

How it scales. The pool on the driver only knows where each version's weights are: one file per version under
``<trial dir>/league/`` (paths relative to the trial directory, callbacks/trial_files.py). Every env runner holds a
few opponent *slots*, the modules ``league_slot_0`` .. ``league_slot_{K-1}`` (policies/model/module_ids.py), which
never train and which the learner never syncs. When a game starts (before the env's reset and so before any agent is
mapped to a module), the runner draws the matchup (``RunnerLeague``, in the runner's ``matchups``,
training/opponents.py): self-play with probability 1 - past_fraction, else a past version sampled with p_i
proportional to exp(q_i) (the game keeps its p_i for the quality update), loaded from its file into a free slot (or
shared with a game already playing that version; with every slot busy the game falls back to self-play and is
counted). A runner therefore holds K modules however large the pool is. The past version plays radiant or dire with
equal probability.

Why not ``Algorithm.add_module`` per snapshot (docs/rllib_notes.md section 4): it puts every version in every
runner and in the learner. The notes' sync trap does not arise here: slot weights are set on the runner itself by
``module.set_state`` from the saved file, and the learner's post-update ``sync_weights`` only carries "main"."""
from __future__ import annotations

import io

import numpy as np
import torch

from moba.env.moba_env import CUT_SHORT_INFO
from moba.game.teams import NO_WINNER, TEAM_NAMES, enemy_side, side_of_agent
from policies.league.ratings import DEFAULT_TIME_LIMIT_OUTCOME, game_score, objective_margin, team_margin
from policies.model.module_ids import MAIN, SLOT_PREFIX
from training import run_storage
from training.settings import LeagueSettings, run_settings


LEAGUE_KEY = "five_league"  # the matchup of a league game in episode.custom_data
WEIGHTS_DIR = "league"
CSV_NAME = "league.csv"
CSV_COLUMNS = ("iteration", "version", "snapshot_iteration", "quality", "probability", "games", "current_wins")


def league_mapping_fn(agent_id, episode, **kwargs):
    """Agents of the side a past version plays map to its slot; every other agent to "main"."""
    m = getattr(episode, "custom_data", {}).get(LEAGUE_KEY)
    if m is not None and m["module"] is not None and side_of_agent(agent_id) == m["side"]:
        return m["module"]
    return MAIN


def save_weights(state: dict, location: str):
    """Saves module weights to a local path or a storage URI (training/run_storage.py); a reader never sees half a
    file."""
    buf = io.BytesIO()
    torch.save(state, buf)
    run_storage.write_bytes(location, buf.getvalue())


def load_weights(location: str) -> dict:
    """Weights saved by save_weights, from a local path or a storage URI (an env runner on any node of the cluster
    reads them from the run's storage)."""
    return torch.load(io.BytesIO(run_storage.read_bytes(location)), weights_only=False)


def league_settings(config) -> LeagueSettings | None:
    """The run's league settings (an AlgorithmConfig's), None when league play is off."""
    league = run_settings(config).league
    return league if league.enabled else None


# ---- env runner side -------------------------------------------------------------------------------------------------
class RunnerLeague:
    """One env runner's league state: the pool table it samples from, its slots and the results not yet collected."""

    def __init__(self, slots: int, past_fraction: float, seed: int,
                 time_limit_outcome: str = DEFAULT_TIME_LIMIT_OUTCOME):
        self.slot_version: list[int | None] = [None] * slots
        self.slot_users: list[set] = [set() for _ in range(slots)]
        self.env_slot: dict[int, int] = {}
        self.versions, self.paths, self.probs = [], [], np.zeros(0)
        self.past_fraction = past_fraction
        self.time_limit_outcome = time_limit_outcome
        self.rng = np.random.default_rng(seed)
        self.results: list[tuple[int, float, float]] = []  # (version, main's score, the version's sampled p_i)
        self.loads = self.fallbacks = 0

    def set_table(self, versions, paths, probs):
        self.versions, self.paths, self.probs = list(versions), list(paths), np.asarray(probs, np.float64)

    def release(self, env_index: int):
        j = self.env_slot.pop(env_index, None)
        if j is not None:
            self.slot_users[j].discard(env_index)

    def draw(self, env_index: int, load, forced: bool = False) -> dict | None:
        """The matchup of the game starting in env `env_index`: None for self-play, else {"version", "module",
        "side", "probability"} (the probability with which the version was drawn, p_i of eq. 14). `load(slot, path)`
        puts a version's weights into a slot module. `forced`: a past version whenever the pool has one (the
        opponents mix, callbacks/opponents.py, has drawn league play), instead of with past_fraction."""
        self.release(env_index)
        if not self.versions or (not forced and self.rng.random() >= self.past_fraction):
            return None
        i = int(self.rng.choice(len(self.versions), p=self.probs))
        version = self.versions[i]
        side = TEAM_NAMES[int(self.rng.random() >= 0.5)]
        j = next((j for j, v in enumerate(self.slot_version) if v == version), None)
        if j is None:
            j = next((j for j, users in enumerate(self.slot_users) if not users), None)
            if j is None:
                self.fallbacks += 1
                return None
            load(j, self.paths[i])
            self.slot_version[j] = version
            self.loads += 1
        self.slot_users[j].add(env_index)
        self.env_slot[env_index] = j
        return {"version": version, "module": f"{SLOT_PREFIX}{j}", "side": side,
                "probability": float(self.probs[i])}

    def drain(self) -> dict:
        out = {"results": self.results, "loads": self.loads, "fallbacks": self.fallbacks,
               "slots": list(self.slot_version)}
        self.results, self.loads, self.fallbacks = [], 0, 0
        return out


def make_runner_league(config, worker_index: int) -> RunnerLeague | None:
    """The RunnerLeague of env runner `worker_index` of a run (an AlgorithmConfig), or None when league play is off."""
    league = league_settings(config)
    if league is None:
        return None
    seed = (config.seed or 0) * 1009 + worker_index
    return RunnerLeague(league.slots, league.past_fraction, seed, league.time_limit_outcome)


def runner_league(env_runner) -> RunnerLeague | None:
    """The env runner's RunnerLeague (its ``matchups``, training/opponents.RunnerMatchups), or None when league play
    is off."""
    return env_runner.matchups.league


def collect_from_runner(env_runner) -> dict:
    """Runs on a runner (foreach_env_runner): hands over the league games finished since the last call."""
    league = runner_league(env_runner)
    return league.drain() if league is not None else {"results": [], "loads": 0, "fallbacks": 0, "slots": []}


def install_table(env_runner, table, forget_slots: bool = False) -> int:
    """Runs on a runner: the pool table (versions, weight files, probabilities) that its next games sample from.
    `forget_slots` marks every slot as holding no version (after a checkpoint restore overwrote the slot modules)."""
    league = runner_league(env_runner)
    if league is None:
        return 0
    league.set_table(*table)
    if forget_slots:
        league.slot_version = [None] * len(league.slot_version)
    return len(table[0])


def game_started(env_runner, env_index: int, forced: bool = False) -> dict | None:
    """Runs on a runner when a game starts in env `env_index`: its matchup (RunnerLeague.draw), with the drawn
    version's weights loaded into its slot; None for self-play or when league play is off."""
    league = runner_league(env_runner)
    if league is None:
        return None

    def load(slot, path):
        env_runner.module[f"{SLOT_PREFIX}{slot}"].set_state(load_weights(path))

    return league.draw(env_index, load, forced)


def game_ended(env_runner, env_index: int, matchup: dict | None, winner: str, raw_returns: dict,
               objective: dict | None = None, scored: bool = True) -> None:
    """Runs on a runner when the game in env `env_index` ends: frees its slot and, for a game against a past version,
    records main's score with the probability the version was drawn with. `winner` is a side or NO_WINNER,
    `raw_returns` each side's raw return, `objective` what each side destroyed (MobaEnv's final
    ``infos[agent]["objective"]``): a capped game is scored on them by the time-limit rule. `scored` False: a game
    cut short by the first-game length (MobaEnv's ``cut_short`` info), whose outcome is not a result: the slot is
    freed and nothing recorded."""
    league = runner_league(env_runner)
    if league is None:
        return
    league.release(env_index)
    if matchup is not None and scored:
        league.results.append((matchup["version"],
                               main_score(winner, raw_returns, matchup["side"], league.time_limit_outcome,
                                          objective),
                               matchup["probability"]))


def main_score(winner: str, raw_returns: dict, past_side: str, time_limit_outcome: str,
               objective: dict | None = None) -> float:
    """The score (ratings.WIN, LOSS or DRAW) of "main" in a finished game against an opponent playing `past_side`.
    A game stopped by the time limit is scored by `time_limit_outcome`: "points" from the teams' raw returns,
    "objective" from `objective` ({side: {"buildings", "kills"}}, MobaEnv's final infos); without them it is a
    draw."""
    main_side = enemy_side(past_side)
    return game_score(main_side, winner, team_margin(main_side, raw_returns or {}), time_limit_outcome,
                      objective_margin(main_side, objective))


def winner_of(episode) -> str:
    for info in episode.get_infos(-1).values():
        if "winner" in info:
            return info["winner"]
    return NO_WINNER


def cut_short(episode) -> bool:
    """Whether a finished episode's game ended at its first-game cut (MobaEnv's last ``cut_short`` info)."""
    return any(info.get(CUT_SHORT_INFO) for info in episode.get_infos(-1).values())


def objective_of(episode) -> dict | None:
    """What each side destroyed in a finished episode (MobaEnv's final ``infos[agent]["objective"]``), or None."""
    for info in episode.get_infos(-1).values():
        if "objective" in info:
            return info["objective"]
    return None


