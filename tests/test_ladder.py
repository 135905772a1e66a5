"""The reference ladder (policies/agents/ladder.py), the scripted bot's handicaps (policies/scripted.Handicap) and the
seeded
evaluation games the ladder is measured on. Short games only: the ladder's win rates over many games are
``scripts/win_rate.py --ladder``'s job."""
import copy

import numpy as np
import pytest
from moba_testlib import OPEN_SPOT, clear_creeps, creeps_of, make_env, noop_actions, place, reencode, row_of

from moba.env.actions import A_ATTACK, NOOP_ACTION
from moba.env.moba_env import MobaEnv
from moba.game.constants import DIRE, LANE_BOT, LANE_MID, LANE_TOP, RADIANT
from moba.game.state import F_HP, F_MAXHP, H_UNIT
from policies.agents.by_name import AGENTS, NoopAgent, make_agent, play_game
from policies.agents.ladder import (BRIDGE_HANDICAPS, LADDER, LADDER_HANDICAPS, LADDER_TARGET_WIN_RATE,
                                    WARMUP_HANDICAPS, WARMUP_LADDER, ladder_pairs)
from policies.agents.scripted import (ABILITY_ACTIONS, FULL_BOT, ITEM_USE_ACTIONS, Handicap, LanePath, RandomAgent,
                                      ScriptedAgent)
from policies.league.ratings import LIMIT_DRAW, LIMIT_POINTS
from scripts.win_rate import summarize

MODES = ("1v1", "5v5")


class Recorder:
    """Wraps an agent and keeps every step's actions (and, with keep_observations, a copy of its observations)."""

    def __init__(self, agent, keep_observations=False):
        self.agent, self.keep, self.steps = agent, keep_observations, []

    def reset(self, agent_ids=None):
        self.agent.reset(agent_ids)

    def act(self, observations):
        actions = self.agent.act(observations)
        self.steps.append((copy.deepcopy(observations) if self.keep else None, copy.deepcopy(actions)))
        return actions

    def primaries(self):
        return {a["primary"] for _, acts in self.steps for a in acts.values()}


def _short_game(mode, radiant, dire, seed=0, time_limit_s=60.0):
    env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": time_limit_s})
    return env, play_game(env, radiant, dire, seed=seed)


# ---- the ladder by name ----------------------------------------------------------------------------------------------
def test_every_level_is_an_agent_by_name():
    assert LADDER == ("random", "scripted_1", "scripted_2", "scripted_3")
    assert ladder_pairs() == [("scripted_1", "random"), ("scripted_2", "scripted_1"), ("scripted_3", "scripted_2")]
    assert 0.5 < LADDER_TARGET_WIN_RATE < 1.0
    for name in LADDER:
        agent = make_agent(name, seed=3)
        assert name in AGENTS
        if name == "random":
            assert isinstance(agent, RandomAgent)
        else:
            assert isinstance(agent, ScriptedAgent) and agent.handicap == LADDER_HANDICAPS[name]
        _, summary = _short_game("1v1", agent, make_agent("random", 4), time_limit_s=10.0)
        assert summary["game_time_s"] == pytest.approx(10.0, abs=0.2)
    assert make_agent("scripted").handicap == make_agent("scripted_3").handicap == FULL_BOT  # an alias
    weaker = [LADDER_HANDICAPS[n] for n in ("scripted_1", "scripted_2")]
    assert all(h != FULL_BOT for h in weaker) and weaker[0] != weaker[1]


def test_unknown_agent_names_the_allowed_ones():
    with pytest.raises(ValueError) as exc:
        make_agent("scripted_4")
    for word in ("scripted_4", "random", "scripted", "scripted_1", "scripted_2", "scripted_3"):
        assert repr(word) in str(exc.value)


