"""Rating versions against references (Five app. J; policies/references.VersionRater) and the actor that does it
beside training (callbacks/trueskill_rating.py)."""
import csv
import time

import pytest
import ray
import torch
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from moba.env.moba_env import MobaEnv
from policies.league import ratings as R
from policies.league.references import VersionRater
from policies.model.five_module import FiveRLModule
from policies.model.module_ids import MAIN
from training.settings import SETTINGS_KEY, RunSettings, TrueSkillSettings
from callbacks import trueskill_rating as T

TINY = {"lstm_size": 8, "unit_embed": 8, "hero_embed": 8, "global_embed": 4, "private_embed": 8, "replica_size": 16,
        "action_embed": 8, "categorical_embed": 4}
TIME_LIMIT_S = 20.0


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models on a busy 2-core machine: a second torch thread makes games ~50x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def spec():
    env = MobaEnv({"mode": "1v1"})
    return RLModuleSpec(module_class=FiveRLModule, observation_space=env.observation_spaces["radiant_0"],
                        action_space=env.action_spaces["radiant_0"], model_config=TINY)


@pytest.fixture(scope="module")
def state(spec):
    torch.manual_seed(0)
    return spec.build().get_state()


@pytest.fixture(scope="module")
def version_module(spec, state):
    """The rated version: a module with the weights `state`."""
    m = spec.build()
    m.set_state(state)
    return m


def refs(**agents):
    """A rated 1v1 pool: name=(kind, mu), rated under the default time-limit rule."""
    return {"mode": "1v1", "time_limit_outcome": R.DEFAULT_TIME_LIMIT_OUTCOME,
            "agents": {n: {"kind": k, "mu": mu, "sigma": 1.0} for n, (k, mu) in agents.items()}}


def replay_rating(start_mu, rows, pool):
    """The rating after `rows`, recomputed from the per-game scores with the references held constant."""
    rating = R.trueskill_env().create_rating(mu=start_mu)
    for row in rows:
        rating = R.update_against_reference(rating, pool[row["reference"]], row["score"])
        assert row["mu"] == pytest.approx(rating.mu) and row["sigma"] == pytest.approx(rating.sigma)
    return rating


def test_a_version_starts_at_the_previous_versions_mu_and_moves_per_game(version_module):
    ev = VersionRater(refs(random=("random", 5.0), scripted=("scripted", 8.0)))
    first = ev.rate(1, version_module, 4, TIME_LIMIT_S, seed=0)
    assert first["mu"] == pytest.approx(replay_rating(0.0, first["rows"], ev.pool).mu)
    assert first["mu"] != pytest.approx(0.0)  # the games moved it, so the next version's start is testable
    second = ev.rate(2, version_module, 3, TIME_LIMIT_S, seed=10)
    expected = replay_rating(first["mu"], second["rows"], ev.pool)
    assert (second["mu"], second["sigma"]) == pytest.approx((expected.mu, expected.sigma))
    assert second["games"] == 3 == second["wins"] + second["draws"] + second["losses"]
    assert sum(second["opponents"].values()) == 3 and second["wall_s"] > 0
    for name in second["opponents"]:  # sides alternate against each reference, whatever order they come in
        sides = [r["side"] for r in second["rows"] if r["reference"] == name]
        assert sides == ["radiant", "dire", "radiant"][:len(sides)]
    untouched = ev.rate(3, version_module, 0, TIME_LIMIT_S, seed=0)
    assert (untouched["mu"], untouched["sigma"]) == pytest.approx((second["mu"], R.TRUESKILL_SIGMA))


def test_matchmaking_plays_only_references_within_ten_points(version_module):
    ev = VersionRater(refs(random=("random", 0.0), near=("random", 6.0), far=("random", 40.0)))
    out = ev.rate(1, version_module, 4, TIME_LIMIT_S, seed=0)
    assert all(r["mu"] < 30 for r in out["rows"])
    assert out["opponents"] == {"random": 2, "near": 2}  # spread over the eligible references, never "far"
    ev.ratings[1] = R.trueskill_env().create_rating(mu=38.0)  # a strong previous version: only "far" is near it
    assert ev.rate(2, version_module, 2, TIME_LIMIT_S, seed=0)["opponents"] == {"far": 2}


def test_a_resumed_run_starts_at_the_last_rated_mu(version_module, tmp_path):
    path = str(tmp_path / T.CSV_NAME)
    assert T.last_rated_mu(path) is None
    T.append_csv(path, [{"version": v, "mu": mu, "sigma": 3.0, "games": 4, "wins": 2, "draws": 1, "losses": 1,
                         "wall_s": 1.0} for v, mu in ((5, 2.0), (10, 7.5))])
    assert T.last_rated_mu(path) == 7.5
    ev = VersionRater(refs(random=("random", 0.0)), start_mu=T.last_rated_mu(path))
    out = ev.rate(15, version_module, 1, TIME_LIMIT_S, seed=0)
    assert out["mu"] == pytest.approx(replay_rating(7.5, out["rows"], ev.pool).mu)


