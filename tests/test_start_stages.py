"""The late starts' stages (policies/league/start_stages.py, opponents.start_stages): the labels and moves, the
settings' checks, the env's reset option that lays a stage's values over the config's start_state, and an env runner
that starts its games at the stage the driver pushed and records them under the stage's label. The driver's side in
training (pushed to the runners, kept by checkpoints) is covered in tests/test_opponents.py."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from moba.env.moba_env import MobaEnv
from policies.league.start_stages import StartStages, is_late_start, late_start_label
from training import run_config
from training.settings import RunSettings

LATE = {"share": 1.0, "destroyed": ["tower_mid_1", "tower_mid_2"], "distance": 800.0, "level": 10, "waves": 2}
STAGES = [{"defender_dead_s": [15.0, 25.0]}, {"defender_dead_s": 8.0, "waves": 1}, {"defender_dead_s": 0.0}]


def staged(**stages) -> dict:
    return {"env": {"mode": "1v1", "start_state": LATE},
            "opponents": {"fixed": {"scripted_3": 1.0}, "start_stages": {"stages": STAGES, **stages}}}


def test_labels_keep_a_stage_apart_and_are_all_late_starts():
    assert late_start_label("scripted_3") == "scripted_3 (late start)"
    assert late_start_label("scripted_3", 2) == "scripted_3 (late start at stage 2)"
    assert all(is_late_start(late_start_label("scripted_3", k)) for k in (None, 0, 5))
    assert not is_late_start("scripted_3") and not is_late_start("scripted_3 (guided to 300 s)")


def test_a_stage_moves_on_once_its_late_games_are_won_outright_often_enough_and_its_state_round_trips():
    ss = StartStages("scripted_3", STAGES, window=4, promote_at=0.75, sides=["radiant"])
    label = late_start_label("scripted_3", 0)
    assert ss.current == 0
    assert not ss.record("scripted_3 (late start)", True, "radiant")  # not a stage's game
    assert not ss.record(late_start_label("scripted_3", 1), True, "radiant")  # another stage's
    assert not ss.record(label, True, "dire")  # a side that does not count
    for won in (True, False, False, True):  # a window of 4 with 2 won: judged, not passed, emptied
        assert not ss.record(label, won, "radiant")
    assert ss.current == 0 and not ss.curriculum.recent
    for won in (True, True, False):
        assert not ss.record(label, won, "radiant")
    assert ss.curriculum.window_win_rate() == pytest.approx(2 / 3)
    assert ss.record(label, True, "radiant", iteration=7)  # 3 of a fresh 4 won outright: at promote_at
    assert ss.current == 1 and ss.curriculum.promotions == [(7, 1)]
    state = ss.state_dict()
    again = StartStages("scripted_3", STAGES, window=4, promote_at=0.75)
    again.load_state_dict(state)
    assert again.current == 1 and again.state_dict() == state
    for _ in range(4):
        again.record(late_start_label("scripted_3", 1), True, "dire")
    assert again.current == 2
    for _ in range(8):
        again.record(late_start_label("scripted_3", 2), True, "radiant")
    assert again.current == 2  # the last stage stays


def test_the_settings_are_off_by_default_and_round_trip():
    assert RunSettings.from_dict({}).opponents.start_stages.stages == ()
    s = RunSettings.from_dict(staged(sides=["radiant"], window=10))
    ss = s.opponents.start_stages
    assert ss.stages == tuple(STAGES) and ss.sides == ("radiant",) and ss.window == 10
    assert RunSettings.from_dict(s.to_dict()) == s


@pytest.mark.parametrize("change, key, message", [
    ({"stages": [{"defender_dead_s": 500.0}]}, r"opponents\.start_stages\.stages\[0\]\.defender_dead_s", r"\[0, 120\]"),
    ({"stages": [{"waves": 2}, {"wave": 1}]}, r"opponents\.start_stages\.stages\[1\]", "unknown key"),
    ({"stages": [{}, 1]}, r"opponents\.start_stages\.stages", "list of mappings"),
    ({"stages": "easy"}, r"opponents\.start_stages\.stages", "must be"),
    ({"opponent": "scripted_2"}, r"opponents\.start_stages\.opponent", "is not played"),
    ({"window": 0}, r"opponents\.start_stages\.window", ">= 1"),
    ({"promote_at": 0.0}, r"opponents\.start_stages\.promote_at", r"\(0, 1\]"),
    ({"sides": ["both"]}, r"opponents\.start_stages\.sides", "radiant"),
    ({"stage": []}, r"opponents\.start_stages\.stage", "unknown key"),
])
def test_bad_start_stages_settings_name_the_key(change, key, message):
    with pytest.raises(ValueError, match=rf"'{key}'.*{message}"):
        RunSettings.from_dict(staged(**change))


def test_the_stages_need_late_starts_to_move():
    cfg = staged()
    cfg["env"]["start_state"] = {**LATE, "share": 0.0}
    with pytest.raises(ValueError, match=r"'opponents\.start_stages\.stages'.*env\.start_state\.share > 0"):
        RunSettings.from_dict(cfg)


def test_a_reset_option_lays_a_stages_values_over_the_configs_start_state():
    """reset(options={"start_state": {...}}): that game's late start with the values laid over the config's (the
    rest kept), a range drawn per game; without it the config's own; bad values name the option."""
    from moba.game.state import H_LEVEL, I_ALIVE
    env = MobaEnv({"mode": "1v1", "seed": 4, "start_state": LATE})
    _, infos = env.reset(options={"attacker": "radiant"})
    assert all(info["late_start"] == "radiant" for info in infos.values())  # the first infos say so too
    assert env.game.setup.start_dead_s == () and env.game.setup.start_waves[0][0] == 2
    stage = {"defender_dead_s": [15.0, 25.0], "waves": 1}
    for _ in range(3):
        env.reset(options={"attacker": "radiant", "start_state": stage})
        dead = env.game.setup.start_dead_s
        assert dead[0] == 0.0 and 15.0 <= dead[1] <= 25.0  # the defender (Dire) dead, drawn from the range
        assert env.game.setup.start_waves[0][0] == 1  # the stage's waves
        assert env.game.s.hi[:, H_LEVEL].tolist() == [10, 10]  # the config's level kept
        assert sum(env.game.s.ui[u, I_ALIVE] == 0 for u in env.game.building_rows) == 2
    env.reset(options={"attacker": "dire"})
    assert env.game.setup.start_dead_s == ()  # the next game without the option: the config's start state
    for options, message in [({"start_state": {"defender_dead_s": -1.0}}, r"'start_state\.defender_dead_s'"),
                             ({"start_state": {"wave": 1}}, r"'start_state'.*unknown key"),
                             ({"start_state": [1]}, r"'start_state'.*mapping"),
                             ({"attackers": "radiant"}, r"\['attackers'\].*allowed")]:
        with pytest.raises(ValueError, match=message):
            env.reset(options=options)


