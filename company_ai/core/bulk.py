"""Passes over many small objects in a process that has imported dagster."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for one bulk pass (a page of contacts, a walk of the
    vault). Such a pass makes tens of thousands of small dicts, tuples and records that
    live until it ends; in a process that has imported dagster (~100,000 tracked objects)
    they set off full collections that cost more than the pass's own work (BENCHMARKS.md).
    What the pass makes is freed by reference counting; anything cyclic waits for the
    collector to resume afterwards."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
