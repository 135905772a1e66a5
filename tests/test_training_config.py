"""The run configuration (training/run_config.py), the CLI's early failure (app/train.py) and the schedules
(callbacks/schedules.py)."""
from __future__ import annotations

import copy
import glob
import json
import os
import subprocess
import sys

import pytest
import yaml

from moba.env.config import DEFAULT_MAX_UNITS
from training import run_config
from training.schedules import SCHEDULED, UNITS, Schedule, gamma_from_horizon, schedule_values

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMOKE = os.path.join(ROOT, "tune_configs", "smoke.yaml")


def smoke_raw() -> dict:
    with open(SMOKE) as f:
        return yaml.safe_load(f)


def error_of(raw: dict) -> str:
    with pytest.raises(ValueError) as e:
        run_config.validate(raw)
    return str(e.value)


def with_key(dotted: str, value) -> dict:
    return run_config.set_key(smoke_raw(), dotted, value)


# ---- validation errors name the key and what is allowed --------------------------------------------------------------
def test_defaults_fill_an_empty_config():
    from training.settings import PPOSettings, ResourceSettings, RewardSettings
    cfg = run_config.validate({})
    assert cfg.ppo == PPOSettings()
    assert cfg.reward == RewardSettings()
    assert cfg.resources == ResourceSettings()
    assert set(cfg.schedules) == set(SCHEDULED)
    assert cfg.schedules["team_spirit"] == {"unit": "iterations", "points": [[0.0, 0.3]]}
    assert cfg.stop == {"training_iteration": 10}


def test_unknown_top_level_key():
    msg = error_of({**smoke_raw(), "learning_rate": 0.1})
    assert "'learning_rate'" in msg and "unknown key" in msg
    for k in run_config.TOP_KEYS:
        assert k in msg


def test_unknown_ppo_key():
    msg = error_of(with_key("ppo.lr", 0.1))
    assert "'ppo.lr'" in msg
    from training.settings import PPOSettings
    for k in PPOSettings.defaults():
        assert k in msg


def test_wrong_type():
    msg = error_of(with_key("ppo.num_epochs", "two"))
    assert "'ppo.num_epochs'" in msg and "int" in msg and "'two'" in msg
    msg = error_of(with_key("reward.zero_sum", "yes"))
    assert "'reward.zero_sum'" in msg and "bool" in msg
    msg = error_of(with_key("ppo", [1, 2]))
    assert "'ppo'" in msg and "mapping" in msg
    msg = error_of(with_key("seed", 1.5))
    assert "'seed'" in msg


@pytest.mark.parametrize("dotted,value,expect", [
    ("ppo.gae_lambda", 1.5, "[0, 1]"),
    ("ppo.adam_beta1", -0.1, "[0, 1)"),
    ("ppo.adam_beta2", 1.0, "[0, 1)"),  # Adam's betas: torch.optim.Adam refuses 1
    ("ppo.num_epochs", 0, ">= 1"),
    ("ppo.clip_param", 0.0, "> 0"),
    ("ppo.dual_clip", 0.5, "> 1"),
    ("ppo.entropy_bonus", "primary", "['action', 'heads']"),
    ("ppo.entropy_head_weights", {"speed": 1.0}, "['primary', 'delay', 'unit', 'offsets']"),
    ("ppo.entropy_head_weights", [1.0, 0.0], "weights >= 0"),
    ("schedules.team_spirit", 1.2, "[0.0, 1.0]"),
    ("schedules.team_spirit", {"points": [[0, 0.3], [10, 1.5]]}, "[0.0, 1.0]"),
    ("schedules.gae_horizon_s", 0.0, "[0.2"),
    ("resources.num_envs_per_env_runner", 0, ">= 1"),
    ("resources.learner_threads", -1, ">= 0"),
    ("trueskill.cpu_share", 0.0, "(0, 1]"),
    ("trueskill.cpu_share", 1.5, "(0, 1]"),
    ("league.time_limit_outcome", "coin", "['draw', 'points', 'objective']"),
    ("trueskill.time_limit_outcome", "tiebreak", "['draw', 'points', 'objective']"),
    ("ppo.staleness", 2, "[0, 1]"),
    ("resources.num_gpus_per_learner", -1, ">= 0"),
])
def test_out_of_range(dotted, value, expect):
    msg = error_of(with_key(dotted, value))
    assert repr(dotted) in msg and expect in msg, msg


