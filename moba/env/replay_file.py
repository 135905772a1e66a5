"""The replay file of one game: a versioned JSON-lines format, its writer (an ``on_step`` hook of a MobaEnv game) and
its reader (which validates every line).

Line 1 is the header; every further line is a record of the game at one moment, written once per game second (or
every ``every_s`` game seconds) and at the end of the game::

    {"format": "openfive-replay", "version": 1, "mode": "5v5", "seed": 0, "agents": {"radiant": .., "dire": ..},
     "map_size": 8000.0, "grid_cell": 125.0, "ticks_per_second": 30, "frameskip": 4, "time_limit_s": 1800.0,
     "every_s": 1.0, "teams": ["radiant", "dire"], "unit_types": [...], "items": [...],
     "unit_fields": [...], "hero_fields": [...],
     "heroes": [{"slot": 0, "agent_id": "radiant_0", "team": "radiant", "hero": "blademaster",
                 "abilities": [...]}, ...],
     "map": {"terrain": ["0101..", ...], "river": [...], "lanes": {"top": [[x, y], ...], ...},
             "buildings": [{"id", "type", "team", "lane", "tier", "x", "y"}, ...]}}
    {"t": 12.0, "units": [[...UNIT_FIELDS], ...], "heroes": [[...HERO_FIELDS], ...], "events": [{...}, ...],
     "model": {"radiant_0": {"win_prob": 0.61, "action": "attack", "target": 1234}, ...}}

- ``units``: every hero (dead ones too), every building (destroyed ones too) and every living creep and ward, one
  row of UNIT_FIELDS each: ``id`` (a unit's id, never reused), ``team`` (0 radiant, 1 dire), ``type`` (an index of
  ``unit_types``), ``hero`` (the hero's slot, -1 for other units), ``x``, ``y`` (map units, Radiant's base
  bottom-left), ``hp``, ``max_hp``, ``mana``, ``max_mana``, ``level`` (heroes; 0 otherwise), ``alive`` (0/1),
  ``seen_by`` (the fog of war: bit 0 set when Radiant sees the unit, bit 1 when Dire does) and ``vision`` (the
  unit's vision radius at this time of day; 0 when dead).
- ``heroes``: one row of HERO_FIELDS per hero slot: level, gold, kills, deaths, assists, last hits, denies, items
  (indices of ``items``), seconds until respawn, buybacks.
- ``events``: what happened since the previous record, each ``{"t", "type", ...}`` with ``type`` one of
  EVENT_TYPES: ``kill`` (a hero killed an enemy hero: ``hero``, ``victim``), ``death`` (a hero died to a creep,
  tower or anything but an enemy hero: ``victim``, ``killer_type``), ``last_hit`` and ``deny`` (``hero``,
  ``unit``, ``unit_type``), ``tower``, ``barracks``, ``shrine``, ``ancient`` (a building destroyed: ``unit``,
  ``team`` that lost it, ``lane`` (top, mid, bot or null), ``tier``, ``hero`` that dealt the last hit or null),
  ``buyback`` (``hero``), ``purchase`` (``hero``, ``item``), ``cast`` (``hero``, ``ability``: an ability's or an
  item's name). Kills, deaths, last hits, denies and buildings come from the engine's death events; buybacks,
  purchases and casts from the changes of the engine's hero statistics (buyback count, inventory, cooldowns)
  between steps.
- ``model``: only for heroes played by a model (an agent with ``decisions``, e.g.
policies.agents.module_agent.ModuleAgent):
  its estimate that its own team wins (the win-probability head, Five app. D) and the primary action it chose
  at its latest decision, with the target unit's id when that action reads one.
- ``end`` (the last record of a finished game only): ``{"winner": "radiant" | "dire" | "none", "truncated"}``.
"""
from __future__ import annotations

import json

import numpy as np

from moba.env.actions import PRIMARY_NAMES
from moba.game.abilities import TARGET_TYPE_READS_UNIT
from moba.game.constants import (GRID_CELL, LANE_NAMES, MAP_SIZE, TICKS_PER_SECOND, UNIT_TYPE_NAMES,
                                UT_ANCIENT, UT_BARRACKS_MELEE, UT_BARRACKS_RANGED, UT_CREEP_MELEE, UT_CREEP_RANGED,
                                UT_HERO, UT_SHRINE, UT_TOWER)
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS, ITEMS, item_id
from moba.game.kernels import is_night
from moba.game.state import (E_KILLER, E_TYPE, E_VICTIM, F_HP, F_MANA, F_MAXHP, F_MAXMANA, F_VIS_DAY, F_VIS_NIGHT, F_X,
                            F_Y, G_CD0, G_GOLD, G_ICD0, G_RESPAWN, G_SPENT, H_ASSISTS, H_BUYBACKS, H_CH0, H_DEATHS,
                            H_DN, H_IT0, H_KILLS, H_LEVEL, H_LH, I_ALIVE, I_HERO, I_LANE, I_TEAM, I_TIER, I_TYPE,
                            I_UID, I_USED, INVENTORY)
