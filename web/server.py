"""The local web server of ``python -m app.web`` (aiohttp): the play page and its games.

Routes: ``GET /`` (to /play), ``GET /play`` (the page, web/static/play.html), ``GET /static/...`` (web/static/),
``GET /play/options`` (what the page's form offers: modes, sides, agents, shipped models, heroes), ``GET /play/ws``
(a websocket per page: the messages of web/protocol.py). A route group is a function
``add_routes(app)``; ``ROUTE_GROUPS`` lists them (the play page's, then the draft page's: web/draft.py), and
``make_app`` adds each.

Games live in a registry keyed by a short random id, one page (one socket) at a time:

- ``start`` makes a game (the agents by name or ``model:PATH``, loaded once per server and mode) and plays it on the
  socket's page, in real time, until it ends, the page sends ``quit``, or the page goes away;
- a page that goes away (its tab closed, reloaded, its connection lost) pauses its game; a page that sends ``join``
  with the game's id within ``grace_s`` seconds takes it over, paused (a reload finds its game again); after that the
  game is stopped, its replay kept unfinished, and its memory (the env, the agents) freed;
- a second tab on a game that has a page is refused (``join`` answers an error naming the game): a game is played from
  one page;
- a malformed message, a message out of order (an order before ``start``, a second ``start``), an unknown agent name
  or an unknown game id get an ``error`` message naming the field and what is allowed; nothing else changes, and no
  other game notices.
"""
from __future__ import annotations

import asyncio
import datetime
import glob
import json
import os
import re
import secrets
import traceback
from dataclasses import dataclass

from aiohttp import WSCloseCode, WSMsgType, web

from moba.env.moba_env import MobaEnv
from moba.game.heroes import HEROES
from moba.game.teams import DEFAULT_TIME_LIMIT_S, MODE_5V5, MODES, TEAM_NAMES, TEAM_SIZE, enemy_side, n_heroes
from web.draft import add_draft_routes
from web.live_game import LiveGame, RealClock
from web.protocol import MAX_SEED, SPEEDS, ProtocolError, error_message, parse

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
GRACE_S = 30.0  # how long a game waits, paused, for its page to come back
HEARTBEAT_S = 15.0  # websocket pings: a page whose connection died is noticed within about this long
MAX_FRAME_BYTES = 64 * 1024  # a bigger websocket message closes the socket (a page's messages are tiny)
DEFAULT_REPLAY_DIR = os.path.join("results", "play")
HUMAN = "human"  # the human's name in a replay's header


@dataclass
class Page:
    """One websocket: the page of at most one game."""
    ws: web.WebSocketResponse
    game: str | None = None


@dataclass
class Entry:
    """A game in the registry: the game, its page (None while it has none), its loop, its started message."""
    game: LiveGame
    started: dict
    page: Page | None = None
    task: asyncio.Task | None = None
    grace: asyncio.TimerHandle | None = None


