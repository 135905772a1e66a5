"""Actions through MobaEnv: every target type does what it says, delays, the action offset, and the agreement of the
action masks (action filters) with the decoder and the engine."""
import numpy as np
import pytest
from moba_testlib import (OPEN_SPOT, actions, clear_creeps, make_env, noop_actions, place, pos, random_legal_actions,
                          reencode, row_of)

from moba.env.actions import (A_ABILITY0, A_ATTACK, A_BUYBACK, A_ITEM0, A_MOVE, A_NOOP, A_SHRINE, N_OFFSETS, N_PRIMARY,
                             OFFSET_STEP_CASTER, OFFSET_STEP_REGULAR, OFFSET_STEP_WARD, decode_action)
from moba.env.observation import HERO_TELEPORTING, UNIT_ARMOR, UNIT_X
from moba.game import kernels
from moba.game.abilities import (TARGET_TYPE_READS_OFFSET, TARGET_TYPE_READS_UNIT, TT_NO_TARGET, TT_POINT, TT_TELEPORT,
                                TT_UNIT, TT_UNIT_OFFSET, TT_WARD, UK_ALLY, UK_ATTACK, UK_ENEMY, UK_NONE, UK_TELEPORT)
from moba.game.builds import ability_build
from moba.game.constants import DIRE, DT, MAX_UNITS, RADIANT, UT_CREEP_MELEE, UT_TOWER, UT_WARD, XP_TO_LEVEL
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS, ITEMS, TELEPORT_CHANNEL_S, WARD_LIFETIME_S, WARD_VISION, item_id
from moba.game.state import (F_AURA_ARMOR, F_DEST_X, F_DEST_Y, F_DMG, F_HP, F_HPREG, F_LIFE_T, F_MANA, F_MAXHP, F_MRES,
                            F_SHRINE_T, F_SLOW, F_SPEED, F_STUN_T, F_TP_T, F_VIS_DAY, F_VIS_NIGHT, F_X, F_Y, G_BB_CD,
                            G_CD0, G_GOLD, G_ICD0, G_XP, H_AB0, H_BUYBACKS, H_IT0, H_UNIT, I_ALIVE, I_LANE, I_ORDER,
                            I_TARGET, I_TEAM, I_TYPE, I_USED, NP, ORDER_ATTACK, ORDER_CAST, ORDER_MOVE, P_ACTIVE,
                            P_KIND, P_TICK, P_UNIT)

C = N_OFFSETS // 2  # the zero offset


def _arena(env):
    """Step once (the first wave spawns), remove the creeps and stop the waves, put radiant_0 in the open."""
    env.step(noop_actions(env))
    g = env.game
    clear_creeps(g)
    place(g, 0, *OPEN_SPOT)


def _creep(env, team, x, y, typ=UT_CREEP_MELEE, hp=None):
    """A fresh creep (armor 0, no magic resistance, no regeneration) at (x, y) in a free unit row."""
    g = env.game
    s = g.s
    for u in range(g.n_buildings_end, MAX_UNITS):
        if s.ui[u, I_USED] == 0:
            break
    kernels.reset_unit(s.uf, s.ui, s.gi, u)
    s.ui[u, I_TYPE], s.ui[u, I_TEAM], s.ui[u, I_LANE] = typ, team, 1
    s.uf[u, F_HP] = s.uf[u, F_MAXHP] = 550.0 if hp is None else hp
    s.uf[u, F_VIS_DAY] = s.uf[u, F_VIS_NIGHT] = 750.0
    s.uf[u, F_SPEED] = 325.0
    place(g, u, x, y)
    return u


def _hero_def(name):
    return [h.name for h in HEROES].index(name)


# ---- move and delay --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ox,oy", [(6, 1), (0, 8), (4, 7)])
def test_move_goes_toward_caster_offset(ox, oy):
    env = make_env("1v1")
    _arena(env)
    reencode(env)
    g = env.game
    p0 = pos(g, 0)
    dest = p0 + np.array([ox - C, oy - C]) * OFFSET_STEP_CASTER
    env.step(actions(env, radiant_0=dict(primary=A_MOVE, offset_x=ox, offset_y=oy)))
    assert g.s.ui[0, I_ORDER] == ORDER_MOVE
    np.testing.assert_allclose(g.s.uf[0, [F_DEST_X, F_DEST_Y]], dest)
    moved = pos(g, 0) - p0
    speed = g.s.uf[0, F_SPEED]
    assert np.linalg.norm(moved) == pytest.approx(speed * g.frameskip * DT)
    direction = (dest - p0) / np.linalg.norm(dest - p0)
    np.testing.assert_allclose(moved / np.linalg.norm(moved), direction, atol=1e-9)
    # the previous action shows up in the observation
    assert env._obs[0]["private_prev_action"][0].tolist() == [A_MOVE, 0, 0, ox, oy]


