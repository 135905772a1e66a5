"""One reward scale for the whole run (``reward.normalize_scope: run``, the default; issue 29, item 3).

Five Table 2 footnote c divides rewards by a running std of the discounted returns. Kept per env runner process, as
before (``normalize_scope: process``), two runners scale the same returns differently and both scales drift with
their own games. With the run's scope, ``RewardScaleCallback.scaler`` on the driver (a ReturnScaler) holds the run's
statistics of discounted returns, and after every iteration (``on_train_result``):

1. every env runner that samples hands over its envs' statistics since the last sync (count, mean, M2 of their
   discounted returns: ``PostprocessedRewardEnv.take_return_stats``), merged into the run's (Chan et al.: exact for
   any split of the returns over runners and rounds);
2. the run's std goes to every env of every env runner (``set_return_std``), which divide by it until the next sync:
   the std of a sampling round is fixed for the round, the same on every runner (1 in the first round, before any
   statistics; with ``ppo.staleness: 1`` the sync waits for the batch being sampled ahead, which keeps the std it
   started with);
3. with ``reward.rescale_value_head`` (the default), the value head's weights are multiplied by the old std over the
   new one on the learner and on every env runner (whose weights are the learner's at that point), so that the
   values it predicts, the runners' too (GAE takes theirs), are in the new scale (PopArt's preserved outputs,
   van Hasselt et al. 2016): a change of scale no longer shows as a value error;
4. the statistics are handed to the learner (``FivePPOLearner.reward_scale_state``), so that every checkpoint has them;
   a restored checkpoint (``--resume``, ``init.restore``) brings them back (``on_checkpoint_loaded``) and the
   runners get its std before they sample.

The local env runner is read only when it is the one that samples (no remote env runners); evaluation games play
MobaEnv without the reward wrapper, and scripts that build the wrapper by hand keep the process-wide scaler: neither
touches the run's statistics. Recreated env runners get the std again. ``result["reward_scale"]``: the std of the next
round, the returns behind it, this round's returns, the spread of the runners' own stds this round (what each
would have divided by on its own) and the value head's rescale."""
from __future__ import annotations

import time

import numpy as np
from ray.rllib.utils.annotations import override

from moba.env.reward_wrapper import ReturnScaler
from policies.learning.value_warmup import scale_value_head
from policies.model.module_ids import MAIN
from training.settings import run_settings
from callbacks import RunCallback

RESULT_KEY = "reward_scale"


def reward_envs(env_runner) -> list:
    """The reward wrappers (PostprocessedRewardEnv) of an env runner's envs that normalize by the run's std."""
    env = getattr(env_runner, "env", None)
    if env is None:  # the local runner has no env when there are remote runners
        return []
    out = []
    for e in getattr(env, "envs", [env]):
        target = getattr(e, "unwrapped", e)
        while target is not None and not hasattr(target, "take_return_stats"):
            target = getattr(target, "env", None)
        if target is not None and target.normalize_scope == "run":
            out.append(target)
    return out


def take_runner_stats(env_runner) -> list:
    """An env runner's part: each env's (count, mean, M2) since the last sync, cleared."""
    return [e.take_return_stats() for e in reward_envs(env_runner)]


def set_runner_std(std: float, discard: bool = False, value_head_ratio: float = 1.0):
    """A function of an env runner that sets `std` on its envs and multiplies its "main" module's value head by
    `value_head_ratio`; with `discard`, the statistics they gathered since the last sync are dropped (after a
    restore: they belong to no run's statistics)."""
    def apply(env_runner):
        module = getattr(env_runner, "module", None)
        if value_head_ratio != 1.0 and module is not None and MAIN in module.keys():
            scale_value_head(module[MAIN].unwrapped(), value_head_ratio)
        for e in reward_envs(env_runner):
            if discard:
                e.take_return_stats()
            e.set_return_std(std)
        return len(reward_envs(env_runner))
    return apply


def normalizes_by_run(config) -> bool:
    reward = run_settings(config).reward
    return reward.normalize and reward.normalize_scope == "run"


def learner_rescale(ratio: float):
    def apply(learner):
        learner.rescale_value_head(ratio)
    return apply


class RewardScaleCallback(RunCallback):
    """The run's reward scale (module docstring): ``scaler`` holds the run's return statistics on the driver (None
    when the run does not normalize by the run's std), ``std`` the std the env runners divide by now."""

    def __init__(self):
        super().__init__()
        self.scaler: ReturnScaler | None = None
        self.std = 1.0  # the runners' until the first sync (RunReturnScaler)

    @override(RunCallback)
    def on_algorithm_init(self, *, algorithm, **kwargs):
        if normalizes_by_run(algorithm.config):
            self.scaler = ReturnScaler()

    @override(RunCallback)
    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        if self.scaler is None:
            return
        results = algorithm.learner_group.foreach_learner(lambda learner: learner.reward_scale_state)
        state = next((s for s in (r.get() if hasattr(r, "get") else r for r in results) if s), None)
        if state:
            self.scaler = ReturnScaler.from_state_dict(state)
            self._share_state(algorithm)
        # the checkpoint's value head is already in the scale of its std (rescaled when that std was set)
        self.std = self.scaler.std
        algorithm.env_runner_group.foreach_env_runner(set_runner_std(self.std, discard=True), local_env_runner=True)

    @override(RunCallback)
    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices, is_evaluation,
                                 **kwargs):
        if self.scaler is None or is_evaluation:
            return
        env_runner_group.foreach_env_runner(set_runner_std(self.std), remote_worker_ids=env_runner_indices,
                                            local_env_runner=False)

    @override(RunCallback)
    def on_train_result(self, *, algorithm, result, **kwargs):
        if self.scaler is None:
            return
        t0 = time.time()
        group = algorithm.env_runner_group
        # the runners that sample: the remote ones, or the local one when there are none
        parts = group.foreach_env_runner(take_runner_stats, local_env_runner=group.num_remote_env_runners() == 0)
        round_returns, runner_stds = 0, []
        for part in parts:
            runner = ReturnScaler()
            for count, mean, m2 in part:
                runner.merge(count, mean, m2)
                self.scaler.merge(count, mean, m2)
            round_returns += runner.count
            if runner.count > 1:
                runner_stds.append(float(np.sqrt(runner.m2 / (runner.count - 1))))
        std = self.scaler.std
        ratio = self.std / std if run_settings(algorithm.config).reward.rescale_value_head else 1.0
        if ratio != 1.0:  # the learner's and the runners' value heads alike (the runners hold the learner's weights)
            algorithm.learner_group.foreach_learner(learner_rescale(ratio))
        group.foreach_env_runner(set_runner_std(std, value_head_ratio=ratio), local_env_runner=True)
        self.std = std
        self._share_state(algorithm)
        result[RESULT_KEY] = {
            "std": std, "value_head_ratio": ratio, "returns": self.scaler.count, "round_returns": round_returns,
            "runner_std_min": min(runner_stds, default=float("nan")),
            "runner_std_max": max(runner_stds, default=float("nan")),
            "callback_s": time.time() - t0,
        }

    def _share_state(self, algorithm):
        """The statistics to the learner's state, so that the next checkpoint has them."""
        state = self.scaler.state_dict()
        algorithm.learner_group.foreach_learner(lambda learner: learner.set_reward_scale_state(state))
