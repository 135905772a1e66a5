"""The consumables' need filters (EnvConfig.consumable_filters, moba/env/actions.py need_filters): a healing salve or
clarity is legal only when it can do its work, a town portal scroll only toward a far allied building; off, the masks
are the game's action filters alone."""
import numpy as np
import pytest
from moba_testlib import OPEN_SPOT, actions, clear_creeps, make_env, noop_actions, place, random_legal_actions, \
    reencode, row_of

from moba.env.actions import (A_CLARITY, A_MOVE, A_NOOP, A_SALVE, A_TP, CLARITY_NEED_MANA, SALVE_NEED_HP,
                              TP_MIN_DISTANCE, need_filters)
from moba.env.config import EnvConfig
from moba.game.abilities import UK_TELEPORT
from moba.game.constants import RADIANT, UT_FOUNTAIN, UT_TOWER
from moba.game.items import ITEMS, item_id
from moba.game.state import (F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_MREGEN_T, F_REGEN_T, F_TP_T, F_X, F_Y, H_IT0,
                             INVENTORY, NUF)


def _env(filters: bool):
    """1v1, the creeps gone, radiant_0 in the open with a salve, a clarity and a scroll, full health and mana."""
    env = make_env("1v1", consumable_filters=filters)
    env.step(noop_actions(env))
    g = env.game
    clear_creeps(g)
    place(g, 0, *OPEN_SPOT)
    held = set(g.s.hi[0, H_IT0:H_IT0 + INVENTORY])
    for name in ("healing_salve", "clarity", "town_portal_scroll"):
        if item_id(name) not in held:
            assert g._give_item(0, item_id(name))
    g._recompute_stats(0)
    g.s.uf[0, F_HP], g.s.uf[0, F_MANA] = g.s.uf[0, F_MAXHP], g.s.uf[0, F_MAXMANA]
    g.s.uf[0, F_REGEN_T] = g.s.uf[0, F_MREGEN_T] = 0.0
    reencode(env)
    return env


def _mask(env):
    return env._obs[0]["action_mask"]


def test_the_needs_come_from_the_items():
    salve = ITEMS[item_id("healing_salve")].active.effects[0]
    clarity = ITEMS[item_id("clarity")].active.effects[0]
    assert SALVE_NEED_HP == pytest.approx(0.5 * salve.amount[0] * salve.duration[0]) == 200.0
    assert CLARITY_NEED_MANA == pytest.approx(0.5 * clarity.amount[0] * clarity.duration[0]) == 75.0


def test_off_by_default_and_validated():
    assert EnvConfig().consumable_filters is False
    env = _env(False)
    assert _mask(env)[A_SALVE] == 1 and _mask(env)[A_CLARITY] == 1  # at full health and mana: the game allows it
    with pytest.raises(ValueError, match="consumable_filters.*true or false"):
        EnvConfig.from_dict({"consumable_filters": "yes"})


def test_salve_only_while_it_can_heal():
    env = _env(True)
    g = env.game
    assert _mask(env)[A_SALVE] == 0
    g.s.uf[0, F_HP] = g.s.uf[0, F_MAXHP] - SALVE_NEED_HP + 1.0
    reencode(env)
    assert _mask(env)[A_SALVE] == 0
    g.s.uf[0, F_HP] = g.s.uf[0, F_MAXHP] - SALVE_NEED_HP - 1.0
    reencode(env)
    assert _mask(env)[A_SALVE] == 1
    assert g.summary()["heroes"][0]["consumables_used"] == 0
    env.step(actions(env, radiant_0=dict(primary=A_SALVE)))
    assert g.s.uf[0, F_REGEN_T] > 0.0  # drunk: the regeneration runs
    assert g.summary()["heroes"][0]["consumables_used"] == 1  # counted in the game's summary
    g.s.uf[0, F_HP] = 1.0
    reencode(env)
    assert _mask(env)[A_SALVE] == 0  # a second one would only restart it


def test_clarity_only_while_it_can_restore():
    env = _env(True)
    g = env.game
    assert _mask(env)[A_CLARITY] == 0
    g.s.uf[0, F_MANA] = g.s.uf[0, F_MAXMANA] - CLARITY_NEED_MANA - 1.0
    reencode(env)
    assert _mask(env)[A_CLARITY] == 1
    g.s.uf[0, F_MREGEN_T] = 5.0
    reencode(env)
    assert _mask(env)[A_CLARITY] == 0


def test_scroll_only_toward_far_buildings():
    env = _env(True)
    g = env.game
    fountain = g._rows(UT_FOUNTAIN, RADIANT)[0]
    place(g, 0, g.s.uf[fountain, F_X] + 300.0, g.s.uf[fountain, F_Y] + 300.0)  # at home, where a scroll is for
    reencode(env)
    towers = g._rows(UT_TOWER, RADIANT)
    far = [t for t in towers if np.hypot(*(g.s.uf[t, [F_X, F_Y]] - g.s.uf[0, [F_X, F_Y]])) >= TP_MIN_DISTANCE]
    assert far, "some allied tower is farther than TP_MIN_DISTANCE from the fountain"
    o = env._obs[0]
    assert o["action_mask"][A_TP] == 1
    for t in far:
        r = row_of(env, RADIANT, t)
        assert r < 0 or o["unit_masks"][UK_TELEPORT, r] == 1
    # standing next to a tower: that tower is no target; a scroll aimed at it is a no-op
    tower = far[0]
    place(g, 0, g.s.uf[tower, F_X] + 300.0, g.s.uf[tower, F_Y])
    reencode(env)
    row = row_of(env, RADIANT, tower)
    assert row >= 0 and env._obs[0]["unit_masks"][UK_TELEPORT, row] == 0
    env.step(actions(env, radiant_0=dict(primary=A_TP, target_unit=row)))
    assert g.s.uf[0, F_TP_T] == 0.0


