"""The typed run settings (training/settings.py): what they build from a raw run config is what the untyped
run_config.validate gave before them, and a bad config fails with the same message naming the key.

tests/settings_before.json holds what that validate (training/run_config.py of commit 831dae3) returned for these
inputs (the repository's path as <ROOT>): the shipped configs, an empty one, --set overrides, and the error message
of each bad config below. Since then it pins the settings: a deliberate change to a default, a shipped config or a
message is written into it with `python tests/test_settings.py --pin`, and its diff reviewed with the change."""
from __future__ import annotations

import copy
import dataclasses
import glob
import json
import os

import pytest
import yaml

from training import run_config
from training.settings import (CheckpointSettings, CurriculumSettings, EvaluationSettings, InitSettings,
                               LeagueSettings, OpponentSettings, PPOSettings, ResourceSettings, RewardSettings,
                               RunSettings, TrueSkillSettings, set_key)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(glob.glob(os.path.join(ROOT, "tune_configs", "*.yaml")))
SMOKE = os.path.join(ROOT, "tune_configs", "smoke.yaml")
BEFORE = os.path.join(ROOT, "tests", "settings_before.json")
OVERRIDES = ["ppo.num_epochs=2", "env.mode=5v5", "reward.zero_sum=false", "ppo.dual_clip=3", "seed=7",
             "evaluation.opponents=[random, scripted]", "schedules.lr=1.0e-4",
             "schedules.team_spirit={unit: env_steps, points: [[0, 0.1], [1000, 0.9]]}",
             "opponents.curriculum={share: 0.5, demote_at: 0.1}", "stop={training_iteration: 5}"]


def before(*keys):
    """What the untyped validate gave (tests/settings_before.json), the repository's path put back."""
    with open(BEFORE) as f:
        value = json.loads(f.read().replace("<ROOT>", ROOT))
    for k in keys:
        value = value[k]
    return value


def raw_of(path: str) -> dict:
    with open(path) as f:
        return yaml.safe_load(f) or {}


def message(build, raw) -> str:
    with pytest.raises(ValueError) as e:
        build(copy.deepcopy(raw))
    return str(e.value)


@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_every_shipped_config_gives_what_validate_gave(path):
    raw = raw_of(path)
    settings = RunSettings.from_dict(copy.deepcopy(raw))
    assert settings.to_dict() == before("configs", os.path.basename(path))
    assert RunSettings.from_dict(settings.to_dict()) == settings  # a validated config is itself valid
    assert settings.name == raw["name"]


def test_the_sweeps_are_among_the_configs():
    sweeps = [p for p in CONFIGS if raw_of(p).get("sweep")]
    assert len(sweeps) >= 2
    s = RunSettings.from_dict(raw_of(os.path.join(ROOT, "tune_configs", "sweep_hok_1v1.yaml")))
    assert s.sweep == {"schedules.lr": [3.0e-4, 1.0e-3], "schedules.gae_horizon_s": [10.0, 44.4]}
    assert s.opponents.curriculum.ladder == ("random", "scripted_1", "scripted_2", "scripted_3")


def test_an_empty_config_is_the_defaults():
    s = RunSettings.from_dict({})
    assert s.to_dict() == before("empty")
    assert s.ppo == PPOSettings() and s.ppo.clip_param == 0.2 and s.ppo.gae_lambda == 0.95  # Five Table 2
    assert s.league == LeagueSettings() and s.league.past_fraction == 0.2  # Five app. N
    assert s.reward == RewardSettings() and s.resources == ResourceSettings()
    assert s.evaluation == EvaluationSettings() and s.checkpoint == CheckpointSettings()
    assert s.opponents == OpponentSettings() and s.opponents.curriculum == CurriculumSettings()
    assert s.init == InitSettings()
    assert s.trueskill.references.endswith(os.path.join("tune_configs", "references_5v5.json"))  # EnvConfig.mode
    assert s.stop == {"training_iteration": 10}
    assert s.schedules["team_spirit"] == {"unit": "iterations", "points": [[0.0, 0.3]]}
    assert s.frameskip == 4


def test_settings_are_frozen_and_to_dict_is_a_copy():
    s = RunSettings.from_dict(raw_of(SMOKE))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.ppo.clip_param = 0.3
    d = s.to_dict()
    d["ppo"]["clip_param"] = 0.3
    d["evaluation"]["opponents"].append("scripted")
    d["schedules"]["lr"]["points"][0][1] = 1.0
    assert s.ppo.clip_param == 0.2 and s.evaluation.opponents == ("random",)
    assert s.schedules["lr"]["points"][0][1] == 3e-4
    assert isinstance(s.to_dict()["opponents"]["curriculum"]["ladder"], list)  # YAML's form