@pytest.mark.parametrize("delay", [0, 1, 2, 3])
def test_delay_picks_the_tick(delay):
    env = make_env("1v1")
    _arena(env)
    reencode(env)
    g = env.game
    p0 = pos(g, 0)
    env.step(actions(env, radiant_0=dict(primary=A_MOVE, delay=delay, offset_x=8, offset_y=C)))
    moved = pos(g, 0) - p0
    assert moved[1] == pytest.approx(0.0, abs=1e-9)
    assert moved[0] == pytest.approx(g.s.uf[0, F_SPEED] * (g.frameskip - delay) * DT)


def test_delay_clipped_to_frameskip():
    env = make_env("1v1", frameskip=2)
    _arena(env)
    reencode(env)
    p0 = pos(env.game, 0)
    env.step(actions(env, radiant_0=dict(primary=A_MOVE, delay=3, offset_x=8, offset_y=C)))
    assert pos(env.game, 0)[0] - p0[0] == pytest.approx(env.game.s.uf[0, F_SPEED] * DT)  # applied on the last tick


def test_action_offset_applies_next_step():
    env = make_env("1v1", action_offset=True)
    _arena(env)
    reencode(env)
    g = env.game
    p0 = pos(g, 0)
    env.step(actions(env, radiant_0=dict(primary=A_MOVE, offset_x=8, offset_y=C)))
    np.testing.assert_array_equal(pos(g, 0), p0)  # decided at T, not applied yet
    assert env._obs[0]["private_prev_action"][0, 0] == A_MOVE
    env.step(noop_actions(env))
    assert pos(g, 0)[0] - p0[0] == pytest.approx(g.s.uf[0, F_SPEED] * g.frameskip * DT)
    # without the offset the same move is applied at once
    env2 = make_env("1v1", action_offset=False)
    _arena(env2)
    reencode(env2)
    q0 = pos(env2.game, 0)
    env2.step(actions(env2, radiant_0=dict(primary=A_MOVE, offset_x=8, offset_y=C)))
    assert pos(env2.game, 0)[0] > q0[0]


# ---- attack ----------------------------------------------------------------------------------------------------------
def test_attack_damages_enemy_creep():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    c = _creep(env, DIRE, OPEN_SPOT[0] + 100, OPEN_SPOT[1])
    reencode(env)
    row = row_of(env, RADIANT, c)
    assert row >= 2
    o = env._obs[0]
    assert o["unit_masks"][UK_ATTACK, row] == 1 and o["action_mask"][A_ATTACK] == 1
    assert o["units"][row, UNIT_X] == pytest.approx(OPEN_SPOT[0] + 100)
    hp0 = g.s.uf[c, F_HP]
    env.step(actions(env, radiant_0=dict(primary=A_ATTACK, target_unit=row)))
    assert g.s.ui[0, I_ORDER] == ORDER_ATTACK and g.s.ui[0, I_TARGET] == c
    assert hp0 - g.s.uf[c, F_HP] == pytest.approx(g.s.uf[0, F_DMG] * kernels.armor_multiplier(0.0))


def test_attack_on_unmasked_row_is_noop():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    c = _creep(env, RADIANT, OPEN_SPOT[0] + 100, OPEN_SPOT[1])  # a healthy allied creep: not attackable
    reencode(env)
    row = row_of(env, RADIANT, c)
    assert env._obs[0]["unit_masks"][UK_ATTACK, row] == 0
    before = g.s.uf[c, F_HP]
    env.step(actions(env, radiant_0=dict(primary=A_ATTACK, target_unit=row)))
    assert g.s.ui[0, I_ORDER] != ORDER_ATTACK
    assert g.s.uf[c, F_HP] == before


# ---- abilities -------------------------------------------------------------------------------------------------------
def test_unit_target_nuke_damages_and_stuns_target():
    env = make_env("1v1", lineup=("lunar_archer", "marksman"))
    _arena(env)
    g = env.game
    place(g, 1, OPEN_SPOT[0] + 500, OPEN_SPOT[1])
    reencode(env)
    ab = HEROES[_hero_def("lunar_archer")].abilities[0]
    assert ab.name == "lucent_beam" and ab.target_type == TT_UNIT
    row = row_of(env, RADIANT, 1)
    o = env._obs[0]
    assert o["action_mask"][A_ABILITY0] == 1 and o["unit_masks"][UK_ENEMY, row] == 1
    hp0, mana0 = g.s.uf[1, F_HP], g.s.uf[0, F_MANA]
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0, target_unit=row)))
    dmg = ab.effects[0].amount[0] * (1.0 - g.s.uf[1, F_MRES])
    assert hp0 - g.s.uf[1, F_HP] == pytest.approx(dmg - 3 * DT * g.s.uf[1, F_HPREG], abs=1e-6)
    assert g.s.uf[1, F_STUN_T] == pytest.approx(ab.effects[1].duration[0] - 3 * DT)
    assert g.s.hf[0, G_CD0] == pytest.approx(ab.cooldown[0] - 3 * DT)
    assert g.s.uf[0, F_MANA] < mana0 - ab.mana[0] + 1.0
    assert env._obs[0]["action_mask"][A_ABILITY0] == 0  # on cooldown now