def test_a_runner_starts_its_games_at_the_pushed_stage_and_records_them_under_its_label():
    from training.batched_env_runner import reset_options
    from training.opponents import RunnerOpponents, game_ended, install_start_stage
    opp = RunnerOpponents(run_config.validate(staged()), seed=0)
    runner = SimpleNamespace(matchups=SimpleNamespace(opponents=opp, league=None))
    m = opp.matchup("scripted_3")
    assert (m["start_stage"], m["start_state"]) == (0, STAGES[0])
    assert reset_options(m) == {"attacker": "radiant" if m["side"] == "dire" else "dire", "start_state": STAGES[0]}
    install_start_stage(runner, 2)  # as the driver pushes it
    later = opp.matchup("scripted_3")
    assert (later["start_stage"], later["start_state"]) == (2, STAGES[2])
    lead = {"radiant": {"buildings": 2, "kills": 0}, "dire": {"buildings": 0, "kills": 0}}
    # the game started at stage 0 ends after the move: recorded under stage 0's label; a full game under the agent's
    game_ended(runner, 0, m, "none", {}, lead, late_start="radiant")
    game_ended(runner, 1, later, "none", {}, lead)
    assert [r.name for r in opp.drain()] == ["scripted_3 (late start at stage 0)", "scripted_3"]
    plain = RunnerOpponents(run_config.validate({"opponents": {"fixed": {"scripted_3": 1.0}}}), seed=0)
    assert "start_state" not in plain.matchup("scripted_3")


