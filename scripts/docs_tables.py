"""The observation, action and reward tables of docs/, written from the code that defines them.

    python scripts/docs_tables.py           # rewrites the generated parts of docs/*.md
    python scripts/docs_tables.py --check   # exits 1 (naming the files) when the docs differ from the code

Each doc keeps its prose; the tables sit between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` lines
and are rebuilt from the tables of ``moba/env/observation.py``, ``moba/env/actions.py``, ``moba/game/abilities.py`` and
``moba/env/rewards.py``, so that the documentation cannot drift from the code (the test suite runs ``--check``).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DOCS = os.path.join(REPO, "docs")
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)


def markdown_table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def feature_table(table, prefix: str) -> str:
    """index, constant, name, unit, source of every row of an observation feature table."""
    from moba.env import observation as O
    rows = []
    for i, (name, unit, source) in enumerate(table):
        constant = f"{prefix}{name.upper()}"
        rows.append((i, f"`{constant}`" if getattr(O, constant, None) == i else "", f"`{name}`", unit, source))
    return markdown_table(("column", "constant", "feature", "unit", "source"), rows)


def observation_blocks() -> dict:
    from moba.env import observation as O
    return {
        "global-features": feature_table(O.GLOBAL_FEATURES, "GLOBAL_"),
        "unit-features": feature_table(O.UNIT_FEATURES, "UNIT_"),
        "hero-features": feature_table(O.HERO_FEATURES, "HERO_"),
        "lane-features": feature_table(O.LANE_FEATURES, "LANE_"),
        "scoreboard-features": feature_table(O.SCOREBOARD_FEATURES, "SCOREBOARD_"),
        "buildings-features": feature_table(O.BUILDINGS_FEATURES, "BUILDINGS_"),
        "minimap-channels": markdown_table(("channel", "constant", "content"), [
            (i, f"`MINIMAP_{name.upper()}`", f"`{name}`") for i, name in enumerate(O.MINIMAP_CHANNELS)]),
    }


def action_blocks() -> dict:
    import numpy as np

    from moba.env import actions as A
    from moba.game import abilities as AB
    from moba.game.constants import N_DELAYS
    from moba.game.tables import ABILITIES_PER_HERO, tables
    abi, _, item_action_ab, _ = tables()
    sizes = {"primary": A.N_PRIMARY, "delay": N_DELAYS, "target_unit": "max_units", "offset_x": A.N_OFFSETS,
             "offset_y": A.N_OFFSETS}
    parameters = markdown_table(("parameter", "values"), [(f"`{k}`", sizes[k]) for k in A.ACTION_KEYS])
    # generic rows as every hero has them (hero 0's abilities fill the ability rows, which differ per hero)
    tt, uk = A.hero_action_table(np.arange(ABILITIES_PER_HERO)[None, :], abi, item_action_ab)
    primary = [(p, f"`{name}`", "the hero's ability (per hero)", "the ability's") if A.A_ABILITY0 <= p < A.A_ITEM0
               else (p, f"`{name}`", AB.TARGET_TYPE_NAMES[tt[0, p]], AB.UNIT_KIND_NAMES[uk[0, p]])
               for p, name in enumerate(A.PRIMARY_NAMES)]
    yes = {True: "yes", False: "no"}
    target_types = markdown_table(("target type", "reads target_unit", "reads offsets", "offset step (map units)"), [
        (f"`{name}`", yes[AB.TARGET_TYPE_READS_UNIT[t]], yes[AB.TARGET_TYPE_READS_OFFSET[t]],
         f"{A.offset_step(t):g}" if AB.TARGET_TYPE_READS_OFFSET[t] else "-")
        for t, name in enumerate(AB.TARGET_TYPE_NAMES)])
    return {"action-parameters": parameters,
            "primary-actions": markdown_table(("index", "primary action", "target type", "unit kind"), primary),
            "target-types": target_types}


def reward_blocks() -> dict:
    from moba.env import rewards as R
    presets = sorted(R.REWARD_PRESETS)
    weights = markdown_table(("signal", *(f"`{p}`" for p in presets)), [
        (f"`{s}`", *(f"{R.REWARD_PRESETS[p][s]:g}" for p in presets)) for s in R.SIGNALS])
    post = markdown_table(("constant", "value", "meaning"), [
        ("`TEAM_SPIRIT`", R.TEAM_SPIRIT, "eq. 12's tau (the run config's default team_spirit schedule)"),
        ("`TIME_DECAY_BASE`", R.TIME_DECAY_BASE, "eq. 11: rewards but win/loss scaled by base ** (T / period)"),
        ("`TIME_DECAY_PERIOD_S`", R.TIME_DECAY_PERIOD_S, "eq. 11's period, game seconds"),
        ("`BUILDING_HEALTH_SHARE`", round(R.BUILDING_HEALTH_SHARE, 4),
         "share of a building's weight earned as it loses health; the rest on its death"),
    ])
    return {"reward-weights": weights, "reward-postprocessing": post}


def generated_blocks() -> dict:
    return {**observation_blocks(), **action_blocks(), **reward_blocks()}


def render(text: str, blocks: dict, path: str) -> str:
    def fill(m):
        name = m.group("name")
        if name not in blocks:
            raise SystemExit(f"{path}: unknown generated block {name!r}; known: {sorted(blocks)}")
        return m.group(1) + blocks[name] + m.group(4)
    return BLOCK.sub(fill, text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="only compare; exit 1 when a doc is out of date")
    args = p.parse_args(argv)
    blocks = generated_blocks()
    stale = []
    for name in sorted(os.listdir(DOCS)):
        path = os.path.join(DOCS, name)
        if not name.endswith(".md"):
            continue
        with open(path) as f:
            text = f.read()
        new = render(text, blocks, path)
        if new != text:
            stale.append(os.path.relpath(path, REPO))
            if not args.check:
                with open(path, "w") as f:
                    f.write(new)
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (python scripts/docs_tables.py rewrites them)", file=sys.stderr)
        return 1
    print(("rewrote " if stale else "up to date: ") + (", ".join(stale) if stale else "docs/"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
