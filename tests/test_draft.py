"""The draft (policies/draft/, app/draft.py, web/draft.py's API): minimax against exhaustive search on hand-checked
and random tables, the turn order, the CLI's errors, the lineup scores' cache and determinism, the calibration math,
and the draft API's answers to bad requests."""
from __future__ import annotations

import asyncio
import functools
import itertools
import json
import os

import numpy as np
import pytest

from app import draft as draft_cli
from policies.draft import calibration as C
from policies.draft import lineups as L
from policies.draft.minimax import DIRE, PICK_ORDER, RADIANT, Draft, check_picks, turn_sides

TINY_POOL = ("a", "b", "c", "d")
TINY_ORDER = (0, 1, 1, 0)  # 2v2: first, second, second, first
# Radiant's win probability of each 2v2 lineup, keyed by Radiant's pair (Dire has the other two)
TINY_SCORES = {"ab": 0.60, "ac": 0.30, "ad": 0.55, "bc": 0.70, "bd": 0.45, "cd": 0.35}
POOL10 = ("blademaster", "marksman", "phantom", "frost_mage", "storm_spirit", "berserker", "tidal_giant",
          "frost_priestess", "grave_keeper", "war_priest")


def tiny_table():
    lineups, scores = [], []
    for pair, score in TINY_SCORES.items():
        radiant = [TINY_POOL.index(h) for h in pair]
        lineups.append(radiant + [i for i in range(4) if i not in radiant])
        scores.append(score)
    return lineups, scores


def exhaustive(pool, order, first, scores: dict, radiant=(), dire=()) -> float:
    """Plain minimax, every branch walked (no sharing, no pruning): Radiant's value of a state. `scores` maps
    (frozenset radiant, frozenset dire) to Radiant's win probability."""
    turn = len(radiant) + len(dire)
    if turn == len(order):
        return scores[frozenset(radiant), frozenset(dire)]
    side = turn_sides(first, order)[turn]
    free = [h for h in pool if h not in radiant and h not in dire]
    values = [exhaustive(pool, order, first, scores, radiant + (h,), dire) if side == RADIANT
              else exhaustive(pool, order, first, scores, radiant, dire + (h,)) for h in free]
    return max(values) if side == RADIANT else min(values)


def scores_by_sets(pool, lineups, scores, team):
    return {(frozenset(pool[i] for i in row[:team]), frozenset(pool[i] for i in row[team:])): s
            for row, s in zip(lineups, scores)}


# ---- minimax ---------------------------------------------------------------------------------------------------------
def test_minimax_of_the_hand_checked_table():
    """By hand: Radiant picks first, then Dire picks two and Radiant gets the last hero. Radiant's first pick x is
    worth the least of x's pairs: a 0.30 (ac), b 0.45 (bd), c 0.30 (ac), d 0.35 (cd); so b, worth 0.45. Then Dire:
    a -> 0.45 (Dire then takes c, Radiant d), c -> 0.45, d -> 0.60 (Radiant gets a or c: ab 0.60, bc 0.70); a and c
    tie, a is first in the pool. Then Dire again: c -> 0.45 (bd), d -> 0.70 (bc)."""
    d = Draft(TINY_POOL, *tiny_table(), first=RADIANT, order=TINY_ORDER)
    s = d.state([])
    assert s["on_turn"] == RADIANT and s["value"] == pytest.approx(0.45)
    assert s["options"] == pytest.approx({"a": 0.30, "b": 0.45, "c": 0.30, "d": 0.35})
    assert s["recommended"] == "b"
    s = d.state(["b"])
    assert s["on_turn"] == DIRE and s["options"] == pytest.approx({"a": 0.45, "c": 0.45, "d": 0.60})
    assert s["recommended"] == "a"
    s = d.state(["b", "a"])
    assert s["on_turn"] == DIRE and s["options"] == pytest.approx({"c": 0.45, "d": 0.70}) and s["recommended"] == "c"
    s = d.state(["b", "a", "c"])
    assert s["on_turn"] == RADIANT and s["options"] == pytest.approx({"d": 0.45})
    s = d.state(["b", "a", "c", "d"])
    assert s["complete"] and s["radiant"] == ["b", "d"] and s["dire"] == ["a", "c"] and s["value"] == 0.45
    assert s["recommended"] is None and s["options"] == {}
    by_sets = scores_by_sets(TINY_POOL, *tiny_table(), 2)
    assert exhaustive(TINY_POOL, TINY_ORDER, RADIANT, by_sets) == pytest.approx(0.45)


