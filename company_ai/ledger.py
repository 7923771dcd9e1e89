"""Reading the ledger: Dagster's own run history, set against the timetable.

Shared by the catch-up sensor (what is missing now), the reports (what ran, failed, was
missed and recovered) and the brain (what the system did on a day). Reports and the
brain are replays, so everything they read is "as of" an instant: runs created before
it, with the status they had then. Nothing here reads the clock or the environment: the
instants and the settings are passed in.

A run given its clock (`PLAYED_AT_TAG`: the demo plays past nights at their moments) is
read at its own moments: created at the instant its tag names, started and ended as
long after that as it really did. Only an install that allows played clocks
(`played=True`) reads them so; the scan is then over every run (a demo holds a few dozen).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg

from company_ai.constants import NOT_TAKEN_TAG, PLAYED_AT_TAG
from company_ai.core import install
from company_ai.core.runs import CheckInfo, RunInfo
from company_ai.core.times import parse_utc, to_iso
from company_ai.core.timetable import Due, Entry, SlotFacts, current_partitions, due_between
from company_ai.sensors.internal import InstigatorStatus, InstigatorType
from company_ai.settings import Settings

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
_SEVERITY = {dg.AssetCheckSeverity.WARN: "WARN", dg.AssetCheckSeverity.ERROR: "ERROR"}


def due(entries: list[Entry], since: datetime, until: datetime, settings: Settings) -> list[Due]:
    """Slots of `entries` due in (since, until - GRACE], oldest first."""
    return due_between(
        [e.slot for e in entries],
        since,
        until - GRACE,
        settings.timezone,
        first_partition=settings.start_date,
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


def late_captures(
    entries: list[Entry], slots: list[Due], at: datetime, tz: str
) -> set[tuple[str, str]]:
    """(job, partition) of capture slots whose moment has passed at `at`: never run late."""
    captures = {e.job: e.slot for e in entries if e.capture}
    return {
        (s.job, s.partition)
        for s in slots
        if s.job in captures and s.partition not in current_partitions(captures[s.job], at, tz)
    }


def paused_slots(
    instance: dg.DagsterInstance, entries: list[Entry], slots: list[Due]
) -> set[tuple[str, str]]:
    """(job, partition) of slots whose schedule a person had stopped in the UI: stopped
    now, or switched back on after the slot fell due. Stopping a schedule (a holiday)
    stops its catch-up too."""
    states = {
        s.instigator_name: s
        for s in instance.all_instigator_state(instigator_type=InstigatorType.SCHEDULE)
    }
    paused = set()
    for slot in slots:
        state = states.get(f"{slot.job}_schedule")
        if state is None:
            continue
        started = getattr(state.instigator_data, "start_timestamp", None)
        if state.status == InstigatorStatus.STOPPED or (
            state.status == InstigatorStatus.RUNNING and started and slot.tick.timestamp() < started
        ):
            paused.add((slot.job, slot.partition))
    return paused


def caught_up(instance: dg.DagsterInstance, job: str, partition: str) -> bool:
    """Whether a catch-up run for this slot succeeded or is in flight (the schedule's own
    tick then skips, so a schedule and the sensor never both run one slot)."""
    runs = instance.get_runs(dg.RunsFilter(job_name=job, tags={"dagster/partition": partition}))
    return any(
        CATCHUP_TAG in r.tags and (r.status in IN_FLIGHT or r.status == dg.DagsterRunStatus.SUCCESS)
        for r in runs
    )


def _shift(run: dg.DagsterRun, created: float, played: bool) -> float:
    """Seconds from the wall clock to the run's own: 0 unless it was given its clock."""
    tag = run.tags.get(PLAYED_AT_TAG) if played else None
    return parse_utc(tag).timestamp() - created if tag else 0.0


def _records(
    instance: dg.DagsterInstance,
    since: datetime | None,
    until: datetime,
    played: bool,
    statuses: list[dg.DagsterRunStatus] | None = None,
    limit: int = 2000,
) -> list[tuple[dg.RunRecord, float]]:
    """(record, shift) of the runs created in (since, until] by their own clocks, oldest
    first."""
    if played:  # their wall-clock times say nothing of their moments: read them all
        found = instance.get_run_records(dg.RunsFilter(statuses=statuses or []), limit=5000)
    else:
        found = instance.get_run_records(
            dg.RunsFilter(created_after=since, created_before=until, statuses=statuses or []),
            limit=limit,
        )
    low = since.timestamp() if since else float("-inf")
    kept = []
    for record in found:
        created = record.create_timestamp.timestamp()
        shift = _shift(record.dagster_run, created, played)
        if low < created + shift <= until.timestamp():
            kept.append((record, shift))
    return sorted(
        kept, key=lambda r: (r[0].create_timestamp.timestamp() + r[1], r[0].dagster_run.run_id)
    )


