"""Jump-Start RL (policies/league/jump_start.py, opponents.jump_start): the stages' labels and moves, the settings'
checks, and in the batched env runner: the guide plays "main"'s heroes up to the hand-over, its steps never become
training data, "main"'s own steps start at the hand-over with the lookback of a cut, and the results are recorded
under the stage's label. The driver's side (stages pushed to the runners, kept by checkpoints) is covered with the
curriculum's in tests/test_opponents.py."""
from __future__ import annotations

import pytest
from test_training_e2e import tiny_smoke

from policies.league.jump_start import JumpStart, handover_steps, stage_label
from policies.league.ratings import LOSS, WIN
from training.settings import RunSettings

TICKS = 30  # moba.game.constants.TICKS_PER_SECOND


def test_stage_labels_and_hand_over_steps():
    assert stage_label("scripted_3", 300.0) == "scripted_3 (guided to 300 s)"
    assert stage_label("scripted_3", 0.0) == "scripted_3"  # the last stage is the game played alone
    assert handover_steps(2.0, 4, TICKS) == 15  # 60 ticks: the 15th decision (steps 0..14 are the guide's)
    assert handover_steps(2.1, 4, TICKS) == 16  # 63 ticks: the first decision at or after it
    assert handover_steps(0.0, 4, TICKS) == 0


def test_the_hand_over_moves_earlier_once_a_stage_is_won_and_its_state_round_trips():
    js = JumpStart("scripted_3", "scripted_3", [300, 150, 0], window=2, promote_at=0.5)
    assert js.current_handover_s == 300.0
    assert not js.record("scripted_3", WIN)  # an unguided game is not this stage's
    assert not js.record(stage_label("scripted_3", 300), LOSS)
    assert js.record(stage_label("scripted_3", 300), WIN, iteration=4)  # 1 of 2 won: at promote_at
    assert js.current_handover_s == 150.0
    state = js.state_dict()
    again = JumpStart("scripted_3", "scripted_3", [300, 150, 0], window=2, promote_at=0.5)
    again.load_state_dict(state)
    assert again.current_handover_s == 150.0 and again.state_dict() == state
    for _ in range(2):
        again.record(stage_label("scripted_3", 150), WIN)
    assert again.current_handover_s == 0.0 and again.curriculum.current == "scripted_3"
    assert not again.record("scripted_3", WIN)  # the last stage stays


@pytest.mark.parametrize("jump_start, key, message", [
    ({"guide": "nobody"}, "opponents.jump_start.guide", "unknown"),
    ({"guide": "scripted_3", "opponent": "scripted_2"}, "opponents.jump_start.opponent", "is not played"),
    ({"guide": "scripted_3", "handover_s": [100, 200]}, "opponents.jump_start.handover_s", "strictly decreasing"),
    ({"guide": "scripted_3", "handover_s": []}, "opponents.jump_start.handover_s", "non-empty"),
    ({"guide": "scripted_3", "window": 0}, "opponents.jump_start.window", ">= 1"),
    ({"guide": "scripted_3", "promote_at": 1.5}, "opponents.jump_start.promote_at", r"\(0, 1\]"),
    ({"guide": "scripted_3", "handover": [1]}, "opponents.jump_start.handover", "unknown key"),
])
def test_bad_jump_start_settings_name_the_key(jump_start, key, message):
    with pytest.raises(ValueError, match=rf"'{key}'.*{message}"):
        RunSettings.from_dict({"opponents": {"fixed": {"scripted_3": 0.5}, "jump_start": jump_start}})


def test_jump_start_is_off_by_default_and_its_opponent_may_be_a_ladder_level():
    assert RunSettings.from_dict({}).opponents.jump_start.guide is None
    s = RunSettings.from_dict({"opponents": {"curriculum": {"share": 0.5, "ladder": ["scripted_1", "scripted_3"]},
                                             "jump_start": {"guide": "scripted_3", "handover_s": [200, 0]}}})
    assert s.opponents.jump_start.handover_s == (200.0, 0.0)
    assert RunSettings.from_dict(s.to_dict()) == s


