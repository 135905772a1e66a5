"""The play server's speed (python -m app.web, web/): what a live game costs the server per tick, whether it holds
30 ticks per game second in real time, and how many frames a page renders per second, in 1v1 and 5v5.

    python scripts/bench_web.py [--modes 1v1 5v5] [--agents models|scripted] [--steps 600] [--seconds 10] [--no-page]

For each mode, against the shipped model of that mode (``--agents models``: models/hok_1v1_kickstart,
models/five_5v5_kickstart; the 5v5 human's allies too) or the scripted bot:

1. step and send: a game on a server paced by a ManualClock, played flat out for ``--steps`` env steps with a
   websocket client reading every frame; the server's time per step (the agents' decisions, the env step, the
   frame: ``LiveGame.timing``) and per send (the frame to JSON and onto the socket), and both per engine tick (a
   step is ``frameskip`` = 4 ticks). The margin is the tick's budget at 1x (1/30 s) over that time; 2x halves the
   budget.
2. real time: a game on a server paced by the real clock at 1x for ``--seconds`` seconds: the ticks per second it held
   (30 is real time), with a websocket client reading the frames.
3. the page: headless Chromium (tests/browser.py) plays the same for ``--seconds`` seconds: the frames the page
   rendered per second (requestAnimationFrame, each drawing the camera view and the minimap), and the server's frames
   it received per second. Skipped without Chromium or with ``--no-page``.

Prints a table and, last, a JSON line with every figure. Run it on a quiet machine: other work on the cores shows
up as lag.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"1v1": "model:models/hok_1v1_kickstart", "5v5": "model:models/five_5v5_kickstart"}
TICKS_PER_SECOND = 30  # moba/game/constants.TICKS_PER_SECOND: real time is 30 ticks per second at 1x


class Server:
    """web.server's app on a free port, in a thread with its own event loop."""

    def __init__(self, clock, replay_dir: str):
        self.clock, self.replay_dir = clock, replay_dir
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(60)

    def _run(self, ready):
        from aiohttp import web

        from web.server import PLAY, add_play_routes, make_app
        asyncio.set_event_loop(self.loop)
        app = make_app(clock=self.clock, replay_dir=self.replay_dir, log=lambda line: None,
                       route_groups=[add_play_routes])
        self.play = app[PLAY]
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = self.runner.addresses[0][1]
        ready.set()
        self.loop.run_forever()

    def call(self, coro, timeout=None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self):
        self.call(self.runner.cleanup(), 60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(60)


def start_message(mode: str, agent: str, time_limit_s: float) -> dict:
    msg = {"type": "start", "mode": mode, "opponent": agent, "seed": 0, "time_limit_s": time_limit_s}
    if mode == "5v5":
        msg["allies"] = agent
    return msg


async def client_game(port: int, start: dict, until, advance=None) -> dict:
    """Plays one game through a websocket client until until(frames, elapsed) holds; returns the client's counts."""
    import aiohttp
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{port}/play/ws", max_msg_size=0) as ws:
            await ws.send_str(json.dumps(start))
            started = json.loads((await ws.receive()).data)
            if started["type"] != "started":
                raise ValueError(f"the server refused the game: {started}")
            if advance:
                advance()
            t0, frames, first, last = time.perf_counter(), 0, None, None  # first, last: (wall, game time) of frames
            while True:
                msg = json.loads((await ws.receive()).data)
                if msg["type"] == "frame":
                    frames += 1
                    last = (time.perf_counter(), msg["t"])
                    first = first or last
                if msg["type"] == "end" or until(frames, time.perf_counter() - t0):
                    break
            await ws.send_str(json.dumps({"type": "quit"}))
            return {"game": started["game"], "frames": frames, "game_time_s": last[1] - first[1],
                    "wall_s": max(1e-9, last[0] - first[0]), "frameskip": started["header"]["frameskip"]}


def step_and_send(mode: str, agent: str, steps: int, replay_dir: str) -> dict:
    from web.live_game import ManualClock
    clock = ManualClock()
    server = Server(clock, replay_dir)
    timing = {}
    try:
        async def run():
            games = server.play.games

            def until(frames, _):
                if frames >= steps:
                    entry = next(iter(games.values()), None)
                    if entry is not None:
                        timing.update(entry.game.timing())
                    return True
                return False
            return await client_game(server.port, start_message(mode, agent, 0.0), until,
                                     lambda: clock.advance(10 * 3600.0))
        counts = server.call(run())
    finally:
        server.stop()
    per_tick = (timing["step_s"] + timing["send_s"]) / counts["frameskip"]
    return {"steps": timing["steps"], "step_ms": 1000 * timing["step_s"], "send_ms": 1000 * timing["send_s"],
            "max_step_send_ms": 1000 * timing["max_step_send_s"], "per_tick_ms": 1000 * per_tick,
            "margin_1x": 1.0 / TICKS_PER_SECOND / per_tick, "margin_2x": 0.5 / TICKS_PER_SECOND / per_tick}


def real_time(mode: str, agent: str, seconds: float, replay_dir: str) -> dict:
    from web.live_game import RealClock
    server = Server(RealClock(), replay_dir)
    try:
        counts = server.call(client_game(server.port, start_message(mode, agent, 0.0), lambda f, s: s >= seconds))
    finally:
        server.stop()
    return {"held_ticks_per_s": counts["game_time_s"] * TICKS_PER_SECOND / counts["wall_s"],
            "client_frames_per_s": (counts["frames"] - 1) / counts["wall_s"]}


def page(mode: str, agent: str, seconds: float, replay_dir: str) -> dict | None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("browser", os.path.join(ROOT, "tests", "browser.py"))
    browser = importlib.util.module_from_spec(spec)  # the tests' Chromium driver, read from its file
    spec.loader.exec_module(browser)
    Browser, chromium_path = browser.Browser, browser.chromium_path

    from web.live_game import RealClock
    if chromium_path() is None:
        return None
    server = Server(RealClock(), replay_dir)
    try:
        with Browser(1400, 1000) as b:
            b.open(f"http://127.0.0.1:{server.port}/play",
                   ready="document.body && document.body.dataset.ready === 'setup'")
            fields = {k: v for k, v in start_message(mode, agent, 0.0).items() if k != "type"}
            b.evaluate(f"play.start({json.dumps(fields)})")
            deadline = time.monotonic() + 120
            while not b.evaluate("document.body.dataset.ready === 'game' && play.stats.frames > 2"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the page's game did not start: " + json.dumps(b.evaluate("play.errors")))
                time.sleep(0.05)
            counts = "[play.stats.renders, play.stats.frames, play.state.t]"
            (r0, f0, g0), t0 = b.evaluate(counts), time.perf_counter()
            time.sleep(seconds)
            (r1, f1, g1), t1 = b.evaluate(counts), time.perf_counter()
            b.evaluate("play.send({type: 'quit'})")
    finally:
        server.stop()
    return {"page_fps": (r1 - r0) / (t1 - t0), "page_frames_per_s": (f1 - f0) / (t1 - t0),
            "page_held_ticks_per_s": (g1 - g0) * TICKS_PER_SECOND / (t1 - t0)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modes", nargs="+", default=["1v1", "5v5"], choices=["1v1", "5v5"])
    p.add_argument("--agents", default="models", choices=["models", "scripted"],
                   help="the opponent (and 5v5 allies): the mode's shipped model (default) or the scripted bot")
    p.add_argument("--steps", type=int, default=600, help="env steps played flat out per mode (default 600)")
    p.add_argument("--seconds", type=float, default=10.0, help="real-time seconds per mode and part (default 10)")
    p.add_argument("--no-page", action="store_true", help="skip the page's frame rate (headless Chromium)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.seconds <= 0:
        p.error("--steps must be >= 1 and --seconds > 0")
    from policies.league.series import one_torch_thread
    one_torch_thread()
    out = {"agents": args.agents, "steps": args.steps, "seconds": args.seconds, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="bench_web_") as replay_dir:
        for mode in args.modes:
            agent = MODELS[mode] if args.agents == "models" else "scripted"
            row = {"agent": agent, **step_and_send(mode, agent, args.steps, replay_dir),
                   **real_time(mode, agent, args.seconds, replay_dir)}
            if not args.no_page:
                row.update(page(mode, agent, args.seconds, replay_dir) or {"page_fps": None})
            out[mode] = row
            print(f"{mode} vs {agent}: step {row['step_ms']:.2f} ms + send {row['send_ms']:.2f} ms per step "
                  f"(max {row['max_step_send_ms']:.1f} ms) = {row['per_tick_ms']:.3f} ms per tick: margin "
                  f"{row['margin_1x']:.1f}x at 1x, {row['margin_2x']:.1f}x at 2x; held "
                  f"{row['held_ticks_per_s']:.1f} ticks/s of 30"
                  + (f"; page {row['page_fps']:.0f} fps, {row['page_frames_per_s']:.1f} server frames/s, game held "
                     f"{row['page_held_ticks_per_s']:.1f} ticks/s"
                     if row.get("page_fps") is not None else ""), flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
