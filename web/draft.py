"""The draft page, ``/draft``: pick 5v5 heroes in turns against the drafter, which picks by minimax over the remaining
turns on a model's lineup scores (Five app. D.2, fig. 12; policies/draft/). ``add_draft_routes(app)`` adds its
routes to an aiohttp application:

- ``GET /draft``: the page (web/static/draft.html, with draft.js and draft.css under ``/draft/static/``);
- ``GET /draft/api/setup``: the model, the heroes and their roles, the default pool, the pool sizes allowed, the turn
  order and its source, and the model's calibration (``<model dir>/draft_calibration.json``, read on every request;
  null when not measured yet);
- ``POST /draft/api/state`` with ``{"pool": [heroes], "first": "radiant" | "dire", "picks": [heroes in turn order]}``:
  ``{"status": "ready", ...}`` with the draft's state (policies.draft.minimax.Draft.state: the turn, the side on
  turn, each team's heroes, Radiant's win probability with best play, each free hero's value if the side on turn
  picks it, the recommended pick) and the pool's score range; or, while the pool's lineups are being scored (the
  first time a pool is asked for: policies/draft/lineups.py, cached on disk), status 202 and ``{"status":
  "scoring", "done": n, "total": n}``: ask again. A bad request is status 400 and ``{"error": "..."}`` naming the
  field and what is allowed.

Scoring runs in one background thread, one pool at a time; tables are read and solved off the event loop, so that a
live game on the same server keeps its pace. The page scores pools of at most PAGE_MAX_POOL heroes.
"""
from __future__ import annotations

import asyncio
import collections
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from moba.game.heroes import HEROES
from moba.game.teams import TEAM_NAMES
from policies.draft import lineups as L
from policies.draft.calibration import CALIBRATION_FILE
from policies.draft.minimax import PICK_ORDER, PICK_ORDER_SOURCE, Draft, check_picks, check_side, draft_of_table, \
    turn_sides

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PAGE_ASSETS = {"draft.js": "application/javascript", "draft.css": "text/css"}
PAGE_MAX_POOL = 12  # the largest pool the page scores itself: 16,632 lineups, minutes on two cores
MAX_PENDING_POOLS = 2  # pools waiting for or in scoring at once; a request for another one is refused (503)
SOLVED_KEPT = 8  # solved drafts kept in memory (one per pool and first side; a 12-hero pool's is 4 MB)
STATE_KEYS = ("pool", "first", "picks")


class DraftRequestError(ValueError):
    """A request the page should not have sent: its message names the field."""


class DraftBusyError(RuntimeError):
    """MAX_PENDING_POOLS pools are being scored already."""


