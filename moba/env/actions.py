"""The action space (Five app. F, Table 5), the action filters that build the masks, and the decoder that turns an
agent's action into an engine order.

An action is a Dict of five Discrete parameters: ``primary`` (what to do), ``delay`` (the tick inside the
frameskip, app. L), ``target_unit`` (a row of the observation's unit table), ``offset_x`` and ``offset_y`` (-4..4
steps). The primary action's target type (Table 5) decides which parameters are read; the rest are ignored. A
masked or invalid choice is a no-op, never an error. Out-of-range values are rejected by ``validate_actions``.
"""
from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces
from numba import njit

from moba.game.abilities import (TARGET_TYPE_READS_UNIT, TT_POINT, TT_TELEPORT, TT_UNIT, TT_UNIT_OFFSET, TT_WARD,
                                 UK_ALLY, UK_ATTACK, UK_ENEMY, UK_NONE, UK_TELEPORT)
from moba.game.constants import BUILDING_TYPES, N_DELAYS, SHRINE_RADIUS, UT_HERO, UT_SHRINE
from moba.game.items import ITEM_ACTIONS, ITEMS, item_id
from moba.game.kernels import alive, buyback_cost, can_attack, can_target_spell, dist
from moba.game.state import (F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_MREGEN_T, F_REGEN_T, F_SHRINE_CD, F_STUN_T, F_TP_T,
                             F_X, F_Y, G_BB_CD, G_CD0, G_GOLD, G_ICD0, GF_TIME, H_AB0, H_CH0, H_IT0, H_LEVEL, H_UNIT,
                             I_ALIVE, I_TEAM, I_TYPE, INVENTORY, OK_ABILITY, OK_ATTACK, OK_BUYBACK, OK_ITEM, OK_MOVE,
                             OK_SHRINE, P_ACTIVE, P_ARG, P_KIND, P_TICK, P_UNIT, P_X, P_Y)
from moba.game.tables import A_MANA, A_PASSIVE, A_TT, A_UK, ABILITIES_PER_HERO, IS_CONSUMABLE

# ---- primary actions -------------------------------------------------------------------------------------------------
A_NOOP, A_MOVE, A_ATTACK = 0, 1, 2
A_ABILITY0 = 3  # abilities 1-4: 3..6
A_ITEM0 = A_ABILITY0 + ABILITIES_PER_HERO  # item actions, in ITEM_ACTIONS order: 7..13
# the consumables' item actions (the need filters below, the scripted bot)
A_SALVE, A_CLARITY, A_TP = (A_ITEM0 + ITEM_ACTIONS.index(n) for n in ("healing_salve", "clarity", "town_portal_scroll"))
A_BUYBACK = A_ITEM0 + len(ITEM_ACTIONS)
A_SHRINE = A_BUYBACK + 1
N_PRIMARY = A_SHRINE + 1
PRIMARY_NAMES = (("noop", "move", "attack") + tuple(f"ability_{k + 1}" for k in range(ABILITIES_PER_HERO))
                 + tuple(f"item_{n}" for n in ITEM_ACTIONS) + ("buyback", "shrine"))

N_OFFSETS = 9  # offsets -4..4 (app. F, figure 15)
# Offset grid step per target type, in map units: caster offset (move, point spells, blink), regular offset
# (from the selected unit), ward placement offset (app. F: "Regular", "Caster", "Ward" offsets)
OFFSET_STEP_CASTER = 200.0
OFFSET_STEP_REGULAR = 100.0
OFFSET_STEP_WARD = 150.0
# Action filters only offer unit targets within these radii of the hero (app. F: "check if there is a valid
# target nearby")
ATTACK_TARGET_RADIUS = 1500.0
SPELL_TARGET_RADIUS = 1200.0

