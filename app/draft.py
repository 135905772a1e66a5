"""Drafts 5v5 heroes with a model's win probability (Five app. D.2): the recommended pick and the win probability
of each remaining hero, by minimax over the remaining picks.

    python -m app.draft --model models/five_5v5_kickstart [--pool H1,H2,...] [--first radiant] \\
        [--picks H1,dire:H2,...] [--side radiant|dire] [--cache-dir results/draft_cache]

``--pool``: the heroes the draft picks from (10 to 14; default the 12 of policies/draft/lineups.DEFAULT_POOL, three
of each role). Every lineup of the pool is scored once from the first frames of a game (policies/draft/lineups.py)
and cached in ``--cache-dir``, keyed by the model and the pool: the first call on a pool scores it (a 12-hero pool,
16,632 lineups, takes about 5 minutes on two cores; a progress bar shows it), later calls read the cache.
``--first``: the side that picks first; the turns follow PICK_ORDER (1-2-2-2-2-1, Five fig. 12). ``--picks``: the
picks so far in turn order, each a hero name or ``side:hero`` (the side is then checked against the turn).
``--side``: whose win probability is printed (default: the side on turn; Radiant once the draft is complete).

Prints the turn, the recommended pick, each remaining hero's win probability for the side on turn if it picks it
(minimax: both sides play best after), the model's calibration when it was measured
(scripts/draft_calibration.py), and a JSON line last. A mistake (an unknown hero, a hero picked twice, a pick out
of turn, a model that is not 5v5) is one line ``error: ...`` naming the option, status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from moba.game.teams import TEAM_NAMES
from training.cli import user_errors

def names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def parse_args(argv=None):
    from policies.draft.lineups import DEFAULT_CACHE_DIR, DEFAULT_MODEL, DEFAULT_POOL
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help="a 5v5 model, model:PATH or PATH (default: the shipped models/five_5v5_kickstart)")
    p.add_argument("--pool", default=",".join(DEFAULT_POOL), help="comma-separated heroes (default: DEFAULT_POOL)")
    p.add_argument("--first", default=TEAM_NAMES[0], help="the side that picks first (radiant or dire)")
    p.add_argument("--picks", default="", help="comma-separated picks so far, in turn order: HERO or SIDE:HERO")
    p.add_argument("--side", default=None, help="whose win probability is printed (default: the side on turn)")
    p.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR, help=f"the lineup scores' cache (default "
                                                                  f"{DEFAULT_CACHE_DIR})")
    return p.parse_args(argv)


def percent(p: float) -> str:
    """A win probability in percent, with the digits the model's small differences need."""
    return f"{100 * p:.4f}%"


def calibration_note(model: str) -> tuple[str, dict | None]:
    """A line on the model's measured calibration (CALIBRATION_FILE in its directory), and that file's summary."""
    from policies.draft.calibration import CALIBRATION_FILE
    from policies.league.references import checkpoint_path
    path = os.path.join(checkpoint_path(model, "--model"), CALIBRATION_FILE)
    if not os.path.exists(path):
        return (f"calibration: not measured yet (python scripts/draft_calibration.py --model {model} writes "
                f"{path})"), None
    with open(path) as f:
        cal = json.load(f)
    parts = []
    for key, what in (("draft_score", "draft scores on self-play games"), ("per_decision", "every decision")):
        c = cal.get(key) or {}
        if c.get("n"):
            parts.append(f"{what}: Brier {c['brier']:.4f} (always the base rate: {c['brier_base_rate']:.4f}), "
                         f"ECE {c['ece']:.4f}, n {c['n']}")
    note = (f"calibration ({path}, {cal.get('games')} games, {cal.get('measured')}): "
            + ("; ".join(parts) if parts else "no decided game"))
    return note, {k: cal.get(k) for k in ("measured", "games", "draft_score", "per_decision")}


def draft(args, log=print, progress=None) -> dict:
    """The draft's state as the options ask it (the JSON line's content); `log` prints the human lines."""
    from policies.draft import lineups as L
    from policies.draft.minimax import PICK_ORDER, PICK_ORDER_SOURCE, check_picks, check_side, draft_of_table, \
        side_view, turn_sides
    pool = L.check_pool(names(args.pool), "--pool")
    first = check_side(args.first, "--first")
    if args.side is not None:
        check_side(args.side, "--side")
    sides = turn_sides(first, PICK_ORDER)
    picks = check_picks(names(args.picks), pool, sides, "--picks")
    module = L.load_draft_module(args.model, "--model")
    table = L.lineup_table(args.model, pool, args.cache_dir, progress=progress, module=module)
    state = draft_of_table(table, first, PICK_ORDER).state([f"{s}:{h}" for s, h in picks], "--picks")
    side = args.side or state["on_turn"] or TEAM_NAMES[0]
    view = side_view(state, side)
    note, cal = calibration_note(args.model)
    lo, hi = float(table.scores.min()), float(table.scores.max())
    log(f"model {args.model}: {len(table.scores):,} lineups of a pool of {len(pool)} "
        f"({'read from' if table.meta['cached'] else 'scored into'} {table.meta['cache_file']}); "
        f"Radiant's win probability spans {percent(lo)} .. {percent(hi)} over them")
    log(f"order ({PICK_ORDER_SOURCE}): {', '.join(sides)}")
    log(f"radiant: {', '.join(state['radiant']) or '-'}; dire: {', '.join(state['dire']) or '-'}")
    if state["complete"]:
        log(f"the draft is complete: {side} wins with probability {percent(view['value'])}")
    else:
        log(f"turn {state['turn'] + 1} of {state['turns']}: {state['on_turn']} picks; {side}'s win probability with "
            f"best play: {percent(view['value'])}")
        log(f"recommended pick: {state['recommended']} ({side} wins {percent(view['options'][state['recommended']])})")
        log(f"each remaining hero if {state['on_turn']} picks it ({side}'s win probability, minimax):")
        for hero, p in sorted(view["options"].items(), key=lambda kv: -kv[1] if side == state["on_turn"]
                              else kv[1]):
            log(f"  {hero:<16} {percent(p)}")
    log(note)
    return {"model": args.model, "pool": list(pool), "first": first, "order": list(sides),
            "picks": [list(p) for p in picks], **{k: view[k] for k in ("turn", "turns", "on_turn", "radiant", "dire",
                                                                          "complete", "side", "value", "radiant_value",
                                                                          "recommended", "options")},
            "lineups": len(table.scores), "score_range": [lo, hi], "cache_file": table.meta["cache_file"],
            "cached": table.meta["cached"], "calibration": cal}


@user_errors
def main(argv=None) -> int:
    from policies.league.series import one_torch_thread
    from training.progress_bar import ProgressBar
    args = parse_args(argv)
    one_torch_thread()
    bar = {}

    def progress(done, total):
        bar.setdefault("bar", ProgressBar("scoring lineups", total)).update(done, f"{done:,}/{total:,} lineups")
        if done >= total:
            bar["bar"].close()
    out = draft(args, progress=progress)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
