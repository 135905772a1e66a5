"""Raw shaped reward signals per hero (Five app. G, Table 6), their weights, and the post-processing the training
side applies (zero sum, team spirit, time decay).

The environment returns the weighted sum of the raw signals per hero and the per-signal breakdown in ``infos``. It
does NOT apply zero sum, team spirit or time decay: ``postprocess_rewards`` is the one pure function for that, so that
the training side can anneal team spirit.

Building signals (towers, shrines, barracks) are earned by the team that damages the building: 2/3 of the weight
linearly as it loses health and 1/3 on death (Table 6, footnote *). "Ancient HP change" is earned linearly as the
enemy ancient loses health. Courier death and Aegis have no counterpart in this game.
"""
from __future__ import annotations

import numpy as np

from moba.game.constants import LANE_WIDTH, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_SHRINE, UT_TOWER
from moba.game.state import (F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_X, F_Y, G_EARNED, G_SPENT, G_XP, H_DEATHS, H_DN,
                            H_KILLS, H_LH, H_UNIT, I_ALIVE, I_TEAM, I_TIER, I_TYPE)

SIGNALS = ("win", "hero_death", "xp", "gold_gained", "gold_spent", "health", "mana", "killed_hero", "last_hit",
           "deny", "ancient_hp", "megas", "tower_t1", "tower_t2", "tower_t3", "tower_t4", "shrine", "barracks",
           "lane_assign")
SIGNAL_INDEX = {name: i for i, name in enumerate(SIGNALS)}
N_SIGNALS = len(SIGNALS)
# the tracker's columns: hero state columns and the signals their changes give
_HERO_FLOATS = [G_XP, G_EARNED, G_SPENT]
_GOLD_XP_SIGNALS = [SIGNAL_INDEX[k] for k in ("xp", "gold_gained", "gold_spent")]
_HERO_COUNTS = [H_DEATHS, H_KILLS, H_LH, H_DN]
_COUNT_SIGNALS = [SIGNAL_INDEX[k] for k in ("hero_death", "killed_hero", "last_hit", "deny")]
_HEALTH, _MANA, _ANCIENT, _MEGAS, _WIN, _LANE = (SIGNAL_INDEX[k] for k in (
    "health", "mana", "ancient_hp", "megas", "win", "lane_assign"))

