"""The play server (web/server.py, web/live_game.py, web/protocol.py) through its websocket, with scripted input: an
aiohttp test server whose games are paced by a ManualClock, so that a test plays exactly as many game seconds as it
advances the clock, as fast as the machine allows."""
from __future__ import annotations

import asyncio
import gc
import json
import math
import weakref

import pytest
from aiohttp.test_utils import TestClient, TestServer

from moba.env.replay_file import UNIT_FIELDS, read_replay
from moba.game.constants import BUILDING_TYPES
from web.live_game import ManualClock, _offsets
from web.protocol import ORDER_ACTIONS, SPEEDS
from web.server import PLAY, add_play_routes, make_app

U = {n: i for i, n in enumerate(UNIT_FIELDS)}
HERO_TYPE = 0
RECEIVE_TIMEOUT_S = 60.0
STEP_S = 4 / 30  # one env step: 4 engine ticks at 30 ticks per game second


class Page:
    """One scripted page on the play socket."""

    def __init__(self, ws, clock):
        self.ws, self.clock = ws, clock
        self.seen: list[dict] = []

    async def send(self, **msg):
        await self.ws.send_str(json.dumps(msg))

    async def receive(self, kind: str, until=None) -> dict:
        """The next message of type `kind` (for which until(msg) holds), keeping every message seen."""
        while True:
            msg = await asyncio.wait_for(self.ws.receive_json(), RECEIVE_TIMEOUT_S)
            self.seen.append(msg)
            if msg["type"] == kind and (until is None or until(msg)):
                return msg

    async def play(self, seconds: float) -> dict:
        """Advances the clock `seconds` and returns the last frame that brings (for a game started at clock 0 and
        played at speed 1 without a pause: a step at clock 0, then one every STEP_S)."""
        self.clock.advance(seconds)
        last = (math.floor(self.clock.t / STEP_S + 1e-6) + 1) * STEP_S
        return await self.receive("frame", lambda m: m["t"] >= last - 1e-3)

    async def order(self, **msg) -> dict:
        """Sends an order and plays the step that judges it; returns the server's note on it."""
        await self.send(type="order", **msg)
        await self.send(type="speed", speed=1)  # its answer: the server has read the order
        await self.receive("state")
        n = len(self.seen)
        await self.play(STEP_S)
        return next(m for m in self.seen[n:] if m["type"] == "order")

    async def error(self, **msg) -> dict:
        await self.send(**msg)
        return await self.receive("error")


def run(test, tmp_path, grace_s=30.0):
    """Runs `test(client, server, clock)` against a fresh app."""
    async def main():
        clock, logs = ManualClock(), []
        app = make_app(clock=clock, replay_dir=str(tmp_path / "replays"), grace_s=grace_s, log=logs.append,
                       route_groups=[add_play_routes])
        async with TestClient(TestServer(app)) as client:
            await test(client, app[PLAY], clock)
        return logs
    return asyncio.run(main())


async def open_page(client, clock) -> Page:
    return Page(await client.ws_connect("/play/ws"), clock)


async def start(page: Page, **fields) -> dict:
    await page.send(type="start", **{"mode": "1v1", "opponent": "scripted_1", "seed": 0, "time_limit_s": 300,
                                     **fields})
    return await page.receive("started")


def my_hero(frame: dict, slot: int) -> list:
    return next(u for u in frame["units"] if u[U["type"]] == HERO_TYPE and u[U["hero"]] == slot)


def test_the_play_page_and_its_static_files_are_served(tmp_path):
    async def test(client, server, clock):
        page = await client.get("/play")
        assert page.status == 200 and "play.js" in await page.text()
        for name in ("play.js", "play.css", "map.js"):
            assert (await client.get(f"/static/{name}")).status == 200
        assert (await client.get("/", allow_redirects=False)).headers["Location"] == "/play"
    run(test, tmp_path)


