"""GAE on the values the env runners computed while acting (Five app. C: GAE with lambda 0.95).

RLlib's ``GeneralAdvantageEstimation`` learner connector runs the value network over the whole train batch before
the first gradient step: a second forward pass of every sample (10% of a 5v5 iteration in the throughput profile).
In synchronous PPO the env runners act with the learner's current weights and observation statistics, so the values
they computed while acting are those values. The batched env runner (training/batched_env_runner.py) keeps each step's
value (``Columns.VF_PREDS``) and, for a chunk that does not end the game, the value of the observation after its last
step (``BOOTSTRAP_VALUE`` in the episode's ``custom_data``). ``RunnerValueGAE`` computes advantages and value targets
from those, as RLlib's connector does from its own forward pass; episodes without them (RLlib's classic env runner)
go through RLlib's connector unchanged.

Both paths read the batch as RLlib's connectors built it: one row of zero-padded sequences per batch key, which for a
single-agent episode of a multi-agent run is (``multi_agent_episode_id``, agent, module). Two chunks under one key
share one row, and the per-episode lengths no longer describe it: the GAE inputs would be read out of line, or past
the batch's end. ``RunnerValueGAE`` refuses such a batch (``batch_key``); the batched runner gives every chunk its own
ids.

With ``win_coeff`` > 0 the advantages get an outcome term beside GAE's (``ppo.win_advantage_coeff``,
training/settings.py): ``win_coeff * (label - p_t)``, where p_t is the win probability the module predicted at step t
while acting (the auxiliary head, Five app. D) and the label is that head's (policies/learning/win_label.py): 1 or 0
in a chunk that ends the game won or lost outright, at the time limit by the run's rule for capped games (0.5 under
"draw"), otherwise the prediction at the chunk's end. It is the temporal difference of the win probability over the
rest of the chunk, undiscounted: credit for the win that reaches past GAE's horizon (``schedules.gae_horizon_s``), at
the scale of a probability, added after GAE's advantages are standardized. The term of each real step is kept in the
batch (``WIN_ADVANTAGE``).
"""
from __future__ import annotations

import numpy as np
import torch
from scipy.signal import lfilter
from ray.rllib.connectors.learner import GeneralAdvantageEstimation
from ray.rllib.core.columns import Columns
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.utils.annotations import override
from ray.rllib.utils.numpy import convert_to_numpy
from ray.rllib.utils.postprocessing.value_predictions import compute_value_targets
from ray.rllib.utils.postprocessing.zero_padding import unpad_data_if_necessary

from policies.league.ratings import LIMIT_DRAW
from policies.learning.win_label import episode_label, episode_win_predictions
from policies.learning.zero_padding import pad_episodes

BOOTSTRAP_VALUE = "bootstrap_value"  # episode.custom_data key: V(observation after the chunk's last step)
ADVANTAGE_STD_FLOOR = 1e-4  # RLlib's: advantages are standardized by max(floor, std)
WIN_ADVANTAGE = "win_advantage"  # the batch column of the outcome term (before win_coeff), with win_coeff > 0


def discounted_returns(rewards: np.ndarray, gamma: float) -> np.ndarray:
    """G_t = r_t + gamma G_{t+1}, with G = 0 after the last step (float64)."""
    return lfilter([1.0], [1.0, -gamma], np.asarray(rewards, np.float64)[::-1])[::-1]


def runner_values(episode) -> np.ndarray | None:
    """The values of an episode chunk that ``AddOneTsToEpisodesAndTruncate`` extended by one step: the runner's value
    of each real step, then the bootstrap value at the artificial one; None if the runner did not record them."""
    if BOOTSTRAP_VALUE not in episode.custom_data or Columns.VF_PREDS not in episode.extra_model_outputs:
        return None
    steps = np.asarray(episode.get_extra_model_outputs(Columns.VF_PREDS, slice(0, len(episode) - 1)), np.float32)
    return np.append(steps, np.float32(episode.custom_data[BOOTSTRAP_VALUE]))


