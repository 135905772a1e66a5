"""The engine (moba/game): determinism, save/restore, building protection, creep waves, combat, death and respawn,
level-ups and scripted purchasing. Scenarios are built by writing the state arrays directly."""
import math

import numpy as np
import pytest
from moba_testlib import (OPEN_SPOT, clear_creeps, creeps_of, make_game, no_orders, order, place, random_orders,
                          refresh_vision, units_of)

from moba.game import kernels
from moba.game.builds import ability_build
from moba.game.constants import (BUYBACK_BASE_GOLD, BUYBACK_COOLDOWN_S, BUYBACK_PER_LEVEL2, BUYBACK_PER_MINUTE,
                                CREEP_STATS, DIRE, DT, MAX_LEVEL, MAX_UNITS, MEGA_CREEP_MULT, RADIANT, RESPAWN_BASE_S,
                                RESPAWN_PER_LEVEL_S, SUPER_CREEP_MULT, TICKS_PER_SECOND, UT_BARRACKS_MELEE,
                                UT_BARRACKS_RANGED, UT_CREEP_MELEE, UT_CREEP_RANGED, UT_SHRINE, UT_TOWER, UT_WARD,
                                WAVE_INTERVAL_S, XP_TO_LEVEL)
from moba.game.engine import Game, GameSetup
from moba.game.heroes import HEROES
from moba.game.items import item_id
from moba.game.state import (CREEP_MEGA, CREEP_NORMAL, CREEP_SUPER, F_ARMOR, F_DMG, F_HP, F_MAXHP, F_SPEED, F_X, F_Y,
                            G_BB_CD, G_EARNED, G_GOLD, G_RESPAWN, G_SPENT, G_XP, GI_NEXT_UID, H_AB0, H_AB3, H_BUILD,
                            H_BUYBACKS, H_DEATHS, H_DN, H_IT0, H_IT5, H_LEVEL, H_LH, I_ALIVE, I_CREEP_KIND, I_INVULN,
                            I_LANE, I_ORDER, I_TARGET, I_TEAM, I_TYPE, I_UID, I_USED, OK_ATTACK, OK_BUYBACK, ORDER_IDLE,
                            GameState)

MODES = ("5v5", "1v1")


def _building(g, type_, team, lane=None, tier=None):
    rows = g._rows(type_, team, lane, tier)
    assert len(rows) == 1, (type_, team, lane, tier, rows)
    return rows[0]


def _kill(g, u):
    g.s.uf[u, F_HP] = 0.0


def _lone_creep(g, team, typ=UT_CREEP_MELEE):
    """Steps once so that the first wave spawns, then removes every creep but one of `team` and stops the waves."""
    g.step(None)
    keep = [u for u in creeps_of(g, team) if g.s.ui[u, I_TYPE] == typ][0]
    clear_creeps(g, keep=(keep,))
    return keep


# ---- determinism and save/restore ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_same_setup_and_orders_are_bit_identical(mode):
    setup = GameSetup(mode=mode, start_gold=tuple([3000.0] * (10 if mode == "5v5" else 2)))
    a, b = Game(setup), Game(setup)
    ra, rb = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(300):
        ea = a.step(random_orders(a, ra))
        eb = b.step(random_orders(b, rb))
        np.testing.assert_array_equal(ea, eb)
    assert a.s.equals(b.s)
    assert a.time == pytest.approx(300 * a.frameskip / TICKS_PER_SECOND)
    # the random orders really did things: heroes moved away from the fountain, units died
    assert np.any(a.s.hi[:, H_LH] > 0) or any(t.kills or t.towers for t in a.stats) or \
        np.linalg.norm(a.s.uf[0, [F_X, F_Y]] - np.array(a.map.fountain(RADIANT))) > 1000
    # a different order sequence gives a different game
    c = Game(setup)
    rc = np.random.default_rng(8)
    for _ in range(300):
        c.step(random_orders(c, rc))
    assert not a.s.equals(c.s)


def test_equals_detects_a_single_bit():
    g = make_game("1v1")
    g.step(None)
    st = g.s.copy()
    assert st.equals(g.s)
    st.uf[3, F_HP] = np.nextafter(st.uf[3, F_HP], 0.0)
    assert not st.equals(g.s)
    st = g.s.copy()
    st.vis[1, 0] ^= 1
    assert not st.equals(g.s)


@pytest.mark.parametrize("mode", MODES)
def test_save_load_round_trip_and_continue(mode):
    g = make_game(mode)
    rng = np.random.default_rng(3)
    for _ in range(120):
        g.step(random_orders(g, rng))
    data = g.save()
    h = Game.load(data)
    assert h.s.equals(g.s)
    assert h.setup == g.setup
    assert [vars(t) for t in h.stats] == [vars(t) for t in g.stats]
    assert Game.load(h.save()).s.equals(g.s)
    assert GameState.from_bytes(g.s.to_bytes()).equals(g.s)
    for _ in range(150):
        o = random_orders(g, rng)
        np.testing.assert_array_equal(g.step(o.copy()), h.step(o.copy()))
    assert g.s.equals(h.s)
    assert g.summary() == h.summary()