class DraftService:
    """The drafts of one model: lineup tables per pool (lineups.lineup_table: cached on disk), scored in a
    background thread, and their solved minimax kept in memory (SOLVED_KEPT). ``fixed`` serves one given table
    instead (tests: a hand-checked table)."""

    def __init__(self, model: str = L.DEFAULT_MODEL, cache_dir: str = L.DEFAULT_CACHE_DIR,
                 default_pool=L.DEFAULT_POOL, max_pool: int = PAGE_MAX_POOL, order=PICK_ORDER, fixed=None,
                 calibration: dict | None = None):
        """`fixed`: (pool, lineups, scores) as minimax.Draft takes them (lineups as positions in the pool,
        Radiant's then Dire's; Radiant's win probability), a table served instead of the model's, with
        `calibration` the dict the page states; `model` is then only its label."""
        self.model, self.cache_dir, self.order = model, cache_dir, tuple(order)
        self.fixed_table = None if fixed is None else (tuple(fixed[0]), fixed[1], fixed[2])
        self.fixed_calibration = calibration
        if self.fixed_table is None:
            self.module = L.load_draft_module(model, "model")  # a model that is not 5v5 fails here, named
            self.fingerprint = L.model_fingerprint(model, "model")
            self.default_pool = L.check_pool(default_pool, "default pool")
            self.min_pool, self.max_pool = L.MIN_POOL, max_pool
            self.heroes = [{"name": h.name, "role": h.role} for h in HEROES]
        else:
            self.module = self.fingerprint = None
            self.default_pool = self.fixed_table[0]
            self.min_pool = self.max_pool = len(self.default_pool)
            self.heroes = [{"name": h, "role": ""} for h in self.default_pool]
        self._solved = collections.OrderedDict()
        self._jobs = {}
        self._lock = threading.Lock()
        self._scorer = None  # the scoring thread, started by the first pool to score

    @classmethod
    def fixed(cls, pool, lineups, scores, order=PICK_ORDER, label: str = "a fixed table",
              calibration: dict | None = None) -> "DraftService":
        """A service of one hand-made table (tests): see `fixed` of __init__."""
        return cls(model=label, cache_dir=None, order=order, fixed=(pool, lineups, scores), calibration=calibration)

    # ---- what the page asks ------------------------------------------------------------------------------------------
    def calibration(self) -> dict | None:
        """The model's calibration JSON (scripts/draft_calibration.py), without its per-game results; None when
        not measured yet."""
        if self.fixed_table is not None:
            return self.fixed_calibration
        from policies.league.references import checkpoint_path
        path = os.path.join(checkpoint_path(self.model, "model"), CALIBRATION_FILE)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            cal = json.load(f)
        cal.pop("game_results", None)
        cal["file"] = path
        return cal

    def setup(self) -> dict:
        return {"model": self.model, "heroes": self.heroes, "pool": list(self.default_pool),
                "min_pool": self.min_pool, "max_pool": self.max_pool, "order": list(self.order),
                "order_source": PICK_ORDER_SOURCE if self.order == PICK_ORDER else "the table's own order",
                "sides": list(TEAM_NAMES), "fixed_pool": self.fixed_table is not None,
                "calibration": self.calibration(), "calibration_command":
                f"python scripts/draft_calibration.py --model {self.model}"}

    def check_request(self, body) -> tuple[tuple, str, list]:
        """(pool in hero order, first, picks as "side:hero") of a state request; DraftRequestError names the field."""
        if not isinstance(body, dict):
            raise DraftRequestError(f"body: must be a JSON object with keys {list(STATE_KEYS)}")
        unknown = sorted(set(body) - set(STATE_KEYS))
        if unknown:
            raise DraftRequestError(f"body: unknown key(s) {unknown}; allowed: {list(STATE_KEYS)}")
        pool, first, picks = body.get("pool", list(self.default_pool)), body.get("first", TEAM_NAMES[0]), \
            body.get("picks", [])
        for key, value in (("pool", pool), ("picks", picks)):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise DraftRequestError(f"{key}: must be a list of hero names")
        try:
            first = check_side(first, "first")
            if self.fixed_table is not None:
                if sorted(pool) != sorted(self.default_pool):
                    raise ValueError(f"pool: this page drafts the pool {list(self.default_pool)} only")
                pool = self.default_pool
            else:
                if len(pool) > self.max_pool:
                    raise ValueError(f"pool: the page scores pools of {self.min_pool} to {self.max_pool} heroes "
                                     f"({L.n_lineups(self.max_pool):,} lineups), got {len(pool)}; larger pools: "
                                     f"python -m app.draft --pool")
                pool = L.check_pool(pool, "pool")
            done = check_picks(picks, pool, turn_sides(first, self.order), "picks")
        except ValueError as e:
            raise DraftRequestError(str(e)) from None
        return pool, first, [f"{s}:{h}" for s, h in done]

    # ---- tables ------------------------------------------------------------------------------------------------------
    def _table_path(self, pool) -> str:
        return L.cache_path(self.cache_dir, self.model, self.fingerprint, pool, L.SCORE_SEED, L.SCORE_DECISIONS)

    def _score(self, pool, job: dict):
        from policies.league.series import one_torch_thread
        one_torch_thread()

        def progress(done, total):
            job["done"], job["total"] = done, total
        L.lineup_table(self.model, pool, self.cache_dir, progress=progress, module=self.module, flag="model")

    def scoring(self, pool) -> dict | None:
        """None when the pool's table is on disk (or fixed); else its scoring job, started if need be:
        {"done", "total", "error"}."""
        if self.fixed_table is not None or os.path.exists(self._table_path(pool)):
            return None
        with self._lock:
            job = self._jobs.get(pool)
            if job is None or job.get("error"):
                pending = [p for p, j in self._jobs.items() if not j["future"].done() and p != pool]
                if len(pending) >= MAX_PENDING_POOLS:
                    raise DraftBusyError(f"pool: {len(pending)} other pools are being scored; ask again when they "
                                         f"are done")
                job = {"done": 0, "total": L.n_lineups(len(pool)), "error": None}
                if self._scorer is None:
                    self._scorer = ThreadPoolExecutor(1, thread_name_prefix="draft-scoring")
                future = self._scorer.submit(self._score, pool, job)
                job["future"] = future

                def finished(f, job=job):
                    if not f.cancelled() and f.exception() is not None:
                        job["error"] = f"scoring the pool failed: {f.exception()!r}"
                future.add_done_callback(finished)
                self._jobs[pool] = job
            elif job["future"].done() and os.path.exists(self._table_path(pool)):
                del self._jobs[pool]
                return None
        return job

    def solved(self, pool, first: str) -> Draft:
        """The solved draft of a pool whose table is ready (blocking: call it off the event loop)."""
        key = (pool, first)
        with self._lock:
            if key in self._solved:
                self._solved.move_to_end(key)
                return self._solved[key]
        if self.fixed_table is not None:
            draft = Draft(*self.fixed_table, first=first, order=self.order)
        else:
            draft = draft_of_table(L.cached_table(self._table_path(pool)), first, self.order)
        with self._lock:
            self._solved[key] = draft
            while len(self._solved) > SOLVED_KEPT:
                self._solved.popitem(last=False)
        return draft

    def state(self, pool, first: str, picks: list) -> dict:
        """The page's state of a checked request (blocking)."""
        draft = self.solved(pool, first)
        return {"status": "ready", "pool": list(pool), "first": first, "sides": list(draft.sides),
                **draft.state(picks), "score_range": [float(draft.scores.min()), float(draft.scores.max())],
                "lineups": int(len(draft.scores))}

    def close(self):
        """Stops the scoring thread after its current pool (a pool it scores is written whole or not at all)."""
        with self._lock:
            scorer, self._scorer = self._scorer, None
            self._jobs = {p: j for p, j in self._jobs.items() if j["future"].running()}
        if scorer is not None:
            scorer.shutdown(wait=False, cancel_futures=True)


