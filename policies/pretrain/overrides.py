"""Which of a student's decisions lose its games: the teacher, in shadow on the student's heroes, takes over one kind
of decision (``GamePlan.override``; ``scripts/teacher_override.py``). Each rule maps the student's action and the
teacher's on the same state (dicts of ACTION_KEYS) to the action the game executes. "all" is the teacher itself
(the mirror, at the student's seeds and sides); the others replace one gap, and the games say how much of the
student's deficit that gap holds.
"""
from __future__ import annotations

from moba.env.actions import A_ABILITY0, A_ATTACK, A_MOVE, N_PRIMARY

# the rare primary actions: the abilities, the items (consumables included), buyback and the shrine
RARE_PRIMARIES = frozenset(range(A_ABILITY0, N_PRIMARY))


def _primaries(student: dict, teacher: dict) -> tuple[int, int]:
    return int(student["primary"]), int(teacher["primary"])


def _all(student, teacher):
    return teacher


def _rare(student, teacher):
    sp, tp = _primaries(student, teacher)
    return teacher if sp in RARE_PRIMARIES or tp in RARE_PRIMARIES else student


def _rare_teacher(student, teacher):
    return teacher if int(teacher["primary"]) in RARE_PRIMARIES else student


def _rare_student(student, teacher):
    sp, tp = _primaries(student, teacher)
    return teacher if sp in RARE_PRIMARIES and tp not in RARE_PRIMARIES else student


def _attack(student, teacher):
    sp, tp = _primaries(student, teacher)
    return teacher if A_ATTACK in (sp, tp) else student


def _move_offsets(student, teacher):
    sp, tp = _primaries(student, teacher)
    if sp == A_MOVE and tp == A_MOVE:
        return {**student, "offset_x": teacher["offset_x"], "offset_y": teacher["offset_y"]}
    return student


def _primary(student, teacher):
    sp, tp = _primaries(student, teacher)
    return teacher if sp != tp else student


RULES = {
    "none": lambda student, teacher: student,  # the student alone
    "all": _all,  # the teacher alone
    "rare": _rare,  # the teacher's action wherever either chose a rare action (casts, items, buyback, shrine)
    "rare_teacher": _rare_teacher,  # ... wherever the teacher chose one: its casts and items at its moments
    "rare_student": _rare_student,  # ... wherever only the student chose one: its casts the teacher would not make
    "attack": _attack,  # the teacher's action wherever either chose to attack
    "move_offsets": _move_offsets,  # the teacher's direction wherever both move
    "primary": _primary,  # the teacher's action wherever the two primary actions differ
}


def check_rule(rule: str, flag: str = "--rules") -> str:
    """`rule`, or a ValueError naming `flag` and the allowed rules."""
    if rule not in RULES:
        raise ValueError(f"{flag}: unknown override rule {rule!r}; allowed: {list(RULES)}")
    return rule


def override(rule: str, student: dict, teacher: dict) -> dict:
    """The action the game executes under `rule` (RULES)."""
    return RULES[check_rule(rule)](student, teacher)
