"""Long steps say how they are going by time, not by count: a fake clock drives them."""

from company_ai.core.progress import Progress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_at_most_every_ten_seconds_with_rate_and_time_left():
    clock, lines = Clock(), []
    progress = Progress("episodes vectors", lines.append, unit="rows", clock=clock)
    for done in range(1, 26):  # 25 batches of 100 rows, 3 s each: 75 s
        clock.now += 3
        progress(done * 100, 2500)
    # Lines at 12, 24, 36, 48, 60, 72 s, and the last one at 75 s.
    assert len(lines) == 7
    assert lines[0] == (
        "episodes vectors: 400/2,500 rows (16%), 33/s, about 1 min 03 s left (12 s so far)"
    )
    assert lines[-1] == "episodes vectors: 2,500 rows in 1 min 15 s (33/s)"


def test_a_short_step_says_nothing_and_a_slow_one_is_told_between_its_items():
    clock, lines = Clock(), []
    quick = Progress("indexing", lines.append, clock=clock)
    for done in range(1, 4):
        clock.now += 2
        quick(done, 3)
    assert lines == []
    slow = Progress("distilling", lines.append, unit="notes", clock=clock)
    clock.now += 25  # one model call that took 25 s
    slow(1, 4)
    assert lines == ["distilling: 1/4 notes (25%), 25 s each, about 1 min 15 s left (25 s so far)"]
    clock.now += 1
    slow(2, 4)
    assert len(lines) == 1, "the next line waits ten seconds"


def test_nothing_done_yet_is_said_too():
    clock, lines = Clock(), []
    progress = Progress("aging", lines.append, unit="vectors", clock=clock)
    clock.now += 11
    progress(0, 10)
    assert lines == ["aging: 0/10 vectors (0%), 0/s, time left unknown (11 s so far)"]


def test_durations_read_plainly():
    assert [duration(s) for s in (0, 9.6, 65, 3600 + 120)] == [
        "0 s",
        "10 s",
        "1 min 05 s",
        "1 h 02 min",
    ]
