"""The training opponents beyond self-play: a weighted mix of self-play, past versions (the league) and
fixed agents, and a curriculum that climbs a ladder of fixed agents.

The mix is a probability per kind of opponent, drawn for every game (``OpponentMix.draw``): "self" (main plays both
teams), "league" (a past version, policies/league/pool.py), "curriculum" (the current ladder level) or a fixed agent by
name (policies/agents/by_name.py, or a module checkpoint). The curriculum moves up a level once main has won at least
``promote_at`` of its last ``window`` games against the current level (``Curriculum.record``), and, with
``demote_at`` set, back down one once it has won at most that share of them; the win rates of
Gym-microRTS's bot mixes and Honor of Kings' graded reference models (HoK section 6) are the idea. With ``review`` set,
that share of the curriculum's games goes to the level just below the current one (``review_split``, drawn by
``review_agent``): a passed rung stays in the mix, so a student that trains against a stronger bot keeps being paid
for the play that beat the rung below (issue 29's erosion).
Fixed agents play inside the env runners, never as RLlib modules (training/batched_env_runner.py).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from policies.league.ratings import WIN

SELF, LEAGUE, CURRICULUM = "self", "league", "curriculum"
CURRICULUM_WINDOW = 40  # the last games against the current level that decide a promotion
CURRICULUM_PROMOTE_AT = 0.75  # win rate over the window that moves the curriculum up a level
CURRICULUM_REVIEW = 0.0  # share of the curriculum's games against the level below the current one (0 = none)
SAVED = object()  # Curriculum.from_state_dict: keep the saved demotion rule


class OpponentMix:
    """The share of games of each kind of opponent: {SELF, LEAGUE, CURRICULUM or an agent name: probability}."""

    def __init__(self, shares: dict, seed: int = 0):
        total = sum(shares.values())
        if any(p < 0 for p in shares.values()) or not 0.999 <= total <= 1.001:
            raise ValueError(f"opponent shares must be >= 0 and sum to 1, got {shares}")
        self.kinds = [k for k, p in shares.items() if p > 0]
        self.probs = np.array([shares[k] for k in self.kinds], np.float64)
        self.probs /= self.probs.sum()
        self.rng = np.random.default_rng(seed)

    def draw(self) -> str:
        """The kind of the next game's opponent."""
        return self.kinds[int(self.rng.choice(len(self.kinds), p=self.probs))]


def review_split(ladder: list, current: str, review: float) -> dict:
    """The curriculum's games by agent ({agent: fraction}): all against `current`, or, from the ladder's second level
    on, `review` of them against the level just below it."""
    level = ladder.index(current)
    if level == 0 or review <= 0:
        return {current: 1.0}
    return {current: 1.0 - review, ladder[level - 1]: review}


def review_agent(ladder: list, current: str, review: float, rng: np.random.Generator) -> str:
    """The agent of one curriculum game, drawn by review_split (the coin is drawn only where there is a review)."""
    below = [agent for agent in review_split(ladder, current, review) if agent != current]
    return below[0] if below and rng.random() < review else current


class Curriculum:
    """A ladder of fixed agents, weakest first, and the level main plays against."""

    def __init__(self, ladder: list, window: int = CURRICULUM_WINDOW, promote_at: float = CURRICULUM_PROMOTE_AT,
                 demote_at: float | None = None, judge_once: bool = False, sides: tuple | None = None):
        if not ladder:
            raise ValueError("the curriculum ladder is empty")
        self.ladder, self.window, self.promote_at = list(ladder), int(window), float(promote_at)
        # None: never down. A level main keeps losing gives PPO nothing but losses: at 0-10% of its games against the
        # level above its reach, a 1v1 agent from scratch fell back to near-uniform play within ~1,000 iterations
        # (tune_configs/hok_1v1_curriculum.yaml); one level down it has games it can win again.
        self.demote_at = None if demote_at is None else float(demote_at)
        # True: each window is judged once, when full, and emptied when it moves nothing (the start stages,
        # policies/league/start_stages.py); False: the window slides by one game, judged after every game
        self.judge_once = bool(judge_once)
        # the sides main plays whose games count (None: both); the run's rule, not saved with the state
        self.sides = None if sides is None else tuple(sides)
        self.level = 0
        self.recent = deque(maxlen=self.window)  # main's results (1 = won) against the current level
        self.promotions = []  # (iteration, new level): every move, up or down

    @property
    def current(self) -> str:
        return self.ladder[self.level]

    def agent_shares(self, share: float, review: float = CURRICULUM_REVIEW) -> dict:
        """The share of all games each ladder agent gets, of the curriculum's `share` ({agent: share})."""
        return {agent: share * f for agent, f in review_split(self.ladder, self.current, review).items()}

    def window_win_rate(self) -> float:
        return float(np.mean(self.recent)) if self.recent else float("nan")

    def record(self, opponent: str, score: float, iteration: int = 0, side: str | None = None) -> bool:
        """Adds one finished game of main against `opponent` (score: ratings.WIN, DRAW or LOSS), main playing `side`;
        games against other agents, or on a side not in ``sides``, do not count. Returns True when this game moved
        the curriculum a level, up or down."""
        if opponent != self.current or (self.sides is not None and side not in self.sides):
            return False
        self.recent.append(1.0 if score == WIN else 0.0)
        if len(self.recent) < self.window:
            return False
        rate = self.window_win_rate()
        if rate >= self.promote_at and self.level < len(self.ladder) - 1:
            return self._move(+1, iteration)
        if self.demote_at is not None and rate <= self.demote_at and self.level > 0:
            return self._move(-1, iteration)
        if self.judge_once:
            self.recent.clear()
        return False

    def _move(self, step: int, iteration: int) -> bool:
        self.level += step
        self.recent.clear()
        self.promotions.append((iteration, self.level))
        return True

    def state_dict(self) -> dict:
        return {"ladder": self.ladder, "window": self.window, "promote_at": self.promote_at,
                "demote_at": self.demote_at, "judge_once": self.judge_once, "level": self.level,
                "recent": list(self.recent), "promotions": list(self.promotions)}

    @classmethod
    def from_state_dict(cls, state: dict, ladder: list | None = None, demote_at=SAVED,
                        judge_once=SAVED, sides: tuple | None = None) -> "Curriculum":
        """A curriculum restored from a checkpoint; with `ladder` (the run config's), its level is that of the
        saved current agent in it (or the saved level if the agent is not in the new ladder); with `demote_at` and
        `judge_once`, the run's rules instead of the saved ones; `sides`: the run's (never saved)."""
        c = cls(ladder or state["ladder"], state["window"], state["promote_at"],
                state.get("demote_at") if demote_at is SAVED else demote_at,
                state.get("judge_once", False) if judge_once is SAVED else judge_once, sides)
        saved = state["ladder"][state["level"]]
        c.level = c.ladder.index(saved) if saved in c.ladder else min(state["level"], len(c.ladder) - 1)
        c.recent.extend(state["recent"][-c.window:] if saved == c.current else [])
        c.promotions = [tuple(p) for p in state.get("promotions", [])]
        return c