@pytest.mark.parametrize("filters", [False, True])
def test_a_channelled_scroll_is_not_cancelled_by_the_policy(filters):
    """Without the filters a move order during the 3 s channel cancels it and the scroll is lost; with them the mask
    offers only the no-op while the hero channels, so the same moves leave the teleport to finish."""
    env = _env(filters)
    g = env.game
    fountain = g._rows(UT_FOUNTAIN, RADIANT)[0]
    place(g, 0, g.s.uf[fountain, F_X] + 300.0, g.s.uf[fountain, F_Y] + 300.0)
    reencode(env)
    tower = max(g._rows(UT_TOWER, RADIANT), key=lambda t: np.hypot(*(g.s.uf[t, [F_X, F_Y]] - g.s.uf[0, [F_X, F_Y]])))
    env.step(actions(env, radiant_0=dict(primary=A_TP, target_unit=row_of(env, RADIANT, tower))))
    assert g.s.uf[0, F_TP_T] > 0.0
    mask = _mask(env)
    assert (mask.sum() == 1 and mask[A_NOOP] == 1) if filters else mask[A_MOVE] == 1
    start = g.s.uf[0, [F_X, F_Y]].copy()
    for _ in range(30):  # 4 s: past the channel
        env.step(actions(env, radiant_0=dict(primary=A_MOVE, offset_x=0, offset_y=0)))
    to_tower = np.hypot(*(g.s.uf[tower, [F_X, F_Y]] - g.s.uf[0, [F_X, F_Y]]))
    if filters:
        assert to_tower < 1000.0  # teleported (and walked a little after)
    else:
        assert g.s.uf[0, F_TP_T] == 0.0 and np.hypot(*(g.s.uf[0, [F_X, F_Y]] - start)) < 1500.0
        assert to_tower > TP_MIN_DISTANCE - 1500.0
    # the game's summary counts the scroll: spent at the cast, finished only where the channel ran its 3 s
    hero = g.summary()["heroes"][0]
    assert (hero["consumables_used"], hero["scrolls_cast"], hero["scrolls_finished"]) == (1, 1, int(filters))
    assert g.summary()["heroes"][1]["scrolls_cast"] == 0


def test_scroll_illegal_without_a_far_target():
    uf = np.zeros((2, NUF), np.float64)
    uf[1, F_X] = TP_MIN_DISTANCE - 1.0  # the only allied building, near
    amask = np.ones((1, A_TP + 1), np.int32)
    umask = np.zeros((1, UK_TELEPORT + 1, 3), np.int32)
    umask[0, UK_TELEPORT, 1] = 1
    need_filters(uf, np.array([0]), np.array([-1, 1, -1]), amask, umask)
    assert amask[0, A_TP] == 0 and umask[0, UK_TELEPORT, 1] == 0
    uf[1, F_X] = TP_MIN_DISTANCE
    amask[:] = 1
    umask[0, UK_TELEPORT, 1] = 1
    need_filters(uf, np.array([0]), np.array([-1, 1, -1]), amask, umask)
    assert amask[0, A_TP] == 1 and umask[0, UK_TELEPORT, 1] == 1


@pytest.mark.parametrize("mode", ["1v1", "5v5"])
def test_filters_only_take_away(mode):
    """In random games the filtered masks are the unfiltered ones less some consumables' choices, step by step."""
    on, off = make_env(mode, consumable_filters=True), make_env(mode)
    rng = np.random.default_rng(3)
    taken = 0
    for _ in range(150):
        acts = random_legal_actions(on, rng)
        on.step(acts)
        off.step(acts)
        for a, b in zip(on._obs, off._obs):
            assert np.all(a["action_mask"] <= b["action_mask"])
            diff = np.nonzero(a["action_mask"] != b["action_mask"])[0]
            if a["action_mask"].sum() > 1:  # (a hero channelling a scroll has only the no-op)
                assert set(diff) <= {A_SALVE, A_CLARITY, A_TP}
            taken += len(diff)
            assert np.all(a["unit_masks"] <= b["unit_masks"])
            others = [k for k in range(a["unit_masks"].shape[0]) if k != UK_TELEPORT]
            assert np.array_equal(a["unit_masks"][others], b["unit_masks"][others])
    assert taken > 0


def test_evaluate_plays_with_the_filters_when_asked():
    from app import evaluate
    base = ["--agent", "random", "--opponent", "scripted_1", "--mode", "1v1"]
    assert "consumable_filters" not in evaluate.env_games(evaluate.parse_args(base))
    args = evaluate.parse_args(base + ["--consumable-filters", "--randomize", "lineup"])
    assert evaluate.env_games(args)["consumable_filters"] is True
    assert evaluate.env_games(args)["evaluation"] is False
    from moba.env.moba_env import MobaEnv
    env = MobaEnv({"mode": "1v1", **evaluate.env_games(args)})
    env.reset(seed=0)
    assert env.encoder.consumable_filters is True
