import json
from datetime import UTC, datetime

import pytest

from company_ai.core.ops import BriefInput, alerts, build_brief, build_digest, export_state
from company_ai.core.ops.reports import count_section, runs_section
from company_ai.core.ops.state import write_json_atomic
from company_ai.core.runs import CheckInfo, RunInfo
from company_ai.core.store import Stores
from company_ai.core.timetable import Due

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

SINCE, UNTIL = datetime(2026, 11, 29, 9, 5, tzinfo=UTC), datetime(2026, 11, 30, 9, 5, tzinfo=UTC)


def test_an_alert_is_recorded_once_per_key(stores):
    with stores.connect("ops") as ops:
        assert alerts.enqueue(ops, "run-failure:1", "boom", now=NOW)
        assert not alerts.enqueue(ops, "run-failure:1", "boom again", now=NOW)
        assert alerts.pending_count(ops) == 1


def test_a_failed_delivery_keeps_the_alert_and_the_order_for_the_next_flush(stores):
    delivered = []

    def down(text):
        raise ConnectionError("refused")

    with stores.connect("ops") as ops:
        alerts.enqueue(ops, "a", "first", now=NOW)
        alerts.enqueue(ops, "b", "second", now=NOW)
        result = alerts.flush(ops, down, clock=lambda: NOW)
        assert (result.sent, result.pending) == (0, 2)
        assert result.error == "ConnectionError: refused"
        result = alerts.flush(ops, delivered.append, clock=lambda: NOW)
        assert (result.sent, result.pending, result.error) == (2, 0, None)
        assert alerts.flush(ops, delivered.append, clock=lambda: NOW).sent == 0
        attempts = ops.execute("SELECT attempts FROM alerts ORDER BY id").fetchall()
    assert delivered == ["first", "second"]
    assert [a[0] for a in attempts] == [2, 1]


def run(status, partition="2026-11-29", attempt=None, job="memory_job", checks=()):
    run_id = f"{status}-{partition}-{attempt}".ljust(8, "x")
    return RunInfo(run_id, job, partition, status, attempt, checks=checks)


def test_the_digest_says_what_ran_failed_was_missed_not_taken_and_recovered():
    quarantined = CheckInfo("outreach_drafts", "fabrication_gate", False, "WARN")
    runs = [
        run("SUCCESS", checks=(quarantined,)),
        run("FAILURE", "2026-11-28"),
        run("SUCCESS", "2026-11-27", 1, checks=(quarantined,)),
        run("SUCCESS", "2026-11-26", checks=(CheckInfo("a", "b", True, "WARN"),)),
        RunInfo(
            "declined", "crm_job", "2026-11-20", "SUCCESS", not_taken="launched for a past day"
        ),
    ]
    missed = [Due(datetime(2026, 11, 30, 6, 0, tzinfo=UTC), "morning_brief_job", "2026-11-29")]
    late = [Due(datetime(2026, 11, 29, 8, 15, tzinfo=UTC), "snapshots_job", "2026-11-28")]
    text = build_digest(runs, missed, SINCE, UNTIL, not_taken=late).render()
    assert "ran 3 · failed 1 · missed 1 · not taken 2 · recovered 1 · warnings 2" in text
    assert "ERROR: failed:\n- memory_job 2026-11-28" in text
    assert "- morning_brief_job 2026-11-29 (due 2026-11-30T06:00:00Z)" in text
    assert (
        "never run late):\n- snapshots_job 2026-11-28 (due 2026-11-29T08:15:00Z): not taken, its "
        "tick passed with no run\n- crm_job 2026-11-20 (run declined): not taken, launched for a "
        "past day\n"
    ) in text
    assert "crm_job" not in text.split("Ran:")[1], "a run that did nothing did not run"
    assert "memory_job 2026-11-27 (run SUCCESS-), attempt 1" in text
    assert (
        "WARN (counted here, not alerted one by one):\n- outreach_drafts fabrication_gate: 2"
        in text
    )
    assert text.endswith("the scheduler is dark: check dagster-daemon.")


def test_the_brief_names_each_failed_run_with_its_error():
    runs = [run("SUCCESS"), run("FAILURE", "2026-11-28"), run("STARTED", "2026-11-29")]
    runs[1] = RunInfo(runs[1].run_id, "outreach_job", "2026-11-28", "FAILURE", error="boom")
    brief = build_brief(BriefInput(Stores("/nonexistent"), SINCE, UNTIL, runs), [runs_section])
    assert "1 succeeded, 1 failed, 1 in flight or queued" in brief
    assert "FAILED outreach_job 2026-11-28 (run FAILURE-): boom" in brief