def test_each_section_builds_on_its_own_naming_its_key():
    assert PPOSettings.from_dict({"dual_clip": 3}).dual_clip == 3
    with pytest.raises(ValueError, match=r"^config 'ppo\.clip_param': must be > 0, got -1$"):
        PPOSettings.from_dict({"clip_param": -1})
    with pytest.raises(ValueError, match=r"^config 'opponents\.curriculum\.window': must be >= 1, got 0$"):
        CurriculumSettings.from_dict({"share": 0.5, "window": 0})
    with pytest.raises(ValueError, match=r"'league\.slots'"):
        LeagueSettings.from_dict({"slots": 0})
    with pytest.raises(ValueError, match=r"'resources\.env_runner'.*\['batched', 'classic'\]"):
        ResourceSettings.from_dict({"env_runner": "fast"})
    with pytest.raises(ValueError, match=r"^config 'ppo\.target_kl': must be >= 0 \(0: no early stop\), got -0\.1$"):
        PPOSettings.from_dict({"target_kl": -0.1})
    with pytest.raises(ValueError, match=r"^config 'ppo\.diagnostics_steps': must be >= 1, got 0$"):
        PPOSettings.from_dict({"diagnostics_steps": 0})
    with pytest.raises(ValueError, match=r"'ppo\.target_kl': must be float, got None"):
        PPOSettings.from_dict({"target_kl": None})
    with pytest.raises(ValueError, match=r"'ppo\.staleness'.*num_env_runners >= 1"):
        PPOSettings.from_dict({"staleness": 1}).check_resources(ResourceSettings(num_env_runners=0))
    with pytest.raises(ValueError, match=r"^config 'ppo\.win_advantage_coeff': must be >= 0 \(0: off\), got -1\.0$"):
        PPOSettings.from_dict({"win_advantage_coeff": -1.0})
    with pytest.raises(ValueError, match=r"^config 'ppo\.win_head_lr_factor': must be > 0 \(1: the scheduled "):
        PPOSettings.from_dict({"win_head_lr_factor": 0.0})
    with pytest.raises(ValueError, match=r"'ppo\.win_advantage_coeff'.*env_runner: batched.*'classic'"):
        PPOSettings.from_dict({"win_advantage_coeff": 1.0}).check_resources(ResourceSettings(env_runner="classic"))
    league = LeagueSettings.from_dict({"enabled": True, "past_fraction": 0.5})
    with pytest.raises(ValueError, match=r"^config 'opponents': .* sum to 1\.100"):
        OpponentSettings.from_dict({"fixed": {"random": 0.6}}, league=league)
    opp = OpponentSettings.from_dict({"fixed": {"random": 0.3}}, league=league)
    assert opp.shares(league) == pytest.approx({"league": 0.5, "random": 0.3, "self": 0.2})
    assert TrueSkillSettings.from_dict({}, mode="5v5").references.endswith("references_5v5.json")


