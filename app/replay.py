"""Writes a replay (moba/env/replay_file.py) as one self-contained HTML page that plays the game in a browser.

    python -m app.replay FILE [--out game.html]

The page holds its script, its style and the replay's data inline: it needs no server and no network, and opens
from disk. It shows the map with its buildings, creeps and heroes, the fog of war of either team, play / pause, the
speed, a timeline with the win probability of a model's heroes and the game's kills and buildings, a panel per hero,
a legend of the shapes and colours, and an event log (``app/viewer/`` has the page; its ``window.viewer`` object is
the page's state). The default output is FILE with the extension .html. The last line printed is JSON naming the
page written.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from moba.env.replay_file import ReplayError, read_replay
from training.cli import print_error

VIEWER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "viewer")
# the map renderer the replay page shares with the play page of python -m app.web
MAP_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "web", "static", "map.js")


def _asset(name: str) -> str:
    with open(os.path.join(VIEWER_DIR, name)) as f:
        return f.read()


def _script() -> str:
    """The page's script: the shared map renderer, then the viewer."""
    with open(MAP_SCRIPT) as f:
        return f.read() + "\n" + _asset("viewer.js")


def page_title(header: dict) -> str:
    a = header["agents"]
    return f"openfive replay: {header['mode']}, radiant ({a.get('radiant')}) vs dire ({a.get('dire')})"


def replay_page(header: dict, records: list) -> str:
    """The HTML page of a replay, everything inline."""
    import html
    data = json.dumps({"header": header, "records": records}, separators=(",", ":"))
    data = data.replace("<", "\\u003c")  # nothing in the data can close the script element
    page = _asset("page.html")
    for key, value in (("{{TITLE}}", html.escape(page_title(header))), ("{{STYLE}}", _asset("viewer.css")),
                       ("{{SCRIPT}}", _script()), ("{{DATA}}", data)):
        page = page.replace(key, value, 1)
    return page


def write_page(header: dict, records: list, out: str) -> str:
    """Writes the page of a replay (read_replay's header and records) to `out`; returns `out`."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(replay_page(header, records))
    return out


def page_path(replay_path: str) -> str:
    """Where a replay's page goes by default: next to it, with the extension .html."""
    return os.path.splitext(replay_path)[0] + ".html"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("replay", help="a replay file (scripts/play.py --replay, app.evaluate --replay-dir, training)")
    p.add_argument("--out", help="the HTML file to write (default: the replay's path with .html)")
    args = p.parse_args(argv)
    try:
        out = write_page(*read_replay(args.replay), args.out or page_path(args.replay))
    except ReplayError as e:
        return print_error(e)
    print(f"replay page written to {out} (open it in a browser)")
    print(json.dumps({"page": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
