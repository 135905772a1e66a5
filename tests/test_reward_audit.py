"""scripts/reward_audit.py: the post-processed return of ladder matchups, signal by signal, and the order check."""
from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

from moba.env.moba_env import MobaEnv
from moba.env.reward_wrapper import PostprocessedRewardEnv
from policies.agents.by_name import make_agent
from scripts import reward_audit as RA

PLAYERS, OPPONENTS, SEEDS, TIME_LIMIT_S = ["noop", "scripted_3"], ["scripted_1"], 2, 45


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    """One small audit: 1v1, two players against one opponent, 2 seeds on both sides, 45 s games."""
    out = tmp_path_factory.mktemp("audit")
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = RA.main(["--preset", "five_2019", "--mode", "1v1", "--players", ",".join(PLAYERS), "--opponents",
                      ",".join(OPPONENTS), "--seeds", str(SEEDS), "--time-limit", str(TIME_LIMIT_S), "--out",
                      str(out)])
    assert rc == 0
    with open(out / "games.csv") as f:
        rows = list(csv.DictReader(f))
    return {"out": out, "stdout": buf.getvalue(), "rows": rows}


def test_the_csv_has_a_row_per_game_both_sides_per_seed(audit):
    rows = audit["rows"]
    assert list(rows[0]) == list(RA.CSV_FIELDS)
    assert len(rows) == len(PLAYERS) * len(OPPONENTS) * SEEDS * 2
    for p in PLAYERS:
        mine = [r for r in rows if r["player"] == p]
        assert [(int(r["seed"]) - RA.SEED, r["side"]) for r in mine] == [
            (0, "radiant"), (0, "dire"), (1, "radiant"), (1, "dire")]
        assert all(float(r["game_time_s"]) >= TIME_LIMIT_S or r["winner"] != "none" for r in mine)  # no short game
    # the full bot outscores the idle hero against the same opponent
    mean = {p: np.mean([float(r["return"]) for r in rows if r["player"] == p]) for p in PLAYERS}
    assert mean["scripted_3"] > mean["noop"]


def test_the_signal_parts_add_up_to_the_return_and_zero_sum_holds(audit):
    for r in audit["rows"]:
        ret = float(r["return"])
        assert sum(float(r[k]) for k in RA.PARTS) == pytest.approx(ret, abs=1e-9)
        assert float(r[RA.NOOP_PART]) == 0.0  # no penalty in this reward
        assert ret + float(r["opponent_return"]) == pytest.approx(0.0, abs=1e-9)  # zero_sum on (the preset's default)
        assert float(r["win"]) == 0.0 or r["winner"] != "none"
    assert any(abs(float(r["return"])) > 1.0 for r in audit["rows"])  # the games did pay something


def test_the_json_line_and_the_files_say_what_the_csv_says(audit):
    result = json.loads(audit["stdout"].strip().splitlines()[-1])
    assert result == json.load(open(audit["out"] / "audit.json"))
    assert result["mode"] == "1v1" and result["seeds"] == SEEDS and result["games_per_matchup"] == 2 * SEEDS
    assert result["reward"] == {"reward_preset": "five_2019", "reward_weights": {}, "zero_sum": True,
                                "time_decay": True, "team_spirit": 0.3, "noop_penalty": 0.0}
    for p in PLAYERS:
        returns = [float(r["return"]) for r in audit["rows"] if r["player"] == p]
        cell = result["table"][p]["scripted_1"]
        assert cell["games"] == len(returns)
        mine = [r for r in audit["rows"] if r["player"] == p]
        assert cell["wins"] == sum(r["winner"] == r["side"] for r in mine)
        assert cell["losses"] == sum(r["winner"] not in (r["side"], "none") for r in mine)
        assert cell["mean"] == pytest.approx(np.mean(returns), abs=1e-4)
        assert cell["se"] == pytest.approx(np.std(returns, ddof=1) / np.sqrt(len(returns)), abs=1e-4)
        assert sum(cell["parts"].values()) == pytest.approx(cell["mean"], abs=1e-3)
    check = result["order_check"]
    assert check["holds"] == (result["table"]["scripted_3"]["scripted_1"]["mean"]
                              > result["table"]["noop"]["scripted_1"]["mean"])
    table_md = open(audit["out"] / "table.md").read()
    assert "| player \\ opponent | scripted_1 |" in table_md and "| noop |" in table_md
    assert "order check (noop < scripted_3)" in table_md
    assert "noop vs scripted_1: return" in audit["stdout"] and "lost outright" in audit["stdout"]


