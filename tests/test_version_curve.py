"""scripts/version_curve.py: every league snapshot (and the untrained network) replays the same evaluation games."""
from __future__ import annotations

import csv
import json

import pytest
import torch
import yaml
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from moba.env.moba_env import MobaEnv
from policies.model.five_module import FiveRLModule
from training.league_play import save_weights
from scripts import version_curve

TINY = {"lstm_size": 8, "unit_embed": 8, "hero_embed": 8, "global_embed": 4, "private_embed": 8, "replica_size": 16,
        "action_embed": 8, "categorical_embed": 4}


@pytest.fixture
def run(tmp_path):
    """A 1v1 run directory: run_config.yaml, one module checkpoint, snapshots at iterations 10, 20, 30 (the first
    two hold the same weights)."""
    env = MobaEnv({"mode": "1v1"})
    spec = RLModuleSpec(module_class=FiveRLModule, observation_space=env.observation_spaces["radiant_0"],
                        action_space=env.action_spaces["radiant_0"], model_config=TINY)
    torch.manual_seed(1)
    module = spec.build()
    trial = tmp_path / "run" / "PPO_x"
    module.save_to_path(str(trial / "checkpoint_000000"))
    same = module.get_state()
    torch.manual_seed(2)
    other = spec.build().get_state()
    for version, iteration, state in ((1, 10, same), (2, 20, same), (3, 30, other)):
        save_weights(state, str(trial / "league" / f"version_{version:05d}_iter_{iteration}.pt"))
    with open(tmp_path / "run" / "run_config.yaml", "w") as f:
        yaml.safe_dump({"name": "x", "env": {"mode": "1v1"}}, f)
    return tmp_path / "run"


def test_every_snapshot_replays_the_same_games(run, capsys):
    version_curve.main([str(run), "--games", "2", "--time-limit", "3", "--greedy"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    curve = out["curve"]
    assert [(r["version"], r["iteration"]) for r in curve] == [(0, 0), (1, 10), (2, 20), (3, 30)]
    # identical weights on the same (seeded, paired) games give identical results
    assert curve[1]["reward_margin_vs_random"] == curve[2]["reward_margin_vs_random"]
    assert all(r["game_minutes_vs_random"] == pytest.approx(3 / 60, rel=0.05) for r in curve)
    with open(run / "version_curve.csv") as f:
        assert [int(r["iteration"]) for r in csv.DictReader(f)] == [0, 10, 20, 30]


def test_every_k_keeps_the_last_snapshot(run, capsys):
    version_curve.main([str(run), "--games", "1", "--time-limit", "2", "--every", "2", "--greedy"])
    curve = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["curve"]
    assert [r["iteration"] for r in curve] == [0, 20, 30]


def test_a_run_without_snapshots_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no league snapshots"):
        version_curve.main([str(tmp_path)])