# ---- building protection ---------------------------------------------------------------------------------------------
def test_protection_order_5v5():
    g = make_game("5v5")
    g.step(None)
    ui = g.s.ui
    for team in (RADIANT, DIRE):
        for lane in range(3):
            assert ui[_building(g, UT_TOWER, team, lane, 1), I_INVULN] == 0
            assert ui[_building(g, UT_TOWER, team, lane, 2), I_INVULN] == 1
            assert ui[_building(g, UT_TOWER, team, lane, 3), I_INVULN] == 1
            assert ui[_building(g, UT_BARRACKS_MELEE, team, lane), I_INVULN] == 1
            assert ui[_building(g, UT_BARRACKS_RANGED, team, lane), I_INVULN] == 1
        for u in g._rows(UT_TOWER, team, None, 4) + g._rows(UT_SHRINE, team) + [g.ancient_idx[team]]:
            assert ui[u, I_INVULN] == 1
        assert ui[g.fountain_idx[team], I_INVULN] == 1
    # killing Radiant's top T1 opens the top T2 and nothing else
    _kill(g, _building(g, UT_TOWER, RADIANT, 0, 1))
    g.step(None)
    assert ui[_building(g, UT_TOWER, RADIANT, 0, 1), I_ALIVE] == 0
    assert ui[_building(g, UT_TOWER, RADIANT, 0, 2), I_INVULN] == 0
    assert ui[_building(g, UT_TOWER, RADIANT, 0, 3), I_INVULN] == 1
    for lane in (1, 2):
        assert ui[_building(g, UT_TOWER, RADIANT, lane, 2), I_INVULN] == 1
    for lane in range(3):
        assert ui[_building(g, UT_TOWER, DIRE, lane, 2), I_INVULN] == 1
    # T2 -> T3 (and the shrines, once a T2 is down); T3 -> that lane's barracks and the T4s; T4s -> ancient
    _kill(g, _building(g, UT_TOWER, RADIANT, 0, 2))
    g.step(None)
    assert ui[_building(g, UT_TOWER, RADIANT, 0, 3), I_INVULN] == 0
    assert ui[_building(g, UT_BARRACKS_MELEE, RADIANT, 0), I_INVULN] == 1
    assert all(ui[u, I_INVULN] == 0 for u in g._rows(UT_SHRINE, RADIANT))
    assert all(ui[u, I_INVULN] == 1 for u in g._rows(UT_SHRINE, DIRE))
    _kill(g, _building(g, UT_TOWER, RADIANT, 0, 3))
    g.step(None)
    assert ui[_building(g, UT_BARRACKS_MELEE, RADIANT, 0), I_INVULN] == 0
    assert ui[_building(g, UT_BARRACKS_RANGED, RADIANT, 0), I_INVULN] == 0
    assert ui[_building(g, UT_BARRACKS_MELEE, RADIANT, 1), I_INVULN] == 1
    assert all(ui[u, I_INVULN] == 0 for u in g._rows(UT_TOWER, RADIANT, None, 4))
    assert ui[g.ancient_idx[RADIANT], I_INVULN] == 1
    t4 = g._rows(UT_TOWER, RADIANT, None, 4)
    _kill(g, t4[0])
    g.step(None)
    assert ui[g.ancient_idx[RADIANT], I_INVULN] == 1
    _kill(g, t4[1])
    g.step(None)
    assert ui[g.ancient_idx[RADIANT], I_INVULN] == 0
    assert ui[g.ancient_idx[DIRE], I_INVULN] == 1


def test_protection_order_1v1_crystal():
    g = make_game("1v1")
    g.step(None)
    ui = g.s.ui
    assert len(g._rows(UT_TOWER, RADIANT)) == 2 and not g._rows(UT_BARRACKS_MELEE, RADIANT)
    t1, t2 = _building(g, UT_TOWER, RADIANT, 1, 1), _building(g, UT_TOWER, RADIANT, 1, 2)
    crystal = g.ancient_idx[RADIANT]
    assert (ui[t1, I_INVULN], ui[t2, I_INVULN], ui[crystal, I_INVULN]) == (0, 1, 1)
    _kill(g, t1)
    g.step(None)
    assert (ui[t2, I_INVULN], ui[crystal, I_INVULN]) == (0, 1)
    _kill(g, t2)
    g.step(None)
    assert ui[crystal, I_INVULN] == 0
    assert ui[g.ancient_idx[DIRE], I_INVULN] == 1


