"""League play inside training (callbacks/league_play.py): matchups drawn on the env runners from the pool's table,
opponent slots, results flowing back, snapshot weights on the runners equal to the learner's at snapshot time, and
the pool carried by checkpoints."""
from __future__ import annotations

import csv
import hashlib
import os

import numpy as np
import pytest
from test_training_e2e import build_algo, tiny_smoke

from policies.league.ratings import DRAW, LOSS, WIN
from policies.model.module_ids import SLOT_PREFIX
from training.league_play import LEAGUE_KEY, RunnerLeague, league_mapping_fn, load_weights, save_weights
from training.opponents import RunnerMatchups
from callbacks.league_play import LeagueCallback


# ---- the runner side, without Ray ------------------------------------------------------------------------------------
class Loads:
    def __init__(self):
        self.calls = []

    def __call__(self, slot, path):
        self.calls.append((slot, path))


def test_draws_follow_the_pool_probabilities_and_the_past_fraction():
    league = RunnerLeague(slots=1, past_fraction=0.25, seed=0)
    probs = np.array([0.5, 0.3, 0.2])
    league.set_table([1, 2, 3], ["a", "b", "c"], probs)
    n = 20000
    counts = {None: 0, 1: 0, 2: 0, 3: 0}
    for i in range(n):
        m = league.draw(0, Loads())
        counts[None if m is None else m["version"]] += 1
        league.release(0)
    assert counts[None] / n == pytest.approx(0.75, abs=0.015)
    past = n - counts[None]
    observed = np.array([counts[v] for v in (1, 2, 3)])
    chi2 = (((observed - past * probs) ** 2) / (past * probs)).sum()
    assert chi2 < 13.8  # chi-square, 2 degrees of freedom, p = 0.001


def test_a_matchup_carries_the_probability_its_version_was_drawn_with():
    """Eq. 14's p_i is the probability with which the version was sampled: the runner keeps it with the game, so a
    table pushed while the game plays (or the pool's own later updates) cannot change it."""
    league = RunnerLeague(slots=1, past_fraction=1.0, seed=0)
    league.set_table([1, 2], ["a", "b"], [0.25, 0.75])
    m = league.draw(0, Loads())
    assert m["probability"] == {1: 0.25, 2: 0.75}[m["version"]]
    league.set_table([1, 2], ["a", "b"], [0.5, 0.5])
    assert m["probability"] == {1: 0.25, 2: 0.75}[m["version"]]


def test_slots_are_shared_by_version_reused_when_free_and_never_swapped_under_a_game():
    league = RunnerLeague(slots=2, past_fraction=1.0, seed=1)
    loads = Loads()
    league.set_table([7], ["v7.pt"], [1.0])
    a = league.draw(0, loads)
    b = league.draw(1, loads)  # the same version: shares the slot, no second load
    assert a["module"] == b["module"] == f"{SLOT_PREFIX}0" and loads.calls == [(0, "v7.pt")]
    league.set_table([8, 9], ["v8.pt", "v9.pt"], [0.5, 0.5])
    c = league.draw(2, loads)  # slot 0 is busy with version 7: a new version goes to slot 1
    assert c["module"] == f"{SLOT_PREFIX}1" and loads.calls[-1][0] == 1
    other = 9 if c["version"] == 8 else 8
    league.set_table([other], [f"v{other}.pt"], [1.0])
    assert league.draw(3, loads) is None and league.fallbacks == 1  # every slot busy: self-play, counted
    league.release(0), league.release(1)  # version 7's games ended: slot 0 is free again
    d = league.draw(3, loads)
    assert d["module"] == f"{SLOT_PREFIX}0" and d["version"] == other and loads.calls[-1] == (0, f"v{other}.pt")
    # a new game in an env releases whatever that env's previous game held: env 2 leaves slot 1 for slot 0
    assert league.draw(2, loads)["module"] == f"{SLOT_PREFIX}0"
    assert league.slot_users == [{2, 3}, set()] and league.env_slot == {2: 0, 3: 0}


