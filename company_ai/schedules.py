"""The timetable: jobs and their schedules (see DESIGN.md, "The day")."""

import dagster as dg

from company_ai import settings
from company_ai.constants import DAILY, MEMORY, OUTREACH

# Sealing reads one day's rows once and writes one row: about 0.1 s at the sample's
# ~200 episodes a day and ~1 s at a 1.5M-episode store. 600 s is ample headroom and
# still stops a wedged run long before the next night.
MEMORY_MAX_RUNTIME_S = 600

memory_job = dg.define_asset_job(
    "memory_job",
    selection=dg.AssetSelection.groups(MEMORY),
    tags={"dagster/max_runtime": str(MEMORY_MAX_RUNTIME_S)},
)

# Outreach: 20 research passes + 10 drafts at about a minute of model time each
# = 30 min; the gate (pure code, < 1 ms a draft) and 10 sends (a few s each) add
# under a minute. 1.5 x headroom for a slow model: 30 min x 1.5 = 45 min = 2700 s,
# still well before the 08:15 snapshot needs the stores quiet for long.
OUTREACH_MAX_RUNTIME_S = 2700

outreach_job = dg.define_asset_job(
    "outreach_job",
    selection=dg.AssetSelection.groups(OUTREACH),
    tags={"dagster/max_runtime": str(OUTREACH_MAX_RUNTIME_S)},
)


@dg.schedule(
    name="outreach_schedule",
    cron_schedule="55 7 * * 1-5",  # weekdays 07:55: research → drafts → gate → send
    job=outreach_job,
    execution_timezone=settings.timezone(),
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
def outreach_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """The last complete day's partition (yesterday, as for every daily job)."""
    with dg.partition_loading_context(effective_dt=context.scheduled_execution_time):
        day = DAILY.get_last_partition_key()
    return dg.RunRequest(run_key=day, partition_key=day)


# Outreach first: the memory job seals the episodes outreach writes (the demo runs in order).
jobs = [outreach_job, memory_job]
schedules: list[dg.ScheduleDefinition] = [outreach_schedule]
