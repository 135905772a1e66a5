"""scripts/profile_training.py: each phase's own time (its timed callees excluded), the table per agent step, the
wrapping undone, the memory slope of the scaling curve, and the episodes' transfer per agent step."""
from __future__ import annotations

import time
import types

import pytest

from scripts.profile_training import PhaseTimer, memory_slope, profile_table


class Work:
    def outer(self):
        time.sleep(0.02)
        return self.inner() + 1  # 0.05 s more

    def inner(self):
        time.sleep(0.05)
        return 1


def test_each_phase_gets_its_own_time_and_the_wrapping_is_undone():
    module = types.SimpleNamespace(helper=lambda: time.sleep(0.01) or 5)
    w = Work()
    timer = PhaseTimer()
    timer.wrap(Work, "outer", "outer")
    timer.wrap(Work, "inner", "inner")
    timer.wrap(module, "helper", "helper")
    assert w.outer() == 2 and module.helper() == 5
    assert timer.calls == {"outer": 1, "inner": 1, "helper": 1}
    assert 0.05 <= timer.own["inner"] < 0.2
    assert 0.02 <= timer.own["outer"] < 0.05  # its callee's 0.05 s excluded (0.07 s with it)
    timer.restore()
    assert Work.outer.__name__ == "outer" and Work.inner.__name__ == "inner" and "outer" not in vars(w)
    learner = Work()
    timer.wrap(learner, "inner", "bound")  # an object's method: an attribute of its own, removed again
    assert "inner" in vars(learner) and learner.outer() == 2 and timer.calls["bound"] == 1
    timer.restore()
    assert "inner" not in vars(learner)


def test_the_table_is_per_step_largest_first_with_the_total_last():
    rows = profile_table({"a": 0.001, "b": 0.003}, steps=10)
    assert rows == [("b", 300.0, 0.75), ("a", 100.0, 0.25), ("total", 400.0, 1.0)]


def test_memory_per_game_is_the_slope_between_the_ends_of_the_curve():
    assert memory_slope([(8, 100.0), (32, 130.0), (128, 220.0)]) == pytest.approx(1.0)
    assert memory_slope([(8, 100.0)]) is None


def test_the_transfer_is_per_agent_step_with_the_episodes_bytes():
    import numpy as np

    from scripts.profile_training import transfer_cost
    episodes = [np.zeros(1000, np.float32) for _ in range(4)]  # 16,000 bytes of data
    out = transfer_cost(episodes, rows=100)
    assert 160.0 <= out["transfer_bytes_per_agent_step"] < 170.0  # the data and a pickle's few bytes per array
    assert out["transfer_pickle_us"] >= 0.0 and out["transfer_unpickle_us"] >= 0.0


def test_a_timer_with_a_sync_waits_at_each_phases_start_and_end():
    """On a GPU each timed phase calls torch.cuda.synchronize at its start and end, so that the device work it queued
    is counted in it (and not in whichever later phase waits first)."""
    events = []
    module = types.SimpleNamespace(phase=lambda: events.append("call") or 3)
    timer = PhaseTimer(sync=lambda: events.append("sync"))
    timer.wrap(module, "phase", "phase")
    assert module.phase() == 3
    timer.restore()
    assert events == ["sync", "call", "sync"] and timer.calls["phase"] == 1


def test_the_learner_trace_counts_one_update_by_minibatch_and_ranks_its_operators():
    """--trace on the CPU: one update under torch's profiler, its minibatches counted by gradient computations, the
    host's operators ranked by their own time; no GPU counts on a CPU learner."""
    from test_training_e2e import tiny_smoke  # the tiny run config of the RLlib tests

    from scripts.profile_training import build_runner, trace_update
    from training.algorithm import make_training_env
    cfg = tiny_smoke(resources__learner_threads=1, ppo__target_kl=0.0)
    algo_config, runner = build_runner(cfg, 2)
    try:
        episodes = runner.sample(num_timesteps=64, explore=True)
        learner = algo_config.build_learner(env=make_training_env({**cfg.env, "seed": 0}))
        ppo = types.SimpleNamespace(minibatch_size=32, num_epochs=2)
        losses, compute_losses = [], learner.compute_losses
        learner.compute_losses = lambda **kw: losses.append(1) or compute_losses(**kw)
        out = trace_update(learner, episodes, ppo, cuda=False, top=5)
    finally:
        runner.stop()
    assert out["minibatches"] == len(losses) >= 2 * 2  # 2 epochs of at least 2 minibatches of 32 sequence steps
    assert out["kernel_launches"] == out["synchronizations"] == 0 and out["device_ops"] == []
    assert 1 <= len(out["host_ops"]) <= 5
    own = [ms for _, _, ms in out["host_ops"]]
    assert own == sorted(own, reverse=True) and all(calls >= 1 for _, calls, _ in out["host_ops"])