def test_a_game_cut_short_frees_its_slot_and_records_no_result():
    """A first game cut at a random length (MobaEnv's cut_short info) is not a result against the past version: its
    slot is freed, and the version's record is left as it was; a whole game is recorded."""
    from types import SimpleNamespace

    from training.league_play import game_ended
    league = RunnerLeague(slots=1, past_fraction=1.0, seed=0)
    league.set_table([7], ["v7.pt"], [1.0])
    runner = SimpleNamespace(matchups=SimpleNamespace(league=league))
    m = league.draw(0, Loads())
    game_ended(runner, 0, m, "none", {"radiant": 1.0, "dire": 0.0}, None, scored=False)
    assert league.results == [] and league.slot_users == [set()]
    m = league.draw(0, Loads())
    game_ended(runner, 0, m, "none", {"radiant": 1.0, "dire": 0.0}, None)
    assert [(v, p) for v, _, p in league.results] == [(7, 1.0)] and league.slot_users == [set()]


def test_mapping_sends_the_past_versions_side_to_its_slot():
    class Episode:
        custom_data = {LEAGUE_KEY: {"version": 3, "module": "league_slot_1", "side": "dire"}}

    assert [league_mapping_fn(a, Episode()) for a in ("radiant_0", "radiant_4", "dire_0", "dire_4")] == [
        "main", "main", "league_slot_1", "league_slot_1"]

    class SelfPlay:
        custom_data = {}

    assert league_mapping_fn("dire_2", SelfPlay()) == "main"


def test_league_results_score_capped_games_by_the_configured_rule():
    """The runner records main's result: an outright result as it is; a game stopped by the time limit as a draw, or
    with "points" as won by the team ahead on raw return (from GameMetricsCallback's running sums)."""
    from types import SimpleNamespace

    from training.game_metrics import RAW_RETURN_KEY

    def finished(winner, radiant, dire, past_side="dire"):
        # the objective runs against the raw return: buildings 1-2 where radiant leads on points, else level, with
        # radiant ahead on kills
        objective = {"radiant": {"buildings": 1, "kills": 2}, "dire": {"buildings": 2 if radiant > dire else 1,
                                                                         "kills": 0}}
        info = {"winner": winner, "objective": objective}
        return SimpleNamespace(
            custom_data={LEAGUE_KEY: {"version": 4, "module": "league_slot_0", "side": past_side, "probability": 0.5},
                         RAW_RETURN_KEY: {"radiant": radiant, "dire": dire}},
            get_infos=lambda index: {"radiant_0": info, "dire_0": info})

    outcomes = {}
    for rule in ("draw", "points", "objective"):
        league = RunnerLeague(slots=1, past_fraction=1.0, seed=0, time_limit_outcome=rule)
        runner = SimpleNamespace(matchups=RunnerMatchups(league=league))
        for episode in (finished("none", 3.0, 1.0), finished("none", 1.0, 3.0), finished("none", 2.0, 2.0),
                        finished("dire", 9.0, 0.0), finished("none", 1.0, 3.0, past_side="radiant")):
            LeagueCallback().on_episode_end(episode=episode, env_runner=runner, env_index=0)
        outcomes[rule] = [{WIN: "win", LOSS: "loss", DRAW: "draw"}[score] for _, score, _ in league.drain()["results"]]
    assert outcomes["draw"] == ["draw", "draw", "draw", "loss", "draw"]
    assert outcomes["points"] == ["win", "loss", "draw", "loss", "win"]
    assert outcomes["objective"] == ["loss", "win", "win", "loss", "loss"]


# ---- through RLlib ---------------------------------------------------------------------------------------------------
def digest(state: dict) -> str:
    h = hashlib.sha1()
    for k in sorted(state):
        h.update(k.encode())
        h.update(np.ascontiguousarray(np.asarray(state[k], np.float64)).tobytes())
    return h.hexdigest()