def test_a_game_starts_against_an_agent_by_name_and_an_order_moves_the_hero(tmp_path):
    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page)
        you = started["you"]
        assert (you["side"], you["slot"], you["hero"]) == ("radiant", 0, "blademaster")
        assert started["header"]["agents"] == {"radiant": "human", "dire": "scripted_1"}
        assert list(server.games) == [started["game"]]
        x0, y0 = my_hero(started["frame"], 0)[U["x"]: U["y"] + 1]
        target = (x0 + 2000.0, y0 + 1000.0)
        note = await page.order(action="move", x=target[0], y=target[1])
        frame = await page.play(3.0)
        assert (note["action"], note["status"]) == ("move", "accepted")
        x1, y1 = my_hero(frame, 0)[U["x"]: U["y"] + 1]
        moved, wanted = (x1 - x0, y1 - y0), (target[0] - x0, target[1] - y0)
        assert math.hypot(*moved) > 500  # 3 s at a hero's move speed (~300 units/s)
        cosine = (moved[0] * wanted[0] + moved[1] * wanted[1]) / math.hypot(*moved) / math.hypot(*wanted)
        assert cosine > 0.95, (moved, wanted)
    run(test, tmp_path)


def test_offsets_point_the_move_along_the_click_within_the_action_spaces_reach():
    assert _offsets(0.0, 0.0, 200.0) == (4, 4, True)
    assert _offsets(3000.0, 1500.0, 200.0) == (8, 6, False)  # 800 x 400: the direction kept, shortened to reach
    assert _offsets(-310.0, 90.0, 200.0) == (2, 4, True)
    assert _offsets(-5000.0, -5000.0, 150.0) == (0, 0, False)


def test_an_illegal_order_is_refused_with_its_reason_and_the_game_goes_on(tmp_path):
    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page)
        abilities = started["you"]["actions"]
        assert abilities["ability_2"]["name"] == "healing_ward"
        first = await page.play(1.0)
        assert "ability_2" not in first["me"]["legal"] and first["me"]["ability_levels"][1] == 0
        refused = await page.order(action="ability_2")  # not learned at level 1: masked
        assert refused["status"] == "refused" and "not learned" in refused["reason"]
        refused = await page.order(action="attack", unit=10 ** 6)  # no such unit in sight
        assert refused["status"] == "refused" and "not in your team's sight" in refused["reason"]
        refused = await page.order(action="buyback")  # the hero is alive
        assert refused["status"] == "refused" and "alive" in refused["reason"]
        refused = await page.order(action="ability_4", x=4000, y=4000)  # a unit-target ultimate, not learned
        assert refused["status"] == "refused"
        later = await page.play(2.0)
        assert later["t"] >= first["t"] + 2.0 - 1e-3
        # the same action space as an agent's: ability_1 (learned at level 1) is cast through its mask
        assert "ability_1" in later["me"]["legal"]
        cast = await page.order(action="ability_1")
        assert cast["status"] == "accepted"
        frame = await page.play(0.5)
        assert frame["me"]["cooldowns"][0] > 0
        assert any(e["type"] == "cast" and e["hero"] == 0 and e["ability"] == "blade_fury"
                   for m in page.seen if m["type"] == "frame" for e in m["events"])
    run(test, tmp_path)


def test_a_short_game_ends_with_a_winner_and_writes_a_replay(tmp_path):
    """The human does nothing; the scripted bot takes the towers and the crystal (about 6.5 game minutes)."""
    from app import replay

    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page, opponent="scripted", time_limit_s=600)
        clock.advance(600.0)
        end = await page.receive("end")
        assert (end["winner"], end["you"], end["truncated"]) == ("dire", "lost", False)
        assert end["game_time_s"] < 600 and end["summary"]["winner"] == "dire"
        assert end["replay"] == started["replay"] and end["view"] == f"python -m app.replay {end['replay']}"
        assert server.games == {}
        header, records = read_replay(end["replay"])
        assert header["agents"] == {"radiant": "human", "dire": "scripted"} and header["seed"] == 0
        assert records[-1]["end"] == {"winner": "dire", "truncated": False}
        assert records[-1]["t"] == pytest.approx(end["game_time_s"], abs=0.01)
        assert replay.main([end["replay"], "--out", str(tmp_path / "game.html")]) == 0
        # the frames showed only what the human's team saw
        frames = [m for m in page.seen if m["type"] == "frame"]
        for frame in frames[::50]:
            for u in frame["units"]:
                assert u[U["team"]] == 0 or u[U["seen_by"]] & 1 or u[U["type"]] in BUILDING_TYPES, u
            assert all(row[2] is None for row in frame["heroes"][1:])  # the enemy's gold
        await page.send(type="order", action="stop")  # after the end: no game on this page
        assert (await page.receive("error"))["field"] == "type"
    run(test, tmp_path)


