"""A reverse curriculum over the games that start late (the env's ``start_state``, moba/env/start_state.py) in stages:
each stage is a set of start-state values laid over the env config's ``start_state`` (``{defender_dead_s: [15, 25]}``,
then ``{defender_dead_s: [10, 20]}``, ...), easiest first. The stage moves on once "main" has won outright (destroyed
the enemy ancient) ``promote_at`` of its last ``window`` late games at the current stage: the start moves back from
the goal as the agent masters it (Florensa et al. 2017, "Reverse Curriculum Generation for Reinforcement Learning":
train from starts of intermediate difficulty, and move them back as the policy succeeds from them). The last stage
is the hardest start, kept.

Each window is judged once, when it is full, and a window that does not pass is emptied for the next games
(``Curriculum(judge_once=True)``): a
window that slid by one game at a time would be tried after every game: at a stage the agent finished 44% of the
time, such a 40-game window touched 60% after 53 and 20 iterations in two runs (tune_configs/sweeps/top_rung_reverse
.yaml, reverse_stages and reverse_stages_all_late).

The stages are a ``Curriculum`` (policies/league/curriculum.py) whose ladder is the stages' labels
(``late_start_label(opponent, stage)``), as Jump-Start RL's stages are (policies/league/jump_start.py): a late game is
recorded under the label of the stage it started at, and the state (stage, window, moves) is saved and restored as
the curriculum's is. The env runners start the games at the current stage (training/opponents.py: the stage's
values ride in the game's reset options) and the driver moves the stages (callbacks/opponents.py).
"""
from __future__ import annotations

from policies.league.curriculum import Curriculum
from policies.league.ratings import LOSS, WIN

# a stage is passed at 70% of its late games won outright: a finish the agent mostly makes, not yet always (Florensa
# et al. 2017, sec. 4: starts are of "good" difficulty while the success rate lies in [R_min, R_max] = [0.1, 0.9])
START_STAGES_PROMOTE_AT = 0.7
START_STAGES_WINDOW = 40  # the last late games at the current stage that decide a move
LATE_START = " (late start"  # a recorded name of a late game contains this (late_start_label)


def late_start_label(opponent: str, stage: int | None = None) -> str:
    """The name the games that started late against `opponent` are recorded under, apart from its full games (which
    judge the agent): ``scripted_3 (late start)``, or with stages ``scripted_3 (late start at stage 2)``."""
    return f"{opponent}{LATE_START})" if stage is None else f"{opponent}{LATE_START} at stage {stage})"


def is_late_start(name: str) -> bool:
    """Whether a recorded opponent name is that of games that started late (late_start_label)."""
    return LATE_START in name


class StartStages:
    """The stages of one run: the opponent whose late games move them, the sides whose late games count, and the
    curriculum over the stages' labels (one per stage of `stages`, the start-state values easiest first; the env
    runners read the values from the run's settings)."""

    def __init__(self, opponent: str, stages, window: int = START_STAGES_WINDOW,
                 promote_at: float = START_STAGES_PROMOTE_AT, sides=("radiant", "dire")):
        self.opponent, self.sides = opponent, tuple(sides)
        self.labels = [late_start_label(opponent, k) for k in range(len(stages))]
        self.curriculum = Curriculum(self.labels, window, promote_at, judge_once=True, sides=self.sides)

    @property
    def current(self) -> int:
        """The stage new games start at."""
        return self.curriculum.level

    def record(self, name: str, outright: bool, side: str, iteration: int = 0) -> bool:
        """A finished game recorded under `name` (a stage's label; others are ignored), won outright or not, "main"
        playing `side` (a side not in ``sides`` is ignored); True when it moved the stage."""
        return self.curriculum.record(name, WIN if outright else LOSS, iteration, side)

    def state_dict(self) -> dict:
        return self.curriculum.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """The saved stage, matched by label in this run's stages (the saved level if it is not one)."""
        self.curriculum = Curriculum.from_state_dict(state, self.labels, demote_at=None, judge_once=True,
                                                     sides=self.sides)
