"""The PPO learner for the OpenAI Five module.

On top of RLlib's PPO loss (clipped surrogate, clipped value loss, entropy bonus, optional KL):

- dual-clip PPO (HoK app. G and H.1): for negative advantages the surrogate is bounded below by c * A, c = 3;
- the entropy bonus on the whole action's entropy or on each head's (``ppo.entropy_bonus``, training/settings.py),
  each head's part weighted by ``ppo.entropy_head_weights``;
- the auxiliary win-probability head (Five app. D), trained with a small weight on the label of eq. 10;
- the kickstart loss (Schmitt et al. 2018) towards a teacher module or agent (policies/learning/kickstart.py),
  weighted by the kickstart_coeff schedule;
- self-imitation (Oh et al. 2018; ``ppo.self_imitation_coeff`` > 0, policies/learning/self_imitation.py): the last
  chunks of the games "main" won outright, kept in a buffer and trained on again where their return passed the value;
- the running observation statistics of the module merge every observation of an update's episodes once, after its
  gradient steps (app. E), so that all minibatches of an update normalize as the env runners did when they acted;
- GAE uses the values the env runners computed while acting when they recorded them (policies/learning/advantages.py),
  instead of a second forward pass over the batch;
- the batch's time axis is cut and zero-padded by numpy (policies/learning/zero_padding.py), RLlib's rows without its
  per-sequence Python loop, and the bootstrap step's columns are arrays (policies/learning/bootstrap_step.py), not one
  Python item per step;
- the torch thread count of each minibatch is measured and chosen (policies/learning/learner_threads.py) unless fixed;
- the staleness of the data (app. M: the learner's parameter version minus the version that acted) is logged;
- the opponent pool's, the curriculum's, Jump-Start RL's and the start stages' states and the run's return statistics
  (the reward scale) ride in the learner's state (``league_state``, ``curriculum_state``, ``jump_start_state``,
  ``start_stages_state``, ``reward_scale_state``), so that checkpoints carry them;
- the value warm-up (policies/learning/value_warmup.py, ``set_value_warmup``): critic-only updates that keep the
  policy bit for bit, then the policy's learning rate warmed up from 0;
- ``set_schedule_values`` applies the hyperparameter schedules (app. C): learning rate, entropy coefficient, the
  GAE discount and the kickstart loss's weight;
- Adam's betas come from the run config (Table 2), which RLlib's default optimizer would ignore.

Settings come from ``config.learner_config_dict[SETTINGS_KEY]``, the run's settings as plain nested dicts
(training/settings.RunSettings.to_dict(); this layer sits below training): ``ppo`` ``dual_clip`` (None or c),
``aux_win_coeff``, ``entropy_bonus`` ("action" or "heads"), ``entropy_head_weights``, ``adam_beta1``,
``adam_beta2``; ``resources`` ``learner_threads``; ``init`` ``teacher``.
"""
from __future__ import annotations

import ctypes
import functools
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
import tree
from ray.rllib.algorithms.ppo.ppo import (LEARNER_RESULTS_KL_KEY, LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY,
                                          LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY)
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.connectors.common.add_time_dim_to_batch_and_zero_pad import AddTimeDimToBatchAndZeroPad
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate, GeneralAdvantageEstimation
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.learner import ENTROPY_KEY, POLICY_LOSS_KEY, VF_LOSS_KEY
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.annotations import override
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO
from ray.rllib.utils.torch_utils import explained_variance

from moba.env.actions import PRIMARY_NAMES
from policies.learning.advantages import WIN_ADVANTAGE, RunnerValueGAE
from policies.learning.bootstrap_step import FastBootstrapStep
from policies.learning.self_imitation import (SIL_RETURN, SIL_STEP, AddSelfImitationReturn, SelfImitationBuffer,
                                              self_imitation_loss)
from policies.learning.kickstart import (TEACHER_ACTION, TeacherClassWeights, agent_teacher, capped_nll, kickstart_on,
                                         label_action, teacher_nll_by_head)
from policies.learning.learner_threads import ThreadChooser
from policies.learning.value_warmup import ValueWarmup, WarmupPhase, scale_value_head
from policies.learning.win_head_step import WinHeadStep
from policies.learning.zero_padding import FastTimeDimZeroPad
from policies.learning import update_diagnostics as diag
from policies.learning.win_label import WIN_LABEL
from policies.model.five_module import TEAM_ENCODER_KEYS, TEAM_STEP, WIN_LOGIT
from policies.model.module_ids import MAIN

SETTINGS_KEY = "five_run"  # learner_config_dict: the run's settings (training/settings.RunSettings.to_dict())
LEAGUE_STATE_KEY = "five_league_pool"
CURRICULUM_STATE_KEY = "five_curriculum"
JUMP_START_STATE_KEY = "five_jump_start"
START_STAGES_STATE_KEY = "five_start_stages"
REWARD_SCALE_STATE_KEY = "five_reward_scale"
SAMPLES_OPTIMIZED = "samples_optimized"
AUX_WIN_COEFF = 0.01  # app. D: win probability "passes gradients ... with a very small weight"
# ppo.target_kl's default: an update stops before a minibatch whose approx_kl passes it (Spinning Up's PPO stops at
# 1.5 x 0.01; Stable-Baselines3 at 1.5 x target_kl). Not in Five (sec. 4.4: large batches reused ~once need no stop)
TARGET_KL = 0.02
# devices on which torch's fused Adam runs (configure_optimizers_for_module)
FUSED_ADAM_DEVICES = ("cpu", "cuda")
# the loss's terms, in the order they are added (compute_loss_for_module); metrics grad_norm_<term>
LOSS_TERMS = ("policy", "value", "entropy", "kl_penalty", "kickstart", "win_probability", "self_imitation")


