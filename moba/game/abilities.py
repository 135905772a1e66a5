"""Abilities as data: a small set of effect primitives that every hero ability and item active is composed of.

An ``Ability`` has a target type (Table 5 of the OpenAI Five paper, Five app. F), a unit-selection kind (which
units its unit parameter may name), per-level numbers (4 levels; ultimates use the first 3) and one or two
``Effect``s. The engine compiles every ability into flat numpy tables (``moba/game/tables.py``) so that the numba
kernels can apply them without Python objects.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# ---- effect primitives ---------------------------------------------------------------------------------------------
EFFECT_DAMAGE = 0  # magic damage: amount
EFFECT_STUN = 1  # stun: duration (s)
EFFECT_SLOW = 2  # move-speed slow: amount = fraction in [0, 1), duration (s)
EFFECT_HEAL = 3  # instant heal: amount (hp)
EFFECT_SHIELD = 4  # damage-absorbing shield: amount (hp), duration (s)
EFFECT_BLINK = 5  # caster moves instantly to the target point
EFFECT_DOT = 6  # damage over time (magic): amount = damage per second, duration (s)
EFFECT_AURA = 7  # passive: allies within radius get amount armor (ability must be passive)
EFFECT_REGEN = 8  # heal over time: amount = hp per second, duration (s)
EFFECT_MANA_REGEN = 9  # mana over time: amount = mana per second, duration (s)
EFFECT_TELEPORT = 10  # channel `duration` seconds, then move the caster to the target point
EFFECT_WARD = 11  # place an observer ward at the target point: amount = vision radius, duration = lifetime (s)
EFFECT_DAMAGE_BUFF = 12  # bonus attack damage: amount, duration (s)
N_EFFECTS = 13

# ---- effect areas --------------------------------------------------------------------------------------------------
AREA_TARGET = 0  # the selected unit only
AREA_SELF = 1  # the caster only
AREA_CIRCLE_SELF = 2  # units within `radius` of the caster
AREA_CIRCLE_POINT = 3  # units within `radius` of the target point
AREA_LINE = 4  # units within `radius` of the segment from the caster toward the point, cast-range long
AREA_CONE = 5  # units within cast range of the caster and inside a cone of half-angle CONE_HALF_ANGLE toward the point
CONE_HALF_ANGLE_DEG = 30.0

# ---- who an area effect touches -------------------------------------------------------------------------------------
AFFECT_ENEMIES = 0
AFFECT_ALLIES = 1  # includes the caster

# ---- action target types, Table 5 (Five app. F) -----------------------------------------------------------------
TT_NO_TARGET = 0  # reads: delay
TT_POINT = 1  # reads: delay, offset (from the caster)
TT_UNIT = 2  # reads: delay, unit selection
TT_UNIT_OFFSET = 3  # reads: delay, unit selection, offset (from the unit)
TT_TELEPORT = 4  # reads: delay, unit selection (teleport targets), offset (from the unit)
TT_WARD = 5  # reads: delay, offset (ward offset, from the caster)
N_TARGET_TYPES = 6
TARGET_TYPE_NAMES = ("no_target", "point", "unit", "unit_offset", "teleport", "ward")
TARGET_TYPE_READS_UNIT = (False, False, True, True, True, False)
TARGET_TYPE_READS_OFFSET = (False, True, False, True, True, True)

# ---- unit-selection kinds: which row of the observation's unit masks an action reads -------------------------------
UK_NONE = 0
UK_ENEMY = 1  # visible enemy heroes and creeps (spells do not affect buildings or wards)
UK_ALLY = 2  # allied heroes and creeps, the caster included (heals, shields)
UK_TELEPORT = 3  # allied buildings (town portal destinations)
UK_ATTACK = 4  # what the attack action may target: visible enemies that can be attacked, and deniable allied creeps
N_UNIT_KINDS = 5
UNIT_KIND_NAMES = ("none", "enemy", "ally", "teleport", "attack")


def _levels(v) -> tuple[float, float, float, float]:
    """Normalize a scalar or a 3/4-tuple of per-level values to 4 floats (ultimates repeat their last level)."""
    if isinstance(v, (int, float)):
        return (float(v),) * 4
    v = tuple(float(x) for x in v)
    if len(v) == 3:
        v = v + (v[2],)
    if len(v) != 4:
        raise ValueError(f"per-level values need 1, 3 or 4 entries, got {len(v)}")
    return v


@dataclass(frozen=True)
class Effect:
    kind: int
    area: int = AREA_TARGET
    affects: int = AFFECT_ENEMIES
    amount: tuple = (0.0, 0.0, 0.0, 0.0)
    duration: tuple = (0.0, 0.0, 0.0, 0.0)
    radius: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "amount", _levels(self.amount))
        object.__setattr__(self, "duration", _levels(self.duration))
        if not 0 <= self.kind < N_EFFECTS:
            raise ValueError(f"Effect.kind must be in [0, {N_EFFECTS}), got {self.kind}")
        if self.area in (AREA_CIRCLE_SELF, AREA_CIRCLE_POINT, AREA_LINE) and self.radius <= 0:
            raise ValueError(f"Effect with area {self.area} needs a positive radius")


@dataclass(frozen=True)
class Ability:
    name: str
    target_type: int
    effects: tuple
    unit_kind: int = UK_NONE
    cast_range: tuple = (600.0,) * 4
    mana: tuple = (0.0,) * 4
    cooldown: tuple = (10.0,) * 4
    passive: bool = False
    ultimate: bool = False

    def __post_init__(self):
        object.__setattr__(self, "cast_range", _levels(self.cast_range))
        object.__setattr__(self, "mana", _levels(self.mana))
        object.__setattr__(self, "cooldown", _levels(self.cooldown))
        object.__setattr__(self, "effects", tuple(self.effects))
        if not 1 <= len(self.effects) <= 2:
            raise ValueError(f"ability {self.name}: 1 or 2 effects, got {len(self.effects)}")
        reads_unit = TARGET_TYPE_READS_UNIT[self.target_type]
        if reads_unit != (self.unit_kind != UK_NONE):
            raise ValueError(f"ability {self.name}: target type {TARGET_TYPE_NAMES[self.target_type]} "
                             f"{'needs' if reads_unit else 'forbids'} a unit kind")
        if self.passive and any(e.kind != EFFECT_AURA for e in self.effects):
            raise ValueError(f"ability {self.name}: a passive ability may only have aura effects")


@dataclass(frozen=True)
class Hero:
    """A hero as data. Stats follow Dota 2 conventions (armor reduces physical damage, magic resistance magic damage;
    `attack_interval` is the base attack time in seconds)."""
    name: str
    role: str  # "carry", "mid", "offlane", "support"
    attack_range: float
    base_hp: float
    hp_per_level: float
    base_mana: float
    mana_per_level: float
    hp_regen: float
    mana_regen: float
    armor: float
    armor_per_level: float
    magic_resist: float
    damage: float
    damage_per_level: float
    attack_interval: float
    move_speed: float
    abilities: tuple  # 4 Abilities; the 4th is the ultimate
    skill_priority: tuple = (0, 1, 2)  # order in which basic abilities are maxed (scripted ability build, F.1)
    item_build: tuple = ()  # item names, bought in order (scripted purchasing, F.1)
    vision_day: float = 1800.0
    vision_night: float = 800.0

    def __post_init__(self):
        object.__setattr__(self, "abilities", tuple(self.abilities))
        if len(self.abilities) != 4:
            raise ValueError(f"hero {self.name}: exactly 4 abilities, got {len(self.abilities)}")
        if not self.abilities[3].ultimate or any(a.ultimate for a in self.abilities[:3]):
            raise ValueError(f"hero {self.name}: the 4th ability (and only it) is the ultimate")
        if sorted(self.skill_priority) != [0, 1, 2]:
            raise ValueError(f"hero {self.name}: skill_priority must be a permutation of (0, 1, 2)")


@dataclass(frozen=True)
class Item:
    name: str
    cost: int
    consumable: bool = False
    charges: int = 0  # consumables: uses per purchase
    damage: float = 0.0
    armor: float = 0.0
    hp: float = 0.0
    mana: float = 0.0
    hp_regen: float = 0.0
    mana_regen: float = 0.0
    move_speed: float = 0.0
    magic_resist: float = 0.0
    active: Ability | None = field(default=None)
