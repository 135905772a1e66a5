"""scripts/bench_network_parts.py: the minibatch is sequences of the module's unroll length, and each part's step runs
backward through that part alone (its own parameters get gradients, the others' none)."""
from __future__ import annotations

import pytest
import torch
from test_training_model import build_module

from moba.env.moba_env import MobaEnv
from scripts.bench_network_parts import (NUMBERED, PARTS, lstm_flops, matmul_gflops, measure, measure_in_turn,
                                         minibatch, part_flops, part_steps, with_model_config)

OWN = {"units": "unit_mlp.0.weight", "team": "hero_mlp.0.weight", "lstm": "lstm.weight_hh_l0",
       "heads": "action_query.weight"}


def test_the_minibatch_is_whole_sequences_of_the_unroll_length():
    module = build_module(MobaEnv({"mode": "1v1"}))
    obs = minibatch(module, rows=100, seed=0, steps=80)
    b, t = obs["global"].shape[:2]
    assert t == module.cfg.max_seq_len and b * t >= 100 and b == -(-100 // t)
    assert set(obs) == set(module.observation_space.spaces)
    heroes = obs["me"].shape[-1] * 2
    # window-major: the first sequences are every hero's over the same steps (the same game time)
    times = obs["global"][:heroes, 0, 0]
    assert (times == times[0]).all() and obs["global"][heroes, 0, 0] > times[0]


def test_each_part_runs_backward_through_its_own_parameters_only():
    module = build_module(MobaEnv({"mode": "1v1"}))
    module.train()
    obs = minibatch(module, rows=64, seed=0, steps=80)
    steps = part_steps(module, obs)
    assert set(steps) == set(PARTS)
    params = dict(module.named_parameters())
    for part in PARTS:
        module.zero_grad(set_to_none=True)
        steps[part]()
        with_grad = {name for name in OWN.values() if params[name].grad is not None}
        assert with_grad == (set(OWN.values()) if part == "whole" else {OWN[part]}), part
    per_row = measure(module, obs, rounds=1)
    assert set(per_row) == set(PARTS) and all(v > 0 for v in per_row.values())


def test_model_config_gives_a_fresh_network_of_that_config_with_the_statistics():
    module = build_module(MobaEnv({"mode": "5v5"}))
    obs = minibatch(module, rows=64, seed=0, steps=40)
    module.update_normalizers(obs, None)
    team = with_model_config(module, ["team_unit_table=true", "unit_hidden=24"])
    assert team.cfg.team_unit_table and team.unit_mlp[0].out_features == 24 and not module.cfg.team_unit_table
    assert torch.equal(team.norm["units"].mean, module.norm["units"].mean)
    team.train()
    steps = part_steps(team, obs)
    team.zero_grad(set_to_none=True)
    steps["heads"]()
    assert team.unit_key_hero.weight.grad is not None  # the hero columns' keys are in the heads' part
    both = measure_in_turn({"hero": module, "team": team}, obs, rounds=2)
    assert set(both) == {"hero", "team"}
    assert all(set(v) == {*PARTS, NUMBERED} and min(v.values()) > 0 for v in both.values())  # 5v5: the numbered pass
    grads = []
    for part in ("whole", NUMBERED):  # the same pass, its rows grouped by number
        team.zero_grad(set_to_none=True)
        steps[part]()
        grads.append(team.unit_key_hero.weight.grad.clone())
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-5, atol=1e-7)
    for bad, match in (("team_unit_table", "is not KEY=VALUE"), ("unit_width=3", "unknown key.*unit_width"),
                       ("team_unit_table=2", "must be true or false")):
        with pytest.raises(ValueError, match=match):
            with_model_config(module, [bad])


def test_flops_count_every_part_and_the_lstm_from_its_shapes():
    """--flops: the LSTM's count is its gate products (torch's counter sees none of the CPU LSTM), and the parts'
    counts add up to about the whole network's (the team's frame and the glue are the whole's alone)."""
    module = build_module(MobaEnv({"mode": "1v1"}))
    module.train()
    obs = minibatch(module, rows=64, seed=0, steps=80)
    flops = part_flops(module, obs)
    h, i = module.lstm.hidden_size, module.lstm.input_size
    assert lstm_flops(module.lstm) == 3 * 2 * 4 * h * (i + h)
    assert flops["lstm"] == pytest.approx(lstm_flops(module.lstm))
    parts = sum(flops[name] for name in PARTS if name != "whole")
    assert min(flops.values()) > 0 and parts * 0.9 <= flops["whole"] <= parts * 1.3
    assert matmul_gflops(threads=1, size=128, rounds=2) > 0.1
