"""The replay file (moba/env/replay_file.py): what a replay of a real game holds, measured against the engine's own
statistics, the fog semantics, the records' timing, the model's decisions, and the reader's errors; the replays of
training's evaluation games (callbacks/evaluation.replay_paths) and of app.evaluate."""
from __future__ import annotations

import json
import math
import os
from collections import Counter

import pytest

from moba.env.actions import A_ATTACK, NOOP_ACTION, PRIMARY_NAMES
from moba.env.moba_env import MobaEnv
from moba.env.replay_file import (EVENT_TYPES, FORMAT, HERO_FIELDS, UNIT_FIELDS, VERSION, ReplayError, ReplayWriter,
                                 hero_rows, read_replay, unit_rows)
from moba.game.constants import BUILDING_TYPES, UNIT_TYPE_NAMES
from moba.game.heroes import HEROES
from moba.game.items import ITEM_ACTIONS, ITEMS
from moba.game.state import G_SPENT, H_BUYBACKS
from moba.game.teams import TEAM_NAMES
from policies.agents.by_name import play_game
from policies.agents.scripted import ScriptedAgent

U = {n: i for i, n in enumerate(UNIT_FIELDS)}
HF = {n: i for i, n in enumerate(HERO_FIELDS)}
ITEM_COST = {it.name: it.cost for it in ITEMS}


def record_game(path, mode="5v5", time_limit_s=60.0, every_s=1.0, radiant=None, dire=None, seed=0):
    env = MobaEnv({"mode": mode, "seed": seed, "evaluation": True, "time_limit_s": time_limit_s})
    radiant, dire = radiant or ScriptedAgent(seed), dire or ScriptedAgent(seed + 1)
    writer = ReplayWriter(str(path), {"radiant": "a", "dire": "b"}, seed, every_s,
                          players={"radiant": radiant, "dire": dire})
    summary = play_game(env, radiant, dire, seed=seed, on_step=writer.on_step)
    header, records = read_replay(str(path))
    return env, summary, header, records


@pytest.fixture(scope="module")
def scripted_5v5(tmp_path_factory):
    """Five minutes of the scripted bot against itself: kills, last hits, denies, towers, purchases and casts."""
    return record_game(tmp_path_factory.mktemp("replay") / "game.jsonl", time_limit_s=300.0)


def events_of(records, *types):
    return [e for r in records for e in r["events"] if e["type"] in types]


def test_events_add_up_to_the_engines_statistics(scripted_5v5):
    env, summary, header, records = scripted_5v5
    s = env.game.s
    count = Counter((e["type"], e.get("hero")) for r in records for e in r["events"])
    victims = Counter(e["victim"] for e in events_of(records, "kill", "death"))
    for h, hero in enumerate(summary["heroes"]):
        assert count["kill", h] == hero["kills"], hero
        assert victims[h] == hero["deaths"], hero
        assert count["last_hit", h] == hero["last_hits"], hero
        assert count["deny", h] == hero["denies"], hero
        assert count["buyback", h] == s.hi[h, H_BUYBACKS]
        spent = sum(ITEM_COST[e["item"]] for e in events_of(records, "purchase") if e["hero"] == h)
        assert spent == pytest.approx(s.hf[h, G_SPENT])  # every item bought, and nothing else
    for t, side in enumerate(TEAM_NAMES):
        lost = [e for e in events_of(records, "tower", "barracks", "shrine") if e["team"] == t]
        destroyed = summary["destroyed_by"][TEAM_NAMES[1 - t]]
        assert len(lost) == destroyed["towers"] + destroyed["barracks"] + destroyed["shrines"]
    for e in events_of(records, "cast"):
        hero = HEROES[env.game.hero_defs[e["hero"]]]
        assert e["ability"] in [a.name for a in hero.abilities] + list(ITEM_ACTIONS)
    # the game is rich enough for the sums above to mean something
    kinds = Counter(e["type"] for r in records for e in r["events"])
    assert all(kinds[k] > 0 for k in ("kill", "last_hit", "deny", "tower", "purchase", "cast")), kinds
    assert set(kinds) <= set(EVENT_TYPES)
    assert all(records[i]["t"] - 1.0 < e["t"] <= records[i]["t"] + 1e-9
               for i in range(1, len(records)) for e in records[i]["events"])  # events since the last record