def test_unit_target_out_of_range_chases_then_casts():
    env = make_env("1v1", lineup=("lunar_archer", "marksman"))
    _arena(env)
    g = env.game
    place(g, 1, OPEN_SPOT[0] + 1100, OPEN_SPOT[1])  # in the mask radius, out of the 800 cast range
    reencode(env)
    row = row_of(env, RADIANT, 1)
    assert env._obs[0]["unit_masks"][UK_ENEMY, row] == 1
    hp0 = g.s.uf[1, F_HP]
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0, target_unit=row)))
    assert g.s.ui[0, I_ORDER] == ORDER_CAST and g.s.ui[0, I_TARGET] == 1
    assert g.s.uf[1, F_HP] == hp0
    for _ in range(10):
        env.step(noop_actions(env))
    assert g.s.uf[1, F_HP] < hp0 - 40.0


def test_point_area_ability_hits_units_near_the_point():
    env = make_env("1v1", lineup=("frost_priestess", "marksman"))
    _arena(env)
    g = env.game
    ab = HEROES[_hero_def("frost_priestess")].abilities[0]
    assert ab.name == "crystal_nova" and ab.target_type == TT_POINT
    x, y = OPEN_SPOT
    near = _creep(env, DIRE, x + 400 + 300, y)  # 300 from the point (hero + (2, 0) * 200 = +400)
    far = _creep(env, DIRE, x - 300, y)  # 300 from the hero but 700 from the point
    ally = _creep(env, RADIANT, x + 400, y)  # on the point, but an ally
    reencode(env)
    assert env._obs[0]["action_mask"][A_ABILITY0] == 1
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0, offset_x=C + 2, offset_y=C)))
    assert g.s.uf[near, F_HP] == pytest.approx(550.0 - ab.effects[0].amount[0])
    assert g.s.uf[far, F_HP] == 550.0
    assert g.s.uf[ally, F_HP] == 550.0
    assert g.s.uf[near, F_SLOW] == pytest.approx(ab.effects[1].amount[0])
    assert g.s.hf[0, G_CD0] > 0


def test_unit_offset_ability_centres_on_unit_plus_offset():
    env = make_env("1v1", lineup=("soul_reaper", "marksman"))
    _arena(env)
    g = env.game
    ab = HEROES[_hero_def("soul_reaper")].abilities[0]
    assert ab.name == "shadow_raze" and ab.target_type == TT_UNIT_OFFSET and ab.effects[0].radius == 250
    x, y = OPEN_SPOT
    target = _creep(env, DIRE, x + 300, y)
    beside = _creep(env, DIRE, x + 300, y + 400)  # the centre: target + (0, 4) * 100
    reencode(env)
    row = row_of(env, RADIANT, target)
    assert env._obs[0]["unit_masks"][UK_ENEMY, row] == 1
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0, target_unit=row, offset_x=C, offset_y=C + 4)))
    assert g.s.uf[beside, F_HP] == pytest.approx(550.0 - ab.effects[0].amount[0])
    assert g.s.uf[target, F_HP] == 550.0  # 400 from the centre: outside the 250 radius
    assert g.s.hf[0, G_CD0] > 0
    # and with a zero offset it centres on the target
    env2 = make_env("1v1", lineup=("soul_reaper", "marksman"))
    _arena(env2)
    t2 = _creep(env2, DIRE, x + 300, y)
    b2 = _creep(env2, DIRE, x + 300, y + 400)
    reencode(env2)
    env2.step(actions(env2, radiant_0=dict(primary=A_ABILITY0, target_unit=row_of(env2, RADIANT, t2))))
    assert env2.game.s.uf[t2, F_HP] == pytest.approx(550.0 - ab.effects[0].amount[0])
    assert env2.game.s.uf[b2, F_HP] == 550.0