def test_a_negative_entropy_head_weight_names_the_head():
    msg = error_of(with_key("ppo.entropy_head_weights", {"primary": 2.0, "delay": -1}))
    assert "'ppo.entropy_head_weights.delay'" in msg and ">= 0" in msg and "-1" in msg, msg
    assert run_config.validate(with_key("ppo.entropy_head_weights", {"primary": 10, "delay": 0})).ppo \
        .entropy_head_weights == {"primary": 10, "delay": 0}


def test_sampling_ahead_needs_remote_batched_env_runners():
    raw = with_key("ppo.staleness", 1)
    assert run_config.validate(raw).ppo.staleness == 1  # smoke: one remote batched runner
    for key, value in (("resources.num_env_runners", 0), ("resources.env_runner", "classic")):
        msg = error_of(run_config.set_key(with_key("ppo.staleness", 1), key, value))
        assert "'ppo.staleness'" in msg and "num_env_runners >= 1" in msg, msg


@pytest.mark.parametrize("spec,expect", [
    ({"points": [[1, 0.3], [10, 0.5]]}, "start at x = 0"),
    ({"points": [[0, 0.3], [10, 0.5], [5, 0.4]]}, "increase in x"),
    ({"points": [[0, 0.3], [0, 0.5]]}, "increase in x"),
    ({"points": []}, "start at x = 0"),
    ({"unit": "minutes", "points": [[0, 0.3]]}, "unit must be one of"),
    ({"points": [[0, "high"]]}, "number pairs"),
    ({"point": [[0, 0.3]]}, "'points'"),
    ("high", "a number or a mapping"),
])
def test_bad_schedule_spec(spec, expect):
    msg = error_of(with_key("schedules.team_spirit", spec))
    assert "team_spirit" in msg and expect in msg, msg
    if "unit" in expect:
        for u in UNITS:
            assert u in msg


def test_unknown_schedule():
    msg = error_of(with_key("schedules.gamma", 0.99))
    assert "'schedules.gamma'" in msg
    for name in SCHEDULED:
        assert name in msg


def test_bad_env_key():
    msg = error_of(with_key("env.mode", "3v3"))
    assert "'env'" in msg and "'mode'" in msg and "'3v3'" in msg
    for mode in DEFAULT_MAX_UNITS:
        assert mode in msg
    msg = error_of(with_key("env.colour", "red"))
    assert "colour" in msg and "allowed" in msg and "frameskip" in msg
    msg = error_of(with_key("env.remote", 8000))
    assert "'env.remote'" in msg


def test_a_changing_game_schedule_is_refused_with_a_game_server():
    """new_action_share and ancient_hp_scale change the games through MobaEnv's setters, which a game server's games
    do not have: with env.remote only one number is taken (it reaches the server through the env config)."""
    from training.algorithm import training_env_config
    from training.schedules import ENV_GAME_SCHEDULED
    for name in ENV_GAME_SCHEDULED:
        raw = run_config.set_key(with_key("env.remote", "localhost:50051"), f"schedules.{name}",
                                 {"points": [[0, 0.3], [10, 1.0]]})
        msg = error_of(raw)
        assert f"'schedules.{name}'" in msg and "env.remote" in msg and "one number" in msg
        assert run_config.validate(run_config.set_key(raw, f"schedules.{name}", 0.5)).schedules[name]["points"] \
            == [[0, 0.5]]
    raw = run_config.set_key(with_key("env.remote", "localhost:50051"), "schedules.ancient_hp_scale", 0.5)
    assert training_env_config(run_config.validate(raw))["ancient_hp_scale"] == 0.5
    assert "ancient_hp_scale" not in training_env_config(run_config.validate(smoke_raw()))


def test_bad_model_key():
    msg = error_of(with_key("model.lstm_units", 64))
    assert "'model'" in msg and "lstm_units" in msg and "lstm_size" in msg
    msg = error_of(with_key("model.lstm_size", 0))
    assert "'model'" in msg and "lstm_size" in msg and "positive int" in msg


def test_bad_stop_key():
    msg = error_of(with_key("stop.episodes", 3))
    assert "'stop.episodes'" in msg
    for k in run_config.STOP_KEYS:
        assert k in msg
    msg = error_of(with_key("stop.training_iteration", -1))
    assert "'stop.training_iteration'" in msg and "positive" in msg


