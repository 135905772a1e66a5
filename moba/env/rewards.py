"""Raw shaped reward signals per hero (Five app. G, Table 6), their weights, and the post-processing the training
side applies (zero sum, team spirit, time decay).

The environment returns the weighted sum of the raw signals per hero and the per-signal breakdown in ``infos``. It
does NOT apply zero sum, team spirit or time decay: ``postprocess_rewards`` is the one pure function for that, so that
the training side can anneal team spirit.

Building signals (towers, shrines, barracks) are earned by the team that damages the building: 2/3 of the weight
linearly as it loses health and 1/3 on death (Table 6, footnote *). "Ancient HP change" is earned linearly as the
enemy ancient loses health. Courier death and Aegis have no counterpart in this game.

``consumables`` is not in Table 6 either (weight 0 in every preset): the gold a hero spent on consumables (healing
salves, clarities, town portal scrolls, wards), which the purchase script (Five app. F.1) buys again as soon as one is
used. A negative weight charges their use its price: ``gold_spent`` pays for spending, and the cost of gold gone shows
only minutes later, as items bought late (docs/results.md, "Where the scratch agents' gold goes").

``creep_push`` is not in Table 6 (weight 0 in every preset; ``env.reward_weights`` turns it on): the change of the
team's push potential, the sum over its living lane creeps of how far each has come from its own ancient toward the
enemy's (0 at its own, 1 at the enemy's, by straight-line distance), divided by a lane wave's creeps
(``CREEPS_PER_WAVE``): one wave standing at the enemy's ancient is 1. A potential's change (Ng et al. 1999's shaping,
with the discount taken as 1): over a game it sums to the potential at the end less the one at the start, so it pays
for waves kept alive deep in the enemy's half, and charges for waves lost, without anything to farm.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from moba.game.constants import (CREEPS_PER_WAVE, LANE_WIDTH, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_CREEP_MELEE,
                                 UT_CREEP_RANGED, UT_SHRINE, UT_TOWER)
from moba.game.state import (F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_X, F_Y, G_CONSUMABLES, G_EARNED, G_SPENT, G_XP,
                            H_DEATHS, H_DN, H_KILLS, H_LH, H_UNIT, I_ALIVE, I_TEAM, I_TIER, I_TYPE)

SIGNALS = ("win", "hero_death", "xp", "gold_gained", "gold_spent", "health", "mana", "killed_hero", "last_hit",
           "deny", "ancient_hp", "megas", "tower_t1", "tower_t2", "tower_t3", "tower_t4", "shrine", "barracks",
           "lane_assign", "creep_push", "consumables")
SIGNAL_INDEX = {name: i for i, name in enumerate(SIGNALS)}
N_SIGNALS = len(SIGNALS)
# the signals of the tracker's hero columns: xp, gold earned, gold spent, gold spent on consumables; deaths, kills,
# last hits, denies
_GOLD_XP_SIGNALS = tuple(SIGNAL_INDEX[k] for k in ("xp", "gold_gained", "gold_spent", "consumables"))
_COUNT_SIGNALS = tuple(SIGNAL_INDEX[k] for k in ("hero_death", "killed_hero", "last_hit", "deny"))
_HEALTH, _MANA, _ANCIENT, _MEGAS, _WIN, _LANE, _PUSH = (SIGNAL_INDEX[k] for k in (
    "health", "mana", "ancient_hp", "megas", "win", "lane_assign", "creep_push"))

# Table 6 of the 2019 paper (Five app. G). Building weights are the total value of a building.
WEIGHTS_FIVE_2019 = {
    "win": 5.0, "hero_death": -1.0, "xp": 0.002, "gold_gained": 0.006, "gold_spent": 0.0006, "health": 2.0,
    "mana": 0.75, "killed_hero": -0.6, "last_hit": -0.16, "deny": 0.15, "ancient_hp": 5.0, "megas": 4.0,
    "tower_t1": 2.25, "tower_t2": 3.0, "tower_t3": 4.5, "tower_t4": 2.25, "shrine": 2.25, "barracks": 6.0,
    "lane_assign": -0.15, "creep_push": 0.0, "consumables": 0.0,
}
# Five's 2018 reward note: building score weight * (1 + 2 * health fraction), i.e. a total of 3 * weight
# (1/3 on death, 2/3 with health); the ancient's 2.5 death bonus is folded into "win" (2.5 + 2.5) and its health
# part (5.0) into "ancient_hp"; no gold-spent reward; lane penalty -0.02.
WEIGHTS_FIVE_2018 = {
    "win": 5.0, "hero_death": -1.0, "xp": 0.002, "gold_gained": 0.006, "gold_spent": 0.0, "health": 2.0,
    "mana": 0.75, "killed_hero": -0.6, "last_hit": 0.16, "deny": 0.2, "ancient_hp": 5.0, "megas": 4.0,
    "tower_t1": 2.25, "tower_t2": 3.0, "tower_t3": 4.5, "tower_t4": 2.25, "shrine": 2.25, "barracks": 6.0,
    "lane_assign": -0.02, "creep_push": 0.0, "consumables": 0.0,
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
    "lane_assign": 0.0, "creep_push": 0.0, "consumables": 0.0,
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
    """Table 6 footnote: health fraction x is worth (x + 1 - (1 - x)^4) / 2: 0 dead, 1 full, steepest near death.
    The fourth power is two squarings, the operations of the tracker's kernel (`_track`), so both give the same
    bits (numpy's own power differs from libm's in the last bit on about 5% of values)."""
    x = np.clip(x, 0.0, 1.0)
    y = 1.0 - x
    y = y * y
    return (x + 1.0 - y * y) / 2.0


def postprocess_rewards(rewards, win_rewards, team_of, team_spirit: float, game_time_s: float, zero_sum=True,
                        time_decay_base=TIME_DECAY_BASE, time_decay_period_s=TIME_DECAY_PERIOD_S) -> np.ndarray:
    """The training-side reward of every hero for one step (Five app. G):

    1. time decay: every reward but win/loss is scaled by ``time_decay_base ** (T / time_decay_period_s)`` (eq. 11);
    2. team spirit: ``r_i = (1 - tau) * r_i + tau * mean(r over i's team)`` (eq. 12);
    3. zero sum: ``r_i -= mean(r over the enemy team)``.

    `rewards` excludes the win signal, `win_rewards` is the weighted win signal, `team_of` the team (0/1) of each
    hero. Team spirit and zero sum commute, so the order of 2 and 3 does not matter. The arithmetic is one compiled
    pass (``_postprocess``): it runs on every env step of training.
    """
    if not 0.0 <= team_spirit <= 1.0:
        raise ValueError(f"team_spirit must be in [0, 1], got {team_spirit}")
    rewards = np.ascontiguousarray(rewards, np.float64)
    out = np.empty_like(rewards)
    _postprocess(rewards, np.ascontiguousarray(win_rewards, np.float64), np.ascontiguousarray(team_of, np.int64),
                 float(team_spirit), time_decay_base ** (game_time_s / time_decay_period_s), bool(zero_sum), out)
    return out


@njit(cache=True)
def _postprocess(rewards, win_rewards, team_of, team_spirit, decay, zero_sum, out):
    """postprocess_rewards' arithmetic into `out`: the decayed reward plus the win's, then team spirit and zero sum
    with each team's mean (0 for a team without heroes), summed in hero order as numpy's mean of a few values."""
    n = rewards.shape[0]
    for i in range(n):
        out[i] = rewards[i] * decay + win_rewards[i]
    team_mean = np.zeros(2)
    for t in range(2):
        total, count = 0.0, 0
        for i in range(n):
            if team_of[i] == t:
                total += out[i]
                count += 1
        team_mean[t] = total / count if count > 0 else 0.0
    for i in range(n):
        r = (1.0 - team_spirit) * out[i] + team_spirit * team_mean[team_of[i]]
        out[i] = r - team_mean[1 - team_of[i]] if zero_sum else r


def _segment_distance(px, py, segs):
    """Distance from points (n,) to the nearest of segments (m, 4) -> (n,)."""
    ax, ay, bx, by = segs[:, 0], segs[:, 1], segs[:, 2], segs[:, 3]
    dx, dy = bx - ax, by - ay
    t = ((px[:, None] - ax) * dx + (py[:, None] - ay) * dy) / (dx * dx + dy * dy)
    t = np.clip(t, 0.0, 1.0)
    cx, cy = ax + t * dx, ay + t * dy
    return np.sqrt((px[:, None] - cx) ** 2 + (py[:, None] - cy) ** 2).min(axis=1)


@njit(cache=True)
def _track(uf, ui, hf, hi, hero_units, team_of, building_rows, building_team, building_signal, ancients, rax_rows,
           rax_team, winner, prev_f, prev_i, cur_f, cur_i, sig):
    """One step of RewardTracker: reads the state into `cur_f` / `cur_i` and writes the raw signals of the change from
    `prev_f` / `prev_i` into `sig` (n_heroes, N_SIGNALS), zeroed first. The state's rows: the heroes (floats: xp,
    gold earned, gold spent, gold spent on consumables, health curve, mana fraction; ints: deaths, kills, last hits,
    denies, alive), then the buildings (health fraction; alive), then per team its ancient's health fraction and its
    barracks alive. The same IEEE operations, in the same order, as the numpy formulas of the code before
    (tests/test_rewards.py keeps them)."""
    n = hero_units.shape[0]
    nb = building_rows.shape[0]
    sig[:] = 0.0
    for i in range(n):
        u = hero_units[i]
        cur_f[i, 0] = hf[i, G_XP]
        cur_f[i, 1] = hf[i, G_EARNED]
        cur_f[i, 2] = hf[i, G_SPENT]
        cur_f[i, 3] = hf[i, G_CONSUMABLES]
        alive = ui[u, I_ALIVE]
        x = uf[u, F_HP] / uf[u, F_MAXHP]
        x = min(max(x, 0.0), 1.0)
        y = 1.0 - x
        y = y * y
        cur_f[i, 4] = (x + 1.0 - y * y) / 2.0 * alive
        max_mana = uf[u, F_MAXMANA]
        cur_f[i, 5] = uf[u, F_MANA] / max(max_mana, 1e-9) if max_mana > 0 else 0.0
        cur_i[i, 0] = hi[i, H_DEATHS]
        cur_i[i, 1] = hi[i, H_KILLS]
        cur_i[i, 2] = hi[i, H_LH]
        cur_i[i, 3] = hi[i, H_DN]
        cur_i[i, 4] = alive
        for k in range(4):
            sig[i, _GOLD_XP_SIGNALS[k]] = cur_f[i, k] - prev_f[i, k]
        for k in range(4):
            sig[i, _COUNT_SIGNALS[k]] = cur_i[i, k] - prev_i[i, k]
        # health and mana changes are not counted across a respawn (a respawn is not a heal)
        same_life = cur_i[i, 4] == prev_i[i, 4] or cur_i[i, 4] == 0
        if same_life:
            sig[i, _HEALTH] = cur_f[i, 4] - prev_f[i, 4]
            if cur_i[i, 4] == 1:
                sig[i, _MANA] = cur_f[i, 5] - prev_f[i, 5]
    # team signals: buildings damaged and destroyed go to the other team's heroes
    for b in range(nb):
        r = building_rows[b]
        cur_f[n + b, 0] = uf[r, F_HP] / uf[r, F_MAXHP]
        cur_i[n + b, 0] = ui[r, I_ALIVE]
        lost = max(prev_f[n + b, 0] - cur_f[n + b, 0], 0.0) * BUILDING_HEALTH_SHARE
        died = prev_i[n + b, 0] == 1 and cur_i[n + b, 0] == 0
        val = lost + died * (1.0 - BUILDING_HEALTH_SHARE)
        if val > 0 and building_signal[b] >= 0:
            for i in range(n):
                if team_of[i] != building_team[b]:
                    sig[i, building_signal[b]] += val
    for t in range(2):
        a = ancients[t]
        cur_f[n + nb + t, 0] = uf[a, F_HP] / uf[a, F_MAXHP]
        alive_rax = 0
        has_rax = False
        for k in range(rax_rows.shape[0]):
            if rax_team[k] == t:
                has_rax = True
                alive_rax += ui[rax_rows[k], I_ALIVE]
        cur_i[n + nb + t, 0] = alive_rax
        if has_rax and prev_i[n + nb + t, 0] > 0 and alive_rax == 0:
            for i in range(n):
                if team_of[i] != t:
                    sig[i, _MEGAS] += 1.0
    for i in range(n):  # each hero earns the enemy ancient's health lost
        e = n + nb + 1 - team_of[i]
        sig[i, _ANCIENT] += max(prev_f[e, 0] - cur_f[e, 0], 0.0)
        if winner >= 0:
            sig[i, _WIN] = 1.0 if team_of[i] == winner else -1.0


WAVE_CREEPS = float(sum(CREEPS_PER_WAVE))  # creeps of one lane's wave: the push potential's unit


@njit(cache=True)
def push_potential(uf, ui, ancient_x, ancient_y, out):
    """Each team's push potential into `out` (2,): the sum over its living lane creeps of their progress from its own
    ancient toward the enemy's, 1 - distance to the enemy's ancient / distance between the ancients (clipped to
    [0, 1]), over WAVE_CREEPS."""
    span = np.sqrt((ancient_x[1] - ancient_x[0]) ** 2 + (ancient_y[1] - ancient_y[0]) ** 2)
    out[0] = 0.0
    out[1] = 0.0
    for u in range(ui.shape[0]):
        typ = ui[u, I_TYPE]
        if ui[u, I_ALIVE] == 0 or (typ != UT_CREEP_MELEE and typ != UT_CREEP_RANGED):
            continue
        t = ui[u, I_TEAM]
        if t != 0 and t != 1:
            continue
        e = 1 - t
        d = np.sqrt((uf[u, F_X] - ancient_x[e]) ** 2 + (uf[u, F_Y] - ancient_y[e]) ** 2)
        out[t] += min(max(1.0 - d / span, 0.0), 1.0)
    out[0] /= WAVE_CREEPS
    out[1] /= WAVE_CREEPS


class RewardTracker:
    """Turns consecutive engine states into the raw per-hero signals of SIGNALS (quantities, before weights).

    Per hero: the change of xp, gold earned and spent (and of that, spent on consumables), deaths, kills, last hits
    and denies; of the health curve of its health fraction (``health_curve``, times alive) and of its mana fraction,
    neither counted across a respawn and mana only while alive. Per building the enemy team's heroes earn
    ``BUILDING_HEALTH_SHARE`` of its health fraction lost, and the rest when it dies; each hero the enemy ancient's
    health fraction lost; the megas signal when the enemy's last barracks falls; win +1 / -1 on the step with a
    winner; and the lane signal, seconds outside every assigned lane while the assignment holds. The state is read
    and compared in one compiled pass (``_track``); the lane signal, rare, in numpy.
    """

    def __init__(self, game, lanes: np.ndarray, lane_until: np.ndarray):
        self.game = game
        self.lanes = lanes
        self.lane_until = lane_until
        s = game.s
        self.n = game.n_heroes
        self.team_of = np.array([0] * game.team_size + [1] * game.team_size, np.int64)
        self.hero_units = s.hi[:, H_UNIT].astype(np.int64)
        rows = np.array(game.building_rows, np.int64)
        types, tiers = s.ui[rows, I_TYPE], s.ui[rows, I_TIER]
        self.building_rows = rows
        self.building_team = s.ui[rows, I_TEAM].astype(np.int64)  # buildings never change sides
        self.building_signal = np.full(len(rows), -1, np.int64)
        for i, (typ, tier) in enumerate(zip(types, tiers)):
            if typ == UT_TOWER:
                self.building_signal[i] = SIGNAL_INDEX[f"tower_t{tier}"]
            elif typ == UT_SHRINE:
                self.building_signal[i] = SIGNAL_INDEX["shrine"]
            elif typ in (UT_BARRACKS_MELEE, UT_BARRACKS_RANGED):
                self.building_signal[i] = SIGNAL_INDEX["barracks"]
        self.ancients = np.asarray(game.ancient_idx, np.int64).copy()
        self.rax_rows = np.asarray(game.rax[game.rax >= 0], np.int64)
        self.rax_team = s.ui[self.rax_rows, I_TEAM].astype(np.int64)
        self.lane_bound = self.lanes.sum(axis=1) < 3  # heroes with a lane assignment to keep
        self.lane_segments = []
        for lane in range(3):
            pts = np.array(game.map.lanes[0][lane])
            self.lane_segments.append(np.concatenate([pts[:-1], pts[1:]], axis=1))
        # the compared state (its rows and columns: _track's docstring), the last step's and the one read now
        rows_state = self.n + len(rows) + 2
        self._prev = (np.zeros((rows_state, 6)), np.zeros((rows_state, 5), np.int64))
        self._cur = (np.zeros((rows_state, 6)), np.zeros((rows_state, 5), np.int64))
        self._sig = np.zeros((self.n, N_SIGNALS))
        self.ancient_x = s.uf[self.ancients, F_X].astype(np.float64)
        self.ancient_y = s.uf[self.ancients, F_Y].astype(np.float64)
        self._push = (np.zeros(2), np.zeros(2))  # each team's push potential: the last step's and the one read now
        self.rebase()

    def rebase(self):
        """The state as it is now becomes the one the next step is compared with (what changed since is no signal)."""
        self._advance()

    def _advance(self) -> np.ndarray:
        """Reads the state, makes it the one the next step compares with, and returns the signals since the last one
        (the tracker's buffer, overwritten by the next call)."""
        s = self.game.s
        _track(s.uf, s.ui, s.hf, s.hi, self.hero_units, self.team_of, self.building_rows, self.building_team,
               self.building_signal, self.ancients, self.rax_rows, self.rax_team, int(self.game.winner), *self._prev,
               *self._cur, self._sig)
        self._prev, self._cur = self._cur, self._prev
        before, now = self._push
        push_potential(s.uf, s.ui, self.ancient_x, self.ancient_y, now)
        self._sig[:, _PUSH] = (now - before)[self.team_of]
        self._push = now, before
        return self._sig

    def step(self, dt: float) -> np.ndarray:
        """Raw signal quantities of the last step, (n_heroes, N_SIGNALS): a new array each call."""
        sig = self._advance().copy()
        # lane assignment: seconds spent outside every assigned lane while the assignment holds (app. O.2)
        g, s = self.game, self.game.s
        alive = self._prev[1][:self.n, 4] == 1  # the state just read: the heroes' alive column
        active = (self.lane_until > g.time) & alive & self.lane_bound
        if active.any():
            u = self.hero_units
            px, py = s.uf[u, F_X], s.uf[u, F_Y]
            inside = np.zeros(self.n, bool)
            for lane in range(3):  # lane paths are physical: the same for both teams
                d = _segment_distance(px, py, self.lane_segments[lane])
                inside |= (d <= LANE_WIDTH) & (self.lanes[:, lane] == 1)
            sig[:, _LANE] = np.where(active & ~inside, dt, 0.0)
        return sig