def test_unrated_references_are_errors_naming_them(spec):
    with pytest.raises(ValueError, match="'scripted'"):
        VersionRater({"mode": "1v1", "agents": {"random": {"kind": "random", "mu": 0.0, "sigma": 1.0},
                                                "scripted": {"kind": "scripted"}}})


def test_csv_rows_are_readable_by_speedup(tmp_path):
    from scripts.speedup import _load
    path = str(tmp_path / T.CSV_NAME)
    rows = [{"version": v, "mu": mu, "sigma": 3.0, "games": 4, "wins": 2, "draws": 1, "losses": 1, "wall_s": 1.0,
             "opponents": {"random": 4}, "rows": []} for v, mu in ((5, 2.0), (10, 7.5))]
    T.append_csv(path, rows[:1])
    T.append_csv(path, rows[1:])
    assert [r["version"] for r in csv.DictReader(open(path))] == ["5", "10"]
    assert list(_load(path, "iteration", "trueskill_mu")["trueskill_mu"]) == [2.0, 7.5]


def wait_for(actor, predicate, timeout_s=45.0):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        st = ray.get(actor.status.remote())
        if predicate(st):
            return st
        time.sleep(0.05)
    raise AssertionError(f"timed out; last status {st}")


def test_the_actor_keeps_one_pending_version_and_polls_without_blocking(ray_session, spec, state):
    actor = T.TrueSkillRaterActor.remote(refs(random=("random", 0.0)), spec.build, 6, TIME_LIMIT_S,
                                         cpu_share=1.0)  # unthrottled: the throttle has its own tests
    try:
        assert ray.get(actor.submit.remote(1, state)) is None
        st = wait_for(actor, lambda s: s["running"] == 1)
        assert st["niceness"] == T.RATER_NICENESS
        assert ray.get(actor.submit.remote(2, state)) is None
        assert ray.get(actor.submit.remote(3, state)) == 2  # replaced, not queued
        t = time.time()
        early = ray.get(actor.poll.remote())
        assert time.time() - t < 0.5
        assert ray.get(actor.status.remote())["running"] == 1  # the poll did not wait for the game
        assert ray.get(actor.status.remote())["pending"] == 3
        results = list(early)
        deadline = time.time() + 45
        while not any(r["version"] == 3 for r in results) and time.time() < deadline:
            time.sleep(0.2)
            results += ray.get(actor.poll.remote())
        assert [r["version"] for r in results] == [1, 3]
        assert all("error" not in r and r["games"] == 6 for r in results)
    finally:
        ray.kill(actor)


class FakeAlgorithm:
    """What TrueSkillCallback reads of an Algorithm (no training here: the training tests cover that)."""

    def __init__(self, trueskill: dict, module, logdir):
        """`trueskill`: the run's trueskill settings that differ from the defaults."""
        from types import SimpleNamespace
        settings = {**RunSettings().to_dict(), "trueskill": {**TrueSkillSettings().to_dict(), **trueskill}}
        self.config = SimpleNamespace(learner_config_dict={SETTINGS_KEY: settings}, env_config={})
        self.learner_group = SimpleNamespace(get_weights=lambda module_ids: {MAIN: module.get_state()})
        self.get_module = lambda module_id: module
        self.logdir, self.iteration = logdir, 0


def test_the_callback_reports_finished_versions_and_writes_the_csv(ray_session, spec, tmp_path):
    algo = FakeAlgorithm({"every": 2, "games": 2, "time_limit_s": TIME_LIMIT_S, "cpu_share": 1.0,
                          "references": refs(random=("random", 0.0))}, spec.build(), str(tmp_path))
    cb = T.TrueSkillCallback()
    cb.on_algorithm_init(algorithm=algo)
    reported = []
    deadline = time.time() + 45
    while not reported and time.time() < deadline:
        algo.iteration += 1
        result = {}
        t = time.time()
        cb.on_train_result(algorithm=algo, result=result)
        assert time.time() - t < 0.5  # never waits for a game
        reported += [result["trueskill"]] if "trueskill" in result else []
        time.sleep(0.1)
    assert reported and reported[0]["version"] % 2 == 0 and reported[0]["games"] == 2
    assert set(reported[0]) == {"version", "mu", "sigma", "games", "win_rate"}
    assert [r["version"] for r in cb.results] == [reported[0]["version"]]
    rows = list(csv.DictReader(open(tmp_path / T.CSV_NAME)))
    assert [int(r["version"]) for r in rows] == [reported[0]["version"]] and list(rows[0]) == list(T.CSV_COLUMNS)


