"""Training opponents beyond self-play: the ``opponents:`` section's mix of self-play, past versions and
fixed agents, and the curriculum up a ladder of fixed agents (policies/league/curriculum.py).

Env runner side (training/batched_env_runner.py calls ``game_started`` / ``game_ended`` for every game): each game draws
its opponent kind from the mix. A past version goes through the league (callbacks/league_play.py, its slots and
quality updates unchanged); a fixed agent (the curriculum's current level, or an agent named in ``fixed``) gets the
matchup {"agent": name, "side": side, "seed": seed}, and the runner builds that agent and lets it play the side's
heroes: its steps never become training data. Finished games against fixed agents are kept as (name, main's score).

Driver side, after every iteration (``on_train_result``): the results are pulled from the runners, the curriculum
takes them (and may move up a level), the current level is pushed to the runners, a row per opponent goes to
``<trial dir>/opponents.csv`` (iteration, opponent, share, games, wins, draws, win rate) and a summary to
``result["opponents"]``; the curriculum's state rides in the learner's state (``FivePPOLearner``), so that every
checkpoint has it and ``--resume`` continues at the same level.
"""

from __future__ import annotations

from moba.game.teams import TEAM_NAMES
from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, OpponentMix
from training import league_play




OPPONENTS_KEY = "five_opponents"  # settings in config.learner_config_dict


CSV_NAME = "opponents.csv"


CSV_COLUMNS = ("iteration", "opponent", "share", "games", "wins", "draws", "win_rate", "curriculum_level")


def opponent_settings(config) -> dict:
    """The run's opponent settings ({} when every game is self-play or league play as before)."""
    return config.learner_config_dict.get(OPPONENTS_KEY) or {}


# ---- env runner side -------------------------------------------------------------------------------------------------
class RunnerOpponents:
    """One env runner's opponent draws, the curriculum level it plays and the fixed-agent results not yet collected."""

    def __init__(self, settings: dict, seed: int):
        self.mix = OpponentMix(settings["shares"], seed)
        self.ladder = list(settings.get("ladder") or [])
        self.level_agent = self.ladder[0] if self.ladder else None
        self.time_limit_outcome = settings["time_limit_outcome"]
        self.seed = seed
        self.games = 0
        self.results: list[tuple[str, float]] = []
        self._makers = {}

    def matchup(self, kind: str) -> dict:
        name = self.level_agent if kind == CURRICULUM else kind
        self.games += 1
        side = TEAM_NAMES[int(self.mix.rng.random() >= 0.5)]
        return {"agent": name, "side": side, "seed": self.seed * 100_003 + self.games}

    def make_agent(self, matchup: dict):
        """The agent of a fixed-agent matchup (a module checkpoint is loaded once per runner)."""
        from policies.league.references import agent_maker
        name = matchup["agent"]
        if name not in self._makers:
            self._makers[name] = agent_maker(name, explore=True)
        return self._makers[name](matchup["seed"])

    def drain(self) -> list:
        out, self.results = self.results, []
        return out


def runner_opponents(env_runner) -> RunnerOpponents | None:
    """The env runner's RunnerOpponents (created on first use), or None without an opponents mix."""
    opp = getattr(env_runner, "_five_opponents", None)
    if opp is None:
        settings = opponent_settings(env_runner.config)
        if not settings:
            return None
        seed = (env_runner.config.seed or 0) * 2003 + (getattr(env_runner, "worker_index", 0) or 0)
        opp = env_runner._five_opponents = RunnerOpponents(settings, seed)
    return opp


def game_started(env_runner, env_index: int) -> dict | None:
    """The matchup of the game starting in env `env_index`: None (self-play), a league matchup (a past version in a
    slot module) or a fixed-agent matchup ({"agent", "side", "seed"})."""
    opp = runner_opponents(env_runner)
    if opp is None:
        return league_play.game_started(env_runner, env_index)
    kind = opp.mix.draw()
    if kind == SELF:
        return None
    if kind == LEAGUE:
        return league_play.game_started(env_runner, env_index, forced=True)
    return opp.matchup(kind)


def game_ended(env_runner, env_index: int, matchup: dict | None, winner: str, raw_returns: dict) -> None:
    """Records the finished game: a league game in the league, a game against a fixed agent here."""
    fixed = matchup is not None and "agent" in matchup
    league_play.game_ended(env_runner, env_index, None if fixed else matchup, winner, raw_returns)
    if fixed:
        opp = runner_opponents(env_runner)
        opp.results.append((matchup["agent"], league_play.main_score(winner, raw_returns, matchup["side"],
                                                                     opp.time_limit_outcome)))


def collect_from_runner(env_runner) -> list:
    opp = runner_opponents(env_runner)
    return opp.drain() if opp is not None else []


def install_level(env_runner, agent: str) -> None:
    opp = runner_opponents(env_runner)
    if opp is not None:
        opp.level_agent = agent

