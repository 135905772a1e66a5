"""Training opponents beyond self-play, on the env runners: the ``opponents:`` section's mix of self-play, past
versions and fixed agents, and the curriculum level a runner plays (policies/league/curriculum.py); and
``RunnerMatchups``, all that a runner knows of its games' opponents.

Each env runner holds a ``RunnerMatchups`` (``env_runner.matchups``, made in the runner's constructor). The batched
env runner calls ``game_started`` / ``game_ended`` for every game: each game draws its opponent kind from the mix. A
past version goes through the league (training/league_play.py, its slots and quality updates unchanged); a fixed
agent (the curriculum's current level, or an agent named in ``fixed``) gets the matchup {"agent": name, "side": side,
"seed": seed} (and "time_limit_s", the game's length, for an agent of ``opponents.time_limit_s``), and the runner
builds that agent and lets it play the side's heroes: its steps never become training data. Finished games against
fixed agents are kept as ``FixedResult`` (name, main's score, main's side, whether main destroyed the enemy ancient)
until the driver collects them (callbacks/opponents.py: ``collect_from_runner``, ``install_level``). With Jump-Start
RL (``opponents.jump_start``, policies/league/jump_start.py) a game against its opponent also names the guide that
plays "main"'s heroes and the stage's hand-over time ({"guide", "guide_until_s"}), and its result is kept under the
stage's label; the driver pushes the current stage's hand-over (``install_handover``). With start stages
(``opponents.start_stages``, policies/league/start_stages.py) a game against their opponent names the current stage
and its start-state values ({"start_stage", "start_state"}: the env's reset options carry them), and a late game's
result is kept under the stage's label, the staged late games' results in the order the games started (a win ends
early: in the order they end, a stage's first results would be its wins); the driver pushes the current stage
(``install_start_stage``)."""
from __future__ import annotations

from typing import NamedTuple

from moba.game.teams import TEAM_NAMES, enemy_side
from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, OpponentMix, review_agent
from policies.league.jump_start import stage_label
from policies.league.start_stages import late_start_label
from training import league_play
from training.settings import RunSettings, run_settings

CSV_NAME = "opponents.csv"
# wins and draws as ``opponents.time_limit_outcome`` scores a capped game; outright_wins: games "main" ended by
# destroying the enemy ancient, the learning issue's measure (in all, and of the games it played as Radiant)
OUTRIGHT, AS_RADIANT, OUTRIGHT_AS_RADIANT = "outright_wins", "games_as_radiant", "outright_wins_as_radiant"
CSV_COLUMNS = ("iteration", "opponent", "share", "games", "wins", "draws", "win_rate", OUTRIGHT, AS_RADIANT,
               OUTRIGHT_AS_RADIANT, "curriculum_level")


class FixedResult(NamedTuple):
    """A finished game against a fixed agent, as the driver collects it."""
    name: str  # the agent (the Jump-Start stage's label when guided)
    score: float  # main's score (policies/league/ratings.py WIN, DRAW, LOSS) under the time-limit rule
    side: str  # the side "main" played
    outright: bool  # main destroyed the enemy ancient


def has_opponent_mix(settings: RunSettings) -> bool:
    """Whether a run plays fixed agents or a curriculum; without, every game is self-play or league play (the league
    then draws its own games, as without the ``opponents:`` section)."""
    return bool(settings.opponents.fixed) or settings.opponents.curriculum.share > 0