def test_bad_evaluation_opponent():
    msg = error_of(with_key("evaluation.opponents", ["random", "alphastar"]))
    assert "'evaluation.opponents'" in msg and "'alphastar'" in msg
    for name in ("noop", "random", "scripted"):
        assert name in msg


@pytest.mark.parametrize("curriculum,words", [
    ({"share": 0.5, "ladder": ["random", "scripted_9"]},
     ["opponents.curriculum.ladder", "scripted_9", "scripted_1_r50"]),
    ({"share": 0.5, "promote_at": 0.0}, ["opponents.curriculum.promote_at", "(0, 1]"]),
    ({"share": 0.5, "demote_at": 0.8}, ["opponents.curriculum.demote_at", "null", "promote_at = 0.75", "0.8"]),
    ({"share": 0.5, "demote_at": "low"}, ["opponents.curriculum.demote_at", "'low'"]),
    ({"share": 0.5, "window": 0}, ["opponents.curriculum.window", ">= 1"]),
    ({"share": 0.5, "demote": 0.1}, ["opponents.curriculum.demote", "demote_at"]),
    ({"share": 0.5, "review": 1.0}, ["opponents.curriculum.review", "[0, 1)", "1.0"]),
    ({"share": 0.5, "review": "half"}, ["opponents.curriculum.review", "'half'"]),
    ({"share": 0.5, "judge_once": "yes"}, ["opponents.curriculum.judge_once", "bool"]),
])
def test_bad_curriculum_names_the_key_and_the_allowed_values(curriculum, words):
    msg = error_of(with_key("opponents.curriculum", curriculum))
    for w in words:
        assert w in msg, (w, msg)


def test_the_curriculum_demotion_rule_is_off_unless_set():
    assert run_config.validate({"opponents": {"curriculum": {"share": 0.5}}}).opponents.curriculum.demote_at is None
    cfg = run_config.load(SMOKE, ["opponents.curriculum={share: 0.5, demote_at: 0.1}"])
    assert cfg.opponents.curriculum.demote_at == 0.1


def test_bad_sweep_value_names_the_swept_key():
    raw = smoke_raw()
    raw["sweep"] = {"schedules.team_spirit": [0.1, 2.0]}
    msg = error_of(raw)
    assert "team_spirit" in msg and "[0.0, 1.0]" in msg


def test_a_sweep_of_a_learner_ppo_key_becomes_a_grid_search_of_the_learners_config():
    from ray.rllib.algorithms.ppo import PPOConfig

    from training.algorithm import param_space
    from training.settings import SETTINGS_KEY
    raw = smoke_raw()
    raw["sweep"] = {"ppo.aux_win_coeff": [0.05, 0.0], "schedules.lr": [1e-4, 1e-3], "env.frameskip": [2, 4]}
    cfg = run_config.validate(raw)
    algo_config = PPOConfig().training(learner_config_dict={SETTINGS_KEY: cfg.to_dict()})
    space = param_space(cfg, algo_config)
    settings = space["learner_config_dict"][SETTINGS_KEY]
    assert settings["ppo"]["aux_win_coeff"] == {"grid_search": [0.05, 0.0]}
    assert settings["ppo"]["dual_clip"] is None  # the rest as the run config has it
    assert settings["schedules"]["lr"] == {"grid_search": [{"unit": "iterations", "points": [[0.0, 1e-4]]},
                                                           {"unit": "iterations", "points": [[0.0, 1e-3]]}]}
    assert space["env_config"]["frameskip"] == {"grid_search": [2, 4]}
    assert cfg.to_dict()["ppo"]["aux_win_coeff"] == 0.01  # the settings themselves untouched
    raw["sweep"] = {"ppo.dual_clip": [0.5]}
    assert "'ppo.dual_clip'" in error_of(raw)


@pytest.mark.parametrize("key", ["ppo.num_epochs", "reward.zero_sum", "lr"])
def test_a_key_that_cannot_be_swept_is_refused_naming_the_allowed_ones(key):
    raw = smoke_raw()
    raw["sweep"] = {key: [1, 2]}
    msg = error_of(raw)
    assert f"'sweep.{key}'" in msg and "schedules.*, env.*" in msg and "ppo.entropy_bonus" in msg


