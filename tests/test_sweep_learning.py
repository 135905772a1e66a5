"""scripts/sweep_learning.py: the sweep file's checks, the benchmark command of an arm, resuming from arms.jsonl, and
the table and curves of the arms."""
from __future__ import annotations

import json
import os

import pytest

from scripts import sweep_learning as sl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(tmp_path, text: str) -> str:
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name", sorted(os.listdir(os.path.join(ROOT, "tune_configs", "sweeps"))))
def test_the_shipped_sweeps_load_and_their_arms_are_valid_run_configs(name):
    from training import run_config
    sweep = sl.load_sweep(os.path.join(ROOT, "tune_configs", "sweeps", name))
    for arm, sets in sweep["arms"].items():
        cfg = run_config.load(os.path.join(ROOT, sweep["config"]), sweep["set"] + sets)
        assert cfg.ppo.num_epochs >= 1 and cfg.evaluation.interval == 0, arm


@pytest.mark.parametrize("text, message", [
    ("config: tune_configs/smoke.yaml\narms: {a: [x=1]}\nsteps: 3\n", "unknown key 'steps'"),
    ("arms: {a: [x=1]}\n", "'config' is missing"),
    ("config: nowhere.yaml\narms: {a: [x=1]}\n", "does not exist"),
    ("config: tune_configs/smoke.yaml\narms: {a: [seed]}\n", "'arms.a' must be a list of KEY=VALUE"),
    ("config: tune_configs/smoke.yaml\narms: []\n", "'arms' must map"),
    ("config: tune_configs/smoke.yaml\nlower_games: -1\narms: {a: [x=1]}\n", "'lower_games' must be a whole number"),
    ("config: tune_configs/smoke.yaml\nenv_steps: 0\narms: {a: [x=1]}\n", "'env_steps' must be a whole number >= 1"),
    ("config: tune_configs/smoke.yaml\nfinal_against: {random: -2}\narms: {a: [x=1]}\n", "'final_against' must map"),
    ("config: tune_configs/smoke.yaml\nfinal_against: [random]\narms: {a: [x=1]}\n", "'final_against' must map"),
    ("config: tune_configs/smoke.yaml\nfinal_against: {randm: 20}\narms: {a: [x=1]}\n",
     "final_against: unknown agent 'randm'; allowed: .*'random'"),
    ("config: tune_configs/smoke.yaml\nfinal_time_limit_s: -5\narms: {a: [x=1]}\n",
     "'final_time_limit_s' must be a number of seconds >= 0"),
    ("config: tune_configs/smoke.yaml\nfinal_time_limit_s: long\narms: {a: [x=1]}\n",
     "'final_time_limit_s' must be a number of seconds >= 0"),
])
def test_a_bad_sweep_file_names_what_is_wrong(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        sl.load_sweep(write(tmp_path, text))


def test_an_arm_runs_the_benchmark_with_the_shared_and_its_own_overrides(tmp_path):
    sweep = sl.load_sweep(write(tmp_path, "config: tune_configs/smoke.yaml\nminutes: 3\nset: [seed=5]\n"
                                          "arms: {a: [ppo.num_epochs=2], b: [ppo.num_epochs=1]}\n"))
    cmd = sl.bench_command(sweep, "a", 3.0)
    assert cmd[1].endswith("bench_learning.py") and cmd[cmd.index("--minutes") + 1] == "3.0"
    assert cmd[cmd.index("--final-games") + 1] == "20" and cmd[cmd.index("--lower-games") + 1] == "20"
    assert cmd[cmd.index("--workers") + 1] == "2"
    assert [cmd[i + 1] for i, c in enumerate(cmd) if c == "--set"] == ["seed=5", "ppo.num_epochs=2"]
    fewer = sl.bench_command({**sweep, "lower_games": 0}, "a", 3.0)  # the full bot only
    assert fewer[fewer.index("--final-games") + 1] == "20" and fewer[fewer.index("--lower-games") + 1] == "0"
    assert "--env-steps" not in cmd
    paired = sl.bench_command({**sweep, "env_steps": 2000000}, "a", 3.0)  # arms that stop at the same data
    assert paired[paired.index("--env-steps") + 1] == "2000000"
    assert "--final-time-limit" not in cmd  # the mode's game length
    short = sl.bench_command({**sweep, "final_time_limit_s": 600}, "a", 3.0)  # the training games' length
    assert short[short.index("--final-time-limit") + 1] == "600"


def test_final_against_replaces_the_ladders_final_games_in_the_command_and_the_table(tmp_path):
    sweep = sl.load_sweep(write(tmp_path, "config: tune_configs/smoke.yaml\nfinal_games: 0\nlower_games: 0\n"
                                          "final_against: {random: 20, noop: 4}\narms: {a: [x=1]}\n"))
    cmd = sl.bench_command(sweep, "a", 3.0)
    assert [cmd[i + 1] for i, c in enumerate(cmd) if c == "--final-against"] == ["random=20", "noop=4"]
    final = {"random": {"wins": 17, "games": 20, "objective_win_rate": 0.9}, "noop": {"wins": 4, "games": 4}}
    assert sl.final_cell(final) == "vs random: 17/20; 90%, vs noop: 4/4"
    assert sl.final_cell({**final, "scripted_3": {"wins": 1, "games": 20}}) == "1/20"
    assert sl.final_cell({}) == "-"
    sides = {"wins_as_radiant": 8, "games_as_radiant": 10, "wins_as_dire": 0, "games_as_dire": 10}
    assert sl.final_cell({"random": {"wins": 8, "games": 20, **sides}}) == "vs random: 8/20 (radiant 8/10, dire 0/10)"
    fights = {"objective_win_rate": 0.35, "kills": 7, "kills_lost": 16}
    assert sl.final_cell({"scripted_3": {"wins": 0, "games": 20, **fights}}) == "0/20; 35%; kills 7-16"


def test_a_level_cell_shows_the_80pct_mark_else_the_curriculums_promotion():
    r = {"reached_80pct_minutes": {"scripted_1": 6.8, "scripted_2": None, "scripted_3": None},
         "reached_80pct_agent_steps": {"scripted_1": 1_200_000, "scripted_2": None},
         "promoted_minutes": {"scripted_1": 5.5, "scripted_2": 7.75, "scripted_3": None},
         "promoted_agent_steps": {"scripted_1": 928_594, "scripted_2": 1_344_852}}
    assert sl.level_cell(r, "scripted_1") == "6.8 / 1,200,000"  # reached: the benchmark's own mark wins
    assert sl.level_cell(r, "scripted_2") == "7.8 / 1,344,852, promoted"
    assert sl.level_cell(r, "scripted_3") == "-" and sl.level_cell({}, "random") == "-"
    assert sl.level_cell({"promoted_minutes": {"random": 1.0}}, "random") == "1.0 / ?, promoted"


def result(arm, minutes, steps, wins, run_dir=""):
    return {"arm": arm, "sets": [f"ppo.train_batch_size={arm}"], "run_dir": run_dir,
            "reached_80pct_minutes": {"scripted_1": minutes, "scripted_2": None},
            "reached_80pct_agent_steps": {"scripted_1": steps, "scripted_2": None},
            "final": {"scripted_3": {"wins": wins, "games": 20}}}


def test_finished_arms_are_skipped_and_the_table_and_curves_written(tmp_path, monkeypatch, capsys):
    sweep = write(tmp_path, "config: tune_configs/smoke.yaml\narms: {'4000': [x=1], '8000': [x=2]}\n")
    out = tmp_path / "out"
    out.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("iteration,time_s,agent_steps,curriculum_level,curriculum_window_win_rate,"
                                     "kickstart_kl,minibatches_applied,fixed_games,fixed_win_rate,"
                                     "jump_start_handover_s\n1,60,5000,0,0.2,3.0,4,2,0.5,300\n"
                                     "2,120,10000,0,0.6,2.0,3,1,1.0,300\n3,600,15000,1,0.1,1.0,2,3,0.0,150\n"
                                     "4,610,16000,1,0.1,1.0,2,1,1.0,150\n")
    (run / "trial").mkdir()  # the training games won outright, by main's side, over the whole run
    (run / "trial" / "opponents.csv").write_text(
        "iteration,opponent,share,games,wins,draws,win_rate,outright_wins,games_as_radiant,outright_wins_as_radiant\n"
        "1,scripted_3,1.0,4,2,1,0.5,2,3,0\n2,scripted_3,1.0,6,5,0,0.83,4,2,1\n")
    first = result("4000", 12.5, 40000, 3, str(run))
    first["final"]["scripted_3"]["objective_win_rate"] = 0.35
    (out / "arms.jsonl").write_text(json.dumps(first) + "\n")
    ran = []
    monkeypatch.setattr(sl, "run_arm", lambda s, arm, minutes, log=print: ran.append(arm) or result(arm, None, None, 0))
    assert sl.main([sweep, "--out", str(out)]) == 0
    assert ran == ["8000"]  # 4000 was done before
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["arms"] == ["4000", "8000"] and set(last["written"]) == {"table", "curves"}
    rows = (out / "table.md").read_text().splitlines()
    # the last 5 minutes are iterations 3 and 4 (120 s >= 610 s - 300 s is false): 1 of their 4 fixed games won
    assert rows[2] == ("| 4000 | `ppo.train_batch_size=4000` | 12.5 / 40,000 | - | 16,000 | 11 | 0.10 (1) | 0.25 | "
                       "150 | 1.00 | 6/10 (radiant 1/5, dire 5/5) | 3/20; 35% |")
    assert rows[3] == "| 8000 | `ppo.train_batch_size=8000` | - | - | - | - | - | - | - | - | - | 0/20 |"
    assert len(sl.read_arms(str(out / "arms.jsonl"))) == 2
    assert sl.main([sweep, "--out", str(out), "--only", "x"]) == 2
    assert "--only: unknown arm 'x'; allowed: ['4000', '8000']" in capsys.readouterr().err


def test_final_games_can_be_overridden_for_a_run_of_the_sweep(tmp_path, monkeypatch, capsys):
    sweep = write(tmp_path, "config: tune_configs/smoke.yaml\nfinal_games: 20\narms: {a: [x=1]}\n")
    seen = []
    monkeypatch.setattr(sl, "run_arm", lambda s, arm, minutes, log=print: seen.append(s["final_games"])
                        or result(arm, None, None, 0))
    assert sl.main([sweep, "--out", str(tmp_path / "out"), "--final-games", "0"]) == 0
    assert seen == [0] and sl.bench_command({**sl.load_sweep(sweep), "final_games": 0}, "a", 1.0).count("0") >= 2
    assert sl.main([sweep, "--out", str(tmp_path / "out2"), "--final-games", "-1"]) == 2
    assert "--final-games must be >= 0" in capsys.readouterr().err


def test_set_adds_an_override_to_every_arm_between_the_shared_ones_and_the_arms_own(tmp_path, monkeypatch, capsys):
    sweep = write(tmp_path, "config: tune_configs/smoke.yaml\nset: [seed=5]\narms: {a: [x=1], b: [x=2]}\n")
    commands = []
    monkeypatch.setattr(sl, "run_arm", lambda s, arm, minutes, log=print: commands.append(
        sl.bench_command(s, arm, minutes)) or result(arm, None, None, 0))
    assert sl.main([sweep, "--out", str(tmp_path / "out"), "--set", "init.restore=CKPT", "--set", "y=3"]) == 0
    sets = [[c[i + 1] for i, w in enumerate(c) if w == "--set"] for c in commands]
    assert sets == [["seed=5", "init.restore=CKPT", "y=3", "x=1"], ["seed=5", "init.restore=CKPT", "y=3", "x=2"]]
    assert sl.main([sweep, "--out", str(tmp_path / "out2"), "--set", "restore"]) == 2
    assert "--set: 'restore' must be KEY=VALUE" in capsys.readouterr().err


def test_an_arm_without_a_curriculum_is_plotted_by_its_games_against_the_fixed_agents():
    import pandas as pd
    climbing = pd.DataFrame({"curriculum_window_win_rate": [0.1, 0.5], "fixed_games": [4, 4],
                             "fixed_win_rate": [1.0, 1.0]})
    assert list(sl.trained_against_win_rate(climbing)) == [0.1, 0.5]  # the curriculum's own window
    fixed = pd.DataFrame({"fixed_games": [10, 10, 10, 10], "fixed_win_rate": [0.0, 0.5, 1.0, 0.5]})
    assert list(sl.trained_against_win_rate(fixed)) == [0.0, 0.25, 0.75, 0.75]  # about 20 games: two iterations


def test_an_arm_trained_in_a_removed_worktree_is_found_under_the_sweeps_results(tmp_path, monkeypatch):
    """arms.jsonl records the run directory the arm trained in; a worktree since removed leaves it pointing nowhere,
    and the report then reads the run where it is now (results/RUN beside results/sweeps/NAME)."""
    run = tmp_path / "results" / "hok_bench_1"
    run.mkdir(parents=True)
    (run / "metrics.csv").write_text("iteration,time_s,agent_steps\n1,10.0,100\n")
    out = tmp_path / "results" / "sweeps" / "name"
    out.mkdir(parents=True)
    rows = [{"arm": "moved", "run_dir": "/tmp/wt_gone/results/hok_bench_1"},
            {"arm": "lost", "run_dir": "/tmp/wt_gone/results/hok_bench_2"},
            {"arm": "here", "run_dir": str(run)}]
    (out / "arms.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path / "results" / "sweeps")  # not the results' root: found from arms.jsonl's folders
    arms = sl.read_arms(str(out / "arms.jsonl"))
    assert arms["moved"]["run_dir"] == str(run) and arms["here"]["run_dir"] == str(run)
    assert arms["lost"]["run_dir"] == "/tmp/wt_gone/results/hok_bench_2"  # kept as recorded: nothing to read
    assert sl.progress(arms["moved"]["run_dir"])["agent_steps"] == 100


def test_the_outright_wins_by_side_roll_over_about_twenty_games_of_each_side(tmp_path):
    import pandas as pd
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial" / "opponents.csv").write_text(
        "iteration,opponent,share,games,wins,draws,win_rate,outright_wins,games_as_radiant,outright_wins_as_radiant\n"
        + "".join(f"{i},scripted_3,1.0,20,10,0,0.5,{i},10,{i % 2}\n" for i in (1, 2, 3)))
    m = pd.DataFrame({"iteration": [1, 2, 3], "agent_steps": [100, 200, 300]})
    out = sl.outright_by_side(str(tmp_path), m)
    # 10 games a side per iteration: two iterations make ~20; Radiant won 1, 0, 1 and Dire 0, 2, 2 of its 10
    assert list(out["agent_steps"]) == [100, 200, 300]
    assert list(out["radiant"]) == [0.1, 0.05, 0.05] and list(out["dire"]) == [0.0, 0.1, 0.2]
    assert sl.outright_by_side(str(tmp_path / "nowhere"), m) is None


def test_games_that_started_late_are_counted_apart_from_the_full_games(tmp_path):
    """opponents.csv rows under policies.league.start_stages.late_start_label: their own cell part, and not in the
    by-side curve of the full games."""
    import pandas as pd
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial" / "opponents.csv").write_text(
        "iteration,opponent,share,games,wins,draws,win_rate,outright_wins,games_as_radiant,outright_wins_as_radiant\n"
        "1,scripted_3,1.0,10,5,0,0.5,1,6,0\n1,scripted_3 (late start),0.0,5,2,0,0.4,2,3,1\n"
        "2,scripted_3 (late start at stage 1),0.0,3,2,0,0.67,1,2,1\n")  # a stage's games (opponents.start_stages)
    o = sl.outright_wins(str(tmp_path))
    assert (o["games"], o["outright"], o["late_games"], o["late_outright"]) == (10, 1, 8, 3)
    assert sl.outright_cell(o) == ("1/10 (radiant 0/6, dire 1/4); late start 3/8 (radiant 2/5, dire 1/3)")
    m = pd.DataFrame({"iteration": [1, 2], "agent_steps": [100, 200]})
    out = sl.outright_by_side(str(tmp_path), m)
    assert list(out["radiant"]) == [0.0] and list(out["dire"]) == [0.25]
    late = sl.outright_by_side(str(tmp_path), m, late=True)  # the late games' curve (the stages' panel)
    assert list(late["radiant"]) == pytest.approx([1 / 3, 2 / 5])
    assert list(late["dire"]) == pytest.approx([1 / 2, 1 / 3])