def test_a_resumed_run_rates_the_restored_version_when_it_was_due_and_not_rated(spec, tmp_path):
    """The stopped run's actor died with the version it had not finished: a restored iteration that was due is
    submitted again (with the restored weights), one already in trueskill.csv is not. Versions rated after the
    checkpoint (by a driver killed later) leave trueskill.csv: the resumed run rates them again."""
    from types import SimpleNamespace
    algo = FakeAlgorithm({"every": 20}, spec.build(), str(tmp_path))
    path = str(tmp_path / T.CSV_NAME)
    T.append_csv(path, [{"version": v, "mu": mu, "sigma": 5.0, "games": 2, "wins": 1, "draws": 1, "losses": 0,
                         "wall_s": 1.0} for v, mu in ((20, 3.0), (60, 9.0))])
    cb, submitted = T.TrueSkillCallback(), []
    cb._spec = spec
    cb._actor = SimpleNamespace(submit=SimpleNamespace(remote=lambda v, state: submitted.append(v)))
    for it in (20, 30, 40):
        algo.iteration = it
        cb.on_checkpoint_loaded(algorithm=algo)
    assert submitted == [40]  # 20 is rated, 30 was never due
    assert [int(r["version"]) for r in T.read_csv_rows(path)] == [20]  # 60 was rated after the checkpoint
    assert T.last_rated_mu(path) == 3.0  # where the next version starts


def test_a_version_is_rated_only_under_the_rule_of_its_references(version_module):
    unrecorded = {k: v for k, v in refs(random=("random", 0.0)).items() if k != "time_limit_outcome"}
    with pytest.raises(ValueError, match="rated with 'draw'"):  # a pool that records no rule was rated with "draw"
        VersionRater(unrecorded, time_limit_outcome="points")
    ev = VersionRater({**refs(random=("random", 0.0)), "time_limit_outcome": "points"}, time_limit_outcome="points")
    assert ev.time_limit_outcome == "points"


def test_rated_games_play_under_the_rules_the_version_trained_with(version_module, spec, tmp_path, monkeypatch):
    """A version trained with the consumables' need filters (or another rule of play that evaluation games share with
    training, EVAL_ENV_KEYS) is rated in games with them: the callback hands the training env's rules to the rater,
    which adds the module's observation layout."""
    from policies.league import references
    envs = []
    played = references.play_rated_record
    monkeypatch.setattr(references, "play_rated_record", lambda *a, **k: envs.append(a[-1]) or played(*a, **k))
    ev = VersionRater(refs(random=("random", 0.0)), env={"consumable_filters": True})
    ev.rate(1, version_module, 1, TIME_LIMIT_S, seed=0)
    assert envs[-1] == {"consumable_filters": True, **references.module_layout(version_module)}
    VersionRater(refs(random=("random", 0.0))).rate(1, version_module, 1, TIME_LIMIT_S, seed=0)
    assert "consumable_filters" not in envs[-1]  # the default: the env's own (off)
    algo = FakeAlgorithm({}, spec.build(), str(tmp_path))
    algo.config.env_config = {"mode": "1v1", "consumable_filters": True, "frameskip": 4, "team_spirit": 0.3}
    assert T.rated_game_rules(algo) == {"consumable_filters": True, "frameskip": 4}


def test_the_callback_is_off_by_default_and_with_every_zero(spec, tmp_path):
    for settings in ({}, {"every": 0}):
        algo = FakeAlgorithm(settings, spec.build(), str(tmp_path))
        cb = T.TrueSkillCallback()
        cb.on_algorithm_init(algorithm=algo)
        algo.iteration, result = 2, {}
        cb.on_train_result(algorithm=algo, result=result)
        assert cb._actor is None and result == {} and not (tmp_path / T.CSV_NAME).exists()


def _burn(cpu_s):
    t = time.thread_time()
    while time.thread_time() - t < cpu_s:
        pass


def test_cpu_throttle_sleeps_in_proportion_to_the_cpu_used():
    sleeps = []
    throttle = T.CpuThrottle(0.25, chunk_s=0.01, sleep=sleeps.append)
    throttle()  # under one chunk: no sleep
    assert sleeps == []
    _burn(0.03)
    throttle()
    assert len(sleeps) == 1 and sleeps[0] == pytest.approx(3 * 0.03, rel=0.5)  # used * (1/0.25 - 1)
    throttle()  # the CPU count restarted after the sleep
    assert len(sleeps) == 1


def test_cpu_throttle_holds_the_thread_to_its_share_of_one_core():
    throttle = T.CpuThrottle(0.2, chunk_s=0.01)
    cpu0, wall0 = time.thread_time(), time.time()
    for _ in range(20):
        _burn(0.005)
        throttle()
    share = (time.thread_time() - cpu0) / (time.time() - wall0)
    assert 0.1 < share < 0.25, share


def test_full_share_never_sleeps_and_a_zero_share_is_refused():
    sleeps = []
    throttle = T.CpuThrottle(1.0, chunk_s=0.0, sleep=sleeps.append)
    _burn(0.01)
    throttle()
    assert sleeps == []
    with pytest.raises(ValueError, match="cpu_share"):
        T.CpuThrottle(0.0)
