"""Training opponents beyond self-play (policies/league/curriculum.py, callbacks/opponents.py, the batched env runner's
fixed agents): the mix's shares, the curriculum's promotions, fixed agents playing inside the runner without
becoming training data, results flowing to the driver, and the curriculum carried by checkpoints."""
from __future__ import annotations

import csv
import os
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from test_training_e2e import build_algo, tiny_smoke

from policies.league.curriculum import CURRICULUM, LEAGUE, SELF, Curriculum, OpponentMix, review_agent
from policies.league.ratings import DRAW, LOSS, WIN
from callbacks.opponents import OpponentsCallback
from training.settings import RunSettings


# ---- the mix and the curriculum, without Ray -------------------------------------------------------------------------
def test_the_mix_draws_each_kind_with_its_share():
    shares = {SELF: 0.5, LEAGUE: 0.2, CURRICULUM: 0.2, "scripted_1": 0.1}
    mix = OpponentMix(shares, seed=0)
    n = 20000
    counts = Counter(mix.draw() for _ in range(n))
    observed = np.array([counts[k] for k in shares])
    expected = n * np.array(list(shares.values()))
    assert (((observed - expected) ** 2) / expected).sum() < 16.3  # chi-square, 3 degrees of freedom, p = 0.001
    with pytest.raises(ValueError, match="sum to 1"):
        OpponentMix({SELF: 0.5, "random": 0.2})


def test_the_curriculum_moves_up_once_the_window_is_won_often_enough():
    c = Curriculum(["random", "scripted_1", "scripted_2"], window=4, promote_at=0.75)
    assert c.current == "random"
    for score in (WIN, LOSS, WIN):  # 3 games: the window is not full yet
        assert not c.record("random", score)
    assert not c.record("scripted_1", WIN)  # games against another agent do not count
    assert c.record("random", WIN, iteration=5)  # 3 of the last 4 won: up a level, with a fresh window
    assert c.current == "scripted_1" and len(c.recent) == 0 and c.promotions == [(5, 1)]
    for score in (WIN, DRAW, LOSS, WIN, WIN):  # a draw is not a win; the window slides over the last 4
        assert not c.record("scripted_1", score)  # the last 4: draw, loss, win, win = 0.5
    assert c.record("scripted_1", WIN) and c.current == "scripted_2"  # loss, win, win, win = 0.75
    c2 = Curriculum(["a", "b"], window=2, promote_at=1.0)
    for _ in range(5):
        c2.record("a", WIN)
    assert c2.current == "b"
    for _ in range(5):
        assert not c2.record("b", WIN)  # the top level stays


def test_a_curriculum_on_one_side_counts_only_the_games_main_plays_there():
    """opponents.curriculum.sides ["radiant"]: the Dire games (the side that wins them anyway) do not move it, and
    a restored curriculum takes the run's sides, not saved ones."""
    c = Curriculum(["scripted_3_spells_50", "scripted_3"], window=2, promote_at=1.0, sides=("radiant",))
    for _ in range(3):
        assert not c.record("scripted_3_spells_50", WIN, side="dire")
    assert len(c.recent) == 0
    assert not c.record("scripted_3_spells_50", WIN, side="radiant")
    assert c.record("scripted_3_spells_50", WIN, side="radiant") and c.current == "scripted_3"
    both = Curriculum(["a", "b"], window=2, promote_at=1.0)  # default: every side counts
    both.record("a", WIN, side="dire")
    assert both.record("a", WIN, side="radiant")
    restored = Curriculum.from_state_dict(c.state_dict(), sides=("dire",))
    assert restored.sides == ("dire",) and "sides" not in c.state_dict()
    assert RunSettings.from_dict({"opponents": {"curriculum": {
        "share": 0.5, "ladder": ["random", "scripted_1"], "sides": ["radiant"]}}}).opponents.curriculum.sides == (
        "radiant",)
    with pytest.raises(ValueError, match=r"opponents\.curriculum\.sides.*non-empty list of sides"):
        RunSettings.from_dict({"opponents": {"curriculum": {"share": 0.5, "ladder": ["random"], "sides": ["both"]}}})


