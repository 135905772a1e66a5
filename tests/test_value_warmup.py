"""The value warm-up (policies/learning/value_warmup.py, callbacks/value_warmup.py; init.value_warmup_iterations and
init.actor_lr_warmup_iterations): critic-only updates keep every parameter but the critics' (the value and win
heads), and the observation statistics, bit for bit; the policy's learning rate then rises from 0; the settings are
checked."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from test_five_learner import runner_and_learner
from test_training_e2e import build_algo, tiny_smoke

from policies.learning.value_warmup import (VALUE_HEAD, WIN_HEAD, ValueWarmup, WarmupPhase, scale_value_head,
                                            warmup_phase)
from training.settings import InitSettings, RunSettings


def test_the_phases_of_a_warmup():
    phases = [warmup_phase(i, 2, 3) for i in range(1, 8)]
    assert phases[:2] == [WarmupPhase(True, 0.0)] * 2  # critic-only
    assert [p.actor_lr_factor for p in phases[2:5]] == [0.25, 0.5, 0.75] and not any(p.critic_only
                                                                                      for p in phases[2:])
    assert phases[5:] == [WarmupPhase()] * 2  # the usual update
    assert warmup_phase(1, 0, 0) == WarmupPhase()
    assert warmup_phase(2, 2, 0, 1e-3) == WarmupPhase(True, 0.0, 1e-3) and warmup_phase(3, 2, 0, 1e-3) == WarmupPhase()


def test_the_settings_are_checked_naming_the_key(tmp_path):
    assert InitSettings().value_warmup_iterations == 0 and InitSettings().actor_lr_warmup_iterations == 0
    with pytest.raises(ValueError, match=r"^config 'init\.value_warmup_iterations': must be >= 0"):
        InitSettings.from_dict({"value_warmup_iterations": -1, "teacher": "scripted"})
    with pytest.raises(ValueError, match=r"^config 'init\.actor_lr_warmup_iterations': must be int"):
        InitSettings.from_dict({"actor_lr_warmup_iterations": 1.5})
    with pytest.raises(ValueError, match=r"^config 'init\.value_warmup_iterations': .*set init\.checkpoint"):
        RunSettings.from_dict({"init": {"value_warmup_iterations": 3}})
    with pytest.raises(ValueError, match=r"^config 'init\.value_warmup_iterations': "):
        RunSettings.from_dict({"init": {"value_warmup_iterations": 3, "teacher": "scripted"}})  # a teacher unused
    s = RunSettings.from_dict({"init": {"value_warmup_iterations": 3, "actor_lr_warmup_iterations": 2,
                                        "teacher": "scripted"}, "schedules": {"kickstart_coeff": 0.5}})
    assert (s.init.value_warmup_iterations, s.init.actor_lr_warmup_iterations) == (3, 2)
    assert RunSettings.from_dict(s.to_dict()) == s
    with pytest.raises(ValueError, match=r"^config 'init\.value_warmup_lr': must be null .* got 0$"):
        InitSettings.from_dict({"value_warmup_lr": 0})
    assert InitSettings.from_dict({"value_warmup_lr": 1e-3}).value_warmup_lr == 1e-3
    with pytest.raises(ValueError, match=r"^config 'reward\.normalize_scope': must be one of \['run', 'process'\]"):
        RunSettings.from_dict({"reward": {"normalize_scope": "runner"}})


def module_state(learner) -> dict:
    return {k: v.clone() for k, v in learner.module["main"].state_dict().items()}


def changed(before: dict, after: dict) -> set:
    return {k for k in before if not torch.equal(before[k], after[k])}


def test_a_critic_only_update_trains_the_critics_alone(ray_session):
    runner, learner = runner_and_learner(tiny_smoke(ppo__num_epochs=2, ppo__minibatch_size=32))
    episodes = runner.sample(num_timesteps=64, explore=True)
    before = module_state(learner)
    learner.set_value_warmup(critic_only=True, actor_lr_factor=0.0)
    results = learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)
    after = module_state(learner)
    # the value head and the win-probability head; nothing else, the normalizers included
    assert changed(before, after) == {f"{head}.{p}" for head in (VALUE_HEAD, WIN_HEAD) for p in ("weight", "bias")}
    optimizer = learner.get_optimizers_for_module("main")[0][1]
    warmup = learner._value_warmup
    assert all(p not in optimizer.state for p in warmup.actor_params)  # Adam's moments untouched too
    assert all(p in optimizer.state for p in warmup.value_params)
    assert results["main"]["value_warmup"] == 1.0
    # the usual update then trains the rest
    learner.set_value_warmup(critic_only=False, actor_lr_factor=1.0)
    learner.update(episodes=copy.deepcopy(episodes), minibatch_size=32, num_epochs=2)
    assert len(changed(after, module_state(learner))) > 10


def test_the_actor_learning_rate_factor_scales_the_policy_step(ray_session):
    torch.manual_seed(0)
    runner, learner = runner_and_learner(tiny_smoke(ppo__num_epochs=1, resources__learner_threads=1))
    episodes = runner.sample(num_timesteps=64, explore=True)  # 128 agent steps
    start = learner.get_state()
    steps = {}
    for factor in (1.0, 0.25):
        learner.set_state(start)
        learner.set_value_warmup(critic_only=False, actor_lr_factor=factor)
        before = module_state(learner)
        np.random.seed(0)  # the same order of sequences: the same gradients in both updates
        torch.manual_seed(0)
        learner.update(episodes=copy.deepcopy(episodes), minibatch_size=4096, num_epochs=1)  # one Adam step
        after = module_state(learner)
        steps[factor] = {k: after[k] - before[k] for k in before if "norm" not in k}
    moved = [k for k in steps[1.0] if steps[1.0][k].abs().max() > 1e-7]
    assert f"{VALUE_HEAD}.weight" in moved and len(moved) > 10
    for k in moved:
        expected = steps[1.0][k] * (1.0 if k.startswith((VALUE_HEAD, WIN_HEAD)) else 0.25)  # the critics: full rate
        torch.testing.assert_close(steps[0.25][k], expected, rtol=1e-3, atol=1e-6)  # float32 rounding of p


class Toy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.value_head = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)


def adam_step(module, optimizer):
    """One Adam step on a loss of every parameter; returns each parameter's step."""
    before = {k: v.clone() for k, v in module.state_dict().items()}
    optimizer.zero_grad()
    module.value_head(module.body(torch.ones(2, 3))).sum().backward()
    optimizer.step()
    return {k: module.state_dict()[k] - v for k, v in before.items()}


