"""The shop: consumables, an observer ward, stat items and three items with actives.

Each usable item has its own primary action (``ITEM_ACTIONS``), available while the hero holds it with a charge
left and it is off cooldown. Items are delivered instantly wherever the hero stands (the courier of Five F.1
is abstracted away); purchasing is scripted (``moba/game/builds.py``).
"""
from __future__ import annotations

from moba.game.abilities import (AFFECT_ALLIES, AFFECT_ENEMIES, AREA_CIRCLE_SELF, AREA_SELF, AREA_TARGET, EFFECT_BLINK,
                                EFFECT_DAMAGE, EFFECT_HEAL, EFFECT_MANA_REGEN, EFFECT_REGEN, EFFECT_TELEPORT,
                                EFFECT_WARD, TT_NO_TARGET, TT_POINT, TT_TELEPORT, TT_UNIT, TT_WARD, UK_ENEMY,
                                UK_TELEPORT, Ability, Effect, Item)

INVENTORY_SLOTS = 6
TELEPORT_CHANNEL_S = 3.0
WARD_VISION = 1600.0
WARD_LIFETIME_S = 360.0

ITEMS: tuple[Item, ...] = (
    Item("healing_salve", 110, consumable=True, charges=1,
         active=Ability("healing_salve", TT_NO_TARGET, (Effect(EFFECT_REGEN, AREA_SELF, AFFECT_ALLIES,
                                                                 amount=50.0, duration=8.0),),
                        cast_range=0.0, cooldown=1.0)),
    Item("clarity", 50, consumable=True, charges=1,
         active=Ability("clarity", TT_NO_TARGET, (Effect(EFFECT_MANA_REGEN, AREA_SELF, AFFECT_ALLIES,
                                                          amount=6.0, duration=25.0),),
                        cast_range=0.0, cooldown=1.0)),
    Item("town_portal_scroll", 90, consumable=True, charges=1,
         active=Ability("town_portal_scroll", TT_TELEPORT, (Effect(EFFECT_TELEPORT, AREA_SELF, AFFECT_ALLIES,
                                                                    duration=TELEPORT_CHANNEL_S),),
                        unit_kind=UK_TELEPORT, cast_range=1e9, cooldown=80.0)),
    Item("observer_ward", 50, consumable=True, charges=1,
         active=Ability("observer_ward", TT_WARD, (Effect(EFFECT_WARD, AREA_SELF, AFFECT_ALLIES,
                                                          amount=WARD_VISION, duration=WARD_LIFETIME_S),),
                        cast_range=600.0, cooldown=1.0)),
    Item("boots_of_speed", 500, move_speed=45.0),
    Item("blades_of_attack", 450, damage=9.0),
    Item("chainmail", 550, armor=4.0),
    Item("ring_of_health", 700, hp_regen=5.0),
    Item("void_stone", 700, mana_regen=1.75),
    Item("cloak", 500, magic_resist=0.15),
    Item("vitality_booster", 1000, hp=250.0),
    Item("energy_booster", 800, mana=250.0),
    Item("claymore", 1350, damage=20.0),
    Item("platemail", 1400, armor=10.0),
    Item("reaver", 2800, hp=450.0, hp_regen=2.0),
    Item("demon_edge", 2200, damage=40.0),
    Item("blink_dagger", 2250,
         active=Ability("blink_dagger", TT_POINT, (Effect(EFFECT_BLINK, AREA_SELF, AFFECT_ALLIES),),
                        cast_range=1200.0, cooldown=15.0)),
    Item("mekansm", 1800, armor=2.0, hp_regen=2.0,
         active=Ability("mekansm", TT_NO_TARGET, (Effect(EFFECT_HEAL, AREA_CIRCLE_SELF, AFFECT_ALLIES,
                                                          amount=250.0, radius=1200.0),),
                        cast_range=0.0, mana=100.0, cooldown=50.0)),
    Item("dagon", 2700, damage=6.0, mana=150.0,
         active=Ability("dagon", TT_UNIT, (Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=400.0),),
                        unit_kind=UK_ENEMY, cast_range=700.0, mana=120.0, cooldown=30.0)),
)

ITEM_INDEX = {it.name: i for i, it in enumerate(ITEMS)}
# items that have a primary action of their own, in action order
ITEM_ACTIONS = ("healing_salve", "clarity", "town_portal_scroll", "observer_ward", "blink_dagger", "mekansm",
                "dagon")
CONSUMABLES = tuple(it.name for it in ITEMS if it.consumable)


def item_id(name: str) -> int:
    """Index of an item by name; a ValueError names the allowed items."""
    try:
        return ITEM_INDEX[name]
    except KeyError:
        raise ValueError(f"unknown item {name!r}; allowed: {sorted(ITEM_INDEX)}") from None