# glibc's malloc: blocks above the mmap threshold go back to the OS when freed, so each minibatch would page-fault its
# large tensors (the (units, hidden) activations, ~25 MB in 5v5) afresh: 5-10% of a CPU update. The learner keeps them.
MALLOC_MMAP_THRESHOLD = 32 << 20  # bytes: glibc's largest allowed value on 64-bit systems
MALLOC_TRIM_THRESHOLD = 1 << 30  # bytes of free heap top before glibc returns it to the OS
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


def fused_adam(params: list) -> bool | None:
    """torch.optim.Adam's `fused` for these parameters: True where torch's fused Adam runs them (floating point, on
    the CPU or a CUDA device), None (torch's choice) elsewhere."""
    ok = bool(params) and all(p.is_floating_point() and p.device.type in FUSED_ADAM_DEVICES for p in params)
    return True if ok else None


def keep_freed_memory() -> bool:
    """Raises glibc's thresholds so that freed tensor memory is reused instead of returned to the OS; False where
    the C library is not glibc (nothing changed)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD)
                    and libc.mallopt(M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False


def shuffle_by_team(batch: SampleBatch, module) -> SampleBatch:
    """SampleBatch.shuffle for a zero-padded batch of sequences, by team: the sequences of a team's heroes over the
    same steps stay next to each other (in a random order of teams), so that a minibatch holds whole teams and the
    module encodes each team once (policies/model/five_module.py). Teammates are found as the module finds them: by
    their ``TEAM_STEP`` number at the first step of their sequences where the batch has one, else by equal team inputs
    there."""
    n = len(batch[SampleBatch.SEQ_LENS])
    if TEAM_STEP in batch:  # the sequences of one team over the same steps start at one number
        group = torch.unique(torch.as_tensor(batch[TEAM_STEP][:, 0]), return_inverse=True)[1]
    else:
        _, group = module.team_groups({k: batch[Columns.OBS][k][:, 0] for k in TEAM_ENCODER_KEYS})
    group = np.arange(n) if group is None else group.cpu().numpy()
    rank = np.random.permutation(int(group.max()) + 1)[group]  # a random position for each team
    permutation = np.argsort(rank, kind="stable")
    data = dict(batch)
    infos = data.pop(Columns.INFOS, None)
    batch.update(tree.map_structure(lambda v: v[permutation], data))
    if infos is not None:
        batch[Columns.INFOS] = [infos[i] for i in permutation]
    batch.intercepted_values = {}
    return batch


def dual_clip_surrogate(adv, ratio, clip: float, dual_clip: float | None):
    """PPO's clipped surrogate; with dual_clip c, for A < 0 it is max(min(rA, clip(r)A), cA) (HoK H.1)."""
    surrogate = torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip, 1 + clip))
    if dual_clip is not None:
        surrogate = torch.where(adv < 0, torch.max(surrogate, dual_clip * adv), surrogate)
    return surrogate


class RealSteps:
    """The real steps of a minibatch: RLlib's loss mask (the LSTM's zero padding left out), all steps without one."""

    def __init__(self, batch):
        mask = batch.get(Columns.LOSS_MASK)
        self.mask = torch.ones_like(batch[Columns.ACTION_LOGP], dtype=torch.bool) if mask is None else mask
        self.count = self.mask.sum().clamp_min(1)

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        """`x` (one value per step) averaged over the real steps."""
        return x[self.mask].sum() / self.count


def run_settings_dict(config) -> dict:
    """The run's settings of an AlgorithmConfig as plain nested dicts (training.settings.run_settings gives them
    typed, a layer above)."""
    return config.learner_config_dict[SETTINGS_KEY]