class SpyGuide:
    """A noop guide that counts the steps it played and the heroes it was given."""

    def __init__(self, calls: list):
        from policies.agents.by_name import NoopAgent
        self.inner, self.calls = NoopAgent(), calls

    def reset(self, agent_ids=None):
        self.inner.reset(agent_ids)

    def act(self, observations: dict) -> dict:
        self.calls.append(sorted(observations))
        return self.inner.act(observations)


def test_the_guide_plays_main_up_to_the_hand_over_and_its_steps_never_become_training_data(ray_session):
    from test_five_learner import runner_and_learner

    from training.batched_env_runner import chunk_origin
    handover_s, steps_per_game = 2.0, 38  # tiny_smoke's 5 s games; the guide plays steps 0..14 of each
    guided = handover_steps(handover_s, 4, TICKS)
    own = steps_per_game - guided  # 23 steps of "main"'s own per game
    runner, _ = runner_and_learner(tiny_smoke(
        opponents__fixed={"scripted": 1.0}, resources__num_envs_per_env_runner=2,
        opponents__jump_start={"guide": "noop", "opponent": "scripted", "handover_s": [handover_s, 0.0]}))
    calls = []
    runner.matchups.opponents._makers["noop"] = lambda seed: SpyGuide(calls)  # the games start at the first sample
    episodes = runner.sample(num_timesteps=120, explore=True)  # 60 own steps per env: games of 23, 23 and 14
    assert sum(len(e) for e in episodes) == 120  # the batch holds main's own steps only, as many as asked for
    assert len(calls) == 2 * 3 * guided  # three games per env, each guided for its first 15 steps
    assert all(len(heroes) == 1 for heroes in calls)  # the guide is given "main"'s hero only
    assert sorted(len(e) for e in episodes) == [14, 14, own, own, own, own]
    assert {e.t_started for e in episodes} == {guided}  # every chunk begins at the hand-over ...
    assert all(e.observations.lookback >= 1 for e in episodes)  # ... with the guided steps' end as lookback
    assert {chunk_origin(e)[1] for e in episodes} == {1}  # the guided chunk was cut off, not returned
    results = runner.matchups.opponents.drain()
    assert [r.name for r in results] == [stage_label("scripted", handover_s)] * 4  # two whole games per env


def test_the_last_stage_plays_without_a_guide_from_the_next_game_on(ray_session):
    from test_five_learner import runner_and_learner
    runner, _ = runner_and_learner(tiny_smoke(
        opponents__fixed={"scripted": 1.0}, resources__num_envs_per_env_runner=1,
        opponents__jump_start={"guide": "scripted", "opponent": "scripted", "handover_s": [4.0, 0.0]}))
    assert sum(len(e) for e in runner.sample(num_timesteps=8, explore=True)) == 8  # a game's last 8 steps
    assert runner._games[0].guide is not None and [r.name for r in runner.matchups.opponents.drain()] == [
        "scripted (guided to 4 s)"]
    runner.matchups.opponents.handover_s = 0.0  # what the driver pushes at the last stage ...
    runner.sample(num_timesteps=38, explore=True)  # ... reaches the games drawn after it (the next game was drawn)
    episodes = runner.sample(num_timesteps=38, explore=True)
    assert runner._games[0].guide is None and sum(len(e) for e in episodes) == 38
    assert [r.name for r in runner.matchups.opponents.drain()] == ["scripted (guided to 4 s)", "scripted"]


def test_a_hand_over_at_or_after_the_time_limit_is_refused():
    with pytest.raises(ValueError, match="'opponents.jump_start.handover_s': a hand-over at or after the games' time "
                                         "limit \\(600 s"):
        RunSettings.from_dict({"env": {"mode": "1v1", "time_limit_s": 600},
                               "opponents": {"fixed": {"scripted_3": 1.0}, "jump_start": {"guide": "scripted_3",
                                                                                         "handover_s": [600, 0]}}})
