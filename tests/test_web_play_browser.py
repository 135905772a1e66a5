"""The play page (web/static/play.*) in headless Chromium, driven over the DevTools pipe (tests/browser.py) against a
real server (web/server.py) on a free port, whose games are paced by a ManualClock the test advances: the page is
started from its form, a right-click on the map makes the human's hero move there, a key casts an ability (and one
not learned yet is shown as refused), and the game, played on to its end, shows its winner and writes a replay; a
left-click on a point ability's button then one on the map casts it there. The server runs in a thread of its own
(tests/web_app_thread.py).

Screenshots go to $OPENFIVE_SHOTS when it is set, else to the tests' temporary directory. The tests skip when no
Chromium is installed (.ci/run installs it).
"""
from __future__ import annotations

import math
import os
import time

import pytest
from browser import Browser, chromium_path
from web_app_thread import AppThread

from moba.env.replay_file import UNIT_FIELDS, read_replay
from moba.game.abilities import TT_POINT
from moba.game.constants import DEFAULT_FRAMESKIP, FOUNTAIN_HEAL_FRAC, TICKS_PER_SECOND, UT_HERO
from moba.game.heroes import HERO_INDEX, HEROES

pytestmark = pytest.mark.skipif(chromium_path() is None,
                                reason="Chromium is not installed (apt-get install chromium; .ci/run installs it)")
U = {n: i for i, n in enumerate(UNIT_FIELDS)}
WAIT_S = 60.0
STEP_S = DEFAULT_FRAMESKIP / TICKS_PER_SECOND  # one decision of every hero: the game time between two frames
CASTER = "frost_mage"  # ability 1, ice_lance: a point ability learned at level 1


class ManualPlayServer(AppThread):
    """web.server's play routes (tests/web_app_thread.py), their games paced by a ManualClock the test advances."""

    def __init__(self, replay_dir: str):
        from web.live_game import ManualClock
        from web.server import add_play_routes, make_app
        self.clock = ManualClock()
        super().__init__(lambda: make_app(clock=self.clock, replay_dir=replay_dir, log=lambda line: None,
                                          route_groups=[add_play_routes]))
        self.url = f"{self.base_url}/play"

    def advance(self, seconds: float):
        self.clock.advance_threadsafe(self.loop, seconds)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ManualPlayServer(str(tmp_path_factory.mktemp("replays")))
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


def wait_for_game(browser):
    """Waits for the game's first frame, then for its first step's: the game's loop takes that step at once, on the
    clock's time then, so the clock's advances from here on all count (one before it would be lost)."""
    wait_for(browser, "document.body.dataset.ready === 'game' && play.frame !== null", "the game's first frame")
    wait_for(browser, "play.state.t > 0", "the game's first step")


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
        wait_for_game(b)
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