class FivePPOLearner(PPOTorchLearner):
    @override(PPOTorchLearner)
    def build(self):
        super().build()
        self._entropy_coeff = None  # None: RLlib's own (constant or scheduled) value
        self.league_state = None  # the opponent pool's state (callbacks/league_play.py), saved with the learner
        self.curriculum_state = None  # the curriculum's state (callbacks/opponents.py), saved with the learner
        self.jump_start_state = None  # Jump-Start RL's stage (callbacks/opponents.py), saved with the learner
        self.start_stages_state = None  # the start stages' stage (callbacks/opponents.py), saved with the learner
        self.reward_scale_state = None  # the run's return statistics (callbacks/reward_scale.py), saved likewise
        self._setup_value_warmup()
        settings = run_settings_dict(self.config)
        pipeline = self._learner_connector
        if pipeline is not None:
            for i, c in enumerate(pipeline.connectors):
                if type(c) is GeneralAdvantageEstimation:  # GAE on the env runners' values (PPO appended it last)
                    pipeline.connectors[i] = RunnerValueGAE(
                        gamma=c.gamma, lambda_=c.lambda_, win_coeff=settings["ppo"]["win_advantage_coeff"],
                        time_limit_outcome=settings["opponents"]["time_limit_outcome"])
                elif type(c) is AddOneTsToEpisodesAndTruncate:  # the same bootstrap step, its columns as arrays
                    pipeline.connectors[i] = FastBootstrapStep()
                elif type(c) is AddTimeDimToBatchAndZeroPad:  # the same rows, cut by numpy
                    pipeline.connectors[i] = FastTimeDimZeroPad(input_observation_space=c.input_observation_space,
                                                                input_action_space=c.input_action_space,
                                                                as_learner_connector=c._as_learner_connector)
        self._kickstart_coeff = 0.0  # set by the kickstart_coeff schedule
        self._teacher = None  # the kickstart loss's frozen teacher module (config init.teacher)
        # an agent teacher (init.teacher: scripted_3): its actions come from the env runners (TEACHER_ACTION)
        self._teacher_agent = agent_teacher(settings["init"]["teacher"])
        # its loss's steps weighted by the class of its primary action (ppo.kickstart_class_weight_power)
        self._teacher_weights = TeacherClassWeights(settings["ppo"]["kickstart_class_weight_power"],
                                                    settings["ppo"]["kickstart_class_logit_adjust"],
                                                    settings["ppo"]["kickstart_class_weight_heads"])
        teacher = None if self._teacher_agent else settings["init"]["teacher"]
        if teacher:
            from policies.league.references import load_module
            self._teacher = load_module(teacher).to(self._device).eval()
            for p in self._teacher.parameters():
                p.requires_grad_(False)
            mine = self.module[MAIN].unwrapped().get_initial_state()["h"].shape
            if self._teacher.get_initial_state()["h"].shape != mine or not hasattr(self._teacher, "team_groups"):
                raise ValueError(f"init.teacher {teacher!r}: the kickstart teacher must be an OpenAI Five module with "
                                 f"the policy's LSTM size {mine[0]} (it reads the policy's LSTM state)")
        threads = int(settings["resources"]["learner_threads"])
        self._threads = ThreadChooser(os.cpu_count() or 1) if threads == 0 and self._device.type == "cpu" else None
        self._fixed_threads = threads or None
        if self._device.type == "cpu":
            keep_freed_memory()
        self._updates = 0  # updates started (the diagnostics run every ppo.diagnostics_every of them)
        ppo = settings["ppo"]
        # self-imitation's buffer of won games' last chunks (None: off)
        self._sil = SelfImitationBuffer(ppo["self_imitation_buffer_steps"]) if ppo["self_imitation_coeff"] > 0 else None
        self._sil_rng = np.random.default_rng(int(self.config.seed or 0))
        self._shuffle_first_epoch = False  # the update's shuffle_batch_per_epoch (_create_iterator_if_necessary)
        self._new_update(count=False)

    @override(PPOTorchLearner)
    def configure_optimizers_for_module(self, module_id, config=None):
        """RLlib's Adam, with the run config's betas (Table 2: 0.9, 0.999); the learning rate is RLlib's (constant,
        or set per iteration by the lr schedule). Torch's fused Adam where the parameters allow it (floating point, on
        the CPU or a CUDA device): the same update in one kernel, where torch's default on the CPU loops over the
        parameters in Python (2.6 ms a step against 0.5 for the 5v5 module's 46 tensors, one thread, quiet machine)."""
        params = self.get_parameters(self._module[module_id])
        ppo = run_settings_dict(config)["ppo"]
        optimizer = torch.optim.Adam(params, betas=(ppo["adam_beta1"], ppo["adam_beta2"]), fused=fused_adam(params))
        self.register_optimizer(module_id=module_id, optimizer=optimizer, params=params, lr_or_lr_schedule=config.lr)

    def _fuse_adam_again(self):
        """Fused Adam again after an optimizer state was loaded: a saved state brings its own settings, and one saved
        before Adam was fused (older checkpoints) would turn it off. Adam's step counts go where fused Adam keeps
        them (a float32 on the parameter's device; the unfused keeps them on the CPU)."""
        for optimizer in self._named_optimizers.values():
            for group in optimizer.param_groups:
                group["fused"] = fused_adam(group["params"])
                if group["fused"]:
                    for p in group["params"]:
                        st = optimizer.state.get(p)
                        if st and "step" in st:
                            st["step"] = torch.as_tensor(st["step"], dtype=torch.float32, device=p.device)

    @override(PPOTorchLearner)
    def update(self, *args, **kwargs):
        """RLlib's update, then the observation statistics of its episodes merged into the running normalizers; the
        results of modules that do not train (the league's opponent slots) are left out: PPO syncs the weights of
        every module named in the results to the env runners, which would overwrite the past versions loaded into
        the slots with the learner's never-trained copies."""
        observations = self._observations_of(kwargs)  # before the connectors extend the episodes in place
        self._new_update()
        results = super().update(*args, **kwargs)
        for module_id, obs in observations.items():
            if not (module_id == MAIN and self._value_warmup.phase.critic_only):  # the warm-up keeps the policy's
                self.module[module_id].unwrapped().update_normalizers(obs, None)
        if isinstance(results, dict):
            for module_id in list(results):
                if module_id in self.module.keys() and not self.should_module_be_updated(module_id):
                    del results[module_id]
        return results

    # ---- the bounded update: ppo.target_kl ---------------------------------------------------------------------------
    def _new_update(self, count: bool = True):
        """Resets the per-update state (the KL stop, the minibatch count, the advantage sums) and counts the update."""
        self._updates += count
        self._minibatch = 0  # minibatches whose loss was computed in this update
        self._kl_stopped = False  # set by the loss of the minibatch whose approx_kl passed ppo.target_kl
        self._kl_at_start = 0.0  # the first minibatch's approx_kl: the data's staleness alone (0 when fresh)
        self._advantage_sums = {}  # primary action name -> [sum of advantages, steps] over the update
        self._diagnosed = False  # whether this update measured the diagnostics (NaN in its results otherwise)

    @override(PPOTorchLearner)
    def _create_iterator_if_necessary(self, **kwargs):
        """RLlib's minibatch iterator, its batch shuffled before the first epoch too when PPO shuffles between epochs
        (_make_batch_if_necessary), stopped once a minibatch's approx_kl has passed ppo.target_kl."""
        self._shuffle_first_epoch = bool(kwargs.get("shuffle_batch_per_epoch"))
        batch_iter = super()._create_iterator_if_necessary(**kwargs)
        if isinstance(batch_iter, dict):  # nothing to train
            return batch_iter
        return self._until_kl_stop(batch_iter)

    def _until_kl_stop(self, batch_iter):
        for minibatch in batch_iter:
            if self._kl_stopped:
                return
            yield minibatch

    @override(PPOTorchLearner)
    def apply_gradients(self, gradients_dict):
        """RLlib's optimizer step, skipped for the minibatch that passed ppo.target_kl (its gradients are dropped).
        RLlib checks each gradient for inf and NaN on its own, twice, and each check waits on a GPU (~100 waits a
        minibatch here); one check of all of them together decides instead (their total norm is finite only if every
        entry is: one fused norm, where a check per tensor cost 1.5 ms a minibatch on the CPU), and RLlib's own path
        handles the rare non-finite gradient (or an lr scheduler or grad scaler of RLlib's, which this project does not
        use)."""
        if self._kl_stopped:
            return
        grads = list(gradients_dict.values())
        if (self._lr_scheduler_classes is not None or self._grad_scalers is not None or not grads
                or not bool(torch.isfinite(torch.nn.utils.get_total_norm(grads)))):
            super().apply_gradients(gradients_dict)
            return
        for pid, grad in gradients_dict.items():
            self._params[pid].grad = grad
        for module_id, optimizer_names in self._module_optimizers.items():
            for name in optimizer_names:
                self.get_optimizer(module_id, name).step()

    def _check_target_kl(self, approx_kl: float):
        """Stops the update once it has moved the policy ppo.target_kl from where the update started. The KL is
        measured from the policy that sampled; with ppo.staleness 1 that policy is one update behind, so the first
        minibatch (before any step of this update) already shows the last update's KL, which this update does not
        count (else every other update would stop at its first minibatch)."""
        if self._minibatch == 1:
            self._kl_at_start = approx_kl
        target = run_settings_dict(self.config)["ppo"]["target_kl"]
        if target and approx_kl - self._kl_at_start > target:
            self._kl_stopped = True

    @override(PPOTorchLearner)
    def after_gradient_based_update(self, *, timesteps):
        """PPO's own (the entropy and KL coefficients), then the update's figures: the minibatches it applied, whether
        ppo.target_kl stopped it, and the mean advantage of each primary action over its minibatches."""
        super().after_gradient_based_update(timesteps=timesteps)
        if MAIN not in self.module.keys() or not self.should_module_be_updated(MAIN):
            return
        nan = float("nan")  # a figure this update did not measure (window 1: else the last one would repeat)
        advantages = {name: total / n for name, (total, n) in self._advantage_sums.items()}
        self.metrics.log_dict({
            "minibatches_applied": self._minibatch - int(self._kl_stopped), "kl_stopped": float(self._kl_stopped),
            "approx_kl_at_start": self._kl_at_start,
            **{f"{diag.ADVANTAGE_PREFIX}{name}": advantages.get(name, nan) for name in PRIMARY_NAMES},
            **({} if self._diagnosed else {**{f"{diag.TERM_GRAD_PREFIX}{t}": nan for t in LOSS_TERMS},
                                           "gradient_noise_cosine": nan, "diagnostics_steps": nan}),
        }, key=MAIN, window=1)

    def _observations_of(self, update_kwargs: dict) -> dict:
        """Module id -> every observation of the update's episodes of that trained module, as (1, rows, ...) tensors
        (the layout update_normalizers reads)."""
        data = update_kwargs.get("training_data")
        episodes = data.episodes if data is not None else update_kwargs.get("episodes")
        if not episodes:
            return {}
        by_module = {}
        for e in ConnectorV2.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            module_id = e.module_id
            if len(e) == 0 or module_id not in self.module.keys() or not self.should_module_be_updated(module_id):
                continue
            if hasattr(self.module[module_id].unwrapped(), "update_normalizers"):
                by_module.setdefault(module_id, []).append(e.get_observations(slice(0, len(e))))
        return {m: {k: torch.from_numpy(np.concatenate([o[k] for o in obs])).unsqueeze(0).to(self._device)
                    for k in obs[0]} for m, obs in by_module.items()}

    @override(PPOTorchLearner)
    def _make_batch_if_necessary(self, training_data):
        """RLlib's train batch; when PPO shuffles between epochs (its shuffle_batch_per_epoch), shuffled before the
        first epoch as well. RLlib leaves the first epoch in the runners' order, game after game (and with one epoch
        never shuffles), so each minibatch held a few whole game chunks: a 1v1 minibatch of 2,000 steps two of the
        iteration's sixteen games, and the update's diagnostics one game. The sequences of a module that encodes
        teams once are always shuffled, by team (shuffle_by_team) instead of one by one, which would scatter a team
        over the minibatches: the runners' order interleaves the teams."""
        batch = super()._make_batch_if_necessary(training_data)
        for module_id, module_batch in batch.policy_batches.items():
            self._keep_won_games(module_id, module_batch)
            module = self.module[module_id].unwrapped()
            by_team = getattr(module, "team_size", 1) > 1 and module_batch.get(SampleBatch.SEQ_LENS) is not None
            if by_team:
                module_batch.shuffle = functools.partial(shuffle_by_team, module_batch, module)
            if len(module_batch) and (by_team or self._shuffle_first_epoch):  # teams: always whole in a minibatch
                module_batch.shuffle()
        return batch

    def _keep_won_games(self, module_id, module_batch):
        """Self-imitation: the won games' sequences of "main"'s batch into the buffer; the columns that mark them
        leave the batch (PPO's minibatches do not read them)."""
        if SIL_STEP not in module_batch:
            return
        if module_id == MAIN and self._sil is not None:
            added = self._sil.add(module_batch)
            self.metrics.log_dict({"self_imitation_added_steps": added, "self_imitation_buffer_steps": self._sil.steps},
                                  key=MAIN, window=1)
        for key in (SIL_STEP, SIL_RETURN):
            del module_batch[key]

    @override(PPOTorchLearner)
    def _update(self, batch):
        """One minibatch, with the torch thread count set (resources.learner_threads; 0: measured per minibatch,
        policies/learning/learner_threads.py). Set every time: building an env in this process (the local env runner,
        evaluation games) sets the process's threads back to the env runners' one thread."""
        threads = self._threads.pick() if self._threads is not None else self._fixed_threads
        if threads and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        if self._threads is None:
            return super()._update(batch)
        t = time.perf_counter()
        out = super()._update(batch)
        rows = sum(int(b[Columns.LOSS_MASK].sum()) if Columns.LOSS_MASK in b else len(b[Columns.REWARDS])
                   for b in batch.values())
        self._threads.record(threads, rows, time.perf_counter() - t)
        self.metrics.log_dict(self._threads.summary(), key="threads", window=1)
        return out

    # ---- league state: carried in the learner's state so that every checkpoint has it ----------------------------
    def set_league_state(self, state):
        self.league_state = state

    def set_curriculum_state(self, state):
        self.curriculum_state = state

    def set_jump_start_state(self, state):
        self.jump_start_state = state

    def set_start_stages_state(self, state):
        self.start_stages_state = state

    def set_reward_scale_state(self, state):
        self.reward_scale_state = state

    @override(PPOTorchLearner)
    def get_state(self, *args, **kwargs):
        state = super().get_state(*args, **kwargs)
        if self.league_state is not None:
            state[LEAGUE_STATE_KEY] = self.league_state
        if self.curriculum_state is not None:
            state[CURRICULUM_STATE_KEY] = self.curriculum_state
        if self.jump_start_state is not None:
            state[JUMP_START_STATE_KEY] = self.jump_start_state
        if self.start_stages_state is not None:
            state[START_STAGES_STATE_KEY] = self.start_stages_state
        if self.reward_scale_state is not None:
            state[REWARD_SCALE_STATE_KEY] = self.reward_scale_state
        return state

    @override(PPOTorchLearner)
    def set_state(self, state):
        super().set_state(state)
        self._fuse_adam_again()
        if LEAGUE_STATE_KEY in state:
            self.league_state = state[LEAGUE_STATE_KEY]
        if CURRICULUM_STATE_KEY in state:
            self.curriculum_state = state[CURRICULUM_STATE_KEY]
        if JUMP_START_STATE_KEY in state:
            self.jump_start_state = state[JUMP_START_STATE_KEY]
        if START_STAGES_STATE_KEY in state:
            self.start_stages_state = state[START_STAGES_STATE_KEY]
        if REWARD_SCALE_STATE_KEY in state:
            self.reward_scale_state = state[REWARD_SCALE_STATE_KEY]

    # ---- the value warm-up (policies/learning/value_warmup.py; init.value_warmup_iterations) ----------------------
    def _setup_value_warmup(self):
        """The warm-up's hold on "main": its critics and the rest, and the hooks on its optimizer's steps; and the win
        head's step scaled by ppo.win_head_lr_factor (policies/learning/win_head_step.py)."""
        self._value_warmup = ValueWarmup(self.module[MAIN].unwrapped())
        win_step = WinHeadStep(self.module[MAIN].unwrapped(),
                               run_settings_dict(self.config)["ppo"]["win_head_lr_factor"])
        for _, optimizer in self.get_optimizers_for_module(MAIN):
            self._value_warmup.attach(optimizer)
            win_step.attach(optimizer)

    def set_value_warmup(self, critic_only: bool, actor_lr_factor: float, value_lr: float | None = None):
        """The phase of the coming updates (callbacks/value_warmup.py sets it before every iteration): with
        `critic_only` only "main"'s value head trains (at `value_lr`; None: the scheduled learning rate) and its
        observation statistics stay; otherwise the parameters outside the value head step at `actor_lr_factor` times
        the learning rate."""
        self._value_warmup.set_phase(WarmupPhase(bool(critic_only), float(actor_lr_factor),
                                                 None if value_lr is None else float(value_lr)))

    def rescale_value_head(self, ratio: float):
        """Multiplies "main"'s value head by `ratio` (the old reward std over the new one: callbacks/reward_scale.py),
        so that its predictions are in the new scale."""
        scale_value_head(self.module[MAIN].unwrapped(), ratio)
        if self._sil is not None:
            self._sil.scale_returns(ratio)

    @override(PPOTorchLearner)
    def postprocess_gradients(self, gradients_dict):
        """RLlib's (the gradient clipping), on the value head's gradients alone in a critic-only phase."""
        gradients_dict = self._value_warmup.drop_actor_gradients(gradients_dict, self._params)
        phase = self._value_warmup.phase
        self.metrics.log_dict({"value_warmup": float(phase.critic_only), "actor_lr_factor": phase.actor_lr_factor},
                              key=MAIN, window=1)
        return super().postprocess_gradients(gradients_dict)

    # ---- schedules ---------------------------------------------------------------------------------------------------
    def set_schedule_values(self, values: dict):
        """Applies scheduled hyperparameters: "lr", "entropy_coeff", "gamma", "kickstart_coeff" (any subset)."""
        if "lr" in values:
            for optimizer in self._named_optimizers.values():
                self._set_optimizer_lr(optimizer, float(values["lr"]))
        if "entropy_coeff" in values:
            self._entropy_coeff = float(values["entropy_coeff"])
        if "gamma" in values:
            for c in self._learner_connector.connectors:
                if isinstance(c, (GeneralAdvantageEstimation, AddSelfImitationReturn)):
                    c.gamma = float(values["gamma"])
        if "kickstart_coeff" in values:
            self._kickstart_coeff = float(values["kickstart_coeff"])
        return self.get_schedule_values()

    def get_schedule_values(self) -> dict:
        lrs = [self._get_optimizer_lr(o) for o in self._named_optimizers.values()]
        gammas = [c.gamma for c in self._learner_connector.connectors if isinstance(c, GeneralAdvantageEstimation)]
        return {"lr": float(lrs[0]) if lrs else None, "entropy_coeff": self._entropy_coeff,
                "gamma": float(gammas[0]) if gammas else None, "kickstart_coeff": self._kickstart_coeff}

    # ---- loss --------------------------------------------------------------------------------------------------------
    @override(PPOTorchLearner)
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        """PPO's loss as CleanRL's ppo.py adds it up: per step the clipped surrogate, the value loss and the entropy
        bonus, averaged over the real steps; then the KL penalty (ppo.use_kl_loss), the kickstart loss (a teacher)
        and the win-probability loss (app. D). Each term logs its own metrics."""
        module = self.module[module_id].unwrapped()
        steps = RealSteps(batch)
        ppo = run_settings_dict(config)["ppo"]
        if (module_id == MAIN and self._minibatch == 0 and ppo["diagnostics_every"]
                and (self._updates - 1) % ppo["diagnostics_every"] == 0):
            self._log_diagnostics(module_id, config, batch, module, steps, ppo["diagnostics_steps"])
        self._minibatch += module_id == MAIN
        self._log_batch(module_id, batch, steps)
        terms, _ = self._loss_terms(module_id, config, batch, fwd_out, module, steps)
        loss = sum(terms.values())
        if not bool(torch.isfinite(loss)):  # RLlib would zero the gradients and step on, with Adam's state corrupted
            raise FloatingPointError(f"the loss of {module_id!r} is not finite (update {self._updates}, minibatch "
                                     f"{self._minibatch}): {diag.nonfinite_report(terms, batch, module)}")
        if module_id == MAIN:
            self._check_target_kl(self._approx_kl)
            for name, (total, n) in diag.advantage_by_primary(batch[Postprocessing.ADVANTAGES],
                                                              batch[Columns.ACTIONS]["primary"], steps.mask).items():
                sums = self._advantage_sums.setdefault(name, [0.0, 0])
                sums[0] += total
                sums[1] += n
        return loss

    def _loss_terms(self, module_id, config, batch, fwd_out, module, steps: RealSteps) -> tuple[dict, torch.Tensor]:
        """The loss's terms, each a scalar (they add up to the loss), and the policy loss per step."""
        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        pg_loss = self._policy_loss(module_id, config, batch, dist, steps)
        v_loss = self._value_loss(module_id, config, batch, fwd_out, module, steps)
        entropy, entropy_coeff = self._entropy_bonus(module_id, config, dist, steps)
        terms = {"policy": steps.mean(pg_loss), "value": config.vf_loss_coeff * steps.mean(v_loss),
                 "entropy": -entropy_coeff * steps.mean(entropy),
                 "kl_penalty": self._kl_penalty(module_id, config, batch, dist, module, steps),
                 "kickstart": self._kickstart_loss(module_id, batch, dist, module, steps),
                 "win_probability": self._win_probability_loss(module_id, config, batch, fwd_out, steps),
                 "self_imitation": self._self_imitation_loss(module_id, config, module, batch)}
        return terms, pg_loss

    def _self_imitation_loss(self, module_id, config, module, batch) -> torch.Tensor:
        """ppo.self_imitation_coeff's loss on ppo.self_imitation_steps real steps drawn from the won games' buffer
        (policies/learning/self_imitation.py); 0 while it is off or empty."""
        ppo = run_settings_dict(config)["ppo"]
        replay = None if self._sil is None or module_id != MAIN else self._sil.sample(ppo["self_imitation_steps"],
                                                                                       self._sil_rng)
        if replay is None:
            return torch.zeros((), device=batch[Columns.ACTION_LOGP].device)
        loss, figures = self_imitation_loss(module, replay, ppo["self_imitation_coeff"],
                                            ppo["self_imitation_value_coeff"])
        self.metrics.log_dict({f"self_imitation_{k}": v for k, v in figures.items()}, key=module_id, window=1)
        return loss

    def _log_diagnostics(self, module_id, config, batch, module, steps: RealSteps, max_steps: int):
        """policies/learning/update_diagnostics.py's gradient figures on the first sequences of the update's first
        minibatch (at most `max_steps` real steps), from a forward pass of their own (its losses are not trained)."""
        sub = diag.first_rows(batch, steps.mask, max_steps)
        sub_steps = RealSteps(sub)
        params = [p for p in module.parameters() if p.requires_grad]
        terms, pg_loss = self._loss_terms(module_id, config, sub, module.forward_train(sub), module, sub_steps)
        norms = diag.term_grad_norms(terms, params)
        self.metrics.log_dict({
            **{f"{diag.TERM_GRAD_PREFIX}{name}": v for name, v in norms.items()},
            "gradient_noise_cosine": diag.gradient_noise_cosine(pg_loss, sub_steps.mask, params),
            "diagnostics_steps": int(sub_steps.mask.sum()),
        }, key=module_id, window=1)
        self._diagnosed = True

    def _log_batch(self, module_id, batch, steps: RealSteps):
        """The minibatch's staleness (app. M), its real steps and their mean reward."""
        if WEIGHTS_SEQ_NO in batch:
            # app. M staleness: versions between the parameters that acted and those being optimized (RLlib bumps
            # the learner's number when an update starts, so the parameters being optimized are number - 1)
            age = (self._weights_seq_no - 1 - batch[WEIGHTS_SEQ_NO].double())[steps.mask]
            self.metrics.log_dict({"staleness_mean": age.mean().item(), "staleness_max": age.max().item()},
                                  key=module_id, window=1)
        # eq. 13's numerator: real samples optimized (RLlib's own step count includes the LSTM's padding)
        self.metrics.log_value((module_id, SAMPLES_OPTIMIZED), int(steps.mask.sum()), reduce="sum")
        self.metrics.log_value((module_id, "mean_reward_trained"), steps.mean(batch[Columns.REWARDS]), window=1)
        if WIN_ADVANTAGE in batch:  # ppo.win_advantage_coeff: the outcome term's spread beside GAE's standardized 1
            win = batch[WIN_ADVANTAGE][steps.mask]
            self.metrics.log_dict({"win_advantage_mean": win.mean().item(), "win_advantage_std": win.std().item()},
                                  key=module_id, window=1)

    def _policy_loss(self, module_id, config, batch, dist, steps: RealSteps) -> torch.Tensor:
        """Per step: minus PPO's clipped surrogate (dual-clipped with ppo.dual_clip)."""
        logp = dist.logp(batch[Columns.ACTIONS])
        ratio = torch.exp(logp - batch[Columns.ACTION_LOGP])
        surrogate = dual_clip_surrogate(batch[Postprocessing.ADVANTAGES], ratio, config.clip_param,
                                        run_settings_dict(config)["ppo"]["dual_clip"])
        # the KL from the sampling policy on the sampled actions, estimated from the ratio alone ((r - 1) - ln r,
        # Schulman's k3; CleanRL's approx_kl): how far the update has moved the policy, with or without use_kl_loss
        approx_kl = steps.mean((ratio - 1.0) - torch.log(ratio)).detach()
        self.metrics.log_dict({
            POLICY_LOSS_KEY: -steps.mean(surrogate),
            # how far the learner's log-probabilities are from those the env runners sampled with (0 at the first
            # minibatch of an update unless the two forward passes disagree), and PPO's clip fraction
            "logp_abs_diff": steps.mean((logp - batch[Columns.ACTION_LOGP]).abs()).detach(),
            "clip_fraction": steps.mean(((ratio - 1.0).abs() > config.clip_param).float()).detach(),
            "approx_kl": approx_kl,
        }, key=module_id, window=1)
        self._approx_kl = float(approx_kl)
        return -surrogate

    def _value_loss(self, module_id, config, batch, fwd_out, module, steps: RealSteps) -> torch.Tensor:
        """Per step: the squared error of the value head, clipped at ppo.vf_clip_param."""
        values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
        targets = batch[Postprocessing.VALUE_TARGETS]
        vf_loss = (values - targets) ** 2
        vf_loss_clipped = torch.clamp(vf_loss, 0, config.vf_clip_param)
        self.metrics.log_dict({
            VF_LOSS_KEY: steps.mean(vf_loss_clipped), LEARNER_RESULTS_VF_LOSS_UNCLIPPED_KEY: steps.mean(vf_loss),
            LEARNER_RESULTS_VF_EXPLAINED_VAR_KEY: explained_variance(targets[steps.mask], values[steps.mask]),
        }, key=module_id, window=1)
        return vf_loss_clipped

    def _entropy_bonus(self, module_id, config, dist, steps: RealSteps) -> tuple[torch.Tensor, float]:
        """Per step: the entropy the bonus rewards (the action's, or its heads' weighted by
        ppo.entropy_head_weights), and its coefficient (the entropy_coeff schedule, else RLlib's)."""
        # the action's entropy, split by head; with ppo.entropy_bonus "heads" the parameter heads' read-probabilities
        # carry no gradient: the same value, and the bonus no longer pulls the primary toward parameter-reading actions
        ppo = run_settings_dict(config)["ppo"]
        heads = dist.head_entropies(constant_reads=ppo["entropy_bonus"] == "heads")
        entropy = sum(heads.values())
        # the bonus: each head's part by its weight (ppo.entropy_head_weights; null: the action's entropy, as logged)
        weights = ppo.get("entropy_head_weights") or {}
        bonus = entropy if not weights else sum(float(weights.get(h, 1.0)) * x for h, x in heads.items())
        coeff = self._entropy_coeff
        if coeff is None:
            coeff = self.entropy_coeff_schedulers_per_module[module_id].get_current_value()
        self.metrics.log_dict({
            ENTROPY_KEY: steps.mean(entropy), "entropy_coeff": float(coeff),
            # each head's part of the action's entropy (the primary's is 0 once the policy always picks one primary
            # action; the offsets' is 2 ln 9 = 4.4 for a move with untrained offsets)
            **{f"entropy_{head}": steps.mean(h).detach() for head, h in heads.items()},
        }, key=module_id, window=1)
        return bonus, coeff

    def _kl_penalty(self, module_id, config, batch, dist, module, steps: RealSteps) -> torch.Tensor:
        """The adaptive KL penalty from the sampling policy (ppo.use_kl_loss; 0 without it)."""
        if not config.use_kl_loss:
            kl = torch.zeros((), device=batch[Columns.ACTION_LOGP].device)
            self.metrics.log_value((module_id, LEARNER_RESULTS_KL_KEY), kl, window=1)
            return kl
        prev = module.get_exploration_action_dist_cls().from_logits(batch[Columns.ACTION_DIST_INPUTS])
        kl = steps.mean(prev.kl(dist))
        self.metrics.log_value((module_id, LEARNER_RESULTS_KL_KEY), kl, window=1)
        return self.curr_kl_coeffs_per_module[module_id] * kl

    def _kickstart_off(self) -> bool:
        """Whether the kickstart loss has no weight this iteration."""
        return not kickstart_on(self._kickstart_coeff)

    def _kickstart_loss(self, module_id, batch, dist, module, steps: RealSteps) -> torch.Tensor:
        """kickstart_coeff times the kickstart loss (Schmitt et al. 2018): the KL from the teacher's policy to the
        student's on the student's own states; 0 without a teacher, while the schedule is at 0 (no teacher forward
        pass) or on a batch the env runners did not label."""
        zero = torch.zeros((), device=batch[Columns.ACTION_LOGP].device)
        if self._teacher is None and self._teacher_agent is None:
            return zero
        if self._kickstart_off() or (self._teacher is None and TEACHER_ACTION not in batch):
            self.metrics.log_dict({"kickstart_kl": float("nan"), "kickstart_coeff": self._kickstart_coeff,
                                   **{f"{diag.AGREEMENT_PREFIX}{head}": float("nan") for head in diag.AGREEMENT_HEADS},
                                   **{f"{diag.KICKSTART_HEAD_PREFIX}{head}": float("nan") for head in dist.HEADS}},
                                  key=module_id, window=1)
            return zero
        if self._teacher is not None:
            # a teacher module: the KL from its action distribution. It reads the policy's LSTM state at each sequence
            # start (its own was never computed along these games): the policy starts as the teacher
            # (init.checkpoint), so the two states agree best while the weight is high
            with torch.no_grad():
                teacher_out = self._teacher.forward_train(batch)
            teacher = module.get_train_action_dist_cls().from_logits(teacher_out[Columns.ACTION_DIST_INPUTS])
            by_head = teacher.head_kls(dist)
            kickstart = loss = steps.mean(sum(by_head.values()))
            teacher_action = teacher.to_deterministic().sample()
        else:
            # an agent teacher (policies/learning/kickstart.py): the KL from its deterministic policy is the
            # student's -log-probability of the action the agent chose in shadow on the same state
            by_head = teacher_nll_by_head(dist, batch[TEACHER_ACTION])
            nll = capped_nll(by_head)
            kickstart = steps.mean(nll)  # the metric: every step alike, whatever the loss's weights
            loss = self._teacher_weights.loss(by_head, batch[TEACHER_ACTION], steps.mask, dist.primary)
            teacher_action = label_action(batch[TEACHER_ACTION])
        agreement = diag.teacher_agreement(dist, teacher_action, steps.mask)
        self.metrics.log_dict({"kickstart_kl": kickstart.detach(), "kickstart_coeff": self._kickstart_coeff,
                               **{f"{diag.AGREEMENT_PREFIX}{head}": agreement.get(head, float("nan"))
                                  for head in diag.AGREEMENT_HEADS},
                               **{f"{diag.KICKSTART_HEAD_PREFIX}{head}": steps.mean(part.detach())
                                  for head, part in by_head.items()}}, key=module_id, window=1)
        return self._kickstart_coeff * loss

    def _win_probability_loss(self, module_id, config, batch, fwd_out, steps: RealSteps) -> torch.Tensor:
        """ppo.aux_win_coeff times the win-probability head's cross-entropy against the win label (app. D, eq. 10;
        0 where the module has no such head or the batch no label)."""
        if WIN_LOGIT not in fwd_out or WIN_LABEL not in batch:
            return torch.zeros((), device=batch[Columns.ACTION_LOGP].device)
        aux = steps.mean(F.binary_cross_entropy_with_logits(fwd_out[WIN_LOGIT], batch[WIN_LABEL], reduction="none"))
        self.metrics.log_value((module_id, "aux_win_loss"), aux.item(), window=1)
        return run_settings_dict(config)["ppo"]["aux_win_coeff"] * aux

