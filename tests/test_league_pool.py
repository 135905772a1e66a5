"""The past-opponent pool against the formulas of Five app. N."""
import math

import numpy as np
import pytest
from scipy import stats

from policies.league.pool import OpponentPool


def pool_with(qualities):
    pool = OpponentPool()
    for i, q in enumerate(qualities):
        pool.add(10 * (i + 1), f"/w/{i + 1}")
        pool.versions[-1].quality = q
    return pool


def test_new_version_joins_with_the_maximum_quality():
    pool = OpponentPool()
    assert pool.add(10, "/a").quality == 0.0
    pool.versions[0].quality = -0.7
    pool.add(20, "/b")  # joins with max(-0.7) = -0.7
    assert pool.versions[1].quality == pytest.approx(-0.7)
    pool.versions[1].quality = 0.4
    assert pool.add(30, "/c").quality == pytest.approx(0.4)
    assert [v.version for v in pool.versions] == [1, 2, 3]


def test_snapshot_every_ten_iterations():
    pool = OpponentPool()
    assert [i for i in range(0, 41) if pool.due(i)] == [10, 20, 30, 40]
    assert [i for i in range(0, 13) if OpponentPool(snapshot_every=4).due(i)] == [4, 8, 12]


def test_probabilities_are_the_softmax_of_qualities():
    q = [0.0, -1.0, 0.5, 2.0]
    p = pool_with(q).probabilities()
    expected = np.exp(q) / np.exp(q).sum()
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    # large qualities do not overflow
    assert np.isfinite(pool_with([1000.0, 999.0]).probabilities()).all()


def test_quality_update_when_the_current_agent_wins():
    pool = pool_with([0.0, -1.0, 0.5])
    p = pool.probabilities()
    delta = pool.record(2, current_won=True, sampled_probability=p[1])
    assert delta == pytest.approx(-0.01 / (3 * p[1]))
    assert pool.get(2).quality == pytest.approx(-1.0 - 0.01 / (3 * p[1]))
    assert (pool.get(2).games, pool.get(2).current_wins) == (1, 1)


def test_no_update_when_the_past_version_wins():
    pool = pool_with([0.0, -1.0])
    before = [v.quality for v in pool.versions]
    assert pool.record(1, current_won=False, sampled_probability=0.5) == 0.0
    assert [v.quality for v in pool.versions] == before
    assert (pool.get(1).games, pool.get(1).current_wins) == (1, 0)


def test_an_unknown_version_result_is_ignored_and_get_names_the_range():
    pool = pool_with([0.0])
    assert pool.record(7, current_won=True, sampled_probability=0.5) == 0.0
    with pytest.raises(ValueError, match="versions 1..1"):
        pool.get(7)


def test_sampling_frequencies_match_the_formula():
    """80% self-play, 20% past versions with p_i proportional to exp(q_i): a chi-square test."""
    q = [0.0, -0.5, 0.3, -2.0, 1.0]
    pool = pool_with(q)
    rng = np.random.default_rng(0)
    n = 50_000
    draws = [pool.sample(rng) for _ in range(n)]
    self_play = sum(d is None for d in draws)
    assert abs(self_play / n - 0.8) < 4 * math.sqrt(0.8 * 0.2 / n)
    past = np.array([d for d in draws if d is not None])
    counts = np.array([(past == v).sum() for v in range(1, 6)])
    expected = pool.probabilities() * len(past)
    chi2, pvalue = stats.chisquare(counts, expected)
    assert pvalue > 1e-3, (counts, expected)


def test_no_past_versions_means_self_play():
    rng = np.random.default_rng(0)
    assert all(OpponentPool().sample(rng) is None for _ in range(100))


def test_repeated_wins_push_a_weak_version_out_of_the_distribution():
    pool = pool_with([0.0, 0.0, 0.0])
    for _ in range(300):  # each game drawn from the table of its iteration, which follows the pool
        pool.record(1, current_won=True, sampled_probability=pool.probabilities()[0])
    p = pool.probabilities()
    assert p[0] < 0.05 and p[1] == pytest.approx(p[2])


def test_wins_recorded_together_use_their_games_probabilities_and_stay_finite():
    """Six wins against one version, all drawn from one table (p = 1/3), recorded one after another with eta 0.5:
    each lowers q by eta / (N p) = 0.5, as eq. 14 says. Using the probability the previous update left instead
    shrinks p with every win and runs q away to -inf (a divide-by-zero warning at the sixth)."""
    import json
    import warnings
    pool = pool_with([0.0, 0.0, 0.0])
    pool.eta = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            deltas = [pool.record(1, current_won=True, sampled_probability=1 / 3) for _ in range(6)]
    assert deltas == pytest.approx([-0.5] * 6)
    assert pool.get(1).quality == pytest.approx(-3.0)
    json.dumps(pool.state_dict(), allow_nan=False)  # JSON-safe: no inf, no NaN


def test_a_quality_never_falls_out_of_range_of_the_best():
    """A version drawn with a vanishing probability and beaten gets an enormous eq. 14 step: its quality stops
    QUALITY_RANGE below the best, finite, and its probability stays positive."""
    from policies.league.pool import QUALITY_RANGE
    pool = pool_with([0.0, 0.0])
    for p in (1e-300, 5e-324):
        pool.record(2, current_won=True, sampled_probability=p)
        assert pool.get(2).quality == pytest.approx(-QUALITY_RANGE)
    assert np.isfinite([v.quality for v in pool.versions]).all() and (pool.probabilities() > 0).all()
    with pytest.raises(ValueError, match="sampled_probability"):
        pool.record(1, current_won=True, sampled_probability=0.0)


def test_state_round_trip():
    pool = pool_with([0.0, -1.0, 0.5])
    pool.record(3, current_won=True, sampled_probability=0.2)
    pool.record(1, current_won=False, sampled_probability=0.2)
    restored = OpponentPool.from_state_dict(pool.state_dict())
    assert restored.rows() == pool.rows()
    assert restored.get(3).weights_path == "/w/3"
    restored.add(40, "/w/4")
    assert restored.versions[-1].version == 4


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="past_fraction"):
        OpponentPool(past_fraction=1.5)
    with pytest.raises(ValueError, match="eta"):
        OpponentPool(eta=-1)
    with pytest.raises(ValueError, match="snapshot_every"):
        OpponentPool(snapshot_every=0)