# Table 6 of the 2019 paper (Five app. G). Building weights are the total value of a building.
WEIGHTS_FIVE_2019 = {
    "win": 5.0, "hero_death": -1.0, "xp": 0.002, "gold_gained": 0.006, "gold_spent": 0.0006, "health": 2.0,
    "mana": 0.75, "killed_hero": -0.6, "last_hit": -0.16, "deny": 0.15, "ancient_hp": 5.0, "megas": 4.0,
    "tower_t1": 2.25, "tower_t2": 3.0, "tower_t3": 4.5, "tower_t4": 2.25, "shrine": 2.25, "barracks": 6.0,
    "lane_assign": -0.15,
}
# Five's 2018 reward note: building score weight * (1 + 2 * health fraction), i.e. a total of 3 * weight
# (1/3 on death, 2/3 with health); the ancient's 2.5 death bonus is folded into "win" (2.5 + 2.5) and its health
# part (5.0) into "ancient_hp"; no gold-spent reward; lane penalty -0.02.
WEIGHTS_FIVE_2018 = {
    "win": 5.0, "hero_death": -1.0, "xp": 0.002, "gold_gained": 0.006, "gold_spent": 0.0, "health": 2.0,
    "mana": 0.75, "killed_hero": -0.6, "last_hit": 0.16, "deny": 0.2, "ancient_hp": 5.0, "megas": 4.0,
    "tower_t1": 2.25, "tower_t2": 3.0, "tower_t3": 4.5, "tower_t4": 2.25, "shrine": 2.25, "barracks": 6.0,
    "lane_assign": -0.02,
}
# The Honor of Kings Arena 1v1 reward table (HoK app. F): hp_point 2.0 (health), tower_hp_point 10.0 (the
# towers' health; app. F's "pushing" rewards are the attack on turrets and crystal, so the crystal's health,
# ancient_hp, weighs the same), money 0.006 (gold gained), ep_rate 0.75 (mana), death -1.0, kill -0.6, exp 0.006.
# The table has no last-hit, deny, spending or lane terms (0 here) and no weight for the win: Five's 5.0 (Table 6).
# Pushing is worth 4.4x Five's first tower against the same death penalty.
WEIGHTS_HOK_2022 = {
    "win": 5.0, "hero_death": -1.0, "xp": 0.006, "gold_gained": 0.006, "gold_spent": 0.0, "health": 2.0,
    "mana": 0.75, "killed_hero": -0.6, "last_hit": 0.0, "deny": 0.0, "ancient_hp": 10.0, "megas": 0.0,
    "tower_t1": 10.0, "tower_t2": 10.0, "tower_t3": 10.0, "tower_t4": 10.0, "shrine": 0.0, "barracks": 0.0,
    "lane_assign": 0.0,
}
# A reward that pays for winning (the learning issue's item 4; docs/reward_audit.md, 2026-11-26): Five app. G's
# Table 6 with the game's objective weighted up and the fights weighted down, so that against every ladder level the
# return rises with the player's level. Under five_2019 a player that fights the full bot and loses (scripted_1:
# health -12.8, hero deaths -6.5 a 600 s 1v1 game) collects less than one that stands still (noop -25.7 against
# scripted_1's -43.3), and PPO learns to stay home. The changes from Table 6:
# - win 5.0 -> 10.0 and every building (towers, shrines, barracks, megas) x3: the objective decides the return;
# - health 2.0 -> 0.5 and hero death -1.0 -> 0.0: a death still costs the health curve, the enemy's kill gold and xp
#   (zero sum) and the respawn time, but no longer outweighs the objective. Over a game, the health term charges
#   each death the whole curve (a respawn is not a heal), a second death penalty;
# - mana 0.75 -> 0.0: the mana term charges every cast (the advantage of the ability actions was negative in every
#   probe of the issue) and pays back the regeneration later; over a game it nets to about 0.
WEIGHTS_FIVE_OBJECTIVE = {
    **WEIGHTS_FIVE_2019, "win": 10.0, "health": 0.5, "hero_death": 0.0, "mana": 0.0,
    "tower_t1": 6.75, "tower_t2": 9.0, "tower_t3": 13.5, "tower_t4": 6.75, "shrine": 6.75, "barracks": 18.0,
    "megas": 12.0,
}
REWARD_PRESETS = {"five_2019": WEIGHTS_FIVE_2019, "five_2018": WEIGHTS_FIVE_2018, "hok_2022": WEIGHTS_HOK_2022,
                  "five_objective": WEIGHTS_FIVE_OBJECTIVE}
DEFAULT_PRESET = "five_2019"

# Post-processing defaults (Five app. G)
TEAM_SPIRIT = 0.3  # eq. 12's tau, Table 2 "Baseline" column (the run config anneals it: schedules.team_spirit)
TIME_DECAY_BASE = 0.6  # eq. 11: rewards other than win/loss are scaled by 0.6 ** (T / 10 min)
TIME_DECAY_PERIOD_S = 600.0
BUILDING_HEALTH_SHARE = 2.0 / 3.0  # Table 6 footnote *: 2/3 with health lost, 1/3 on death