def test_league_in_training_snapshot_sync_results_and_checkpoint(ray_session, no_home_results, tmp_path):
    cfg = tiny_smoke(resources__num_env_runners=1, league__enabled=True, league__snapshot_every=1,
                     league__past_fraction=1.0, league__slots=2)
    algo = build_algo(cfg)
    try:
        learner_at = {}  # iteration -> digest of the learner's "main" weights right after it (a snapshot's moment)
        seen = []
        for _ in range(5):
            r = algo.train()
            learner_at[algo.iteration] = digest(algo.learner_group.get_weights(module_ids=["main"])["main"])
            if "league" in r:
                seen.append(r["league"])
            # app. M: synchronous PPO trains on data of the parameters it optimizes; eq. 13 sample reuse
            # (RLlib's minibatch cycling may optimize a few samples twice in an epoch, never fewer than once)
            assert r["learners"]["main"]["staleness_mean"] == 0.0 and 1.0 <= r["sample_reuse"] < 2.0
            # games span iterations, yet their length is whole: the kept chunks' summaries add up
            # (callbacks/episode_memory.py); a 5 s game is 38 steps at frameskip 4
            assert r["env_runners"]["episode_len_mean"] == pytest.approx(38.0)
        pool = LeagueCallback.of(algo).pool
        assert [v.iteration for v in pool.versions] == [1, 2, 3, 4, 5]
        assert len(set(learner_at.values())) == 5  # main kept training: every snapshot differs
        for v in pool.versions:
            assert digest(load_weights(os.path.join(algo.logdir, v.weights_path))) == learner_at[v.iteration]

        def runner_slots(er):  # runs on the env runner: (version, weights) of every loaded slot
            league = er.matchups.league
            return [(v, {k: np.asarray(x) for k, x in er.module[f"league_slot_{j}"].get_state().items()})
                    for j, v in enumerate(league.slot_version) if v is not None]

        slots = [(v, digest(w)) for part in algo.env_runner_group.foreach_env_runner(
            runner_slots, local_env_runner=False) for v, w in part]
        assert slots, "no opponent slot was ever loaded on the env runner"
        for version, d in slots:  # the runner plays exactly the learner's weights of the snapshot's iteration
            assert d == learner_at[pool.get(version).iteration], version
        # results flowed back: games against past versions were counted in the pool and in league.csv
        assert sum(s["past_games"] for s in seen) >= 1
        assert sum(v.games for v in pool.versions) == sum(s["past_games"] for s in seen)
        with open(os.path.join(algo.logdir, "league.csv")) as f:
            rows = list(csv.DictReader(f))
        last = [r for r in rows if int(r["iteration"]) == algo.iteration]
        assert [int(r["version"]) for r in last] == [v.version for v in pool.versions]
        assert sum(float(r["probability"]) for r in last) == pytest.approx(1.0)
        assert sum(int(r["games"]) for r in last) == sum(v.games for v in pool.versions)

        # the pool travels in the checkpoint (Tune's save_checkpoint / load_checkpoint, as --resume uses them)
        path = str(tmp_path / "ckpt")
        algo.save_checkpoint(path)
        state = pool.state_dict()
    finally:
        algo.stop()
    restored = build_algo(cfg)
    try:
        restored.load_checkpoint(path)
        assert LeagueCallback.of(restored).pool.state_dict() == state
        # a run of its own (init.restore into a new trial folder) gets the versions' weight files copied over
        assert restored.logdir != algo.logdir
        for v in LeagueCallback.of(restored).pool.versions:
            assert digest(load_weights(os.path.join(restored.logdir, v.weights_path))) == learner_at[v.iteration]
        assert restored.env_runner_group.foreach_env_runner(
            lambda er: er.matchups.league.versions, local_env_runner=False) == [[1, 2, 3, 4, 5]]
    finally:
        restored.stop()


def test_saved_weights_round_trip(tmp_path):
    state = {"a": np.arange(3.0), "b": np.ones((2, 2), np.float32)}
    path = str(tmp_path / "league" / "v.pt")
    save_weights(state, path)
    assert digest(load_weights(path)) == digest(state) and not os.path.exists(path + ".tmp")
