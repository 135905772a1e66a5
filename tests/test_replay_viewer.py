"""The replay viewer (app/replay.py, app/viewer/) in a real browser: headless Chromium driven over the DevTools pipe
(tests/browser.py). A scripted 5v5 game is recorded by scripts/play.py and written as a page by the app.replay CLI;
the tests read what the page drew (``window.viewer``, the DOM) and the pixels of its screenshots, and compare them
with the replay: heroes and towers where the replay puts them, in their team's colour, enemy units hidden by a team's
fog, the controls, the hero panel, the event log, and the win-probability curve of a model's replay.

Screenshots go to $OPENFIVE_SHOTS when it is set (to look at them), else to the tests' temporary directory. The
tests skip when no Chromium is installed (.ci/run installs it).
"""
from __future__ import annotations

import math
import os

import pytest
from browser import Browser, chromium_path

from moba.env.replay_file import UNIT_FIELDS, read_replay
from moba.game.teams import TEAM_NAMES

pytestmark = pytest.mark.skipif(chromium_path() is None,
                                reason="Chromium is not installed (apt-get install chromium; .ci/run installs it)")
U = {n: i for i, n in enumerate(UNIT_FIELDS)}
HERO, TOWER = "hero", "tower"
TIMES = (30.0, 85.0)  # the two moments rendered: heroes in lane, towers standing
COLOR_TOLERANCE = 8  # per channel, for antialiasing and PNG rounding
HERO_GAP = 42.0  # pixels: a hero's label (above it, ~80 pixels wide) and bars stay this far from another's centre
UNIT_GAP = 9.0  # pixels: a creep or ward this far from a building's centre does not cover it


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    out = os.environ.get("OPENFIVE_SHOTS") or str(tmp_path_factory.mktemp("shots"))
    os.makedirs(out, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A 90-second scripted 5v5 game: its replay (scripts/play.py --replay), header, records, and its page
    (python -m app.replay)."""
    from app import replay
    from scripts.play import play
    d = tmp_path_factory.mktemp("game")
    path = str(d / "game.jsonl")
    play("5v5", "scripted", "scripted", 0, time_limit_s=90.0, replay_path=path, progress=False)
    assert replay.main([path, "--out", str(d / "game.html")]) == 0
    header, records = read_replay(path)
    return header, records, "file://" + str(d / "game.html")


@pytest.fixture(scope="module")
def browser():
    with Browser(1400, 1000) as b:
        yield b


def rgb(hex_color: str) -> tuple:
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def close(a, b) -> bool:
    return all(abs(x - y) <= COLOR_TOLERANCE for x, y in zip(a, b))


def screenshot(browser, shots, name):
    from PIL import Image
    path = browser.screenshot(os.path.join(shots, name))
    return Image.open(path).convert("RGB")


def canvas_origin(browser, selector="#map"):
    return browser.evaluate(f"(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); "
                            f"return [r.left, r.top]; }})()")


def record_index(records, t):
    return max(i for i, r in enumerate(records) if r["t"] <= t + 1e-9)


def expected_pixel(u, header, side):
    """Where a unit of the replay belongs on a map canvas of `side` pixels: Radiant's corner bottom-left."""
    return u[U["x"]] / header["map_size"] * side, (1 - u[U["y"]] / header["map_size"]) * side


def isolated(d, drawn):
    """Nothing is drawn over this unit's centre: no other hero (a disc with a label and bars above it) within
    HERO_GAP pixels, and, for a building or a creep (drawn under the units that move), no unit on it."""
    def near(o):
        gap = HERO_GAP if o["type"] == HERO else 0.0 if d["type"] == HERO else UNIT_GAP
        return math.dist((d["px"], d["py"]), (o["px"], o["py"])) <= gap
    return not any(near(o) for o in drawn if o["id"] != d["id"])


@pytest.mark.parametrize("t", TIMES)
def test_heroes_and_towers_are_drawn_where_the_replay_says(browser, game, shots, t):
    header, records, url = game
    browser.open(url)
    rec = records[record_index(records, t)]
    browser.evaluate(f"viewer.seek({rec['t']})")
    drawn = browser.evaluate("viewer.drawn")
    side = browser.evaluate("document.getElementById('map').width")
    assert browser.evaluate("document.getElementById('map').dataset.time") == f"{rec['t']:.2f}"
    alive = {u[U["id"]]: u for u in rec["units"] if u[U["alive"]]}
    assert sorted(d["id"] for d in drawn) == sorted(alive)  # fog "all": every living unit, nothing else
    for d in drawn:
        u = alive[d["id"]]
        assert (d["team"], d["type"], d["hero"]) == (u[U["team"]], header["unit_types"][u[U["type"]]], u[U["hero"]])
        ex, ey = expected_pixel(u, header, side)
        assert abs(d["px"] - ex) <= 1 and abs(d["py"] - ey) <= 1, (d, ex, ey)
    image = screenshot(browser, shots, f"viewer_5v5_t{int(t)}.png")
    left, top = canvas_origin(browser)
    colors = browser.evaluate("viewer.colors")
    checked = {HERO: set(), TOWER: set()}
    for d in drawn:
        kind = {HERO: "hero", TOWER: "building"}.get(d["type"])
        if kind and isolated(d, drawn):
            pixel = image.getpixel((round(left + d["px"]), round(top + d["py"])))
            assert close(pixel, rgb(colors[kind][d["team"]])), (d, pixel)
            checked[d["type"]].add((d["id"], d["team"]))
    # heroes of both teams and towers of both teams were seen (the scripted heroes pair up in the side lanes)
    assert {team for _, team in checked[HERO]} == {0, 1} and {team for _, team in checked[TOWER]} == {0, 1}, checked
    assert len(checked[TOWER]) >= 8, checked


def visible_ids(rec, team):
    return sorted(u[U["id"]] for u in rec["units"]
                  if u[U["alive"]] and (u[U["team"]] == team or u[U["seen_by"]] & (1 << team)))


def test_the_fog_toggle_hides_the_units_a_team_does_not_see(browser, game, shots):
    header, records, url = game
    # the first record in which a living dire hero is out of Radiant's sight and a radiant hero out of Dire's
    k = next(i for i, r in enumerate(records) if r["t"] >= 20 and all(
        any(u[U["type"]] == 0 and u[U["alive"]] and u[U["team"]] == team and not u[U["seen_by"]] & (1 << (1 - team))
            for u in r["units"]) for team in (0, 1)))
    rec = records[k]
    browser.open(url)
    browser.evaluate(f"viewer.seek({rec['t']})")
    everything = browser.evaluate("viewer.drawn")
    for team, side in enumerate(TEAM_NAMES):
        browser.click_element(f"#fog-{side}")  # a real click on the button
        assert browser.evaluate("viewer.state.fog") == side
        assert browser.evaluate("document.getElementById('map').dataset.fog") == side
        assert browser.evaluate(f"document.getElementById('fog-{side}').classList.contains('on')")
        drawn = browser.evaluate("viewer.drawn")
        assert sorted(d["id"] for d in drawn) == visible_ids(rec, team)
        hidden = [d for d in everything if d["team"] != team and d["id"] not in {x["id"] for x in drawn}]
        hidden_heroes = [d for d in hidden if d["type"] == HERO]
        assert hidden_heroes  # the record was chosen so
        image = screenshot(browser, shots, f"viewer_5v5_fog_{side}.png")
        left, top = canvas_origin(browser)
        enemy_color = rgb(browser.evaluate("viewer.colors.hero")[1 - team])
        for d in hidden_heroes:
            if isolated(d, everything):
                assert not close(image.getpixel((round(left + d["px"]), round(top + d["py"]))), enemy_color), d
    browser.key("1")  # the keyboard's way back to everything
    assert browser.evaluate("viewer.state.fog") == "all"
    assert sorted(d["id"] for d in browser.evaluate("viewer.drawn")) == sorted(d["id"] for d in everything)


def test_controls_panel_and_event_log(browser, game, shots):
    header, records, url = game
    browser.open(url)
    browser.evaluate("viewer.seek(10)")
    browser.key("ArrowRight")
    assert browser.evaluate("viewer.state.t") == pytest.approx(15.0)
    browser.key("ArrowUp")
    assert browser.evaluate("viewer.state.speed") == 16
    browser.key(" ")
    assert browser.evaluate("viewer.state.playing") is True
    browser.key(" ")
    assert browser.evaluate("viewer.state.playing") is False
    browser.key("End")
    end = records[-1]
    assert browser.evaluate("viewer.state.t") == end["t"]
    # the hero panel shows the last record's statistics
    rows = browser.evaluate("[...document.querySelectorAll('#heroes tbody tr')].map(tr => "
                            "[...tr.children].map(td => td.textContent))")
    for row, h, meta in zip(rows, end["heroes"], header["heroes"]):
        slot, level, gold, kills, deaths, assists, lh, dn, items = h[:9]
        assert row[:5] == [meta["hero"], str(level), str(gold), f"{kills}/{deaths}/{assists}", f"{lh}/{dn}"]
        assert row[5] == ", ".join(header["items"][i].replace("_", " ") for i in items)
    # the event log shows kills, deaths, buildings and buybacks at first; a click on its filter adds last hits and
    # denies, and a click on an event jumps to just before it
    shown = browser.evaluate("[...document.querySelectorAll('#log li')].filter(li => li.offsetParent).length")
    browser.click_element("#filter-farm")
    farm = [e for r in records for e in r["events"] if e["type"] in ("last_hit", "deny")]
    assert farm and browser.evaluate(
        "[...document.querySelectorAll('#log li')].filter(li => li.offsetParent).length") == shown + len(farm)
    first = next(e for r in records for e in r["events"] if e["type"] in ("kill", "death", "tower", "barracks",
                                                                          "shrine", "ancient", "buyback", "last_hit",
                                                                          "deny"))
    x, y = browser.evaluate("(() => { const li = [...document.querySelectorAll('#log li')].find(li => li.offsetParent);"
                            " li.scrollIntoView({block: 'nearest'});"  # the log follows the end: scroll up to it
                            " const r = li.getBoundingClientRect(); return [r.left + 20, r.top + r.height / 2]; })()")
    browser.click(x, y)
    assert browser.evaluate("viewer.state.t") == pytest.approx(first["t"] - 2.0)
    screenshot(browser, shots, "viewer_5v5_event_click.png")


def test_a_models_replay_draws_its_win_probability(browser, tmp_path, shots):
    from test_replay_file import Decider, record_game

    from app.replay import write_page
    _, _, header, records = record_game(tmp_path / "m.jsonl", mode="1v1", time_limit_s=20.0, radiant=Decider(0))
    url = "file://" + write_page(header, records, str(tmp_path / "m.html"))
    browser.open(url)
    series = browser.evaluate("viewer.winProbability")
    assert series[1] == [] and [p for _, p in series[0]] == [0.25] * (len(records) - 1)
    browser.evaluate("viewer.selectHero(0); viewer.seek(10)")
    status = browser.evaluate("document.querySelector('#heroes tbody tr td.status').textContent")
    assert status == "win 25% attack"
    image = screenshot(browser, shots, "viewer_1v1_model.png")
    left, top = canvas_origin(browser, "#chart")
    radiant = rgb(browser.evaluate("viewer.colors.hero")[0])
    on_curve = browser.evaluate("viewer.chartPoint(5, 0.25)")
    off_curve = browser.evaluate("viewer.chartPoint(5, 0.75)")
    def column(point):  # the pixels of the chart at the point and one above and below (the line is 2 pixels)
        return [image.getpixel((round(left + point[0]), round(top + point[1]) + dy)) for dy in (-1, 0, 1)]
    assert any(close(p, radiant) for p in column(on_curve)), column(on_curve)
    assert not any(close(p, radiant) for p in column(off_curve)), column(off_curve)


def boxes_overlap(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def check_labels(labels, drawn, rec, header, side):
    """Every living hero drawn has one label, inside the map, over no other label, naming the hero and its level
    in the record's hero rows (the panel's "lvl")."""
    levels = {row[0]: row[1] for row in rec["heroes"]}  # HERO_FIELDS: slot, level, ...
    assert sorted(label["hero"] for label in labels) == sorted(d["hero"] for d in drawn if d["type"] == HERO)
    for label in labels:
        left, top, right, bottom = label["box"]
        assert 0 <= left < right <= side and 0 <= top < bottom <= side, label
        name = header["heroes"][label["hero"]]["hero"]
        assert label["level"] == levels[label["hero"]] and label["text"] == f"{name} lv{levels[label['hero']]}"
    for k, a in enumerate(labels):
        for b in labels[k + 1:]:
            assert not boxes_overlap(a["box"], b["box"]), (a, b)


def test_hero_labels_show_the_records_level_inside_the_map_and_apart(browser, game, shots):
    header, records, url = game
    browser.open(url)
    side = browser.evaluate("document.getElementById('map').width")
    for t in (0.0, 30.0, 60.0, records[-1]["t"]):  # the start: each team's heroes together in their corner
        rec = records[record_index(records, t)]
        browser.evaluate(f"viewer.seek({rec['t']})")
        check_labels(browser.evaluate("viewer.labels"), browser.evaluate("viewer.drawn"), rec, header, side)
    screenshot(browser, shots, "viewer_5v5_labels_start.png")


def test_labels_of_heroes_at_the_maps_edges_and_in_a_crowd(browser, game, tmp_path, shots):
    """Heroes moved to the map's four corners and edges, and five heroes on one spot, at level 12: every label
    inside the map, none over another, each with its hero's level 12 (not its level when the game began)."""
    import copy

    from app.replay import write_page
    header, records, _ = game
    rec = copy.deepcopy(records[record_index(records, 30.0)])
    size = header["map_size"]
    spots = [(0, 0), (size, size), (0, size), (size, 0), (size / 2, 0), (size / 2, size), (0, size / 2),
             (size, size / 2)]
    heroes = [u for u in rec["units"] if u[U["type"]] == header["unit_types"].index(HERO)]
    for k, u in enumerate(heroes):
        u[U["alive"]] = 1
        u[U["x"]], u[U["y"]] = spots[k] if k < len(spots) - 3 else (size * 0.4, size * 0.6)  # the last five
    assert sum(1 for u in heroes if (u[U["x"]], u[U["y"]]) == (size * 0.4, size * 0.6)) == 5
    for row in rec["heroes"]:
        row[1] = 12  # HERO_FIELDS' level
    rec["t"] = 0.0
    url = "file://" + write_page(header, [rec], str(tmp_path / "edges.html"))
    browser.open(url)
    side = browser.evaluate("document.getElementById('map').width")
    labels = browser.evaluate("viewer.labels")
    assert len(labels) == 10 and {label["level"] for label in labels} == {12}
    check_labels(labels, browser.evaluate("viewer.drawn"), rec, header, side)
    screenshot(browser, shots, "viewer_labels_edges_and_crowd.png")


LEGEND_KINDS = {"teams": ("radiant", "dire"), "hero": ("hero", "level"), "selected": ("selected",),
                "creep_melee": ("melee creep",), "creep_ranged": ("ranged creep",), "ward": ("ward",),
                "tower": ("tower",), "barracks": ("barracks",), "shrine": ("shrine",), "ancient": ("ancient",),
                "fountain": ("fountain",), "fogged": ("out of",), "destroyed": ("destroyed",),
                "kill_mark": ("kill",), "building_mark": ("building",)}


def test_the_legend_names_every_shape_in_its_teams_colours(browser, game, shots):
    header, records, url = game
    browser.open(url)
    legend = browser.evaluate("viewer.legend")
    assert {item["kind"]: item for item in legend}.keys() == LEGEND_KINDS.keys()
    shown = browser.evaluate("[...document.querySelectorAll('#legend .legend-item')].map(e => "
                             "[e.dataset.kind, e.textContent, e.getBoundingClientRect().height > 0])")
    assert [k for k, _, _ in shown] == [item["kind"] for item in legend] and all(v for _, _, v in shown)
    for kind, text, _ in shown:
        assert all(word in text for word in LEGEND_KINDS[kind]), (kind, text)
    colors = browser.evaluate("viewer.colors")
    for k, item in enumerate(legend):  # each swatch is drawn in the colour the map draws that shape in
        for s in item["swatches"]:
            pixel = browser.evaluate(f"Array.from([...document.querySelectorAll('#legend .legend-item')][{k}]"
                                     f".querySelector('canvas').getContext('2d')"
                                     f".getImageData({s['x']}, {s['y']}, 1, 1).data.slice(0, 3))")
            color = colors[s["color"]]
            want = color if isinstance(color, str) else color[s["team"]]
            assert close(tuple(pixel), rgb(want)), (item["kind"], s, pixel)
    screenshot(browser, shots, "viewer_5v5_legend.png")


def test_the_chart_has_a_probability_axis_and_a_click_on_it_seeks(browser, game, tmp_path, shots):
    from test_replay_file import Decider, record_game

    from app.replay import write_page
    header, records, url = game
    browser.open(url)  # no model: no axis, a line that says so
    assert browser.evaluate("viewer.chartAxis") == {"title": None, "ticks": []}
    end = records[-1]["t"]
    x, _ = browser.evaluate(f"viewer.chartPoint({end / 2}, 0.5)")
    left, top = canvas_origin(browser, "#chart")
    browser.click(left + x, top + 50)
    assert browser.evaluate("viewer.state.t") == pytest.approx(end / 2, abs=end / 200)
    _, _, header, records = record_game(tmp_path / "m.jsonl", mode="1v1", time_limit_s=20.0, radiant=Decider(0))
    browser.open("file://" + write_page(header, records, str(tmp_path / "m.html")))
    axis = browser.evaluate("viewer.chartAxis")
    assert axis["title"] == "P(radiant wins)"  # a title, without a value
    assert [tick["text"] for tick in axis["ticks"]] == ["1", "0.5", "0"]
    image = screenshot(browser, shots, "viewer_1v1_chart_axis.png")
    left, top = canvas_origin(browser, "#chart")
    background = image.getpixel((round(left + 2), round(top + 40)))
    for tick in axis["ticks"]:  # each value at its height, in the gutter left of the time axis
        px, py = browser.evaluate(f"viewer.chartPoint(0, {tick['p']})")
        assert tick["y"] == py and tick["x"] < px
        row = [image.getpixel((round(left + x), round(top + py) + dy)) for x in range(px - 30, px - 2)
               for dy in (-2, 0, 2)]
        assert any(not close(p, background) for p in row), tick  # something is written there
