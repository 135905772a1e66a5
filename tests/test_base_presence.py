"""scripts/base_presence.py: the share of a replay's records in which an agent's hero is alive at the enemy's
ancient, by side, read from the replay's own header and unit rows."""
from __future__ import annotations

import json

import pytest

from moba.env.replay_file import read_replay
from scripts.base_presence import main, presence


def test_presence_counts_the_records_with_the_hero_alive_beside_the_enemy_ancient(tmp_path, capsys):
    from scripts.play import play
    path = str(tmp_path / "game.jsonl")
    play("1v1", "scripted_1", "scripted", 0, time_limit_s=30.0, replay_path=path, progress=False)
    header, records = read_replay(path)
    assert presence(header, records, "radiant") == {"near": 0.0, "within_2x": 0.0}  # the first 30 s: at home
    fields = {name: i for i, name in enumerate(header["unit_fields"])}
    crystal = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == 1)
    hero = next(i for i, u in enumerate(records[0]["units"]) if u[fields["type"]] == 0 and u[fields["team"]] == 0)
    n = len(records)
    for k, r in enumerate(records[: n // 2]):  # the first half of the records beside the Dire crystal ...
        r["units"][hero][fields["x"]], r["units"][hero][fields["y"]] = crystal["x"] - 500, crystal["y"]
        if k < n // 4:  # ... a quarter of them dead there, the next quarter 1,000 units off (inside 2 x 800)
            r["units"][hero][fields["alive"]] = 0 if k % 2 else 1
    for r in records[n // 4: n // 2]:
        r["units"][hero][fields["x"]] = crystal["x"] - 1000
    alive_near = sum(1 for k in range(n // 4) if k % 2 == 0)
    got = presence(header, records, "radiant")
    assert got["near"] == pytest.approx(alive_near / n)
    assert got["within_2x"] == pytest.approx((alive_near + n // 2 - n // 4) / n)
    assert presence(header, records, "dire") == {"near": 0.0, "within_2x": 0.0}
    with open(path, "w") as f:
        f.write("\n".join(json.dumps(x) for x in [header, *records]) + "\n")
    out = main([str(tmp_path), "--agent", "scripted_1"])
    assert out["by_side"] == {"radiant": {"games": 1, "near": round(got["near"], 4),
                                          "within_2x": round(got["within_2x"], 4), "ancient_hp_lost": 0.0,
                                          "lost_without_hero": None, "creeps_near": 0.0,
                                          "kill_windows": {"windows": 0, "seconds": 0.0, "start_distance": None,
                                                           "closest": None, "with_creeps": 0,
                                                           "ancient_hp_lost": 0.0, "creeps_at_kill": 0,
                                                           "reached_with_creeps_at_kill": 0,
                                                           "reached_without": 0}}}
    with pytest.raises(SystemExit):
        main([path, "--agent", "scripted_3"])  # it plays neither side: an error naming it
    assert "'scripted_3' plays neither side" in capsys.readouterr().err


def test_siege_splits_the_ancients_lost_health_by_the_heros_presence_and_counts_the_creeps_there(tmp_path):
    from scripts.base_presence import siege
    from scripts.play import play
    path = str(tmp_path / "game.jsonl")
    play("1v1", "scripted_1", "scripted", 0, time_limit_s=30.0, replay_path=path, progress=False)
    header, records = read_replay(path)
    assert siege(header, records, "radiant") == {"ancient_hp_lost": 0.0, "lost_without_hero": None,
                                                  "creeps_near": 0.0}
    f = {name: i for i, name in enumerate(header["unit_fields"])}
    crystal = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == 1)
    row = next(i for i, u in enumerate(records[0]["units"]) if u[f["id"]] == crystal["id"])
    hero = next(i for i, u in enumerate(records[0]["units"]) if u[f["type"]] == 0 and u[f["team"]] == 0)
    for k, r in enumerate(records[:6]):  # the crystal loses 100 a record; the hero is there at records 1 and 2
        r["units"][row][f["hp"]] = 3500.0 - 100 * k
        if k in (1, 2):
            r["units"][hero][f["x"]], r["units"][hero][f["y"]] = crystal["x"] - 300, crystal["y"]
        if k < 4:  # one of Radiant's creeps beside it in the first four records (a hero's row made a creep)
            creep = list(r["units"][hero])
            creep[f["id"]], creep[f["type"]], creep[f["hero"]], creep[f["alive"]] = 99999, 1, -1, 1
            creep[f["x"]], creep[f["y"]] = crystal["x"], crystal["y"] - 300
            r["units"].append(creep)
    for r in records[6:]:
        r["units"][row][f["hp"]] = 3000.0
    got = siege(header, records, "radiant")
    assert got["ancient_hp_lost"] == 500.0 and got["lost_without_hero"] == pytest.approx(0.6)
    assert got["creeps_near"] == pytest.approx(4 / len(records))
    assert siege(header, records, "dire")["ancient_hp_lost"] == 0.0  # Radiant's ancient is untouched


def test_kill_windows_follow_the_enemy_heros_deaths_and_what_the_agent_took_in_them(tmp_path):
    from scripts.base_presence import kill_windows, summed_windows
    from scripts.play import play
    path = str(tmp_path / "game.jsonl")
    play("1v1", "scripted_1", "scripted", 0, time_limit_s=30.0, replay_path=path, progress=False)
    header, records = read_replay(path)
    assert kill_windows(header, records, "radiant")["windows"] == 0
    f = {name: i for i, name in enumerate(header["unit_fields"])}
    crystal = next(b for b in header["map"]["buildings"] if b["type"] == "ancient" and b["team"] == 1)
    row = next(i for i, u in enumerate(records[0]["units"]) if u[f["id"]] == crystal["id"])
    me = next(i for i, u in enumerate(records[0]["units"]) if u[f["type"]] == 0 and u[f["team"]] == 0)
    foe = next(i for i, u in enumerate(records[0]["units"]) if u[f["type"]] == 0 and u[f["team"]] == 1)
    # the Dire hero dead in records 2-4 (a window) and 8 (another); the crystal loses 100 a record from record 3 to 6
    for k, r in enumerate(records):
        r["units"][foe][f["alive"]] = 0 if k in (2, 3, 4, 8) else 1
        r["units"][row][f["hp"]] = 3500.0 - 100 * min(max(k - 2, 0), 4)
        x = crystal["x"] - (1000 - 100 * k if k < 6 else 2000)
        r["units"][me][f["x"]], r["units"][me][f["y"]] = x, crystal["y"]
        if k in (2, 3):  # one of Radiant's creeps beside the crystal in the first window, from its kill on
            creep = list(r["units"][me])
            creep[f["id"]], creep[f["type"]], creep[f["hero"]], creep[f["alive"]] = 99999, 1, -1, 1
            creep[f["x"]], creep[f["y"]] = crystal["x"], crystal["y"] - 300
            r["units"].append(creep)
    got = kill_windows(header, records, "radiant")
    t = [r["t"] for r in records]
    assert got["windows"] == 2 and got["seconds"] == pytest.approx(t[5] - t[2] + t[9] - t[8])
    assert got["start_distance"] == pytest.approx((800 + 2000) / 2)
    assert got["closest"] == pytest.approx((600 + 2000) / 2)
    assert got["with_creeps"] == 1
    assert got["ancient_hp_lost"] == 300.0  # lost by records 3, 4 and 5 (the record that ends the window)
    # the first window began with the creep there and the hero came within 800 (700 units at record 3); the second
    # began without one, and the hero stayed 2,000 units off
    assert (got["creeps_at_kill"], got["reached_with_creeps_at_kill"], got["reached_without"]) == (1, 1, 0)
    both = summed_windows([got, got])
    assert (both["windows"], both["with_creeps"], both["ancient_hp_lost"]) == (4, 2, 600.0)
    assert (both["creeps_at_kill"], both["reached_with_creeps_at_kill"], both["reached_without"]) == (2, 2, 0)
    assert both["closest"] == pytest.approx(got["closest"], abs=0.1)