def test_minimax_with_dire_first_on_the_hand_checked_table():
    """Dire picks first: it takes the hero whose every Radiant pair is worst for Radiant. Dire taking x leaves
    Radiant the best pair of the three others, which Radiant completes... checked against exhaustive search."""
    d = Draft(TINY_POOL, *tiny_table(), first=DIRE, order=TINY_ORDER)
    by_sets = scores_by_sets(TINY_POOL, *tiny_table(), 2)
    s = d.state([])
    assert s["on_turn"] == DIRE
    for hero, value in s["options"].items():
        assert value == pytest.approx(exhaustive(TINY_POOL, TINY_ORDER, DIRE, by_sets, (), (hero,)))
    assert s["value"] == pytest.approx(exhaustive(TINY_POOL, TINY_ORDER, DIRE, by_sets)) == min(s["options"].values())


@pytest.mark.parametrize("pool_size,order", [(5, (0, 1, 1, 0)), (6, (0, 1, 1, 0, 0, 1)), (7, (0, 1, 1, 0, 0, 1))])
@pytest.mark.parametrize("first", [RADIANT, DIRE])
def test_minimax_equals_exhaustive_search_on_random_tables(pool_size, order, first):
    rng = np.random.default_rng(pool_size)
    pool = tuple(f"h{i}" for i in range(pool_size))
    team = len(order) // 2
    lineups = [list(r) + list(x) for r in itertools.combinations(range(pool_size), team)
               for x in itertools.combinations([i for i in range(pool_size) if i not in r], team)]
    scores = rng.random(len(lineups))
    d = Draft(pool, lineups, scores, first=first, order=order)
    by_sets = scores_by_sets(pool, lineups, scores, team)
    picks = []
    for turn in range(len(order)):  # along a random path: every state's value and every option's
        s = d.state(picks)
        radiant, dire = tuple(s["radiant"]), tuple(s["dire"])
        assert s["value"] == pytest.approx(exhaustive(pool, order, first, by_sets, radiant, dire), abs=1e-12)
        for hero, value in s["options"].items():
            child = (radiant + (hero,), dire) if s["on_turn"] == RADIANT else (radiant, dire + (hero,))
            assert value == pytest.approx(exhaustive(pool, order, first, by_sets, *child), abs=1e-12)
        picks.append(str(rng.choice(sorted(s["options"]))))


def test_minimax_of_a_full_5v5_draft_equals_a_memoized_search():
    """The 1-2-2-2-2-1 order on 11 heroes (2,772 lineups) against a memoized recursive minimax."""
    rng = np.random.default_rng(0)
    pool = tuple(f"h{i}" for i in range(11))
    lineups = [list(r) + list(x) for r in itertools.combinations(range(11), 5)
               for x in itertools.combinations([i for i in range(11) if i not in r], 5)]
    scores = rng.random(len(lineups))
    by_sets = scores_by_sets(pool, lineups, scores, 5)
    sides = turn_sides(RADIANT)

    @functools.lru_cache(maxsize=None)
    def value(radiant: frozenset, dire: frozenset) -> float:
        turn = len(radiant) + len(dire)
        if turn == len(sides):
            return by_sets[radiant, dire]
        free = [h for h in pool if h not in radiant and h not in dire]
        if sides[turn] == RADIANT:
            return max(value(radiant | {h}, dire) for h in free)
        return min(value(radiant, dire | {h}) for h in free)

    d = Draft(pool, lineups, scores, first=RADIANT)
    assert d.state([])["value"] == pytest.approx(value(frozenset(), frozenset()), abs=1e-12)
    s = d.state(["h3", "h0", "h7"])  # Radiant, Dire, Dire: Radiant's turn
    assert s["on_turn"] == RADIANT and len(s["options"]) == 8
    for hero, v in s["options"].items():
        assert v == pytest.approx(value(frozenset({"h3", hero}), frozenset({"h0", "h7"})), abs=1e-12)


def test_the_pick_order_is_the_papers():
    assert PICK_ORDER == (0, 1, 1, 0, 0, 1, 1, 0, 0, 1)
    assert turn_sides(DIRE)[:4] == (DIRE, RADIANT, RADIANT, DIRE)


