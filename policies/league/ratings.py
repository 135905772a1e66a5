"""Rating agents: TrueSkill as OpenAI Five used it (Five app. J) and Elo as Honor of Kings Arena did (HoK
app. H.4). Pure functions over game results; playing the games is ``policies/league/references.py``'s job.

TrueSkill: sigma = 25/3, beta = sigma/2, tau = 0, draw probability 0.02. Reference agents are rated by playing each
other; their mu are shifted so that the random agent has mu = 0. A version under test plays references within 10
points of its current mu, its rating is updated after each game while the references stay constant, and a new
version starts at the previous version's mu.
"""
from __future__ import annotations

import math

import trueskill

from moba.game.teams import TEAM_NAMES, enemy_side

TRUESKILL_SIGMA = 25.0 / 3.0  # app. J
TRUESKILL_BETA = TRUESKILL_SIGMA / 2.0  # app. J
TRUESKILL_TAU = 0.0  # app. J
TRUESKILL_DRAW_PROBABILITY = 0.02  # app. J
MATCHMAKING_RANGE = 10.0  # app. J: "we avoid playing agents more than 10 TrueSkill points away"
# app. J; the CPU defaults (policies/league/references.py, training/settings.py) are far smaller
PAPER_GAMES_PER_VERSION = 750
ANCHOR_AGENT = "random"  # app. J: "an agent playing randomly has mu = 0"
ELO_K = 200.0  # HoK app. H.4
ELO_INITIAL = 1000.0

WIN, LOSS, DRAW = 1.0, 0.0, 0.5
# How a game stopped by the time limit counts. The papers' games have no time limit (Five) or cap training only
# (HoK sec. 3: "in practice, there is a time limit in training"). On one machine nearly every capped game of a young
# policy is a draw, and draws move neither the league's qualities nor TrueSkill. The rules:
# - "draw" keeps the games' own rule (only the ancient decides);
# - "points" gives the capped game to the team with the higher raw (Table 6, shaped) return. The shaped reward is
#   not the game's objective: the reward audit (docs/reward_audit.md) found it paying an idle hero more than a
#   player that fights the full bot and loses, so "points" measures the reward, not skill;
# - "objective" (the default) decides it by the game's objective, the way the game itself is won: the team that
#   destroyed more buildings (towers, barracks, shrines) wins, then the team with more hero kills; else a draw.
LIMIT_DRAW, LIMIT_POINTS, LIMIT_OBJECTIVE = "draw", "points", "objective"
TIME_LIMIT_OUTCOMES = (LIMIT_DRAW, LIMIT_POINTS, LIMIT_OBJECTIVE)
DEFAULT_TIME_LIMIT_OUTCOME = LIMIT_OBJECTIVE
UNRECORDED_TIME_LIMIT_OUTCOME = LIMIT_DRAW  # the rule of a reference pool whose file names none (rated before rules)


def team_margin(side: str, returns: dict) -> float:
    """The raw return of the team playing `side` minus its enemy's, from {"radiant": x, "dire": y} (a team missing
    from `returns` counts 0)."""
    return returns.get(side, 0.0) - returns.get(enemy_side(side), 0.0)


def objective_margin(side: str, objective: dict | None) -> tuple[int, int] | None:
    """The objective margin of the team playing `side`: (buildings it destroyed minus buildings it lost, hero kills
    minus hero deaths to the enemy), from ``{side: {"buildings": n, "kills": n}}`` (MobaEnv's final
    ``infos[agent]["objective"]``, moba.game.engine.Game.objective); None when `objective` is None."""
    if objective is None:
        return None
    mine, theirs = objective[side], objective[enemy_side(side)]
    return mine["buildings"] - theirs["buildings"], mine["kills"] - theirs["kills"]


def check_time_limit_outcome(rule) -> str:
    """The rule, or a ValueError naming the allowed ones."""
    if rule not in TIME_LIMIT_OUTCOMES:
        raise ValueError(f"time_limit_outcome must be one of {list(TIME_LIMIT_OUTCOMES)}, got {rule!r}")
    return rule


def game_score(side: str, winner: str | None, margin: float,
               time_limit_outcome: str = DEFAULT_TIME_LIMIT_OUTCOME,
               objective: tuple[int, int] | None = None) -> float:
    """The score (WIN, LOSS or DRAW) of the team playing `side` in a finished game: `winner` is a side's name or
    NO_WINNER/None (the time limit), `margin` the team's raw return minus the enemy's, `objective` its
    objective_margin (buildings, then hero kills). A capped game is a DRAW under "draw", decided by `margin` under
    "points" and by `objective` under "objective" (the buildings margin, or when it is 0 the kills margin; a DRAW
    when both are 0 or `objective` is None: a game whose objective was not recorded)."""
    check_time_limit_outcome(time_limit_outcome)
    if winner in TEAM_NAMES:
        return WIN if winner == side else LOSS
    if time_limit_outcome == LIMIT_POINTS and margin != 0.0:
        return WIN if margin > 0.0 else LOSS
    if time_limit_outcome == LIMIT_OBJECTIVE and objective is not None:
        deciding = next((m for m in objective if m != 0), 0)
        if deciding:
            return WIN if deciding > 0 else LOSS
    return DRAW