def test_pause_resume_and_speed(tmp_path):
    async def test(client, server, clock):
        page = await open_page(client, clock)
        await start(page, mode="5v5", allies="scripted_1", opponent="scripted_1")
        frame = await page.play(1.0)
        assert len(frame["heroes"]) == 10
        await page.send(type="pause")
        assert (await page.receive("state")) == {"type": "state", "paused": True, "speed": 1.0}
        t = max(m["t"] for m in page.seen if m["type"] == "frame")
        clock.advance(5.0)
        await asyncio.sleep(0.2)
        await page.send(type="speed", speed=2)
        assert (await page.receive("state")) == {"type": "state", "paused": True, "speed": 2.0}
        assert max(m["t"] for m in page.seen if m["type"] == "frame") == t  # nothing moved while paused
        await page.send(type="resume")
        await page.receive("state")
        clock.advance(2.0)  # 2 clock seconds at 2x: 4 game seconds
        frame = await page.receive("frame", lambda m: m["t"] >= t + 4.0 - STEP_S)
        assert frame["t"] == pytest.approx(t + 4.0, abs=2 * STEP_S)
    run(test, tmp_path)


def test_bad_inputs_get_a_message_naming_the_field_and_another_game_goes_on(tmp_path):
    async def test(client, server, clock):
        a = await open_page(client, clock)
        game = (await start(a))["game"]
        b = await open_page(client, clock)
        await b.ws.send_str("{not json")
        assert (await b.receive("error"))["field"] is None
        await b.ws.send_str("[1, 2]")
        assert "JSON object" in (await b.receive("error"))["message"]
        await b.ws.send_bytes(b"\x00\x01")
        assert "text" in (await b.receive("error"))["message"]
        e = await b.error(type="fly")
        assert e["field"] == "type" and "'start'" in e["message"] and "'order'" in e["message"]
        e = await b.error(type="order", action="move", x=1, y=2)  # out of order: no game yet
        assert e["field"] == "type" and "'start'" in e["message"]
        e = await b.error(type="start", colour="red")
        assert e["field"] == "colour" and "'opponent'" in e["message"]
        e = await b.error(type="start", opponent="grandmaster")
        assert e["field"] == "opponent" and "scripted_1" in e["message"] and "model:PATH" in e["message"]
        e = await b.error(type="start", mode="3v3")
        assert e["field"] == "mode" and "'5v5'" in e["message"]
        e = await b.error(type="start", allies="scripted")  # 1v1 has no allies
        assert e["field"] == "allies"
        e = await b.error(type="start", hero="pikachu")
        assert e["field"] == "hero" and "blademaster" in e["message"]
        e = await b.error(type="join", game="nosuchgame")
        assert e["field"] == "game" and "start a new game" in e["message"]
        e = await b.error(type="join", game=game)  # a second tab on a's game
        assert e["field"] == "game" and "another tab" in e["message"]
        e = await b.error(type="speed", speed=3)
        assert e["field"] == "speed" and str(list(SPEEDS)) in e["message"]
        await start(b)
        e = await b.error(type="start")  # a second start on one page
        assert e["field"] == "type" and "already plays" in e["message"]
        e = await b.error(type="order", action="teleport")
        assert e["field"] == "action" and all(f"'{n}'" in e["message"] for n in ORDER_ACTIONS)
        e = await b.error(type="order", action="move", x=100)
        assert e["field"] == "y"
        e = await b.error(type="order", action="move", x=-5, y=10)
        assert e["field"] == "x" and "[0, 8000]" in e["message"]
        e = await b.error(type="order", action="attack", unit="the tower")
        assert e["field"] == "unit"
        # a's game never noticed: it plays on, and its page got no error
        frame = await a.play(2.0)
        assert frame["t"] >= 2.0 - STEP_S
        assert not [m for m in a.seen if m["type"] == "error"]
        assert len(server.games) == 2
    run(test, tmp_path)


