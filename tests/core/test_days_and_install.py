"""What a tick processes, what a capture may run for, and when a replay's window ends."""

import json
from datetime import UTC, datetime, time, timedelta

import pytest

from company_ai.core.install import first_day, installed_at, record_first_day
from company_ai.core.timetable import (
    TIMETABLE,
    WEEKDAYS,
    WEEKEND,
    Due,
    Slot,
    SlotFacts,
    current_partitions,
    days_in_words,
    due_between,
    kind_of_job,
    plan_catchup,
    previous_tick,
    scheduled_time,
)


def utc(*args):
    return datetime(*args, tzinfo=UTC)


OUTREACH = Slot("outreach", time(7, 55), WEEKDAYS, capture=True)
SNAPSHOT = Slot("snapshots", time(8, 15), capture=True)
BRAIN = Slot("brain", time(23, 30))


def test_outreach_ticks_are_named_by_the_day_the_work_is_done_so_friday_is_filled():
    # Mon 2026-11-23 .. Mon 2026-11-30
    found = due_between([OUTREACH], utc(2026, 11, 23, 0), utc(2026, 11, 30, 9), "UTC")
    assert [d.partition for d in found] == [
        "2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-30",
    ]  # fmt: skip


def test_the_brain_of_d_is_the_night_that_ends_at_its_23_30_tick_on_d():
    tick = utc(2026, 11, 30, 23, 30)
    assert BRAIN.partition(tick, "UTC") == "2026-11-30"
    assert scheduled_time(BRAIN, "2026-11-30", "UTC") == tick
    assert previous_tick(BRAIN, tick, "UTC") == utc(2026, 11, 29, 23, 30)


def test_a_window_ends_at_its_own_tick_in_local_time():
    digest = Slot("digest", time(9, 5))
    assert scheduled_time(digest, "2026-11-30", "UTC") == utc(2026, 11, 30, 9, 5)
    assert scheduled_time(digest, "2026-07-02", "Europe/London") == utc(2026, 7, 2, 8, 5)
    assert scheduled_time(OUTREACH, "2026-11-27", "UTC") == utc(2026, 11, 27, 7, 55)
    # Monday's outreach window opens at Friday's tick.
    assert previous_tick(OUTREACH, utc(2026, 11, 30, 7, 55), "UTC") == utc(2026, 11, 27, 7, 55)
    with pytest.raises(ValueError, match="does not run on 2026-11-28"):
        scheduled_time(OUTREACH, "2026-11-28", "UTC")


def test_a_window_across_a_clock_change_runs_from_tick_to_tick():
    # London falls back on Sunday 25 October 2026: that night's window is 25 hours long,
    # and the one after the spring change (29 March) 23 hours.
    tz = "Europe/London"
    autumn = scheduled_time(BRAIN, "2026-10-25", tz)
    assert autumn - previous_tick(BRAIN, autumn, tz) == timedelta(hours=25)
    spring = scheduled_time(BRAIN, "2026-03-29", tz)
    assert spring - previous_tick(BRAIN, spring, tz) == timedelta(hours=23)
    # A tick inside the spring gap (01:30 does not exist) fires at 02:00 local.
    night = Slot("vault", time(1, 30))
    assert scheduled_time(night, "2026-03-29", tz) == utc(2026, 3, 29, 1, 0)


def test_a_capture_may_run_for_the_day_its_last_tick_took_or_its_next_tick_will_take():
    # Monday 07:00: the last outreach tick was Friday's, the next is this morning's.
    assert current_partitions(OUTREACH, utc(2026, 11, 30, 7, 0), "UTC") == (
        "2026-11-27",
        "2026-11-30",
    )
    assert current_partitions(OUTREACH, utc(2026, 11, 30, 9, 0), "UTC") == (
        "2026-11-30",
        "2026-12-01",
    )
    # A Saturday still belongs to Friday's outreach.
    assert "2026-11-27" in current_partitions(OUTREACH, utc(2026, 11, 28, 12), "UTC")
    # Snapshots at 09:00: the 08:15 tick took today; tomorrow's will take tomorrow.
    assert current_partitions(SNAPSHOT, utc(2026, 11, 30, 9, 0), "UTC") == (
        "2026-11-30",
        "2026-12-01",
    )
    assert "2026-11-29" not in current_partitions(SNAPSHOT, utc(2026, 11, 30, 9, 0), "UTC")


