"""The past-opponent pool of OpenAI Five's self-play (Five app. N).

80% of games are played against the latest parameters, 20% against past versions. Each past version i = 1..N has a
quality q_i and is sampled with probability p_i proportional to exp(q_i). Every 10 iterations the current agent
joins the pool with q = max of the existing qualities. After a game in which the current agent beats past version i,
q_i <- q_i - eta / (N p_i) with eta = 0.01 (eq. 14), p_i the probability with which i was sampled for that game; no
update when the past version wins. Several results recorded one after another each use their own game's p_i, never
the probability the previous update left (which would shrink with every win and run a quality away to -inf). A
quality stays within QUALITY_RANGE of the best one, so that every quality is finite and every probability positive.

Pure Python and numpy: the pool only knows where each version's weights are (``weights_path``), never the weights
themselves, so it stays small however many versions it holds. ``state_dict`` / ``from_state_dict`` carry it through
checkpoints.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

PAST_OPPONENT_FRACTION = 0.2  # app. N: 20% of games against past versions (Table 2: "Past opponents 20%")
QUALITY_LEARNING_RATE = 0.01  # app. N, eq. 14: eta (Table 2: "Past Opponents Learning Rate 0.01")
SNAPSHOT_EVERY_ITERATIONS = 10  # app. N: "every 10 iterations we add the current agent to past opponent pool"
# the most a quality may fall below the best one: exp(-QUALITY_RANGE) is still a positive (normal) float64, so no
# version's probability underflows to 0 and every quality stays finite (JSON-safe in checkpoints and league.csv)
QUALITY_RANGE = 700.0


@dataclass
class PastVersion:
    version: int  # 1, 2, ... in the order the versions joined
    iteration: int  # training iteration at which it was snapshotted
    quality: float
    weights_path: str
    games: int = 0  # games the current agent played against it
    current_wins: int = 0  # of which the current agent won


class OpponentPool:
    def __init__(self, eta: float = QUALITY_LEARNING_RATE, past_fraction: float = PAST_OPPONENT_FRACTION,
                 snapshot_every: int = SNAPSHOT_EVERY_ITERATIONS):
        if not 0.0 <= past_fraction <= 1.0:
            raise ValueError(f"past_fraction must be in [0, 1], got {past_fraction}")
        if eta < 0:
            raise ValueError(f"eta must be >= 0, got {eta}")
        if snapshot_every < 1:
            raise ValueError(f"snapshot_every must be >= 1, got {snapshot_every}")
        self.eta = float(eta)
        self.past_fraction = float(past_fraction)
        self.snapshot_every = int(snapshot_every)
        self.versions: list[PastVersion] = []
        self._by_version: dict[int, int] = {}

    def __len__(self):
        return len(self.versions)

    # ---- growth ------------------------------------------------------------------------------------------------------
    def due(self, iteration: int) -> bool:
        """Whether the current agent joins the pool after this iteration."""
        return iteration > 0 and iteration % self.snapshot_every == 0

    def add(self, iteration: int, weights_path: str) -> PastVersion:
        """The current agent joins with the maximum existing quality (0 for the first)."""
        q = max((v.quality for v in self.versions), default=0.0)
        v = PastVersion(version=len(self.versions) + 1, iteration=int(iteration), quality=q,
                        weights_path=str(weights_path))
        self._by_version[v.version] = len(self.versions)
        self.versions.append(v)
        return v

    def get(self, version: int) -> PastVersion:
        try:
            return self.versions[self._by_version[version]]
        except KeyError:
            raise ValueError(f"past version {version} is not in the pool (versions 1..{len(self)})") from None

    # ---- sampling ----------------------------------------------------------------------------------------------------
    def probabilities(self) -> np.ndarray:
        """p_i proportional to exp(q_i) (a numerically stable softmax)."""
        if not self.versions:
            return np.zeros(0)
        q = np.array([v.quality for v in self.versions])
        e = np.exp(q - q.max())
        return e / e.sum()

    def sample(self, rng: np.random.Generator) -> int | None:
        """The opponent of one game: None for the latest parameters (self-play), else a past version number."""
        if not self.versions or rng.random() >= self.past_fraction:
            return None
        return self.versions[int(rng.choice(len(self.versions), p=self.probabilities()))].version

    # ---- results -----------------------------------------------------------------------------------------------------
    def record(self, version: int, current_won: bool, sampled_probability: float) -> float:
        """A finished game against a past version, which was drawn with `sampled_probability` (its p_i in the table
        the game was sampled from). Returns the quality change (eq. 14; 0 when the past one won)."""
        sampled_probability = float(sampled_probability)  # a Python float: a huge step is inf, never a warning
        if not 0.0 < sampled_probability <= 1.0:
            raise ValueError(f"sampled_probability must be in (0, 1] (the version was drawn with it), got "
                             f"{sampled_probability!r}")
        idx = self._by_version.get(version)
        if idx is None:
            return 0.0  # a version evicted since the game started: nothing to update
        v = self.versions[idx]
        v.games += 1
        if not current_won:
            return 0.0
        v.current_wins += 1
        floor = max(u.quality for u in self.versions) - QUALITY_RANGE
        new = max(v.quality - self.eta / (len(self.versions) * sampled_probability), floor)
        delta, v.quality = new - v.quality, new
        return delta

    # ---- persistence and reporting -----------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"eta": self.eta, "past_fraction": self.past_fraction, "snapshot_every": self.snapshot_every,
                "versions": [asdict(v) for v in self.versions]}

    @classmethod
    def from_state_dict(cls, state: dict) -> "OpponentPool":
        pool = cls(state["eta"], state["past_fraction"], state["snapshot_every"])
        for d in state["versions"]:
            v = PastVersion(**d)
            pool._by_version[v.version] = len(pool.versions)
            pool.versions.append(v)
        return pool

    def rows(self) -> list[dict]:
        """One row per version: version, iteration, quality, probability, games, wins (of the current agent)."""
        p = self.probabilities()
        return [{"version": v.version, "iteration": v.iteration, "quality": v.quality, "probability": float(p[i]),
                 "games": v.games, "current_wins": v.current_wins} for i, v in enumerate(self.versions)]
