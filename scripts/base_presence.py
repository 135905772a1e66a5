"""How often an agent's hero stands at the enemy's base, and who takes the enemy's ancient down, from replays
(``python -m app.evaluate --replay-dir DIR``): per game, the share of replay records in which the agent's hero is alive
within --near units of the enemy's ancient (the crystal in 1v1) and within twice that; the health the enemy's ancient
lost, and the share of it lost while the hero was not there (alive within --near: the rest is the creeps'); the mean
number of the agent's creeps alive within --near of it; with the agent's side and the game's winner. Then the means
by side (the health lost: summed).

    python scripts/base_presence.py --agent hok_1v1_top_rung DIR_OR_REPLAY [...] [--near 800]

--agent is the name a replay's header gives the agent (``agents`` by side: app.evaluate writes a model's folder name,
e.g. ``hok_1v1_top_rung`` for ``models/hok_1v1_top_rung``); a replay in which it plays neither side is an error. The
last line of output is a JSON object.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os

from moba.env.replay_file import read_replay
from moba.game.teams import TEAM_NAMES

NEAR = 800.0  # units from the enemy ancient: inside its attack range (1v1's crystal: 750) with a hero's reach


def presence(header: dict, records: list, side: str, near: float = NEAR) -> dict:
    """The share of `records` in which the hero of `side` is alive within `near` and 2 x `near` of the enemy's
    ancient (the first hero of the side in 5v5)."""
    enemy = TEAM_NAMES.index(side) ^ 1
    ancient = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == enemy)
    fields = {name: i for i, name in enumerate(header["unit_fields"])}
    hero_type, team = header["unit_types"].index("hero"), TEAM_NAMES.index(side)
    counts = [0, 0]
    for r in records:
        me = next(u for u in r["units"] if u[fields["type"]] == hero_type and u[fields["team"]] == team)
        d = math.hypot(me[fields["x"]] - ancient["x"], me[fields["y"]] - ancient["y"])
        alive = bool(me[fields["alive"]])
        counts[0] += alive and d < near
        counts[1] += alive and d < 2 * near
    return {"near": counts[0] / len(records), "within_2x": counts[1] / len(records)}


def siege(header: dict, records: list, side: str, near: float = NEAR) -> dict:
    """The enemy ancient's health lost over `records` (``ancient_hp_lost``), the share of it lost between two records
    of which the later has the hero of `side` not alive within `near` of it (``lost_without_hero``: the creeps' part,
    to the replay's resolution), and the mean number of the side's creeps alive within `near` of it
    (``creeps_near``)."""
    enemy = TEAM_NAMES.index(side) ^ 1
    ancient = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == enemy)
    f = {name: i for i, name in enumerate(header["unit_fields"])}
    types = header["unit_types"]
    hero_type, creeps, team = types.index("hero"), {types.index("creep_melee"), types.index("creep_ranged")}, \
        TEAM_NAMES.index(side)

    def close(u) -> bool:
        return bool(u[f["alive"]]) and math.hypot(u[f["x"]] - ancient["x"], u[f["y"]] - ancient["y"]) < near

    lost = without = creeps_near = 0.0
    previous = None
    for r in records:
        row = next(u for u in r["units"] if u[f["id"]] == ancient["id"])
        hp = row[f["hp"]] if row[f["alive"]] else 0.0
        me = next(u for u in r["units"] if u[f["type"]] == hero_type and u[f["team"]] == team)
        if previous is not None and previous > hp:
            lost += previous - hp
            without += 0.0 if close(me) else previous - hp
        previous = hp
        creeps_near += sum(1 for u in r["units"] if u[f["type"]] in creeps and u[f["team"]] == team and close(u))
    return {"ancient_hp_lost": lost, "lost_without_hero": without / lost if lost else None,
            "creeps_near": creeps_near / len(records)}


def replay_paths(items: list) -> list:
    out = []
    for item in items:
        out += sorted(glob.glob(os.path.join(item, "*.jsonl"))) if os.path.isdir(item) else [item]
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("replays", nargs="+", help="replay files, or folders of them (*.jsonl)")
    p.add_argument("--agent", required=True, help="the agent's name in the replays' headers")
    p.add_argument("--near", type=float, default=NEAR, help=f"units from the enemy ancient (default {NEAR:g})")
    args = p.parse_args(argv)
    if not args.near > 0:
        p.error(f"--near must be > 0, got {args.near}")
    games = []
    for path in replay_paths(args.replays):
        header, records = read_replay(path)
        sides = [s for s in TEAM_NAMES if header["agents"].get(s) == args.agent]
        if not sides:
            p.error(f"{path}: --agent {args.agent!r} plays neither side (agents: {header['agents']})")
        taken = siege(header, records, sides[0], args.near)
        game = {"replay": os.path.basename(path), "side": sides[0],
                "winner": (records[-1].get("end") or {}).get("winner"),
                **{k: round(v, 4) for k, v in presence(header, records, sides[0], args.near).items()},
                **{k: None if v is None else round(v, 4) for k, v in taken.items()}}
        games.append(game)
        without = "-" if game["lost_without_hero"] is None else f"{game['lost_without_hero']:.0%}"
        print(f"{game['replay']}: as {game['side']}, winner {game['winner']}: alive within {args.near:g} of the enemy "
              f"ancient {game['near']:.1%} of the records, within {2 * args.near:g} {game['within_2x']:.1%}; the "
              f"ancient lost {game['ancient_hp_lost']:.0f} health, {without} of it without the hero there; "
              f"{game['creeps_near']:.2f} of the agent's creeps there on average")
    by_side = {}
    for side in TEAM_NAMES:
        mine = [g for g in games if g["side"] == side]
        if mine:
            lost = sum(g["ancient_hp_lost"] for g in mine)
            without = sum(g["ancient_hp_lost"] * (g["lost_without_hero"] or 0.0) for g in mine)
            by_side[side] = {"games": len(mine), "near": round(sum(g["near"] for g in mine) / len(mine), 4),
                             "within_2x": round(sum(g["within_2x"] for g in mine) / len(mine), 4),
                             "ancient_hp_lost": round(lost, 1),
                             "lost_without_hero": round(without / lost, 4) if lost else None,
                             "creeps_near": round(sum(g["creeps_near"] for g in mine) / len(mine), 4)}
            print(f"as {side}: {len(mine)} games, mean share within {args.near:g}: {by_side[side]['near']:.1%}, "
                  f"within {2 * args.near:g}: {by_side[side]['within_2x']:.1%}; the enemy ancient lost {lost:.0f} "
                  f"health in all" + (f", {without / lost:.0%} of it without the hero there" if lost else "")
                  + f"; {by_side[side]['creeps_near']:.2f} of the agent's creeps there on average")
    out = {"agent": args.agent, "near": args.near, "by_side": by_side, "games": games}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
