"""The timetable: every job and schedule (see DESIGN.md, "The day").

`TIMETABLE` is the one list of daily slots. Each entry makes a job (its assets, with
`dagster/max_runtime` sized by the arithmetic beside it), a schedule (RUNNING by
default, in `COMPANY_AI_TIMEZONE`) and the freshness policy of its assets; the catch-up
sensor and the digest read the same list to know which slots should have run. A tick
processes the last complete local day (the partition Dagster calls "last"). Weekday
entries (`WEEKDAYS`) do not run at weekends. Adding a job is one entry.
"""

from dataclasses import dataclass
from datetime import time, timedelta

import dagster as dg

from company_ai import ledger, settings
from company_ai.core.timetable import EVERY_DAY, WEEKDAYS, Slot, partition_for

__all__ = ["JOBS", "TIMETABLE", "WEEKDAYS", "Entry", "jobs", "schedules"]


@dataclass(frozen=True)
class Entry:
    """`job` materialises `assets` for the last complete day at local `at` on `weekdays`."""

    job: str
    assets: tuple[str, ...]
    at: time
    max_runtime_s: int
    weekdays: frozenset[int] = EVERY_DAY

    @property
    def slot(self) -> Slot:
        return Slot(self.job, self.at, self.weekdays)

    @property
    def selection(self) -> dg.AssetSelection:
        return dg.AssetSelection.assets(*self.assets)

    def freshness_policy(self) -> dg.FreshnessPolicy:
        """FAIL once a tick is missed: the longest gap between ticks (a day, or Friday to
        Monday), plus the catch-up sensor's 10 minutes, the run's own budget and an hour."""
        gap = timedelta(days=self.slot.max_gap_days)
        budget = timedelta(minutes=10, seconds=self.max_runtime_s)
        return dg.FreshnessPolicy.time_window(
            warn_window=gap + budget, fail_window=gap + budget + timedelta(hours=1)
        )


TIMETABLE: list[Entry] = [
    # Sealing reads one day's rows once and writes one row: about 0.1 s at the sample's
    # ~200 episodes a day and ~1 s at a 1.5M-episode store. 600 s is ample headroom and
    # still stops a wedged run long before the next night. (At 23:15 the last complete
    # day is yesterday: today's episodes are sealed tomorrow night, late arrivals included.)
    Entry("memory_job", ("contact_episodes",), time(23, 15), 600),
    # Outreach: 20 research passes + 10 drafts at about a minute of model time each
    # = 30 min; the gate (pure code, < 1 ms a draft) and 10 sends (a few s each) add
    # under a minute. 1.5 x headroom for a slow model: 45 min = 2700 s, still well
    # before the 08:15 snapshot wants the stores quiet.
    Entry(
        "outreach_job",
        ("research_findings", "outreach_drafts", "outreach_messages"),
        time(7, 55),
        2700,
        WEEKDAYS,
    ),
    # The vault pipeline (staging -> pages -> index). Measured at 10,000 notes on 2 busy
    # cores (BENCHMARKS.md): staging cold 4-12 s, the offline distiller 2 ms a page,
    # embedding up to 48 ms a page. Sized for a heavy night through Ollama: 100 changed
    # notes x ~20 s a page = 2,000 s, + all 10,000 pages re-embedded (a rebuild) x 48 ms
    # = 480 s, + staging 12 s and the fabrication re-check 20 s: about 2,500 s. 3,600 s
    # leaves headroom; `recall_pages`' max_pages caps the model calls of a bigger backlog,
    # which the next nights finish (every page is committed as it is done).
    Entry("vault_job", ("vault_staging", "recall_pages", "recall_index"), time(0, 30), 3600),
    # The brief reads ≤500 run records and counts a few tables: well under 5 s. Delivery
    # is one HTTP call with a 10 s timeout per pending alert; 300 s covers ~25 retries.
    Entry("morning_brief_job", ("morning_brief",), time(6, 0), 300),
    # Counting every table of six stores: ~0.5 s on the demo, ~5 s on a 1.5M-episode
    # memory; four small files. 300 s.
    Entry("state_export_job", ("state_export",), time(6, 15), 300),
    # Measured: 5.8 MB of stores copied, hashed and counted in 0.25 s on a loaded 2-core
    # box (BENCHMARKS.md), i.e. ~45 s per GB. A 2 GB data dir ≈ 90 s; 1800 s is 20x that.
    Entry("snapshots_job", ("db_snapshots",), time(8, 15), 1800),
    # Like the brief: ≤500 run records, the timetable for one day, one send. 300 s.
    Entry("digest_job", ("daily_digest",), time(9, 5), 300),
]

# The restore drill restores one snapshot (a copy at disk speed plus integrity_check,
# which reads every page: ~10 s per GB) on the 1st of each month. 1800 s.
RESTORE_DRILL_MAX_RUNTIME_S = 1800
RESTORE_DRILL_CRON = "45 8 1 * *"  # after the 08:15 snapshot of the 1st


# The restore drill is a check on db_snapshots that runs monthly, not with every snapshot.
RESTORE_DRILL = dg.AssetSelection.checks(
    dg.AssetCheckKey(dg.AssetKey("db_snapshots"), "restore_drill")
)


def _job(entry: Entry):
    selection = entry.selection
    if "db_snapshots" in entry.assets:
        selection = selection - RESTORE_DRILL
    return dg.define_asset_job(
        entry.job,
        selection=selection,
        tags={"dagster/max_runtime": str(entry.max_runtime_s)},
    )


def _schedule(entry: Entry, job) -> dg.ScheduleDefinition:
    tz = settings.timezone()

    @dg.schedule(
        name=f"{entry.job}_schedule",
        cron_schedule=entry.slot.cron,
        execution_timezone=tz,
        target=job,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"{entry.job} at {entry.at:%H:%M} {tz} on weekdays {sorted(entry.weekdays)}",
    )
    def _tick(context: dg.ScheduleEvaluationContext):
        partition = partition_for(context.scheduled_execution_time, tz)
        if ledger.caught_up(context.instance, entry.job, partition):
            return dg.SkipReason(f"{entry.job} {partition} was already run by the catch-up sensor")
        return dg.RunRequest(run_key=partition, partition_key=partition)

    return _tick


restore_drill_job = dg.define_asset_job(
    "restore_drill_job",
    selection=RESTORE_DRILL,
    tags={"dagster/max_runtime": str(RESTORE_DRILL_MAX_RUNTIME_S)},
)

JOBS = {entry.job: _job(entry) for entry in TIMETABLE}
jobs = [*JOBS.values(), restore_drill_job]
schedules = [_schedule(entry, JOBS[entry.job]) for entry in TIMETABLE] + [
    dg.ScheduleDefinition(
        name="restore_drill_schedule",
        cron_schedule=RESTORE_DRILL_CRON,
        execution_timezone=settings.timezone(),
        target=restore_drill_job,
        default_status=dg.DefaultScheduleStatus.RUNNING,
    )
]


def with_freshness(assets: list) -> list:
    """Every scheduled daily asset gets its entry's freshness policy."""
    policies = {dg.AssetKey(a): e.freshness_policy() for e in TIMETABLE for a in e.assets}

    def apply(spec: dg.AssetSpec) -> dg.AssetSpec:
        policy = policies.get(spec.key)
        return dg.apply_freshness_policy(spec, policy) if policy else spec

    return list(dg.map_asset_specs(apply, assets))