ACTION_KEYS = ("primary", "delay", "target_unit", "offset_x", "offset_y")
N_ACTION_KEYS = len(ACTION_KEYS)
# the integer types that validate_actions takes without a closer look (anything else is checked in full)
INT_TYPES = frozenset((int, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64))
# doing nothing: no-op, no delay, the first unit row, the centre offset (each ignored by the no-op)
NOOP_ACTION = {"primary": A_NOOP, "delay": 0, "target_unit": 0, "offset_x": N_OFFSETS // 2, "offset_y": N_OFFSETS // 2}


def action_sizes(max_units: int, n_primary: int = N_PRIMARY) -> tuple[int, ...]:
    """The number of choices of each action parameter, in ACTION_KEYS order (`n_primary`: a space with added actions,
    model surgery)."""
    return n_primary, N_DELAYS, max_units, N_OFFSETS, N_OFFSETS


def action_space(max_units: int) -> spaces.Dict:
    return spaces.Dict({key: spaces.Discrete(n) for key, n in zip(ACTION_KEYS, action_sizes(max_units))})


def validate_action(agent_id: str, action, max_units: int) -> np.ndarray:
    """Returns the action as 5 ints (ACTION_KEYS order) or raises ValueError naming the agent and the field."""
    if not isinstance(action, dict):
        raise ValueError(f"action for {agent_id}: expected a dict with keys {list(ACTION_KEYS)}, "
                         f"got {type(action).__name__}")
    unknown = set(action) - set(ACTION_KEYS)
    if unknown:
        raise ValueError(f"action for {agent_id}: unknown field(s) {sorted(unknown, key=repr)}; "
                         f"allowed: {list(ACTION_KEYS)}")
    out = np.zeros(N_ACTION_KEYS, np.int64)
    for i, (key, n) in enumerate(zip(ACTION_KEYS, action_sizes(max_units))):
        if key not in action:
            raise ValueError(f"action for {agent_id}: missing field {key!r}")
        v = action[key]
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):  # the common case, checked cheaply
            iv = int(v)
        else:
            arr = np.asarray(v)
            if arr.shape != () or not (np.issubdtype(arr.dtype, np.integer) or
                                       (np.issubdtype(arr.dtype, np.floating) and bool(np.isfinite(arr))
                                        and float(arr) == math.floor(arr))):
                raise ValueError(f"action for {agent_id}: field {key!r} must be a scalar integer, got {v!r}")
            iv = int(arr)
        if not 0 <= iv < n:
            raise ValueError(f"action for {agent_id}: field {key!r} = {iv} out of range [0, {n - 1}]")
        out[i] = iv
    return out


def _plain_row(action, sizes) -> list | None:
    """The action's 5 values when it is a dict of exactly the ACTION_KEYS holding plain ints in range (what agents
    send); None otherwise (validate_action then decides, and names what is wrong)."""
    if not isinstance(action, dict) or len(action) != N_ACTION_KEYS:
        return None
    try:
        row = [action[k] for k in ACTION_KEYS]
    except KeyError:
        return None
    for v, n in zip(row, sizes):
        if type(v) not in INT_TYPES or not 0 <= v < n:
            return None
    return row


def validate_actions(action_dict, agent_index: dict, max_units: int) -> np.ndarray:
    """Every agent's action of one step as an (agents, 5) int array (rows in `agent_index` order: agent id -> row,
    every hero of the game), or ValueError: the dict itself, then unknown and missing agent ids, then each action
    (``validate_action``: the agent, the field and the allowed range). MobaEnv and RemoteMobaEnv validate with it."""
    if not isinstance(action_dict, dict):
        raise ValueError(f"actions: expected a dict keyed by agent id, got {type(action_dict).__name__}")
    unknown = [a for a in action_dict if a not in agent_index]
    if unknown:
        raise ValueError(f"actions: unknown agent id(s) {unknown}; allowed: {list(agent_index)}")
    missing = [a for a in agent_index if a not in action_dict]
    if missing:
        raise ValueError(f"actions: missing agent id(s) {missing}: every hero acts every step")
    sizes = action_sizes(max_units)
    acts = np.zeros((len(agent_index), N_ACTION_KEYS), np.int64)
    for agent, action in action_dict.items():
        acts[agent_index[agent]] = action_row(agent, action, max_units, sizes)
    return acts


def action_row(agent_id: str, action, max_units: int, sizes: tuple | None = None):
    """One agent's action dict as its 5 values (ACTION_KEYS order), or ValueError naming the agent and the field
    (`sizes`: action_sizes(max_units), when the caller has them)."""
    row = _plain_row(action, sizes or action_sizes(max_units))
    return validate_action(agent_id, action, max_units) if row is None else row


def check_action_array(acts, n_heroes: int, max_units: int) -> np.ndarray:
    """`acts` as every hero's action of one step, an (n_heroes, 5) int64 array of ``ACTION_KEYS`` columns, or
    ValueError naming the hero's row, the field and the allowed range (the array form of validate_actions; one
    compiled pass, as it runs on every env step of training)."""
    if not isinstance(acts, np.ndarray) or acts.dtype != np.int64:
        acts = np.asarray(acts)
        if acts.dtype.kind not in "iu":
            raise ValueError(f"actions: expected an ({n_heroes}, {N_ACTION_KEYS}) integer array of "
                             f"{list(ACTION_KEYS)}, got {acts.dtype}")
        acts = acts.astype(np.int64)
    if acts.shape != (n_heroes, N_ACTION_KEYS):
        raise ValueError(f"actions: expected an ({n_heroes}, {N_ACTION_KEYS}) integer array of {list(ACTION_KEYS)}, "
                         f"got shape {acts.shape}")
    sizes = _sizes_array(max_units)
    bad = _first_out_of_range(acts, sizes)
    if bad >= 0:
        row, col = divmod(bad, N_ACTION_KEYS)
        raise ValueError(f"actions: hero row {row}: '{ACTION_KEYS[col]}' must be in [0, {sizes[col] - 1}], "
                         f"got {acts[row, col]}")
    return acts


