"""One live game of the play page: a human's hero against agents, on MobaEnv, in real time.

The env steps at its usual rate (one step is one decision of every hero: ``frameskip`` = 4 engine ticks, 4/30 of a
game second at 30 ticks per game second, Five app. L), paced by a clock: at speed 1 a game second lasts a real
second; 0.5x and 2x halve and double that; a paused game does not step. The human's hero acts through exactly the
action space and the legality masks an agent's hero acts through (``HumanController``): the human's last order
becomes, at every step, one action of ``moba/env/actions.py`` built from that hero's observation, and
``MobaEnv.step`` validates and decodes it as it does any agent's. An order the masks forbid is refused (a message
says why) and the game goes on. The other heroes are agents: the enemy team's ``opponent``; in 5v5 the human's four
allies are the ``allies`` agent.

What the page is sent (``frame`` messages) is what the human's team sees: the units of the team and those its fog of
war shows, every building (one out of sight without its health), the enemy heroes' gold hidden, the enemies' casts
and purchases left out of the events. The whole game is written as a replay (moba/env/replay_file.py) that
``python -m app.replay`` turns into the viewer's page.

``LiveGame`` is synchronous (``start``, ``order``, ``step``: tests drive it step by step); ``LiveGame.run(clock,
send)`` is its real-time loop, paced by a clock: ``RealClock`` (time.monotonic) or ``ManualClock`` (advanced by hand,
for tests).
"""
from __future__ import annotations

import asyncio
import math
import threading
import time
import traceback

import numpy as np

from moba.env.actions import (A_ABILITY0, A_ATTACK, A_BUYBACK, A_ITEM0, A_MOVE, A_SHRINE, ACTION_KEYS,
                              ATTACK_TARGET_RADIUS, N_OFFSETS, NOOP_ACTION, PRIMARY_NAMES, SPELL_TARGET_RADIUS,
                              offset_step)
from moba.env.moba_env import MobaEnv
from moba.env.replay_file import UNIT_FIELDS, ReplayWriter, hero_rows, replay_header, unit_rows
from moba.game.abilities import (TARGET_TYPE_NAMES, TARGET_TYPE_READS_UNIT, TT_NO_TARGET, TT_POINT, UK_ALLY, UK_ATTACK,
                                 UK_ENEMY, UK_NONE, UK_TELEPORT, UNIT_KIND_NAMES)
from moba.game.constants import BUILDING_TYPES, SHRINE_RADIUS, TICKS_PER_SECOND
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS, item_id
from moba.game.kernels import buyback_cost, can_attack
from moba.game.state import (F_MANA, F_STUN_T, F_X, F_Y, G_BB_CD, G_CD0, G_GOLD, G_ICD0, G_RESPAWN, GF_TIME, H_AB0,
                             H_IT0, H_LEVEL, H_UNIT, I_ALIVE, I_TEAM, I_UID, I_USED, INVENTORY)
from moba.game.tables import A_MANA, A_PASSIVE, ABILITIES_PER_HERO
from moba.game.teams import NO_WINNER, TEAM_NAMES, TEAM_SIZE, agent_id, side_of_agent
from web.protocol import SPEEDS, STOP

MAX_LAG_S = 0.5  # a real-time game more than this far behind its clock drops the backlog instead of rushing it
U = {name: i for i, name in enumerate(UNIT_FIELDS)}
_BUILDING_TYPE_IDS = frozenset(int(t) for t in BUILDING_TYPES)
_PRIVATE_EVENTS = ("cast", "purchase")  # an enemy's casts and purchases are not shown to the human's team
_CENTRE = N_OFFSETS // 2


# ---- clocks ----------------------------------------------------------------------------------------------------------
class RealClock:
    """Real time, in seconds."""

    max_lag_s = MAX_LAG_S

    def now(self) -> float:
        return time.monotonic()

    async def sleep_until(self, t: float):
        delay = t - time.monotonic()
        await asyncio.sleep(max(0.0, delay))