# ---- load and --set --------------------------------------------------------------------------------------------------
def test_set_overrides_apply_dotted_keys_with_yaml_values():
    cfg = run_config.load(SMOKE, [
        "ppo.num_epochs=2", "env.mode=5v5", "reward.zero_sum=false", "ppo.dual_clip=3", "seed=7",
        "evaluation.opponents=[random, scripted]", "schedules.lr=1.0e-4",
        "schedules.team_spirit={unit: env_steps, points: [[0, 0.1], [1000, 0.9]]}",
        "stop={training_iteration: 5}", "name=other"])
    assert cfg.ppo.num_epochs == 2
    assert cfg.env["mode"] == "5v5" and cfg.env["time_limit_s"] == 60  # the rest of the section kept
    assert cfg.reward.zero_sum is False
    assert cfg.ppo.dual_clip == 3
    assert cfg.seed == 7 and cfg.name == "other"
    assert cfg.evaluation.opponents == ("random", "scripted")
    assert cfg.schedules["lr"] == {"unit": "iterations", "points": [[0.0, 1e-4]]}
    assert cfg.schedules["team_spirit"] == {"unit": "env_steps", "points": [[0.0, 0.1], [1000.0, 0.9]]}
    assert cfg.stop == {"training_iteration": 5}
    assert cfg.model["lstm_size"] == 32  # untouched sections stay as in the file


def test_set_override_errors():
    with pytest.raises(ValueError, match="expected key=value"):
        run_config.load(SMOKE, ["ppo.num_epochs"])
    with pytest.raises(ValueError, match="'ppo.num_epochs'"):
        run_config.load(SMOKE, ["ppo.num_epochs=two"])
    with pytest.raises(ValueError, match="'optimizer'"):
        run_config.load(SMOKE, ["optimizer.lr=0.1"])
    with pytest.raises(ValueError, match="'name.first'"):
        run_config.load(SMOKE, ["name.first=x"])  # name is not a section
    with pytest.raises(ValueError, match="not found"):
        run_config.load(os.path.join(ROOT, "tune_configs", "no_such_config.yaml"))


@pytest.mark.parametrize("text, where, what", [
    ("name: x\nppo:\n\tnum_epochs: 2\n", "line 3, column 1", "found character '\\t' that cannot start any token"),
    ("name: x\nppo: {num_epochs: 2\nseed: 1\n", "line 3, column 5",
     "expected ',' or '}', but got ':' (while parsing a flow mapping that starts at line 2, column 6)"),
    ("name: x\nsweep:\n  ppo.dual_clip: [3, 4\n", "line 4, column 1", "expected ',' or ']'"),
])
def test_broken_yaml_names_the_file_line_and_column(tmp_path, text, where, what):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        run_config.load(str(path))
    assert str(e.value).startswith(f"config file {str(path)!r}: not valid YAML, {where}: ") and what in str(e.value)


def test_a_set_value_of_broken_yaml_names_the_override():
    with pytest.raises(ValueError, match=r"--set 'ppo.dual_clip=\[3': the value is not valid YAML, line 1, column 3"):
        run_config.load(SMOKE, ["ppo.dual_clip=[3"])


def test_set_key_creates_sections_without_touching_the_input_elsewhere():
    raw = {"ppo": {"num_epochs": 1}}
    before = copy.deepcopy(raw)
    run_config.set_key(raw, "resources.num_env_runners", 0)
    assert raw == {**before, "resources": {"num_env_runners": 0}}


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "tune_configs", "*.yaml"))))
def test_every_shipped_config_validates(path):
    cfg = run_config.load(path)
    assert cfg.name
    again = run_config.validate(cfg.to_dict())  # a validated config is itself valid (run_config.yaml)
    assert again == cfg


def test_smoke_config_is_a_small_1v1_run():
    cfg = run_config.load(SMOKE)
    assert cfg.env["mode"] == "1v1"
    assert cfg.schedules["team_spirit"] == {"unit": "iterations", "points": [[0.0, 0.3], [3.0, 0.8]]}


