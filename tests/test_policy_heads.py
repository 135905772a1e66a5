"""scripts/policy_heads.py: which primary actions a checkpoint picks and each head's part of its action's
entropy, on its own states."""
from __future__ import annotations

import json

import pytest

SHIPPED_1V1 = "models/hok_1v1_kickstart"


def test_the_shipped_1v1_agent_moves_and_attacks_and_its_entropy_parts_add_up(capsys):
    from scripts import policy_heads
    assert policy_heads.main([SHIPPED_1V1, "--time-limit", "30", "--opponent", "scripted_1"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    r = out["checkpoints"][SHIPPED_1V1]
    parts = {k: v for k, v in r["entropy"].items() if k != "action"}
    assert sorted(parts) == ["delay", "offsets", "primary", "unit"] and min(parts.values()) >= 0
    assert sum(parts.values()) == pytest.approx(r["entropy"]["action"], rel=1e-6)
    assert sum(r["primary"].values()) == pytest.approx(1.0, abs=1e-4) and r["steps"] > 0
    # the kickstarted student imitates scripted_3, which walks the lane and attacks (docs/results.md, "Learning to win")
    assert r["primary"]["move"] + r["primary"]["attack"] > 0.9 and r["primary"]["attack"] > 0.1
    assert r["entropy"]["offsets"] < 2.0  # trained offsets, far below a random walk's 2 ln 9 = 4.4


def test_an_unknown_opponent_is_refused_naming_the_allowed_agents(capsys):
    from scripts import policy_heads
    assert policy_heads.main([SHIPPED_1V1, "--opponent", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "--opponent" in err and "'random'" in err and "'scripted_3'" in err
    assert policy_heads.main([SHIPPED_1V1, "--mode", "3v3"]) == 2
    err = capsys.readouterr().err
    assert "--mode" in err and "'1v1'" in err and "'5v5'" in err and "'3v3'" in err
