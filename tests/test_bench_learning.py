"""scripts/bench_learning.py: when a ladder level counts as reached, and the win-rate interval of the final games."""
from __future__ import annotations

import os

import pytest

from scripts.bench_learning import (GOAL_MIN_GAMES, curve_levels, final_games, first_promoted, first_reached,
                                    parse_final_against, pretrain_command, stop_setting, wilson, window_table)


def rows(*spec):
    """opponents.csv rows from (iteration, opponent, games, wins)."""
    return [{"iteration": str(it), "opponent": name, "games": str(g), "wins": str(w)} for it, name, g, w in spec]


def test_a_level_is_reached_at_the_first_80_percent_over_20_games():
    data = rows((1, "random", 10, 10), (2, "random", 9, 9),  # 19 games: not enough yet
                (3, "random", 2, 0),  # 21 games, 19 won (90%): reached at iteration 3
                (4, "scripted_1", 12, 8), (5, "scripted_1", 10, 7),  # 22 games, 15 won: 68%
                (6, "scripted_1", 10, 10),  # the last whole iterations with >= 20 games: 20 games, 17 won: 85%
                (7, "scripted_2", 30, 20))  # 67%: never reached
    wall = {i: 10.0 * i for i in range(1, 8)}
    reached = first_reached(data, wall)
    assert reached == {"random": (30.0, 3), "scripted_1": (60.0, 6)}
    assert GOAL_MIN_GAMES == 20


def test_the_curriculums_promotions_are_reported_at_the_iteration_the_level_changed():
    rows = [{"iteration": str(i), "curriculum_agent": a, "curriculum_level": str(lv)}
            for i, (a, lv) in enumerate([("scripted_1", 0), ("scripted_1", 0), ("scripted_2", 1), ("scripted_2", 1),
                                         ("scripted_1", 0), ("scripted_2", 1), ("scripted_3", 2)], start=1)]
    wall = {i: 2.0 * i for i in range(1, 8)}
    # passed scripted_1 at iteration 3 (a demotion and a second promotion do not move it), scripted_2 at 7
    assert first_promoted(rows, wall) == {"scripted_1": (6.0, 3), "scripted_2": (14.0, 7)}
    assert first_promoted([{"iteration": "1", "curriculum_agent": "", "curriculum_level": ""}], wall) == {}


def test_wilson_interval():
    low, high = wilson(80, 100)
    assert low == pytest.approx(0.711, abs=2e-3) and high == pytest.approx(0.867, abs=2e-3)
    assert wilson(0, 20)[0] == pytest.approx(0.0, abs=1e-9) and wilson(20, 20)[1] == pytest.approx(1.0, abs=1e-9)


def test_the_curve_reports_the_curriculums_warmup_levels_in_ladder_order():
    from training import run_config
    cfg = run_config.validate({"opponents": {"curriculum": {"share": 0.5, "ladder": [
        "random", "scripted_1_r50", "scripted_1", "scripted_3"]}}})
    assert curve_levels(cfg) == ["random", "scripted_1_r50", "scripted_1", "scripted_2", "scripted_3"]
    assert curve_levels(run_config.validate({})) == ["random", "scripted_1", "scripted_2", "scripted_3"]