def refs_file(tmp_path, rule):
    path = tmp_path / "refs.json"
    path.write_text(json.dumps({"mode": "5v5", **({"time_limit_outcome": rule} if rule else {}),
                                "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0}}}))
    return str(path)


BAD = [  # (dotted key, value) set on smoke.yaml; taken from tests/test_training_config.py and the checks' branches
    ("learning_rate", 0.1), ("name", ""), ("name", "a/b"), ("seed", 1.5), ("seed", True),
    ("env.mode", "3v3"), ("env.colour", "red"), ("env.remote", 8000), ("env.timeout_s", 0.0),
    ("reward.zero_sum", "yes"), ("reward.shaped", True), ("reward", [1]),
    ("model.lstm_units", 64), ("model.lstm_size", 0),
    ("ppo", [1, 2]), ("ppo.lr", 0.1), ("ppo.num_epochs", "two"), ("ppo.num_epochs", 0), ("ppo.gae_lambda", 1.5),
    ("ppo.adam_beta1", -0.1), ("ppo.adam_beta2", 1.0), ("ppo.clip_param", 0.0), ("ppo.clip_param", -1),
    ("ppo.dual_clip", 0.5), ("ppo.dual_clip", True), ("ppo.entropy_bonus", "primary"), ("ppo.minibatch_size", 10**6),
    ("ppo.staleness", 2), ("ppo.kickstart_params_floor", 0.0), ("ppo.kickstart_class_weight_power", -0.5),
    ("schedules", [0.1]), ("schedules.gamma", 0.99), ("schedules.team_spirit", 1.2),
    ("schedules.team_spirit", {"points": [[0, 0.3], [10, 1.5]]}), ("schedules.gae_horizon_s", 0.0),
    ("schedules.team_spirit", {"points": [[1, 0.3], [10, 0.5]]}), ("schedules.team_spirit", {"unit": "minutes",
                                                                                            "points": [[0, 0.3]]}),
    ("schedules.team_spirit", "high"),
    ("resources.num_envs_per_env_runner", 0), ("resources.learner_threads", -1), ("resources.num_gpus_per_learner", -1),
    ("resources.env_runner", "fast"), ("resources.autoscaling", 1),
    ("evaluation.opponents", ["random", "alphastar"]), ("evaluation.opponents", "random"),
    ("evaluation.replay_every", -1),
    ("trueskill.cpu_share", 0.0), ("trueskill.cpu_share", 1.5), ("trueskill.time_limit_outcome", "tiebreak"),
    ("trueskill.every", -1), ("trueskill.games", 0), ("trueskill.time_limit_s", -1.0),
    ("trueskill.references", "/no/such/refs.json"),
    ("league.time_limit_outcome", "coin"), ("league.past_fraction", 1.5), ("league.eta", -0.1),
    ("league.snapshot_every", 0),
    ("opponents.fixed", ["random"]), ("opponents.fixed", {"self": 0.5}), ("opponents.fixed", {"nobody": 0.5}),
    ("opponents.fixed", {"random": 1.5}), ("opponents.fixed", {"random": True}),
    ("opponents.time_limit_outcome", "coin"),
    ("opponents.curriculum", {"share": 0.5, "ladder": ["random", "scripted_9"]}),
    ("opponents.curriculum", {"share": 0.5, "ladder": []}),
    ("opponents.curriculum", {"share": 0.5, "promote_at": 0.0}),
    ("opponents.curriculum", {"share": 0.5, "demote_at": 0.8}),
    ("opponents.curriculum", {"share": 0.5, "demote_at": "low"}),
    ("opponents.curriculum", {"share": 0.5, "window": 0}),
    ("opponents.curriculum", {"share": 0.5, "demote": 0.1}),
    ("opponents.curriculum", {"share": 1.5}),
    ("opponents.curriculum", {"share": 0.9}),  # with the fixed agents below: the shares sum above 1
    ("init.checkpoint", "/no/such/checkpoint"), ("init.teacher", "scripted_9"), ("init.restore", "/no/such/dir"),
    ("init.lr_hold_iterations", -1), ("init.lr_hold_lr", 2.0), ("init.teacher", 5),
    ("schedules.kickstart_coeff", 0.5),  # no teacher
    ("stop", [1]), ("stop.episodes", 3), ("stop.training_iteration", -1), ("stop.time_total_s", True),
    ("checkpoint.frequency", 1.5), ("checkpoint.every", 3), ("checkpoint.frequency", -1), ("checkpoint.num_to_keep", 0),
    ("storage_path", ""), ("storage_path", 5),
    ("sweep", [1]), ("sweep.schedules.team_spirit", [0.1, 2.0]), ("sweep.ppo.num_epochs", [1, 2]),
    ("sweep.reward.zero_sum", [True]), ("sweep.lr", [1]), ("sweep.ppo.dual_clip", [0.5]), ("sweep.env.mode", []),
    ("sweep.ppo.kickstart_params_floor", [0.0]),
]


def bad_id(dotted, value) -> str:
    return f"{dotted}={value!r}"


def bad_raw(dotted, value) -> dict:
    raw = raw_of(SMOKE)
    if dotted == "opponents.curriculum" and value == {"share": 0.9}:
        set_key(raw, "opponents.fixed", {"random": 0.2})
    if dotted.startswith("sweep."):
        raw["sweep"] = {dotted[len("sweep."):]: value}
    elif "." not in dotted:
        raw[dotted] = value
    else:
        set_key(raw, dotted, value)
    return raw


@pytest.mark.parametrize("dotted,value", BAD, ids=[bad_id(k, v) for k, v in BAD])
def test_a_bad_config_fails_with_the_message_of_validate(dotted, value):
    expected = before("bad", bad_id(dotted, value))
    assert message(RunSettings.from_dict, bad_raw(dotted, value)) == expected
    parts = dotted.removeprefix("sweep.").split(".")
    assert parts[-1] in expected or parts[0] in expected, expected  # the message names the key


ACROSS = [  # changes to smoke.yaml that break more than one section, or one section against another
    {"resources.num_env_runners": 0, "ppo.staleness": 1},
    {"resources.env_runner": "classic", "ppo.staleness": 1},
    {"resources.env_runner": "classic", "opponents.fixed": {"random": 0.5}},
    {"resources.env_runner": "classic", "init.teacher": "scripted", "schedules.kickstart_coeff": 1.0},
    {"league.enabled": True, "league.past_fraction": 0.5, "opponents.fixed": {"random": 0.6}},
    {"init.restore": ROOT, "init.checkpoint": ROOT},  # no algorithm_state.pkl in the repository root
    {"ppo.clip_param": 0.0, "resources.env_runner": "fast", "stop.episodes": 3},  # several: the first one wins
    {"resources.env_runner": "fast", "ppo.staleness": 2},
]


def across_raw(changes: dict) -> dict:
    raw = raw_of(SMOKE)
    for k, v in changes.items():
        set_key(raw, k, v)
    return raw


@pytest.mark.parametrize("i", range(len(ACROSS)))
def test_errors_across_sections_come_in_the_same_order(i):
    assert message(RunSettings.from_dict, across_raw(ACROSS[i])) == before("across", i)


def test_the_trueskill_references_must_be_rated_under_the_runs_rule(tmp_path):
    raw = {"trueskill": {"every": 5, "references": refs_file(tmp_path, None), "time_limit_outcome": "points"}}
    msg = message(RunSettings.from_dict, raw)
    assert msg.startswith("config 'trueskill.time_limit_outcome': ") and "rated with 'draw'" in msg
    raw["trueskill"]["references"] = refs_file(tmp_path, "points")
    assert RunSettings.from_dict(raw).trueskill.references == str(tmp_path / "refs.json")


def test_paths_are_made_absolute_and_the_teacher_follows_the_kickstart(tmp_path, monkeypatch):
    ckpt = tmp_path / "module"
    ckpt.mkdir()
    monkeypatch.chdir(tmp_path)
    raw = {"init": {"checkpoint": "module"}, "schedules": {"kickstart_coeff": 0.5}}
    s = RunSettings.from_dict(copy.deepcopy(raw))
    assert s.init.checkpoint == s.init.teacher == str(ckpt)
    off = RunSettings.from_dict({"init": {"checkpoint": "module"}})
    assert off.init.teacher is None and off.init.checkpoint == str(ckpt)
    agent = RunSettings.from_dict({"init": {"teacher": "scripted"}, "schedules": {"kickstart_coeff": 0.5}})
    assert agent.init.teacher == "scripted"


def test_set_overrides_give_the_same_settings():
    s = run_config.load(SMOKE, OVERRIDES)
    assert s.to_dict() == before("overrides")
    assert s.ppo.num_epochs == 2 and s.ppo.dual_clip == 3 and s.reward.zero_sum is False and s.seed == 7
    assert s.evaluation.opponents == ("random", "scripted") and s.opponents.curriculum.demote_at == 0.1
    assert s.env["mode"] == "5v5" and s.stop == {"training_iteration": 5}
    assert s.initial_schedule_values()["team_spirit"] == pytest.approx(0.1)


def test_the_settings_travel_in_an_algorithm_config_and_come_back_once_per_config(tmp_path):
    from types import SimpleNamespace

    from training.settings import SETTINGS_KEY, run_settings
    s = RunSettings.from_dict(raw_of(os.path.join(ROOT, "tune_configs", "hok_1v1_curriculum.yaml")))
    assert RunSettings.from_validated(s.to_dict()) == s
    class Config:  # an AlgorithmConfig's stand-in
        learner_config_dict = {SETTINGS_KEY: s.to_dict()}
    config = Config()
    back = run_settings(config)
    assert back == s and run_settings(config) is back  # rebuilt once
    config.learner_config_dict = {SETTINGS_KEY: {**s.to_dict(), "seed": 5}}  # another dict: rebuilt
    assert run_settings(config).seed == 5
    # rebuilt without checks: a path the driver checked need not exist where the learner runs
    d = s.to_dict()
    d["init"]["checkpoint"] = str(tmp_path / "elsewhere")
    assert RunSettings.from_validated(d).init.checkpoint == str(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="build_algo_config"):
        run_settings(SimpleNamespace(learner_config_dict={}))
    assert run_settings(SimpleNamespace(learner_config_dict={SETTINGS_KEY: s.to_dict()})) == s  # no weak reference


def snapshot() -> dict:
    """What tests/settings_before.json holds, from the settings as they are now (the repository's path as <ROOT>)."""
    def error_of(raw):
        try:
            RunSettings.from_dict(raw)
        except ValueError as e:
            return str(e)
        raise AssertionError("a bad config validated")
    value = {"across": [error_of(across_raw(c)) for c in ACROSS],
             "bad": {bad_id(k, v): error_of(bad_raw(k, v)) for k, v in BAD},
             "configs": {os.path.basename(p): RunSettings.from_dict(raw_of(p)).to_dict() for p in CONFIGS},
             "empty": RunSettings.from_dict({}).to_dict(), "overrides": run_config.load(SMOKE, OVERRIDES).to_dict()}
    return json.loads(json.dumps(value).replace(ROOT, "<ROOT>"))


if __name__ == "__main__" and __import__("sys").argv[1:] == ["--pin"]:
    with open(BEFORE, "w") as f:
        json.dump(snapshot(), f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {BEFORE}")