def test_the_curriculum_moves_down_once_the_window_is_lost_often_enough():
    c = Curriculum(["random", "scripted_1", "scripted_2"], window=4, promote_at=0.75, demote_at=0.25)
    for _ in range(3):
        assert not c.record("random", LOSS)  # the bottom level stays (and the window is not full yet)
    assert not c.record("random", LOSS) and c.current == "random"
    for _ in range(4):
        c.record("random", WIN, iteration=1)
    assert c.current == "scripted_1"
    for score in (LOSS, WIN, LOSS):
        assert not c.record("scripted_1", score)
    assert not c.record("scripted_1", WIN)  # 2 of 4 won: neither up nor down
    assert not c.record("scripted_1", LOSS)  # win, loss, win, loss = 0.5
    assert c.record("scripted_1", LOSS, iteration=7)  # loss, win, loss, loss = 0.25, at demote_at: down a level
    assert c.current == "random" and len(c.recent) == 0  # with a fresh window
    assert c.promotions == [(1, 1), (7, 0)]
    never = Curriculum(["random", "scripted_1"], window=2, promote_at=0.5)
    never.record("random", WIN), never.record("random", WIN)
    for _ in range(6):
        assert not never.record("scripted_1", LOSS)  # without demote_at it stays
    assert never.current == "scripted_1"


def test_a_window_judged_once_does_not_promote_on_a_run_of_luck():
    """The same games: 2 of 4 won, then 3 wins. The sliding window (judged after every game) promotes at the fifth
    game (W, L, W, W: 3 of 4); judged once, the first window [L, W, L, W] (0.5) is judged and emptied, and the second
    is not full after 3 wins: no promotion until its fourth."""
    games = [LOSS, WIN, LOSS, WIN, WIN, WIN, WIN]
    sliding = Curriculum(["random", "scripted_1"], window=4, promote_at=0.75)
    once = Curriculum(["random", "scripted_1"], window=4, promote_at=0.75, judge_once=True)
    assert [sliding.record("random", g) for g in games].index(True) == 4
    assert not any(once.record("random", g) for g in games) and list(once.recent) == [1.0, 1.0, 1.0]
    assert once.record("random", WIN) and once.current == "scripted_1"  # the second window full: 4 of 4


def test_the_curriculum_state_round_trips_and_follows_a_changed_ladder():
    c = Curriculum(["random", "scripted_1", "scripted_2"], window=3, promote_at=0.6)
    for _ in range(3):
        c.record("random", WIN, iteration=2)
    c.record("scripted_1", WIN)
    state = c.state_dict()
    same = Curriculum.from_state_dict(state)
    assert same.state_dict() == state and same.demote_at is None
    assert Curriculum.from_state_dict(state, demote_at=0.1).demote_at == 0.1  # the run config's rule on resume
    longer = Curriculum.from_state_dict(state, ["random", "noop", "scripted_1", "scripted_2", "scripted_3"])
    assert longer.current == "scripted_1" and list(longer.recent) == [1.0]