def test_a_record_per_game_second_with_every_unit(scripted_5v5):
    env, summary, header, records = scripted_5v5
    assert (header["format"], header["version"], header["mode"]) == (FORMAT, VERSION, "5v5")
    assert [h["hero"] for h in header["heroes"]] == [h["hero"] for h in summary["heroes"]]
    assert len(header["map"]["buildings"]) == env.game.n_buildings_end - env.game.n_heroes
    assert records[0]["t"] == 0.0 and "end" not in records[0]
    assert [math.floor(r["t"] + 1e-6) for r in records] == list(range(len(records)))
    assert records[-1]["t"] == summary["game_time_s"] == 300.0
    assert records[-1]["end"] == {"winner": summary["winner"], "truncated": True}
    buildings = {b["id"] for b in header["map"]["buildings"]}
    for r in records:
        ids = [u[U["id"]] for u in r["units"]]
        assert len(ids) == len(set(ids))
        assert set(range(env.game.n_heroes)) | buildings <= set(ids)  # heroes and buildings, dead or alive
        assert all(u[U["alive"]] or u[U["type"]] == 0 or u[U["type"]] in BUILDING_TYPES for u in r["units"])
        assert [h[HF["slot"]] for h in r["heroes"]] == list(range(env.game.n_heroes))
    assert records[-1]["units"] == unit_rows(env.game) and records[-1]["heroes"] == hero_rows(env.game)
    assert [h[HF["kills"]] for h in records[-1]["heroes"]] == [h["kills"] for h in summary["heroes"]]


def test_fog_marks_exactly_the_units_within_a_teams_vision(scripted_5v5):
    """seen_by bit t is set when the unit is team t's or within the vision radius of one of team t's living units
    (both read from the record itself)."""
    _, _, _, records = scripted_5v5
    hidden = 0
    for r in records[::20]:
        for u in r["units"]:
            if not u[U["alive"]]:
                continue
            for t in (0, 1):
                seen = bool(u[U["seen_by"]] & (1 << t))
                expect = u[U["team"]] == t or any(
                    w[U["team"]] == t and w[U["alive"]] and
                    math.dist((w[U["x"]], w[U["y"]]), (u[U["x"]], u[U["y"]])) <= w[U["vision"]] + 1.0
                    for w in r["units"])
                near_edge = any(w[U["team"]] == t and w[U["alive"]] and abs(math.dist(
                    (w[U["x"]], w[U["y"]]), (u[U["x"]], u[U["y"]])) - w[U["vision"]]) < 2.0 for w in r["units"])
                assert seen == expect or near_edge, (r["t"], u, t)  # positions are rounded to whole units
                hidden += not seen
    assert hidden > 0


def test_records_as_often_as_asked(tmp_path):
    _, summary, header, records = record_game(tmp_path / "g.jsonl", mode="1v1", time_limit_s=20.0, every_s=0.5)
    assert header["every_s"] == 0.5
    assert [math.floor(r["t"] / 0.5 + 1e-6) for r in records] == list(range(len(records)))
    with pytest.raises(ValueError, match="every_s"):
        ReplayWriter(str(tmp_path / "x.jsonl"), {}, every_s=0)


class Decider(ScriptedAgent):
    """The scripted bot that reports, as a model would, a win probability and an attack on the first enemy hero
    (row team_size of its unit table: the team's own heroes come first)."""

    def act(self, observations):
        actions = super().act(observations)
        self.decisions = {a: {"win_prob": 0.25, "action": {**NOOP_ACTION, "primary": A_ATTACK, "target_unit": 1}}
                          for a in observations}
        return actions


def test_the_model_part_has_each_model_heros_win_probability_and_action(tmp_path):
    _, _, _, records = record_game(tmp_path / "g.jsonl", mode="1v1", time_limit_s=10.0, radiant=Decider(0))
    assert "model" not in records[0]  # nobody has decided yet at t=0
    for r in records[1:]:
        # only radiant is a model; its target (unit table row 1) is the dire hero, whose unit id is 1
        assert r["model"] == {"radiant_0": {"win_prob": 0.25, "action": PRIMARY_NAMES[A_ATTACK], "target": 1}}


def test_a_trained_modules_agent_reports_its_decisions(tmp_path):
    from test_training_model import build_module

    from policies.agents.module_agent import ModuleAgent
    env = MobaEnv({"mode": "1v1"})
    agent = ModuleAgent(build_module(env), explore=True)
    _, _, _, records = record_game(tmp_path / "g.jsonl", mode="1v1", time_limit_s=5.0, radiant=agent)
    last = records[-1]["model"]["radiant_0"]
    decided = agent.decisions["radiant_0"]
    assert 0.0 < last["win_prob"] < 1.0 and last["win_prob"] == round(decided["win_prob"], 4)
    assert last["action"] == PRIMARY_NAMES[decided["action"]["primary"]]