def test_no_target_self_area_ability():
    env = make_env("1v1", lineup=("tidal_giant", "marksman"))
    _arena(env)
    g = env.game
    ab = HEROES[_hero_def("tidal_giant")].abilities[2]
    assert ab.name == "anchor_smash" and ab.target_type == TT_NO_TARGET and g.s.hi[0, H_AB0 + 2] == 1
    x, y = OPEN_SPOT
    inside = _creep(env, DIRE, x + 300, y)
    outside = _creep(env, DIRE, x - 500, y)
    reencode(env)
    assert env._obs[0]["action_mask"][A_ABILITY0 + 2] == 1
    # the offset and unit parameters are ignored by a no-target ability
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0 + 2, target_unit=5, offset_x=0, offset_y=8)))
    assert g.s.uf[inside, F_HP] == pytest.approx(550.0 - ab.effects[0].amount[0])
    assert g.s.uf[outside, F_HP] == 550.0
    np.testing.assert_allclose(pos(g, 0), OPEN_SPOT)


def test_unlearned_ability_is_masked_and_noop():
    env = make_env("1v1", lineup=("tidal_giant", "marksman"))
    _arena(env)
    reencode(env)
    g = env.game
    assert g.s.hi[0, H_AB0] == 0
    assert env._obs[0]["action_mask"][A_ABILITY0] == 0
    before = g.s.copy()
    env.step(actions(env, radiant_0=dict(primary=A_ABILITY0, target_unit=1)))
    assert g.s.hf[0, G_CD0] == 0.0 and g.s.uf[0, F_MANA] >= before.uf[0, F_MANA]


def test_passive_ability_is_never_an_action_but_its_aura_works():
    env = make_env("1v1", lineup=("lunar_archer", "marksman"))
    _arena(env)
    g = env.game
    d = HEROES[_hero_def("lunar_archer")]
    level = ability_build(d.skill_priority).index(2) + 1  # the build learns lunar_blessing (a passive armor aura)
    g.s.hf[0, G_XP] = XP_TO_LEVEL[level - 1]
    env.step(noop_actions(env))
    ab = d.abilities[2]
    assert ab.passive and g.s.hi[0, H_AB0 + 2] == 1
    x, y = OPEN_SPOT
    near_ally = _creep(env, RADIANT, x + 500, y)
    far_ally = _creep(env, RADIANT, x - 1000, y)
    enemy = _creep(env, DIRE, x + 400, y + 200)
    reencode(env)
    assert env._obs[0]["action_mask"][A_ABILITY0 + 2] == 0
    out = np.zeros(NP)
    o = env._obs[0]
    act = np.array([A_ABILITY0 + 2, 0, 0, C, C])
    assert not decode_action(act, 0, tuple(OPEN_SPOT), env.encoder.tt[0], env.encoder.uk[0], o["action_mask"],
                             o["unit_masks"], env.encoder.slot_units[0], out)
    env.step(noop_actions(env))
    amount = ab.effects[0].amount[0]
    assert g.s.uf[0, F_AURA_ARMOR] == amount  # the hero itself
    assert g.s.uf[near_ally, F_AURA_ARMOR] == amount
    assert g.s.uf[far_ally, F_AURA_ARMOR] == 0.0
    assert g.s.uf[enemy, F_AURA_ARMOR] == 0.0
    row = row_of(env, RADIANT, near_ally)
    assert env._obs[0]["units"][row, UNIT_ARMOR] == pytest.approx(amount)  # the observed armor includes the aura


@pytest.mark.parametrize("distance,attack,spell", [(1100.0, 1, 1), (1350.0, 1, 0), (1600.0, 0, 0)])
def test_unit_mask_radii(distance, attack, spell):
    env = make_env("1v1", lineup=("lunar_archer", "marksman"))
    _arena(env)
    g = env.game
    place(g, 1, OPEN_SPOT[0], OPEN_SPOT[1] - distance)
    reencode(env)
    row = row_of(env, RADIANT, 1)
    o = env._obs[0]
    assert g.s.vis[RADIANT, 1] == 1 and o["unit_valid"][row] == 1
    assert o["unit_masks"][UK_ATTACK, row] == attack
    assert o["unit_masks"][UK_ENEMY, row] == spell
    assert o["action_mask"][A_ATTACK] == attack
    assert o["action_mask"][A_ABILITY0] == spell  # lucent_beam needs an enemy in the spell radius


def test_item_mana_cost_in_mask():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    assert g._give_item(0, item_id("dagon"))
    g._recompute_stats(0)
    place(g, 1, OPEN_SPOT[0] + 500, OPEN_SPOT[1])
    a_dagon = A_ITEM0 + ITEM_ACTIONS.index("dagon")
    cost = ITEMS[item_id("dagon")].active.mana[0]
    g.s.uf[0, F_MANA] = cost - 1.0
    reencode(env)
    assert env._obs[0]["action_mask"][a_dagon] == 0
    g.s.uf[0, F_MANA] = cost + 1.0
    reencode(env)
    assert env._obs[0]["action_mask"][a_dagon] == 1
    hp0 = g.s.uf[1, F_HP]
    env.step(actions(env, radiant_0=dict(primary=a_dagon, target_unit=row_of(env, RADIANT, 1))))
    dmg = ITEMS[item_id("dagon")].active.effects[0].amount[0] * (1.0 - g.s.uf[1, F_MRES])
    assert hp0 - g.s.uf[1, F_HP] == pytest.approx(dmg - 3 * DT * g.s.uf[1, F_HPREG], abs=1e-6)
    assert g.s.hf[0, G_ICD0 + ITEM_ACTIONS.index("dagon")] > 0
    assert item_id("dagon") in g.s.hi[0, H_IT0:H_IT0 + 6]  # not consumed