def test_the_brief_leaves_out_stores_and_tables_that_do_not_exist(sample_stores, stores):
    brief = build_brief(BriefInput(sample_stores, SINCE, UNTIL, [run("SUCCESS")], 90, "2026-11-28"))
    assert "Runs:\n  1 succeeded, 0 failed" in brief
    assert "Replies:" in brief
    assert "brain" not in brief, "the sample has no brain.db yet"
    sections = [count_section("Not yet", "outreach", "no_such_table", "status = 'waiting'")]
    assert build_brief(BriefInput(sample_stores, SINCE, UNTIL, []), sections).count("\n") == 0
    assert "Replies" not in build_brief(BriefInput(stores, SINCE, UNTIL, []))


def test_a_count_section_counts_in_the_window(sample_stores):
    where = "replied_at >= {since} AND replied_at < {until}"
    section = count_section("Replies", "outreach", "messages", where)
    since = datetime(2026, 10, 15, tzinfo=UTC)  # the sample's replies spread over 90 days
    title, lines = section(BriefInput(sample_stores, since, UNTIL, []))
    with sample_stores.connect("outreach", readonly=True) as conn:
        everything = conn.execute("SELECT count(replied_at) FROM messages").fetchone()[0]
        in_window = conn.execute(
            "SELECT count(*) FROM messages WHERE replied_at >= $1 AND replied_at < $2",
            ("2026-10-15T00:00:00Z", "2026-11-30T09:05:00Z"),
        ).fetchone()[0]
    assert title == "Replies" and int(lines[0]) == in_window
    assert 0 < in_window < everything, "the where clause must narrow the count"


def test_a_count_section_reads_any_store_by_named_window_and_skips_a_missing_table(stores):
    # The ops store: on PostgreSQL too under --stores=postgres.
    with stores.connect("ops") as ops:
        for key, at in (("a", SINCE), ("b", UNTIL), ("c", datetime(2026, 11, 30, tzinfo=UTC))):
            alerts.enqueue(ops, key, f"alert {key}::{at:%H:%M}", now=at)
    where = "created_at >= {since} AND created_at < {until} AND text != 'x::y:z'"
    title, lines = count_section("Alerts", "ops", "alerts", where)(
        BriefInput(stores, SINCE, UNTIL, [])
    )
    assert (title, lines) == ("Alerts", ["2"])  # a and c: b is at the window's end
    for table, where in (("no_such_table", "1 = 1"), ("alerts", "no_such_column = 1")):
        assert (
            count_section("Not yet", "ops", table, where)(BriefInput(stores, SINCE, UNTIL, []))
            is None
        )


def test_state_files_are_written_whole(sample_stores, tmp_path):
    state = export_state(
        sample_stores, tmp_path / "state", tmp_path / "snaps", "2026-11-30T06:15:00Z"
    )
    assert sorted(state) == ["crm.json", "memory.json", "ops.json", "outreach.json", "stores.json"]
    assert state["crm.json"]["audit"] is None, "no audit was recorded"
    memory = json.loads((tmp_path / "state" / "memory.json").read_text())
    assert memory["episodes"] == sum(memory["episodes_by_type"].values()) > 0
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == sorted(state)
    # Every store the sample made is counted, a file or a server's schema.
    tables = state["stores.json"]
    assert tables["crm"]["contacts"] == 300 and tables["memory"]["contact_episodes"] > 0
    assert tables["crm"]["intake_refusals"] == 0 and "company_ai_schema" not in tables["crm"]


def test_an_atomic_write_that_fails_leaves_the_old_file(tmp_path):
    target = tmp_path / "x.json"
    write_json_atomic(target, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"v": object()})
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_the_brief_reports_the_nights_most_important_brain_facts(data):
    from company_ai.core.brain import synthesize_day, write_day
    from company_ai.core.times import Day
    from tests.core.brain_inputs import DAY, day_runs, seed_day

    stores = Stores(data)
    seed_day(stores)
    with stores.connect("brain") as conn:
        write_day(conn, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()))
    brief = build_brief(BriefInput(stores, SINCE, UNTIL, [], 90, DAY))
    section = brief.split(f"The night's brain ({DAY}), most important first:\n")[1]
    lines = section.splitlines()[:5]
    importances = [int(line.strip()[1]) for line in lines]
    assert importances == sorted(importances, reverse=True) and importances[0] == 5
    empty = build_brief(BriefInput(stores, SINCE, UNTIL, [], 90, "2026-01-01"))
    assert "no facts: the brain job has not covered that day" in empty
