"""The hero pool: 18 Dota-2-like heroes defined as data, each with 3 basic abilities and an ultimate.

Every ability is composed of the effect primitives of ``moba/game/abilities.py``; stats sit in the Dota 2 level-1
ballpark. ``skill_priority`` and ``item_build`` drive the scripted ability and item builds (Five F.1); item names
refer to ``moba/game/items.py``.
"""
from __future__ import annotations

from moba.game.abilities import (AFFECT_ALLIES, AFFECT_ENEMIES, AREA_CIRCLE_POINT, AREA_CIRCLE_SELF, AREA_CONE,
                                AREA_LINE, AREA_SELF, AREA_TARGET, EFFECT_AURA, EFFECT_BLINK, EFFECT_DAMAGE,
                                EFFECT_DAMAGE_BUFF, EFFECT_DOT, EFFECT_HEAL, EFFECT_MANA_REGEN, EFFECT_REGEN,
                                EFFECT_SHIELD, EFFECT_SLOW, EFFECT_STUN, TT_NO_TARGET, TT_POINT, TT_UNIT,
                                TT_UNIT_OFFSET, UK_ALLY, UK_ENEMY, Ability, Effect, Hero)

MELEE = 150.0

HEROES: tuple[Hero, ...] = (
    # ---- carries -----------------------------------------------------------------------------------------------
    # blademaster: melee spinner that sustains in lane and deletes a single target with its ultimate
    Hero("blademaster", "carry", MELEE, 620, 80, 290, 30, 2.0, 0.8, 3.0, 0.4, 0.25, 54, 3.0, 1.4, 305, (
        Ability("blade_fury", TT_NO_TARGET, (
            Effect(EFFECT_DOT, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(30, 40, 50, 60), duration=5, radius=250),
        ), cast_range=0, mana=(120, 110, 100, 90), cooldown=(18, 16, 14, 12)),
        Ability("healing_ward", TT_NO_TARGET, (
            Effect(EFFECT_REGEN, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(10, 15, 20, 25), duration=8, radius=400),
        ), cast_range=0, mana=140, cooldown=20),
        Ability("blade_dance", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(15, 25, 35, 45), duration=8),
        ), cast_range=0, mana=75, cooldown=(16, 14, 12, 10)),
        Ability("omnislash", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(300, 425, 550)),
        ), unit_kind=UK_ENEMY, cast_range=600, mana=(200, 275, 350), cooldown=(130, 115, 100), ultimate=True),
    ), skill_priority=(0, 2, 1), item_build=("boots_of_speed", "claymore", "reaver", "demon_edge", "platemail")),

    # marksman: long-range sniper with a piercing line shot and an area shrapnel zone
    Hero("marksman", "carry", 600, 560, 65, 300, 30, 1.2, 0.9, 1.0, 0.3, 0.25, 48, 3.2, 1.7, 290, (
        Ability("piercing_shot", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_LINE, AFFECT_ENEMIES, amount=(90, 150, 210, 270), radius=140),
            Effect(EFFECT_SLOW, AREA_LINE, AFFECT_ENEMIES, amount=0.25, duration=3, radius=140),
        ), cast_range=1000, mana=(100, 110, 120, 130), cooldown=(14, 12, 10, 8)),
        Ability("shrapnel", TT_POINT, (
            Effect(EFFECT_DOT, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(20, 30, 40, 50), duration=5, radius=350),
            Effect(EFFECT_SLOW, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(0.2, 0.25, 0.3, 0.35), duration=5,
                   radius=350),
        ), cast_range=900, mana=80, cooldown=(20, 18, 16, 14)),
        Ability("take_aim", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(20, 30, 40, 50), duration=6),
        ), cast_range=0, mana=70, cooldown=(18, 16, 14, 12)),
        Ability("assassinate", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(320, 460, 600)),
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=1.0),
        ), unit_kind=UK_ENEMY, cast_range=900, mana=(175, 225, 275), cooldown=(90, 75, 60), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "blades_of_attack", "claymore", "demon_edge",
                                              "platemail")),

    # phantom: melee assassin that blinks onto a target, slows it and cuts it down
    Hero("phantom", "carry", MELEE, 600, 75, 270, 28, 1.8, 0.7, 4.0, 0.45, 0.25, 52, 3.0, 1.4, 310, (
        Ability("phantom_strike", TT_POINT, (
            Effect(EFFECT_BLINK, AREA_SELF, AFFECT_ALLIES),
        ), cast_range=(1000, 1050, 1100, 1150), mana=(90, 80, 70, 70), cooldown=(16, 13, 10, 8)),
        Ability("stifling_dagger", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(75, 120, 165, 210)),
            Effect(EFFECT_SLOW, AREA_TARGET, AFFECT_ENEMIES, amount=0.5, duration=(2, 2.5, 3, 3.5)),
        ), unit_kind=UK_ENEMY, cast_range=(700, 750, 800, 850), mana=(80, 80, 90, 90), cooldown=(12, 10, 8, 6)),
        Ability("blur", TT_NO_TARGET, (
            Effect(EFFECT_SHIELD, AREA_SELF, AFFECT_ALLIES, amount=(100, 160, 220, 280), duration=10),
        ), cast_range=0, mana=100, cooldown=(20, 18, 16, 14)),
        Ability("coup_de_grace", TT_UNIT_OFFSET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(300, 400, 500), radius=250),
            Effect(EFFECT_STUN, AREA_CIRCLE_POINT, AFFECT_ENEMIES, duration=(1.0, 1.25, 1.5), radius=250),
        ), unit_kind=UK_ENEMY, cast_range=600, mana=(150, 200, 250), cooldown=(100, 85, 70), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "claymore", "blink_dagger", "demon_edge",
                                              "reaver")),

    # lunar_archer: ranged carry with a stunning beam, an armor aura and a lunar burst around herself
    Hero("lunar_archer", "carry", 550, 580, 70, 310, 32, 1.5, 1.0, 2.0, 0.35, 0.25, 50, 3.4, 1.5, 300, (
        Ability("lucent_beam", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(75, 150, 225, 300)),
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=1.0),
        ), unit_kind=UK_ENEMY, cast_range=800, mana=(90, 100, 110, 120), cooldown=(12, 10, 8, 6)),
        Ability("moon_glaive", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_CONE, AFFECT_ENEMIES, amount=(80, 130, 180, 230)),
        ), cast_range=700, mana=(90, 100, 110, 120), cooldown=(14, 12, 10, 8)),
        Ability("lunar_blessing", TT_NO_TARGET, (
            Effect(EFFECT_AURA, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(2, 3, 4, 5), radius=900),
        ), cast_range=0, mana=0, cooldown=0, passive=True),
        Ability("eclipse", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(350, 475, 600), radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=0.3, duration=3, radius=400),
        ), cast_range=0, mana=(150, 200, 250), cooldown=(120, 105, 90), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "blades_of_attack", "claymore", "platemail",
                                              "demon_edge")),

    # iron_knight: melee brawler that stuns, cleaves in a cone and rallies allies with a war cry
    Hero("iron_knight", "carry", MELEE, 660, 90, 260, 26, 2.5, 0.7, 2.0, 0.4, 0.25, 58, 3.6, 1.6, 295, (
        Ability("storm_hammer", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(80, 160, 240, 300)),
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=(1.4, 1.6, 1.8, 2.0)),
        ), unit_kind=UK_ENEMY, cast_range=600, mana=(110, 120, 130, 140), cooldown=(18, 16, 14, 12)),
        Ability("cleaving_strike", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_CONE, AFFECT_ENEMIES, amount=(90, 140, 190, 240)),
        ), cast_range=700, mana=90, cooldown=(12, 10, 8, 7)),
        Ability("warcry", TT_NO_TARGET, (
            Effect(EFFECT_SHIELD, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(100, 150, 200, 250), duration=8,
                   radius=400),
        ), cast_range=0, mana=(80, 90, 100, 110), cooldown=(20, 18, 16, 14)),
        Ability("gods_strength", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(60, 90, 120), duration=20),
        ), cast_range=0, mana=(150, 200, 250), cooldown=(110, 95, 80), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "claymore", "blink_dagger", "reaver",
                                              "demon_edge")),

    # ---- mids --------------------------------------------------------------------------------------------------
    # frost_mage: ranged caster with a slowing ice line, a nova dropped near an enemy and a blizzard
    Hero("frost_mage", "mid", 600, 560, 62, 380, 42, 1.0, 1.4, 1.0, 0.25, 0.25, 46, 2.4, 1.7, 295, (
        Ability("ice_lance", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_LINE, AFFECT_ENEMIES, amount=(90, 150, 210, 270), radius=150),
            Effect(EFFECT_SLOW, AREA_LINE, AFFECT_ENEMIES, amount=(0.2, 0.25, 0.3, 0.35), duration=3, radius=150),
        ), cast_range=900, mana=(100, 115, 130, 145), cooldown=(12, 11, 10, 9)),
        Ability("frost_nova", TT_UNIT_OFFSET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(100, 150, 200, 250), radius=300),
            Effect(EFFECT_SLOW, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=0.3, duration=(2, 2.5, 3, 3.5),
                   radius=300),
        ), unit_kind=UK_ENEMY, cast_range=700, mana=(110, 125, 140, 155), cooldown=(14, 12, 10, 8)),
        Ability("glacial_armor", TT_NO_TARGET, (
            Effect(EFFECT_SHIELD, AREA_SELF, AFFECT_ALLIES, amount=(120, 200, 280, 360), duration=12),
        ), cast_range=0, mana=(90, 100, 110, 120), cooldown=(20, 18, 16, 14)),
        Ability("blizzard", TT_POINT, (
            Effect(EFFECT_DOT, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(60, 80, 100), duration=5, radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=0.4, duration=5, radius=400),
        ), cast_range=900, mana=(200, 275, 350), cooldown=(120, 105, 90), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "void_stone", "energy_booster", "dagon",
                                              "blink_dagger")),

    # storm_spirit: slippery ranged caster that rides lightning into fights
    Hero("storm_spirit", "mid", 500, 580, 68, 360, 40, 1.5, 1.2, 2.0, 0.3, 0.25, 49, 2.8, 1.5, 300, (
        Ability("static_bolt", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(100, 160, 220, 280)),
        ), unit_kind=UK_ENEMY, cast_range=700, mana=(90, 100, 110, 120), cooldown=(8, 7, 6, 6)),
        Ability("electric_vortex", TT_UNIT, (
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=(1.2, 1.6, 2.0, 2.4)),
        ), unit_kind=UK_ENEMY, cast_range=(500, 550, 600, 650), mana=(90, 110, 130, 150), cooldown=(20, 18, 16, 14)),
        Ability("overload", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(25, 40, 55, 70), duration=6),
        ), cast_range=0, mana=70, cooldown=(14, 12, 10, 8)),
        Ability("ball_lightning", TT_POINT, (
            Effect(EFFECT_BLINK, AREA_SELF, AFFECT_ALLIES),
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(200, 300, 400), radius=300),
        ), cast_range=(1000, 1100, 1200), mana=(150, 175, 200), cooldown=(80, 70, 60), ultimate=True),
    ), skill_priority=(0, 2, 1), item_build=("boots_of_speed", "void_stone", "dagon", "energy_booster",
                                              "reaver")),

    # flame_lord: ranged burst caster: burning cone, a stunning fire pillar and a single-target finisher
    Hero("flame_lord", "mid", 550, 570, 65, 400, 44, 1.2, 1.3, 1.0, 0.25, 0.25, 47, 2.6, 1.6, 295, (
        Ability("dragon_breath", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_CONE, AFFECT_ENEMIES, amount=(90, 160, 230, 300)),
            Effect(EFFECT_DOT, AREA_CONE, AFFECT_ENEMIES, amount=(20, 25, 30, 35), duration=4),
        ), cast_range=800, mana=(100, 115, 130, 145), cooldown=(12, 11, 10, 9)),
        Ability("fire_pillar", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(80, 130, 180, 230), radius=250),
            Effect(EFFECT_STUN, AREA_CIRCLE_POINT, AFFECT_ENEMIES, duration=(1.2, 1.4, 1.6, 1.8), radius=250),
        ), cast_range=700, mana=(100, 110, 120, 130), cooldown=(14, 12, 10, 8)),
        Ability("fiery_soul", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(15, 25, 35, 45), duration=10),
        ), cast_range=0, mana=75, cooldown=(18, 16, 14, 12)),
        Ability("laguna_blade", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(400, 500, 600)),
        ), unit_kind=UK_ENEMY, cast_range=600, mana=(250, 300, 350), cooldown=(70, 60, 60), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "void_stone", "dagon", "cloak", "blink_dagger")),

    # soul_reaper: ranged farmer that razes the ground next to enemies; its presence armors nearby allies
    Hero("soul_reaper", "mid", 500, 560, 60, 300, 34, 1.3, 1.0, 1.0, 0.3, 0.25, 55, 3.0, 1.6, 305, (
        Ability("shadow_raze", TT_UNIT_OFFSET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(90, 160, 230, 300), radius=250),
        ), unit_kind=UK_ENEMY, cast_range=700, mana=90, cooldown=(10, 9, 8, 7)),
        Ability("necromastery", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE_BUFF, AREA_SELF, AFFECT_ALLIES, amount=(20, 30, 40, 50), duration=12),
        ), cast_range=0, mana=(70, 80, 90, 100), cooldown=(18, 16, 14, 12)),
        Ability("dark_presence", TT_NO_TARGET, (
            Effect(EFFECT_AURA, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(2, 3, 4, 5), radius=900),
        ), cast_range=0, mana=0, cooldown=0, passive=True),
        Ability("requiem_of_souls", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(300, 425, 550), radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=0.4, duration=4, radius=400),
        ), cast_range=0, mana=(150, 225, 300), cooldown=(120, 110, 100), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "claymore", "blink_dagger", "dagon",
                                              "demon_edge")),

    # ---- offlaners ---------------------------------------------------------------------------------------------
    # berserker: tanky melee initiator that taunts everything around it and executes weakened heroes
    Hero("berserker", "offlane", MELEE, 700, 95, 260, 26, 3.0, 0.6, 2.0, 0.4, 0.25, 56, 2.6, 1.7, 310, (
        Ability("battle_roar", TT_NO_TARGET, (
            Effect(EFFECT_STUN, AREA_CIRCLE_SELF, AFFECT_ENEMIES, duration=(1.0, 1.4, 1.8, 2.2), radius=300),
            Effect(EFFECT_SHIELD, AREA_SELF, AFFECT_ALLIES, amount=(100, 150, 200, 250), duration=8),
        ), cast_range=0, mana=(110, 120, 130, 140), cooldown=(18, 16, 14, 12)),
        Ability("battle_hunger", TT_UNIT, (
            Effect(EFFECT_DOT, AREA_TARGET, AFFECT_ENEMIES, amount=(20, 30, 40, 50), duration=6),
            Effect(EFFECT_SLOW, AREA_TARGET, AFFECT_ENEMIES, amount=0.2, duration=4),
        ), unit_kind=UK_ENEMY, cast_range=750, mana=(75, 85, 95, 105), cooldown=(20, 15, 10, 6)),
        Ability("counter_spin", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(75, 125, 175, 225), radius=300),
        ), cast_range=0, mana=80, cooldown=(10, 9, 8, 7)),
        Ability("culling_blade", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(300, 425, 550)),
        ), unit_kind=UK_ENEMY, cast_range=500, mana=(150, 175, 200), cooldown=(75, 65, 60), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "blink_dagger", "vitality_booster", "platemail",
                                              "reaver")),

    # tidal_giant: melee frontliner with a slowing gush, a thick shell and a huge area stun
    Hero("tidal_giant", "offlane", MELEE, 680, 90, 280, 28, 3.5, 0.7, 2.0, 0.35, 0.25, 55, 2.8, 1.6, 300, (
        Ability("gush", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(100, 150, 200, 250)),
            Effect(EFFECT_SLOW, AREA_TARGET, AFFECT_ENEMIES, amount=(0.3, 0.35, 0.4, 0.45), duration=4),
        ), unit_kind=UK_ENEMY, cast_range=750, mana=(90, 100, 110, 120), cooldown=(12, 11, 10, 9)),
        Ability("kraken_shell", TT_NO_TARGET, (
            Effect(EFFECT_SHIELD, AREA_SELF, AFFECT_ALLIES, amount=(150, 230, 310, 390), duration=10),
        ), cast_range=0, mana=80, cooldown=(20, 18, 16, 14)),
        Ability("anchor_smash", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(80, 130, 180, 230), radius=375),
        ), cast_range=0, mana=(70, 80, 90, 100), cooldown=(8, 7, 6, 6)),
        Ability("ravage", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(250, 325, 400), radius=400),
            Effect(EFFECT_STUN, AREA_CIRCLE_SELF, AFFECT_ENEMIES, duration=(2.0, 2.25, 2.5), radius=400),
        ), cast_range=0, mana=(150, 225, 325), cooldown=(130, 120, 110), ultimate=True),
    ), skill_priority=(2, 0, 1), item_build=("boots_of_speed", "blink_dagger", "platemail", "cloak", "reaver")),

    # sand_warden: melee initiator with a stunning line burrow, a sandstorm and an armor aura
    Hero("sand_warden", "offlane", MELEE, 650, 85, 300, 30, 2.5, 0.8, 3.0, 0.4, 0.25, 52, 2.5, 1.6, 300, (
        Ability("burrow_strike", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_LINE, AFFECT_ENEMIES, amount=(80, 140, 200, 260), radius=150),
            Effect(EFFECT_STUN, AREA_LINE, AFFECT_ENEMIES, duration=(1.6, 1.8, 2.0, 2.2), radius=150),
        ), cast_range=(700, 800, 900, 1000), mana=(110, 120, 130, 140), cooldown=(14, 13, 12, 11)),
        Ability("sand_storm", TT_NO_TARGET, (
            Effect(EFFECT_DOT, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(25, 35, 45, 55), duration=6, radius=350),
        ), cast_range=0, mana=(80, 90, 100, 110), cooldown=(20, 18, 16, 14)),
        Ability("warden_aura", TT_NO_TARGET, (
            Effect(EFFECT_AURA, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(2, 3, 4, 5), radius=900),
        ), cast_range=0, mana=0, cooldown=0, passive=True),
        Ability("epicenter", TT_NO_TARGET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(300, 400, 500), radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=0.3, duration=4, radius=400),
        ), cast_range=0, mana=(150, 225, 300), cooldown=(120, 110, 100), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "blink_dagger", "vitality_booster", "cloak",
                                              "platemail")),

    # void_walker: melee disruptor that pulls enemies together, shields allies and walls off an escape
    Hero("void_walker", "offlane", MELEE, 640, 80, 340, 36, 2.0, 1.0, 1.0, 0.3, 0.25, 50, 2.5, 1.6, 295, (
        Ability("vacuum", TT_UNIT_OFFSET, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(75, 125, 175, 225), radius=350),
            Effect(EFFECT_STUN, AREA_CIRCLE_POINT, AFFECT_ENEMIES, duration=1.0, radius=350),
        ), unit_kind=UK_ENEMY, cast_range=(500, 600, 700, 800), mana=(100, 120, 140, 160), cooldown=(20, 18, 16, 14)),
        Ability("ion_shell", TT_UNIT, (
            Effect(EFFECT_SHIELD, AREA_TARGET, AFFECT_ALLIES, amount=(100, 180, 260, 340), duration=10),
        ), unit_kind=UK_ALLY, cast_range=600, mana=(100, 110, 120, 130), cooldown=(12, 10, 8, 6)),
        Ability("phase_surge", TT_POINT, (
            Effect(EFFECT_BLINK, AREA_SELF, AFFECT_ALLIES),
        ), cast_range=(1000, 1050, 1100, 1150), mana=(100, 90, 80, 70), cooldown=(18, 16, 14, 12)),
        Ability("wall_of_replica", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_LINE, AFFECT_ENEMIES, amount=(250, 350, 450), radius=200),
            Effect(EFFECT_SLOW, AREA_LINE, AFFECT_ENEMIES, amount=0.5, duration=4, radius=200),
        ), cast_range=900, mana=(150, 200, 250), cooldown=(100, 90, 80), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "energy_booster", "vitality_booster", "mekansm",
                                              "platemail")),

    # ---- supports ----------------------------------------------------------------------------------------------
    # frost_priestess: ranged support with a freezing nova, a rooting frostbite and a mana-restoring chant
    Hero("frost_priestess", "support", 600, 560, 60, 400, 45, 1.0, 1.5, 0.0, 0.2, 0.25, 45, 2.0, 1.7, 285, (
        Ability("crystal_nova", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(100, 150, 200, 250), radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=0.3, duration=(2, 2.5, 3, 3.5),
                   radius=400),
        ), cast_range=700, mana=(115, 135, 155, 175), cooldown=(12, 11, 10, 9)),
        Ability("frostbite", TT_UNIT, (
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=(1.5, 1.75, 2.0, 2.5)),
            Effect(EFFECT_DOT, AREA_TARGET, AFFECT_ENEMIES, amount=(30, 40, 50, 60), duration=3),
        ), unit_kind=UK_ENEMY, cast_range=(550, 600, 650, 700), mana=(140, 145, 150, 155), cooldown=(9, 8, 7, 6)),
        Ability("arcane_chant", TT_NO_TARGET, (
            Effect(EFFECT_MANA_REGEN, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(2, 3, 4, 5), duration=10,
                   radius=400),
        ), cast_range=0, mana=75, cooldown=20),
        Ability("freezing_field", TT_NO_TARGET, (
            Effect(EFFECT_DOT, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(60, 80, 100), duration=5, radius=400),
            Effect(EFFECT_SLOW, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=0.4, duration=5, radius=400),
        ), cast_range=0, mana=(200, 275, 350), cooldown=(110, 100, 90), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "energy_booster", "void_stone", "cloak",
                                              "mekansm")),

    # grave_keeper: ranged healer that poisons enemies and keeps allies alive with heals, shields and regen
    Hero("grave_keeper", "support", 550, 570, 64, 380, 40, 1.5, 1.3, 1.0, 0.25, 0.25, 47, 2.2, 1.7, 300, (
        Ability("poison_touch", TT_UNIT, (
            Effect(EFFECT_DOT, AREA_TARGET, AFFECT_ENEMIES, amount=(20, 30, 40, 50), duration=5),
            Effect(EFFECT_SLOW, AREA_TARGET, AFFECT_ENEMIES, amount=(0.2, 0.3, 0.4, 0.5), duration=3),
        ), unit_kind=UK_ENEMY, cast_range=(600, 650, 700, 750), mana=(100, 110, 120, 130), cooldown=(16, 14, 12, 10)),
        Ability("shadow_wave", TT_UNIT, (
            Effect(EFFECT_HEAL, AREA_TARGET, AFFECT_ALLIES, amount=(100, 180, 260, 340)),
        ), unit_kind=UK_ALLY, cast_range=800, mana=(90, 100, 110, 120), cooldown=(12, 10, 8, 6)),
        Ability("shallow_grave", TT_UNIT, (
            Effect(EFFECT_SHIELD, AREA_TARGET, AFFECT_ALLIES, amount=(150, 230, 310, 400), duration=8),
        ), unit_kind=UK_ALLY, cast_range=(550, 650, 750, 850), mana=(120, 130, 140, 150), cooldown=(20, 18, 16, 14)),
        Ability("sanctuary", TT_NO_TARGET, (
            Effect(EFFECT_HEAL, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(250, 350, 450), radius=400),
            Effect(EFFECT_REGEN, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(20, 30, 40), duration=6, radius=400),
        ), cast_range=0, mana=(200, 250, 300), cooldown=(100, 90, 80), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "energy_booster", "mekansm", "cloak",
                                              "void_stone")),

    # war_priest: melee support with a healing purification, a smiting stun and a protective armor aura
    Hero("war_priest", "support", MELEE, 640, 80, 320, 34, 2.5, 1.0, 3.0, 0.4, 0.25, 53, 2.4, 1.5, 300, (
        Ability("purification", TT_UNIT, (
            Effect(EFFECT_HEAL, AREA_TARGET, AFFECT_ALLIES, amount=(100, 180, 260, 340)),
        ), unit_kind=UK_ALLY, cast_range=(600, 650, 700, 750), mana=(100, 110, 120, 130), cooldown=(14, 12, 10, 8)),
        Ability("hammer_of_light", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(75, 125, 175, 225)),
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=(1.0, 1.2, 1.4, 1.6)),
        ), unit_kind=UK_ENEMY, cast_range=600, mana=(110, 120, 130, 140), cooldown=(16, 14, 12, 10)),
        Ability("guardian_aura", TT_NO_TARGET, (
            Effect(EFFECT_AURA, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(2, 3, 4, 5), radius=900),
        ), cast_range=0, mana=0, cooldown=0, passive=True),
        Ability("divine_guard", TT_NO_TARGET, (
            Effect(EFFECT_SHIELD, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(250, 325, 400), duration=10, radius=400),
        ), cast_range=0, mana=(150, 200, 250), cooldown=(110, 95, 80), ultimate=True),
    ), skill_priority=(0, 1, 2), item_build=("boots_of_speed", "mekansm", "energy_booster", "chainmail",
                                              "platemail")),

    # hex_shaman: ranged disabler with a stunning spike line, a soul siphon and a big single-target finger
    Hero("hex_shaman", "support", 600, 560, 62, 390, 42, 1.2, 1.4, 0.0, 0.25, 0.25, 48, 2.2, 1.7, 290, (
        Ability("earth_spike", TT_POINT, (
            Effect(EFFECT_DAMAGE, AREA_LINE, AFFECT_ENEMIES, amount=(80, 140, 200, 260), radius=125),
            Effect(EFFECT_STUN, AREA_LINE, AFFECT_ENEMIES, duration=(1.2, 1.5, 1.8, 2.1), radius=125),
        ), cast_range=850, mana=(100, 120, 140, 160), cooldown=(12, 11, 10, 9)),
        Ability("voodoo", TT_UNIT, (
            Effect(EFFECT_STUN, AREA_TARGET, AFFECT_ENEMIES, duration=(1.5, 1.75, 2.0, 2.5)),
        ), unit_kind=UK_ENEMY, cast_range=500, mana=(120, 140, 160, 180), cooldown=(20, 18, 16, 14)),
        Ability("soul_siphon", TT_UNIT, (
            Effect(EFFECT_DOT, AREA_TARGET, AFFECT_ENEMIES, amount=(20, 30, 40, 50), duration=5),
        ), unit_kind=UK_ENEMY, cast_range=800, mana=70, cooldown=(16, 14, 12, 10)),
        Ability("finger_of_death", TT_UNIT, (
            Effect(EFFECT_DAMAGE, AREA_TARGET, AFFECT_ENEMIES, amount=(450, 525, 600)),
        ), unit_kind=UK_ENEMY, cast_range=900, mana=(200, 275, 350), cooldown=(100, 85, 70), ultimate=True),
    ), skill_priority=(0, 2, 1), item_build=("boots_of_speed", "energy_booster", "void_stone", "blink_dagger",
                                              "cloak")),

    # grove_keeper: melee nature support with a rooting grasp near an enemy, living armor and a binding overgrowth
    Hero("grove_keeper", "support", MELEE, 660, 85, 300, 30, 3.0, 0.9, 4.0, 0.35, 0.25, 55, 2.6, 1.6, 290, (
        Ability("natures_grasp", TT_UNIT_OFFSET, (
            Effect(EFFECT_SLOW, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(0.25, 0.3, 0.35, 0.4), duration=4,
                   radius=300),
            Effect(EFFECT_DOT, AREA_CIRCLE_POINT, AFFECT_ENEMIES, amount=(20, 30, 40, 50), duration=4, radius=300),
        ), unit_kind=UK_ENEMY, cast_range=(600, 650, 700, 750), mana=(90, 100, 110, 120), cooldown=(18, 16, 14, 12)),
        Ability("living_armor", TT_UNIT, (
            Effect(EFFECT_REGEN, AREA_TARGET, AFFECT_ALLIES, amount=(10, 15, 20, 25), duration=10),
            Effect(EFFECT_SHIELD, AREA_TARGET, AFFECT_ALLIES, amount=(100, 150, 200, 250), duration=10),
        ), unit_kind=UK_ALLY, cast_range=900, mana=(80, 90, 100, 110), cooldown=(16, 14, 12, 10)),
        Ability("leech_seed", TT_UNIT, (
            Effect(EFFECT_DOT, AREA_TARGET, AFFECT_ENEMIES, amount=(25, 35, 45, 55), duration=4),
            Effect(EFFECT_HEAL, AREA_CIRCLE_SELF, AFFECT_ALLIES, amount=(100, 140, 180, 220), radius=300),
        ), unit_kind=UK_ENEMY, cast_range=(500, 550, 600, 650), mana=(100, 110, 120, 130), cooldown=(16, 14, 12, 10)),
        Ability("overgrowth", TT_NO_TARGET, (
            Effect(EFFECT_STUN, AREA_CIRCLE_SELF, AFFECT_ENEMIES, duration=(1.75, 2.0, 2.5), radius=400),
            Effect(EFFECT_DOT, AREA_CIRCLE_SELF, AFFECT_ENEMIES, amount=(40, 60, 80), duration=4, radius=400),
        ), cast_range=0, mana=(200, 250, 300), cooldown=(110, 100, 90), ultimate=True),
    ), skill_priority=(1, 0, 2), item_build=("boots_of_speed", "mekansm", "vitality_booster", "cloak",
                                              "platemail")),
)

HERO_INDEX = {h.name: i for i, h in enumerate(HEROES)}


def hero_id(name: str) -> int:
    """Index of a hero by name; a ValueError names the allowed heroes."""
    try:
        return HERO_INDEX[name]
    except KeyError:
        raise ValueError(f"unknown hero {name!r}; allowed: {sorted(HERO_INDEX)}") from None