@pytest.mark.parametrize("kw,words", [
    ({"reaction_steps": -1}, ["reaction_steps", "int >= 0"]),
    ({"reaction_steps": 1.5}, ["reaction_steps", "int >= 0"]),
    ({"abilities": "no"}, ["abilities", "true or false"]),
    ({"items": 0}, ["items", "true or false"]),
    ({"last_hits": 1.5}, ["last_hits", "[0, 1.0]"]),
    ({"retreat_hp": -0.1}, ["retreat_hp", "[0, 0.85]"]),
    ({"random_actions": 1.2}, ["random_actions", "[0, 1.0]"]),
    ({"wave_spells": "no"}, ["wave_spells", "true or false"]),
    ({"ultimate": 1}, ["ultimate", "true or false"]),
    ({"spell_share": 1.5}, ["spell_share", "[0, 1.0]"]),
])
def test_bad_handicaps_name_the_field_and_the_allowed_values(kw, words):
    with pytest.raises(ValueError) as exc:
        Handicap(**kw)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))
    with pytest.raises(ValueError, match="Handicap"):
        ScriptedAgent(0, handicap={"abilities": False})


# ---- each handicap does what it says ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_abilities_and_items_off_never_cast_or_use_an_item(mode):
    full, handicapped = Recorder(ScriptedAgent(0)), Recorder(ScriptedAgent(1, Handicap(abilities=False, items=False)))
    _short_game(mode, full, handicapped)
    assert full.primaries() & set(ABILITY_ACTIONS) and full.primaries() & set(ITEM_USE_ACTIONS)  # the game had both
    assert not handicapped.primaries() & (set(ABILITY_ACTIONS) | set(ITEM_USE_ACTIONS))


def _casts(mode, handicap, opponent=NoopAgent) -> int:
    """The casts of a bot with `handicap` playing Dire (the marksman in 1v1) for 180 s against `opponent`."""
    bot = Recorder(ScriptedAgent(0, handicap))
    _short_game(mode, opponent(1), bot, time_limit_s=180.0)
    return sum(a["primary"] in ABILITY_ACTIONS for _, acts in bot.steps for a in acts.values())


@pytest.mark.parametrize("mode", MODES)
def test_without_wave_spells_a_bot_that_meets_no_hero_casts_nothing(mode):
    """Against heroes that stand still in their base, every cast of the full bot is an area spell on a wave."""
    assert _casts(mode, FULL_BOT) >= 5
    assert _casts(mode, Handicap(wave_spells=False)) == 0


def test_without_its_ultimate_the_bot_may_cast_every_other_ability():
    allowed, full = Handicap(ultimate=False).allowed_primaries(), FULL_BOT.allowed_primaries()
    assert [p for p in range(len(full)) if allowed[p] != full[p]] == [ABILITY_ACTIONS[3]]


def test_a_share_of_spells_casts_fewer_and_none_at_zero():
    """A cast refused by the coin keeps the bot from casting for SPELL_LOCKOUT_S: fewer casts at a quarter (mana
    saved meanwhile pays for some later), none at 0."""
    full, quarter = _casts("5v5", FULL_BOT, RandomAgent), _casts("5v5", Handicap(spell_share=0.25), RandomAgent)
    assert full >= 8 and quarter < 0.75 * full
    assert _casts("5v5", Handicap(spell_share=0.0), RandomAgent) == 0
    assert _casts("5v5", Handicap(spell_share=1.0), RandomAgent) == full  # no coin drawn at 1: the full bot's game


def test_reaction_delay_decides_every_few_steps_and_keeps_the_last_order_in_between():
    """reaction_steps = 2: a decision at steps 0, 3, 6, ..., the full bot's decision on that step's observation (its
    memory sees only those steps); no new order (a no-op) at the steps between."""
    slow = Recorder(ScriptedAgent(0, Handicap(reaction_steps=2)), keep_observations=True)
    _short_game("1v1", slow, RandomAgent(1), time_limit_s=30.0)
    full = ScriptedAgent(0)
    full.reset()
    decided = 0
    for step, (obs, acts) in enumerate(slow.steps):
        if step % 3:
            assert all(a == NOOP_ACTION for a in acts.values()), step
        else:
            assert full.act(obs) == acts, step
            decided += any(a != NOOP_ACTION for a in acts.values())
    assert decided > 10