def test_an_ability_then_a_left_click_on_its_target_casts_it(server, shots):
    """frost_mage's ability 1, ice_lance, is a point ability learned at level 1 (moba/game/heroes.py) with full mana at
    the fountain: a left-click on its button arms it (nothing is cast yet), a left-click on the map casts it there."""
    hero = HEROES[HERO_INDEX[CASTER]]
    lance = hero.abilities[0]
    target_offset = (500.0, 300.0)  # map units from the hero: within ice_lance's cast range
    assert (lance.name, lance.target_type) == ("ice_lance", TT_POINT)
    assert math.hypot(*target_offset) < lance.cast_range[0]
    with Browser(1400, 1000) as b:
        b.open(server.url, ready="document.body && document.body.dataset.ready === 'setup'")
        b.evaluate(f"play.start({{mode: '1v1', side: 'radiant', hero: '{CASTER}', opponent: 'noop', "
                   f"time_limit_s: 600, seed: 0}}); true")
        wait_for_game(b)
        you = b.evaluate("play.you")
        assert you["hero"] == CASTER and you["actions"]["ability_1"]["target"] == "point"
        # every message the page sends, kept for the test
        b.evaluate("window.sent = []; (() => { const send = WebSocket.prototype.send;"
                   " WebSocket.prototype.send = function (d) { window.sent.push(JSON.parse(d));"
                   " return send.call(this, d); }; })(); true")
        play_for(b, server, 0.5)
        me = b.evaluate("play.frame.me")
        assert "ability_1" in me["legal"] and me["cooldowns"][0] == 0 and me["ability_levels"][0] == 1
        button = "#bar button[data-action='ability_1']"
        assert b.evaluate(f"document.querySelector(\"{button}\").classList.contains('legal')")

        # a left-click on the ability's button: armed, waiting for its target; the game goes on without a cast
        b.click_element(button)
        assert b.evaluate("play.state.armed") == "ability_1"
        assert b.evaluate(f"document.querySelector(\"{button}\").classList.contains('armed')")
        play_for(b, server, 0.5)
        assert b.evaluate("play.state.armed") == "ability_1"
        assert b.evaluate("play.frame.me.cooldowns[0]") == 0
        assert not [m for m in b.evaluate("window.sent") if m["type"] == "order"]
        b.screenshot(os.path.join(shots, "play_1v1_armed.png"))

        # a left-click on the map: the order goes with that point, the hero casts ice_lance
        mine = my_hero(b)
        mana0, max_mana = mine[U["mana"]], mine[U["max_mana"]]
        target = (mine[U["x"]] + target_offset[0], mine[U["y"]] + target_offset[1])
        cx, cy = b.evaluate(f"play.toClient({target[0]}, {target[1]})")
        b.click(cx, cy)
        assert b.evaluate("play.state.armed") is None
        orders = [m for m in b.evaluate("window.sent") if m["type"] == "order"]
        assert [m["action"] for m in orders] == ["ability_1"]
        units_per_px = b.evaluate("play.state.span") / b.evaluate("document.getElementById('view').clientWidth")
        assert abs(orders[0]["x"] - target[0]) <= units_per_px and abs(orders[0]["y"] - target[1]) <= units_per_px
        play_for(b, server, 0.5)
        notes = [n for n in b.evaluate("play.notes") if n["action"] == "ability_1"]
        assert [n["status"] for n in notes] == ["accepted"]
        casts = [e for e in b.evaluate("play.events") if e["type"] == "cast" and e["hero"] == you["slot"]]
        assert [e["ability"] for e in casts] == ["ice_lance"]
        # its cooldown started at the cast, and its mana went (the fountain gives some back meanwhile)
        frame = b.evaluate("play.frame")  # one frame: the game may still be taking the clock's last steps
        since = frame["t"] - casts[0]["t"]
        assert frame["me"]["cooldowns"][0] == pytest.approx(lance.cooldown[0] - since, abs=STEP_S)
        regen = FOUNTAIN_HEAL_FRAC * max_mana + hero.mana_regen  # per second, at the fountain
        mine = next(u for u in frame["units"] if u[U["type"]] == UT_HERO and u[U["hero"]] == you["slot"])
        spent = mana0 - mine[U["mana"]]  # the frames' mana is rounded: 1 either way
        assert lance.mana[0] - regen * (since + STEP_S) - 1 <= spent <= lance.mana[0] - regen * since + 1
        b.screenshot(os.path.join(shots, "play_1v1_cast_on_point.png"))

        # the replay holds the cast: its record comes at the next whole game second (moba/env/replay_file.py's
        # every_s); then quit (a real click) and read it
        play_for(b, server, 1.0)
        b.click_element("#quit")
        wait_for(b, "document.body.dataset.ready === 'end'", "the end of the game")
        end = b.evaluate("play.end")
        assert end["you"] == "quit"
        header, records = read_replay(end["replay"])
        assert header["agents"] == {"radiant": "human", "dire": "noop"}
        assert [e["ability"] for r in records for e in r["events"]
                if e["type"] == "cast" and e["hero"] == you["slot"]] == ["ice_lance"]