def test_a_games_memory_is_freed_when_its_page_goes_away(tmp_path):
    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page)
        await page.play(1.0)
        game = server.games[started["game"]].game
        refs = [weakref.ref(game), weakref.ref(game.env), weakref.ref(game.env.game)]
        del game
        await page.ws.close()
        for _ in range(100):  # the grace of 0.2 s, then the game is dropped
            await asyncio.sleep(0.05)
            if not server.games:
                break
        assert server.games == {}
        for _ in range(40):  # the game's task may still be unwinding its cancellation for a few loop turns
            gc.collect()
            if all(r() is None for r in refs):
                break
            await asyncio.sleep(0.05)
        assert [r() for r in refs] == [None, None, None]
        header, records = read_replay(started["replay"])  # kept, unfinished
        assert "end" not in records[-1] and records[-1]["t"] >= 1.0
    logs = run(test, tmp_path, grace_s=0.2)
    assert any("page went away" in line for line in logs) and any("stopped" in line for line in logs)


def test_a_reloaded_page_takes_its_game_back_paused(tmp_path):
    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page)
        t = (await page.play(1.0))["t"]
        await page.ws.close()
        await asyncio.sleep(0.1)
        again = await open_page(client, clock)
        await again.send(type="join", game=started["game"])
        joined = await again.receive("started")
        assert joined["game"] == started["game"] and joined["paused"] is True and joined["frame"]["t"] == t
        await again.send(type="resume")
        await again.receive("state")
        frame = await again.play(1.0)
        assert frame["t"] > t
        await again.send(type="quit")
        end = await again.receive("end")
        assert end["you"] == "quit" and server.games == {}
        assert read_replay(end["replay"])[1][-1]["t"] >= 1.0
    run(test, tmp_path)


def test_the_cli_prints_its_address_serves_the_page_and_stops_on_ctrl_c(tmp_path):
    """python -m app.web: its address on stdout (and a JSON line), the page at it, a clean stop on SIGINT, and a port
    in use refused with an error line naming --port."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    cmd = [sys.executable, "-m", "app.web", "--port", "0", "--replay-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        info = json.loads(proc.stdout.readline())
        assert info["url"] in first and info["url"].endswith("/play")
        with urllib.request.urlopen(f"http://127.0.0.1:{info['port']}/play", timeout=30) as page:
            assert page.status == 200
        busy = subprocess.run([*cmd[:-4], "--port", str(info["port"])], cwd=root, env=env, capture_output=True,
                              text=True, timeout=120)
        assert busy.returncode == 2 and busy.stderr.startswith("error: --host 127.0.0.1 --port")
        assert "Traceback" not in busy.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert out.strip().endswith("openfive web server stopped")


def test_an_attack_order_on_an_enemy_creep_is_the_attack_action_on_its_row_of_the_unit_table(tmp_path):
    from moba.env.actions import A_ATTACK
    from moba.game.constants import UT_CREEP_MELEE, UT_CREEP_RANGED
    from moba.game.state import H_UNIT, I_ORDER, I_TARGET, I_UID, ORDER_ATTACK

    async def test(client, server, clock):
        page = await open_page(client, clock)
        started = await start(page)
        game = server.games[started["game"]].game
        assert (await page.order(action="move", x=3600.0, y=3600.0))["status"] == "accepted"  # to the mid lane
        creeps = []
        while not creeps:  # until a dire creep is in sight within the attack filter's radius (1500)
            frame = await page.play(1.0)
            assert frame["t"] < 90, "no dire creep near the hero in the first 90 s"
            x, y = my_hero(frame, 0)[U["x"]: U["y"] + 1]
            creeps = [u for u in frame["units"] if u[U["team"]] == 1 and u[U["type"]] in (
                UT_CREEP_MELEE, UT_CREEP_RANGED) and math.dist((x, y), u[U["x"]: U["y"] + 1]) < 1000]
        creep = max(creeps, key=lambda u: u[U["hp"]])  # the healthiest: alive at the next step
        note = await page.order(action="attack", unit=creep[U["id"]])
        assert note["status"] == "accepted"
        act = game.human.last_action  # the step's action: the attack on the creep's row of the unit table
        assert act["primary"] == A_ATTACK
        s = game.env.game.s
        row = game.env.encoder.slot_units[0][act["target_unit"]]
        assert s.ui[row, I_UID] == creep[U["id"]]
        unit = s.hi[0, H_UNIT]
        assert s.ui[unit, I_ORDER] == ORDER_ATTACK and s.ui[unit, I_TARGET] == row  # the engine's order
    run(test, tmp_path)