def test_invulnerable_building_takes_no_damage():
    g = make_game("1v1")
    g.step(None)
    t2 = _building(g, UT_TOWER, DIRE, 1, 2)
    hp = g.s.uf[t2, F_HP]
    assert kernels.deal_damage(g.s.uf, g.s.ui, g.s.hf, g.s.gf, 0, t2, 500.0, False) == 0.0
    assert g.s.uf[t2, F_HP] == hp


# ---- creep waves -----------------------------------------------------------------------------------------------------
def _step_to_wave(g, wave_index):
    """Steps until wave `wave_index` (0-based) has spawned; returns the units of that wave and its spawn time."""
    s = g.s
    target_t = wave_index * WAVE_INTERVAL_S
    for _ in range(int((target_t + WAVE_INTERVAL_S) / (g.frameskip * DT)) + 2):
        uid0, t0 = s.gi[GI_NEXT_UID], g.time
        g.step(None)
        if s.gi[GI_NEXT_UID] != uid0:
            if t0 + 1e-6 >= target_t - g.frameskip * DT:
                break
    else:
        raise AssertionError(f"wave {wave_index} did not spawn")
    new = [u for u in range(MAX_UNITS) if s.ui[u, I_USED] == 1 and s.ui[u, I_UID] >= uid0]
    return new, t0


def test_first_wave_time_and_spawn_offsets_set_the_start():
    """The game state the evaluation jitter varies: the first wave at first_wave_s (the next ones every 30 s after
    it), each hero's spawn point moved by its offset."""
    offsets = tuple((10.0 * h, -5.0 * h) for h in range(10))
    base, g = make_game("5v5"), make_game("5v5", first_wave_s=2.0, spawn_offsets=offsets)
    np.testing.assert_allclose(g.s.uf[:10, [F_X, F_Y]] - base.s.uf[:10, [F_X, F_Y]], offsets)
    for wave in range(2):
        _, t0 = _step_to_wave(g, wave)
        start = 2.0 + wave * WAVE_INTERVAL_S
        assert start - g.frameskip * DT - 1e-6 <= t0 <= start + 1e-6
    for kw, word in [({"spawn_offsets": ((0.0, 0.0),) * 9}, "one entry per hero"),
                     ({"spawn_offsets": ((500.0, 0.0),) * 10}, "200"), ({"first_wave_s": 30.0}, "first_wave_s"),
                     ({"first_wave_s": -1.0}, "first_wave_s")]:
        with pytest.raises(ValueError, match=word):
            make_game("5v5", **kw)


@pytest.mark.parametrize("mode", ["5v5", "1v1"])
def test_ancient_hp_scale_sets_both_ancients_health_and_nothing_else(mode):
    """A curriculum on the goal (the ancient_hp_scale schedule): both ancients start with that share of their
    health, as their maximum; every other unit is as in the full game."""
    base, g = make_game(mode), make_game(mode, ancient_hp_scale=0.25)
    ancients = list(base.ancient_idx)
    np.testing.assert_allclose(g.s.uf[ancients, F_HP], 0.25 * base.s.uf[ancients, F_HP])
    np.testing.assert_allclose(g.s.uf[ancients, F_MAXHP], g.s.uf[ancients, F_HP])
    assert base.s.uf[ancients[0], F_HP] == 3500.0
    others = [u for u in range(base.s.uf.shape[0]) if u not in ancients]
    np.testing.assert_array_equal(g.s.uf[others], base.s.uf[others])
    for bad in (0.0, 1.5, -0.1, True, "half"):
        with pytest.raises(ValueError, match="ancient_hp_scale"):
            make_game(mode, ancient_hp_scale=bad)


@pytest.mark.parametrize("mode,lanes", [("5v5", (0, 1, 2)), ("1v1", (1,))])
def test_creep_waves_every_30s(mode, lanes):
    g = make_game(mode)
    spawn_times = []
    for wave in range(3):
        new, t0 = _step_to_wave(g, wave)
        spawn_times.append(t0)
        assert len(new) == 8 * len(lanes)
        for team in (RADIANT, DIRE):
            for lane in range(3):
                mine = [u for u in new if g.s.ui[u, I_TEAM] == team and g.s.ui[u, I_LANE] == lane]
                if lane not in lanes:
                    assert mine == []
                    continue
                types = sorted(int(g.s.ui[u, I_TYPE]) for u in mine)
                assert types == [UT_CREEP_MELEE] * 3 + [UT_CREEP_RANGED]
                assert all(g.s.ui[u, I_CREEP_KIND] == CREEP_NORMAL for u in mine)
                melee = [u for u in mine if g.s.ui[u, I_TYPE] == UT_CREEP_MELEE]
                assert g.s.uf[melee[0], F_MAXHP] == CREEP_STATS[0][0]
    # spawned on the first tick of each 30 s interval (the wave tick lies inside the step that starts at t0)
    for wave, t0 in enumerate(spawn_times):
        assert wave * WAVE_INTERVAL_S - g.frameskip * DT - 1e-6 <= t0 <= wave * WAVE_INTERVAL_S + 1e-6


