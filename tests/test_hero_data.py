"""Sanity checks on the hero pool data (moba/game/heroes.py)."""
import pytest

from moba.game.abilities import (AFFECT_ALLIES, AFFECT_ENEMIES, AREA_TARGET, EFFECT_AURA, EFFECT_BLINK, EFFECT_DAMAGE,
                                EFFECT_DOT, EFFECT_SLOW, EFFECT_STUN, EFFECT_TELEPORT, EFFECT_WARD, N_EFFECTS,
                                TT_NO_TARGET, UK_ALLY)
from moba.game.heroes import HERO_INDEX, HEROES, hero_id
from moba.game.items import CONSUMABLES, ITEM_INDEX

HOSTILE = {EFFECT_DAMAGE, EFFECT_STUN, EFFECT_SLOW, EFFECT_DOT}


def _abilities():
    return [a for h in HEROES for a in h.abilities]


def test_eighteen_unique_heroes():
    assert len(HEROES) == 18
    assert len({h.name for h in HEROES}) == 18
    assert len({a.name for a in _abilities()}) == len(_abilities())


def test_every_effect_primitive_except_teleport_and_ward_used():
    used = {e.kind for a in _abilities() for e in a.effects}
    assert used == set(range(N_EFFECTS)) - {EFFECT_TELEPORT, EFFECT_WARD}


def test_target_types_0_to_3_used():
    assert {a.target_type for a in _abilities()} == {0, 1, 2, 3}


def test_item_builds_exist_and_are_not_consumable():
    for h in HEROES:
        assert 4 <= len(h.item_build) <= 6, h.name
        for name in h.item_build:
            assert name in ITEM_INDEX, (h.name, name)
            assert name not in CONSUMABLES, (h.name, name)


def test_exactly_one_ultimate_in_slot_four():
    for h in HEROES:
        assert len(h.abilities) == 4
        assert [a.ultimate for a in h.abilities] == [False, False, False, True], h.name


def test_roles_cover_all_four():
    roles = [h.role for h in HEROES]
    assert set(roles) == {"carry", "mid", "offlane", "support"}


def test_melee_and_ranged_mix():
    assert sum(h.attack_range <= 150 for h in HEROES) >= 6
    assert sum(h.attack_range >= 450 for h in HEROES) >= 6


def test_effects_affect_the_right_side_and_passives_are_auras():
    for h in HEROES:
        assert sum(a.passive for a in h.abilities) <= 1, h.name
        for a in h.abilities:
            for e in a.effects:
                assert e.affects == (AFFECT_ENEMIES if e.kind in HOSTILE else AFFECT_ALLIES), (h.name, a.name)
                if a.unit_kind == UK_ALLY and e.area == AREA_TARGET:
                    assert e.affects == AFFECT_ALLIES
            if a.passive:
                assert a.target_type == TT_NO_TARGET and a.cast_range[0] == 0 and a.mana[0] == 0
                assert all(e.kind == EFFECT_AURA for e in a.effects)
            else:
                assert all(e.kind != EFFECT_AURA for e in a.effects)
            assert EFFECT_BLINK not in {e.kind for e in a.effects} or a.target_type == 1


def test_hero_id():
    for name, i in HERO_INDEX.items():
        assert hero_id(name) == i and HEROES[i].name == name
    with pytest.raises(ValueError) as info:
        hero_id("no_such_hero")
    msg = str(info.value)
    assert "no_such_hero" in msg
    assert all(h.name in msg for h in HEROES)