def test_the_review_share_sends_curriculum_games_to_the_level_below_and_they_never_promote():
    ladder = ["scripted_1", "scripted_2", "scripted_3"]
    rng = np.random.default_rng(0)
    assert {review_agent(ladder, "scripted_1", 0.3, rng) for _ in range(200)} == {"scripted_1"}  # nothing below
    assert {review_agent(ladder, "scripted_3", 0.0, rng) for _ in range(200)} == {"scripted_3"}  # review off
    counts = Counter(review_agent(ladder, "scripted_3", 0.3, rng) for _ in range(10000))
    assert set(counts) == {"scripted_2", "scripted_3"}  # only the rung just below, never scripted_1
    assert abs(counts["scripted_2"] / 10000 - 0.3) < 0.015  # 3.3 standard errors
    c = Curriculum(ladder, window=2, promote_at=1.0)
    assert c.agent_shares(0.75, review=0.3) == {"scripted_1": 0.75}
    c.record("scripted_1", WIN), c.record("scripted_1", WIN)
    assert c.current == "scripted_2"
    shares = c.agent_shares(0.75, review=0.3)
    assert shares == pytest.approx({"scripted_2": 0.525, "scripted_1": 0.225})
    for _ in range(5):  # the review games' wins are not games against the current level
        assert not c.record("scripted_1", WIN)
    assert c.current == "scripted_2" and len(c.recent) == 0


def test_an_env_runner_plays_the_review_share_against_the_level_below():
    from training import run_config
    from training.opponents import RunnerOpponents, install_level
    settings = run_config.validate({"opponents": {"curriculum": {
        "share": 1.0, "review": 0.25, "ladder": ["scripted_1", "scripted_2", "scripted_3"]}}})
    opp = RunnerOpponents(settings, seed=3)
    assert {opp.matchup(CURRICULUM)["agent"] for _ in range(100)} == {"scripted_1"}  # the first level: no review
    install_level(SimpleNamespace(matchups=SimpleNamespace(opponents=opp)), "scripted_3")  # as the driver pushes it
    counts = Counter(opp.matchup(CURRICULUM)["agent"] for _ in range(4000))
    assert set(counts) == {"scripted_2", "scripted_3"} and abs(counts["scripted_2"] / 4000 - 0.25) < 0.025


def test_a_fixed_agent_game_records_main_side_and_an_outright_win_apart_from_the_time_limit_rule():
    """opponents.csv's outright wins: a destroyed ancient on "main"'s side, not a capped game won on the objective."""
    from training import run_config
    from training.opponents import RunnerOpponents, game_ended
    settings = run_config.validate({"opponents": {"fixed": {"scripted_3": 1.0}, "time_limit_outcome": "objective"}})
    opp = RunnerOpponents(settings, seed=0)
    runner = SimpleNamespace(matchups=SimpleNamespace(opponents=opp, league=None))
    lead = {"radiant": {"buildings": 2, "kills": 9}, "dire": {"buildings": 1, "kills": 3}}
    game_ended(runner, 0, {"agent": "scripted_3", "side": "dire", "seed": 1}, "radiant", {}, lead)  # main destroyed it
    game_ended(runner, 1, {"agent": "scripted_3", "side": "dire", "seed": 2}, "none", {}, lead)  # capped, main leads
    game_ended(runner, 2, {"agent": "scripted_3", "side": "radiant", "seed": 3}, "radiant", {}, lead)  # the bot won
    game_ended(runner, 3, {"agent": "scripted_3", "side": "radiant", "seed": 4}, "dire", {}, lead)
    results = opp.drain()
    assert [(r.side, r.score, r.outright) for r in results] == [
        ("radiant", WIN, True), ("radiant", WIN, False), ("dire", LOSS, False), ("dire", WIN, True)]
    # a game that started late (the env's start_state) is recorded apart from the full games
    game_ended(runner, 4, {"agent": "scripted_3", "side": "dire", "seed": 5}, "radiant", {}, lead, late_start="radiant")
    assert opp.drain() == [("scripted_3 (late start)", WIN, "radiant", True)]