def test_the_hooks_apply_each_phase_to_the_optimizer_step():
    torch.manual_seed(0)
    module = Toy()
    warmup = ValueWarmup(module)
    optimizer = torch.optim.Adam(module.parameters(), lr=0.1)
    warmup.attach(optimizer)
    warmup.set_phase(WarmupPhase(critic_only=True, actor_lr_factor=0.0, value_lr=0.5))
    step = adam_step(module, optimizer)
    assert all(torch.equal(step[k], torch.zeros_like(step[k])) for k in ("body.weight", "body.bias"))
    # Adam's first step is lr * g / (|g| + eps): about the learning rate in size, here value_lr
    torch.testing.assert_close(step["value_head.weight"].abs(), torch.full((1, 4), 0.5), rtol=1e-4, atol=0)
    assert optimizer.param_groups[0]["lr"] == 0.1  # the scheduled rate is back after the step
    assert all(p not in optimizer.state for p in module.body.parameters())
    fresh = Toy()
    fresh.load_state_dict(module.state_dict())
    warmup = ValueWarmup(fresh)
    optimizer = torch.optim.Adam(fresh.parameters(), lr=0.1)
    warmup.attach(optimizer)
    warmup.set_phase(WarmupPhase(critic_only=False, actor_lr_factor=0.25))
    step = adam_step(fresh, optimizer)
    torch.testing.assert_close(step["body.bias"].abs(), torch.full((4,), 0.025), rtol=1e-3, atol=0)
    torch.testing.assert_close(step["value_head.bias"].abs(), torch.full((1,), 0.1), rtol=1e-4, atol=0)
    with pytest.raises(ValueError, match="value_lr"):
        warmup.set_phase(WarmupPhase(critic_only=True, value_lr=0.0))