def win_advantages(episode, time_limit_outcome: str) -> np.ndarray:
    """label - p_t for every step of an episode chunk (the module docstring; capped games decided by
    `time_limit_outcome`, as the label is); the steps' predictions must be there."""
    preds = episode_win_predictions(episode)
    if len(preds) != len(episode):
        raise ValueError(f"ppo.win_advantage_coeff needs the win probability of every step of an episode chunk; a "
                         f"chunk of {len(episode)} steps has {len(preds)} (an env runner that does not record them)")
    return np.float32(episode_label(episode, preds, time_limit_outcome)) - preds


def batch_key(episode) -> tuple:
    """The key under which RLlib's connectors (``ConnectorV2.add_batch_item``) put a single-agent episode's data."""
    if episode.agent_id is not None:
        return episode.multi_agent_episode_id, episode.agent_id, episode.module_id
    return (episode.id_,)


def check_one_chunk_per_key(sa_episodes: list):
    """Raises ValueError if two episodes of a batch share a batch key (module docstring)."""
    seen = {}
    for i, e in enumerate(sa_episodes):
        key = batch_key(e)
        if key in seen:
            raise ValueError(f"episodes {seen[key]} and {i} of the learner's batch share the batch key {key} "
                             f"(t_started {sa_episodes[seen[key]].t_started} and {e.t_started}): RLlib's connectors "
                             "would merge them into one sequence row; give each chunk its own multi_agent_episode_id")
        seen[key] = i


class RunnerValueGAE(GeneralAdvantageEstimation):
    """RLlib's GAE connector, on the env runners' values when every episode carries them; a batch with two chunks
    under one batch key is refused, and ``win_coeff`` > 0 adds the outcome term (module docstring)."""

    def __init__(self, *args, win_coeff: float = 0.0, time_limit_outcome: str = LIMIT_DRAW, **kwargs):
        super().__init__(*args, **kwargs)
        self.win_coeff = float(win_coeff)
        self.time_limit_outcome = time_limit_outcome

    @override(GeneralAdvantageEstimation)
    def __call__(self, *, rl_module, episodes, batch, **kwargs):
        sa_episodes = list(self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False))
        check_one_chunk_per_key(sa_episodes)
        values = [runner_values(e) for e in sa_episodes]
        if not sa_episodes or any(v is None for v in values):
            return super().__call__(rl_module=rl_module, episodes=episodes, batch=batch, **kwargs)
        for module_id, module_batch in batch.items():
            mine = [i for i, e in enumerate(sa_episodes) if e.module_id in (None, module_id)]
            if not mine or not hasattr(rl_module[module_id], "compute_values"):
                continue
            lens = [len(sa_episodes[i]) for i in mine]
            vf_preds = np.concatenate([values[i] for i in mine])

            def unpadded(column):
                return unpad_data_if_necessary(lens, convert_to_numpy(module_batch[column]))

            targets = compute_value_targets(values=vf_preds, rewards=unpadded(Columns.REWARDS),
                                            terminateds=unpadded(Columns.TERMINATEDS),
                                            truncateds=unpadded(Columns.TRUNCATEDS), gamma=self.gamma,
                                            lambda_=self.lambda_)
            advantages = targets - vf_preds
            advantages = (advantages - advantages.mean()) / max(ADVANTAGE_STD_FLOOR, advantages.std())
            columns = [(Postprocessing.ADVANTAGES, advantages), (Postprocessing.VALUE_TARGETS, targets)]
            if self.win_coeff > 0:
                win = np.concatenate([win_advantages(sa_episodes[i], self.time_limit_outcome) for i in mine])
                advantages += self.win_coeff * win
                columns.append((WIN_ADVANTAGE, win))
            module = rl_module[module_id]
            device = module_batch[Columns.REWARDS].device
            for key, data in columns:
                if module.is_stateful():
                    data = pad_episodes(data, lens, module.model_config["max_seq_len"])
                module_batch[key] = torch.from_numpy(np.ascontiguousarray(data, np.float32)).to(device)
        return batch