def test_days_in_words():
    assert days_in_words(WEEKDAYS) == "Mon–Fri"
    assert days_in_words(frozenset(range(7))) == "Every day"
    assert days_in_words(WEEKEND) == "Sat, Sun"
    assert days_in_words(frozenset({0})) == "Mon"
    assert OUTREACH.describe("Europe/London") == "Mon–Fri 07:55 Europe/London"


def test_every_job_of_the_timetable_is_a_replay_or_a_capture_and_captures_are_the_designs():
    captures = {e.job for e in TIMETABLE if kind_of_job(e.job) == "capture"}
    assert captures == {
        "vault_job",
        "state_export_job",
        "inbox_job",
        "crm_job",
        "outreach_job",
        "snapshots_job",
        "engagement_job",
        "memory_aging_job",  # ages and the TTL count to the night it runs
        "crm_audit_job",  # the CRM as it stands that morning
    }
    with pytest.raises(KeyError):
        kind_of_job("no_such_job")


def test_a_missed_capture_is_not_run_late_and_a_paused_slot_is_left_alone():
    due = [
        Due(utc(2026, 11, 28, 8, 15), "snapshots", "2026-11-27"),
        Due(utc(2026, 11, 29, 8, 15), "snapshots", "2026-11-28"),
        Due(utc(2026, 11, 29, 6, 0), "brief", "2026-11-28"),
        Due(utc(2026, 11, 30, 7, 55), "outreach", "2026-11-30"),
    ]
    plan = plan_catchup(
        due,
        {},
        late_captures={("snapshots", "2026-11-27")},
        paused={("outreach", "2026-11-30")},
    )
    assert [(r.due.job, r.due.partition) for r in plan.requests] == [
        ("brief", "2026-11-28"),
        ("snapshots", "2026-11-28"),
    ]
    assert [(d.job, d.partition) for d in plan.not_taken] == [("snapshots", "2026-11-27")]
    assert [(d.job, d.partition) for d in plan.paused] == [("outreach", "2026-11-30")]
    # A late capture already in flight is waited for, not reported as not taken.
    in_flight = {("snapshots", "2026-11-27"): SlotFacts(in_flight=True)}
    plan = plan_catchup(due[:1], in_flight, late_captures={("snapshots", "2026-11-27")})
    assert plan.not_taken == [] and len(plan.waiting) == 1


def test_the_install_date_is_recorded_once_and_read_back(tmp_path):
    now = utc(2026, 11, 30, 14)
    assert first_day(tmp_path, "UTC", now) == "2026-11-29"  # nothing recorded: yesterday
    assert installed_at(tmp_path) is None
    assert record_first_day(tmp_path, "2026-11-20", now)
    assert not record_first_day(tmp_path, "2026-01-01", now), "recorded once"
    assert first_day(tmp_path, "UTC", utc(2027, 1, 1)) == "2026-11-20"
    assert installed_at(tmp_path) == now


@pytest.mark.parametrize(
    "content",
    ["{", json.dumps({"first_day": "20-11-2026", "installed_at": "2026-11-30T00:00:00Z"})],
)
def test_a_broken_install_record_is_a_clear_error(tmp_path, content):
    (tmp_path / "install.json").write_text(content)
    with pytest.raises(ValueError, match="install.json is unreadable"):
        first_day(tmp_path, "UTC")


def test_a_start_date_that_is_not_a_day_is_refused():
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        record_first_day("/nonexistent", "yesterday", utc(2026, 11, 30))