@pytest.mark.parametrize("player, noop_penalty", [("scripted_2", 0.0), ("noop", 0.01)])
def test_the_return_is_what_training_post_processing_pays(player, noop_penalty):
    """The audit's return of a game equals the sum of PostprocessedRewardEnv's rewards in the same game played
    by hand (same seeds, same env settings), a no-op penalty included."""
    reward = {**RA.audit_reward(preset="hok_2022"), "noop_penalty": noop_penalty}
    row = RA.play_audit_game("1v1", reward, player, "random", 1, 11, 30.0)
    assert row["side"] == "dire" and row["seed"] == 11
    base = MobaEnv({"mode": "1v1", "time_limit_s": 30.0, "reward_preset": "hok_2022",
                    "randomize": {"first_game_length": False}})
    base.set_seed_stream(0, 0)
    env = PostprocessedRewardEnv(base, team_spirit=reward["team_spirit"], normalize_gamma=None,
                                 noop_penalty=noop_penalty)
    obs, _ = env.reset(seed=11)
    radiant, dire = make_agent("random", 11 + 3), make_agent(player, 11 + 2)
    ids = env.possible_agents
    radiant.reset([ids[0]])
    dire.reset([ids[1]])
    total = 0.0
    while True:
        obs, r, term, trunc, _ = env.step({**radiant.act({ids[0]: obs[ids[0]]}), **dire.act({ids[1]: obs[ids[1]]})})
        total += r[ids[1]]
        if term["__all__"] or trunc["__all__"]:
            break
    assert row["return"] == pytest.approx(total, abs=1e-9)
    if noop_penalty:  # the idle hero pays for every decision it could have acted in: 225 decisions in 30 s
        assert row[RA.NOOP_PART] == pytest.approx(-noop_penalty * 225, abs=noop_penalty * 10)


