"""The catch-up sensor: recovery from the ledger.

Dagster 1.13 launches only the latest missed tick of a schedule after downtime (notes §2),
so every slot of the timetable in the look-back window that is more than ten minutes
overdue, with no materialisation and no run in flight, gets a run here: oldest first,
and one at a time for jobs whose assets depend on their previous day. The decision is
read afresh from Dagster's run history on every tick (no cursor), so running it again
never double-fires and slots that fall due meanwhile are picked up on the next pass. A
failed slot is retried up to `max_attempts` runs in all; the attempt is part of the run
key because a sensor's run keys dedupe forever. The cursor only records when the sensor
first ran (slots due before that are not its business) and which missed captures it has
recorded. A capture whose moment has passed is never run late: its partition gets a
`not_taken` observation once (the digest lists it as not taken), and the slots of a schedule a
person stopped in the UI are left alone: stopping outreach for a holiday stops its mail.
"""

import json
from datetime import timedelta
from zoneinfo import ZoneInfo

import dagster as dg

from company_ai import days, ledger
from company_ai.constants import CAPTURE_META, DAY_KIND
from company_ai.core.times import parse_utc, to_iso
from company_ai.core.timetable import Due, Entry, plan_catchup
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
            return dg.SensorResult(
                skip_reason="watching from now on", cursor=_cursor(to_iso(now), set())
            )
        first, recorded = _read_cursor(context.cursor)
        since = max(now - lookback, parse_utc(first))
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
        events = []
        for slot in plan.not_taken:
            if f"{slot.job}:{slot.partition}" in recorded:
                continue  # recorded on an earlier tick: once per partition
            context.log.info(f"{slot.job} {slot.partition}: a capture, never run late")
            events += _not_taken(context, entries, slot, setup.tz)
        # Only the partitions still in the look-back window are remembered.
        recorded = {k for k in recorded if k.rsplit(":", 1)[1] >= to_iso(since)[:10]}
        recorded |= {f"{s.job}:{s.partition}" for s in plan.not_taken}
        cursor = _cursor(first, recorded)
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
                f" {len(plan.not_taken)} captures not taken, {len(plan.paused)} paused)",
                asset_events=events,
                cursor=cursor,
            )
        return dg.SensorResult(run_requests=requests, asset_events=events, cursor=cursor)

    return _catchup


def _cursor(first: str, recorded: set[str]) -> str:
    """When the sensor first ran, and the missed captures whose partition it has recorded
    as not taken (`job:partition`)."""
    return json.dumps({"since": first, "not_taken": sorted(recorded)})


def _read_cursor(cursor: str) -> tuple[str, set[str]]:
    if not cursor.startswith("{"):
        return cursor, set()  # a cursor written before it remembered anything else
    state = json.loads(cursor)
    return state["since"], set(state.get("not_taken", []))


def _not_taken(
    context: dg.SensorEvaluationContext, entries: list[Entry], slot: Due, tz: str
) -> list[dg.AssetObservation]:
    """The `not_taken` observation of each capture asset of a missed slot, unless that
    partition already has one (a run launched for it late said so)."""
    graph = asset_graph(context)
    entry = next(e for e in entries if e.job == slot.job)
    tick = slot.tick.astimezone(ZoneInfo(tz))
    found = []
    for asset in entry.assets:
        key = dg.AssetKey(asset)
        kind = graph.get(key).metadata.get(DAY_KIND, CAPTURE_META[DAY_KIND])
        if kind != CAPTURE_META[DAY_KIND] or _has_not_taken(context.instance, key, slot.partition):
            continue
        sentence = (
            f"Not taken: {asset} records the world at the moment it runs, and its tick of "
            f"{slot.partition} ({tick:%H:%M} {tz}) passed with no run, so it was not captured "
            "late: the next tick records the present, and the digest lists this day as not taken."
        )
        found.append(
            dg.AssetObservation(
                asset_key=key,
                partition=slot.partition,
                description=sentence,
                metadata={days.NOT_TAKEN: sentence, "run": "none: recorded by the catch-up sensor"},
            )
        )
    return found


def _has_not_taken(instance: dg.DagsterInstance, key: dg.AssetKey, partition: str) -> bool:
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=5
    ).records
    return any(
        r.asset_observation and days.NOT_TAKEN in r.asset_observation.metadata for r in records
    )
