"""The play page's websocket messages: their schema and their validation.

Every message is one JSON object with a ``type``. From the page to the server:

- ``{"type": "start", "mode": "1v1", "side": "radiant", "opponent": "scripted", "allies": "scripted", "hero": null,
  "time_limit_s": 0, "seed": null}``: a new game on this socket. ``mode`` one of MODES; ``side`` the human's team;
  ``opponent`` the enemy team's agent, by name or ``model:PATH`` (policies/league/references.agent_path);
  ``allies`` (5v5 only) the agent of the human's four allies; ``hero`` the human's hero (a name of
  moba/game/heroes.py; null: the mode's default lineup); ``time_limit_s`` game seconds (0: the mode's default);
  ``seed`` an int (null: drawn by the server). Every field has the default shown but ``allies`` (default: the
  opponent's agent).
- ``{"type": "join", "game": "<id>"}``: this socket takes over a game whose page went away (a reload).
- ``{"type": "order", "action": "move", "x": 4000, "y": 3000}``: the human's hero's next order. ``action`` is one of
  ORDER_ACTIONS: ``move`` (``x``, ``y``: map units), ``attack`` (``unit``: a unit's id, as in the frames), ``stop``,
  the abilities ``ability_1`` .. ``ability_4`` and the item actions ``item_<name>`` (with ``unit`` or ``x``, ``y``
  as the ability's target type needs), ``buyback`` and ``shrine``.
- ``{"type": "pause"}``, ``{"type": "resume"}``, ``{"type": "speed", "speed": 2}`` (one of SPEEDS), ``{"type":
  "quit"}`` (ends the game now; its replay is kept, unfinished).

From the server: ``started``, ``frame``, ``state``, ``order`` (accepted, refused, done), ``end`` and ``error``
(web/live_game.py and web/server.py write them). A message that breaks the schema gets ``{"type": "error",
"field": <the field or null>, "message": <what is wrong and what is allowed>}`` and changes nothing.
"""
from __future__ import annotations

import json
import math

from moba.env.actions import PRIMARY_NAMES
from moba.game.constants import MAP_SIZE
from moba.game.heroes import HERO_INDEX
from moba.game.teams import MODE_1V1, MODES, TEAM_NAMES

MESSAGE_TYPES = ("start", "join", "order", "pause", "resume", "speed", "quit")
SPEEDS = (0.5, 1.0, 2.0)  # the game's speeds, in game seconds per real second
STOP = "stop"  # an order that is not a primary action: the hero stays where it is (a move to its own position)
ORDER_ACTIONS = tuple(a for a in PRIMARY_NAMES if a != "noop") + (STOP,)
MAX_MESSAGE_CHARS = 4096  # a page's message is far shorter; a longer one is refused unread
START_DEFAULTS = {"mode": MODE_1V1, "side": TEAM_NAMES[0], "opponent": "scripted", "allies": None, "hero": None,
                  "time_limit_s": 0.0, "seed": None}
MAX_SEED = 2 ** 31 - 1
FIELDS = {"start": tuple(START_DEFAULTS), "join": ("game",), "order": ("action", "unit", "x", "y"), "pause": (),
          "resume": (), "speed": ("speed",), "quit": ()}


class ProtocolError(ValueError):
    """A message that breaks the schema: `field` names the field (None: the message as a whole)."""

    def __init__(self, field: str | None, message: str):
        super().__init__(message)
        self.field = field


def error_message(field: str | None, message: str) -> dict:
    """The server's answer to a message it refuses."""
    return {"type": "error", "field": field, "message": message}


