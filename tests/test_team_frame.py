"""The team's frame (policies/model/team_frame.py, model.team_frame): on a point-symmetric game, the Radiant and the
Dire hero see mirror images, and a module in the team's frame gives them the same action logits, values and LSTM
states, with the offsets mirrored; a module in the map's frame does not."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from test_training_model import build_module

from moba.env.actions import N_OFFSETS
from moba.env.moba_env import MobaEnv
from moba.env.observation import (GLOBAL_IS_DIRE, HERO_TELEPORT_X, HERO_TELEPORT_Y, HERO_TELEPORTING,
                                  LANE_ASSIGNED_BOT, LANE_ASSIGNED_MID, LANE_ASSIGNED_TOP, UNIT_DISTANCE_TO_ME,
                                  UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_X, UNIT_Y)
from policies.model.five_module import FiveModelConfig
from policies.model.team_frame import to_team_frame

POSITION_COLUMNS = [UNIT_X, UNIT_Y, UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_DISTANCE_TO_ME]
SMALL = {"unit_hidden": 48, "hero_hidden": 40, "private_hidden": 24, "replica_size": 64, "lstm_size": 32}


def mirrored_game(mode, steps=60):
    """(env, the observations of the first Radiant and the first Dire hero over `steps` steps): the same heroes on both
    sides in evaluation mode without jitter, every hero moving by the mirrored offsets, so that the two sides stay
    mirror images (up to the rounding of the moves, under a map unit in 60 steps)."""
    n = 1 if mode == "1v1" else 5
    heroes = ("marksman", "blademaster", "marksman", "blademaster", "marksman")[:n]
    env = MobaEnv({"mode": mode, "seed": 3, "evaluation": True, "evaluation_jitter": False, "lineup": heroes * 2})
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    history = []
    for t in range(steps):
        history.append((obs["radiant_0"], obs["dire_0"]))
        ox, oy = rng.integers(0, N_OFFSETS, 2)
        move = {"primary": 1 if t % 3 else 0, "delay": 0, "target_unit": 0}
        obs, *_ = env.step({a: {**move, "offset_x": int(ox if a.startswith("radiant") else N_OFFSETS - 1 - ox),
                                "offset_y": int(oy if a.startswith("radiant") else N_OFFSETS - 1 - oy)}
                            for a in obs})
    return env, history


def batch_of(history):
    obs = {k: torch.as_tensor(np.stack([np.stack([h[side][k] for h in history]) for side in (0, 1)]))
           for k in history[0][0]}
    return obs


def test_the_two_sides_of_a_mirrored_game_look_alike_in_the_team_frame():
    env, history = mirrored_game("1v1")
    obs = batch_of(history)
    radiant, dire = ({k: v[i] for k, v in obs.items()} for i in (0, 1))
    assert (dire["global"][:, GLOBAL_IS_DIRE] == 1).all() and (radiant["global"][:, GLOBAL_IS_DIRE] == 0).all()
    assert (to_team_frame(obs)["global"][..., GLOBAL_IS_DIRE] == 0).all()
    # in the map's frame the two differ by the turn: positions, directions and the nearby map
    assert (radiant["units"][..., UNIT_X] - dire["units"][..., UNIT_X]).abs().max() > 1000
    turned = to_team_frame(obs)
    r, d = ({k: v[i] for k, v in turned.items()} for i in (0, 1))
    for k in r:
        if k == "units":  # the engine's moves near x and near 8,000 - x round apart: a map unit at most
            gap = (r[k] - d[k]).abs()
            assert gap[..., POSITION_COLUMNS].max() < 1.0 and gap.max(-1).values.max() < 1.0
            assert np.delete(gap.numpy(), POSITION_COLUMNS, axis=-1).max() < 1e-3
        elif k == "private_minimap":  # a unit exactly on a cell's edge falls in the cell above it on both sides
            assert (r[k] != d[k]).float().mean() < 0.002
        elif r[k].is_floating_point():
            assert (r[k] - d[k]).abs().max() < 1e-3, k
        else:
            assert torch.equal(r[k], d[k]), k
    # the Radiant rows and the empty unit rows are left as they were
    for k in obs:
        assert torch.equal(turned[k][0], obs[k][0]), k
    empty = obs["unit_valid"][1] == 0
    assert empty.any() and (turned["units"][1][empty] == 0).all()


def test_lanes_swap_top_and_bottom_and_the_previous_offsets_mirror_for_dire_only():
    _, history = mirrored_game("5v5", steps=2)
    obs = {k: v[:, -1:] for k, v in batch_of(history).items()}  # (2 sides, 1 step)
    obs["private_lanes"][..., :3] = torch.tensor([1.0, 0.0, 0.0])
    obs["private_prev_action"][..., :] = torch.tensor([1, 0, 0, 2, 7])
    obs["private_prev_action"][:, :, 0] = 0  # the first hero's: the all-zero start value
    turned = to_team_frame(obs)
    assert turned["private_lanes"][0, ..., LANE_ASSIGNED_TOP].eq(1).all()
    assert turned["private_lanes"][1, ..., LANE_ASSIGNED_BOT].eq(1).all()
    assert turned["private_lanes"][1, ..., [LANE_ASSIGNED_TOP, LANE_ASSIGNED_MID]].eq(0).all()
    assert turned["private_prev_action"][0, 0, 1:].tolist() == [[1, 0, 0, 2, 7]] * 4
    assert turned["private_prev_action"][1, 0, 1:].tolist() == [[1, 0, 0, 6, 1]] * 4
    assert turned["private_prev_action"][1, 0, 0].tolist() == [0, 0, 0, 0, 0]
    assert torch.equal(turned["units"][1][..., UNIT_DX_TO_ME], -obs["units"][1][..., UNIT_DX_TO_ME])
    valid = obs["unit_valid"][1] > 0
    assert torch.allclose(turned["units"][1][..., UNIT_Y][valid], 8000.0 - obs["units"][1][..., UNIT_Y][valid])


def test_the_turned_columns_of_units_and_teleports_and_nothing_else_change():
    _, history = mirrored_game("5v5", steps=3)
    obs = batch_of(history)  # (2 sides, 3 steps): side 1 is Dire
    obs["heroes"][..., HERO_TELEPORTING] = (torch.arange(obs["heroes"].shape[-2]) % 2).float()  # every other hero
    obs["heroes"][..., [HERO_TELEPORT_X, HERO_TELEPORT_Y]] = torch.tensor([1234.5, 6000.25])
    before = {k: v.clone() for k, v in obs.items()}
    turned = to_team_frame(obs)
    assert all(torch.equal(obs[k], before[k]) for k in obs)  # the inputs are left as they were
    units, valid = obs["units"], obs["unit_valid"] > 0
    expected = units.clone()
    for col, turn in ((UNIT_X, lambda c: 8000.0 - c), (UNIT_Y, lambda c: 8000.0 - c), (UNIT_DX_TO_ME, torch.neg),
                      (UNIT_DY_TO_ME, torch.neg)):
        expected[1, ..., col] = torch.where(valid[1], turn(units[1, ..., col]), units[1, ..., col])
    assert torch.equal(turned["units"], expected)  # Radiant's rows, empty rows and the other columns: the same
    heroes = obs["heroes"]
    expected = heroes.clone()
    moving = heroes[1, ..., HERO_TELEPORTING] > 0.5
    for col in (HERO_TELEPORT_X, HERO_TELEPORT_Y):
        expected[1, ..., col] = torch.where(moving, 8000.0 - heroes[1, ..., col], heroes[1, ..., col])
    assert torch.equal(turned["heroes"], expected)
    assert turned["heroes"][1, 0, 1, HERO_TELEPORT_X] == 8000.0 - 1234.5


@pytest.mark.parametrize("team_frame,offset_groups", [(True, False), (False, False), (True, True)])
def test_a_module_in_the_team_frame_plays_both_sides_alike(team_frame, offset_groups):
    """offset_groups: every group's offsets are turned back (model.offset_groups)."""
    env, history = mirrored_game("1v1")
    module = build_module(env, seed=1, model={**SMALL, "team_frame": team_frame, "offset_groups": offset_groups})
    obs = batch_of(history)
    module.update_normalizers(obs, None)
    g = torch.Generator().manual_seed(1)
    h, c = (0.1 * torch.randn(1, module.cfg.lstm_size, generator=g) for _ in range(2))
    state = {"h": h.expand(2, -1), "c": c.expand(2, -1)}  # the same starting state for both sides
    with torch.no_grad():
        out = module.forward_train({Columns.OBS: obs, Columns.STATE_IN: state})
        values = module.compute_values({Columns.OBS: obs, Columns.STATE_IN: state})
    dist = module.action_dist_cls.from_logits(out[Columns.ACTION_DIST_INPUTS])
    assert (dist.offset_group is not None) == offset_groups
    ox, oy = dist.offsets_by_primary()  # (2, T, P, 9)

    def gaps(steps):
        return {"primary": (dist.primary[0, steps] - dist.primary[1, steps]).abs().max(),
                "offset_x": (ox[0, steps] - ox[1, steps].flip(-1)).abs().max(),
                "offset_y": (oy[0, steps] - oy[1, steps].flip(-1)).abs().max(),
                "value": (values[0, steps] - values[1, steps]).abs().max()}
    first, every = max(gaps(slice(0, 1)).values()), max(gaps(slice(None)).values())
    if team_frame:  # the same up to the rounding of the moves (the first step: none)
        assert first < 1e-4 and every < 0.05, (gaps(slice(0, 1)), gaps(slice(None)))
        assert (out[Columns.STATE_OUT]["h"][0] - out[Columns.STATE_OUT]["h"][1]).abs().max() < 1e-3
    else:  # the map's frame: the two sides are two different inputs
        assert first > 1e-2, gaps(slice(0, 1))