def test_random_decisions_replace_that_share_of_the_bots_decisions():
    """random_actions = 0.5 on a bot deciding every step: about half its actions are the full bot's on the same
    observations, the others random legal actions of the primaries the handicap allows (no ability, no item)."""
    noisy = Recorder(ScriptedAgent(0, Handicap(abilities=False, items=False, random_actions=0.5)),
                     keep_observations=True)
    _short_game("1v1", noisy, RandomAgent(1), time_limit_s=40.0)
    bot = ScriptedAgent(0, Handicap(abilities=False, items=False))
    same = 0
    for obs, acts in noisy.steps:
        bot.reset()  # the bot's memory would differ where the noisy one acted at random; compare single decisions
        same += bot.act(obs) == acts
        for aid, a in acts.items():
            assert obs[aid]["action_mask"][a["primary"]]
    assert 0.4 < same / len(noisy.steps) < 0.75  # the bot's own half, and random actions that happen to agree
    assert not noisy.primaries() & (set(ABILITY_ACTIONS) | set(ITEM_USE_ACTIONS))


def test_warmup_levels_are_scripted_1_with_random_decisions():
    assert WARMUP_LADDER == ("random", "scripted_1_r75", "scripted_1_r50", "scripted_1_r25", "scripted_1",
                             "scripted_2", "scripted_3")
    shares = [WARMUP_HANDICAPS[n].random_actions for n in WARMUP_LADDER[1:4]]
    assert shares == [0.75, 0.5, 0.25]
    for name, h in WARMUP_HANDICAPS.items():
        assert make_agent(name, seed=2).handicap == h
        assert h == Handicap(**{**LADDER_HANDICAPS["scripted_1"].__dict__, "random_actions": h.random_actions})
    assert all(h.random_actions == 0 for h in LADDER_HANDICAPS.values())  # the rated ladder is unchanged


def test_bridge_levels_are_the_full_bot_under_one_handicap():
    assert set(BRIDGE_HANDICAPS) == {"scripted_3_slow", "scripted_3_brave", "scripted_3_r25", "scripted_3_no_items",
                                     "scripted_2_items", "scripted_3_no_wave_spells", "scripted_3_no_ultimate",
                                     "scripted_3_spells_25", "scripted_3_spells_40", "scripted_3_spells_50",
                                     "scripted_3_spells_60", "scripted_3_spells_75"}
    for name, h in BRIDGE_HANDICAPS.items():
        assert make_agent(name, seed=2).handicap == h
        changed = {k for k, v in h.__dict__.items() if v != getattr(FULL_BOT, k)}
        assert len(changed) == 1, (name, changed)
    assert BRIDGE_HANDICAPS["scripted_3_slow"].reaction_steps == 3
    assert BRIDGE_HANDICAPS["scripted_3_brave"].retreat_hp == 0.1
    assert BRIDGE_HANDICAPS["scripted_3_r25"].random_actions == 0.25
    assert not BRIDGE_HANDICAPS["scripted_3_no_items"].items and not BRIDGE_HANDICAPS["scripted_2_items"].abilities
    assert [BRIDGE_HANDICAPS[f"scripted_3_spells_{p}"].spell_share for p in (25, 40, 50, 60, 75)] == \
        [0.25, 0.4, 0.5, 0.6, 0.75]
    assert not set(BRIDGE_HANDICAPS) & set(LADDER)  # training opponents, not rated levels