# ---- env runner side -------------------------------------------------------------------------------------------------
class RunnerOpponents:
    """One env runner's opponent draws, the curriculum level it plays and the fixed-agent results not yet collected."""

    def __init__(self, settings: RunSettings, seed: int):
        opponents = settings.opponents
        self.mix = OpponentMix(opponents.shares(settings.league), seed)
        self.ladder = list(opponents.curriculum.ladder) if opponents.curriculum.share > 0 else []
        self.level_agent = self.ladder[0] if self.ladder else None
        self.review = opponents.curriculum.review
        self.time_limit_outcome = opponents.time_limit_outcome
        self.radiant_share = opponents.radiant_share
        self.time_limits = dict(opponents.time_limit_s)  # agent -> its games' length (the env's reset options)
        # Jump-Start RL: its settings (None: off) and the current stage's hand-over time, pushed by the driver
        self.jump_start = opponents.jump_start if opponents.jump_start.guide is not None else None
        self.handover_s = self.jump_start.handover_s[0] if self.jump_start is not None else 0.0
        # the start stages (a reverse curriculum on the late starts): their settings (None: off) and the stage the
        # games against their opponent start at, pushed by the driver
        self.start_stages = opponents.start_stages if opponents.start_stages.stages else None
        self.start_stage = 0
        # the staged late games' results in the order the games started (late_game_started): a late game won ends
        # early and one not won lasts its whole time limit, so in the order they end the first results after a stage's
        # move would be its wins. The next place to give, the next to release, and the results waiting for earlier
        self._late_next, self._late_released, self._late_waiting = 0, 0, {}
        self.seed = seed
        self.games = 0
        self.results: list[FixedResult] = []
        self._makers = {}

    def matchup(self, kind: str) -> dict:
        self.games += 1
        name = review_agent(self.ladder, self.level_agent, self.review, self.mix.rng) if kind == CURRICULUM else kind
        # the matchup's side is the opponent's: "main" plays Radiant (the opponent Dire) when the draw is at least
        # 1 - radiant_share (at 0.5 the draws of the runs before the setting)
        side = TEAM_NAMES[int(self.mix.rng.random() >= 1.0 - self.radiant_share)]
        matchup = {"agent": name, "side": side, "seed": self.seed * 100_003 + self.games}
        if name in self.time_limits:
            matchup["time_limit_s"] = self.time_limits[name]
        if self.jump_start is not None and name == self.jump_start.opponent and self.handover_s > 0:
            matchup.update(guide=self.jump_start.guide, guide_until_s=self.handover_s)
        if self.start_stages is not None and name == self.start_stages.opponent:
            matchup.update(start_stage=self.start_stage, start_state=self.start_stages.stages[self.start_stage])
        return matchup

    def make_agent(self, matchup: dict):
        """The agent of a fixed-agent matchup (a module checkpoint is loaded once per runner)."""
        from policies.league.references import agent_maker
        name = matchup["agent"]
        if name not in self._makers:
            self._makers[name] = agent_maker(name, explore=True)
        return self._makers[name](matchup["seed"])

    def late_place(self) -> int:
        """The next place in the order of the staged late games' starts."""
        self._late_next += 1
        return self._late_next - 1

    def release_late(self, place: int, result: FixedResult | None) -> None:
        """The result of the staged late game at `place` (None: no result), kept until every game started before it
        has ended, then handed on in the order the games started."""
        self._late_waiting[place] = result
        while self._late_released in self._late_waiting:
            done = self._late_waiting.pop(self._late_released)
            if done is not None:
                self.results.append(done)
            self._late_released += 1

    def abandon_late_games(self) -> None:
        """The games under way were dropped (the runner's envs reset): no later result waits for theirs, and those
        waiting are dropped too (they ended first, so they would lean to wins)."""
        self._late_waiting.clear()
        self._late_released = self._late_next

    def drain(self) -> list:
        out, self.results = self.results, []
        return out


def make_runner_opponents(config, worker_index: int) -> RunnerOpponents | None:
    """The RunnerOpponents of env runner `worker_index` of a run (an AlgorithmConfig), or None without an opponents
    mix."""
    settings = run_settings(config)
    if not has_opponent_mix(settings):
        return None
    return RunnerOpponents(settings, (config.seed or 0) * 2003 + worker_index)


