"""Reading the ledger: Dagster's own run history, set against the timetable.

Shared by the catch-up sensor (what is missing now) and the reports (what ran, failed,
was missed and recovered). The clock is `company_ai.core.times.utc_now`, read through
the module so tests can set it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import dagster as dg

from company_ai import settings
from company_ai.core import times
from company_ai.core.reports import RunInfo
from company_ai.core.timetable import Due, SlotFacts, due_between

if TYPE_CHECKING:
    from company_ai.schedules import Entry

CATCHUP_TAG = "company_ai/catchup_attempt"  # on runs the catch-up sensor launched
GRACE = timedelta(minutes=10)  # a slot is missed once it is this overdue
IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
_FAILED = {dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def now() -> datetime:
    return times.utc_now()


def due(entries: list[Entry], since: datetime, until: datetime) -> list[Due]:
    """Slots of `entries` due in (since, until - GRACE], oldest first."""
    return due_between(
        [e.slot for e in entries],
        since,
        until - GRACE,
        settings.timezone(),
        first_partition=settings.start_date(),
    )


def slot_facts(
    instance: dg.DagsterInstance, entries: list[Entry], slots: list[Due]
) -> tuple[dict[tuple[str, str], SlotFacts], set[str]]:
    """Facts per (job, partition) of `slots`, and the jobs with any run in flight."""
    facts: dict[tuple[str, str], SlotFacts] = {}
    busy: set[str] = set()
    by_job = {e.job: e for e in entries}
    for job in sorted({s.job for s in slots}):
        done: set[str] | None = None
        for asset in by_job[job].assets:
            found = set(instance.get_materialized_partitions(dg.AssetKey(asset)))
            done = found if done is None else done & found
        earliest = min(s.tick for s in slots if s.job == job) - timedelta(days=2)
        runs = instance.get_runs(dg.RunsFilter(job_name=job, created_after=earliest))
        if any(r.status in IN_FLIGHT for r in runs):
            busy.add(job)
        for slot in (s for s in slots if s.job == job):
            mine = [r for r in runs if r.tags.get("dagster/partition") == slot.partition]
            facts[(job, slot.partition)] = SlotFacts(
                materialized=slot.partition in (done or set()),
                in_flight=any(r.status in IN_FLIGHT for r in mine),
                failures=sum(r.status in _FAILED for r in mine),
            )
    return facts, busy


def caught_up(instance: dg.DagsterInstance, job: str, partition: str) -> bool:
    """Whether a catch-up run for this slot succeeded or is in flight (the schedule's own
    tick then skips, so a schedule and the sensor never both run one slot)."""
    runs = instance.get_runs(dg.RunsFilter(job_name=job, tags={"dagster/partition": partition}))
    return any(
        CATCHUP_TAG in r.tags and (r.status in IN_FLIGHT or r.status == dg.DagsterRunStatus.SUCCESS)
        for r in runs
    )


def missed(
    instance: dg.DagsterInstance, entries: list[Entry], since: datetime, until: datetime
) -> list[Due]:
    """Slots of `entries` due in the window that have neither a materialisation nor a run."""
    slots = due(entries, since, until)
    facts, _ = slot_facts(instance, entries, slots)
    return [
        s
        for s in slots
        if not (facts[(s.job, s.partition)].materialized or facts[(s.job, s.partition)].in_flight)
    ]


def runs_since(instance: dg.DagsterInstance, since: datetime, exclude: str = "") -> list[RunInfo]:
    """Runs updated since `since` (oldest first), as plain records for the reports."""
    records = instance.get_run_records(dg.RunsFilter(updated_after=since), limit=500)
    found = []
    for record in sorted(records, key=lambda r: r.create_timestamp):
        run = record.dagster_run
        if run.run_id == exclude:
            continue
        attempt = run.tags.get(CATCHUP_TAG)
        found.append(
            RunInfo(
                run_id=run.run_id,
                job=run.job_name,
                partition=run.tags.get("dagster/partition"),
                status=run.status.value,
                catchup_attempt=int(attempt) if attempt else None,
                error=_failure(instance, run) if run.status in _FAILED else None,
            )
        )
    return found


def _failure(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str | None:
    events = instance.get_records_for_run(
        run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE, limit=1
    ).records
    if not events:
        return None
    event = events[0].event_log_entry.dagster_event
    error = event.step_failure_data.error if event and event.step_failure_data else None
    return f"{event.step_key}: {error.message.strip().splitlines()[0]}" if error else None