def test_arms_that_trained_against_several_agents_get_each_ones_games_apart(tmp_path):
    """A curriculum's levels beside a fixed agent: outright_by_opponent sums each opponent's full games over the run
    (late starts left out), and the table lists them under the arms' rows, for the arms with more than one."""
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial" / "opponents.csv").write_text(
        "iteration,opponent,share,games,wins,draws,win_rate,outright_wins,games_as_radiant,outright_wins_as_radiant\n"
        "1,scripted_3,0.5,4,1,3,0.25,1,2,0\n1,scripted_3_spells_50,0.5,4,3,1,0.75,3,2,1\n"
        "2,scripted_3,0.5,6,2,4,0.33,2,3,1\n2,scripted_3_spells_50,0.0,0,0,0,,0,0,0\n"
        "2,scripted_3 (late start),0.0,5,2,0,0.4,2,3,1\n")
    per = sl.outright_by_opponent(str(tmp_path))
    assert sorted(per) == ["scripted_3", "scripted_3_spells_50"]
    assert sl.outright_cell(per["scripted_3"]) == "3/10 (radiant 1/5, dire 2/5)"
    assert sl.outright_cell(per["scripted_3_spells_50"]) == "3/4 (radiant 1/2, dire 2/2)"
    text = sl.table({"two": {"sets": [], "run_dir": str(tmp_path)}}, [])
    assert "| two | scripted_3 | 3/10 (radiant 1/5, dire 2/5) |" in text
    assert "| two | scripted_3_spells_50 | 3/4 (radiant 1/2, dire 2/2) |" in text


def test_the_stage_cell_shows_the_hand_over_else_the_late_start_stage():
    assert sl.end_stage_cell({"handover_last": 150.0, "start_stage_last": None}) == "150"
    assert sl.end_stage_cell({"handover_last": None, "start_stage_last": 3}) == "stage 3"
    assert sl.end_stage_cell({}) == "-"
