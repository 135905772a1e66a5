"""Starting from pretrained weights (init.checkpoint, callbacks/init_weights.py) and the kickstart loss (the
kickstart_coeff schedule: KL from a frozen teacher module to the policy, policies/five_learner.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from test_training_e2e import build_algo, tiny_smoke


def saved_module(path, cfg, seed=3, scale=1.0):
    """A module of the run's layout with its own random weights (times `scale`), saved as an RLModule checkpoint."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from app.algorithm import make_training_env
    from policies.five_module import FiveModelConfig, FiveRLModule
    env = make_training_env({**cfg["env"], "seed": 0})
    a0 = env.possible_agents[0]
    torch.manual_seed(seed)
    module = RLModuleSpec(module_class=FiveRLModule, observation_space=env.observation_spaces[a0],
                          action_space=env.action_spaces[a0],
                          model_config=dict(FiveModelConfig.from_dict(cfg["model"]).__dict__)).build()
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(scale)
    module.save_to_path(str(path))
    return {k: np.asarray(v) for k, v in module.get_state().items()}


def test_a_run_starts_from_the_checkpoint_and_its_kickstart_loss_starts_at_zero(ray_session, no_home_results,
                                                                               tmp_path):
    cfg = tiny_smoke(resources__num_env_runners=1)
    weights = saved_module(tmp_path / "clone", cfg)
    cfg = tiny_smoke(resources__num_env_runners=1, init__checkpoint=str(tmp_path / "clone"),
                     schedules__kickstart_coeff={"points": [[0, 1.0], [2, 0.0]]})
    algo = build_algo(cfg, whole_batch=True)  # one gradient step on the whole batch: the teacher is the policy
    try:
        start = algo.learner_group.get_weights(module_ids=["main"])["main"]
        assert all(np.array_equal(np.asarray(start[k]), weights[k]) for k in weights)
        on_runner = algo.env_runner_group.foreach_env_runner(
            lambda er: {k: np.asarray(v) for k, v in er.module["main"].get_state().items()},
            local_env_runner=False)[0]
        assert all(np.array_equal(on_runner[k], weights[k]) for k in weights)
        r = algo.train()
        main = r["learners"]["main"]
        assert main["kickstart_coeff"] == pytest.approx(1.0)
        assert main["kickstart_kl"] == pytest.approx(0.0, abs=1e-5)  # the policy is still the teacher
        assert r["schedule"]["kickstart_coeff"] == pytest.approx(1.0)
        for _ in range(2):
            r = algo.train()
        assert r["schedule"]["kickstart_coeff"] == 0.0  # annealed away: no teacher pass, no KL
        assert r["learners"]["main"]["kickstart_coeff"] == 0.0 and np.isnan(r["learners"]["main"]["kickstart_kl"])
    finally:
        algo.stop()


def test_a_checkpoint_of_another_layout_is_refused_naming_the_key(ray_session, no_home_results, tmp_path):
    saved_module(tmp_path / "bigger", tiny_smoke(model__lstm_size=48))
    algo = None
    with pytest.raises(Exception, match="init.checkpoint"):
        algo = build_algo(tiny_smoke(resources__num_env_runners=0, init__checkpoint=str(tmp_path / "bigger")))
    if algo is not None:
        algo.stop()
