"""The update's diagnostics (policies/learning/update_diagnostics.py) on hand-made tensors."""
from __future__ import annotations

import math

import pytest
import torch

from policies.learning import update_diagnostics as diag
from policies.model.action_distribution import FiveActionDistribution


def test_the_halves_split_the_real_steps_by_sequence():
    mask = torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]], dtype=torch.bool)
    a, b = diag.half_masks(mask)
    assert not (a & b).any() and torch.equal(a | b, mask)
    assert a[0].any() and a[2].any() and not a[1].any() and b[1].any()
    flat_a, flat_b = diag.half_masks(torch.tensor([True, True, False, True]))
    assert flat_a.tolist() == [True, False, False, False] and flat_b.tolist() == [False, True, False, True]


def test_term_grad_norms_and_the_noise_cosine_of_known_gradients():
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    per_step = x @ w  # row i's gradient is x[i]
    norms = diag.term_grad_norms({"a": (per_step * 2).mean(), "none": torch.zeros(())}, [w])
    assert norms == {"a": pytest.approx(2 * math.sqrt(0.5 ** 2 + 0.5 ** 2)), "none": 0.0}
    rows = torch.ones(4, dtype=torch.bool)
    # even rows (0, 2) against odd rows (1, 3): the same mix of directions
    assert diag.gradient_noise_cosine(per_step, rows, [w]) == pytest.approx(1.0)
    opposite = torch.stack([per_step[0], -per_step[1], per_step[2], -per_step[3]])
    assert diag.gradient_noise_cosine(opposite, rows, [w]) == pytest.approx(-1.0)
    orthogonal = torch.stack([per_step[0], per_step[2], per_step[0], per_step[2]])
    assert diag.gradient_noise_cosine(orthogonal, rows, [w]) == pytest.approx(0.0)
    assert math.isnan(diag.gradient_noise_cosine(per_step, torch.tensor([True, False, False, False]), [w]))


def test_the_mean_advantage_of_each_primary_action_counts_real_steps_only():
    adv = torch.tensor([1.0, 3.0, -2.0, 5.0])
    primary = torch.tensor([1, 1, 0, 2])
    out = diag.advantage_by_primary(adv, primary, torch.tensor([True, True, True, False]))
    assert out == {"noop": (-2.0, 1), "move": (4.0, 2)}


def test_teacher_agreement_per_head_counts_a_parameter_only_where_the_teachers_primary_reads_it():
    cls = FiveActionDistribution.make(n_primary=3, max_units=2)
    logits = torch.zeros(4, cls.required_input_dim())
    dist = cls.from_logits(logits)
    dist.primary = torch.tensor([[5.0, 0, 0], [5.0, 0, 0], [0, 5.0, 0], [0, 0, 5.0]])  # argmax 0, 0, 1, 2
    dist.delay = torch.zeros(4, cls.n_delay)  # argmax 0 everywhere
    dist.unit = torch.tensor([[0.0, 1.0]]).expand(4, 3, 2).clone()  # unit 1 under every primary
    dist.offset_x = torch.zeros(4, cls.n_offset)
    dist.offset_y = torch.zeros(4, cls.n_offset)
    dist.reads_unit = torch.tensor([[False, False, True]]).expand(4, 3)  # only primary 2 reads a unit
    dist.reads_offset = torch.zeros(4, 3, dtype=torch.bool)
    teacher = {"primary": torch.tensor([0, 1, 1, 2]), "delay": torch.tensor([0, 0, 1, 1]),
               "target_unit": torch.tensor([0, 0, 0, 1]), "offset_x": torch.zeros(4), "offset_y": torch.zeros(4)}
    out = diag.teacher_agreement(dist, teacher, torch.ones(4, dtype=torch.bool))
    assert out == {"primary": 0.75, "delay": 0.5, "unit": 1.0}  # no offsets read: left out


def test_teacher_agreement_reads_the_offsets_of_the_teachers_primary_groups():
    """With offsets by group (model.offset_groups) the student's offsets are those of the teacher's primary's group."""
    cls = FiveActionDistribution.make(n_primary=3, max_units=2, n_offset_groups=2)
    dist = cls.from_logits(torch.zeros(2, cls.required_input_dim()))
    dist.reads_offset = torch.tensor([[False, True, True]]).expand(2, 3)
    dist.offset_group = torch.tensor([[0, 0, 1]]).expand(2, 3)  # primary 1 reads group 0, primary 2 group 1
    dist.offset_x = torch.zeros(2, 2, cls.n_offset)
    dist.offset_x[:, 0, 1] = 1.0  # group 0 says x = 1, group 1 x = 7
    dist.offset_x[:, 1, 7] = 1.0
    dist.offset_y = torch.zeros(2, 2, cls.n_offset)  # y = 0 in both
    teacher = {"primary": torch.tensor([1, 2]), "delay": torch.zeros(2), "target_unit": torch.zeros(2),
               "offset_x": torch.tensor([1, 7]), "offset_y": torch.zeros(2)}
    assert diag.teacher_agreement(dist, teacher, torch.ones(2, dtype=torch.bool))["offsets"] == 1.0
    teacher["offset_x"] = torch.tensor([7, 1])  # each the other group's choice
    assert diag.teacher_agreement(dist, teacher, torch.ones(2, dtype=torch.bool))["offsets"] == 0.0


def test_first_rows_keep_whole_sequences_up_to_the_step_budget():
    mask = torch.tensor([[1, 1, 1], [1, 1, 0], [1, 0, 0]], dtype=torch.bool)
    batch = {"obs": {"x": torch.arange(9).reshape(3, 3)}, "mask": mask, "scalar": torch.tensor(1.0)}
    sub = diag.first_rows(batch, mask, max_steps=5)
    assert sub["obs"]["x"].shape == (2, 3) and sub["mask"].shape == (2, 3) and sub["scalar"].item() == 1.0
    assert diag.first_rows(batch, mask, max_steps=1)["mask"].shape == (1, 3)  # at least one row
