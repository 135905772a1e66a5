"""Jump-Start RL's curriculum (JSRL: Uchendu et al., "Jump-Start Reinforcement Learning", ICML 2023): in a game
against one opponent, a guide agent plays "main"'s heroes from the start up to a hand-over time, and "main" plays the
rest. Only "main"'s own steps become training data. The hand-over moves earlier, one stage at a time, once "main" has
won ``promote_at`` of its last ``window`` games at the current stage; the last stage (hand-over 0) is the game
played alone. There is no loss term to anneal: what the guide gives is where the games start.

The stages are a ``Curriculum`` (policies/league/curriculum.py) whose ladder is the stages' labels
(``stage_label``): the finished games of a stage are recorded under its label, and its state (level, window,
moves) is saved and restored as the curriculum's is. The env runners play the stages
(training/batched_env_runner.py) and the driver moves them (callbacks/opponents.py).
"""
from __future__ import annotations

from policies.league.curriculum import Curriculum

# JSRL's curriculum moves the hand-over once the combined policy does about as well as the guide alone. The guide
# here is usually the opponent itself (the full scripted bot against itself wins half its games), so a stage is
# passed at half the window's games won
JUMP_START_PROMOTE_AT = 0.5
JUMP_START_WINDOW = 20  # the last games at the current stage that decide a move
# JSRL-curriculum's stages over a 600 s 1v1 game: the guide plays the first 450, 300, 150 s, then none
JUMP_START_HANDOVER_S = (450.0, 300.0, 150.0, 0.0)


def stage_label(opponent: str, handover_s: float) -> str:
    """The name a stage's games are recorded under: the opponent's name, with the guide's part when it has one (the
    last stage, hand-over 0, is the opponent itself)."""
    return f"{opponent} (guided to {handover_s:g} s)" if handover_s > 0 else opponent


def handover_steps(handover_s: float, frameskip: int, ticks_per_second: int) -> int:
    """The env step at which "main" takes over from the guide: the first decision at or after `handover_s`."""
    ticks = handover_s * ticks_per_second
    return int(-(-ticks // frameskip))  # ceil


class JumpStart:
    """The stages of one run: the opponent they are played against, the guide, the hand-over of each stage (latest
    first) and the curriculum over their labels."""

    def __init__(self, opponent: str, guide: str, handover_s, window: int = JUMP_START_WINDOW,
                 promote_at: float = JUMP_START_PROMOTE_AT):
        self.opponent, self.guide = opponent, guide
        self.handover_s = [float(h) for h in handover_s]
        self.by_label = {stage_label(opponent, h): h for h in self.handover_s}
        self.curriculum = Curriculum(list(self.by_label), window, promote_at)

    @property
    def current_handover_s(self) -> float:
        return self.by_label[self.curriculum.current]

    def record(self, name: str, score: float, iteration: int = 0) -> bool:
        """A finished game recorded under `name` (a stage's label; others are ignored); True when it moved a stage."""
        return self.curriculum.record(name, score, iteration)

    def state_dict(self) -> dict:
        return self.curriculum.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """The saved stage, matched by hand-over time in this run's stages (the saved level if it is not one)."""
        self.curriculum = Curriculum.from_state_dict(state, list(self.by_label), demote_at=None)