def _lane_scenario(hero_hp_fraction=1.0):
    """Radiant's hero at an open spot beside two enemy creeps: one at full health next to it, one farther away that
    a single hit kills. Returns (observations of Radiant, the near creep's row, the weak creep's row)."""
    env = make_env("1v1")
    env.step(noop_actions(env))  # the first wave spawns
    g = env.game
    near, weak = creeps_of(g, DIRE)[:2]
    clear_creeps(g, keep=(near, weak))
    hero = g.s.hi[RADIANT, H_UNIT]
    place(g, hero, *OPEN_SPOT)
    place(g, near, OPEN_SPOT[0] + 150.0, OPEN_SPOT[1])
    place(g, weak, OPEN_SPOT[0] + 450.0, OPEN_SPOT[1])
    g.s.uf[weak, F_HP] = 1.0
    g.s.uf[hero, F_HP] = hero_hp_fraction * g.s.uf[hero, F_MAXHP]
    reencode(env)
    return {"radiant_0": env.observations()["radiant_0"]}, row_of(env, RADIANT, near), row_of(env, RADIANT, weak)


def test_worse_last_hits_miss_the_kill_and_hit_the_nearest_creep():
    obs, near, weak = _lane_scenario()
    assert near >= 0 and weak >= 0
    assert ScriptedAgent(0).act(obs)["radiant_0"] == {**NOOP_ACTION, "primary": A_ATTACK, "target_unit": weak}
    assert ScriptedAgent(0, Handicap(last_hits=0.0)).act(obs)["radiant_0"] == {
        **NOOP_ACTION, "primary": A_ATTACK, "target_unit": near}
    # in between, a seeded coin per decision: the same agent seed makes the same choice
    picks = {seed: ScriptedAgent(seed, Handicap(last_hits=0.5)).act(obs)["radiant_0"]["target_unit"]
             for seed in range(16)}
    assert set(picks.values()) == {near, weak}
    assert all(ScriptedAgent(seed, Handicap(last_hits=0.5)).act(obs)["radiant_0"]["target_unit"] == pick
               for seed, pick in picks.items())


def test_a_lower_retreat_threshold_stays_in_the_fight():
    obs, _, weak = _lane_scenario(hero_hp_fraction=0.2)
    careful, reckless = ScriptedAgent(0, Handicap(items=False)), ScriptedAgent(0, Handicap(items=False,
                                                                                           retreat_hp=0.1))
    assert careful.act(obs)["radiant_0"]["primary"] != A_ATTACK and careful.retreating("radiant_0")
    assert reckless.act(obs)["radiant_0"] == {**NOOP_ACTION, "primary": A_ATTACK, "target_unit": weak}
    assert not reckless.retreating("radiant_0")


# ---- evaluation games differ by seed and replay ----------------------------------------------------------------------
@pytest.mark.parametrize("mode,time_limit_s", [("1v1", 90.0), ("5v5", 60.0)])
def test_scripted_games_differ_by_seed_and_replay_bit_for_bit(mode, time_limit_s):
    """The full bot against itself (deterministic agents): without the evaluation jitter every seed played the same
    game; with it the games differ by seed, and a seed replays its game bit for bit in a fresh env."""
    games = {}
    for seed in (0, 1, 2):
        env, s = _short_game(mode, make_agent("scripted", 0), make_agent("scripted", 1), seed, time_limit_s)
        games[seed] = (env.game.s, s)
    returns = {tuple(round(v, 9) for v in s["raw_return"].values()) for _, s in games.values()}
    assert len(returns) == 3
    assert len({str([h["gold_earned"] for h in s["heroes"]]) for _, s in games.values()}) > 1
    env, again = _short_game(mode, make_agent("scripted", 0), make_agent("scripted", 1), 1, time_limit_s)
    assert env.game.s.equals(games[1][0]) and again == games[1][1]
    fixed = MobaEnv({"mode": mode, "evaluation": True, "evaluation_jitter": False, "time_limit_s": 10.0})
    unjittered = [play_game(fixed, make_agent("scripted"), make_agent("scripted"), seed=seed) for seed in (0, 1)]
    assert unjittered[0] == unjittered[1]