# ---- the CLI fails before Ray starts ---------------------------------------------------------------------------------
def run_mains_in_subprocess(arg_lists, tmp_path):
    """Runs app.train.main once per argument list in one fresh interpreter; returns [(rc, stderr, ray started)]."""
    code = ("import contextlib, io, json, sys, ray\n"
            "from app.train import main\n"
            "out = []\n"
            f"for args in {arg_lists!r}:\n"
            "    err = io.StringIO()\n"
            "    with contextlib.redirect_stderr(err):\n"
            "        rc = main(args)\n"
            "    out.append([rc, err.getvalue(), ray.is_initialized()])\n"
            "print('RESULTS ' + json.dumps(out))\n")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), "HOME": str(tmp_path)}
    p = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                       timeout=180)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULTS ")]
    assert p.returncode == 0 and lines, p.stdout + p.stderr
    return json.loads(lines[-1][len("RESULTS "):])


def test_main_with_a_bad_config_returns_2_before_ray_starts(tmp_path):
    bad = tmp_path / "bad.yaml"
    raw = smoke_raw()
    raw["ppo"]["num_epochs"] = "two"
    bad.write_text(yaml.safe_dump(raw))
    results = run_mains_in_subprocess([
        ["--config", str(bad), "--set", f"storage_path={tmp_path / 'results'}"],
        ["--config", SMOKE, "--set", "env.mode=3v3", "--set", f"storage_path={tmp_path / 'results'}"],
        ["--config", str(tmp_path / "missing.yaml")],
    ], tmp_path)
    (rc1, err1, ray1), (rc2, err2, ray2), (rc3, err3, ray3) = results
    assert rc1 == 2 and "ppo.num_epochs" in err1 and "'two'" in err1, err1
    assert rc2 == 2 and "mode" in err2 and "3v3" in err2 and "5v5" in err2, err2
    assert rc3 == 2 and "not found" in err3, err3
    assert (ray1, ray2, ray3) == (False, False, False), "Ray was started for a bad config"
    assert not (tmp_path / "results").exists()


# ---- schedules -------------------------------------------------------------------------------------------------------
def test_schedule_interpolates_piecewise_linearly_and_clamps():
    s = Schedule.parse("team_spirit", {"points": [[0, 0.2], [10, 0.6], [30, 1.0]]})
    assert s.unit == "iterations"
    assert s.value(0, 10**9) == pytest.approx(0.2)  # iterations: env steps do not matter
    assert s.value(5, 0) == pytest.approx(0.4)
    assert s.value(10, 0) == pytest.approx(0.6)
    assert s.value(20, 0) == pytest.approx(0.8)
    assert s.value(30, 0) == pytest.approx(1.0)
    assert s.value(1000, 0) == pytest.approx(1.0)  # clamped after the last point
    assert s.value(-5, 0) == pytest.approx(0.2)  # and before the first


def test_schedule_in_env_steps():
    s = Schedule.parse("lr", {"unit": "env_steps", "points": [[0, 1e-3], [2000, 1e-5]]})
    assert s.value(10**6, 0) == pytest.approx(1e-3)  # iterations do not matter
    assert s.value(0, 1000) == pytest.approx((1e-3 + 1e-5) / 2)
    assert s.value(0, 500) == pytest.approx(1e-3 - 0.25 * (1e-3 - 1e-5))
    assert s.value(0, 10**7) == pytest.approx(1e-5)


def test_constant_schedule_and_round_trip():
    s = Schedule.parse("entropy_coeff", 0.01)
    assert s.value(0, 0) == s.value(10**6, 10**9) == pytest.approx(0.01)
    s = Schedule.parse("team_spirit", {"unit": "env_steps", "points": [[0, 0.1], [5, 0.2]]})
    assert Schedule.parse("team_spirit", s.to_dict()) == s


def test_initial_schedule_values_use_the_run_frameskip():
    cfg = run_config.load(SMOKE, ["env.frameskip=2", "schedules.gae_horizon_s=60.0"])
    assert cfg.frameskip == 2
    initial = cfg.initial_schedule_values()
    assert initial["gamma"] == pytest.approx(1 - (2 / 30) / 60.0)  # not the default frameskip's 1 - (4 / 30) / 60
    assert initial["team_spirit"] == pytest.approx(0.3)
    assert run_config.load(SMOKE).frameskip == 4  # left out: the engine's default


def test_gamma_from_horizon():
    assert gamma_from_horizon(180, 4) == pytest.approx(0.99926, abs=5e-6)  # Five eq. 3
    assert gamma_from_horizon(180, 4) == pytest.approx(1 - (4 / 30) / 180, abs=1e-15)
    assert gamma_from_horizon(360, 4) > gamma_from_horizon(180, 4)  # a longer horizon, a larger gamma