_SIZES = {}  # max_units -> action_sizes(max_units) as an int64 array


def _sizes_array(max_units: int) -> np.ndarray:
    sizes = _SIZES.get(max_units)
    if sizes is None:
        sizes = _SIZES[max_units] = np.array(action_sizes(max_units), np.int64)
    return sizes


@njit(cache=True)
def _first_out_of_range(acts, sizes):
    """The flat index of the first value of `acts` (rows x 5) outside [0, sizes[column]), or -1."""
    for i in range(acts.shape[0]):
        for j in range(acts.shape[1]):
            if acts[i, j] < 0 or acts[i, j] >= sizes[j]:
                return i * acts.shape[1] + j
    return -1


def primaries_of(action_dict: dict, agents) -> np.ndarray:
    """Each agent's primary action from a step's action dict (-1 where it has none): what the no-op penalty reads."""
    return np.array([int(action_dict[a]["primary"]) if a in action_dict else -1 for a in agents], np.int64)


def noops_while_able(primary: np.ndarray, able: np.ndarray) -> np.ndarray:
    """1.0 where a hero's primary action is the no-op while its action mask offered more (`able`), else 0.0."""
    return ((primary == A_NOOP) & able).astype(np.float64)


def able_to_act(obs: list) -> np.ndarray:
    """Per hero (rows of `obs`), whether its action mask offers more than the no-op (alive and not stunned)."""
    return np.array([int(o["action_mask"].sum()) > 1 for o in obs], bool)


def hero_action_table(hero_ab: np.ndarray, abi: np.ndarray, ia_ab: np.ndarray):
    """Per hero: (target type, unit kind) of each primary action, as (n_heroes, N_PRIMARY) int arrays."""
    n = hero_ab.shape[0]
    tt = np.zeros((n, N_PRIMARY), np.int64)
    uk = np.zeros((n, N_PRIMARY), np.int64)
    tt[:, A_MOVE] = TT_POINT
    tt[:, A_ATTACK], uk[:, A_ATTACK] = TT_UNIT, UK_ATTACK
    for k in range(ABILITIES_PER_HERO):
        tt[:, A_ABILITY0 + k] = abi[hero_ab[:, k], A_TT]
        uk[:, A_ABILITY0 + k] = abi[hero_ab[:, k], A_UK]
    for k in range(len(ITEM_ACTIONS)):
        tt[:, A_ITEM0 + k] = abi[ia_ab[k], A_TT]
        uk[:, A_ITEM0 + k] = abi[ia_ab[k], A_UK]
    return tt, uk


@njit(cache=True)
def unit_masks_for(uf, ui, vis, hero_unit, slot_units, out):
    """out[kind, i] = 1 if observation row i may be the unit parameter of an action of that unit kind."""
    out[:, :] = 0
    if ui[hero_unit, I_ALIVE] == 0:
        return
    for i in range(slot_units.shape[0]):
        v = slot_units[i]
        if v < 0 or not alive(ui, v):
            continue
        d = dist(uf, hero_unit, v)
        if d <= ATTACK_TARGET_RADIUS and can_attack(uf, ui, vis, hero_unit, v):
            out[UK_ATTACK, i] = 1
        if d <= SPELL_TARGET_RADIUS:
            if can_target_spell(ui, vis, hero_unit, v, UK_ENEMY):
                out[UK_ENEMY, i] = 1
            if can_target_spell(ui, vis, hero_unit, v, UK_ALLY):
                out[UK_ALLY, i] = 1
        t = ui[v, I_TYPE]
        if ui[v, I_TEAM] == ui[hero_unit, I_TEAM] and t != UT_HERO:
            for b in BUILDING_TYPES:
                if t == b:
                    out[UK_TELEPORT, i] = 1


