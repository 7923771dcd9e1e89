from datetime import UTC, datetime, time

import pytest

from company_ai.core.timetable import (
    WEEKDAYS,
    Due,
    Slot,
    SlotFacts,
    due_between,
    local_tick,
    plan_catchup,
)


def utc(*args):
    return datetime(*args, tzinfo=UTC)


def test_cron_strings_count_weekdays_from_sunday():
    assert Slot("a", time(23, 15)).cron == "15 23 * * *"
    assert Slot("a", time(7, 55), WEEKDAYS).cron == "55 7 * * 1,2,3,4,5"
    assert Slot("a", time(9, 0), frozenset({5, 6})).cron == "0 9 * * 0,6"


def test_the_longest_gap_is_friday_to_monday_for_weekday_slots():
    assert Slot("a", time(1, 0)).max_gap_days == 1
    assert Slot("a", time(1, 0), WEEKDAYS).max_gap_days == 3
    assert Slot("a", time(1, 0), frozenset({2})).max_gap_days == 7


def test_weekdays_must_be_a_subset_of_the_week():
    with pytest.raises(ValueError, match="weekdays"):
        Slot("a", time(1, 0), frozenset({7}))
    with pytest.raises(ValueError, match="weekdays"):
        Slot("a", time(1, 0), frozenset())


def test_a_tick_processes_the_partition_of_its_own_local_day():
    slot = Slot("a", time(0, 30))
    assert slot.partition(utc(2026, 11, 30, 0, 30), "UTC") == "2026-11-30"
    assert slot.partition(utc(2026, 11, 30, 23, 15), "UTC") == "2026-11-30"
    # 23:30 UTC on the 29th is already the 30th in Berlin.
    assert slot.partition(utc(2026, 11, 29, 23, 30), "Europe/Berlin") == "2026-11-30"


def test_slots_due_in_a_window_oldest_first_and_the_window_is_half_open():
    slots = [Slot("late", time(23, 15)), Slot("early", time(6, 0))]
    found = due_between(slots, utc(2026, 11, 29, 6, 0), utc(2026, 11, 30, 6, 0), "UTC")
    assert found == [
        Due(utc(2026, 11, 29, 23, 15), "late", "2026-11-29"),
        Due(utc(2026, 11, 30, 6, 0), "early", "2026-11-30"),
    ]


def test_weekday_slots_skip_the_weekend():
    # Fri 2026-11-27 .. Tue 2026-12-01
    found = due_between(
        [Slot("outreach", time(7, 55), WEEKDAYS)],
        utc(2026, 11, 27, 0, 0),
        utc(2026, 12, 1, 23, 0),
        "UTC",
    )
    assert [d.tick.date().isoformat() for d in found] == ["2026-11-27", "2026-11-30", "2026-12-01"]


def test_slots_are_in_local_time():
    found = due_between(
        [Slot("brief", time(6, 0))], utc(2026, 7, 1, 0, 0), utc(2026, 7, 2, 0, 0), "Europe/London"
    )
    assert found == [Due(utc(2026, 7, 1, 5, 0), "brief", "2026-07-01")]


def test_partitions_before_the_first_are_left_out():
    found = due_between(
        [Slot("a", time(1, 0))],
        utc(2025, 1, 1, 0, 0),
        utc(2025, 1, 3, 12, 0),
        "UTC",
        first_partition="2025-01-01",
    )
    assert [d.partition for d in found] == ["2025-01-01", "2025-01-02", "2025-01-03"]


def test_naive_instants_are_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        due_between([], datetime(2026, 1, 1), utc(2026, 1, 2), "UTC")


def test_spring_forward_fires_at_the_first_valid_minute_after_the_gap():
    # Europe/London 2026-03-29: 01:00 GMT jumps to 02:00 BST; 01:30 does not exist.
    assert local_tick(datetime(2026, 3, 29).date(), time(1, 30), "Europe/London") == utc(
        2026, 3, 29, 1, 0
    )
    # A time outside the gap is its usual self, in the new offset.
    assert local_tick(datetime(2026, 3, 29).date(), time(6, 0), "Europe/London") == utc(
        2026, 3, 29, 5, 0
    )


def test_fall_back_fires_once_at_the_second_occurrence():
    # Europe/London 2026-10-25: 01:30 happens at 00:30 UTC (BST) and 01:30 UTC (GMT).
    found = due_between(
        [Slot("a", time(1, 30))],
        utc(2026, 10, 24, 12, 0),
        utc(2026, 10, 25, 12, 0),
        "Europe/London",
    )
    assert found == [Due(utc(2026, 10, 25, 1, 30), "a", "2026-10-25")]


def test_a_dst_week_still_has_one_tick_a_day():
    found = due_between(
        [Slot("a", time(1, 30)), Slot("b", time(23, 15))],
        utc(2026, 3, 25, 12, 0),
        utc(2026, 4, 1, 12, 0),
        "Europe/London",
    )
    for job in "ab":
        days = [d.partition for d in found if d.job == job]
        assert len(days) == len(set(days)) == 7


def due(day, job="a", hour=2):
    return Due(utc(2026, 3, day, hour, 0), job, f"2026-03-{day - 1:02d}")


def test_missed_slots_run_oldest_first_and_done_or_running_ones_do_not():
    slots = [due(5), due(3), due(4), due(2)]
    facts = {
        ("a", "2026-03-01"): SlotFacts(materialized=True),
        ("a", "2026-03-03"): SlotFacts(in_flight=True),
    }
    plan = plan_catchup(slots, facts)
    assert [(r.due.partition, r.attempt) for r in plan.requests] == [
        ("2026-03-02", 1),
        ("2026-03-04", 1),
    ]
    assert plan.waiting == [due(4)]


def test_a_sequential_job_runs_one_day_at_a_time():
    slots = [due(2), due(3), due(4), due(3, job="b")]
    plan = plan_catchup(slots, {}, sequential={"a"})
    assert [(r.due.job, r.due.partition) for r in plan.requests] == [
        ("a", "2026-03-01"),
        ("b", "2026-03-02"),
    ]
    busy = plan_catchup(slots, {}, sequential={"a"}, busy={"a"})
    assert [r.due.job for r in busy.requests] == ["b"]


def test_failed_slots_are_retried_with_a_new_run_key_until_the_limit():
    slots = [due(2), due(3)]
    facts = {("a", "2026-03-01"): SlotFacts(failures=1), ("a", "2026-03-02"): SlotFacts(failures=3)}
    plan = plan_catchup(slots, facts, max_attempts=3)
    assert [r.run_key for r in plan.requests] == ["catchup:a:2026-03-01:2"]
    assert plan.gave_up == [due(3)]
