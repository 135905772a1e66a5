"""The team's frame: a Dire hero's observation turned 180 degrees around the map's centre, so that both sides look
like Radiant to the network, and the move offsets it outputs turned back (FiveModelConfig.team_frame).

The map is point-symmetric (moba/game/map.py: Dire's half is Radiant's turned by 180 degrees), and so is every game
rule, so the turn maps a Dire hero's situation onto the same situation seen from Radiant. Without it a network must
learn each side's directions apart: the scratch agents of 2026-11-26 learned to push only as Radiant (docs/results.md,
"The team's frame"). What the turn changes, for the rows of Dire heroes (``global`` column ``is_dire``):

- ``units``: x and y of every valid row become MAP_SIZE - x and MAP_SIZE - y; dx_to_me and dy_to_me change sign;
- ``heroes``: the teleport target likewise, while a hero is teleporting;
- ``private_minimap``: the 8 x 8 cells centred on the hero, turned by 180 degrees (both cell axes reversed);
- ``private_lanes``: the top and bottom lanes swap (the turn maps the physical top lane onto the bottom one);
- ``private_prev_action``: the previous action's offsets are mirrored (index i -> N_OFFSETS - 1 - i), but for the
  all-zero action every hero starts a game with (the env's start value, a no-op whose offsets are not read), which
  both sides see alike.

- ``global``: is_dire becomes 0 for every row: in the team's frame both sides are the same game.

Distances, health, time and the rest are the same seen from either side. The network's offset logits come out in
the team's frame, and ``flip_offsets`` turns a Dire row's back, so the action distribution, the sampled actions and
everything downstream (the env, the teacher's labels, the replays) stay in the map's frame.
"""
from __future__ import annotations

import torch

from moba.env.actions import ACTION_KEYS, N_OFFSETS
from moba.env.observation import (GLOBAL_IS_DIRE, HERO_TELEPORT_X, HERO_TELEPORT_Y, HERO_TELEPORTING, LANE_ASSIGNED_BOT,
                                  LANE_ASSIGNED_TOP, UNIT_DX_TO_ME, UNIT_DY_TO_ME, UNIT_X, UNIT_Y)
from moba.game.constants import MAP_SIZE

PREV_OFFSETS = [ACTION_KEYS.index("offset_x"), ACTION_KEYS.index("offset_y")]
# the turn writes each table's turned columns as one block (_turn_columns): the coordinates, then the directions
if (UNIT_X, UNIT_Y, UNIT_DX_TO_ME, UNIT_DY_TO_ME) != tuple(range(UNIT_X, UNIT_X + 4)) or \
        HERO_TELEPORT_Y != HERO_TELEPORT_X + 1:
    raise ImportError("team_frame: the observation's unit columns x, y, dx_to_me, dy_to_me and the hero's teleport x, "
                      "y must be adjacent, in that order (moba/env/observation.py)")


def is_dire(obs: dict) -> torch.Tensor:
    """(...,) bool: the rows that belong to a Dire hero."""
    return obs["global"][..., GLOBAL_IS_DIRE] > 0.5


def to_team_frame(obs: dict) -> dict:
    """The observations (tensors with any leading dims) with the Dire rows turned into Radiant's frame; the other keys
    and the Radiant rows are passed through unchanged. Returns a new dict; the inputs are not modified."""
    dire = is_dire(obs)
    if not bool(dire.any()):
        return obs  # every row Radiant's: is_dire is 0 already
    out = dict(obs)
    glob = obs["global"].clone()
    glob[..., GLOBAL_IS_DIRE] = 0.0
    out["global"] = glob
    units = obs["units"].clone()
    turned = dire.unsqueeze(-1) & (obs["unit_valid"] > 0)  # empty rows stay all zeros
    out["units"] = _turn_columns(units, turned, UNIT_X, UNIT_DY_TO_ME + 1, positions=2)
    heroes = obs["heroes"].clone()
    teleporting = dire.unsqueeze(-1) & (heroes[..., HERO_TELEPORTING] > 0.5)
    out["heroes"] = _turn_columns(heroes, teleporting, HERO_TELEPORT_X, HERO_TELEPORT_Y + 1, positions=2)
    mini = obs["private_minimap"]
    out["private_minimap"] = torch.where(dire[(...,) + (None,) * 4], mini.flip(-1, -2), mini)
    lanes = obs["private_lanes"]
    swapped = lanes.clone()
    swapped[..., LANE_ASSIGNED_TOP], swapped[..., LANE_ASSIGNED_BOT] = (lanes[..., LANE_ASSIGNED_BOT],
                                                                        lanes[..., LANE_ASSIGNED_TOP])
    out["private_lanes"] = torch.where(dire[(...,) + (None,) * 2], swapped, lanes)
    prev = obs["private_prev_action"].clone()
    mirror = dire.unsqueeze(-1) & (prev != 0).any(-1)
    for col in PREV_OFFSETS:
        prev[..., col] = torch.where(mirror, N_OFFSETS - 1 - prev[..., col], prev[..., col])
    out["private_prev_action"] = prev
    return out


def _turn_columns(x: torch.Tensor, rows: torch.Tensor, start: int, stop: int, positions: int) -> torch.Tensor:
    """Turns columns start..stop-1 of x's `rows` (a bool mask of x's leading dims) by 180 degrees around the map's
    centre, in place: the first `positions` columns are map coordinates (c -> MAP_SIZE - c), the rest directions
    (d -> -d). The other rows keep their values. One pass over the rows' block of adjacent columns: a
    torch.where per column read every row once per column (the 5v5 learner's unit table twice as slow)."""
    turned = rows.unsqueeze(-1).to(x.dtype)
    block = x[..., start:stop]
    block.mul_(1.0 - 2.0 * turned)  # -c on the turned rows, c * 1 on the others
    block[..., :positions].add_(turned * MAP_SIZE)  # MAP_SIZE - c; the others + 0
    return x


def flip_offsets(logits: torch.Tensor, dire: torch.Tensor) -> torch.Tensor:
    """Offset logits (N, ..., N_OFFSETS) of the team's frame -> the map's: a Dire row's reversed (offset i <-> -i)."""
    return torch.where(dire.reshape(*dire.shape, *(1,) * (logits.dim() - dire.dim())), logits.flip(-1), logits)