def test_the_reward_comes_from_the_run_config(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("env: {mode: 1v1, reward_preset: hok_2022, reward_weights: {xp: 0.01}}\n"
                    "reward: {zero_sum: false, time_decay: false, noop_penalty: 0.002}\n"
                    "schedules: {team_spirit: {points: [[0, 0.2], [10, 0.8]]}}\n")
    assert RA.audit_reward(str(path)) == {"reward_preset": "hok_2022", "reward_weights": {"xp": 0.01},
                                          "zero_sum": False, "time_decay": False, "team_spirit": 0.2,
                                          "noop_penalty": 0.002, "mode": "1v1"}
    # without zero sum the parts still add up, and the two sides' returns no longer cancel
    row = RA.play_audit_game("1v1", RA.audit_reward(str(path)), "scripted_3", "noop", 0, 5, 30.0)
    assert sum(row[k] for k in RA.PARTS) == pytest.approx(row["return"], abs=1e-9)
    assert abs(row["return"] + row["opponent_return"]) > 0.1
    assert row[RA.NOOP_PART] == 0.0  # scripted_3 never idles


def test_the_order_check_names_the_pairs_that_break_it():
    players, opponents = ["noop", "scripted_1", "scripted_2", "scripted_3"], ["random", "scripted_3"]
    means = {"noop": {"random": -5.0, "scripted_3": -20.0}, "scripted_1": {"random": 2.0, "scripted_3": -8.0},
             "scripted_2": {"random": 1.0, "scripted_3": -4.0}, "scripted_3": {"random": 6.0, "scripted_3": 0.0}}
    check = RA.order_check(means, players, opponents)
    assert not check["holds"]
    assert check["by_opponent"]["random"] == {"holds": False, "broken": [["scripted_1", "scripted_2", 2.0, 1.0]]}
    assert check["by_opponent"]["scripted_3"] == {"holds": True, "broken": []}
    means["scripted_3"]["random"] = 2.0  # a tie breaks it too: the return must rise
    broken = RA.order_check(means, players, opponents)["by_opponent"]["random"]["broken"]
    assert broken == [["scripted_1", "scripted_2", 2.0, 1.0], ["scripted_1", "scripted_3", 2.0, 2.0]]
    means["scripted_2"]["random"], means["scripted_3"]["random"] = 3.0, 4.0
    assert RA.order_check(means, players, opponents)["holds"]
    lines = RA.order_lines(check, players)
    assert lines[0].endswith("BROKEN") and "  against random: broken by scripted_1 +2.00 >= scripted_2 +1.00" in lines


def test_bad_options_are_errors_naming_them(capsys, tmp_path):
    assert RA.main(["--players", "noop,wizard", "--seeds", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --players 'wizard'") and "'scripted_3'" in err
    assert RA.main(["--preset", "five_2020"]) == 2
    allowed = "['five_2018', 'five_2019', 'five_objective', 'hok_2022']"
    assert f"error: --preset 'five_2020': unknown; allowed: {allowed}" in capsys.readouterr().err
    assert RA.main(["--config", str(tmp_path / "none.yaml")]) == 2
    assert "not found" in capsys.readouterr().err
    for argv in (["--config", "x.yaml", "--preset", "hok_2022"], ["--seeds", "0"], ["--time-limit", "-1"]):
        with pytest.raises(SystemExit) as e:
            RA.parse_args(argv)
        assert e.value.code == 2
    assert not os.path.exists(tmp_path / "games.csv")


ORDER_PLAYERS, ORDER_SEEDS, ORDER_TIME_LIMIT_S = ["noop", "scripted_1", "scripted_3"], 2, 150.0


@pytest.fixture(scope="module")
def games_against_the_full_bot():
    """The matchups that broke five_2019's order (docs/reward_audit.md): noop, scripted_1 and scripted_3 against
    scripted_3, 1v1, 2 seeds on both sides, 150 s games (12 games; a game's sums score it under any reward)."""
    return [RA.play_signal_game("1v1", p, "scripted_3", g, RA.SEED, ORDER_TIME_LIMIT_S)
            for p in ORDER_PLAYERS for g in range(2 * ORDER_SEEDS)]


def order_against_the_full_bot(games, preset: str) -> tuple[dict, dict]:
    reward = {**RA.audit_reward(preset=preset), "team_spirit": 0.0}  # the 1v1 configs' team spirit
    rows = [RA.score_game(g, reward) for g in games]
    means = {p: {"scripted_3": RA.matchup_stats([r for r in rows if r["player"] == p])["mean"]}
             for p in ORDER_PLAYERS}
    return RA.order_check(means, ORDER_PLAYERS, ["scripted_3"]), means


def test_five_objective_pays_a_stronger_player_more_against_the_full_bot(games_against_the_full_bot):
    """The order noop < scripted_1 < scripted_3 against scripted_3 holds under five_objective and, on the same games,
    fails under five_2019 (the idle hero collects more than scripted_1, which fights the full bot and loses)."""
    check, means = order_against_the_full_bot(games_against_the_full_bot, "five_objective")
    assert check["holds"], means
    old, old_means = order_against_the_full_bot(games_against_the_full_bot, "five_2019")
    assert old["by_opponent"]["scripted_3"]["broken"][0][:2] == ["noop", "scripted_1"], old_means
    assert old_means["noop"]["scripted_3"] > old_means["scripted_1"]["scripted_3"]


def test_a_game_is_scored_from_its_sums_as_training_pays_it(games_against_the_full_bot):
    """score_game's return of a stored game equals the audit env's post-processing replayed step by step: the sums
    of two presets differ only by their weights (the parts are linear in them)."""
    g = next(x for x in games_against_the_full_bot if x["player"] == "scripted_1")
    base = {**RA.audit_reward(preset="five_2019"), "team_spirit": 0.0}
    r1 = RA.score_game(g, base)
    r2 = RA.score_game(g, {**base, "reward_weights": {"health": 4.0}})  # health x2
    assert r2["health"] == pytest.approx(2 * r1["health"]) and r1["health"] < 0.0  # scripted_1 loses its fights
    assert r2["return"] - r1["return"] == pytest.approx(r1["health"])
    assert g["kills_lost"] > 0 and r1["kills_lost"] == g["kills_lost"]