def test_handicapped_bots_replay_for_the_same_agent_seed():
    """The last-hit skill is the only random choice of a handicapped bot, drawn from its seeded generator."""
    def game(agent_seed):
        env, s = _short_game("1v1", make_agent("scripted_1", agent_seed), make_agent("scripted_2", 1), 0, 90.0)
        return env.game.s, s
    (s1, a), (s2, b) = game(5), game(5)
    assert s1.equals(s2) and a == b


# ---- the ladder's rule: a game at the time limit is not won ----------------------------------------------------------
def test_ladder_win_rate_counts_time_limit_games_by_the_rule():
    rows = [{"side": "radiant", "winner": "radiant", "margin": 5.0, "game_time_s": 600.0},
            {"side": "dire", "winner": "none", "margin": 3.0, "game_time_s": 1200.0},
            {"side": "radiant", "winner": "dire", "margin": -2.0, "game_time_s": 900.0},
            {"side": "dire", "winner": "none", "margin": -1.0, "game_time_s": 1200.0}]
    draw = summarize(rows, LIMIT_DRAW)
    assert (draw["wins"], draw["outright_wins"], draw["draws"], draw["losses"]) == (1, 1, 2, 1)
    assert draw["win_rate"] == 0.25 and draw["wins_as_radiant"] == 1 and draw["wins_as_dire"] == 0
    points = summarize(rows, LIMIT_POINTS)
    assert points["wins"] == 2 and points["win_rate"] == 0.5 and points["wins_as_dire"] == 1


# ---- the bot's lane geometry -----------------------------------------------------------------------------------------
def _project_by_arrays(path, x, y):
    """LanePath.project as it was written with arrays (stack, clip, norm, argmin): the reference the float version
    must equal to the bit, or the bot's decisions (and every game above) would drift."""
    x, y = np.atleast_1d(x).astype(float), np.atleast_1d(y).astype(float)
    rel = np.stack([x, y], -1)[:, None, :] - path.pts[None, :-1, :]
    t = np.clip((rel * path.dir[None]).sum(-1), 0.0, path.len[None])
    near = path.pts[None, :-1, :] + t[..., None] * path.dir[None]
    d = np.linalg.norm(np.stack([x, y], -1)[:, None, :] - near, axis=-1)
    k = d.argmin(axis=1)
    i = np.arange(len(x))
    return path.cum[k] + t[i, k], d[i, k]


@pytest.mark.parametrize("team,lane", [(t, lane) for t in (RADIANT, DIRE) for lane in (LANE_TOP, LANE_MID, LANE_BOT)])
def test_lane_projection_equals_the_array_formula_to_the_bit(team, lane):
    path = LanePath(team, lane)
    rng = np.random.default_rng(team * 3 + lane)
    lo, hi = path.pts.min(0) - 2000.0, path.pts.max(0) + 2000.0
    for n in (1, 2, 7, 40):
        xy = rng.uniform(lo, hi, size=(n, 2)).astype(np.float32)  # observations are float32
        xy[0] = path.pts[len(path.pts) // 2]  # on a waypoint: two segments tie, the first must win
        s, d = path.project(xy[:, 0], xy[:, 1])
        s_ref, d_ref = _project_by_arrays(path, xy[:, 0], xy[:, 1])
        assert s.tolist() == s_ref.tolist() and d.tolist() == d_ref.tolist()
    s, d = path.project(np.float32(xy[1, 0]), float(xy[1, 1]))  # scalars, as the bot passes its own position
    assert (s.shape, d.shape) == ((1,), (1,)) and s[0] == s_ref[1] and d[0] == d_ref[1]
    for arc in (-5.0, 0.0, path.cum[1], path.cum[-1] / 3, np.float32(path.cum[-1] / 2), path.cum[-1], 1e9):
        c = float(np.clip(arc, 0.0, path.cum[-1]))  # the arc length clipped onto the lane, as with arrays
        k = min(int(np.searchsorted(path.cum, c, side="right")) - 1, len(path.len) - 1)
        assert path.point(arc).tolist() == (path.pts[k] + (c - path.cum[k]) * path.dir[k]).tolist()