def test_radiant_share_sets_the_side_main_plays_and_half_keeps_the_old_draws():
    from training import run_config
    from training.opponents import RunnerOpponents
    from moba.game.teams import enemy_side

    def main_sides(share, n=4000):
        extra = {} if share is None else {"radiant_share": share}
        opp = RunnerOpponents(run_config.validate({"opponents": {"fixed": {"scripted_3": 1.0}, **extra}}), seed=7)
        return [enemy_side(opp.matchup("scripted_3")["side"]) for _ in range(n)]

    assert main_sides(None) == main_sides(0.5)
    rng = OpponentMix({"scripted_3": 1.0}, seed=7).rng  # the rule before the setting: the opponent Radiant below 0.5
    assert main_sides(0.5, 200) == [enemy_side(("radiant", "dire")[int(rng.random() >= 0.5)]) for _ in range(200)]
    for share in (0.0, 0.75, 1.0):
        radiant = main_sides(share).count("radiant") / 4000
        assert abs(radiant - share) < 0.03, (share, radiant)
    for bad, why in ((1.5, r"\[0, 1\]"), (-0.1, r"\[0, 1\]"), ("half", "float"), (True, "")):
        with pytest.raises(ValueError, match=rf"'opponents\.radiant_share': .*{why}"):
            run_config.validate({"opponents": {"fixed": {"scripted_3": 1.0}, "radiant_share": bad}})


# ---- in training -----------------------------------------------------------------------------------------------------
def test_fixed_agents_play_inside_the_runner_and_never_become_training_data(ray_session):
    from test_five_learner import runner_and_learner
    runner, _ = runner_and_learner(tiny_smoke(opponents__fixed={"scripted": 1.0},
                                              resources__num_envs_per_env_runner=2))
    episodes = runner.sample(num_timesteps=120, explore=True)  # 60 steps per env: a game of 38 steps ends in each
    games = runner._games
    assert all(g.fixed is not None and len(g.fixed_agents) == 1 for g in games)
    for g in games:  # main plays the other side only; its episodes hold only its hero
        assert g.main_agents == [a for a in g.agents if a not in g.fixed_agents]
    assert sum(len(e) for e in episodes) == 120  # one main hero per env step: the fixed agent's steps are absent
    assert {e.module_id for e in episodes} == {"main"}
    results = runner.matchups.opponents.drain()
    assert len(results) == 2 and {r.name for r in results} == {"scripted"}
    assert all(r.score in (WIN, DRAW, LOSS) and r.side in ("radiant", "dire") for r in results)
    assert all(r.score == WIN for r in results if r.outright)  # an outright win is a win under any time-limit rule


def test_a_first_game_cut_short_is_no_result_against_a_fixed_agent(ray_session):
    """An env's first training game may be cut at a random point of the time limit (randomize.first_game_length);
    its outcome at that cut is not a result, so only the whole games reach the opponents' results (the curriculum's
    window, opponents.csv). Two envs, 5 s games (~38 steps): each cut first game ends within 38 steps and one whole
    game by step 76 at the latest; a cut of a few steps leaves room for a second whole game by step 80, so the
    results are counted against the games each env finished (the envs' game stream moves with the process's env
    count: tests before this one shift it)."""
    from test_five_learner import runner_and_learner
    runner, _ = runner_and_learner(tiny_smoke(opponents__fixed={"scripted": 1.0}, env__randomize={},
                                              resources__num_envs_per_env_runner=2))
    runner.sample(num_timesteps=160, explore=True)  # 80 steps per env
    results = runner.matchups.opponents.drain()
    def moba_env(env):  # under the reward post-processing's wrapper
        while not hasattr(env, "games_started"):
            env = env.env
        return env

    # games finished in each env: those reset since (one is under way), and one that ended on the last step
    finished = [moba_env(g.env).games_started - 1 + g.needs_reset for g in runner._games]
    assert all(2 <= f <= 3 for f in finished), finished
    assert {r.name for r in results} == {"scripted"}
    assert len(results) == sum(finished) - 2  # the two cut games left out