def reward_weights(preset: str = DEFAULT_PRESET, overrides: dict | None = None) -> np.ndarray:
    """Weight vector in SIGNALS order; errors name the bad key and the allowed values."""
    if preset not in REWARD_PRESETS:
        raise ValueError(f"reward preset {preset!r} unknown; allowed: {sorted(REWARD_PRESETS)}")
    w = dict(REWARD_PRESETS[preset])
    for k, v in (overrides or {}).items():
        if k not in SIGNAL_INDEX:
            raise ValueError(f"reward weight {k!r} unknown; allowed: {list(SIGNALS)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"reward weight {k!r} must be a number, got {v!r}")
        w[k] = float(v)
    return np.array([w[s] for s in SIGNALS], np.float64)


def health_curve(x):
    """Table 6 footnote: health fraction x is worth (x + 1 - (1 - x)^4) / 2: 0 dead, 1 full, steepest near death."""
    x = np.clip(x, 0.0, 1.0)
    return (x + 1.0 - (1.0 - x) ** 4) / 2.0


def postprocess_rewards(rewards, win_rewards, team_of, team_spirit: float, game_time_s: float, zero_sum=True,
                        time_decay_base=TIME_DECAY_BASE, time_decay_period_s=TIME_DECAY_PERIOD_S) -> np.ndarray:
    """The training-side reward of every hero for one step (Five app. G):

    1. time decay: every reward but win/loss is scaled by ``time_decay_base ** (T / time_decay_period_s)`` (eq. 11);
    2. team spirit: ``r_i = (1 - tau) * r_i + tau * mean(r over i's team)`` (eq. 12);
    3. zero sum: ``r_i -= mean(r over the enemy team)``.

    `rewards` excludes the win signal, `win_rewards` is the weighted win signal, `team_of` the team (0/1) of each
    hero. Team spirit and zero sum commute, so the order of 2 and 3 does not matter.
    """
    if not 0.0 <= team_spirit <= 1.0:
        raise ValueError(f"team_spirit must be in [0, 1], got {team_spirit}")
    rewards = np.asarray(rewards, np.float64)
    team_of = np.asarray(team_of)
    r = rewards * time_decay_base ** (game_time_s / time_decay_period_s) + np.asarray(win_rewards, np.float64)
    team_mean = np.zeros(2)
    for t in (0, 1):
        team_mean[t] = r[team_of == t].mean() if np.any(team_of == t) else 0.0
    r = (1.0 - team_spirit) * r + team_spirit * team_mean[team_of]
    if zero_sum:
        r = r - team_mean[1 - team_of]
    return r


def _segment_distance(px, py, segs):
    """Distance from points (n,) to the nearest of segments (m, 4) -> (n,)."""
    ax, ay, bx, by = segs[:, 0], segs[:, 1], segs[:, 2], segs[:, 3]
    dx, dy = bx - ax, by - ay
    t = ((px[:, None] - ax) * dx + (py[:, None] - ay) * dy) / (dx * dx + dy * dy)
    t = np.clip(t, 0.0, 1.0)
    cx, cy = ax + t * dx, ay + t * dy
    return np.sqrt((px[:, None] - cx) ** 2 + (py[:, None] - cy) ** 2).min(axis=1)


class RewardTracker:
    """Turns consecutive engine states into the raw per-hero signals of SIGNALS (quantities, before weights)."""

    def __init__(self, game, lanes: np.ndarray, lane_until: np.ndarray):
        self.game = game
        self.lanes = lanes
        self.lane_until = lane_until
        s = game.s
        self.n = game.n_heroes
        self.team_of = np.array([0] * game.team_size + [1] * game.team_size)
        self.hero_units = s.hi[:, H_UNIT].copy()
        rows = np.array(game.building_rows)
        types, tiers = s.ui[rows, I_TYPE], s.ui[rows, I_TIER]
        self.building_rows = rows
        self.building_team = s.ui[rows, I_TEAM].copy()  # buildings never change sides
        self.building_signal = np.full(len(rows), -1)
        for i, (typ, tier) in enumerate(zip(types, tiers)):
            if typ == UT_TOWER:
                self.building_signal[i] = SIGNAL_INDEX[f"tower_t{tier}"]
            elif typ == UT_SHRINE:
                self.building_signal[i] = SIGNAL_INDEX["shrine"]
            elif typ in (UT_BARRACKS_MELEE, UT_BARRACKS_RANGED):
                self.building_signal[i] = SIGNAL_INDEX["barracks"]
        self.ancients = game.ancient_idx.copy()
        rax = game.rax[game.rax >= 0]
        self.rax_of_team = [rax[s.ui[rax, I_TEAM] == t] for t in (0, 1)]
        self.lane_bound = self.lanes.sum(axis=1) < 3  # heroes with a lane assignment to keep
        self.lane_segments = []
        for lane in range(3):
            pts = np.array(game.map.lanes[0][lane])
            self.lane_segments.append(np.concatenate([pts[:-1], pts[1:]], axis=1))
        self.prev = self._snapshot()

    def _snapshot(self) -> dict:
        s = self.game.s
        u = self.hero_units
        b = self.building_rows
        hero_units = s.uf[u]
        alive = s.ui[u, I_ALIVE]
        max_mana = hero_units[:, F_MAXMANA]
        return {
            "gold_xp": s.hf[:, _HERO_FLOATS],  # fancy indexing copies
            "counts": s.hi[:, _HERO_COUNTS],
            "health": health_curve(hero_units[:, F_HP] / hero_units[:, F_MAXHP]) * alive,
            "mana": np.where(max_mana > 0, hero_units[:, F_MANA] / np.maximum(max_mana, 1e-9), 0.0),
            "alive": alive,
            "bhp": s.uf[b, F_HP] / s.uf[b, F_MAXHP], "balive": s.ui[b, I_ALIVE],
            "ancient_hp": s.uf[self.ancients, F_HP] / s.uf[self.ancients, F_MAXHP],
            "rax_alive": [int(s.ui[rows, I_ALIVE].sum()) for rows in self.rax_of_team],
        }

    def step(self, dt: float) -> np.ndarray:
        """Raw signal quantities of the last step, (n_heroes, N_SIGNALS)."""
        g, s = self.game, self.game.s
        cur = self._snapshot()
        p = self.prev
        sig = np.zeros((self.n, N_SIGNALS))
        sig[:, _GOLD_XP_SIGNALS] = cur["gold_xp"] - p["gold_xp"]
        sig[:, _COUNT_SIGNALS] = cur["counts"] - p["counts"]
        # health and mana changes are not counted across a respawn (a respawn is not a heal)
        same_life = (cur["alive"] == p["alive"]) | (cur["alive"] == 0)
        sig[:, _HEALTH] = np.where(same_life, cur["health"] - p["health"], 0.0)
        sig[:, _MANA] = np.where(cur["alive"] == 1, np.where(same_life, cur["mana"] - p["mana"], 0), 0.0)
        # team signals: buildings damaged and destroyed go to the other team's heroes
        lost = np.clip(p["bhp"] - cur["bhp"], 0.0, None) * BUILDING_HEALTH_SHARE
        died = (p["balive"] == 1) & (cur["balive"] == 0)
        val = lost + died * (1.0 - BUILDING_HEALTH_SHARE)
        for i in np.nonzero((val > 0) & (self.building_signal >= 0))[0]:
            sig[self.team_of != self.building_team[i], self.building_signal[i]] += val[i]
        anc_lost = np.clip(p["ancient_hp"] - cur["ancient_hp"], 0.0, None)
        sig[:, _ANCIENT] += anc_lost[1 - self.team_of]  # each hero earns the enemy ancient's health lost
        for t in (0, 1):
            if len(self.rax_of_team[t]) > 0 and p["rax_alive"][t] > 0 and cur["rax_alive"][t] == 0:
                sig[self.team_of != t, _MEGAS] += 1.0
        if g.winner >= 0:
            sig[:, _WIN] = np.where(self.team_of == g.winner, 1.0, -1.0)
        # lane assignment: seconds spent outside every assigned lane while the assignment holds (app. O.2)
        active = (self.lane_until > g.time) & (cur["alive"] == 1) & self.lane_bound
        if active.any():
            u = self.hero_units
            px, py = s.uf[u, F_X], s.uf[u, F_Y]
            inside = np.zeros(self.n, bool)
            for lane in range(3):  # lane paths are physical: the same for both teams
                d = _segment_distance(px, py, self.lane_segments[lane])
                inside |= (d <= LANE_WIDTH) & (self.lanes[:, lane] == 1)
            sig[:, _LANE] = np.where(active & ~inside, dt, 0.0)
        self.prev = cur
        return sig
