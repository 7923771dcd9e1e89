"""The timetable as Dagster sees it: one job, schedule and freshness policy per entry.

`core.timetable.TIMETABLE` is the one list of slots (see DESIGN.md, "The day"). Each
entry makes a job of its assets (steps in one process: these are light jobs, and a
process per step cost seconds each; `dagster/max_runtime` sized by the arithmetic beside
the entry), a schedule (RUNNING by default, in `COMPANY_AI_TIMEZONE`, described in words)
and the freshness policy of its assets. The catch-up sensor and the digest read the same
list. Adding a job is one entry.
"""

from datetime import timedelta

import dagster as dg

from company_ai import ledger
from company_ai.constants import LLM_ASSETS, LLM_TAG
from company_ai.core.timetable import TIMETABLE, Entry, days_in_words

__all__ = ["TIMETABLE", "build", "with_timetable"]


def freshness_policy(entry: Entry) -> dg.FreshnessPolicy:
    """FAIL once a tick is missed: the longest gap between ticks (a day, Friday to Monday,
    a week), plus the catch-up sensor's 10 minutes, the run's own budget and an hour."""
    gap = timedelta(days=entry.slot.max_gap_days)
    budget = timedelta(minutes=10, seconds=entry.max_runtime_s)
    return dg.FreshnessPolicy.time_window(
        warn_window=gap + budget, fail_window=gap + budget + timedelta(hours=1)
    )


# The restore drill is a check on db_snapshots that runs monthly, not with every snapshot.
RESTORE_DRILL = dg.AssetSelection.checks(
    dg.AssetCheckKey(dg.AssetKey("db_snapshots"), "restore_drill")
)
# It restores one snapshot (a copy at disk speed plus integrity_check, which reads every
# page: ~10 s per GB) on the 1st of each month. 1800 s.
RESTORE_DRILL_MAX_RUNTIME_S = 1800
RESTORE_DRILL_CRON = "45 8 1 * *"  # after the 08:15 snapshot of the 1st


def _job(entry: Entry):
    selection: dg.AssetSelection = dg.AssetSelection.assets(*entry.assets)
    if "db_snapshots" in entry.assets:
        selection = selection - RESTORE_DRILL
    return dg.define_asset_job(
        entry.job,
        selection=selection,
        executor_def=dg.in_process_executor,
        tags={"dagster/max_runtime": str(entry.max_runtime_s)}
        | ({LLM_TAG: "true"} if LLM_ASSETS & set(entry.assets) else {}),
    )


def _schedule(entry: Entry, job, tz: str) -> dg.ScheduleDefinition:
    slot = entry.slot

    @dg.schedule(
        name=f"{entry.job}_schedule",
        cron_schedule=slot.cron,
        execution_timezone=tz,
        target=job,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"{slot.describe(tz)}: {', '.join(entry.assets)}",
    )
    def _tick(context: dg.ScheduleEvaluationContext):
        partition = slot.partition(context.scheduled_execution_time, tz)
        if ledger.caught_up(context.instance, entry.job, partition):
            return dg.SkipReason(f"{entry.job} {partition} was already run by the catch-up sensor")
        return dg.RunRequest(run_key=partition, partition_key=partition)

    return _tick


def build(tz: str) -> tuple[dict, list, list]:
    """The timetable's jobs by name, every job, and every schedule, in timezone `tz`."""
    by_name = {entry.job: _job(entry) for entry in TIMETABLE}
    restore_drill_job = dg.define_asset_job(
        "restore_drill_job",
        selection=RESTORE_DRILL,
        executor_def=dg.in_process_executor,
        tags={"dagster/max_runtime": str(RESTORE_DRILL_MAX_RUNTIME_S)},
    )
    schedules = [_schedule(entry, by_name[entry.job], tz) for entry in TIMETABLE] + [
        dg.ScheduleDefinition(
            name="restore_drill_schedule",
            cron_schedule=RESTORE_DRILL_CRON,
            execution_timezone=tz,
            target=restore_drill_job,
            default_status=dg.DefaultScheduleStatus.RUNNING,
            description=f"The 1st of each month 08:45 {tz}: restore_drill",
        )
    ]
    return by_name, [*by_name.values(), restore_drill_job], schedules


def window_words(entry: Entry, tz: str) -> str:
    """Which window a partition covers, in the words the asset's page shows."""
    at = f"{entry.at:%H:%M}"
    opens = (
        f"{at} on the day before"
        if entry.slot.max_gap_days == 1
        else f"the previous tick ({days_in_words(entry.weekdays)} at {at})"
    )
    kind = (
        "A capture: it records the world at that tick, for its current day only."
        if entry.capture
        else "A replay: it reads what was recorded by the end of the window."
    )
    return (
        f"Window: partition D is the day of `{entry.job}`'s tick at {at} ({tz}) and covers "
        f"{opens} to {at} on D. {kind}"
    )


def with_timetable(assets: list, tz: str) -> list:
    """Every scheduled asset gets its entry's freshness policy, and its description says
    which window a partition covers."""
    entries = {dg.AssetKey(a): e for e in TIMETABLE for a in e.assets}

    def apply(spec: dg.AssetSpec) -> dg.AssetSpec:
        entry = entries.get(spec.key)
        if entry is None:
            return spec
        described = f"{spec.description or ''}\n\n{window_words(entry, tz)}".strip()
        spec = spec.replace_attributes(description=described)
        return dg.apply_freshness_policy(spec, freshness_policy(entry))

    return list(dg.map_asset_specs(apply, assets))
