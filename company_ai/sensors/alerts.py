"""Alert sensors: failed runs, failed asset checks, assets gone stale.

Every alert says its level. An ERROR (a failed run, a failed ERROR check, an asset whose
freshness FAILs) is pushed through the one `Notifier` once, always, keyed by what failed
(a run id, a check evaluation's id, a freshness state change's time), however many ticks
see it or however the run came about (backfill, catch-up, re-execution); a notifier that
is down keeps it queued and every tick retries. A WARN that recurs every day (drafts
quarantined by the gate) is not pushed: the daily digest counts it.
"""

import json

import dagster as dg

from company_ai.resources.notifier import Notifier
from company_ai.sensors import asset_graph
from company_ai.sensors.internal import AssetCheckExecutionRecordStatus, FreshnessState


@dg.run_failure_sensor(default_status=dg.DefaultSensorStatus.RUNNING)
def run_failure_alerts(context: dg.RunFailureSensorContext, notifier: Notifier) -> None:
    """Announces every failed run of this code location once."""
    run = context.dagster_run
    steps = [e.step_key or "?" for e in context.get_step_failure_events()]
    message = (context.failure_event.message or "").strip().splitlines()[:1]
    notifier.send(
        f"run-failure:{run.run_id}",
        f"ERROR: run failed: {run.job_name} {run.tags.get('dagster/partition', '')}"
        f" run {run.run_id[:8]}"
        f" steps {', '.join(steps) or '-'}: {' '.join(message)}",
    )


@dg.sensor(minimum_interval_seconds=120, default_status=dg.DefaultSensorStatus.RUNNING)
def check_failure_alerts(context: dg.SensorEvaluationContext, notifier: Notifier):
    """Announces every failed ERROR check evaluation once (a cursor of ids per check);
    failed WARN checks are left to the daily digest, which counts them."""
    seen = json.loads(context.cursor) if context.cursor else {}
    new = []
    for check in sorted(asset_graph(context).asset_check_keys, key=str):
        key = check.to_user_string()
        records = context.instance.event_log_storage.get_asset_check_execution_history(
            check, limit=25, status={AssetCheckExecutionRecordStatus.FAILED}
        )
        fresh = [r for r in records if r.id > seen.get(key, 0)]
        if fresh:
            seen[key] = max(r.id for r in fresh)
            new += [(key, r) for r in sorted(fresh, key=lambda r: r.id) if _is_error(r)]
    context.update_cursor(json.dumps(seen, sort_keys=True))
    for key, record in new:
        partition = f" partition {record.partition}" if record.partition else ""
        notifier.send(
            f"check-failure:{key}:{record.id}",
            f"ERROR: check failed: {key}{partition} run {record.run_id[:8]}",
        )
    if not new:
        notifier.flush()
        return dg.SkipReason("no new failed checks")
    return dg.SkipReason(f"alerted {len(new)} failed check(s)")


def _is_error(record) -> bool:
    evaluation = record.evaluation
    return evaluation is None or evaluation.severity != dg.AssetCheckSeverity.WARN


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING)
def freshness_alerts(context: dg.SensorEvaluationContext, notifier: Notifier):
    """Announces each change of an asset's freshness state to FAIL once (OSS Dagster has
    the freshness daemon but no freshness alerts)."""
    graph = asset_graph(context)
    keys = [n.key for n in graph.asset_nodes if n.freshness_policy is not None]
    seen = json.loads(context.cursor) if context.cursor else {}
    records = context.instance.get_freshness_state_records(keys)
    alerted = 0
    for key, record in sorted(records.items(), key=lambda kv: kv[0].to_user_string()):
        name, stamp = key.to_user_string(), record.updated_at.timestamp()
        if stamp <= seen.get(name, 0):
            continue
        seen[name] = stamp
        if record.freshness_state == FreshnessState.FAIL:
            notifier.send(
                f"freshness:{name}:{stamp}",
                f"ERROR: stale: {name} freshness FAIL since {record.updated_at:%Y-%m-%d %H:%M}"
                " UTC (a night was missed)",
            )
            alerted += 1
    context.update_cursor(json.dumps(seen, sort_keys=True))
    if not alerted:
        notifier.flush()
    return dg.SkipReason(f"alerted {alerted} stale asset(s)")