def test_picks_are_checked():
    sides = turn_sides(RADIANT, TINY_ORDER)
    assert check_picks(["b", "dire:a"], TINY_POOL, sides) == [(RADIANT, "b"), (DIRE, "a")]
    for picks, words in ((["x"], "'x' is not in the pool"), (["a", "a"], "picked already"),
                         (["a", "radiant:b"], "out of turn"), (["a", "b", "c", "d", "e"], "a draft has 4 turns"),
                         (["green:a"], "side must be one of")):
        with pytest.raises(ValueError, match=words):
            check_picks(picks, TINY_POOL, sides)


def test_a_table_missing_a_lineup_is_refused():
    lineups, scores = tiny_table()
    with pytest.raises(ValueError, match="no score for the lineup"):
        Draft(TINY_POOL, lineups[1:], scores[1:], order=TINY_ORDER)


# ---- lineup scores ---------------------------------------------------------------------------------------------------
def test_pools_are_checked():
    assert L.n_lineups(10) == 252 and L.n_lineups(12) == 16632 and len(L.pool_lineups(POOL10)) == 252
    assert L.check_pool(reversed(POOL10)) == L.check_pool(POOL10)
    for pool, words in ((POOL10[:9], "10 to 14 heroes"), (POOL10 + ("nobody",), "unknown hero 'nobody'"),
                        (POOL10 + ("marksman",), "listed twice")):
        with pytest.raises(ValueError, match=words):
            L.check_pool(pool)


@pytest.fixture(scope="module")
def module():
    from policies.league.series import one_torch_thread
    one_torch_thread()
    return L.load_draft_module(L.DEFAULT_MODEL)


def test_lineup_scoring_is_deterministic_for_a_fixed_seed(module):
    rows = L.pool_lineups(POOL10)[[0, 5, 100, 251]]
    a = L.score_lineups(module, rows, seed=0, decisions=3, batch=4)
    b = L.score_lineups(module, rows, seed=0, decisions=3, batch=4)
    assert a.shape == (4, 2) and np.array_equal(a, b)
    assert np.all((a > 0) & (a < 1))
    one_by_one = L.score_lineups(module, rows, seed=0, decisions=3, batch=1)
    np.testing.assert_allclose(one_by_one, a, atol=1e-6)  # another batch: the same numbers up to float rounding
    other_seed = L.score_lineups(module, rows, seed=1, decisions=3, batch=4)
    assert not np.array_equal(other_seed, a)  # the seed moves the spawn jitter, and the model sees it
    assert L.lineup_scores(a) == pytest.approx((a[:, 0] + 1 - a[:, 1]) / 2)


@pytest.fixture(scope="module")
def pool10_cache(tmp_path_factory, module):
    """The 10-hero pool's table, scored once into a fresh cache directory."""
    cache = str(tmp_path_factory.mktemp("draft_cache"))
    table = L.lineup_table(L.DEFAULT_MODEL, POOL10, cache, module=module)
    return cache, table


def test_the_cache_is_used_on_the_second_call(pool10_cache, monkeypatch):
    cache, first = pool10_cache
    assert first.meta["cached"] is False and first.scores.shape == (252,)

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored again")
    monkeypatch.setattr(L, "score_lineups", no_scoring)
    second = L.lineup_table(L.DEFAULT_MODEL, POOL10, cache)
    assert second.meta["cached"] is True and second.meta["cache_file"] == first.meta["cache_file"]
    assert np.array_equal(second.views, first.views) and np.array_equal(second.lineups, first.lineups)
    # another pool, seed or number of decisions is another cache file
    assert L.cache_path(cache, L.DEFAULT_MODEL, "f", POOL10, 0, 8) != L.cache_path(cache, L.DEFAULT_MODEL, "f", POOL10,
                                                                                  1, 8)


# ---- the CLI ---------------------------------------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = draft_cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_recommends_the_minimax_pick(pool10_cache, capsys):
    cache, table = pool10_cache
    code, out, _ = run_cli(capsys, "--pool", ",".join(POOL10), "--cache-dir", cache, "--picks", "marksman,dire:phantom")
    assert code == 0
    result = json.loads(out.strip().splitlines()[-1])
    expected = Draft(table.pool, *_positions(table), first=RADIANT).state(["marksman", "phantom"])
    assert result["cached"] is True and result["turn"] == 2 and result["on_turn"] == DIRE
    assert result["recommended"] == expected["recommended"] and result["side"] == DIRE
    assert result["options"] == pytest.approx({h: 1 - v for h, v in expected["options"].items()})
    assert f"recommended pick: {expected['recommended']}" in out and "calibration" in out