def test_from_run_reports_a_run_trained_before_with_minutes_from_the_time_in_its_name(tmp_path, capsys):
    """--from-run trains nothing: the curve comes from the run's files, its minutes counted from the benchmark's
    start (the time in the run's name), its agent steps from metrics.csv."""
    import json
    import shutil
    import time

    from scripts.bench_learning import main
    run = tmp_path / "hok_1v1_bench_20261126_033428"
    (run / "PPO_trial").mkdir(parents=True)
    shutil.copy("tune_configs/hok_1v1.yaml", run / "run_config.yaml")
    t0 = time.mktime(time.strptime("20261126_033428", "%Y%m%d_%H%M%S"))
    (run / "metrics.csv").write_text("iteration,timestamp,agent_steps\n" + "".join(
        f"{i},{t0 + 60 * i},{1000 * i}\n" for i in range(1, 6)))
    (run / "PPO_trial" / "opponents.csv").write_text("iteration,opponent,games,wins\n1,random,10,9\n2,random,10,9\n"
                                                     "3,scripted_1,25,10\n")
    assert main(["--from-run", str(run), "--final-games", "0", "--lower-games", "0"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["reached_80pct_minutes"]["random"] == 2.0 and out["reached_80pct_agent_steps"]["random"] == 2000
    assert out["reached_80pct_minutes"]["scripted_1"] is None
    assert out["train_wall_minutes"] == 5.0 and out["train_rc"] is None and out["budget_minutes"] is None
    assert out["checkpoint"] is None and out["final"] == {}


def test_a_run_copied_from_another_machine_is_read_with_its_paths_found_here_or_left_out(tmp_path, capsys):
    """A run directory names the files of the machine that trained it: init.restore under a storage path that
    moved, trueskill.references in a removed worktree, init.checkpoint nowhere. --from-run finds each by its
    trailing parts under the run's ancestors and the working directory, or leaves it out, and says which."""
    import yaml

    from training.run_config import load_record
    storage = tmp_path / "copied" / "runs"
    checkpoint = storage / "first_bench_20261127_033704" / "PPO_trial" / "checkpoint_000003"
    checkpoint.mkdir(parents=True)
    (checkpoint / "algorithm_state.pkl").write_bytes(b"")
    run = storage / "second_bench_20261127_034414"
    run.mkdir()
    with open("tune_configs/hok_1v1.yaml") as f:
        raw = yaml.safe_load(f)
    raw["init"] = {"restore": "/gone/box/runs/first_bench_20261127_033704/PPO_trial/checkpoint_000003"}
    raw["trueskill"] = dict(raw.get("trueskill") or {}, references="/gone/worktree/tune_configs/references_1v1.json")
    (run / "run_config.yaml").write_text(yaml.safe_dump(raw))
    cfg, moved = load_record(str(run))
    assert cfg.init.restore == str(checkpoint)
    assert cfg.trueskill.references.endswith(os.path.join("tune_configs", "references_1v1.json"))
    assert os.path.isfile(cfg.trueskill.references)
    assert set(moved) == {"init.restore", "trueskill.references"}
    raw["init"] = {"checkpoint": "/gone/box/clone", "lr_hold_iterations": 0}
    (run / "run_config.yaml").write_text(yaml.safe_dump(raw))
    cfg, moved = load_record(str(run))
    assert cfg.init.checkpoint is None and moved["init.checkpoint"] == ("/gone/box/clone", None)
    from scripts.bench_learning import main
    (run / "metrics.csv").write_text("iteration,timestamp,agent_steps\n")
    assert main(["--from-run", str(run), "--final-games", "0", "--lower-games", "0"]) == 0
    assert "the run's init.checkpoint '/gone/box/clone' is not on this machine; left out" in capsys.readouterr().out


def test_the_windows_table_sums_games_and_takes_the_updates_medians_by_wall_minutes(tmp_path, capsys):
    metrics = [{"iteration": str(i), "curriculum_agent": a, "approx_kl": str(kl), "kl_stopped": str(stop),
                "vf_explained_var": str(ev), "entropy": str(ent), "gradient_noise_cosine": str(cos),
                "agent_steps": str(1_000_000 * i)}
               for i, a, kl, stop, ev, ent, cos in [(1, "random", 1e-3, 0, 0.5, 4.0, 0.1),
                                                     (2, "random", 3e-3, 1, 0.7, 3.0, "nan"),
                                                     (3, "random", 2e-3, 0, "nan", 2.0, 0.3),
                                                     (4, "scripted_1", 4e-3, 0, 0.9, 1.0, "")]]
    wall = {1: 3.0, 2: 9.0, 3: 14.9, 4: 15.0}  # iterations 1-3 in minutes 0-15, iteration 4 in 15-30
    opponents = rows((1, "random", 4, 1), (2, "random", 3, 3), (3, "scripted_1", 2, 0), (3, "random", 0, 0),
                     (4, "scripted_1", 5, 2))
    opponents[1]["outright_wins"] = "2"  # a run's rows since the column (the others: a run from before it)
    lines = window_table(metrics, opponents, wall, 15)
    # the cosine: the mean of 0.1 and 0.3 (iteration 2 did not measure it), standard error 0.1414 / sqrt(2)
    assert lines[2] == ("| 0-15 | random | random: 4/7 (2 outright), scripted_1: 0/2 (0 outright) | 2.0e-03 | 1 | "
                        "0.60 | 3.00 | 0.200 ± 0.100 (2) | 3.00M |")
    assert lines[3] == ("| 15-15 | scripted_1 | scripted_1: 2/5 (0 outright) | 4.0e-03 | 0 | 0.90 | 1.00 | - | "
                        "4.00M |")
    assert len(lines) == 4 and window_table([], [], {}, 15) == lines[:2]
    from scripts.bench_learning import main
    with pytest.raises(SystemExit):
        main(["--from-run", str(tmp_path), "--windows", "0"])
    assert "--windows must be > 0 (minutes), got 0.0" in capsys.readouterr().err


def test_the_final_games_are_as_long_as_asked_and_the_mode_s_length_by_default(tmp_path, capsys, monkeypatch):
    """--final-time-limit reaches app.evaluate's games (a run trained on 600 s games judged at 600 s); 0, the default,
    is the mode's length; a negative length is refused before anything runs. A run trained with the consumables' need
    filters plays its final games with them."""
    import json
    import shutil

    import scripts.bench_learning as bl
    run = tmp_path / "hok_1v1_bench_20261126_033428"
    (run / "PPO_trial" / "checkpoint_000001").mkdir(parents=True)
    shutil.copy("tune_configs/hok_1v1.yaml", run / "run_config.yaml")
    (run / "metrics.csv").write_text("iteration,timestamp,agent_steps\n1,1796000000,1000\n")
    seen = []
    monkeypatch.setattr(bl, "final_evaluation", lambda checkpoint, mode, games, greedy, workers, time_limit_s=0.0,
                        consumable_filters=False: seen.append((games, time_limit_s, consumable_filters)) or {})
    for extra, limit in (([], 0.0), (["--final-time-limit", "600"], 600.0)):
        assert bl.main(["--from-run", str(run), "--final-against", "scripted_1=4"] + extra) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert seen[-1] == ({"scripted_1": 4}, limit, False) and out["final_time_limit_s"] == (limit or None)
    with pytest.raises(SystemExit):
        bl.main(["--from-run", str(run), "--final-time-limit", "-1"])
    assert "--final-time-limit must be >= 0 seconds (0: the mode's game length), got -1.0" in capsys.readouterr().err
    assert len(seen) == 2
    import yaml
    cfg = yaml.safe_load((run / "run_config.yaml").read_text())
    cfg["env"]["consumable_filters"] = True
    (run / "run_config.yaml").write_text(yaml.safe_dump(cfg))
    assert bl.main(["--from-run", str(run), "--final-against", "scripted_1=4"]) == 0
    assert seen[-1] == ({"scripted_1": 4}, 0.0, True)


def test_the_final_games_are_the_ladders_unless_named():
    assert final_games(20, 5) == {"random": 5, "scripted_1": 5, "scripted_2": 5, "scripted_3": 20}
    assert parse_final_against(["random=20", "scripted_1_r75=4"]) == {"random": 20, "scripted_1_r75": 4}
    assert parse_final_against([]) == {}
    with pytest.raises(ValueError, match="unknown agent 'randm'; allowed: .*'random'"):
        parse_final_against(["randm=20"])
    for bad in ("random", "random=x", "random=-1"):
        with pytest.raises(ValueError, match="must be AGENT=GAMES"):
            parse_final_against([bad])


def test_the_pretrained_clone_gets_the_configs_model_keys():
    from app.pretrain import parse_args, settings_from_args
    from training import run_config

    cfg = run_config.load("tune_configs/hok_1v1_curriculum.yaml", ["model.lstm_size=96"])
    cmd = pretrain_command("1v1", "/nonexistent/clone", cfg.model, ["--games=4"])
    assert cmd[1:3] == ["-m", "app.pretrain"] and cmd[-1] == "--games=4"
    opts = settings_from_args(parse_args(cmd[3:]))
    assert opts["model"] == {"team_frame": True, "lstm_size": 96}  # read back as the run has them
    assert opts["settings"]["games"] == 4


def test_an_env_step_budget_stops_training_at_that_data_or_the_deadline_whichever_comes_first():
    from training import run_config

    assert stop_setting(1800000000.4) == "stop={timestamp: 1800000000}"
    cfg = run_config.load("tune_configs/smoke.yaml", [stop_setting(1800000000.0, 3_000_000)])
    assert cfg.stop == {"timestamp": 1800000000, "num_env_steps_sampled_lifetime": 3000000}  # the whole section
    stopper = run_config.RunStopper({"timestamp": 1800000000,
                                     "env_runners/num_env_steps_sampled_lifetime": 3000000})  # as app.train maps it
    early = {"timestamp": 1700000000, "env_runners": {"num_env_steps_sampled_lifetime": 2999000}}
    assert not stopper("t", early)
    assert stopper("t", {**early, "env_runners": {"num_env_steps_sampled_lifetime": 3001000}})  # the data first
    assert stopper("t", {**early, "timestamp": 1800000001})  # or the deadline first
