"""Scripted ability builds and item purchasing (Five app. F.1), with the training-time perturbations of app. O.2.

The functions here are pure: a perturbation takes the numpy Generator it should draw from, so the engine itself
stays free of randomness.
"""
from __future__ import annotations

import numpy as np

from moba.game.abilities import Hero
from moba.game.constants import MAX_LEVEL, ULTIMATE_LEVELS
from moba.game.items import ITEMS, item_id

CONSUMABLES_UNTIL_S = 600.0  # F.1: "after a certain time in the game, we stop purchasing consumables"
ITEM_DELETE_PROB = 0.2  # O.2 item-build perturbation: each item is dropped with this probability ...
ITEM_INSERT_MAX = 2  # ... and up to this many random items are inserted
NO_SKILL = -1  # a level that learns nothing (every ability already maxed)


def ability_build(priority: tuple) -> list[int]:
    """Ability learned at each level 1..25: the ultimate (3) at ULTIMATE_LEVELS, otherwise the first ability of
    `priority` that has levels left (4 per basic ability)."""
    levels = [0, 0, 0, 0]
    build = []
    for lvl in range(1, MAX_LEVEL + 1):
        if lvl in ULTIMATE_LEVELS:
            pick = 3
        else:
            pick = next((a for a in priority if levels[a] < 4), NO_SKILL)
        if pick != NO_SKILL:
            levels[pick] += 1
        build.append(pick)
    return build


def perturbed_priority(hero: Hero, rng: np.random.Generator) -> tuple:
    """O.2: training games level the basic abilities in a random order."""
    return tuple(int(a) for a in rng.permutation(3))


def item_build(hero: Hero) -> list[int]:
    return [item_id(name) for name in hero.item_build]


def perturbed_item_build(hero: Hero, rng: np.random.Generator) -> list[int]:
    """O.2: randomly delete items from the build and insert random non-consumable items."""
    build = [i for i in item_build(hero) if rng.random() >= ITEM_DELETE_PROB]
    pool = [i for i, it in enumerate(ITEMS) if not it.consumable]
    for _ in range(int(rng.integers(0, ITEM_INSERT_MAX + 1))):
        build.insert(int(rng.integers(0, len(build) + 1)), int(rng.choice(pool)))
    return build