# ---- items -----------------------------------------------------------------------------------------------------------
def test_town_portal_teleports_after_channel():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    tower = g._rows(UT_TOWER, RADIANT, 1, 2)[0]
    reencode(env)
    row = row_of(env, RADIANT, tower)
    a_tp = A_ITEM0 + ITEM_ACTIONS.index("town_portal_scroll")
    o = env._obs[0]
    assert o["action_mask"][a_tp] == 1 and o["unit_masks"][UK_TELEPORT, row] == 1
    assert o["action_target_type"][a_tp] == TT_TELEPORT
    p0 = pos(g, 0)
    dest = g.s.uf[tower, [F_X, F_Y]] + np.array([2, -3]) * OFFSET_STEP_REGULAR
    env.step(actions(env, radiant_0=dict(primary=a_tp, target_unit=row, offset_x=C + 2, offset_y=C - 3)))
    assert g.s.uf[0, F_TP_T] > 0
    assert g.s.hf[0, G_ICD0 + ITEM_ACTIONS.index("town_portal_scroll")] > 0
    assert item_id("town_portal_scroll") not in g.s.hi[0, H_IT0:H_IT0 + 6]  # the only charge was used
    ticks = round(TELEPORT_CHANNEL_S / DT)
    n_steps = -(-ticks // g.frameskip)  # the step containing the last channel tick
    for _ in range(n_steps - 2):  # the ordering step was the first of the channel
        env.step(noop_actions(env))
        np.testing.assert_array_equal(pos(g, 0), p0)  # channelling
    assert env._obs[0]["heroes"][0, HERO_TELEPORTING] == 1.0
    env.step(noop_actions(env))
    np.testing.assert_allclose(pos(g, 0), dest)
    assert g.s.uf[0, F_TP_T] == 0.0


def test_teleport_target_must_be_allied_building():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    enemy_tower = g._rows(UT_TOWER, DIRE, 1, 1)[0]
    reencode(env)
    row = row_of(env, RADIANT, enemy_tower)
    assert row >= 0 and env._obs[0]["unit_masks"][UK_TELEPORT, row] == 0
    a_tp = A_ITEM0 + ITEM_ACTIONS.index("town_portal_scroll")
    env.step(actions(env, radiant_0=dict(primary=a_tp, target_unit=row)))
    assert g.s.uf[0, F_TP_T] == 0.0


def test_observer_ward_spawns_ward_at_offset():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    assert g._give_item(0, item_id("observer_ward"))
    reencode(env)
    a_ward = A_ITEM0 + ITEM_ACTIONS.index("observer_ward")
    assert env._obs[0]["action_mask"][a_ward] == 1
    assert env._obs[0]["action_target_type"][a_ward] == TT_WARD
    p0 = pos(g, 0)
    env.step(actions(env, radiant_0=dict(primary=a_ward, offset_x=C + 2, offset_y=C - 2)))
    wards = [u for u in range(MAX_UNITS) if g.s.ui[u, I_USED] and g.s.ui[u, I_TYPE] == UT_WARD]
    assert len(wards) == 1
    w = wards[0]
    assert g.s.ui[w, I_TEAM] == RADIANT
    np.testing.assert_allclose(pos(g, w), p0 + np.array([2, -2]) * OFFSET_STEP_WARD)
    assert g.s.uf[w, F_VIS_DAY] == WARD_VISION
    assert g.s.uf[w, F_LIFE_T] == pytest.approx(WARD_LIFETIME_S - (g.frameskip - 1) * DT)
    assert item_id("observer_ward") not in g.s.hi[0, H_IT0:H_IT0 + 6]
    # the ward's vision: a Dire hero 1500 from the ward (and > 1800 from every other Radiant unit) is seen
    place(g, 1, p0[0] + 300, p0[1] - 300 - 1500)
    place(g, 0, 350, 1800)
    kernels.update_vision(g.s.uf, g.s.ui, g.s.hf, g.s.hi, g.s.gf, g.s.gi, g.s.vis)
    assert g.s.vis[RADIANT, 1] == 1


def test_ward_far_offset_is_clamped_to_cast_range():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    g._give_item(0, item_id("observer_ward"))
    reencode(env)
    p0 = pos(g, 0)
    a_ward = A_ITEM0 + ITEM_ACTIONS.index("observer_ward")
    env.step(actions(env, radiant_0=dict(primary=a_ward, offset_x=8, offset_y=8)))
    w = [u for u in range(MAX_UNITS) if g.s.ui[u, I_USED] and g.s.ui[u, I_TYPE] == UT_WARD][0]
    cast_range = ITEMS[item_id("observer_ward")].active.cast_range[0]
    assert np.linalg.norm(pos(g, w) - p0) == pytest.approx(cast_range)


def test_buyback_action_when_dead():
    env = make_env("1v1")
    _arena(env)
    g = env.game
    g.s.uf[0, F_HP] = 0.0
    env.step(noop_actions(env))
    assert g.s.ui[0, I_ALIVE] == 0
    mask = env._obs[0]["action_mask"]
    assert mask[A_BUYBACK] == 1  # 600 gold covers the level-1 buyback
    assert set(np.nonzero(mask)[0]) == {A_NOOP, A_BUYBACK}
    gold0 = g.s.hf[0, G_GOLD]
    env.step(actions(env, radiant_0=dict(primary=A_BUYBACK)))
    assert g.s.ui[0, I_ALIVE] == 1 and g.s.hi[0, H_BUYBACKS] == 1
    assert g.s.hf[0, G_GOLD] < gold0 - 100
    assert g.s.hf[0, G_BB_CD] > 0
    # a dead hero that cannot afford it only has noop
    g.s.uf[0, F_HP] = 0.0
    env.step(noop_actions(env))
    assert set(np.nonzero(env._obs[0]["action_mask"])[0]) == {A_NOOP}


# ---- the observation's action description ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_action_target_types_match_ability_data(mode):
    env = make_env(mode, evaluation=False, seed=5)
    g = env.game
    for h, agent in enumerate(env.possible_agents):
        o = env._obs[h]
        tt, uk = o["action_target_type"], o["action_unit_kind"]
        d = HEROES[g.hero_defs[h]]
        assert o["hero_id"][h % env.team_size] == g.hero_defs[h] + 1
        assert (tt[A_NOOP], uk[A_NOOP]) == (TT_NO_TARGET, UK_NONE)
        assert (tt[A_MOVE], uk[A_MOVE]) == (TT_POINT, UK_NONE)
        assert (tt[A_ATTACK], uk[A_ATTACK]) == (TT_UNIT, UK_ATTACK)
        for k in range(4):
            assert tt[A_ABILITY0 + k] == d.abilities[k].target_type, (d.name, k)
            assert uk[A_ABILITY0 + k] == d.abilities[k].unit_kind, (d.name, k)
            assert o["action_id"][A_ABILITY0 + k] == N_PRIMARY + 4 * g.hero_defs[h] + k
        for k, name in enumerate(ITEM_ACTIONS):
            ab = ITEMS[item_id(name)].active
            assert (tt[A_ITEM0 + k], uk[A_ITEM0 + k]) == (ab.target_type, ab.unit_kind), name
        assert (tt[A_BUYBACK], uk[A_BUYBACK]) == (TT_NO_TARGET, UK_NONE)
        assert (tt[A_SHRINE], uk[A_SHRINE]) == (TT_NO_TARGET, UK_NONE)
        for p in range(N_PRIMARY):
            assert TARGET_TYPE_READS_UNIT[tt[p]] == (uk[p] != UK_NONE), p


def test_target_type_reads_tables_consistent():
    assert TARGET_TYPE_READS_UNIT == (False, False, True, True, True, False)
    assert TARGET_TYPE_READS_OFFSET == (False, True, False, True, True, True)


# ---- masks agree with the decoder and the engine ---------------------------------------------------------------------
def _check_order_executes(env, h, act, order_row):
    """Applies hero h's decoded order alone, on tick 0 of a copy of the state, and checks that the engine acts on it."""
    g = env.game
    st = g.s.copy()
    st.pend[:] = 0.0
    st.pend[h] = order_row
    st.pend[h, P_TICK] = 0  # apply it on this tick, whatever its delay
    p = int(act[0])
    u = st.hi[h, H_UNIT]
    before = st.copy()
    kernels.apply_orders(st.uf, st.ui, st.hf, st.hi, st.gf, st.gi, st.pend, st.vis, g.map.terrain, g.abi, g.abf,
                         g.hero_ab, g.ia_ab, env.encoder._ia_item, g.item_stats, g.fountain_idx, g.n_buildings_end, 0)
    tt = env.encoder.tt[h, p]
    unit = int(order_row[P_UNIT])
    if p == A_MOVE:
        assert st.ui[u, I_ORDER] == ORDER_MOVE
    elif p == A_ATTACK:
        assert st.ui[u, I_ORDER] == ORDER_ATTACK and st.ui[u, I_TARGET] == unit
    elif A_ABILITY0 <= p < A_ABILITY0 + 4 or A_ITEM0 <= p < A_BUYBACK:
        if A_ABILITY0 <= p < A_ABILITY0 + 4:
            cd = st.hf[h, G_CD0 + p - A_ABILITY0]
        else:
            cd = st.hf[h, G_ICD0 + p - A_ITEM0]
        if tt in (TT_UNIT, TT_UNIT_OFFSET):
            assert st.ui[u, I_ORDER] == ORDER_CAST and st.ui[u, I_TARGET] == unit, (h, p)
        else:
            assert cd > 0.0, (h, p, tt)
    elif p == A_BUYBACK:
        assert st.ui[u, I_ALIVE] == 1 and before.ui[u, I_ALIVE] == 0
    elif p == A_SHRINE:
        assert (st.uf[:, F_SHRINE_T] > before.uf[:, F_SHRINE_T]).any()


def _check_masks(env, rng):
    g = env.game
    n_checked = 0
    kinds = set()
    for h in range(env.n_heroes):
        team = h // env.team_size
        o = env._obs[h]
        mask, umasks = o["action_mask"], o["unit_masks"]
        tt_row, uk_row = env.encoder.tt[h], env.encoder.uk[h]
        u = g.s.hi[h, H_UNIT]
        hero_pos = (g.s.uf[u, F_X], g.s.uf[u, F_Y])
        slot = env.encoder.slot_units[team]
        out = np.zeros(NP)
        if g.s.ui[u, I_ALIVE] == 0:
            assert set(np.nonzero(mask)[0]) <= {A_NOOP, A_BUYBACK}
            assert not umasks.any()
        assert mask[A_NOOP] == 1
        # rows of the unit masks name real, alive units
        for kind in (UK_ATTACK, UK_ENEMY, UK_ALLY, UK_TELEPORT):
            for row in np.nonzero(umasks[kind])[0]:
                v = slot[row]
                assert v >= 0 and g.s.ui[v, I_ALIVE] == 1 and o["unit_valid"][row] == 1
                if kind in (UK_ATTACK, UK_ENEMY) and g.s.ui[v, I_TEAM] != team:
                    assert g.s.vis[team, v] == 1
        for p in range(1, N_PRIMARY):
            reads_unit = TARGET_TYPE_READS_UNIT[tt_row[p]]
            rows = np.nonzero(umasks[uk_row[p]])[0]
            if mask[p]:
                if reads_unit:
                    assert len(rows) > 0, (h, p)
                    unit_row = int(rng.choice(rows))
                else:
                    unit_row = int(rng.integers(0, env.cfg.max_units))
                act = np.array([p, rng.integers(0, 4), unit_row, rng.integers(0, 9), rng.integers(0, 9)])
                assert decode_action(act, h, hero_pos, tt_row, uk_row, mask, umasks, slot, out), (h, p)
                assert out[P_ACTIVE] == 1.0 and out[P_KIND] > 0
                if reads_unit:
                    assert out[P_UNIT] == slot[unit_row]
                _check_order_executes(env, h, act, out.copy())
                n_checked += 1
                kinds.add(p)
                # a masked unit row is a no-op
                bad_rows = np.nonzero(umasks[uk_row[p]] == 0)[0]
                if reads_unit and len(bad_rows):
                    act[2] = int(rng.choice(bad_rows))
                    assert not decode_action(act, h, hero_pos, tt_row, uk_row, mask, umasks, slot, out)
                    assert out[P_ACTIVE] == 0.0
            else:
                unit_row = int(rng.choice(rows)) if len(rows) else 0
                act = np.array([p, rng.integers(0, 4), unit_row, rng.integers(0, 9), rng.integers(0, 9)])
                assert not decode_action(act, h, hero_pos, tt_row, uk_row, mask, umasks, slot, out), (h, p)
                assert out[P_ACTIVE] == 0.0
    return n_checked, kinds


def _masked_actions_equal_noop(env, rng):
    """Every hero takes a masked primary action: the game goes exactly as if everyone took noop."""
    acts = {}
    for h, a in enumerate(env.possible_agents):
        masked = [p for p in range(1, N_PRIMARY) if env._obs[h]["action_mask"][p] == 0]
        if not masked:
            acts[a] = {"primary": 0, "delay": 0, "target_unit": 0, "offset_x": C, "offset_y": C}
            continue
        acts[a] = {"primary": int(rng.choice(masked)), "delay": int(rng.integers(0, 4)),
                   "target_unit": int(rng.integers(0, env.cfg.max_units)), "offset_x": int(rng.integers(0, 9)),
                   "offset_y": int(rng.integers(0, 9))}
    g = env.game
    saved, obs, prev = g.s.copy(), env._obs, env.prev_actions.copy()
    env.step(acts)
    after_masked = g.s.copy()
    for name in ("uf", "ui", "hf", "hi", "gf", "gi", "pend", "vis", "ev"):
        getattr(g.s, name)[...] = getattr(saved, name)
    env._obs, env.prev_actions[:] = obs, prev
    env.tracker.rebase()  # the restored state is again the one the next step's rewards compare with
    env.step(noop_actions(env))
    assert g.s.equals(after_masked)


def _scramble(env, rng):
    """Throws the alive heroes into a brawl around the middle of the map with random health, levels and gold."""
    g = env.game
    s = g.s
    for h in range(env.n_heroes):
        u = s.hi[h, H_UNIT]
        if s.ui[u, I_ALIVE] == 0:
            continue
        while True:
            x, y = rng.normal(4000.0, 450.0, 2)
            if kernels.passable(g.map.terrain, x, y):
                break
        place(g, u, x, y)
        s.uf[u, F_HP] = s.uf[u, F_MAXHP] * rng.uniform(0.3, 1.0)
        s.hf[h, G_XP] = max(s.hf[h, G_XP], XP_TO_LEVEL[int(rng.integers(0, 12))])
        s.hf[h, G_GOLD] += rng.uniform(0.0, 2000.0)
    reencode(env)


@pytest.mark.parametrize("mode,n_steps", [("1v1", 400), ("5v5", 250)])
def test_masks_agree_with_decoder_and_engine(mode, n_steps):
    env = make_env(mode, evaluation=False, seed=11)
    rng = np.random.default_rng(0)
    total = 0
    kinds_checked = set()
    dead_seen = False
    for step in range(n_steps):
        if step % 25 == 5:
            _scramble(env, rng)
        if step % 25 == 0 or step % 25 == 12:
            n, kinds = _check_masks(env, rng)
            total += n
            kinds_checked |= kinds
            _masked_actions_equal_noop(env, rng)
        if step % 60 == 30:  # a dead hero now and then
            env.game.s.uf[env.game.s.hi[step % env.n_heroes, H_UNIT], F_HP] = 0.0
        _, _, term, trunc, _ = env.step(random_legal_actions(env, rng))
        dead_seen |= any(env.game.s.ui[env.game.s.hi[h, H_UNIT], I_ALIVE] == 0 for h in range(env.n_heroes))
        if term["__all__"] or trunc["__all__"]:
            env.reset(seed=step)
    assert dead_seen
    # many legal actions of every kind were checked
    assert total > 2 * env.n_heroes * (n_steps // 25)
    assert {A_MOVE, A_ATTACK, A_ABILITY0}.issubset(kinds_checked) or \
        {A_MOVE, A_ATTACK, A_ABILITY0 + 1}.issubset(kinds_checked)


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_the_compiled_decoder_gives_the_orders_of_decode_action_to_the_bit(mode):
    """MobaEnv._decode (moba.env.actions.decode_team, compiled) against decode_action per hero and the frameskip's
    clip, over games of random legal play and actions drawn over the whole action space (masked ones included)."""
    from moba.env.actions import action_sizes
    env = make_env(mode=mode, seed=11)
    rng = np.random.default_rng(11)
    sizes = action_sizes(env.cfg.max_units)
    checked = 0
    for step in range(120):
        if step % 3 == 0:
            acts = np.array([[rng.integers(0, k) for k in sizes] for _ in range(env.n_heroes)], np.int64)
            if step % 2:  # legal primaries, their units from the masks: orders that do something
                for h, o in enumerate(env.observations().values()):
                    acts[h, 0] = rng.choice(np.nonzero(o["action_mask"])[0])
            got = env._decode(acts)
            want = np.zeros_like(got)
            s = env.game.s
            for h, o in enumerate(env.observations().values()):
                u = s.hi[h, H_UNIT]
                decode_action(acts[h], h, (s.uf[u, F_X], s.uf[u, F_Y]), env.encoder.tt[h], env.encoder.uk[h],
                              o["action_mask"], o["unit_masks"], env.encoder.slot_units[h // env.team_size], want[h])
            want[:, P_TICK] = np.minimum(want[:, P_TICK], env.game.frameskip - 1)
            want[want[:, P_ACTIVE] == 0, P_TICK] = 0
            assert np.array_equal(got, want), step
            checked += int((got[:, P_ACTIVE] == 1).sum())
        _, _, term, trunc, _ = env.step(random_legal_actions(env, rng))
        if term["__all__"] or trunc["__all__"]:
            env.reset()
    assert checked > 20  # active orders among them, not only no-ops