class RunnerMatchups:
    """What one env runner knows of its games' opponents, held by the runner as ``env_runner.matchups``
    (training/batched_env_runner.py, training/classic_env_runner.py): the league's slots and pool table
    (``league``, None when league play is off) and the opponents mix with the curriculum level it plays
    (``opponents``, None without an ``opponents:`` mix). The driver's callbacks reach it through
    ``foreach_env_runner``: they push the pool table and the curriculum level, and collect the finished games."""

    def __init__(self, league: league_play.RunnerLeague | None = None, opponents: RunnerOpponents | None = None):
        self.league = league
        self.opponents = opponents

    @classmethod
    def for_runner(cls, config, worker_index: int | None) -> "RunnerMatchups":
        """The matchups of env runner `worker_index` (None or 0: the local runner) of a run (an AlgorithmConfig)."""
        worker_index = worker_index or 0
        return cls(league_play.make_runner_league(config, worker_index),
                   make_runner_opponents(config, worker_index))


def runner_opponents(env_runner) -> RunnerOpponents | None:
    """The env runner's RunnerOpponents (its ``matchups``), or None without an opponents mix."""
    return env_runner.matchups.opponents


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


def late_game_started(env_runner, matchup: dict | None, late_start: str | None) -> None:
    """A game of a start stage's matchup began: if it started late (`late_start`, the side; MobaEnv's first infos)
    it takes its place in the order of the staged late games' starts (``matchup["late_place"]``), in which its result
    reaches the driver (``RunnerOpponents.release_late``)."""
    opp = runner_opponents(env_runner)
    if opp is not None and matchup is not None and "start_stage" in matchup and late_start is not None:
        matchup["late_place"] = opp.late_place()


def unstaged(matchup: dict | None) -> dict | None:
    """`matchup` without its start stage: for a game reset before its matchup was drawn (the runner's first reset of
    every env), which started at env.start_state as it is, not at the stage."""
    if matchup is not None:
        matchup.pop("start_stage", None)
        matchup.pop("start_state", None)
    return matchup


def game_ended(env_runner, env_index: int, matchup: dict | None, winner: str, raw_returns: dict,
               objective: dict | None = None, scored: bool = True, late_start: str | None = None) -> None:
    """Records the finished game: a league game in the league, a game against a fixed agent here. `objective`: what
    each side destroyed (MobaEnv's final infos), for the "objective" time-limit rule. `scored` False: a game cut
    short by the first-game length, recorded nowhere (its outcome is not a result: counted, it read as a draw or a
    loss in the curriculum's window and the opponents' win rates). `late_start`: the side the game started late
    around (MobaEnv's final infos), if it did: a game against a fixed agent is then recorded under
    ``late_start_label``."""
    fixed = matchup is not None and "agent" in matchup
    league_play.game_ended(env_runner, env_index, None if fixed else matchup, winner, raw_returns, objective,
                           scored)
    if fixed and not scored and "late_place" in matchup:
        runner_opponents(env_runner).release_late(matchup["late_place"], None)
    if fixed and scored:
        opp = runner_opponents(env_runner)
        name = stage_label(matchup["agent"], matchup.get("guide_until_s", 0.0))  # the agent's name when unguided
        if late_start is not None:
            name = late_start_label(name, matchup.get("start_stage"))
        score = league_play.main_score(winner, raw_returns, matchup["side"], opp.time_limit_outcome, objective)
        main_side = enemy_side(matchup["side"])
        result = FixedResult(name, score, main_side, winner == main_side)
        if "late_place" in matchup:
            opp.release_late(matchup["late_place"], result)
        else:
            opp.results.append(result)


def collect_from_runner(env_runner) -> list:
    opp = runner_opponents(env_runner)
    return opp.drain() if opp is not None else []


def install_level(env_runner, agent: str) -> None:
    opp = runner_opponents(env_runner)
    if opp is not None:
        opp.level_agent = agent


def install_handover(env_runner, handover_s: float) -> None:
    """Jump-Start RL's current hand-over time, for the games that start from now on."""
    opp = runner_opponents(env_runner)
    if opp is not None:
        opp.handover_s = float(handover_s)


def install_start_stage(env_runner, stage: int) -> None:
    """The start stages' current stage, for the games that start from now on."""
    opp = runner_opponents(env_runner)
    if opp is not None:
        opp.start_stage = int(stage)