class ManualClock:
    """A clock that moves only when ``advance`` is called (from the event loop's thread; ``advance_threadsafe``
    from any other): a game paced by it steps exactly as far as its time has gone, as fast as the machine can."""

    max_lag_s = math.inf  # never drop a backlog: advance(60) plays 60 game seconds at speed 1

    def __init__(self):
        self.t = 0.0
        self._waiters: list[tuple[float, asyncio.Future]] = []

    def now(self) -> float:
        return self.t

    def advance(self, dt: float):
        self.t += dt
        keep = []
        for t, fut in self._waiters:
            if fut.done():
                continue
            if t <= self.t + 1e-9:
                fut.set_result(None)
            else:
                keep.append((t, fut))
        self._waiters = keep

    def advance_threadsafe(self, loop: asyncio.AbstractEventLoop, dt: float):
        loop.call_soon_threadsafe(self.advance, dt)

    async def sleep_until(self, t: float):
        if t <= self.t + 1e-9:
            await asyncio.sleep(0)
            return
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append((t, fut))
        await fut


# ---- the human's hero ------------------------------------------------------------------------------------------------
def _offsets(dx: float, dy: float, step: float) -> tuple[int, int, bool]:
    """The action offsets (0..8 each) nearest to (dx, dy) map units on a grid of `step`, the vector shortened along
    its direction to the grid's reach when it is longer; and whether the point is within reach."""
    reach = _CENTRE * step
    longest = max(abs(dx), abs(dy))
    within = longest <= reach
    if not within:
        dx, dy = dx * reach / longest, dy * reach / longest
    ox = min(N_OFFSETS - 1, max(0, _CENTRE + int(round(dx / step))))
    oy = min(N_OFFSETS - 1, max(0, _CENTRE + int(round(dy / step))))
    return ox, oy, within


class Refused(Exception):
    """An order the masks forbid now: the reason, for the page."""