def test_schedule_values_adds_gamma():
    cfg = run_config.load(SMOKE)
    vals = schedule_values(cfg.schedules, 0, 0, 4)
    assert set(vals) == set(SCHEDULED) | {"gamma"}
    assert vals["gamma"] == pytest.approx(gamma_from_horizon(180.0, 4))
    assert vals["team_spirit"] == pytest.approx(0.3) and vals["lr"] == pytest.approx(3e-4)
    assert schedule_values(cfg.schedules, 3, 0, 4)["team_spirit"] == pytest.approx(0.8)
    assert schedule_values(cfg.schedules, 1, 0, 4)["team_spirit"] == pytest.approx(0.3 + 0.5 / 3)
    horizon = {"gae_horizon_s": {"unit": "iterations", "points": [[0, 60.0], [10, 180.0]]}}
    v = schedule_values(horizon, 5, 0, 2)
    assert v["gae_horizon_s"] == pytest.approx(120.0)
    assert v["gamma"] == pytest.approx(1 - (2 / 30) / 120.0)
    assert "gamma" not in schedule_values({"lr": {"unit": "iterations", "points": [[0, 1e-3]]}}, 0, 0, 4)


def test_embedded_ray_advertises_enough_cpus_for_the_layout():
    """A Tune trial asks for the driver plus one CPU per env runner: the embedded Ray must offer that much, or the
    2-runner layout of the configs never starts on a 2-core machine."""
    import os

    from app.train import local_num_cpus
    cores = os.cpu_count() or 1
    assert local_num_cpus({"num_cpus": 0, "num_env_runners": 2}) == max(cores, 3)
    assert local_num_cpus({"num_cpus": 0, "num_env_runners": 8}) == max(cores, 9)
    assert local_num_cpus({"num_cpus": 5, "num_env_runners": 8}) == 5


def test_minibatch_larger_than_the_train_batch_is_rejected_before_ray():
    """RLlib refuses minibatch_size > train_batch_size_per_learner at build time: the config check says it first."""
    from training.run_config import validate
    with pytest.raises(ValueError, match=r"ppo.minibatch_size.*<= ppo.train_batch_size \(4000\)"):
        validate({"ppo": {"train_batch_size": 4000, "minibatch_size": 4096}})
    assert validate({}).ppo.minibatch_size <= validate({}).ppo.train_batch_size