def write_lines(path, lines):
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


@pytest.fixture(scope="module")
def good_lines(scripted_5v5, tmp_path_factory):
    _, _, header, records = scripted_5v5
    return header, records[:3]


@pytest.mark.parametrize("case, message", [
    ("missing", "cannot be read"),
    ("empty", "empty file"),
    ("not_json", "line 1: not JSON"),
    ("old_format", "line 1: field 'format' must be 'openfive-replay'"),
    ("version", "line 1: field 'version' must be one of [1], got 2"),
    ("no_map", "line 1: header field 'map' is missing"),
    ("no_units", "line 2: record field 'units' is missing"),
    ("short_unit", "line 3: field 'units' must be a list of rows of 14 values"),
    ("time_back", "line 4: field 't' must be a game time"),
    ("bad_event", "line 2: field 'events' must be a list of objects whose 'type' is one of ['kill'"),
    ("no_records", "a header but no record"),
])
def test_a_bad_replay_names_the_line_and_the_field(tmp_path, good_lines, case, message):
    header, records = good_lines
    records = [dict(r) for r in records]
    lines = [header] + records
    if case == "empty":
        lines = []
    elif case == "not_json":
        lines = ["{oops"]
    elif case == "old_format":  # the replay of play.py before version 1
        lines = [{"mode": "5v5", "lineup": [], "unit_types": list(UNIT_TYPE_NAMES)}] + records
    elif case == "version":
        lines[0] = {**header, "version": 2}
    elif case == "no_map":
        lines[0] = {k: v for k, v in header.items() if k != "map"}
    elif case == "no_units":
        del lines[1]["units"]
    elif case == "short_unit":
        lines[2]["units"] = [u[:-1] for u in lines[2]["units"]]
    elif case == "time_back":
        lines[3]["t"] = 0.5
    elif case == "bad_event":
        lines[1]["events"] = [{"type": "dance"}]
    elif case == "no_records":
        lines = [header]
    path = str(tmp_path / "missing.jsonl") if case == "missing" else write_lines(tmp_path / "r.jsonl", lines)
    with pytest.raises(ReplayError) as e:
        read_replay(path)
    assert message in str(e.value)


def test_training_replays_every_nth_evaluation_game_of_the_run(tmp_path):
    from training.evaluation_games import replay_paths
    opponents, games = ["random", "scripted"], 2
    chosen = []
    for evaluation in range(3):
        paths = replay_paths(str(tmp_path), 5 * (evaluation + 1), evaluation, opponents, games, every=3)
        chosen += [os.path.basename(p) for o in opponents for g in range(games) if (p := paths(o, g))]
    # games of the run: 0-3 in the first evaluation, 4-7 in the second, 8-11 in the third; every third is kept
    assert chosen == ["iter000005_vs_random_game0.jsonl", "iter000005_vs_scripted_game1.jsonl",
                      "iter000010_vs_scripted_game0.jsonl", "iter000015_vs_random_game1.jsonl"]
    assert replay_paths(str(tmp_path), 5, 0, opponents, games, every=0)("random", 0) is None


def test_replay_every_must_not_be_negative():
    from training import run_config
    with pytest.raises(ValueError, match="evaluation.replay_every"):
        run_config.validate({"evaluation": {"replay_every": -1}})


def test_a_game_stopped_between_records_keeps_its_last_steps(tmp_path):
    """close() before the game's end (a live game quit mid-second) writes the steps since the last record, and the
    events in them, as a last record without an end."""
    env = MobaEnv({"mode": "1v1", "seed": 0, "evaluation": True, "time_limit_s": 60.0})
    path = str(tmp_path / "stopped.jsonl")
    writer = ReplayWriter(path, {"radiant": "a", "dire": "b"}, 0, 1.0)
    agent = ScriptedAgent(0)
    obs, _ = env.reset(seed=0)
    agent.reset(list(obs))
    writer.on_step(env)
    steps = 0
    while env.game.time < 10.4:  # ten whole seconds and a part of the eleventh
        obs, *_ = env.step(agent.act(obs))
        writer.on_step(env)
        steps += 1
    writer.close()
    writer.close()  # a second close does nothing
    header, records = read_replay(path)
    assert [r["t"] for r in records][:11] == pytest.approx([0.0] + [float(k) for k in range(1, 11)], abs=0.14)
    assert len(records) == 12 and records[-1]["t"] == pytest.approx(env.game.time, abs=1e-3)
    assert "end" not in records[-1]
    assert records[-1]["heroes"] == json.loads(json.dumps(hero_rows(env.game)))  # the game as it was stopped