@njit(cache=True)
def action_mask_for(uf, ui, hf, hi, gf, h, tt_row, uk_row, umask, abi, abf, hero_ab, ia_ab, ia_item, item_stats,
                    n_buildings_end, out):
    """The action filters: out[a] = 1 if primary action a is available to hero h now."""
    out[:] = 0
    out[A_NOOP] = 1
    u = hi[h, H_UNIT]
    if ui[u, I_ALIVE] == 0:
        if hf[h, G_BB_CD] <= 0.0 and hf[h, G_GOLD] >= buyback_cost(hi[h, H_LEVEL], gf[GF_TIME]):
            out[A_BUYBACK] = 1
        return
    if uf[u, F_STUN_T] > 0.0:
        return
    out[A_MOVE] = 1
    if umask[UK_ATTACK].any():
        out[A_ATTACK] = 1
    for k in range(ABILITIES_PER_HERO):
        ab = hero_ab[h, k]
        lv = hi[h, H_AB0 + k] - 1
        if lv < 0 or abi[ab, A_PASSIVE] == 1 or hf[h, G_CD0 + k] > 0.0 or uf[u, F_MANA] < abf[ab, A_MANA + lv]:
            continue
        if uk_row[A_ABILITY0 + k] != UK_NONE and not umask[uk_row[A_ABILITY0 + k]].any():
            continue
        out[A_ABILITY0 + k] = 1
    for k in range(ia_ab.shape[0]):
        ab = ia_ab[k]
        if hf[h, G_ICD0 + k] > 0.0 or uf[u, F_MANA] < abf[ab, A_MANA]:
            continue
        held = False
        for s in range(INVENTORY):
            if hi[h, H_IT0 + s] == ia_item[k] and (item_stats[ia_item[k], IS_CONSUMABLE] == 0.0
                                                   or hi[h, H_CH0 + s] > 0):
                held = True
        if not held:
            continue
        if uk_row[A_ITEM0 + k] != UK_NONE and not umask[uk_row[A_ITEM0 + k]].any():
            continue
        out[A_ITEM0 + k] = 1
    for s in range(n_buildings_end):
        if ui[s, I_TYPE] == UT_SHRINE and alive(ui, s) and ui[s, I_TEAM] == ui[u, I_TEAM] \
                and dist(uf, u, s) <= SHRINE_RADIUS and uf[s, F_SHRINE_CD] <= 0.0:
            out[A_SHRINE] = 1


# ---- the consumables' need filters (EnvConfig.consumable_filters) ----------------------------------------------------
# Five's filters (app. F) say when an action can be taken; these say when a consumable can do its work, so that a
# policy cannot spend its gold on a salve at full health. Not from the paper: the project's own rule, off by default.
NEED_SHARE = 0.5  # a salve / clarity is legal while at least this share of what it restores can land
TP_MIN_DISTANCE = 3500.0  # a town portal scroll may target only allied buildings at least this far from the hero
# (the scripted bot's TP_MIN_DISTANCE: it teleports to a lane front farther than this)


def _restore(name: str) -> float:
    """What a consumable restores over its whole effect (amount per second x seconds, level 1)."""
    effect = ITEMS[item_id(name)].active.effects[0]
    return effect.amount[0] * effect.duration[0]


SALVE_NEED_HP = NEED_SHARE * _restore("healing_salve")  # 200 health missing
CLARITY_NEED_MANA = NEED_SHARE * _restore("clarity")  # 75 mana missing


@njit(cache=True)
def need_filters(uf, hero_units, slot_units, amask, umask):
    """The consumables' need filters, on one team's masks in place (rows: the team's heroes, whose units are
    `hero_units`; `slot_units`: observation row -> unit). A healing salve is legal only while the hero misses at least
    SALVE_NEED_HP health and no salve (or other regeneration) runs on it, a clarity the same for mana; a town portal
    scroll only toward allied buildings at least TP_MIN_DISTANCE away (its unit mask row loses the nearer ones), and
    not at all when there is none; while the hero channels a scroll, only the no-op (a move or an attack order would
    cancel the channel, and the scroll is spent at the cast). A salve or clarity drunk while one runs would only
    restart it."""
    for k in range(amask.shape[0]):
        u = hero_units[k]
        if uf[u, F_TP_T] > 0.0:
            amask[k, :] = 0
            amask[k, A_NOOP] = 1
            continue
        if amask[k, A_SALVE] and (uf[u, F_MAXHP] - uf[u, F_HP] < SALVE_NEED_HP or uf[u, F_REGEN_T] > 0.0):
            amask[k, A_SALVE] = 0
        if amask[k, A_CLARITY] and (uf[u, F_MAXMANA] - uf[u, F_MANA] < CLARITY_NEED_MANA or uf[u, F_MREGEN_T] > 0.0):
            amask[k, A_CLARITY] = 0
        far = False
        for i in range(slot_units.shape[0]):
            if umask[k, UK_TELEPORT, i]:
                if dist(uf, u, slot_units[i]) < TP_MIN_DISTANCE:
                    umask[k, UK_TELEPORT, i] = 0
                else:
                    far = True
        if not far:
            amask[k, A_TP] = 0