def test_trueskill_under_points_needs_references_rated_under_points(tmp_path):
    """A reference pool rated with capped games as draws cannot rate a version that decides them on points."""
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"mode": "5v5", "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0}}}))
    raw = {"trueskill": {"every": 5, "references": str(refs), "time_limit_outcome": "points"}}
    msg = error_of(raw)
    assert "'trueskill.time_limit_outcome'" in msg and "rated with 'draw'" in msg and str(refs) in msg
    refs.write_text(json.dumps({"mode": "5v5", "time_limit_outcome": "points",
                                "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0}}}))
    assert run_config.validate(raw).trueskill.time_limit_outcome == "points"


def test_progress_line_shows_the_raw_return_evaluation_league_and_signals():
    """The line a run prints per iteration: the raw return (the post-processed one is ~0 in zero-sum self-play),
    the points and margin against the random agent, TrueSkill and the league when present, "-" where a value is
    missing (NaN: no game ended this iteration)."""
    from training.progress import progress_line, progress_row
    result = {"training_iteration": 7, "time_this_iter_s": 2.0, "time_total_s": 14.0,
              "env_runners": {"num_env_steps_sampled": 1000, "num_env_steps_sampled_lifetime": 7000,
                              "num_agent_steps_sampled": {"main": 10000}, "episode_return_mean": 0.01,
                              "raw_return_radiant": 12.5, "win_rate_radiant": float("nan"),
                              "signal_reward": {"lane_assign": -6.0, "hero_death": -0.5, "gold_gained": 3.0},
                              "hero_game_seconds": 120.0},
              "evaluation_games": {"win_rate_vs_random": 0.0, "points_win_rate_vs_random": 0.75,
                                   "reward_margin_vs_random": 4.25},
              "trueskill": {"version": 6, "mu": 9.5, "sigma": 3.0},
              "league": {"versions": 3, "past_games": 2, "past_win_rate": 0.5}}
    line = progress_line(progress_row(result))
    assert line.startswith("iter    7     500 env steps/s    5000 agent steps/s")
    assert "raw return   12.50" in line and "0.01" not in line
    assert "win radiant/dire/draw -/-/-" in line
    assert "vs random 0.00 (points 0.75, margin 4.2)" in line
    assert "trueskill 9.5" in line and "league 3 versions, past win 0.50 (2 games)" in line
    assert "per hero-min lane -3.00 death -0.25 gold 1.50" in line
    assert "ancients' health" not in line  # the full game: nothing to say
    result["schedule"] = {"ancient_hp_scale": 0.3, "gamma": 0.997}
    row = progress_row(result)
    assert row["ancient_hp_scale"] == 0.3 and progress_line(row).endswith("gamma 0.99700  ancients' health x0.30")


def test_the_row_carries_how_far_the_update_moved_the_policy():
    """metrics.csv's update columns come from the main module's learner results (RLlib's gradient-norm key)."""
    from training.progress import PROGRESS_COLUMNS, UPDATE_COLUMNS, progress_row
    learner = {"entropy_primary": 0.5, "entropy_offsets": 4.4, "approx_kl": 0.02, "clip_fraction": 0.12,
               "vf_explained_var": 0.4, "gradients_default_optimizer_global_norm": 3.5, "minibatches_applied": 3,
               "kl_stopped": 1.0, "grad_norm_policy": 0.7, "gradient_noise_cosine": 0.05, "advantage_attack": -0.2,
               "teacher_agreement_primary": 0.9}
    row = progress_row({"training_iteration": 1, "learners": {"main": learner}})
    assert {k: row[k] for k in UPDATE_COLUMNS if row[k] is not None} == {
        "entropy_primary": 0.5, "entropy_offsets": 4.4, "approx_kl": 0.02, "clip_fraction": 0.12,
        "vf_explained_var": 0.4, "grad_norm": 3.5, "minibatches_applied": 3, "kl_stopped": 1.0, "grad_norm_policy": 0.7,
        "gradient_noise_cosine": 0.05, "advantage_attack": -0.2, "teacher_agreement_primary": 0.9}
    assert {"grad_norm_value", "grad_norm_kickstart", "advantage_ability_1", "teacher_agreement_unit"} <= set(row)
    assert set(row) <= set(PROGRESS_COLUMNS)  # the CSV writer refuses a key outside its columns


def test_a_csv_with_older_columns_is_rewritten_with_the_new_ones_and_its_rows_kept(tmp_path):
    """A run resumed after an upgrade: its metrics.csv had other columns; the rows keep their values by name."""
    import csv
    from training import csv_files
    path = str(tmp_path / "metrics.csv")
    with open(path, "w") as f:
        f.write("iteration,entropy,gone\n1,2.5,x\n2,2.0,y\n")
    csv_files.append_csv_rows(path, ["iteration", "entropy", "grad_norm"], [{"iteration": 3, "grad_norm": 4.0}])
    csv_files.append_csv_rows(path, ["iteration", "entropy", "grad_norm"], [{"iteration": 4, "entropy": 1.0}])
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["iteration", "entropy", "grad_norm"]
    assert [(r["iteration"], r["entropy"], r["grad_norm"]) for r in rows] == [
        ("1", "2.5", ""), ("2", "2.0", ""), ("3", "", "4.0"), ("4", "1.0", "")]
    with pytest.raises(ValueError, match="unknown"):  # a key outside the columns is still an error
        csv_files.append_csv_rows(path, ["iteration", "entropy", "grad_norm"], [{"iteration": 5, "unknown": 1}])


def test_a_wall_clock_deadline_stops_a_run_and_nothing_before_it(monkeypatch):
    from training.run_config import RunStopper
    monkeypatch.setattr(RunStopper, "current", None)  # app.train.main sets it in this process (other tests)
    stop = run_config.validate({"stop": {"timestamp": 1_000_000}}).stop
    stopper = RunStopper(stop)
    assert not stopper("t", {"timestamp": 999_999, "training_iteration": 5})
    assert stopper("t", {"timestamp": 1_000_000, "training_iteration": 6})
    with pytest.raises(ValueError, match=r"stop\.wall"):
        run_config.validate({"stop": {"wall": 5}})