def _positions(table):
    from moba.game.heroes import HERO_INDEX
    pos = {HERO_INDEX[h]: i for i, h in enumerate(table.pool)}
    return np.vectorize(pos.__getitem__)(table.lineups), table.scores


@pytest.mark.parametrize("argv,words", [
    (["--picks", "nobody"], "error: --picks: pick 1 'nobody' is not in the pool; allowed: ["),
    (["--picks", "marksman,marksman"], "error: --picks: pick 2 'marksman' was picked already"),
    (["--picks", "marksman,radiant:phantom"], "error: --picks: pick 2 'radiant:phantom' is out of turn: pick 2 is "
                                               "dire's"),
    (["--pool", "marksman,phantom"], "error: --pool: a pool has 10 to 14 heroes"),
    (["--pool", ",".join(POOL10[:9]) + ",nobody"], "error: --pool: unknown hero 'nobody'; allowed: ["),
    (["--first", "green"], "error: --first must be one of ['radiant', 'dire'], got 'green'"),
    (["--side", "green"], "error: --side must be one of ['radiant', 'dire'], got 'green'"),
    (["--model", "models/hok_1v1_kickstart"], "error: --model 'models/hok_1v1_kickstart': not a 5v5 model"),
    (["--model", "models/nothing"], "error: --model 'models/nothing': unknown"),
])
def test_the_cli_names_the_mistake(argv, words, capsys, tmp_path):
    code, out, err = run_cli(capsys, "--pool", ",".join(POOL10), "--cache-dir", str(tmp_path), *argv)
    assert code == 2 and words in err and out == ""
    assert not list(tmp_path.iterdir())  # nothing was scored


# ---- calibration -----------------------------------------------------------------------------------------------------
def test_the_calibration_numbers():
    p = [0.1, 0.2, 0.8, 0.9, 0.55]
    y = [0, 1, 1, 1, 0]
    assert C.brier_score(p, y) == pytest.approx((0.01 + 0.64 + 0.04 + 0.01 + 0.3025) / 5)
    bins = C.reliability_bins(p, y)
    assert [b["count"] for b in bins] == [0, 1, 1, 0, 0, 1, 0, 0, 1, 1]
    assert bins[8]["mean_prob"] == 0.8 and bins[8]["win_rate"] == 1.0
    # ECE: |0.1-0|, |0.2-1|, |0.55-0|, |0.8-1|, |0.9-1|, one game each
    assert C.expected_calibration_error(p, y) == pytest.approx((0.1 + 0.8 + 0.55 + 0.2 + 0.1) / 5)
    c = C.calibration(p, y)
    assert c["n"] == 5 and c["base_rate"] == 0.6 and c["brier_base_rate"] == pytest.approx(0.24)
    assert c["prob_range"] == [0.1, 0.9]
    assert C.calibration([], [])["n"] == 0
    assert C.reliability_bins([1.0], [1])[-1]["count"] == 1  # the last bin is closed
    with pytest.raises(ValueError, match="outcomes be 0 or 1"):
        C.brier_score([0.5], [0.5])


def test_the_calibration_script_writes_its_json(tmp_path, capsys):
    """One short self-play game and one against the random agent (the lead runs the full measurement)."""
    from scripts import draft_calibration
    out = tmp_path / "cal.json"
    code = draft_calibration.main(["--self-play", "1", "--opponents", "random", "--games-per-opponent", "1",
                                   "--time-limit", "6", "--out", str(out)])
    assert code == 0
    cal = json.loads(out.read_text())
    assert cal["games"] == 2 and cal["opponents"] == {"self": 1, "random": 1}
    assert cal["time_limit_outcome"] == "objective" and sum(cal["decided_by"].values()) == 2
    first, second = cal["game_results"]
    assert first["opponent"] == "self" and set(first["model_teams"]) == {RADIANT, DIRE}
    assert second["model_side"] == RADIANT and set(second["model_teams"]) == {RADIANT}
    assert 0 < first["draft_score"] < 1 and len(set(first["lineup"])) == 10
    for key in ("draft_score", "first_frames", "per_decision"):
        assert len(cal[key]["bins"]) == C.RELIABILITY_BINS
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["games"] == 2