@njit(cache=True)
def offset_step(target_type: int) -> float:
    """The offset grid's step, in map units, of a target type's actions."""
    if target_type == TT_WARD:
        return OFFSET_STEP_WARD
    if target_type == TT_UNIT_OFFSET or target_type == TT_TELEPORT:
        return OFFSET_STEP_REGULAR
    return OFFSET_STEP_CASTER


@njit(cache=True)
def order_kind(p: int):
    """The engine order's (kind, argument) of primary action `p` (not the no-op)."""
    if p == A_MOVE:
        return OK_MOVE, 0
    if p == A_ATTACK:
        return OK_ATTACK, 0
    if A_ABILITY0 <= p < A_ITEM0:
        return OK_ABILITY, p - A_ABILITY0
    if A_ITEM0 <= p < A_BUYBACK:
        return OK_ITEM, p - A_ITEM0
    if p == A_BUYBACK:
        return OK_BUYBACK, 0
    return OK_SHRINE, 0


# target types whose actions read the unit parameter (TARGET_TYPE_READS_UNIT as an array, for the compiled decoder)
_READS_UNIT = np.array(TARGET_TYPE_READS_UNIT, np.bool_)


@njit(cache=True)
def decode_team(acts, h0, uf, hero_units, tt, uk, action_mask, unit_masks, slot_units, frameskip, out):
    """The engine orders of one team's heroes, compiled: hero h0 + i (i < the team's size) takes its validated action
    ``acts[h0 + i]`` (5 ints), its team's observation rows ``action_mask[i]``, ``unit_masks[i]`` and ``slot_units``,
    and gets the order ``decode_action`` writes, in ``out[h0 + i]``, its tick clipped to the frameskip (0 when
    inactive). The same arithmetic as ``decode_action``, to the bit."""
    for i in range(action_mask.shape[0]):
        h = h0 + i
        out[h, :] = 0.0
        p, delay, unit_row, ox, oy = acts[h, 0], acts[h, 1], acts[h, 2], acts[h, 3], acts[h, 4]
        if p == A_NOOP or action_mask[i, p] == 0:
            continue
        t = tt[h, p]
        unit = -1
        if _READS_UNIT[t]:
            if unit_masks[i, uk[h, p], unit_row] == 0:
                continue
            unit = slot_units[unit_row]
        step = offset_step(t)
        dx, dy = (ox - N_OFFSETS // 2) * step, (oy - N_OFFSETS // 2) * step
        if t == TT_POINT or t == TT_WARD:
            u = hero_units[h]
            dx, dy = uf[u, F_X] + dx, uf[u, F_Y] + dy
        kind, arg = order_kind(p)
        out[h, P_ACTIVE], out[h, P_TICK], out[h, P_KIND], out[h, P_ARG] = 1.0, min(delay, frameskip - 1), kind, arg
        out[h, P_UNIT], out[h, P_X], out[h, P_Y] = unit, dx, dy


def decode_action(act: np.ndarray, h: int, hero_pos: tuple, tt_row: np.ndarray, uk_row: np.ndarray,
                  action_mask: np.ndarray, unit_masks: np.ndarray, slot_units: np.ndarray, out: np.ndarray) -> bool:
    """Writes hero h's engine order for a validated action (5 ints) into `out` (a row of NP floats). Returns False
    (and leaves `out` inactive) when the action is a no-op: noop, a masked primary action, or a masked unit."""
    out[:] = 0.0
    p, delay, unit_row, ox, oy = (int(x) for x in act)
    if p == A_NOOP or not action_mask[p]:
        return False
    tt = int(tt_row[p])
    unit = -1
    if TARGET_TYPE_READS_UNIT[tt]:
        if not unit_masks[uk_row[p], unit_row]:
            return False
        unit = int(slot_units[unit_row])
    step = offset_step(tt)
    dx, dy = (ox - N_OFFSETS // 2) * step, (oy - N_OFFSETS // 2) * step
    if tt in (TT_POINT, TT_WARD):
        dx, dy = hero_pos[0] + dx, hero_pos[1] + dy
    kind, arg = order_kind(p)
    out[P_ACTIVE], out[P_TICK], out[P_KIND], out[P_ARG] = 1.0, delay, kind, arg
    out[P_UNIT], out[P_X], out[P_Y] = unit, dx, dy
    return True