class HumanController:
    """The human's hero: keeps the human's last order and turns it, at every step, into one action of the env's
    action space (ACTION_KEYS) from that hero's observation, its action mask and its unit masks.

    - ``move`` (x, y): move actions toward the point, each at most the move offsets' reach (4 grid steps of 200 map
      units, app. F) from the hero, until the point is within reach; the last one ends the order.
    - ``attack`` (unit id): the attack action on that unit's row of the unit table once the unit masks allow it
      (the action filter's radius, moba/env/actions.py); until then move actions toward it. A unit the hero may not
      attack at all (an ally, a building of its own) is a move to where it stands. The engine chases the target.
    - an ability or item action: cast once, if the action mask allows it now; a unit target must be allowed by the
      unit mask of that action's unit kind, a point target is the point as near as the action's offsets reach.
    - ``buyback``, ``shrine``; ``stop``: a move to the hero's own position.

    An order the masks forbid is refused with the reason and dropped; the hero then does nothing (the no-op) until
    the next order, as an agent's masked action is a no-op."""

    def __init__(self, env: MobaEnv, agent: str):
        self.env, self.agent = env, agent
        self.slot = env.possible_agents.index(agent)
        self.team = self.slot // env.team_size
        self.order: dict | None = None
        self._fresh = False
        self._new: dict | None = None
        self._lock = threading.Lock()
        self.last_action = dict(NOOP_ACTION)

    def give(self, order: dict):
        """The human's new order (a checked ``order`` message of web/protocol.py); it replaces the last one at the
        next step."""
        with self._lock:
            self._new = order

    def action(self, obs: dict) -> tuple[dict, list[dict]]:
        """The hero's action for this step, from its observation `obs`, and the messages about its orders."""
        with self._lock:
            new, self._new = self._new, None
        notes = []
        if new is not None:
            self.order, self._fresh = new, True
        act = dict(NOOP_ACTION)
        if self.order is not None:
            order, fresh = self.order, self._fresh
            self._fresh = False
            try:
                act, done = self._plan(order, obs)
                if fresh:
                    notes.append(self._note(order, "accepted"))
                if done:
                    self.order = None
            except Refused as why:
                notes.append(self._note(order, "refused" if fresh else "ended", str(why)))
                self.order = None
        self.last_action = act
        return act, notes

    @staticmethod
    def _note(order: dict, status: str, reason: str | None = None) -> dict:
        return {"type": "order", "action": order["action"], "status": status, "reason": reason}

    # ---- what the hero sees ------------------------------------------------------------------------------------------
    def _hero_unit(self) -> int:
        return int(self.env.game.s.hi[self.slot, H_UNIT])

    def _unit(self, uid: int) -> int:
        """The engine row of the living unit `uid` that the hero's team sees; Refused otherwise."""
        s = self.env.game.s
        rows = np.nonzero((s.ui[:, I_UID] == uid) & (s.ui[:, I_USED] == 1) & (s.ui[:, I_ALIVE] == 1))[0]
        if not len(rows) or (s.ui[rows[0], I_TEAM] != self.team and not s.vis[self.team, rows[0]]):
            raise Refused(f"unit {uid} is not in your team's sight (dead, gone, or in the fog)")
        return int(rows[0])

    def _table_row(self, row: int) -> int | None:
        """The unit's row in the observation's unit table (what the unit parameter indexes), None if absent."""
        rows = np.nonzero(self.env.encoder.slot_units[self.team] == row)[0]
        return int(rows[0]) if len(rows) else None

    def _act(self, primary: int, target_unit: int = 0, ox: int = _CENTRE, oy: int = _CENTRE) -> dict:
        return dict(zip(ACTION_KEYS, (primary, 0, target_unit, ox, oy)))

    def _move_toward(self, x: float, y: float, obs: dict) -> tuple[dict, bool]:
        if not obs["action_mask"][A_MOVE]:
            raise Refused(self.why_not(A_MOVE))
        s, u = self.env.game.s, self._hero_unit()
        ox, oy, within = _offsets(x - s.uf[u, F_X], y - s.uf[u, F_Y], offset_step(TT_POINT))
        return self._act(A_MOVE, 0, ox, oy), within

    # ---- orders ------------------------------------------------------------------------------------------------------
    def _plan(self, order: dict, obs: dict) -> tuple[dict, bool]:
        """(the action for this step, whether the order is done with it); Refused when the masks forbid it."""
        name = order["action"]
        s = self.env.game.s
        if name == STOP:
            u = self._hero_unit()
            return self._move_toward(float(s.uf[u, F_X]), float(s.uf[u, F_Y]), obs)[0], True
        if name == "move":
            return self._move_toward(order["x"], order["y"], obs)
        if name == "attack":
            return self._attack(order, obs)
        p = PRIMARY_NAMES.index(name)
        if not obs["action_mask"][p]:
            raise Refused(self.why_not(p))
        tt, uk = int(self.env.encoder.tt[self.slot][p]), int(self.env.encoder.uk[self.slot][p])
        label = self.action_label(p)
        if TARGET_TYPE_READS_UNIT[tt]:
            if "unit" not in order:
                raise Refused(f"{label} needs a target unit ({UNIT_KIND_NAMES[uk]}): click one after choosing it")
            row = self._table_row(self._unit(order["unit"]))
            if row is None or not obs["unit_masks"][uk][row]:
                raise Refused(f"unit {order['unit']} is not a legal target of {label}: it needs "
                              f"{_KIND_TEXT[uk]}")
            return self._act(p, row), True
        if tt == TT_NO_TARGET:
            return self._act(p), True
        if "x" not in order:
            raise Refused(f"{label} needs a target point: click on the map after choosing it")
        u = self._hero_unit()
        ox, oy, _ = _offsets(order["x"] - s.uf[u, F_X], order["y"] - s.uf[u, F_Y], offset_step(tt))
        return self._act(p, 0, ox, oy), True

    def _attack(self, order: dict, obs: dict) -> tuple[dict, bool]:
        s = self.env.game.s
        target = self._unit(order["unit"])
        row = self._table_row(target)
        if row is not None and obs["unit_masks"][UK_ATTACK][row] and obs["action_mask"][A_ATTACK]:
            return self._act(A_ATTACK, row), True  # the engine chases the target from here
        x, y = float(s.uf[target, F_X]), float(s.uf[target, F_Y])
        if can_attack(s.uf, s.ui, s.vis, self._hero_unit(), target):
            return self._move_toward(x, y, obs)[0], False  # out of the action filter's radius: go closer
        self.order = {"type": "order", "action": "move", "x": x, "y": y}  # a friend: go where it stands
        return self._move_toward(x, y, obs)

    # ---- words for the page ----------------------------------------------------------------------------------------
    def action_label(self, p: int) -> str:
        """An action's name for people: "ability_1 (blade_fury)", "item_dagon", "move"."""
        if A_ABILITY0 <= p < A_ITEM0:
            return f"{PRIMARY_NAMES[p]} ({self.ability_names()[p - A_ABILITY0]})"
        return PRIMARY_NAMES[p]

    def ability_names(self) -> list[str]:
        return [a.name for a in HEROES[self.env.game.hero_defs[self.slot]].abilities]

    def why_not(self, p: int) -> str:
        """Why the action mask forbids primary action p now, in words (read from the same engine state that the
        action filters read)."""
        game, h = self.env.game, self.slot
        s, u = game.s, self._hero_unit()
        label = self.action_label(p)
        alive = s.ui[u, I_ALIVE] == 1
        if p == A_BUYBACK:
            if alive:
                return "buyback: your hero is alive"
            if s.hf[h, G_BB_CD] > 0:
                return f"buyback is on cooldown ({s.hf[h, G_BB_CD]:.0f} s)"
            cost = buyback_cost(s.hi[h, H_LEVEL], s.gf[GF_TIME])
            return f"buyback costs {cost:.0f} gold, your hero has {float(s.hf[h, G_GOLD]):.0f}"
        if not alive:
            return f"{label}: your hero is dead (back in {max(0.0, float(s.hf[h, G_RESPAWN])):.0f} s)"
        if s.uf[u, F_STUN_T] > 0:
            return f"{label}: your hero is stunned"
        if p == A_ATTACK:
            return "attack: no enemy your hero may attack in range"
        if p == A_SHRINE:
            return f"shrine: no shrine of your team ready within {SHRINE_RADIUS:g} of your hero"
        if A_ABILITY0 <= p < A_ITEM0:
            k = p - A_ABILITY0
            ab, level = int(game.hero_ab[h, k]), int(s.hi[h, H_AB0 + k])
            if game.abi[ab, A_PASSIVE]:
                return f"{label} is passive"
            if level == 0:
                return f"{label} is not learned yet"
            cost, cooldown = float(game.abf[ab, A_MANA + level - 1]), float(s.hf[h, G_CD0 + k])
        elif A_ITEM0 <= p < A_BUYBACK:
            k = p - A_ITEM0
            if item_id(ITEM_ACTIONS[k]) not in s.hi[h, H_IT0:H_IT0 + INVENTORY]:
                return f"{label}: your hero holds no {ITEM_ACTIONS[k].replace('_', ' ')}"
            cost, cooldown = float(game.abf[game.ia_ab[k], A_MANA]), float(s.hf[h, G_ICD0 + k])
        else:
            return f"{label} is not available now"
        if cooldown > 0:
            return f"{label} is on cooldown ({cooldown:.1f} s)"
        if s.uf[u, F_MANA] < cost:
            return f"{label} needs {cost:.0f} mana, your hero has {float(s.uf[u, F_MANA]):.0f}"
        uk = int(self.env.encoder.uk[h][p])
        return f"{label}: no legal target in range (it needs {_KIND_TEXT[uk]})"

    def status(self, obs: dict) -> dict:
        """The hero's controls as the page shows them: the legal actions now, the cooldowns, the order."""
        game, h = self.env.game, self.slot
        s = game.s
        return {"legal": [PRIMARY_NAMES[p] for p in np.nonzero(obs["action_mask"])[0] if p],
                "cooldowns": [round(float(c), 1) for c in s.hf[h, G_CD0:G_CD0 + ABILITIES_PER_HERO]],
                "ability_levels": [int(v) for v in s.hi[h, H_AB0:H_AB0 + ABILITIES_PER_HERO]],
                "item_cooldowns": [round(float(c), 1) for c in s.hf[h, G_ICD0:G_ICD0 + len(ITEM_ACTIONS)]],
                "gold": int(s.hf[h, G_GOLD]), "order": self.order and {k: v for k, v in self.order.items()
                                                                         if k != "type"}}


