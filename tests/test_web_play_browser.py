"""The play page (web/static/play.*) in headless Chromium, driven over the DevTools pipe (tests/browser.py) against a
real server (web/server.py) on a free port, whose games are paced by a ManualClock the test advances: the page is
started from its form, a right-click on the map makes the human's hero move there, a key casts an ability (and one
not learned yet is shown as refused), and the game, played on to its end, shows its winner and writes a replay.

Screenshots go to $OPENFIVE_SHOTS when it is set, else to the tests' temporary directory. The tests skip when no
Chromium is installed (.ci/run installs it).
"""
from __future__ import annotations

import asyncio
import math
import os
import threading
import time

import pytest
from browser import Browser, chromium_path

from moba.env.replay_file import UNIT_FIELDS, read_replay

pytestmark = pytest.mark.skipif(chromium_path() is None,
                                reason="Chromium is not installed (apt-get install chromium; .ci/run installs it)")
U = {n: i for i, n in enumerate(UNIT_FIELDS)}
WAIT_S = 60.0


class ServerThread:
    """web.server's app on a free port, in a thread with its own event loop, paced by a ManualClock."""

    def __init__(self, replay_dir: str):
        from web.live_game import ManualClock
        self.clock = ManualClock()
        self.replay_dir = replay_dir
        self.loop = asyncio.new_event_loop()
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.started.wait(30), "the server did not start"

    def _run(self):
        from aiohttp import web

        from web.server import add_play_routes, make_app
        asyncio.set_event_loop(self.loop)
        self.runner = web.AppRunner(make_app(clock=self.clock, replay_dir=self.replay_dir, log=lambda line: None,
                                                   route_groups=[add_play_routes]),
                                    access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}/play"
        self.started.set()
        self.loop.run_forever()

    def advance(self, seconds: float):
        self.clock.advance_threadsafe(self.loop, seconds)

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ServerThread(str(tmp_path_factory.mktemp("replays")))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    out = os.environ.get("OPENFIVE_SHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(out, exist_ok=True)
    return out


def wait_for(browser, expression: str, what: str, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while True:
        value = browser.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout_s} s ({expression})")
        time.sleep(0.05)


def play_for(browser, server, seconds: float, step: float = 0.25):
    """Advances the game `seconds` of clock, a little at a time, and waits for the page to show it."""
    t = browser.evaluate("play.state.t")
    for _ in range(int(round(seconds / step))):
        server.advance(step)
        time.sleep(0.02)
    wait_for(browser, f"play.state.t >= {t + seconds - 0.14}", f"the page at game time {t + seconds}")


def my_hero(browser) -> list:
    return browser.evaluate("play.frame.units.find(u => u[2] === 0 && u[3] === play.you.slot)")


def right_click(browser, x: float, y: float):
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "right", "clickCount": 1},
                     session=True)


def test_play_a_game_in_the_page(server, shots):
    with Browser(1400, 1000) as b:
        b.open(server.url, ready="document.body && document.body.dataset.ready === 'setup'")
        # the form: 1v1 against the scripted bot, a short time limit, seed 0; a real click on start
        b.evaluate("document.getElementById('opponent').value = 'scripted';"
                   "document.getElementById('minutes').value = '10';"
                   "document.getElementById('seed').value = '0'")
        b.click_element("#start")
        wait_for(b, "document.body.dataset.ready === 'game' && play.frame !== null", "the game's first frame")
        you = b.evaluate("play.you")
        assert (you["hero"], you["side"]) == ("blademaster", "radiant")
        assert b.evaluate("location.search").startswith("?game=")
        assert b.evaluate("document.querySelectorAll('#heroes tbody tr').length") == 2
        play_for(b, server, 0.5)
        b.screenshot(os.path.join(shots, "play_1v1_start.png"))

        # a right-click on the map, up and right of the hero: it walks there
        hero = my_hero(b)
        x0, y0 = hero[U["x"]], hero[U["y"]]
        target = (x0 + 900.0, y0 + 600.0)
        cx, cy = b.evaluate(f"play.toClient({target[0]}, {target[1]})")
        right_click(b, cx, cy)
        play_for(b, server, 3.0)
        assert any(n["action"] == "move" and n["status"] == "accepted" for n in b.evaluate("play.notes"))
        hero = my_hero(b)
        moved = (hero[U["x"]] - x0, hero[U["y"]] - y0)
        wanted = (target[0] - x0, target[1] - y0)
        assert math.hypot(*moved) > 500, moved
        assert (moved[0] * wanted[0] + moved[1] * wanted[1]) / math.hypot(*moved) / math.hypot(*wanted) > 0.95
        b.screenshot(os.path.join(shots, "play_1v1_moved.png"))

        # W: healing_ward, not learned at level 1: shown as refused; Q: blade_fury, cast through the same masks
        b.key("w")
        play_for(b, server, 0.5)
        refused = [n for n in b.evaluate("play.notes") if n["action"] == "ability_2"]
        assert refused and refused[-1]["status"] == "refused" and "not learned" in refused[-1]["reason"]
        line = b.evaluate("document.getElementById('order').textContent")
        assert "refused" in line and "not learned" in line
        b.key("q")
        play_for(b, server, 0.5)
        assert any(n["action"] == "ability_1" and n["status"] == "accepted" for n in b.evaluate("play.notes"))
        assert b.evaluate("play.frame.me.cooldowns[0]") > 0
        assert any(e["type"] == "cast" and e["hero"] == you["slot"] and e["ability"] == "blade_fury"
                   for e in b.evaluate("play.events"))
        assert b.evaluate("play.stats.renders") > b.evaluate("play.stats.frames") > 0
        b.screenshot(os.path.join(shots, "play_1v1_cast.png"))

        # the rest of the game: the human stands still and the scripted bot takes the crystal (about 6.5 minutes)
        server.advance(600.0)
        wait_for(b, "document.body.dataset.ready === 'end'", "the end of the game", timeout_s=120)
        end = b.evaluate("play.end")
        assert (end["winner"], end["you"]) == ("dire", "lost")
        assert b.evaluate("document.getElementById('end-title').textContent") == "You lost: dire wins"
        assert b.evaluate("document.getElementById('end').hidden") is False
        assert b.evaluate("document.querySelectorAll('#summary tbody tr').length") == 2
        assert b.evaluate("document.getElementById('end-replay').textContent") == end["replay"]
        header, records = read_replay(end["replay"])
        assert header["agents"] == {"radiant": "human", "dire": "scripted"}
        assert records[-1]["end"] == {"winner": "dire", "truncated": False}
        # what the human did is in the replay: the cast of blade_fury by slot 0
        assert any(e["type"] == "cast" and e["hero"] == 0 for r in records for e in r["events"])
        b.screenshot(os.path.join(shots, "play_1v1_end.png"))