def test_super_and_mega_creeps():
    g = make_game("5v5")
    g.step(None)
    # Dire's mid melee barracks falls: Radiant's next mid wave has super melee creeps, everything else is normal
    _kill(g, g.rax[DIRE, 1, 0])
    new, _ = _step_to_wave(g, 1)
    for u in new:
        team, lane, typ, kind = (int(g.s.ui[u, c]) for c in (I_TEAM, I_LANE, I_TYPE, I_CREEP_KIND))
        expect_super = team == RADIANT and lane == 1 and typ == UT_CREEP_MELEE
        assert kind == (CREEP_SUPER if expect_super else CREEP_NORMAL), (team, lane, typ, kind)
        if expect_super:
            assert g.s.uf[u, F_MAXHP] == pytest.approx(CREEP_STATS[0][0] * SUPER_CREEP_MULT[0])
            assert g.s.uf[u, F_DMG] == pytest.approx(CREEP_STATS[0][1] * SUPER_CREEP_MULT[1])
    # every Dire barracks falls: Radiant's creeps are mega creeps in every lane
    for lane in range(3):
        for k in range(2):
            _kill(g, g.rax[DIRE, lane, k])
    new, _ = _step_to_wave(g, 2)
    rad = [u for u in new if g.s.ui[u, I_TEAM] == RADIANT]
    assert len(rad) == 12
    assert all(g.s.ui[u, I_CREEP_KIND] == CREEP_MEGA for u in rad)
    melee = [u for u in rad if g.s.ui[u, I_TYPE] == UT_CREEP_MELEE]
    assert g.s.uf[melee[0], F_MAXHP] == pytest.approx(CREEP_STATS[0][0] * MEGA_CREEP_MULT[0])
    assert all(g.s.ui[u, I_CREEP_KIND] == CREEP_NORMAL for u in new if g.s.ui[u, I_TEAM] == DIRE)


# ---- combat ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("armor", [-10.0, -3.0, 0.0, 2.0, 5.5, 12.0, 30.0])
def test_armor_multiplier_formula(armor):
    expected = 1.0 - 0.052 * armor / (0.9 + 0.048 * abs(armor))
    assert kernels.armor_multiplier(armor) == pytest.approx(expected, rel=1e-12)


def test_armor_multiplier_shape():
    assert kernels.armor_multiplier(0.0) == 1.0
    assert kernels.armor_multiplier(-5.0) > 1.0 > kernels.armor_multiplier(5.0) > kernels.armor_multiplier(20.0) > 0


def test_hero_attack_damage_uses_armor():
    g = make_game("1v1")
    c = _lone_creep(g, DIRE)
    place(g, 0, *OPEN_SPOT)
    place(g, c, OPEN_SPOT[0] + 100, OPEN_SPOT[1])
    place(g, 1, 7500, 7500)
    refresh_vision(g)
    hp0 = g.s.uf[c, F_HP]
    g.step(order(g, 0, OK_ATTACK, unit=c))
    expected = g.s.uf[0, F_DMG] * kernels.armor_multiplier(g.s.uf[c, F_ARMOR])
    assert g.s.ui[0, I_TARGET] == c
    assert hp0 - g.s.uf[c, F_HP] == pytest.approx(expected)  # one hit: the attack interval is > 4 ticks


def test_last_hit_gives_bounty_and_counts():
    g = make_game("1v1")
    c = _lone_creep(g, DIRE)
    place(g, 0, *OPEN_SPOT)
    place(g, c, OPEN_SPOT[0] + 100, OPEN_SPOT[1])
    place(g, 1, 7500, 7500)
    g.s.uf[c, F_HP] = 10.0
    refresh_vision(g)
    earned0, xp0, lh0, xp_enemy0 = g.s.hf[0, G_EARNED], g.s.hf[0, G_XP], g.s.hi[0, H_LH], g.s.hf[1, G_XP]
    ev = g.step(order(g, 0, OK_ATTACK, unit=c))
    passive = g.frameskip * DT * 1.5
    assert g.s.ui[c, I_ALIVE] == 0 and g.s.ui[c, I_USED] == 0
    assert g.s.hi[0, H_LH] == lh0 + 1
    assert g.s.hi[0, H_DN] == 0
    assert g.s.hf[0, G_EARNED] - earned0 == pytest.approx(CREEP_STATS[0][6] + passive)
    assert g.s.hf[0, G_XP] - xp0 == pytest.approx(CREEP_STATS[0][7])
    assert g.s.hf[1, G_XP] == xp_enemy0
    assert len(ev) == 1 and ev[0][1] == c and ev[0][2] == 0  # victim, killer