# what each unit kind's mask allows (moba/env/actions.py: unit_masks_for), for the page's refusals
_KIND_TEXT = {UK_NONE: "no unit",
              UK_ENEMY: f"a visible enemy hero or creep within {SPELL_TARGET_RADIUS:g} of your hero",
              UK_ALLY: f"an allied hero or creep (your hero included) within {SPELL_TARGET_RADIUS:g} of your hero",
              UK_TELEPORT: "an allied building in your team's unit table",
              UK_ATTACK: f"a visible enemy, or an allied creep below half health (a deny), within "
                         f"{ATTACK_TARGET_RADIUS:g} of your hero"}


# ---- the replay, and each step's events ------------------------------------------------------------------------------
class _LiveReplayWriter(ReplayWriter):
    """The replay writer, which also keeps each step's events for the page (the frames)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step_events: list = []

    def _events(self, game) -> list:
        self.step_events = super()._events(game)
        return self.step_events


# ---- one game ------------------------------------------------------------------------------------------------------
class LiveGame:
    """One game: the human plays slot 0 of `side` (the hero `hero`, or the mode's default lineup's), the agent
    `opponent` the other team and, in 5v5, the agent `allies` the human's four allies (agents of
    policies/agents/by_name.py's protocol). `names`: the agents' names, for the replay's header. The game is an
    evaluation-mode game (no randomization) of `seed`, capped at `time_limit_s` (0: the mode's default), written as a
    replay to `replay_path`."""

    def __init__(self, game_id: str, mode: str, side: str, opponent, allies=None, *, names: dict, hero=None,
                 time_limit_s: float = 0.0, seed: int = 0, replay_path: str):
        self.id, self.mode, self.side, self.seed = game_id, mode, side, int(seed)
        self.team = TEAM_NAMES.index(side)
        size = TEAM_SIZE[mode]
        lineup = [h.name for h in HEROES[:2 * size]]
        me = self.team * size
        if hero is not None:
            if hero in lineup:
                k = lineup.index(hero)
                lineup[k], lineup[me] = lineup[me], lineup[k]
            else:
                lineup[me] = hero
        self.env = MobaEnv({"mode": mode, "evaluation": True, "time_limit_s": float(time_limit_s),
                            "seed": self.seed, "lineup": lineup})
        self.agent = agent_id(self.team, 0)
        self.opponent, self.allies = opponent, allies
        self.names = dict(names)
        self.replay_path = replay_path
        self.human = HumanController(self.env, self.agent)
        players = {TEAM_NAMES[1 - self.team]: opponent}
        if allies is not None:
            players[side] = allies
        self.writer = _LiveReplayWriter(replay_path, self.names, self.seed, 1.0, players)
        self.step_s = self.env.cfg.frameskip / TICKS_PER_SECOND
        self.speed, self.paused, self.over = 1.0, False, False
        self.result: dict | None = None
        self.time = 0.0  # the game time of the latest step
        self.steps, self.step_time_s, self.send_time_s, self.max_step_send_s = 0, 0.0, 0.0, 0.0
        self._lock = threading.Lock()
        self._running = asyncio.Event()
        self._running.set()
        self._obs = None

    # ---- the synchronous game ------------------------------------------------------------------------------------
    def start(self) -> dict:
        """Starts the game; returns the ``started`` message (the replay's header: the map, the heroes)."""
        self._obs, _ = self.env.reset(seed=self.seed)
        ids = {t: [a for a in self.env.possible_agents if side_of_agent(a) == t] for t in TEAM_NAMES}
        self.opponent.reset(ids[TEAM_NAMES[1 - self.team]])
        self.ally_ids = [a for a in ids[self.side] if a != self.agent]
        self.enemy_ids = ids[TEAM_NAMES[1 - self.team]]
        if self.allies is not None:
            self.allies.reset(self.ally_ids)
        self.writer.on_step(self.env)
        header = replay_header(self.env.game, self.seed, self.names, 1.0)
        tt, uk = self.env.encoder.tt[self.human.slot], self.env.encoder.uk[self.human.slot]
        abilities = self.human.ability_names()
        actions = {}
        for p, name in enumerate(PRIMARY_NAMES):
            if p == 0:
                continue
            what = abilities[p - A_ABILITY0] if A_ABILITY0 <= p < A_ITEM0 else name
            actions[name] = {"name": what, "target": TARGET_TYPE_NAMES[int(tt[p])],
                             "unit_kind": UNIT_KIND_NAMES[int(uk[p])]}
        return {"type": "started", "game": self.id, "header": header, "step_s": self.step_s, "speed": self.speed,
                "speeds": list(SPEEDS), "paused": self.paused, "replay": self.replay_path,
                "you": {"slot": self.human.slot, "agent_id": self.agent, "side": self.side,
                        "hero": self.env.game.hero_name(self.human.slot), "actions": actions},
                "frame": self._frame([])}

    def snapshot(self) -> dict | None:
        """The frame of the game now (a page that joins gets it), None once the game is over."""
        with self._lock:
            return None if self.over else self._frame([])

    def order(self, msg: dict) -> None:
        """The human's next order (a checked ``order`` message); it is judged at the next step."""
        self.human.give(msg)

    def step(self) -> list[dict]:
        """One decision of every hero and one env step; returns the messages for the page: the order notes, the
        frame, and at the end of the game the ``end`` message."""
        with self._lock:
            if self.over:
                return []
            obs = self._obs
            mine, notes = self.human.action(obs[self.agent])
            actions = {self.agent: mine}
            actions.update(self.opponent.act({a: obs[a] for a in self.enemy_ids}))
            if self.allies is not None:
                actions.update(self.allies.act({a: obs[a] for a in self.ally_ids}))
            self._obs, _, term, trunc, _ = self.env.step(actions)
            self.writer.on_step(self.env)
            self.steps += 1
            self.time = self.env.game.time
            out = notes + [{"type": "frame", **self._frame(self.writer.step_events)}]
            if term["__all__"] or trunc["__all__"]:
                out.append(self._finish())
            return out

    def _frame(self, events: list) -> dict:
        game, team = self.env.game, self.team
        units = []
        for row in unit_rows(game):
            if row[U["team"]] == team or row[U["seen_by"]] & (1 << team):
                units.append(row)
            elif row[U["type"]] in _BUILDING_TYPE_IDS:  # a building out of sight: where it is, not its health
                row[U["hp"]], row[U["mana"]] = row[U["max_hp"]], 0
                units.append(row)
        heroes = hero_rows(game)
        for row in heroes:
            if row[0] // game.team_size != team:
                row[2] = None  # HERO_FIELDS' gold: the enemies' is hidden
        shown = [e for e in events if e["type"] not in _PRIVATE_EVENTS
                 or e["hero"] // game.team_size == team]
        frame = {"t": round(game.time, 3), "units": units, "heroes": heroes, "events": shown,
                 "me": self.human.status(self._obs[self.agent])}
        if self.allies is not None and getattr(self.allies, "decisions", None):
            frame["model"] = {a: {"win_prob": None if d.get("win_prob") is None else round(float(d["win_prob"]), 4),
                                  "action": PRIMARY_NAMES[d["action"]["primary"]]}
                              for a, d in self.allies.decisions.items()}
        return frame

    def _finish(self) -> dict:
        game = self.env.game
        summary = game.summary()
        winner = summary["winner"]
        you = "draw" if winner == NO_WINNER else "won" if winner == self.side else "lost"
        self.result = {"type": "end", "winner": winner, "you": you, "truncated": summary["truncated"],
                       "game_time_s": summary["game_time_s"], "summary": summary, "replay": self.replay_path,
                       "view": f"python -m app.replay {self.replay_path}"}
        self._release()
        return self.result

    def _release(self):
        """Ends the game: the replay file closed, the env and the agents dropped (their memory freed)."""
        self.over = True
        self.writer.close()
        self.env = self.human = self.opponent = self.allies = self._obs = None
        self._running.set()  # a paused loop wakes up and stops

    def close(self) -> None:
        """Stops the game now (the page left, or ``quit``): its replay is kept, unfinished."""
        with self._lock:
            if not self.over:
                self._release()

    # ---- pace -------------------------------------------------------------------------------------------------------
    def state(self) -> dict:
        return {"type": "state", "paused": self.paused, "speed": self.speed}

    def pause(self) -> dict:
        self.paused = True
        self._running.clear()
        return self.state()

    def resume(self) -> dict:
        self.paused = False
        self._running.set()
        return self.state()

    def set_speed(self, speed: float) -> dict:
        if speed not in SPEEDS:
            raise ValueError(f"speed must be one of {list(SPEEDS)}, got {speed!r}")
        self.speed = float(speed)
        return self.state()

    def timing(self) -> dict:
        """The server's cost per step so far: stepping (agents, env, frame) and sending, in seconds."""
        n = max(1, self.steps)
        return {"steps": self.steps, "step_s": self.step_time_s / n, "send_s": self.send_time_s / n,
                "max_step_send_s": self.max_step_send_s}

    async def run(self, clock, send) -> None:
        """Plays the game in real time on `clock` until it ends or is closed: a step every step_s / speed clock
        seconds (none while paused); `send(message)` (a coroutine) gets every message of every step."""
        next_t = clock.now()
        try:
            while not self.over:
                if self.paused:
                    await self._running.wait()
                    next_t = clock.now()
                    continue
                t0 = time.perf_counter()
                messages = await asyncio.to_thread(self.step)
                t1 = time.perf_counter()
                for m in messages:
                    await send(m)
                t2 = time.perf_counter()
                self.step_time_s += t1 - t0
                self.send_time_s += t2 - t1
                self.max_step_send_s = max(self.max_step_send_s, t2 - t0)
                next_t += self.step_s / self.speed
                if clock.now() - next_t > clock.max_lag_s:
                    next_t = clock.now()
                await clock.sleep_until(next_t)
        except asyncio.CancelledError:
            self.close()
            raise
        except Exception as e:  # a bug: the page is told, the game stops, the server goes on
            traceback.print_exc()
            self.close()
            await send({"type": "error", "field": None, "message": f"the game stopped on an internal error: {e!r}"})
