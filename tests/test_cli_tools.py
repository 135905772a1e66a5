"""What every command line tool shares: one agent-spec parser (policies.league.references.agent_path), one series of
games and its summary (policies/league/series.py), one handler of user errors (training/cli.py), the install that
makes `python scripts/X.py` work from any directory (pyproject.toml), and the pre-flight checks of app.train."""
from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys

import pytest

from moba.env.moba_env import MobaEnv
from moba.game.teams import side_of_game
from policies.agents.by_name import AGENTS, make_agent, play_game
from policies.league import references
from policies.league.series import play_series, summarize_series

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED_1V1 = os.path.join("models", "hok_1v1_kickstart")


# ---- the agent-spec parser -------------------------------------------------------------------------------------------
def test_an_agent_spec_is_a_name_model_path_or_checkpoint_path():
    assert references.agent_path("scripted_2", "--agent") is None
    assert references.agent_path(f"model:{SHIPPED_1V1}", "--agent") == SHIPPED_1V1
    assert references.agent_path(SHIPPED_1V1, "--agent") == SHIPPED_1V1
    assert references.checkpoint_path(f"model:{SHIPPED_1V1}", "--checkpoint") == SHIPPED_1V1


@pytest.mark.parametrize("spec, why", [("wizard", ""), ("model:models/nope", "does not exist"),
                                       ("models", "neither an algorithm checkpoint")])
def test_a_bad_agent_spec_names_the_flag_and_lists_what_is_allowed(spec, why):
    with pytest.raises(ValueError) as e:
        references.agent_path(spec, "--opponent")
    msg = str(e.value)
    assert msg.startswith(f"--opponent {spec!r}") and why in msg
    assert all(repr(name) in msg for name in AGENTS) and "model:PATH" in msg and "checkpoint" in msg


def test_a_checkpoint_option_refuses_agent_names():
    with pytest.raises(ValueError, match="--checkpoint 'random'.*allowed: model:PATH"):
        references.checkpoint_path("random", "--checkpoint")


def test_loading_a_module_prints_no_rlmodule_config_deprecation():
    seen = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = logging.getLogger(references.MODULE_CONFIG_DEPRECATION[0])
    keep = Keep()
    logger.addHandler(keep)
    try:
        module = references.load_module(f"model:{SHIPPED_1V1}")
        logger.warning("another deprecation")  # the filter is gone after loading, other records pass
    finally:
        logger.removeHandler(keep)
    assert module.observation_space is not None
    assert seen == ["another deprecation"]