def test_a_runner_hands_on_the_staged_late_games_results_in_the_order_the_games_started():
    """A late game won ends early: in the order they end, a stage's first results would be its wins. Results wait
    for every staged late game started before them; a game with no result (cut short) frees its place; full games
    and unstaged ones go straight on; abandoned games (the envs reset) hold nothing back."""
    from training.opponents import RunnerOpponents, game_ended, late_game_started, unstaged
    opp = RunnerOpponents(run_config.validate(staged()), seed=0)
    runner = SimpleNamespace(matchups=SimpleNamespace(opponents=opp, league=None))
    lead = {"radiant": {"buildings": 0, "kills": 0}, "dire": {"buildings": 0, "kills": 0}}
    games = [opp.matchup("scripted_3") for _ in range(5)]
    for m in games[:4]:
        late_game_started(runner, m, "radiant")
    late_game_started(runner, games[4], None)  # a full game: no place
    assert [m.get("late_place") for m in games] == [0, 1, 2, 3, None]

    def end(m, won, scored=True):
        main = "radiant" if m["side"] == "dire" else "dire"
        late = "radiant" if "late_place" in m else None
        game_ended(runner, 0, m, main if won else "none", {}, lead, scored=scored, late_start=late)
    end(games[2], True)
    end(games[1], True)
    assert opp.drain() == []  # waiting for the game started first
    end(games[4], False)
    assert [r.name for r in opp.drain()] == ["scripted_3"]  # no place: straight on
    end(games[0], False, scored=False)  # no result: its place freed
    assert [r.outright for r in opp.drain()] == [True, True]
    opp.abandon_late_games()  # game 3 never ends
    later = opp.matchup("scripted_3")
    late_game_started(runner, later, "radiant")
    end(later, False)
    assert [(r.name, r.outright) for r in opp.drain()] == [("scripted_3 (late start at stage 0)", False)]
    first = unstaged(opp.matchup("scripted_3"))
    late_game_started(runner, first, "radiant")
    assert "start_stage" not in first and "late_place" not in first


def test_in_training_the_stage_reaches_the_runner_the_results_and_the_checkpoint(ray_session, no_home_results,
                                                                                 tmp_path):
    import csv
    import os

    from test_training_e2e import build_algo, tiny_smoke

    from callbacks.opponents import OpponentsCallback
    cfg = tiny_smoke(env__start_state={"share": 1.0, "destroyed": ["tower_mid_1"], "distance": 900.0,
                                       "time_limit_s": 3.0},
                     opponents__fixed={"random": 1.0},
                     opponents__start_stages={"opponent": "random", "stages": [{"level": 2}, {"level": 3}],
                                              "window": 1000})
    algo = build_algo(cfg)
    try:
        r = algo.train()
        assert r["opponents"]["start_stage"] == 0 and r["opponents"]["fixed_games"] == 0  # every game started late
        with open(os.path.join(algo.logdir, "opponents.csv")) as f:
            rows = list(csv.DictReader(f))
        # each env's first game was reset before its matchup was drawn: at env.start_state as it is, not at a stage
        assert {row["opponent"] for row in rows} == {"random", "random (late start)", "random (late start at stage 0)"}
        assert sum(int(row["games"]) for row in rows if row["opponent"].endswith("stage 0)")) >= 1
        callback = OpponentsCallback.of(algo)
        assert callback.start_stages.curriculum.recent  # the stage's games counted
        callback.start_stages.curriculum.level = 1  # as a promotion would (set by hand: promotions need wins)
        r = algo.train()
        assert r["opponents"]["start_stage"] == 1
        assert algo.env_runner_group.foreach_env_runner(lambda er: er.matchups.opponents.start_stage,
                                                        local_env_runner=True)[0] == 1
        path = str(tmp_path / "ckpt")
        algo.save_checkpoint(path)
        state = callback.start_stages.state_dict()
        callback.start_stages.curriculum.level = 0
        algo.env_runner_group.foreach_env_runner(lambda er: setattr(er.matchups.opponents, "start_stage", 0),
                                                 local_env_runner=True)
        algo.load_checkpoint(path)
        assert callback.start_stages.state_dict() == state
        assert algo.env_runner_group.foreach_env_runner(lambda er: er.matchups.opponents.start_stage,
                                                        local_env_runner=True)[0] == 1
    finally:
        algo.stop()