def runs_between(
    instance: dg.DagsterInstance,
    since: datetime,
    until: datetime,
    exclude: str = "",
    as_of: datetime | None = None,
    *,
    played: bool = False,
) -> list[RunInfo]:
    """Runs created in (since, until], oldest first, each with the status it had at
    `as_of` (default `until`; a run still going then is STARTED), its times and its
    check results."""
    as_of = as_of or until
    found = []
    for record, shift in _records(instance, since, until, played):
        run = record.dagster_run
        if run.run_id == exclude:
            continue
        end = record.end_time + shift if record.end_time else None
        ended = end if end and end <= as_of.timestamp() else None
        status = run.status.value if ended or run.status not in _FINISHED else "STARTED"
        attempt = run.tags.get(CATCHUP_TAG)
        found.append(
            RunInfo(
                run_id=run.run_id,
                job=run.job_name,
                partition=run.tags.get("dagster/partition"),
                status=status,
                catchup_attempt=int(attempt) if attempt else None,
                error=_failure(instance, run) if ended and run.status in _FAILED else None,
                started_at=_iso(record.start_time + shift if record.start_time else None),
                ended_at=_iso(ended),
                checks=_checks(instance, run.run_id) if ended else (),
                not_taken=run.tags.get(NOT_TAKEN_TAG),
            )
        )
    return found


_FINISHED = {dg.DagsterRunStatus.SUCCESS, *_FAILED}


def _iso(stamp: float | None) -> str | None:
    return to_iso(datetime.fromtimestamp(stamp, UTC)) if stamp else None


def _checks(instance: dg.DagsterInstance, run_id: str) -> tuple[CheckInfo, ...]:
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION, limit=200
    ).records
    found = []
    for record in records:
        event = record.event_log_entry.dagster_event
        data = event.asset_check_evaluation_data if event else None
        if data is not None:
            found.append(
                CheckInfo(
                    asset=data.asset_key.to_user_string(),
                    name=data.check_name,
                    passed=data.passed,
                    severity=_SEVERITY.get(data.severity, "ERROR"),
                )
            )
    return tuple(found)


def last_done_before(
    instance: dg.DagsterInstance,
    entry: Entry,
    before: datetime,
    partition_below: str,
    *,
    played: bool = False,
) -> str | None:
    """The latest partition below `partition_below` that a successful run of `entry`'s
    job (or of its assets, launched from the asset graph) created before `before` made, as
    the ledger stood then; None if there is none."""
    success = [dg.DagsterRunStatus.SUCCESS]
    runs = [r.dagster_run for r, _ in _records(instance, None, before, played, success, 500)]
    assets = {dg.AssetKey(a) for a in entry.assets}
    done = [
        r.tags.get("dagster/partition") or ""
        for r in runs
        if r.job_name == entry.job or assets & set(r.asset_selection or ())
    ]
    return max((p for p in done if p and p < partition_below), default=None)


def missed_between(
    instance: dg.DagsterInstance,
    entries: list[Entry],
    since: datetime,
    until: datetime,
    settings: Settings,
) -> list[Due]:
    """Slots of `entries` due in the window for which no run had been created by `until`
    (slots that fell due before the install are nobody's miss)."""
    installed = install.installed_at(settings.data_dir)
    slots = [
        s for s in due(entries, since, until, settings) if installed is None or s.tick >= installed
    ]
    started = {
        (r.dagster_run.job_name, r.dagster_run.tags.get("dagster/partition"))
        for r, _ in _records(
            instance, since - timedelta(days=8), until, settings.played_clock, limit=5000
        )
    }
    return [s for s in slots if (s.job, s.partition) not in started]


def _failure(instance: dg.DagsterInstance, run: dg.DagsterRun) -> str | None:
    """`step: what went wrong`, in the words a person needs: a `Failure`'s description, else
    the first line of the innermost error (not Dagster's "Error occurred while executing")."""
    events = instance.get_records_for_run(
        run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE, limit=1
    ).records
    event = events[0].event_log_entry.dagster_event if events else None
    data = event.step_failure_data if event else None
    if event is None or data is None:
        return None
    if data.user_failure_data and data.user_failure_data.description:
        said = data.user_failure_data.description
    elif data.error:
        error = data.error
        while error.cause is not None:
            error = error.cause
        said = error.message
    else:
        return None
    return f"{event.step_key}: {said.strip().splitlines()[0]}"
