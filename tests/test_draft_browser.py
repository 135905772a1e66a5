"""The draft page (web/draft.py, web/static/draft.*) in headless Chromium (tests/browser.py): the draft routes served
on a test aiohttp application of their own (tests/web_app_thread.py) with a hand-checked 2v2 table
(tests/test_draft.py), a real mouse click for each of the user's picks; the page's recommendation is compared with the
table's minimax, the drafter's picks with minimax's, and the draft completes both teams. The tests skip when no
Chromium is installed."""
from __future__ import annotations

import time

import pytest
from browser import Browser, chromium_path
from test_draft import TINY_ORDER, TINY_POOL, tiny_table
from web_app_thread import AppThread

from policies.draft.minimax import DIRE, RADIANT, Draft

pytestmark = pytest.mark.skipif(chromium_path() is None,
                                reason="Chromium is not installed (apt-get install chromium; .ci/run installs it)")
WAIT_S = 30.0
CALIBRATION = {"measured": "2026-11-26", "games": 3, "opponents": {"self": 3}, "time_limit_s": 300.0,
               "time_limit_outcome": "objective", "draws_left_out": 0, "record_every_s": 1.0,
               "draft_score": {"n": 3, "brier": 0.2501, "brier_base_rate": 0.2222, "ece": 0.1667,
                               "prob_range": [0.4999, 0.5001],
                               "bins": [{"lo": 0.4, "hi": 0.5, "count": 3, "mean_prob": 0.5, "win_rate": 0.3333}]}}


def draft_app(service):
    """The draft routes on an aiohttp app of their own."""
    from aiohttp import web

    from web.draft import add_draft_routes
    app = web.Application()
    add_draft_routes(app, service)
    return app


@pytest.fixture(scope="module")
def server():
    from web.draft import DraftService
    service = DraftService.fixed(TINY_POOL, *tiny_table(), order=TINY_ORDER, label="the hand-checked table",
                                 calibration=CALIBRATION)
    s = AppThread(lambda: draft_app(service))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser():
    with Browser(1200, 900) as b:
        yield b


def wait_for(browser, expression: str, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while not browser.evaluate(f"Boolean({expression})"):
        assert time.monotonic() < deadline, f"not true after {timeout_s} s: {expression}"
        time.sleep(0.05)
    return browser.evaluate(expression)


def user_turn(browser, side: str):
    """Waits until the page offers the user (`side`) a pick; returns the page's state."""
    wait_for(browser, f"window.draft.state && !window.draft.busy && (window.draft.state.complete || "
                      f"window.draft.state.on_turn === '{side}')")
    return browser.evaluate("window.draft.state")


def shown_recommendation(browser) -> str:
    """The hero the page marks as recommended (the button with the star), and its text says the same."""
    heroes = browser.evaluate("[...document.querySelectorAll('#options button.recommended')].map(b => b.dataset.hero)")
    assert len(heroes) == 1
    assert browser.evaluate("document.getElementById('recommended').textContent") == heroes[0]
    return heroes[0]


def start_draft(browser, server, user_side: str, first: str):
    browser.open(f"{server.base_url}/draft")
    browser.evaluate(f"document.getElementById('user-side').value = '{user_side}'; "
                     f"document.getElementById('first').value = '{first}'; "
                     f"document.getElementById('new-draft').click(); true")


def test_a_draft_completes_both_teams_with_the_minimax_picks(browser, server):
    minimax = Draft(TINY_POOL, *tiny_table(), first=RADIANT, order=TINY_ORDER)
    start_draft(browser, server, RADIANT, RADIANT)
    picks = []
    state = user_turn(browser, RADIANT)
    expected = minimax.state(picks)
    assert state["recommended"] == expected["recommended"] == "b"  # 0.45, by hand (tests/test_draft.py)
    assert shown_recommendation(browser) == "b"
    shown = browser.evaluate("Object.fromEntries([...document.querySelectorAll('#options button')]"
                             ".map(b => [b.dataset.hero, b.querySelector('.p').textContent]))")
    assert shown == {h: f"you win {100 * v:.4f}%" for h, v in expected["options"].items()}
    assert browser.evaluate("document.getElementById('value-number').textContent") == "45.0000%"

    browser.click_element("#options button[data-hero='b']")  # the user's pick: a real click
    picks.append("b")
    state = user_turn(browser, RADIANT)  # the drafter (Dire) picks twice, by minimax
    for turn in (1, 2):
        drafter = minimax.state(picks)["recommended"]
        assert state["dire"][turn - 1] == drafter
        picks.append(drafter)
    assert picks == ["b", "a", "c"] and state["on_turn"] == RADIANT
    assert shown_recommendation(browser) == minimax.state(picks)["recommended"] == "d"
    browser.click_element("#options button[data-hero='d']")
    state = wait_for(browser, "window.draft.state && window.draft.state.complete && window.draft.state")
    assert state["radiant"] == ["b", "d"] and state["dire"] == ["a", "c"] and state["value"] == pytest.approx(0.45)
    assert browser.evaluate("[...document.querySelectorAll('#team-radiant li')].map(li => li.textContent)") == \
        ["b", "d"]
    assert browser.evaluate("[...document.querySelectorAll('#team-dire li')].map(li => li.textContent)") == ["a", "c"]
    assert browser.evaluate("document.querySelectorAll('#log li').length") == 4
    assert browser.evaluate("document.querySelectorAll('#options button:not(:disabled)').length") == 0


def test_the_drafter_picks_first_and_the_user_plays_dire(browser, server):
    minimax = Draft(TINY_POOL, *tiny_table(), first=RADIANT, order=TINY_ORDER)
    start_draft(browser, server, DIRE, RADIANT)
    state = user_turn(browser, DIRE)
    assert state["radiant"] == ["b"]  # the drafter's first pick, by minimax
    assert shown_recommendation(browser) == minimax.state(["b"])["recommended"] == "a"
    # the values are the user's (Dire's): one minus Radiant's
    shown = browser.evaluate("document.querySelector(\"#options button[data-hero='d'] .p\").textContent")
    assert shown == f"you win {100 * (1 - minimax.state(['b'])['options']['d']):.4f}%"
    browser.click_element("#options button[data-hero='d']")  # not the best pick: the drafter gains
    state = user_turn(browser, DIRE)
    assert state["dire"] == ["d"] and state["on_turn"] == DIRE
    assert browser.evaluate("document.querySelector('#log .worse') !== null")
    browser.click_element(f"#options button[data-hero='{state['recommended']}']")
    state = wait_for(browser, "window.draft.state && window.draft.state.complete && window.draft.state")
    assert len(state["radiant"]) == len(state["dire"]) == 2
    assert state["value"] == pytest.approx(minimax.state(["b", "d", state["dire"][1], state["radiant"][1]])["value"])


def test_the_page_states_the_calibration(browser, server):
    browser.open(f"{server.base_url}/draft")
    text = browser.evaluate("document.getElementById('calibration').textContent")
    assert "3 recorded games" in text and "0.2501" in text and "0.1667" in text
    assert browser.evaluate("document.getElementById('pool-editor').hidden")  # a fixed table's pool is fixed
