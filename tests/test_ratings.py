"""TrueSkill and Elo as the papers use them (Five app. J, HoK app. H.4)."""
import numpy as np
import pytest

from policies.league import ratings as R


def test_trueskill_parameters_are_the_papers():
    env = R.trueskill_env()
    assert env.sigma == pytest.approx(25 / 3)
    assert env.beta == pytest.approx(25 / 6)
    assert env.tau == 0.0
    assert env.draw_probability == pytest.approx(0.02)


def test_references_are_anchored_at_the_random_agent():
    rng = np.random.default_rng(0)
    games = []
    for _ in range(300):  # scripted beats random 95%, strong beats scripted 90%
        games.append(("scripted", "random", R.WIN if rng.random() < 0.95 else R.LOSS))
        games.append(("strong", "scripted", R.WIN if rng.random() < 0.9 else R.LOSS))
    ratings = R.rate_references(games)
    assert ratings["random"].mu == pytest.approx(0.0, abs=1e-12)
    assert 0 < ratings["scripted"].mu < ratings["strong"].mu
    # the shift keeps the differences of the unanchored ratings
    with pytest.raises(ValueError, match="anchor"):
        R.rate_references([("a", "b", R.WIN)])


def test_a_tested_version_moves_and_the_reference_does_not():
    ref = R.trueskill_env().create_rating(mu=10.0, sigma=1.0)
    me = R.new_version_rating(None)
    after_win = R.update_against_reference(me, ref, R.WIN)
    after_loss = R.update_against_reference(me, ref, R.LOSS)
    assert after_win.mu > me.mu > after_loss.mu
    assert after_win.sigma < me.sigma
    assert (ref.mu, ref.sigma) == (10.0, 1.0)  # references are constants


def test_new_version_starts_at_the_previous_mu():
    prev = R.trueskill_env().create_rating(mu=42.0, sigma=2.0)
    r = R.new_version_rating(prev)
    assert r.mu == 42.0 and r.sigma == pytest.approx(25 / 3)


def test_matchmaking_keeps_references_within_ten_points():
    env = R.trueskill_env()
    refs = {"random": env.create_rating(0.0), "scripted": env.create_rating(9.0), "mid": env.create_rating(20.0),
            "top": env.create_rating(35.0)}
    assert sorted(R.eligible_references(5.0, refs)) == ["random", "scripted"]
    assert sorted(R.eligible_references(15.0, refs)) == ["mid", "scripted"]
    assert R.eligible_references(100.0, refs) == ["top"]  # nothing within 10: the nearest
    # 10 points apart is about an 85% win rate (app. J)
    p = R.win_probability(env.create_rating(10.0, 1e-3), env.create_rating(0.0, 1e-3))
    assert 0.85 < p < 0.97


def test_elo_update_with_k_200():
    a, b = R.elo_update(1000.0, 1000.0, R.WIN)
    assert (a, b) == (pytest.approx(1100.0), pytest.approx(900.0))  # expected 0.5, K = 200
    a, b = R.elo_update(1200.0, 1000.0, R.DRAW)
    ea = 1 / (1 + 10 ** (-200 / 400))
    assert a == pytest.approx(1200 + 200 * (0.5 - ea)) and a + b == pytest.approx(2200.0)


def test_elo_ratings_order_and_anchor():
    games = [("A", "B", R.WIN)] * 10 + [("B", "C", R.WIN)] * 10
    r = R.elo_ratings(games, anchor="C")
    assert r["C"] == pytest.approx(R.ELO_INITIAL)
    assert r["A"] > r["B"] > r["C"]


@pytest.mark.parametrize("winner,margin,rule,score", [
    ("radiant", -5.0, "draw", R.WIN),  # an outright result ignores the returns
    ("dire", 5.0, "points", R.LOSS),
    ("none", 5.0, "draw", R.DRAW),  # the games' own rule: the time limit is a draw
    (None, 5.0, "draw", R.DRAW),
    ("none", 5.0, "points", R.WIN),  # points: the team ahead on raw return wins the capped game
    ("none", -0.1, "points", R.LOSS),
    ("none", 0.0, "points", R.DRAW),  # level on points: still a draw
])
def test_game_score_of_radiant(winner, margin, rule, score):
    assert R.game_score("radiant", winner, margin, rule) == score


@pytest.mark.parametrize("winner,objective,score", [
    ("dire", (5, 3), R.LOSS),  # an outright result ignores the objective
    ("none", (1, -4), R.WIN),  # more buildings destroyed than lost wins the capped game, whatever the kills
    ("none", (-1, 4), R.LOSS),
    ("none", (0, 2), R.WIN),  # level on buildings: more hero kills
    ("none", (0, -1), R.LOSS),
    ("none", (0, 0), R.DRAW),  # level on both
    ("none", None, R.DRAW),  # a game whose objective was not recorded
])
def test_game_score_under_the_objective_rule(winner, objective, score):
    # the raw return's margin plays no part: -50 would lose every capped game on points
    assert R.game_score("radiant", winner, -50.0, "objective", objective) == score
    assert R.DEFAULT_TIME_LIMIT_OUTCOME == "objective"
    assert R.game_score("radiant", winner, -50.0, objective=objective) == score


def test_objective_margin_is_the_sides_buildings_then_kills_margin():
    objective = {"radiant": {"buildings": 3, "kills": 1}, "dire": {"buildings": 1, "kills": 4}}
    assert R.objective_margin("radiant", objective) == (2, -3)
    assert R.objective_margin("dire", objective) == (-2, 3)
    assert R.objective_margin("dire", None) is None


def test_game_score_rejects_an_unknown_rule():
    with pytest.raises(ValueError, match=r"time_limit_outcome must be one of \['draw', 'points', 'objective'\]"):
        R.game_score("radiant", "none", 1.0, "coin")