def trueskill_env() -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=0.0, sigma=TRUESKILL_SIGMA, beta=TRUESKILL_BETA, tau=TRUESKILL_TAU,
                               draw_probability=TRUESKILL_DRAW_PROBABILITY)


def _rate(env, a: trueskill.Rating, b: trueskill.Rating, score_a: float):
    """New (a, b) after a game a scored score_a in (1 win, 0 loss, 0.5 draw)."""
    if score_a == DRAW:
        return trueskill.rate_1vs1(a, b, drawn=True, env=env)
    if score_a == WIN:
        return trueskill.rate_1vs1(a, b, env=env)
    nb, na = trueskill.rate_1vs1(b, a, env=env)
    return na, nb


def rate_references(games, anchor: str = ANCHOR_AGENT) -> dict[str, trueskill.Rating]:
    """Ratings of reference agents from games among them: (name_a, name_b, score of a), in the order played. The mu
    are shifted so that `anchor` has mu = 0."""
    env = trueskill_env()
    ratings: dict[str, trueskill.Rating] = {}
    for a, b, score in games:
        ra, rb = ratings.setdefault(a, env.create_rating()), ratings.setdefault(b, env.create_rating())
        ratings[a], ratings[b] = _rate(env, ra, rb, score)
    if anchor not in ratings:
        raise ValueError(f"the anchor agent {anchor!r} played no game; agents: {sorted(ratings)}")
    shift = ratings[anchor].mu
    return {name: env.create_rating(mu=r.mu - shift, sigma=r.sigma) for name, r in ratings.items()}


def update_against_reference(rating: trueskill.Rating, reference: trueskill.Rating,
                             score: float) -> trueskill.Rating:
    """The tested agent's rating after one game against a reference, which is held constant."""
    return _rate(trueskill_env(), rating, reference, score)[0]


def new_version_rating(previous: trueskill.Rating | None) -> trueskill.Rating:
    """A new version starts at the previous version's mu (app. J), with the default uncertainty."""
    return trueskill_env().create_rating(mu=previous.mu if previous is not None else 0.0)


def eligible_references(mu: float, references: dict[str, trueskill.Rating],
                        max_gap: float = MATCHMAKING_RANGE) -> list[str]:
    """References within max_gap TrueSkill points of mu; if none is, the nearest one (so that evaluation can start
    far from every reference)."""
    if not references:
        raise ValueError("no reference agents")
    near = [n for n, r in references.items() if abs(r.mu - mu) <= max_gap]
    return near or [min(references, key=lambda n: abs(references[n].mu - mu))]


def pick_reference(mu: float, references: dict[str, trueskill.Rating], counts: dict) -> str:
    """The eligible reference (within 10 points of mu) played least so far (`counts`: games per name), so that the
    games spread over the eligible ones."""
    return min(eligible_references(mu, references), key=lambda n: (counts.get(n, 0), n))


def win_probability(a: trueskill.Rating, b: trueskill.Rating) -> float:
    """P(a beats b) under TrueSkill's model."""
    denom = math.sqrt(2 * TRUESKILL_BETA ** 2 + a.sigma ** 2 + b.sigma ** 2)
    return trueskill_env().cdf((a.mu - b.mu) / denom)


# ---- Elo -------------------------------------------------------------------------------------------------------------
def elo_expected(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


def elo_update(ra: float, rb: float, score_a: float, k: float = ELO_K) -> tuple[float, float]:
    """Both players' ratings after one game (score_a: 1 win, 0.5 draw, 0 loss)."""
    ea = elo_expected(ra, rb)
    return ra + k * (score_a - ea), rb + k * ((1.0 - score_a) - (1.0 - ea))


def elo_ratings(games, k: float = ELO_K, initial: float = ELO_INITIAL, anchor: str | None = None) -> dict:
    """Elo of every player from games (name_a, name_b, score of a) in the order played; with `anchor`, shifted so
    that the anchor has rating `initial`."""
    r: dict[str, float] = {}
    for a, b, s in games:
        r[a], r[b] = elo_update(r.get(a, initial), r.get(b, initial), s, k)
    if anchor is not None:
        if anchor not in r:
            raise ValueError(f"the anchor {anchor!r} played no game; players: {sorted(r)}")
        shift = r[anchor] - initial
        r = {n: v - shift for n, v in r.items()}
    return r