class PlayServer:
    """The games of one server, and the handlers of the play page's routes."""

    def __init__(self, clock=None, replay_dir: str = DEFAULT_REPLAY_DIR, grace_s: float = GRACE_S, log=print):
        self.clock = clock or RealClock()
        self.replay_dir, self.grace_s, self.log = replay_dir, float(grace_s), log
        self.games: dict[str, Entry] = {}
        self._makers: dict = {}  # (agent spec, mode) -> seed -> agent: a model is loaded once per server

    # ---- pages --------------------------------------------------------------------------------------------------
    async def page(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(os.path.join(STATIC_DIR, "play.html"))

    async def options(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(play_options())

    async def socket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_FRAME_BYTES)
        await ws.prepare(request)
        page = Page(ws)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await self._handle(page, msg.data)
                elif msg.type == WSMsgType.BINARY:
                    await self._send(page, error_message(None, "messages are JSON text frames, got a binary frame"))
                elif msg.type == WSMsgType.ERROR:
                    break
        finally:
            self._detach(page)
        return ws

    # ---- messages ---------------------------------------------------------------------------------------------------
    async def _handle(self, page: Page, text):
        try:
            msg = parse(text)
            await getattr(self, "_on_" + msg["type"])(page, msg)
        except ProtocolError as e:
            await self._send(page, error_message(e.field, str(e)))
        except Exception as e:  # a bug: this page is told, the server and the other games go on
            traceback.print_exc()
            await self._send(page, error_message(None, f"internal error: {e!r}"))

    def _entry(self, page: Page) -> Entry:
        entry = self.games.get(page.game) if page.game else None
        if entry is None:
            page.game = None
            raise ProtocolError("type", "no game on this page: send a 'start' message (a new game) or a 'join' "
                                        "message (a game whose page went away) first")
        return entry

    async def _on_start(self, page: Page, msg: dict):
        if page.game in self.games:
            raise ProtocolError("type", f"this page already plays game {page.game!r}: send 'quit' first, or open "
                                        f"another tab for another game")
        mode, side = msg["mode"], msg["side"]
        opponent = await asyncio.to_thread(self._agent, msg["opponent"], "opponent", mode)
        allies_spec = msg["allies"] or msg["opponent"]
        allies = await asyncio.to_thread(self._agent, allies_spec, "allies", mode) if mode == MODE_5V5 else None
        seed = msg["seed"] if msg["seed"] is not None else secrets.randbelow(MAX_SEED)
        game_id = secrets.token_hex(4)
        names = {side: HUMAN if allies is None else f"{HUMAN} + {allies_spec}", enemy_side(side): msg["opponent"]}
        game = LiveGame(game_id, mode, side, opponent(seed + 1), allies(seed + 2) if allies else None, names=names,
                        hero=msg["hero"], time_limit_s=msg["time_limit_s"], seed=seed,
                        replay_path=self._replay_path(game_id, mode, side, msg["opponent"]))
        started = await asyncio.to_thread(game.start)
        entry = Entry(game, {k: v for k, v in started.items() if k != "frame"}, page)
        self.games[game_id] = entry
        page.game = game_id
        await self._send(page, started)
        entry.task = asyncio.create_task(game.run(self.clock, lambda m: self._game_message(game_id, m)))
        entry.task.add_done_callback(lambda _: self._game_done(game_id))
        self.log(f"game {game_id}: {mode}, {HUMAN} as {side} vs {msg['opponent']}, seed {seed}; replay "
                 f"{game.replay_path}")

    async def _on_join(self, page: Page, msg: dict):
        game_id = msg["game"]
        if page.game in self.games:
            raise ProtocolError("type", f"this page already plays game {page.game!r}")
        entry = self.games.get(game_id)
        if entry is None:
            raise ProtocolError("game", f"no game {game_id!r} on this server (it ended, its page went away more than "
                                        f"{self.grace_s:g} s ago, or it never started): start a new game")
        if entry.page is not None:
            raise ProtocolError("game", f"game {game_id!r} is open in another tab: a game is played from one page; "
                                        f"close the other tab (the game then waits {self.grace_s:g} s for a page), or "
                                        f"start a new game here")
        if entry.grace is not None:
            entry.grace.cancel()
            entry.grace = None
        entry.page, page.game = page, game_id
        frame = await asyncio.to_thread(entry.game.snapshot)
        if frame is None:  # it ended meanwhile
            page.game = None
            raise ProtocolError("game", f"game {game_id!r} has ended")
        await self._send(page, {**entry.started, "frame": frame, "paused": entry.game.paused,
                                "speed": entry.game.speed})
        self.log(f"game {game_id}: a page took it over")

    async def _on_order(self, page: Page, msg: dict):
        self._entry(page).game.order(msg)

    async def _on_pause(self, page: Page, msg: dict):
        await self._send(page, self._entry(page).game.pause())

    async def _on_resume(self, page: Page, msg: dict):
        await self._send(page, self._entry(page).game.resume())

    async def _on_speed(self, page: Page, msg: dict):
        await self._send(page, self._entry(page).game.set_speed(msg["speed"]))

    async def _on_quit(self, page: Page, msg: dict):
        entry = self._entry(page)
        self._drop(page.game, "quit by its page")
        await self._send(page, {"type": "end", "winner": None, "you": "quit", "truncated": True,
                                "game_time_s": round(entry.game.time, 2), "summary": None,
                                "replay": entry.game.replay_path,
                                "view": f"python -m app.replay {entry.game.replay_path}"})
        page.game = None

    # ---- the games ----------------------------------------------------------------------------------------------
    def _agent(self, spec: str, flag: str, mode: str):
        """A function seed -> a fresh agent of `spec` (policies/league/references.agent_maker; a model is loaded
        once per server and mode); an unknown spec is a ProtocolError naming `flag`."""
        from policies.league.references import agent_maker, agent_path
        from policies.league.series import one_torch_thread
        key = (spec, mode)
        if key not in self._makers:
            try:
                if agent_path(spec, flag) is not None:
                    one_torch_thread()  # a forward pass per step: more threads only wait on each other
                self._makers[key] = agent_maker(spec, True, MobaEnv({"mode": mode}), flag)
            except ValueError as e:
                raise ProtocolError(flag, str(e)) from None
        return self._makers[key]

    def _replay_path(self, game_id: str, mode: str, side: str, opponent: str) -> str:
        os.makedirs(self.replay_dir, exist_ok=True)
        label = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(os.path.normpath(opponent)))
        stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
        return os.path.join(self.replay_dir, f"play_{stamp}_{game_id}_{mode}_{side}_vs_{label}.jsonl")

    async def _game_message(self, game_id: str, msg: dict):
        entry = self.games.get(game_id)
        if entry is None or entry.page is None:
            return
        await self._send(entry.page, msg)
        if msg["type"] == "end":
            self.log(f"game {game_id}: {msg['winner']} wins at {msg['game_time_s']:.0f} s; replay {msg['replay']}")
            entry.page.game = None
            self.games.pop(game_id, None)

    def _game_done(self, game_id: str):
        """A game's loop ended (the game ended, stopped, or failed): it leaves the registry."""
        entry = self.games.get(game_id)
        if entry is not None and entry.game.over:
            if entry.page is not None:
                entry.page.game = None
            self.games.pop(game_id, None)

    def _detach(self, page: Page):
        """The page went away: its game pauses and waits grace_s seconds for another."""
        entry = self.games.get(page.game) if page.game else None
        if entry is None or entry.page is not page:
            return
        entry.page = None
        entry.game.pause()
        entry.grace = asyncio.get_running_loop().call_later(self.grace_s, self._drop, page.game,
                                                            f"its page went away {self.grace_s:g} s ago")
        self.log(f"game {page.game}: its page went away; paused, stopped in {self.grace_s:g} s unless a page joins")

    def _drop(self, game_id: str, why: str):
        """Stops a game, keeps its replay (unfinished) and frees it."""
        entry = self.games.pop(game_id, None)
        if entry is None:
            return
        if entry.grace is not None:
            entry.grace.cancel()
        entry.game.close()
        if entry.task is not None:
            entry.task.cancel()
        self.log(f"game {game_id}: stopped ({why}); replay {entry.game.replay_path}")

    async def _send(self, page: Page, msg: dict):
        if page.ws.closed:
            return
        try:
            await page.ws.send_str(json.dumps(msg, separators=(",", ":")))
        except (ConnectionError, RuntimeError):  # the page went away meanwhile: its socket handler cleans up
            pass

    async def shutdown(self, app=None):
        """Stops every game (their replays kept) and closes every page."""
        for game_id in list(self.games):
            entry = self.games[game_id]
            page = entry.page
            self._drop(game_id, "the server stops")
            if page is not None and not page.ws.closed:
                await page.ws.close(code=WSCloseCode.GOING_AWAY, message=b"the server stops")