def test_deny_counts_and_gives_no_gold():
    g = make_game("1v1")
    c = _lone_creep(g, RADIANT)
    place(g, 0, *OPEN_SPOT)
    place(g, c, OPEN_SPOT[0] + 100, OPEN_SPOT[1])
    place(g, 1, OPEN_SPOT[0] + 600, OPEN_SPOT[1])  # the enemy hero is nearby: a deny denies it the xp
    g.s.uf[c, F_HP] = 10.0
    refresh_vision(g)
    earned0, xp_enemy0 = g.s.hf[0, G_EARNED], g.s.hf[1, G_XP]
    g.step(order(g, 0, OK_ATTACK, unit=c))
    assert g.s.ui[c, I_ALIVE] == 0
    assert g.s.hi[0, H_DN] == 1
    assert g.s.hi[0, H_LH] == 0
    assert g.s.hf[0, G_EARNED] - earned0 == pytest.approx(g.frameskip * DT * 1.5)
    assert g.s.hf[1, G_XP] == xp_enemy0


def test_healthy_allied_creep_cannot_be_attacked():
    g = make_game("1v1")
    c = _lone_creep(g, RADIANT)
    place(g, 0, *OPEN_SPOT)
    place(g, c, OPEN_SPOT[0] + 100, OPEN_SPOT[1])
    place(g, 1, 7500, 7500)
    g.s.uf[c, F_HP] = 0.6 * g.s.uf[c, F_MAXHP]
    refresh_vision(g)
    assert not kernels.can_attack(g.s.uf, g.s.ui, g.s.vis, 0, c)
    hp0 = g.s.uf[c, F_HP]
    g.step(order(g, 0, OK_ATTACK, unit=c))
    assert g.s.ui[0, I_ORDER] == ORDER_IDLE
    assert g.s.uf[c, F_HP] >= hp0
    # below half health it becomes deniable
    g.s.uf[c, F_HP] = 0.49 * g.s.uf[c, F_MAXHP]
    assert kernels.can_attack(g.s.uf, g.s.ui, g.s.vis, 0, c)


def test_tower_aggro_on_hero_attacking_hero():
    g = make_game("1v1")
    c = _lone_creep(g, RADIANT)
    tower = _building(g, UT_TOWER, DIRE, 1, 1)
    tx, ty = g.s.uf[tower, F_X], g.s.uf[tower, F_Y]
    place(g, c, tx - 300, ty - 300)  # a Radiant creep under the Dire tower: the tower's preferred target
    place(g, 1, tx - 350, ty - 100)  # the Dire hero under its own tower
    place(g, 0, tx - 450, ty - 100)  # the Radiant hero next to it, also in the tower's range
    g.s.uf[[0, 1], F_HP] = 1e4
    g.s.uf[[0, 1], F_MAXHP] = 1e4
    refresh_vision(g)
    g.step(None)
    assert g.s.ui[tower, I_TARGET] == c  # towers prefer creeps over heroes
    g.step(order(g, 0, OK_ATTACK, unit=1))
    assert g.s.uf[1, F_HP] < 1e4  # the Radiant hero hit the Dire hero ...
    assert g.s.ui[tower, I_TARGET] == 0  # ... and drew the tower's fire
    for _ in range(8):  # the tower's attack comes off cooldown and hits the Radiant hero
        g.step(None)
    assert g.s.ui[tower, I_TARGET] == 0
    assert g.s.uf[0, F_HP] < 1e4 - 50.0


# ---- death, respawn, buyback -----------------------------------------------------------------------------------------
def test_hero_death_respawn_timer_and_fountain():
    g = make_game("1v1")
    place(g, 0, *OPEN_SPOT)
    g.s.hf[0, G_XP] = XP_TO_LEVEL[2]
    g.step(None)
    assert g.s.hi[0, H_LEVEL] == 3
    g.s.uf[0, F_HP] = 0.0
    g.step(None)
    assert g.s.ui[0, I_ALIVE] == 0 and g.s.hi[0, H_DEATHS] == 1
    respawn = RESPAWN_BASE_S + RESPAWN_PER_LEVEL_S * 3
    assert g.s.hf[0, G_RESPAWN] == pytest.approx(respawn - g.frameskip * DT, abs=1e-9)
    steps = 0
    while g.s.ui[0, I_ALIVE] == 0:
        g.step(None)
        steps += 1
        assert steps < 1000
    dead_for = (steps + 1) * g.frameskip * DT
    # respawns in the step that contains the tick `respawn` seconds after death (one tick of float slack)
    assert respawn - 1e-9 <= dead_for <= respawn + g.frameskip * DT + DT + 1e-9
    f = g.fountain_idx[RADIANT]
    np.testing.assert_allclose(g.s.uf[0, [F_X, F_Y]], g.s.uf[f, [F_X, F_Y]] + 150.0)
    assert g.s.uf[0, F_HP] > 0.95 * g.s.uf[0, F_MAXHP]


