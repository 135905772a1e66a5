"""A plain-text progress bar on stderr, redrawn in place (a carriage return, no new dependency): long CLI phases such
as the kickstart's games and its training epochs (app/pretrain.py)."""
from __future__ import annotations

import sys
import time

BAR_WIDTH = 30  # characters of the bar itself
REDRAW_EVERY_S = 0.2  # at most this often, so that a fast loop does not spend its time printing
REDRAW_EVERY_S_LOGGED = 10.0  # ... and this often when stderr is not a terminal (a log file keeps every redraw)


class ProgressBar:
    """``update(done, note)`` redraws ``label [#####.....]  42%  note  12 s``; ``close(note)`` draws it a last time
    and ends the line. ``total`` is in any unit; ``done`` is clipped to it."""

    def __init__(self, label: str, total: float, stream=None):
        self.label, self.total = label, max(float(total), 1e-9)
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.time()
        self.last_draw = 0.0
        self.every = REDRAW_EVERY_S if getattr(self.stream, "isatty", lambda: False)() else REDRAW_EVERY_S_LOGGED
        self.done = 0.0

    def update(self, done: float, note: str = "", force: bool = False):
        self.done = min(float(done), self.total)
        now = time.time()
        if force or now - self.last_draw >= self.every:
            self.last_draw = now
            frac = self.done / self.total
            bar = "#" * int(round(frac * BAR_WIDTH))
            self.stream.write(f"\r{self.label} [{bar:.<{BAR_WIDTH}}] {100 * frac:3.0f}%  {note}  "
                              f"{now - self.t0:.0f} s\033[K")
            self.stream.flush()

    def close(self, note: str = ""):
        self.update(self.done, note, force=True)
        self.stream.write("\n")
        self.stream.flush()
