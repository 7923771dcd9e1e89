"""The catch-up sensor: recovery from the ledger.

Dagster 1.13 launches only the latest missed tick of a schedule after downtime (notes §2),
so every slot of the timetable in the look-back window that is more than ten minutes
overdue, with no materialisation and no run in flight, gets a run here: oldest first,
and one at a time for jobs whose assets depend on their previous day. The decision is
read afresh from Dagster's run history on every tick (no cursor), so running it again
never double-fires and slots that fall due meanwhile are picked up on the next pass. A
failed slot is retried up to `max_attempts` runs in all; the attempt is part of the run
key because a sensor's run keys dedupe forever. The cursor only records when the sensor
first ran: slots due before that are not its business. A capture whose moment has passed
is never run late (the digest lists it as not taken), and the slots of a schedule a
person stopped in the UI are left alone: stopping outreach for a holiday stops its mail.
"""

from datetime import timedelta

import dagster as dg

from company_ai import ledger
from company_ai.core.times import parse_utc, to_iso
from company_ai.core.timetable import Entry, plan_catchup
from company_ai.sensors import asset_graph
from company_ai.setup import Setup

LOOKBACK = timedelta(days=7)
MAX_ATTEMPTS = 3


def self_dependent(graph, entries: list[Entry]) -> set[str]:
    """Jobs with an asset that depends on its own previous partition."""
    return {
        e.job
        for e in entries
        for a in e.assets
        if dg.AssetKey(a) in graph.get(dg.AssetKey(a)).parent_keys
    }


def build_catchup_sensor(
    setup: Setup,
    entries: list[Entry],
    jobs: list,
    *,
    name: str = "catchup_sensor",
    lookback: timedelta = LOOKBACK,
    max_attempts: int = MAX_ATTEMPTS,
) -> dg.SensorDefinition:
    @dg.sensor(
        name=name,
        jobs=jobs,
        minimum_interval_seconds=120,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Runs missed timetable slots of the last {lookback.days} days, oldest first.",
    )
    def _catchup(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        now = setup.now()
        if not context.cursor:
            # Like a schedule turned on, the sensor owes nothing from before it first ran:
            # a fresh deployment does not replay a week of reports.
            return dg.SensorResult(skip_reason="watching from now on", cursor=to_iso(now))
        since = max(now - lookback, parse_utc(context.cursor))
        slots = ledger.due(entries, since, now, setup.settings)
        facts, busy = ledger.slot_facts(context.instance, entries, slots)
        plan = plan_catchup(
            slots,
            facts,
            sequential=self_dependent(asset_graph(context), entries),
            busy=busy,
            max_attempts=max_attempts,
            late_captures=ledger.late_captures(entries, slots, now, setup.tz),
            paused=ledger.paused_slots(context.instance, entries, slots),
        )
        for slot in plan.gave_up:
            context.log.warning(
                f"{slot.job} {slot.partition} failed {max_attempts} times; not retried again"
            )
        for slot in plan.not_taken:
            context.log.info(f"{slot.job} {slot.partition}: a capture, never run late")
        requests = [
            dg.RunRequest(
                run_key=r.run_key,
                job_name=r.due.job,
                partition_key=r.due.partition,
                tags={ledger.CATCHUP_TAG: str(r.attempt), "company_ai/slot": to_iso(r.due.tick)},
            )
            for r in plan.requests
        ]
        if not requests:
            return dg.SensorResult(
                skip_reason=f"nothing to run ({len(slots)} slots, {len(plan.waiting)} waiting,"
                f" {len(plan.not_taken)} captures not taken, {len(plan.paused)} paused)"
            )
        return dg.SensorResult(run_requests=requests)

    return _catchup
