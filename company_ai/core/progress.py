"""How a long step is going, told by time: items done, the rate, and the time left.

A step that can run for minutes (a cold build of a vector collection, the vault's distil
and index, memory aging) takes a `Progress` as its `progress(done, total)` callback and
calls it after each batch. It says nothing until `every_s` (10 s) has passed since the
step began or since its last line, so a short step stays quiet and a long one reports at
least that often (as often as its batches end: a line is told between batches, never
from inside one). The line goes to `report` (an asset passes `context.log.info`); the
clock is an argument, so a test drives it by hand. Stdlib only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

EVERY_S = 10.0


def duration(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def rate(per_s: float) -> str:
    """1,234/s, 2.5/s, or for slow items (a model call each) 25 s each."""
    if per_s >= 10 or per_s <= 0:
        return f"{per_s:,.0f}/s"
    return f"{per_s:.1f}/s" if per_s >= 0.1 else f"{duration(1 / per_s)} each"


class Progress:
    """A `progress(done, total)` callback that tells `report` a line at most every `every_s`
    seconds of `clock`, and a last line at the end when the step took that long."""

    def __init__(
        self,
        what: str,
        report: Callable[[str], None],
        *,
        unit: str = "items",
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.report, self.unit, self.every_s, self.clock = (
            what, report, unit, every_s, clock,
        )  # fmt: skip
        self.started = self.last = clock()
        self.lines = 0
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        if self.finished:
            return
        now = self.clock()
        self.finished = done >= total
        if now - (self.started if self.finished else self.last) < self.every_s:
            return  # a step shorter than `every_s` ends without a word
        self.last = now
        self.lines += 1
        self.report(self.line(done, total, now - self.started))

    def line(self, done: int, total: int, elapsed: float) -> str:
        per_s = done / elapsed if elapsed > 0 else 0.0
        if done >= total:
            return f"{self.what}: {done:,} {self.unit} in {duration(elapsed)} ({rate(per_s)})"
        left = f"about {duration((total - done) / per_s)} left" if per_s else "time left unknown"
        share = f"{100 * done / total:.0f}%" if total else "0%"
        return (
            f"{self.what}: {done:,}/{total:,} {self.unit} ({share}), {rate(per_s)}, {left}"
            f" ({duration(elapsed)} so far)"
        )