def test_the_curriculum_in_training_logs_pushes_its_level_and_survives_a_checkpoint(ray_session, no_home_results,
                                                                                    tmp_path):
    """The curriculum, and Jump-Start RL's stages (on the games against "random", guided by scripted_1) beside it."""
    cfg = tiny_smoke(resources__num_env_runners=1,
                     opponents__curriculum={"share": 0.5, "ladder": ["noop", "random", "scripted_1"], "window": 3,
                                            "promote_at": 0.5, "judge_once": True},
                     opponents__fixed={"random": 0.25}, opponents__time_limit_outcome="points",
                     opponents__jump_start={"guide": "scripted_1", "opponent": "random", "handover_s": [2.0, 0.0],
                                            "window": 1000})
    algo = build_algo(cfg)
    try:
        seen = []
        for _ in range(3):
            r = algo.train()
            seen.append(r["opponents"])
            mix, level = r["opponents"]["mix"], r["opponents"]["curriculum_agent"]
            assert mix[SELF] == pytest.approx(0.25) and sum(mix.values()) == pytest.approx(1.0)
            assert mix[level] >= 0.5 and mix["random"] >= 0.25  # the curriculum's share goes to the current level
            assert r["opponents"]["jump_start_handover_s"] == 2.0
        assert sum(s["fixed_games"] for s in seen) >= 3  # games against fixed agents ended and were counted
        with open(os.path.join(algo.logdir, "opponents.csv")) as f:
            rows = list(csv.DictReader(f))
        assert {r["opponent"] for r in rows} >= {"random (guided to 2 s)"}  # the first stage's games
        assert sum(int(r["games"]) for r in rows) == sum(s["fixed_games"] for s in seen)
        for r in rows:  # outright wins are among the wins, the Radiant games among the games
            assert int(r["outright_wins_as_radiant"]) <= min(int(r["outright_wins"]), int(r["games_as_radiant"]))
            assert int(r["outright_wins"]) <= int(r["wins"]) and int(r["games_as_radiant"]) <= int(r["games"])
        assert all(0.0 <= s["fixed_outright_win_rate"] <= s["fixed_win_rate"] for s in seen if s["fixed_games"])
        # the driver's level reaches the runners (set by hand here: promotions need wins)
        OpponentsCallback.of(algo).curriculum.level = 2
        OpponentsCallback.of(algo).jump_start.curriculum.level = 1  # and Jump-Start RL's last stage: no guide
        algo.train()
        assert algo.env_runner_group.foreach_env_runner(
            lambda er: er.matchups.opponents.level_agent, local_env_runner=False) == ["scripted_1"]
        assert algo.env_runner_group.foreach_env_runner(
            lambda er: er.matchups.opponents.handover_s, local_env_runner=False) == [0.0]
        path = str(tmp_path / "ckpt")
        algo.save_checkpoint(path)
        state = OpponentsCallback.of(algo).curriculum.state_dict()
        js_state = OpponentsCallback.of(algo).jump_start.state_dict()
    finally:
        algo.stop()
    restored = build_algo(cfg)
    try:
        restored.load_checkpoint(path)
        assert OpponentsCallback.of(restored).curriculum.state_dict() == state
        assert state["judge_once"] is True  # the run config's rule (opponents.curriculum.judge_once)
        assert OpponentsCallback.of(restored).jump_start.state_dict() == js_state
        assert restored.env_runner_group.foreach_env_runner(
            lambda er: er.matchups.opponents.level_agent, local_env_runner=False) == ["scripted_1"]
        assert restored.env_runner_group.foreach_env_runner(
            lambda er: er.matchups.opponents.handover_s, local_env_runner=False) == [0.0]
    finally:
        restored.stop()


def test_the_iterations_fixed_agent_figures_count_the_full_games_not_the_late_starts():
    from callbacks.opponents import full_game_totals
    rows = [{"opponent": "scripted_3", "games": 4, "wins": 2, "outright_wins": 1},
            {"opponent": "scripted_3 (late start)", "games": 10, "wins": 9, "outright_wins": 8},
            {"opponent": "random (guided to 2 s)", "games": 3, "wins": 3, "outright_wins": 0}]
    assert full_game_totals(rows) == (7, 5, 1)
