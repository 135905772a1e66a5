"""How many torch threads the learner uses, chosen by measurement (resources.learner_threads: 0).

On a quiet 2-core machine two threads update 1.3-1.7x faster than one; when another process holds a core they are
2-4x slower than one, because each of OpenMP's threads waits for the other at every operation (measured on this
project's learner, docs/rllib_notes.md). Neither fixed count is right everywhere, so the learner measures: it runs its
minibatches with the count that has taken the least time per row so far, and every ``PROBE_EVERY`` minibatches runs
one with the other count, so that the choice follows the machine's load.
"""
from __future__ import annotations

from collections import deque
from statistics import median

PROBE_EVERY = 25  # minibatches between two measurements of the count not in use
WINDOW = 3  # a count's speed is the median of its last WINDOW measurements (one slow minibatch does not decide)


class ThreadChooser:
    """The torch thread count of each learner minibatch: 1 or `max_threads`, whichever is faster per row."""

    def __init__(self, max_threads: int):
        self.options = sorted({1, max(1, int(max_threads))}, reverse=True)  # all cores first: the quiet-machine pick
        self.samples = {n: deque(maxlen=WINDOW) for n in self.options}  # seconds per row
        self.warmed_up = set()  # the first minibatch of a count (thread pool start-up) is not a measurement
        self.minibatches = 0

    def seconds_per_row(self, threads: int) -> float | None:
        return median(self.samples[threads]) if self.samples[threads] else None

    def pick(self) -> int:
        """The thread count for the next minibatch."""
        unmeasured = [n for n in self.options if not self.samples[n]]
        if unmeasured:
            return unmeasured[0]
        best = min(self.options, key=self.seconds_per_row)
        if len(self.options) > 1 and self.minibatches % PROBE_EVERY == PROBE_EVERY - 1:
            return next(n for n in self.options if n != best)
        return best

    def record(self, threads: int, rows: int, seconds: float):
        """Adds a measured minibatch: `rows` rows took `seconds` with `threads` threads."""
        self.minibatches += 1
        if rows <= 0 or threads not in self.samples:
            return
        if threads not in self.warmed_up:
            self.warmed_up.add(threads)
            return
        self.samples[threads].append(seconds / rows)

    def summary(self) -> dict:
        """Metrics: the current pick and the measured rows/s of each count (0 while unmeasured)."""
        measured = [n for n in self.options if self.samples[n]]
        best = min(measured, key=self.seconds_per_row) if measured else self.options[0]
        return {"learner_threads": best, **{f"learner_rows_per_s_{n}_threads": 1.0 / self.seconds_per_row(n)
                                            if self.samples[n] else 0.0 for n in self.options}}
