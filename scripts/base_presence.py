"""How often an agent's hero stands at the enemy's base, and who takes the enemy's ancient down, from replays
(``python -m app.evaluate --replay-dir DIR``): per game, the share of replay records in which the agent's hero is alive
within --near units of the enemy's ancient (the crystal in 1v1) and within twice that; the health the enemy's ancient
lost, and the share of it lost while the hero was not there (alive within --near: the rest is the creeps'); the mean
number of the agent's creeps alive within --near of it; the enemy hero's death windows (the stretches of records in
which it is dead: the time a kill gives the agent to push) with where the agent's hero was and what it took in them,
and how often it walked in after a kill with its creeps at the ancient and without;
with the agent's side and the game's winner. Then the means by side (the health lost and the windows: summed).

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


def replay_frame(header: dict, side: str) -> tuple:
    """What reading a replay's unit rows for `side` needs: the enemy's ancient (its map entry), the unit fields'
    columns by name, the hero's unit type, the creeps' unit types, the side's team and the enemy's."""
    team = TEAM_NAMES.index(side)
    ancient = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == team ^ 1)
    types = header["unit_types"]
    return (ancient, {name: i for i, name in enumerate(header["unit_fields"])}, types.index("hero"),
            {types.index("creep_melee"), types.index("creep_ranged")}, team, team ^ 1)


def siege(header: dict, records: list, side: str, near: float = NEAR) -> dict:
    """The enemy ancient's health lost over `records` (``ancient_hp_lost``), the share of it lost between two records
    of which the later has the hero of `side` not alive within `near` of it (``lost_without_hero``: the creeps' part,
    to the replay's resolution), and the mean number of the side's creeps alive within `near` of it
    (``creeps_near``)."""
    ancient, f, hero_type, creeps, team, enemy = replay_frame(header, side)

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


def kill_windows(header: dict, records: list, side: str, near: float = NEAR) -> dict:
    """The enemy hero's death windows over `records` (runs of records with it dead; the first enemy hero in 5v5):
    their number and summed length in seconds (from the first record to the first after, to the replay's resolution),
    the mean distance of the hero of `side` to the enemy's ancient at a window's start and its mean closest approach
    in a window, the windows in which the side had a creep alive within `near` of the ancient (``with_creeps``),
    the ancient's health lost in the windows (``ancient_hp_lost``), and the hero's choice after a kill: the windows
    that began with one of the side's creeps within 2 x `near` of the ancient (``creeps_at_kill``), and the hero's
    reaching `near` of it alive in those (``reached_with_creeps_at_kill``) and in the others (``reached_without``)."""
    ancient, f, hero_type, creeps, team, enemy = replay_frame(header, side)

    def distance(u) -> float:
        return math.hypot(u[f["x"]] - ancient["x"], u[f["y"]] - ancient["y"])

    def creeps_within(units, d: float) -> bool:
        """Whether one of the side's creeps is alive within `d` of the enemy's ancient."""
        return any(u[f["type"]] in creeps and u[f["team"]] == team and u[f["alive"]] and distance(u) < d
                   for u in units)

    windows, current, previous_hp = [], None, None
    for r in records:
        units = r["units"]
        foe = next(u for u in units if u[f["type"]] == hero_type and u[f["team"]] == enemy)
        me = next(u for u in units if u[f["type"]] == hero_type and u[f["team"]] == team)
        row = next(u for u in units if u[f["id"]] == ancient["id"])
        hp = row[f["hp"]] if row[f["alive"]] else 0.0
        if not foe[f["alive"]]:
            if current is None:
                current = {"t0": r["t"], "start": distance(me), "closest": distance(me), "creeps": False, "lost": 0.0,
                           "reached": False, "creeps_at_kill": creeps_within(units, 2 * near)}
            else:
                current["lost"] += max(0.0, previous_hp - hp)
            current["closest"] = min(current["closest"], distance(me))
            if me[f["alive"]]:
                current["reached"] |= distance(me) < near
            current["creeps"] |= creeps_within(units, near)
        elif current is not None:
            current["lost"] += max(0.0, previous_hp - hp)
            windows.append({**current, "seconds": r["t"] - current["t0"]})
            current = None
        previous_hp = hp
    if current is not None:
        windows.append({**current, "seconds": records[-1]["t"] - current["t0"]})
    n = len(windows)
    creeps_at_kill = [w for w in windows if w["creeps_at_kill"]]
    return {"windows": n, "seconds": sum(w["seconds"] for w in windows),
            "start_distance": sum(w["start"] for w in windows) / n if n else None,
            "closest": sum(w["closest"] for w in windows) / n if n else None,
            "with_creeps": sum(w["creeps"] for w in windows), "ancient_hp_lost": sum(w["lost"] for w in windows),
            "creeps_at_kill": len(creeps_at_kill),
            "reached_with_creeps_at_kill": sum(w["reached"] for w in creeps_at_kill),
            "reached_without": sum(w["reached"] for w in windows if not w["creeps_at_kill"])}


def replay_paths(items: list) -> list:
    out = []
    for item in items:
        out += sorted(glob.glob(os.path.join(item, "*.jsonl"))) if os.path.isdir(item) else [item]
    return out


def summed_windows(games: list) -> dict:
    """kill_windows of several games as one: counts, seconds and health summed, distances averaged over the windows."""
    n = sum(g["windows"] for g in games)

    def mean(key):
        return round(sum(g[key] * g["windows"] for g in games if g["windows"]) / n, 1) if n else None
    return {"windows": n, "seconds": round(sum(g["seconds"] for g in games), 1),
            "start_distance": mean("start_distance"), "closest": mean("closest"),
            "with_creeps": sum(g["with_creeps"] for g in games),
            "ancient_hp_lost": round(sum(g["ancient_hp_lost"] for g in games), 1),
            **{k: sum(g[k] for g in games) for k in ("creeps_at_kill", "reached_with_creeps_at_kill",
                                                      "reached_without")}}


def windows_text(w: dict) -> str:
    """The death windows of kill_windows or summed_windows, in words."""
    if not w["windows"]:
        return "the enemy hero never died"
    return (f"the enemy hero dead {w['windows']} times ({w['seconds']:.0f} s): the hero {w['start_distance']:.0f} "
            f"units from the enemy ancient at the kill, {w['closest']:.0f} at the closest on average, creeps there in "
            f"{w['with_creeps']} of the windows, the ancient lost {w['ancient_hp_lost']:.0f} health in them; the hero "
            f"reached it in {w['reached_with_creeps_at_kill']} of the {w['creeps_at_kill']} windows with creeps within "
            f"twice that at the kill, in {w['reached_without']} of the {w['windows'] - w['creeps_at_kill']} without")


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
        kills = kill_windows(header, records, sides[0], args.near)
        game = {"replay": os.path.basename(path), "side": sides[0],
                "winner": (records[-1].get("end") or {}).get("winner"),
                **{k: round(v, 4) for k, v in presence(header, records, sides[0], args.near).items()},
                **{k: None if v is None else round(v, 4) for k, v in taken.items()},
                "kill_windows": {k: None if v is None else round(v, 1) for k, v in kills.items()}}
        games.append(game)
        without = "-" if game["lost_without_hero"] is None else f"{game['lost_without_hero']:.0%}"
        print(f"{game['replay']}: as {game['side']}, winner {game['winner']}: alive within {args.near:g} of the enemy "
              f"ancient {game['near']:.1%} of the records, within {2 * args.near:g} {game['within_2x']:.1%}; the "
              f"ancient lost {game['ancient_hp_lost']:.0f} health, {without} of it without the hero there; "
              f"{game['creeps_near']:.2f} of the agent's creeps there on average; " + windows_text(kills))
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
                             "creeps_near": round(sum(g["creeps_near"] for g in mine) / len(mine), 4),
                             "kill_windows": summed_windows([g["kill_windows"] for g in mine])}
            print(f"as {side}: {len(mine)} games, mean share within {args.near:g}: {by_side[side]['near']:.1%}, "
                  f"within {2 * args.near:g}: {by_side[side]['within_2x']:.1%}; the enemy ancient lost {lost:.0f} "
                  f"health in all" + (f", {without / lost:.0%} of it without the hero there" if lost else "")
                  + f"; {by_side[side]['creeps_near']:.2f} of the agent's creeps there on average; "
                  + windows_text(by_side[side]["kill_windows"]))
    out = {"agent": args.agent, "near": args.near, "by_side": by_side, "games": games}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