from moba.game.tables import ABILITIES_PER_HERO
from moba.game.teams import TEAM_NAMES, agent_id, winner_name

FORMAT = "openfive-replay"
VERSION = 1
SUPPORTED_VERSIONS = (1,)
UNIT_FIELDS = ("id", "team", "type", "hero", "x", "y", "hp", "max_hp", "mana", "max_mana", "level", "alive",
               "seen_by", "vision")
HERO_FIELDS = ("slot", "level", "gold", "kills", "deaths", "assists", "last_hits", "denies", "items", "respawn_s",
               "buybacks")
BUILDING_EVENTS = {UT_TOWER: "tower", UT_BARRACKS_MELEE: "barracks", UT_BARRACKS_RANGED: "barracks",
                   UT_SHRINE: "shrine", UT_ANCIENT: "ancient"}
EVENT_TYPES = ("kill", "death", "last_hit", "deny", "tower", "barracks", "shrine", "ancient", "buyback", "purchase",
               "cast")
HEADER_KEYS = ("format", "version", "mode", "map_size", "frameskip", "every_s", "teams", "unit_types", "items",
               "unit_fields", "hero_fields", "heroes", "map")
RECORD_KEYS = ("t", "units", "heroes", "events")
_CREEPS = (UT_CREEP_MELEE, UT_CREEP_RANGED)
_COOLDOWNS = slice(G_CD0, G_CD0 + ABILITIES_PER_HERO)
_ITEM_COOLDOWNS = slice(G_ICD0, G_ICD0 + len(ITEM_ACTIONS))
_INVENTORY = slice(H_IT0, H_IT0 + INVENTORY)
_CHARGES = slice(H_CH0, H_CH0 + INVENTORY)
_ITEM_ACTION_IDS = [item_id(name) for name in ITEM_ACTIONS]


