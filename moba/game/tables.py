"""Compiles the hero pool and the items into flat numpy tables that the numba kernels read.

Ability ids: hero h's ability k is ``ABILITIES_PER_HERO * h + k`` (``hero_ability``); the item actions follow, in
``items.ITEM_ACTIONS`` order (``item_action_ab`` of ``tables()``).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from moba.game.abilities import Ability
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS, ITEMS, item_id

ABILITIES_PER_HERO = 4  # abilities.Hero: 3 basic abilities and the ultimate

# ability int columns
(A_TT, A_UK, A_PASSIVE, A_ULT, A_NEFF, A_EK0, A_EA0, A_EF0, A_EK1, A_EA1, A_EF1, NABI) = range(12)
# ability float columns: 4 levels each for range, mana, cooldown; then per effect 4 amounts, 4 durations, radius
A_RANGE, A_MANA, A_CD = 0, 4, 8
A_E0 = 12  # effect 0: amount[4], duration[4], radius
A_EFF_STRIDE = 9
A_AMT, A_DUR, A_RAD = 0, 4, 8
NABF = 30

# item stat columns
(IS_COST, IS_DMG, IS_ARMOR, IS_HP, IS_MANA, IS_HPREG, IS_MANAREG, IS_SPEED, IS_MRES, IS_CHARGES, IS_CONSUMABLE,
 NIS) = range(12)


def _ability_rows(ab: Ability):
    ri = np.zeros(NABI, np.int64)
    rf = np.zeros(NABF, np.float64)
    ri[A_TT], ri[A_UK], ri[A_PASSIVE], ri[A_ULT] = ab.target_type, ab.unit_kind, ab.passive, ab.ultimate
    ri[A_NEFF] = len(ab.effects)
    ri[A_EK1] = -1
    rf[A_RANGE:A_RANGE + 4] = ab.cast_range
    rf[A_MANA:A_MANA + 4] = ab.mana
    rf[A_CD:A_CD + 4] = ab.cooldown
    for j, ef in enumerate(ab.effects):
        ri[A_EK0 + 3 * j], ri[A_EA0 + 3 * j], ri[A_EF0 + 3 * j] = ef.kind, ef.area, ef.affects
        base = A_E0 + j * A_EFF_STRIDE
        rf[base + A_AMT:base + A_AMT + 4] = ef.amount
        rf[base + A_DUR:base + A_DUR + 4] = ef.duration
        rf[base + A_RAD] = ef.radius
    return ri, rf


@lru_cache(maxsize=1)
def tables():
    """(abi, abf, item_action_ab, item_stats): ability ints and floats, the ability id of each item action, and
    per-item stats."""
    abilities = [ab for h in HEROES for ab in h.abilities]
    for name in ITEM_ACTIONS:
        abilities.append(ITEMS[item_id(name)].active)
    abi = np.zeros((len(abilities), NABI), np.int64)
    abf = np.zeros((len(abilities), NABF), np.float64)
    for a, ab in enumerate(abilities):
        abi[a], abf[a] = _ability_rows(ab)
    item_action_ab = np.arange(ABILITIES_PER_HERO * len(HEROES), len(abilities), dtype=np.int64)
    item_stats = np.zeros((len(ITEMS), NIS), np.float64)
    for i, it in enumerate(ITEMS):
        item_stats[i] = (it.cost, it.damage, it.armor, it.hp, it.mana, it.hp_regen, it.mana_regen, it.move_speed,
                         it.magic_resist, it.charges, it.consumable)
    for arr in (abi, abf, item_action_ab, item_stats):
        arr.setflags(write=False)
    return abi, abf, item_action_ab, item_stats


def hero_ability(hero_def: int, k: int) -> int:
    return ABILITIES_PER_HERO * hero_def + k