# ---- the tools refuse a bad spec before playing ----------------------------------------------------------------------
def test_win_rate_refuses_a_bad_agent_before_starting_workers(capsys):
    from scripts import win_rate
    assert win_rate.main(["--agent", "model:models/nope", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --agent 'model:models/nope'") and "'scripted_3'" in err and "model:PATH" in err
    assert "Traceback" not in err


def test_evaluate_play_and_rate_refuse_a_bad_agent_naming_the_flag(capsys):
    from app import evaluate, rate
    from scripts import play
    assert evaluate.main(["--agent", "random", "--opponent", "wizard"]) == 2
    assert "error: --opponent 'wizard'" in capsys.readouterr().err
    assert play.main(["--dire", "no/such/checkpoint", "--quiet"]) == 2
    assert "error: --dire 'no/such/checkpoint'" in capsys.readouterr().err
    assert rate.main(["--checkpoint", "random"]) == 2
    assert "error: --checkpoint 'random'" in capsys.readouterr().err


def test_win_rate_plays_a_model_by_its_spec(capsys):
    from scripts import win_rate
    assert win_rate.main(["--agent", f"model:{SHIPPED_1V1}", "--opponent", "noop", "--games", "1", "--modes", "1v1",
                          "--eval", "--time-limit", "10", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["agent"] == f"model:{SHIPPED_1V1}" and out["results"]["1v1"]["games"] == 1


def test_a_model_in_another_mode_is_an_error_naming_the_flag(capsys):
    from scripts import win_rate
    assert win_rate.main(["--agent", SHIPPED_1V1, "--games", "1", "--modes", "5v5", "--eval", "--time-limit", "10",
                          "--workers", "1"]) == 2
    assert "error: --agent" in capsys.readouterr().err


# ---- the series and its summary --------------------------------------------------------------------------------------
def test_a_series_plays_sides_alternating_with_seed_plus_game_as_games_played_by_hand():
    env = MobaEnv({"mode": "1v1", "evaluation": True, "time_limit_s": 15.0})
    records = list(play_series(env, lambda g: make_agent("scripted", 10 + g), lambda g: make_agent("random", 20 + g),
                               3, seed=7))
    assert [r["side"] for r in records] == ["radiant", "dire", "radiant"]
    for g, r in enumerate(records):
        a, b = make_agent("scripted", 10 + g), make_agent("random", 20 + g)
        s = play_game(MobaEnv({"mode": "1v1", "evaluation": True, "time_limit_s": 15.0}),
                      *((a, b) if side_of_game(g) == "radiant" else (b, a)), seed=7 + g)
        assert r["winner"] == s["winner"] and r["game_time_s"] == s["game_time_s"]
        enemy = "dire" if r["side"] == "radiant" else "radiant"
        assert r["margin"] == s["raw_return"][r["side"]] - s["raw_return"][enemy]  # bit for bit


def record(side, winner, margin, minutes=1.0):
    return {"side": side, "winner": winner, "margin": margin, "game_time_s": 60.0 * minutes, "buildings": 1,
            "buildings_lost": 0}


def test_the_summary_counts_outright_and_points_wins_draws_and_losses():
    rs = [record("radiant", "none", 2.0), record("dire", "none", -1.0), record("radiant", "radiant", -3.0),
          record("dire", "radiant", 5.0, minutes=3.0)]
    draw = summarize_series(rs, "draw")
    assert (draw["wins"], draw["outright_wins"], draw["draws"], draw["losses"]) == (1, 1, 2, 1)
    assert draw["win_rate"] == 0.25 and draw["points_wins"] == 2 and draw["points_win_rate"] == 0.5
    assert draw["game_minutes"] == pytest.approx(1.5) and draw["reward_margin"] == pytest.approx(0.75)
    assert draw["buildings"] == 1.0 and draw["wins_as_radiant"] == 1 and draw["wins_as_dire"] == 0
    points = summarize_series(rs, "points")
    assert points["wins"] == 2 and points["outright_wins"] == 1 and points["win_rate"] == 0.5
    with pytest.raises(ValueError, match="at least one game"):
        summarize_series([])


def test_the_rating_table_counts_draws_apart_from_wins():
    rows = [{"reference": "random", "side": "radiant", "winner": "none", "score": 0.5}] * 4
    t = references.summary_table(rows, {"agents": {"random": {"mu": 0.0, "sigma": 1.0}}})
    r = t.loc["random"]
    assert (r["games"], r["wins"], r["draws"], r["losses"]) == (4, 0, 4, 0)
    assert r["win_rate"] == 0.0 and r["score"] == 0.5  # no "win rate 0.50" for four draws


def test_rating_a_shipped_model_writes_under_results_and_warns_of_another_time_limit(tmp_path, monkeypatch, capsys):
    from app import rate
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"mode": "1v1", "time_limit_s": 1200.0,
                                "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0}}}))
    model = os.path.join(ROOT, SHIPPED_1V1)
    monkeypatch.chdir(tmp_path)
    assert rate.main(["--checkpoint", f"model:{model}", "--references", str(refs), "--games", "1",
                      "--time-limit", "10"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out.strip().splitlines()[-1])
    assert "--time-limit: these games last 10 s, the references were rated on 1200 s games" in captured.err
    assert os.path.abspath(out["csv"]).startswith(str(tmp_path / "results" / "ratings"))
    assert os.path.isfile(out["csv"]) and not os.path.exists(os.path.join(model, "trueskill_games.csv"))
    assert out["wins"] + out["draws"] + out["losses"] == 1


# ---- user errors -----------------------------------------------------------------------------------------------------
def test_user_errors_print_one_line_and_exit_2(capsys):
    from training.cli import user_errors

    @user_errors
    def main(argv=None):
        if argv:
            raise ValueError("--x: must be >= 1")
        return 0

    assert main() == 0
    assert main(["bad"]) == 2
    assert capsys.readouterr().err == "error: --x: must be >= 1\n"

    @user_errors
    def buggy(argv=None):
        raise KeyError("a bug keeps its traceback")

    with pytest.raises(KeyError):
        buggy()


# ---- app.train's pre-flight checks -----------------------------------------------------------------------------------
def test_a_local_run_may_not_ask_for_more_env_runners_than_cores():
    from training.cluster_checks import check_local_resources
    check_local_resources({"num_env_runners": 2, "num_cpus": 0}, cores=2)
    check_local_resources({"num_env_runners": 64, "num_cpus": 80}, cores=2)  # asked for by name: Ray's check
    with pytest.raises(ValueError) as e:
        check_local_resources({"num_env_runners": 64, "num_cpus": 0}, cores=2)
    assert "resources.num_env_runners=64" in str(e.value) and "2 cores" in str(e.value)
    assert "allowed: 0..2" in str(e.value)


def test_a_finished_run_meets_its_stop_rule_and_a_raised_one_does_not():
    from app.train import stop_rule_met
    last = [{"training_iteration": 3, "env_runners": {"num_env_steps_sampled_lifetime": 900}}]
    assert stop_rule_met(last, {"training_iteration": 3})
    assert stop_rule_met(last, {"env_runners/num_env_steps_sampled_lifetime": 800})
    assert not stop_rule_met(last, {"training_iteration": 5})
    assert not stop_rule_met(last + [{}], {"training_iteration": 3})  # a trial that reported nothing
    assert not stop_rule_met([], {"training_iteration": 3})


def test_tune_is_told_not_to_warn_about_the_forced_experiment_snapshots(monkeypatch):
    from training import ray_output
    # a copy of the environment: quiet_ray_env also sets Ray's variables (RAY_AUTH_MODE, ...), which must not leak
    # into the Ray sessions of later tests
    monkeypatch.setattr(os, "environ", os.environ.copy())
    os.environ.pop("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", None)
    ray_output.quiet_ray_env()
    assert os.environ["TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S"] == "0"


# ---- the install -----------------------------------------------------------------------------------------------------
def requirement_lines(path):
    return [ln.strip() for ln in open(path) if ln.strip() and not ln.startswith("#")]


def test_pyproject_lists_the_pins_of_requirements_txt_which_installs_the_project():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    lines = requirement_lines(os.path.join(ROOT, "requirements.txt"))
    assert "-e ." in lines
    assert sorted(project["dependencies"]) == sorted(ln for ln in lines if ln != "-e .")


def test_no_script_edits_sys_path():
    import glob
    offenders = [p for p in glob.glob(os.path.join(ROOT, "scripts", "*.py")) + [os.path.join(ROOT, "tests",
                                                                                             "conftest.py")]
                 if "sys.path.insert" in open(p).read()]
    assert not offenders


def test_a_script_runs_from_another_directory(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "win_rate.py"), "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "model:PATH" in out.stdout


def test_the_virtual_environment_is_ignored():
    lines = [ln.strip() for ln in open(os.path.join(ROOT, ".gitignore"))]
    assert ".venv/" in lines


def test_evaluate_decides_capped_games_by_the_objective_beside_outright_wins():
    """The full bot against an idle hero for 200 s: no ancient falls (two draws), but it takes buildings, so it wins
    both games on the objective, and the idle hero none."""
    from app import evaluate
    args = evaluate.parse_args(["--agent", "scripted_3", "--opponent", "noop", "--mode", "1v1", "--games", "2",
                                "--time-limit", "200"])
    s = evaluate.evaluate(args, log=lambda line: None)
    assert (s["wins"], s["draws"], s["losses"], s["win_rate"]) == (0, 2, 0, 0.0)
    assert s["objective_win_rate"] == 1.0
    assert s["buildings"] >= 2 and s["buildings_lost"] == 0 and s["kills_lost"] == 0  # the idle hero takes nothing
    assert [s[f"{k}_as_{side}"] for side in ("radiant", "dire") for k in ("games", "wins", "objective_wins")] == \
        [1, 0, 1, 1, 0, 1]
    # evaluation games fix the lineup: the full bot is blademaster as Radiant and marksman as Dire
    assert s["by_hero"] == {"blademaster": {"games": 1, "wins": 0, "objective_wins": 1},
                            "marksman": {"games": 1, "wins": 0, "objective_wins": 1}}
    assert s["consumables_used"] >= 1 and s["consumables_gold"] > 0  # the bot drinks what its purchase script buys
    args.agent, args.opponent = "noop", "scripted_3"
    s = evaluate.evaluate(args, log=lambda line: None)
    assert s["objective_win_rate"] == 0.0
    # the idle hero's starting consumables are bought for it, and never used
    assert s["consumables_gold"] > 0 and (s["consumables_used"], s["scrolls_cast"], s["scrolls_finished"]) == (0, 0, 0)


def test_evaluate_plays_training_games_with_the_randomizations_named(capsys):
    from app import evaluate
    from moba.env.config import RANDOMIZATION_KEYS
    base = ["--agent", "scripted_3", "--opponent", "noop", "--mode", "1v1"]
    assert evaluate.env_games(evaluate.parse_args(base)) == {"evaluation": True}
    games = evaluate.env_games(evaluate.parse_args(base + ["--randomize", "lineup,item_builds"]))
    env = MobaEnv({"mode": "1v1", **games})
    assert not env.cfg.evaluation and not env.cfg.jittered()
    assert [k for k in RANDOMIZATION_KEYS if env.cfg.randomized(k)] == ["lineup", "item_builds"]
    # "all": every randomization of the game; not the first game's random cut, which would end every game of the
    # series early (each is its env's first): the games last their time limit
    every = evaluate.parse_args(base + ["--randomize", "all", "--time-limit", "20"])
    assert every.randomize == {**{k: True for k in RANDOMIZATION_KEYS}, "first_game_length": False}
    assert [r["game_time_s"] for r in evaluate.play_games(every, [0, 1, 2])] == pytest.approx([20.0] * 3, abs=0.2)
    with pytest.raises(SystemExit):
        evaluate.parse_args(base + ["--randomize", "lineup,first_game_length"])
    assert "first_game_length would cut every game at a random point" in capsys.readouterr().err
    # the lineup drawn per game: the results by hero come apart from those by side
    s = evaluate.evaluate(evaluate.parse_args(base + ["--games", "4", "--time-limit", "8", "--randomize", "lineup"]),
                          log=lambda line: None)
    assert sum(h["games"] for h in s["by_hero"].values()) == 4 and len(s["by_hero"]) > 2
    with pytest.raises(SystemExit):
        evaluate.parse_args(base + ["--randomize", "lineup,weather"])
    err = capsys.readouterr().err
    assert "--randomize 'lineup,weather': env config 'randomize': unknown key 'weather'; allowed:" in err
    assert "item_builds" in err
    with pytest.raises(SystemExit):
        evaluate.parse_args(base + ["--randomize", ","])
    assert "name at least one key" in capsys.readouterr().err


def test_evaluate_plays_the_lineup_named(capsys):
    from app import evaluate
    base = ["--agent", "scripted_3", "--opponent", "noop", "--mode", "1v1"]
    args = evaluate.parse_args(base + ["--lineup", "marksman,phantom", "--games", "2", "--time-limit", "8"])
    assert evaluate.env_games(args) == {"evaluation": True, "lineup": ["marksman", "phantom"]}
    s = evaluate.evaluate(args, log=lambda line: None)  # Radiant plays marksman: the agent in game 1, then the noop
    assert s["by_hero"] == {h: {"games": 1, "wins": 0, "objective_wins": 0} for h in ("marksman", "phantom")}
    for bad, message in ((["--lineup", "marksman,marksmen"], "unknown hero 'marksmen'; allowed: .*'phantom'"),
                         (["--lineup", "marksman"], "mode 1v1 needs 2 hero names, got 1"),
                         (["--lineup", "marksman,phantom", "--randomize", "lineup"], "give one of them")):
        with pytest.raises(SystemExit):
            evaluate.parse_args(base + bad)
        assert re.search(message, capsys.readouterr().err)


def test_evaluate_plays_every_game_from_the_start_state_around_the_agent(tmp_path, capsys):
    """--start-state: every game starts late around the agent, on both sides: its hero the distance from the
    opponent's ancient, the opponent's named towers down, every hero at the level; a bad value names the field."""
    import json
    import math

    from app import evaluate
    from moba.env.replay_file import read_replay
    base = ["--agent", "noop", "--opponent", "random", "--mode", "1v1"]
    assert evaluate.parse_args(base).start_state is None
    args = evaluate.parse_args(base + ["--games", "2", "--time-limit", "2", "--replay-dir", str(tmp_path),
                                       "--start-state", "{destroyed: [tower_mid_1, tower_mid_2], distance: 800, "
                                                        "level: 10}"])
    assert evaluate.env_games(args)["start_state"] == {"share": 1.0, "destroyed": ["tower_mid_1", "tower_mid_2"],
                                                      "distance": 800.0, "level": 10, "time_limit_s": 0.0,
                                                      "ancient_hp": 1.0, "waves": 0, "defender_dead_s": 0.0}
    s = evaluate.evaluate(args, log=lambda line: None)
    assert s["start_state"]["share"] == 1.0 and json.loads(json.dumps(s)) == s
    for path in s["replays"]:
        header, records = read_replay(path)
        side = next(t for t, name in header["agents"].items() if name == "noop")
        team = header["teams"].index(side)
        ancient = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] != team)
        units = [dict(zip(header["unit_fields"], u)) for u in records[0]["units"]]
        me = next(u for u in units if u["hero"] >= 0 and u["team"] == team)
        assert 800.0 - 1e-3 <= math.hypot(me["x"] - ancient["x"], me["y"] - ancient["y"]) < 900.0
        assert {u["level"] for u in units if u["hero"] >= 0} == {10}
        alive = {u["id"]: u["alive"] for u in units}
        towers = [b for b in header["map"]["buildings"] if b["type"] == "tower"]
        assert sorted((b["team"] == team, alive.get(b["id"], 0)) for b in towers) == [(False, 0), (False, 0),
                                                                                       (True, 1), (True, 1)]
    assert {read_replay(p)[0]["agents"]["radiant"] for p in s["replays"]} == {"noop", "random"}  # both sides
    for bad, message in (("{distance: -3}", "'start_state.distance': must be a number of map units"),
                         ("{destroyed: [ancient]}", "'start_state.destroyed'"), ("[1, 2]", "must be a mapping")):
        with pytest.raises(SystemExit):
            evaluate.parse_args(base + ["--start-state", bad])
        assert message in capsys.readouterr().err