def test_team_frame_is_a_boolean_model_setting():
    assert FiveModelConfig.from_dict({"team_frame": True}).team_frame is True
    assert FiveModelConfig.from_dict({}).team_frame is False
    with pytest.raises(ValueError, match="model config 'team_frame': must be true or false, got 1"):
        FiveModelConfig.from_dict({"team_frame": 1})


def test_radiant_rows_are_computed_as_in_the_maps_frame_in_5v5():
    """The same weights with and without the frame: the Radiant heroes' outputs are the same, the Dire heroes' not."""
    from test_training_model import played_game
    env, history = played_game("5v5", steps=150)
    agents = env.possible_agents
    obs = {k: torch.as_tensor(np.stack([np.stack([o[a][k] for o in history[:40]]) for a in agents]))
           for k in history[0][agents[0]]}
    state = {k: torch.zeros(len(agents), 32) for k in ("h", "c")}
    modules = {tf: build_module(env, seed=1, model={**SMALL, "team_frame": tf}) for tf in (False, True)}
    modules[True].load_state_dict({k: v.clone() for k, v in modules[False].state_dict().items()})
    logits = {}
    for team_frame, module in modules.items():
        module.update_normalizers({k: v[:5] for k, v in obs.items()}, None)  # statistics of Radiant's rows alone
        with torch.no_grad():
            logits[team_frame] = module.forward_train({Columns.OBS: obs, Columns.STATE_IN: state})[
                Columns.ACTION_DIST_INPUTS]
    radiant = [a.startswith("radiant") for a in agents]
    assert sum(radiant) == 5
    assert torch.equal(logits[True][:5], logits[False][:5])
    assert (logits[True][5:] - logits[False][5:]).abs().flatten(1).max(1).values.min() > 1e-2