# ---- the draft API (web/draft.py) ------------------------------------------------------------------------------------
def api_calls(service, calls):
    """Each (method, path, body) of `calls` against an app with the draft routes: [(status, JSON)]."""
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from web.draft import add_draft_routes

    async def go():
        app = web.Application()
        add_draft_routes(app, service)
        async with TestClient(TestServer(app)) as client:
            out = []
            for method, path, body in calls:
                kw = {"data": body} if isinstance(body, str) else {"json": body} if body is not None else {}
                r = await client.request(method, path, **kw)
                out.append((r.status, await r.json() if r.content_type == "application/json" else await r.text()))
            return out
    return asyncio.run(go())


def test_the_draft_api_answers_with_minimax_and_names_bad_fields():
    from web.draft import DraftService
    service = DraftService.fixed(TINY_POOL, *tiny_table(), order=TINY_ORDER)
    state = {"pool": list(TINY_POOL), "first": RADIANT}
    (s0, setup), (s1, first), (s2, second), *errors = api_calls(service, [
        ("GET", "/draft/api/setup", None),
        ("POST", "/draft/api/state", {**state, "picks": []}),
        ("POST", "/draft/api/state", {**state, "picks": ["b"]}),
        ("POST", "/draft/api/state", "{not json"),
        ("POST", "/draft/api/state", {**state, "picks": ["b"], "extra": 1}),
        ("POST", "/draft/api/state", {**state, "picks": ["b", "b"]}),
        ("POST", "/draft/api/state", {**state, "picks": ["b", "radiant:a"]}),
        ("POST", "/draft/api/state", {**state, "picks": "b"}),
        ("POST", "/draft/api/state", {**state, "first": "green", "picks": []}),
        ("POST", "/draft/api/state", {"pool": ["a", "b", "c", "e"], "first": RADIANT, "picks": []}),
        ("POST", "/draft/api/state", [1, 2]),
        ("GET", "/draft/static/secret.py", None),
    ])
    assert s0 == 200 and setup["pool"] == list(TINY_POOL) and setup["order"] == list(TINY_ORDER)
    assert setup["calibration"] is None and setup["fixed_pool"] is True
    assert s1 == 200 and first["recommended"] == "b" and first["value"] == pytest.approx(0.45)
    assert first["sides"] == [RADIANT, DIRE, DIRE, RADIANT] and first["score_range"] == [0.30, 0.70]
    assert s2 == 200 and second["on_turn"] == DIRE and second["recommended"] == "a"
    expected = [(400, "body: not JSON"), (400, "body: unknown key(s) ['extra']"), (400, "picks: pick 2 'b' was picked"),
                (400, "picks: pick 2 'radiant:a' is out of turn"), (400, "picks: must be a list of hero names"),
                (400, "first must be one of ['radiant', 'dire']"), (400, "pool: this page drafts the pool"),
                (400, "body: must be a JSON object"), (404, "no such file 'secret.py'")]
    assert [(s, body["error"][:len(words)]) for (s, body), (_, words) in zip(errors, expected)] == expected


def test_the_draft_api_scores_a_new_pool_in_the_background(pool10_cache, tmp_path):
    """A pool the cache holds is ready at once; another is scored in the background (202 until done), then read."""
    import time

    from web.draft import DraftService
    cache, table = pool10_cache
    service = DraftService(cache_dir=cache)
    try:
        [(status, ready)] = api_calls(service, [("POST", "/draft/api/state", {"pool": list(POOL10), "picks": []})])
        assert status == 200 and ready["lineups"] == 252
        assert ready["recommended"] == Draft(table.pool, *_positions(table)).state([])["recommended"]
        service.cache_dir = str(tmp_path)  # an empty cache: the pool is scored again
        [(status, scoring)] = api_calls(service, [("POST", "/draft/api/state", {"pool": list(POOL10), "picks": []})])
        assert status == 202 and scoring["status"] == "scoring" and scoring["total"] == 252
        deadline = time.monotonic() + 120
        while service.scoring(L.check_pool(POOL10)) is not None:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        [(status, again)] = api_calls(service, [("POST", "/draft/api/state", {"pool": list(POOL10), "picks": []})])
        assert status == 200 and again["value"] == ready["value"]
        assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(table.meta["cache_file"])]
    finally:
        service.close()