def _number(msg: dict, key: str, lo: float, hi: float) -> float:
    v = msg[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        raise ProtocolError(key, f"field {key!r} must be a number in [{lo:g}, {hi:g}], got {v!r}")
    return float(v)


def _int(msg: dict, key: str, lo: int, hi: int) -> int:
    v = msg[key]
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ProtocolError(key, f"field {key!r} must be an integer in [{lo}, {hi}], got {v!r}")
    return v


def _text(msg: dict, key: str, allowed=None) -> str:
    v = msg[key]
    if not isinstance(v, str) or not v or (allowed is not None and v not in allowed):
        want = f"one of {list(allowed)}" if allowed is not None else "a non-empty string"
        raise ProtocolError(key, f"field {key!r} must be {want}, got {v!r}")
    return v


def parse(text) -> dict:
    """The message in `text` (a websocket text frame), checked and with its defaults filled in; a ProtocolError
    names the field that is wrong and what is allowed."""
    if not isinstance(text, str):
        raise ProtocolError(None, "messages are JSON text frames, got a binary frame")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ProtocolError(None, f"a message is at most {MAX_MESSAGE_CHARS} characters, got {len(text)}")
    try:
        msg = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProtocolError(None, f"a message must be a JSON object: not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(msg, dict):
        raise ProtocolError(None, f"a message must be a JSON object with a 'type', got {type(msg).__name__}")
    kind = msg.get("type")
    if kind not in MESSAGE_TYPES:
        raise ProtocolError("type", f"field 'type' must be one of {list(MESSAGE_TYPES)}, got {kind!r}")
    unknown = sorted(set(msg) - {"type", *FIELDS[kind]})
    if unknown:
        raise ProtocolError(unknown[0], f"a {kind!r} message has no field {unknown[0]!r}; its fields: "
                                        f"{list(FIELDS[kind])}")
    return {"start": _start, "join": _join, "order": _order, "speed": _speed}.get(kind, dict)(msg)


def _start(msg: dict) -> dict:
    out = {**START_DEFAULTS, **{k: v for k, v in msg.items() if v is not None}}
    _text(out, "mode", MODES)
    _text(out, "side", TEAM_NAMES)
    _text(out, "opponent")
    if out["allies"] is not None:
        _text(out, "allies")
        if out["mode"] == MODE_1V1:
            raise ProtocolError("allies", "field 'allies' is for mode 5v5 (the agent of your four allies); a 1v1 "
                                          "game has none")
    if out["hero"] is not None:
        _text(out, "hero", sorted(HERO_INDEX))
    out["time_limit_s"] = _number(out, "time_limit_s", 0.0, 10 * 3600.0)
    if out["seed"] is not None:
        out["seed"] = _int(out, "seed", 0, MAX_SEED)
    return out


def _join(msg: dict) -> dict:
    if "game" not in msg:
        raise ProtocolError("game", "a 'join' message needs field 'game': the id of the game to take over")
    _text(msg, "game")
    return msg


def _order(msg: dict) -> dict:
    if "action" not in msg:
        raise ProtocolError("action", f"an 'order' message needs field 'action', one of {list(ORDER_ACTIONS)}")
    _text(msg, "action", ORDER_ACTIONS)
    if "unit" in msg:
        _int(msg, "unit", 0, MAX_SEED)
    if ("x" in msg) != ("y" in msg):
        missing = "y" if "x" in msg else "x"
        raise ProtocolError(missing, f"an order with a point needs both 'x' and 'y' (map units); {missing!r} is "
                                     f"missing")
    if "x" in msg:
        msg["x"], msg["y"] = _number(msg, "x", 0.0, MAP_SIZE), _number(msg, "y", 0.0, MAP_SIZE)
    if msg["action"] == "move" and "x" not in msg:
        raise ProtocolError("x", "a 'move' order needs 'x' and 'y': the point to go to, in map units "
                                 f"[0, {MAP_SIZE:g}]")
    if msg["action"] == "attack" and "unit" not in msg:
        raise ProtocolError("unit", "an 'attack' order needs 'unit': the id of the unit to attack")
    return msg


def _speed(msg: dict) -> dict:
    if "speed" not in msg:
        raise ProtocolError("speed", f"a 'speed' message needs field 'speed', one of {list(SPEEDS)}")
    v = msg["speed"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or float(v) not in SPEEDS:
        raise ProtocolError("speed", f"field 'speed' must be one of {list(SPEEDS)}, got {v!r}")
    return {"type": "speed", "speed": float(v)}