def test_buyback():
    g = make_game("1v1")
    place(g, 0, *OPEN_SPOT)
    g.s.uf[0, F_HP] = 0.0
    g.step(None)
    assert g.s.ui[0, I_ALIVE] == 0
    # not enough gold: nothing happens
    g.s.hf[0, G_GOLD] = 50.0
    g.step(order(g, 0, OK_BUYBACK))
    assert g.s.ui[0, I_ALIVE] == 0 and g.s.hi[0, H_BUYBACKS] == 0
    g.s.hf[0, G_GOLD] = 5000.0
    t = g.time
    g.step(order(g, 0, OK_BUYBACK))
    cost = BUYBACK_BASE_GOLD + BUYBACK_PER_LEVEL2 * 1 + BUYBACK_PER_MINUTE * t / 60.0
    assert g.s.ui[0, I_ALIVE] == 1
    assert g.s.hi[0, H_BUYBACKS] == 1
    assert g.s.hf[0, G_GOLD] == pytest.approx(5000.0 - cost + g.frameskip * DT * 1.5, abs=1e-6)
    assert g.s.hf[0, G_BB_CD] == pytest.approx(BUYBACK_COOLDOWN_S - (g.frameskip - 1) * DT)
    f = g.fountain_idx[RADIANT]
    np.testing.assert_allclose(g.s.uf[0, [F_X, F_Y]], g.s.uf[f, [F_X, F_Y]] + 150.0)
    # on cooldown: a second death cannot be bought back
    g.s.uf[0, F_HP] = 0.0
    g.step(None)
    g.step(order(g, 0, OK_BUYBACK))
    assert g.s.ui[0, I_ALIVE] == 0 and g.s.hi[0, H_BUYBACKS] == 1
    # buyback on a live hero does nothing
    g2 = make_game("1v1")
    g2.s.hf[0, G_GOLD] = 5000.0
    g2.step(order(g2, 0, OK_BUYBACK))
    assert g2.s.hi[0, H_BUYBACKS] == 0 and g2.s.hf[0, G_BB_CD] == 0.0


# ---- levels and ability builds ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("hero", ["blademaster", "tidal_giant", "hex_shaman"])
def test_level_ups_learn_the_scripted_build(hero):
    g = make_game("1v1", lineup=(hero, "marksman"))
    place(g, 0, *OPEN_SPOT)
    d = HEROES[[h.name for h in HEROES].index(hero)]
    build = ability_build(d.skill_priority)
    hp_prev = g.s.uf[0, F_MAXHP]
    for level in range(2, MAX_LEVEL + 1):
        g.s.hf[0, G_XP] = XP_TO_LEVEL[level - 1]
        g.step(None)
        assert g.s.hi[0, H_LEVEL] == level
        abl = g.s.hi[0, H_AB0:H_AB3 + 1]
        expected = [sum(1 for p in build[:level] if p == k) for k in range(4)]
        assert abl.tolist() == expected
        if level <= 14:
            assert abl.sum() == level
        assert abl[3] == sum(1 for L in (6, 12, 18) if L <= level)
        assert g.s.uf[0, F_MAXHP] == pytest.approx(hp_prev + d.hp_per_level)
        hp_prev = g.s.uf[0, F_MAXHP]
    assert g.s.hi[0, H_AB0:H_AB3 + 1].tolist() == [4, 4, 4, 3]
    # the first basic ability maxed is the first of the skill priority
    assert build[0] == d.skill_priority[0]


def test_several_levels_at_once():
    g = make_game("1v1")
    g.s.hf[0, G_XP] = XP_TO_LEVEL[6] + 1.0  # level 7
    g.step(None)
    assert g.s.hi[0, H_LEVEL] == 7
    assert g.s.hi[0, H_AB0:H_AB3 + 1].sum() == 7
    assert g.s.hi[0, H_AB3] == 1


# ---- scripted purchasing ---------------------------------------------------------------------------------------------
def _step_until_purchase_check(g, n=1):
    for _ in range(n * 8):
        g.step(None)