def test_scaling_the_value_head_scales_its_predictions_alone():
    torch.manual_seed(0)
    module, x = Toy(), torch.randn(5, 3)
    before = module.value_head(module.body(x))
    body = {k: v.clone() for k, v in module.body.state_dict().items()}
    scale_value_head(module, 0.4)
    torch.testing.assert_close(module.value_head(module.body(x)), 0.4 * before)
    assert all(torch.equal(v, module.body.state_dict()[k]) for k, v in body.items())
    with pytest.raises(ValueError, match="> 0"):
        scale_value_head(module, 0.0)


def test_the_warmup_needs_a_value_head():
    with pytest.raises(ValueError, match="value_head"):
        ValueWarmup(torch.nn.Linear(3, 1))


def test_a_run_keeps_its_starting_policy_through_the_warmup(ray_session, no_home_results):
    from callbacks.value_warmup import ValueWarmupCallback

    cfg = tiny_smoke(init__teacher="scripted", schedules__kickstart_coeff=0.5, init__value_warmup_iterations=2,
                     init__actor_lr_warmup_iterations=1)
    algo = build_algo(cfg)

    def policy(state):  # everything but the critics
        return {k: v for k, v in state.items() if not k.startswith((VALUE_HEAD, WIN_HEAD))}

    def learner_state():
        return algo.learner_group.get_weights(module_ids=["main"])["main"]

    try:
        start = learner_state()
        assert ValueWarmupCallback.of(algo).start == 0
        for it in (1, 2):
            result = algo.train()
            assert result["value_warmup"] == {"critic_only": 1.0, "actor_lr_factor": 0.0}
            assert result["learners"]["main"]["value_warmup"] == 1.0
            now = learner_state()
            assert all((now[k] == v).all() for k, v in policy(start).items()), f"iteration {it} moved the policy"
            assert not (now[f"{VALUE_HEAD}.weight"] == start[f"{VALUE_HEAD}.weight"]).all()
            # the env runner acts with the starting policy (the local one samples in this config)
            acting = algo.env_runner.module["main"].get_state()
            assert all((acting[k] == v).all() for k, v in policy(start).items())
        result = algo.train()
        assert result["value_warmup"] == {"critic_only": 0.0, "actor_lr_factor": 0.5}
        now = learner_state()
        assert any(not (now[k] == v).all() for k, v in policy(start).items())
        assert algo.train()["value_warmup"] == {"critic_only": 0.0, "actor_lr_factor": 1.0}
    finally:
        algo.stop()


def test_the_win_heads_step_is_its_factor_times_adams():
    """ppo.win_head_lr_factor k: the win head's parameters move k times the step Adam took, the others as Adam
    stepped (policies/learning/win_head_step.py)."""
    from policies.learning.win_head_step import WinHeadStep

    class WithWinHead(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.win_head = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)

    steps = {}
    for factor in (1.0, 4.0):
        torch.manual_seed(0)
        module = WithWinHead()
        optimizer = torch.optim.Adam(module.parameters(), lr=0.01)
        WinHeadStep(module, factor).attach(optimizer)
        before = {k: v.clone() for k, v in module.state_dict().items()}
        for _ in range(2):  # two steps: the moments carry Adam's own steps, not the scaled ones
            optimizer.zero_grad()
            module.win_head(module.body(torch.ones(2, 3))).sum().backward()
            optimizer.step()
        steps[factor] = {k: module.state_dict()[k] - v for k, v in before.items()}
    for k, step in steps[4.0].items():
        expected = steps[1.0][k] * (4.0 if k.startswith(WIN_HEAD) else 1.0)
        if k.startswith(WIN_HEAD):
            torch.testing.assert_close(step, expected, rtol=1e-4, atol=1e-7)
        else:  # the body's gradients read the moved head at the second step
            assert step.abs().max() > 0
    with pytest.raises(ValueError, match="must be > 0"):
        WinHeadStep(WithWinHead(), 0.0)
