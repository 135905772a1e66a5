"""scripts/ship_model.py: a shipped agent is a module checkpoint with a model card of measured win rates,
loadable by name as model:PATH. The card can take the learning benchmark's final evaluation of the same checkpoint."""
from __future__ import annotations

import json

import pytest
from test_kickstart import saved_module
from test_training_e2e import tiny_smoke


def bench_log(path, checkpoint, final):
    path.write_text("iter 1 ...\n" + json.dumps({"config": "tune_configs/x.yaml", "run": "x_bench", "checkpoint":
                                                  str(checkpoint), "final": final}) + "\n")
    return path


FINAL = {"scripted_3": {"games": 100, "wins": 7, "draws": 50, "losses": 43, "win_rate": 0.07,
                        "objective_win_rate": 0.31, "points_win_rate": 0.2, "win_rate_ci95": [0.03, 0.14]},
         "scripted_2": {"games": 20, "wins": 5, "draws": 15, "losses": 0, "win_rate": 0.25,  # an older benchmark's
                        "points_win_rate": 0.5, "win_rate_ci95": [0.11, 0.47]}}


def test_a_model_is_shipped_with_the_benchmarks_win_rates(tmp_path, monkeypatch):
    from policies.league.references import agent_maker
    from scripts import ship_model
    monkeypatch.setattr(ship_model, "MODELS_DIR", str(tmp_path / "models"))
    saved_module(tmp_path / "ckpt", tiny_smoke())
    log = bench_log(tmp_path / "bench.log", tmp_path / "ckpt", FINAL)
    assert ship_model.main([str(tmp_path / "ckpt"), "--name", "tiny", "--bench-log", str(log)]) == 0
    card = json.loads((tmp_path / "models" / "tiny" / "card.json").read_text())
    assert card["mode"] == "1v1" and card["win_rates"] == FINAL and card["eval_seed"] == 1_000_000
    page = (tmp_path / "models" / "tiny" / "README.md").read_text()
    assert "| `scripted_3` | 100 | 7 | 50 | 43 | 7% (0.03-0.14) | 31% | 20% |" in page
    assert "| `scripted_2` | 20 | 5 | 15 | 0 | 25% (0.11-0.47) | - | 50% |" in page
    agent = agent_maker(f"model:{tmp_path / 'models' / 'tiny'}")(0)  # it plays by name
    assert hasattr(agent, "act")


def test_a_benchmark_log_of_another_checkpoint_is_refused(tmp_path, monkeypatch):
    from scripts import ship_model
    monkeypatch.setattr(ship_model, "MODELS_DIR", str(tmp_path / "models"))
    saved_module(tmp_path / "ckpt", tiny_smoke())
    log = bench_log(tmp_path / "bench.log", tmp_path / "other", FINAL)
    with pytest.raises(SystemExit, match="not of"):
        ship_model.main([str(tmp_path / "ckpt"), "--name", "tiny", "--bench-log", str(log)])