def test_scripted_purchases_follow_the_build():
    g = make_game("1v1", lineup=("marksman", "blademaster"), start_gold=(10000.0, 600.0))
    d = HEROES[[h.name for h in HEROES].index("marksman")]
    dmg0, speed0 = g.s.uf[0, F_DMG], g.s.uf[0, F_SPEED]
    assert g.s.hf[0, G_SPENT] == 0.0
    _step_until_purchase_check(g)
    inv = [int(i) for i in g.s.hi[0, H_IT0:H_IT5 + 1] if i >= 0]
    assert item_id("boots_of_speed") in inv and item_id("healing_salve") in inv
    assert item_id("town_portal_scroll") in inv
    assert g.s.hi[0, H_BUILD] == 1
    assert g.s.uf[0, F_SPEED] == speed0 + 45.0
    spent = g.s.hf[0, G_SPENT]
    assert spent >= 500.0 + 110.0
    _step_until_purchase_check(g)  # blades of attack: +9 damage
    assert item_id("blades_of_attack") in g.s.hi[0, H_IT0:H_IT5 + 1]
    assert g.s.uf[0, F_DMG] == pytest.approx(dmg0 + 9.0)
    assert g.s.hf[0, G_SPENT] == pytest.approx(spent + 450.0)
    _step_until_purchase_check(g)  # claymore: +20 damage
    assert item_id("claymore") in g.s.hi[0, H_IT0:H_IT5 + 1]
    assert g.s.uf[0, F_DMG] == pytest.approx(dmg0 + 29.0)
    assert g.s.hi[0, H_BUILD] == 3
    # gold is conserved: start + earned = current + spent
    assert g.s.hf[0, G_GOLD] + g.s.hf[0, G_SPENT] == pytest.approx(10000.0 + g.s.hf[0, G_EARNED])
    assert d.item_build[:3] == ("boots_of_speed", "blades_of_attack", "claymore")


def test_no_purchase_without_gold():
    g = make_game("1v1", start_gold=(0.0, 0.0))
    _step_until_purchase_check(g, 2)
    assert g.s.hf[0, G_SPENT] == 0.0
    assert g.s.hi[0, H_BUILD] == 0
    assert [int(i) for i in g.s.hi[0, H_IT0:H_IT5 + 1] if i >= 0] == [item_id("town_portal_scroll")]


# ---- wards -----------------------------------------------------------------------------------------------------------
def test_expired_ward_gives_nothing_and_killed_ward_gives_gold():
    g = make_game("1v1")
    g.step(None)
    clear_creeps(g)
    place(g, 0, *OPEN_SPOT)
    place(g, 1, OPEN_SPOT[0] + 300, OPEN_SPOT[1])
    kernels.spawn_ward(g.s.uf, g.s.ui, g.s.gi, RADIANT, OPEN_SPOT[0] + 100, OPEN_SPOT[1], 1600.0, 0.5)
    ward = units_of(g, UT_WARD)[0]
    xp0, earned0 = g.s.hf[:, G_XP].copy(), g.s.hf[:, G_EARNED].copy()
    for _ in range(5):
        g.step(None)
    assert g.s.ui[ward, I_USED] == 0  # expired after 0.5 s
    passive = 5 * g.frameskip * DT * 1.5
    np.testing.assert_allclose(g.s.hf[:, G_XP], xp0)
    np.testing.assert_allclose(g.s.hf[:, G_EARNED] - earned0, passive)
    # an enemy ward killed by a hero: its bounty, but no last hit
    kernels.spawn_ward(g.s.uf, g.s.ui, g.s.gi, RADIANT, OPEN_SPOT[0] + 350, OPEN_SPOT[1], 1600.0, 100.0)
    ward = units_of(g, UT_WARD)[0]
    g.s.uf[ward, F_HP] = 1.0
    refresh_vision(g)
    earned0 = g.s.hf[1, G_EARNED]
    g.step(order(g, 1, OK_ATTACK, unit=ward))
    assert g.s.ui[ward, I_USED] == 0
    assert g.s.hf[1, G_EARNED] - earned0 == pytest.approx(50.0 + g.frameskip * DT * 1.5)
    assert g.s.hi[1, H_LH] == 0


