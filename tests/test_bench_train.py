"""scripts/bench_train.py: all-in training as a fraction of the engine, and the engine's figure from bench_env.py."""
from __future__ import annotations

import json

import pytest
import yaml

from scripts.bench_train import (DEFAULT_CONFIGS, LEARNER_UPDATES, TRAINING_CORES, bracket_engine, classic_unsupported,
                                 config_fractions, config_label, engine_fractions, load, measure_engine,
                                 measure_learner)


def test_training_is_reported_as_a_fraction_of_the_engine_on_the_same_cores():
    figures = {"1v1_trained_agent_steps_per_s": 3000.0, "1v1_classic_trained_agent_steps_per_s": 1500.0,
               "5v5_trained_agent_steps_per_s": 2000.0}
    out = engine_fractions(figures, {"1v1": 10000.0, "5v5": 20000.0, "3v3": 1.0})
    assert TRAINING_CORES == 2
    assert out == {"1v1_engine_decisions_per_s": 10000.0, "1v1_batched_fraction_of_engine": 0.15,
                   "1v1_classic_fraction_of_engine": 0.075, "5v5_engine_decisions_per_s": 20000.0,
                   "5v5_batched_fraction_of_engine": 0.05}


def test_every_config_is_reported_by_its_name_two_of_one_mode_included():
    details = {"hok_1v1_kickstart": {"mode": "1v1", "batched": {"trained_agent_steps_per_s": 3000.0}},
               "hok_1v1_top_rung": {"mode": "1v1", "batched": {"trained_agent_steps_per_s": 9000.0}},
               "five_5v5_kickstart": {"mode": "5v5", "batched": {"trained_agent_steps_per_s": 2400.0}},
               "learner_only": {"mode": "1v1"}}
    out = config_fractions(details, {"1v1": 20000.0, "5v5": 10000.0})
    assert list(out) == ["hok_1v1_kickstart", "hok_1v1_top_rung", "five_5v5_kickstart"]  # not the learner-only one
    assert [out[k]["fraction_of_engine"] for k in out] == [0.075, 0.225, 0.12]
    assert [out[k]["target"] for k in out] == [0.25, 0.25, 0.12]
    assert out["hok_1v1_top_rung"] == {"mode": "1v1", "trained_agent_steps_per_s": 9000.0, "fraction_of_engine": 0.225,
                                       "target": 0.25}
    assert [config_label(p) for p in DEFAULT_CONFIGS] == ["hok_1v1_kickstart", "hok_1v1_top_rung",
                                                           "five_5v5_kickstart"]
    # a config bracketed by its own engine figures is taken against their mean, and says which figure it used
    details["hok_1v1_top_rung"]["engine_around"] = {"before": 16000.0, "after": 14000.0, "mean": 15000.0,
                                                    "spread": -0.125}
    out = config_fractions(details, {"1v1": 20000.0, "5v5": 10000.0})
    top = out["hok_1v1_top_rung"]
    assert top["fraction_of_engine"] == 0.3 and top["engine_decisions_per_s"] == 15000.0
    assert out["hok_1v1_kickstart"]["fraction_of_engine"] == 0.075  # the others: the run's bracket


def test_the_figures_are_those_of_the_policy_update_without_evaluation_or_warm_up():
    cfg = load("tune_configs/hok_1v1_top_rung.yaml", [])
    assert cfg.init.value_warmup_iterations == 0 and cfg.evaluation.interval == 0
    with open("tune_configs/hok_1v1_top_rung.yaml") as f:
        own = yaml.safe_load(f)["resources"]["num_envs_per_env_runner"]
    assert own > 1 and cfg.resources.num_envs_per_env_runner == own  # the config's own games per runner


def test_the_engine_figure_comes_from_bench_env():
    engine = measure_engine(["1v1"], steps=30)
    assert set(engine) == {"1v1"} and isinstance(engine["1v1"], float) and engine["1v1"] > 100


def test_the_engine_on_every_core_is_the_sum_of_one_pinned_process_per_core():
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "scripts/bench_env.py", "--steps", "30", "--warmup", "5", "--modes", "1v1",
                          "--all-cores"], capture_output=True, text=True, check=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["cores"] == len(os.sched_getaffinity(0)) == len(figures["1v1"]["per_core"])
    assert figures["1v1"]["env_decisions_per_s"] == pytest.approx(sum(figures["1v1"]["per_core"]), abs=0.5)
    assert min(figures["1v1"]["per_core"]) > 100
    bad = subprocess.run([sys.executable, "scripts/bench_env.py", "--cpu", "4096"], capture_output=True, text=True)
    assert bad.returncode != 0 and "--cpu: 4096 is not a CPU this process may run on" in bad.stderr


def test_a_config_the_classic_runner_cannot_run_is_named_with_the_reason():
    assert classic_unsupported("tune_configs/smoke.yaml", []) is None
    reason = classic_unsupported("tune_configs/hok_1v1_kickstart.yaml", [])
    assert "batched env runner" in reason and "'classic'" in reason


def test_the_engine_figure_is_the_mean_of_its_measurements_before_and_after_training():
    bracket = bracket_engine({"1v1": 10000.0, "5v5": 16000.0}, {"1v1": 12000.0, "5v5": 12000.0, "3v3": 1.0})
    assert bracket == {"1v1": {"before": 10000.0, "after": 12000.0, "mean": 11000.0, "spread": 0.2},
                       "5v5": {"before": 16000.0, "after": 12000.0, "mean": 14000.0, "spread": -0.25}}


def test_the_learner_figure_repeats_updates_with_the_kl_stop_off():
    from ray.tune.registry import register_env

    from training.algorithm import ENV_NAME, make_training_env
    register_env(ENV_NAME, make_training_env)
    cfg = load("tune_configs/smoke.yaml", ["ppo.target_kl=1e-9"])  # a stop that would end every update at once
    out = measure_learner(cfg, min_seconds=0.0)
    assert out["target_kl"] == 0.0 and out["updates"] == LEARNER_UPDATES == 3
    assert out["rows"] >= 600 and out["epochs"] == cfg.ppo.num_epochs