SERVICE_KEY = web.AppKey("draft_service", DraftService)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def page(request: web.Request) -> web.Response:
    return web.FileResponse(os.path.join(STATIC_DIR, "draft.html"), headers={"Cache-Control": "no-cache"})


async def asset(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name not in PAGE_ASSETS:
        return _error(404, f"no such file {name!r}; the page's files: {sorted(PAGE_ASSETS)}")
    return web.FileResponse(os.path.join(STATIC_DIR, name), headers={"Content-Type": PAGE_ASSETS[name],
                                                                      "Cache-Control": "no-cache"})


async def setup(request: web.Request) -> web.Response:
    service = request.app[SERVICE_KEY]
    return web.json_response(await asyncio.get_running_loop().run_in_executor(None, service.setup))


async def state(request: web.Request) -> web.Response:
    service = request.app[SERVICE_KEY]
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, f"body: not JSON; send a JSON object with keys {list(STATE_KEYS)}")
    try:
        pool, first, picks = service.check_request(body)
    except DraftRequestError as e:
        return _error(400, str(e))
    loop = asyncio.get_running_loop()
    try:
        job = await loop.run_in_executor(None, service.scoring, pool)
    except DraftBusyError as e:
        return _error(503, str(e))
    if job is not None:
        if job["error"]:
            return _error(500, job["error"])
        return web.json_response({"status": "scoring", "done": job["done"], "total": job["total"]}, status=202)
    return web.json_response(await loop.run_in_executor(None, service.state, pool, first, picks))


def add_draft_routes(app: web.Application, service: DraftService | None = None) -> DraftService | None:
    """Adds the draft page's routes to `app`, served by `service` (default: DraftService() of the best shipped 5v5
    model, models/five_5v5_kickstart); returns the service. Its scoring thread stops with the app. A default model
    that cannot be loaded leaves the rest of the server running: /draft and its API then answer 503 with the reason."""
    if service is None:
        try:
            service = DraftService()
        except (ValueError, OSError) as e:
            reason = f"the draft is unavailable: {e}"

            async def unavailable(request: web.Request) -> web.Response:
                return _error(503, reason)
            for path in ("/draft", "/draft/static/{name}", "/draft/api/setup"):
                app.router.add_get(path, unavailable)
            app.router.add_post("/draft/api/state", unavailable)
            return None
    app[SERVICE_KEY] = service
    app.router.add_get("/draft", page)
    app.router.add_get("/draft/static/{name}", asset)
    app.router.add_get("/draft/api/setup", setup)
    app.router.add_post("/draft/api/state", state)

    async def stop_scoring(app):
        service.close()
    app.on_cleanup.append(stop_scoring)
    return service