def test_a_game_can_start_late_with_buildings_down_and_heroes_placed():
    """Start states (GameSetup.start_destroyed, start_positions): the named buildings are dead before the first tick,
    count for no side and lift the protection they gave; each hero starts where it is put; bad names and points are
    refused by name."""
    full = make_game("1v1")
    names = [b.name for b in full.map.buildings]
    assert names == ["radiant_fountain", "radiant_tower_mid_1", "radiant_tower_mid_2", "radiant_ancient",
                     "dire_fountain", "dire_tower_mid_1", "dire_tower_mid_2", "dire_ancient"]
    crystal = full.ancient_idx[1]
    at = (6500.0, 6500.0)  # inside the Dire base, beside its crystal
    g = make_game("1v1", start_destroyed=("dire_tower_mid_1", "dire_tower_mid_2"),
                  start_positions=(at, full.s.uf[1, [F_X, F_Y]].tolist()))
    rows = dict(zip(names, g.building_rows))
    assert [g.s.ui[rows[n], I_ALIVE] for n in ("dire_tower_mid_1", "dire_tower_mid_2", "radiant_tower_mid_1")] == \
        [0, 0, 1]
    assert g.s.uf[rows["dire_tower_mid_2"], F_HP] == 0.0
    assert full.s.ui[crystal, I_INVULN] == 1 and g.s.ui[crystal, I_INVULN] == 0  # the towers no longer guard it
    assert g.s.uf[0, [F_X, F_Y]].tolist() == list(at)
    g.step(no_orders(g))
    assert g.stats[0].towers == 0 and g.stats[1].towers == 0 and g.s.ui[crystal, I_ALIVE] == 1
    for kw, word in [({"start_destroyed": ("dire_ancient",)}, "start_destroyed"),
                     ({"start_destroyed": ("dire_tower_mid_1", "dire_tower_mid_1")}, "each once"),
                     ({"start_destroyed": ("dire_tower_top_1",)}, "start_destroyed"),  # no top lane in 1v1
                     ({"start_positions": (at,)}, "one entry per hero"),
                     ({"start_positions": (at, (-10.0, 0.0))}, "passable ground"),
                     ({"start_ancient_hp": (1.0, 0.0)}, "start_ancient_hp"),
                     ({"start_ancient_hp": (0.5,)}, "start_ancient_hp")]:
        with pytest.raises(ValueError, match=word):
            make_game("1v1", **kw)
    for waves in [(3, 100.0), (None,), (None, (9, 6000.0, 6000.0)), (None, (2, -10.0, 0.0)),
                  (None, (True, 6000.0, 6000.0))]:
        with pytest.raises(ValueError, match="start_waves"):
            make_game("1v1", start_waves=waves)
    hurt = make_game("1v1", start_ancient_hp=(1.0, 0.25))  # the Dire crystal at a quarter of its health
    assert hurt.s.uf[crystal, F_HP] == 0.25 * hurt.s.uf[crystal, F_MAXHP] and hurt.s.ui[crystal, I_ALIVE] == 1
    assert hurt.s.uf[hurt.ancient_idx[0], F_HP] == hurt.s.uf[hurt.ancient_idx[0], F_MAXHP]


def test_a_game_can_start_with_a_teams_creep_waves_at_the_enemy_base():
    """GameSetup.start_waves: the team's waves at the point, marching on the enemy's ancient (the last waypoint of
    their lane), no extra creeps for the other team; with idle heroes and the towers down, four waves take the whole
    Dire crystal."""
    from moba.game.constants import UT_CREEP_MELEE, UT_CREEP_RANGED
    from moba.game.engine import START_WAVE_SPACING
    from moba.game.state import I_TEAM, I_TYPE, I_USED, I_WP
    point = (6000.0, 6000.0)
    g = make_game("1v1", start_destroyed=("dire_tower_mid_1", "dire_tower_mid_2"), start_waves=((4, *point), None))
    creeps = [u for u in range(g.s.ui.shape[0]) if g.s.ui[u, I_USED] and g.s.ui[u, I_TYPE] in (UT_CREEP_MELEE,
                                                                                             UT_CREEP_RANGED)]
    assert len(creeps) == 16 and all(g.s.ui[u, I_TEAM] == 0 for u in creeps)  # 4 waves of 4, Radiant's only
    assert all(g.s.ui[u, I_WP] == g.wpn[0, g.s.ui[u, I_LANE]] - 1 for u in creeps)
    spread = sorted(math.hypot(g.s.uf[u, F_X] - point[0], g.s.uf[u, F_Y] - point[1]) for u in creeps)
    assert spread[0] < 100.0 and 3 * START_WAVE_SPACING - 100.0 < spread[-1] < 3 * START_WAVE_SPACING + 150.0
    crystal = g.ancient_idx[1]
    for _ in range(30 * 60 // g.frameskip):  # up to a minute of idle heroes
        g.step(no_orders(g))
        if g.terminated:
            break
    assert g.winner == 0 and g.s.uf[crystal, F_HP] <= 0.0 and g.time < 45.0


def test_a_game_can_start_with_a_hero_dead_and_its_buyback_on_cooldown():
    """GameSetup.start_dead_s: the hero is dead before the first tick (no death or kill counted), cannot buy back, and
    respawns at its fountain after that many seconds."""
    from moba.game.state import G_BB_CD, G_RESPAWN, H_DEATHS, H_UNIT
    g = make_game("1v1", start_dead_s=(0.0, 3.0), start_gold=(600.0, 100000.0))  # gold enough to buy back
    dire = g.s.hi[1, H_UNIT]
    assert g.s.ui[dire, I_ALIVE] == 0 and g.s.hf[1, G_RESPAWN] == 3.0 and g.s.hf[1, G_BB_CD] == 3.0
    buyback = order(g, 1, OK_BUYBACK)
    g.step(buyback)
    assert g.s.ui[dire, I_ALIVE] == 0  # the buyback is on cooldown
    while g.time < 3.2:
        g.step(no_orders(g))
    assert g.s.ui[dire, I_ALIVE] == 1 and g.s.uf[dire, F_HP] == g.s.uf[dire, F_MAXHP]
    assert g.s.hi[1, H_DEATHS] == 0 and g.stats[0].kills == 0
    with pytest.raises(ValueError, match="start_dead_s"):
        make_game("1v1", start_dead_s=(0.0, -1.0))