PLAY = web.AppKey("play", PlayServer)


def shipped_models() -> list[dict]:
    """The agents of models/ (scripts/ship_model.py), each {"spec": "model:PATH", "mode", "name"}."""
    from policies.league.references import MODEL_PREFIX, MODELS_DIR
    out = []
    for card in sorted(glob.glob(os.path.join(MODELS_DIR, "*", "card.json"))):
        try:
            with open(card) as f:
                mode = json.load(f).get("mode")
        except (OSError, ValueError):
            continue
        path = os.path.dirname(card)
        rel = os.path.relpath(path)
        out.append({"spec": MODEL_PREFIX + (path if rel.startswith("..") else rel), "mode": mode,
                    "name": os.path.basename(path)})
    return out


def play_options() -> dict:
    """What the play page's form offers."""
    from policies.agents.by_name import AGENTS
    return {"modes": list(MODES), "sides": list(TEAM_NAMES), "agents": sorted(AGENTS), "models": shipped_models(),
            "heroes": [h.name for h in HEROES], "lineups": {m: [h.name for h in HEROES[:n_heroes(m)]] for m in MODES},
            "team_size": dict(TEAM_SIZE), "time_limit_s": dict(DEFAULT_TIME_LIMIT_S), "speeds": list(SPEEDS)}


async def to_play(request: web.Request):
    raise web.HTTPFound("/play")


def add_play_routes(app: web.Application):
    """The play page, its static files and its websocket; "/" leads to it."""
    server = app[PLAY]
    app.router.add_get("/", to_play)
    app.router.add_get("/play", server.page)
    app.router.add_get("/play/options", server.options)
    app.router.add_get("/play/ws", server.socket)


# The route groups make_app adds, in order; another page adds its own add_routes(app) here.
ROUTE_GROUPS = [add_play_routes, add_draft_routes]


def make_app(*, clock=None, replay_dir: str = DEFAULT_REPLAY_DIR, grace_s: float = GRACE_S, log=print,
             route_groups=None) -> web.Application:
    """The server's application: the static files, then every group of `route_groups` (default ROUTE_GROUPS).
    `clock`: what paces the games (RealClock; a ManualClock in tests); `replay_dir`: where games' replays go;
    `grace_s`: how long a game waits for its page to come back; `log`: where one-line game events go."""
    app = web.Application()
    app[PLAY] = PlayServer(clock, replay_dir, grace_s, log)
    app.router.add_static("/static/", STATIC_DIR)
    for add_routes in ROUTE_GROUPS if route_groups is None else route_groups:
        add_routes(app)
    app.on_shutdown.append(app[PLAY].shutdown)
    return app