def replay_header(game, seed, agents: dict, every_s: float) -> dict:
    """The header line of a replay of `game` (an moba.game.engine.Game at its start)."""
    m = game.map
    buildings = [{"id": int(u), "type": UNIT_TYPE_NAMES[b.type], "team": b.team,
                  "lane": LANE_NAMES[b.lane] if b.lane >= 0 else None, "tier": b.tier, "x": b.x, "y": b.y}
                 for u, b in zip(game.building_rows, m.buildings)]
    return {
        "format": FORMAT, "version": VERSION, "mode": game.mode, "seed": seed, "agents": dict(agents),
        "map_size": MAP_SIZE, "grid_cell": GRID_CELL, "ticks_per_second": TICKS_PER_SECOND,
        "frameskip": game.frameskip, "time_limit_s": game.time_limit_s, "every_s": every_s,
        "teams": list(TEAM_NAMES), "unit_types": list(UNIT_TYPE_NAMES), "items": [it.name for it in ITEMS],
        "unit_fields": list(UNIT_FIELDS), "hero_fields": list(HERO_FIELDS),
        "heroes": [{"slot": h, "agent_id": agent_id(h // game.team_size, h % game.team_size),
                    "team": TEAM_NAMES[h // game.team_size], "hero": game.hero_name(h),
                    "abilities": [a.name for a in HEROES[game.hero_defs[h]].abilities]} for h in range(game.n_heroes)],
        "map": {"terrain": ["".join(map(str, col)) for col in m.terrain.T[::-1]],  # rows top (north) first
                "river": ["".join(map(str, col)) for col in m.river.T[::-1]],
                "lanes": {LANE_NAMES[lane]: [list(p) for p in m.lanes[0][lane]]
                          for lane in range(3) if m.lane_enabled[lane]},
                "buildings": buildings},
    }


def unit_rows(game) -> list:
    """The UNIT_FIELDS rows of every hero, building, and living creep and ward."""
    s = game.s
    used = s.ui[:, I_USED] == 1
    rows = np.nonzero(used & ((s.ui[:, I_ALIVE] == 1) | (np.arange(len(used)) < game.n_buildings_end)))[0]
    vision = np.where(s.ui[rows, I_ALIVE] == 1, s.uf[rows, F_VIS_NIGHT if is_night(game.time) else F_VIS_DAY], 0.0)
    seen_by = s.vis[0, rows].astype(np.int64) | (s.vis[1, rows].astype(np.int64) << 1)
    hero = s.ui[rows, I_HERO]
    level = np.where(hero >= 0, s.hi[np.maximum(hero, 0), H_LEVEL], 0)
    ints = np.stack([s.ui[rows, I_UID], s.ui[rows, I_TEAM], s.ui[rows, I_TYPE], hero]).T.tolist()
    floats = np.rint(s.uf[rows][:, [F_X, F_Y, F_HP, F_MAXHP, F_MANA, F_MAXMANA]]).astype(np.int64).tolist()
    tail = np.stack([level, s.ui[rows, I_ALIVE], seen_by, np.rint(vision).astype(np.int64)]).T.tolist()
    return [a + b + c for a, b, c in zip(ints, floats, tail)]


def hero_rows(game) -> list:
    """The HERO_FIELDS rows of every hero slot."""
    s = game.s
    return [[h, int(s.hi[h, H_LEVEL]), int(s.hf[h, G_GOLD]), int(s.hi[h, H_KILLS]), int(s.hi[h, H_DEATHS]),
             int(s.hi[h, H_ASSISTS]), int(s.hi[h, H_LH]), int(s.hi[h, H_DN]),
             [int(i) for i in s.hi[h, _INVENTORY] if i >= 0], round(max(0.0, float(s.hf[h, G_RESPAWN])), 1),
             int(s.hi[h, H_BUYBACKS])] for h in range(game.n_heroes)]


def _holdings(hi: np.ndarray) -> np.ndarray:
    """(n_heroes, items): how many of each item every hero holds (charges for consumables, count otherwise)."""
    out = np.zeros((hi.shape[0], len(ITEMS)), np.int64)
    for h in range(hi.shape[0]):
        for item, charges in zip(hi[h, _INVENTORY], hi[h, _CHARGES]):
            if item >= 0:
                out[h, item] += charges if ITEMS[item].consumable else 1
    return out


class ReplayWriter:
    """Writes one game of a MobaEnv to a replay file: pass ``on_step`` as the ``on_step`` hook of
    ``policies.agents.by_name.play_game`` (it runs after the reset and after every step); the file is closed when the
    game
    ends (or by ``close``).

    ``agents``: the agents' names by side (for the header); ``players``: the agent objects by side, whose
    ``decisions`` (if they have that attribute: ``{agent_id: {"win_prob", "action"}}``) fill the records' ``model``;
    ``every_s``: game seconds between records (1 = one per game second; a record is written at the first step at or
    past each multiple, and at the end). A game stopped before its end (``close``) gets a last record of the steps
    since the previous one, without an ``end``: its events are kept."""

    def __init__(self, path: str, agents: dict, seed=None, every_s: float = 1.0, players: dict | None = None):
        if not isinstance(every_s, (int, float)) or isinstance(every_s, bool) or not every_s > 0:
            raise ValueError(f"replay every_s: must be a number of game seconds > 0, got {every_s!r}")
        self.path, self.agents, self.seed, self.every_s = path, dict(agents), seed, float(every_s)
        self.players = players or {}
        self.file = None

    # ---- the hook ------------------------------------------------------------------------------------------------
    def on_step(self, env):
        game = env.game
        self.game = game
        if self.file is None:
            self._start(env)
            return
        self.events += self._events(game)
        decided = self.slot_units, self.prev_uid  # the unit table the agents chose this step's targets from
        self._remember(env)
        done = game.terminated or game.truncated
        slot = int(game.time / self.every_s + 1e-6)
        self.pending, self.last_decided = True, decided  # a step since the last record, and its unit table
        if slot > self.last_slot or done:
            self.last_slot = slot
            self._write_record(game, decided, done)
        if done:
            self.close()

    def close(self):
        """Closes the file; a game stopped between records first gets a record of its last steps (no ``end``)."""
        if self.file is not None and not self.file.closed:
            if self.pending:
                self._write_record(self.game, self.last_decided, False)
            self.file.close()

    # ---- internals -----------------------------------------------------------------------------------------------
    def _start(self, env):
        game = env.game
        self.file = open(self.path, "w")
        self.file.write(json.dumps(replay_header(game, self.seed, self.agents, self.every_s)) + "\n")
        self.events, self.last_slot, self.pending = [], 0, False
        self.slot_of = {agent_id(h // game.team_size, h % game.team_size): h for h in range(game.n_heroes)}
        self._remember(env)
        self._write_record(game, None, False)

    def _remember(self, env):
        """The state the next step's events are measured against."""
        s = env.game.s
        self.prev_uid = np.where(s.ui[:, I_USED] == 1, s.ui[:, I_UID], -1)
        self.prev_hi = s.hi.copy()
        self.prev_cd = s.hf[:, _COOLDOWNS].copy()
        self.prev_icd = s.hf[:, _ITEM_COOLDOWNS].copy()
        self.prev_spent = s.hf[:, G_SPENT].copy()
        self.slot_units = env.encoder.slot_units.copy()  # the unit rows the agents' next target_unit choices index
        self.action_tt = env.encoder.tt

    def _uid(self, s, row: int) -> int:
        """The id of the unit in `row` during the last step (a creep's row may have been freed and reused since)."""
        return int(self.prev_uid[row]) if self.prev_uid[row] >= 0 else int(s.ui[row, I_UID])

    def _events(self, game) -> list:
        s, t = game.s, round(game.time, 3)
        out = []
        for ev in game.last_events:
            victim, killer, typ = int(ev[E_VICTIM]), int(ev[E_KILLER]), int(ev[E_TYPE])
            kh = int(s.ui[killer, I_HERO]) if killer >= 0 else -1
            team = int(s.ui[victim, I_TEAM])
            if typ == UT_HERO:
                if kh >= 0 and int(s.ui[killer, I_TEAM]) != team:
                    out.append({"t": t, "type": "kill", "hero": kh, "victim": int(s.ui[victim, I_HERO])})
                else:
                    out.append({"t": t, "type": "death", "victim": int(s.ui[victim, I_HERO]),
                                "killer_type": UNIT_TYPE_NAMES[s.ui[killer, I_TYPE]] if killer >= 0 else None})
            elif typ in _CREEPS and kh >= 0:
                kind = "deny" if int(s.ui[killer, I_TEAM]) == team else "last_hit"
                out.append({"t": t, "type": kind, "hero": kh, "unit": self._uid(s, victim),
                            "unit_type": UNIT_TYPE_NAMES[typ]})
            elif typ in BUILDING_EVENTS:
                lane = int(s.ui[victim, I_LANE])
                out.append({"t": t, "type": BUILDING_EVENTS[typ], "unit": self._uid(s, victim), "team": team,
                            "lane": LANE_NAMES[lane] if lane >= 0 else None, "tier": int(s.ui[victim, I_TIER]),
                            "hero": kh if kh >= 0 else None})
        for h in np.nonzero(s.hi[:, H_BUYBACKS] > self.prev_hi[:, H_BUYBACKS])[0]:
            out.append({"t": t, "type": "buyback", "hero": int(h)})
        abilities = None
        for h, k in zip(*np.nonzero(s.hf[:, _COOLDOWNS] > self.prev_cd + 1e-9)):
            abilities = abilities or [[a.name for a in HEROES[d].abilities] for d in game.hero_defs]
            out.append({"t": t, "type": "cast", "hero": int(h), "ability": abilities[h][k]})
        used = np.zeros((game.n_heroes, len(ITEMS)), np.int64)  # consumables' charges used in this step
        for h, k in zip(*np.nonzero(s.hf[:, _ITEM_COOLDOWNS] > self.prev_icd + 1e-9)):
            out.append({"t": t, "type": "cast", "hero": int(h), "ability": ITEM_ACTIONS[k]})
            used[h, _ITEM_ACTION_IDS[k]] += ITEMS[_ITEM_ACTION_IDS[k]].consumable
        buyers = np.nonzero(s.hf[:, G_SPENT] > self.prev_spent + 1e-9)[0]
        if len(buyers):  # a salve used and bought again in the same step leaves the inventory as it was
            bought = _holdings(s.hi[buyers]) - _holdings(self.prev_hi[buyers]) + used[buyers]
            for h, row in zip(buyers, bought):
                for item in np.nonzero(row > 0)[0]:
                    n = int(row[item]) // max(1, ITEMS[item].charges if ITEMS[item].consumable else 1)
                    out += [{"t": t, "type": "purchase", "hero": int(h), "item": ITEMS[item].name}] * max(1, n)
        return out

    def _model(self, game, decided) -> dict:
        """The players' latest decisions (made on the unit table `decided`: slot units and their ids)."""
        out = {}
        slot_units, uids = decided
        for player in self.players.values():
            for aid, d in (getattr(player, "decisions", None) or {}).items():
                h, act = self.slot_of[aid], d["action"]
                win_prob = d.get("win_prob")
                entry = {"win_prob": None if win_prob is None else round(float(win_prob), 4),
                         "action": PRIMARY_NAMES[act["primary"]], "target": None}
                if TARGET_TYPE_READS_UNIT[self.action_tt[h][act["primary"]]]:
                    row = int(slot_units[h // game.team_size][act["target_unit"]])
                    entry["target"] = int(uids[row]) if row >= 0 and uids[row] >= 0 else None
                out[aid] = entry
        return out

    def _write_record(self, game, decided, last: bool):
        """A record of the game now; `decided`: the unit table of the agents' latest decisions (None before the
        first); the last record of a game says how it ended."""
        record = {"t": round(game.time, 3), "units": unit_rows(game), "heroes": hero_rows(game),
                  "events": self.events}
        model = self._model(game, decided) if decided is not None else {}
        if model:
            record["model"] = model
        if last:
            record["end"] = {"winner": winner_name(game.winner), "truncated": game.truncated}
        self.file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.events, self.pending = [], False


# ---- reading ---------------------------------------------------------------------------------------------------------
class ReplayError(ValueError):
    """A replay file that is missing, not a replay, of an unsupported version, or has a malformed line."""


def _check_header(header, where: str) -> dict:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        got = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise ReplayError(f"{where}: field 'format' must be {FORMAT!r}, got {got!r} (not a replay of "
                          f"scripts/play.py --replay, app.evaluate --replay-dir or training's evaluation games)")
    if header.get("version") not in SUPPORTED_VERSIONS:
        raise ReplayError(f"{where}: field 'version' must be one of {list(SUPPORTED_VERSIONS)}, got "
                          f"{header.get('version')!r}")
    missing = [k for k in HEADER_KEYS if k not in header]
    if missing:
        raise ReplayError(f"{where}: header field {missing[0]!r} is missing; a header has {list(HEADER_KEYS)}")
    return header


def _check_record(record, where: str, n_unit_fields: int, n_hero_fields: int, previous_t: float) -> dict:
    if not isinstance(record, dict):
        raise ReplayError(f"{where}: a record must be a JSON object with {list(RECORD_KEYS)}, got "
                          f"{type(record).__name__}")
    missing = [k for k in RECORD_KEYS if k not in record]
    if missing:
        raise ReplayError(f"{where}: record field {missing[0]!r} is missing; a record has {list(RECORD_KEYS)}")
    t = record["t"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or t < previous_t:
        raise ReplayError(f"{where}: field 't' must be a game time in seconds, not before the previous record's "
                          f"{previous_t}, got {t!r}")
    for key, n, names in (("units", n_unit_fields, "unit_fields"), ("heroes", n_hero_fields, "hero_fields")):
        rows = record[key]
        if not isinstance(rows, list) or any(not isinstance(r, list) or len(r) != n for r in rows):
            raise ReplayError(f"{where}: field {key!r} must be a list of rows of {n} values (the header's "
                              f"{names!r})")
    events = record["events"]
    if not isinstance(events, list) or any(not isinstance(e, dict) or e.get("type") not in EVENT_TYPES
                                           for e in events):
        raise ReplayError(f"{where}: field 'events' must be a list of objects whose 'type' is one of "
                          f"{list(EVENT_TYPES)}")
    return record


def read_replay(path: str) -> tuple[dict, list]:
    """The header and the records of a replay file; a ReplayError names the line and the field that is wrong."""
    try:
        f = open(path)
    except OSError as e:
        raise ReplayError(f"replay {path!r}: cannot be read ({e.strerror})") from None
    records = []
    with f:
        header = None
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"replay {path!r} line {n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReplayError(f"{where}: not JSON ({e.msg} at column {e.colno})") from None
            if header is None:
                header = _check_header(obj, where)
                continue
            records.append(_check_record(obj, where, len(header["unit_fields"]), len(header["hero_fields"]),
                                         records[-1]["t"] if records else 0.0))
    if header is None:
        raise ReplayError(f"replay {path!r}: empty file (line 1 must be the header)")
    if not records:
        raise ReplayError(f"replay {path!r}: a header but no record (a replay has at least the record at t=0)")
    return header, records
