"""The heartbeat's costs: snapshot + restore drill of the demo stores, and one evaluation
of the catch-up sensor over a 30-day look-back on a SQLite instance.

    .venv/bin/python benchmarks/bench_heartbeat.py                 # the demo's 2,000 contacts
    .venv/bin/python benchmarks/bench_heartbeat.py --contacts 20000

Prints one figure a line; BENCHMARKS.md records a run. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--days", type=int, default=30, help="the catch-up look-back")
    parser.add_argument("--evaluations", type=int, default=5)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="company-ai-bench-hb-"))
    os.environ["DAGSTER_HOME"] = str(scratch / "dagster_home")
    (scratch / "dagster_home").mkdir()
    (scratch / "dagster_home" / "dagster.yaml").write_text("telemetry: {enabled: false}\n")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    snapshots(scratch, args.contacts)
    catchup(args.days, args.evaluations)


def snapshots(scratch: Path, contacts: int) -> None:
    from company_ai.core.ops import MANIFEST, restore_drill, take_snapshot
    from company_ai.core.store import Stores
    from company_ai.sample_world.crm import load_sample

    stores = Stores(scratch / "data")
    stores.create_all()  # as the demo does: all six stores
    load_sample(stores, contacts=contacts, as_of=datetime(2026, 11, 30, 7, 0, tzinfo=UTC))
    size = sum(p.stat().st_size for p in stores.data_dir.glob("*.db*"))
    started = time.perf_counter()
    manifest = take_snapshot(
        stores,
        scratch / "snaps",
        "2026-11-29",
        keep=3,
        now=datetime(2026, 11, 30, 8, 15, tzinfo=UTC),
    )
    took = time.perf_counter() - started
    print(f"stores: {contacts:,} contacts, {size / 1e6:.1f} MB on disk (with WAL)")
    print(
        f"snapshot: {took:.2f} s for {len(manifest.files)} stores, {manifest.bytes / 1e6:.1f} MB"
        f" copied, manifest {(manifest.folder / MANIFEST).stat().st_size:,} bytes"
    )
    started = time.perf_counter()
    report = restore_drill(scratch / "snaps")
    print(f"restore drill: {time.perf_counter() - started:.2f} s, passed={report.passed}")


def catchup(days: int, evaluations: int) -> None:
    import dagster as dg

    from company_ai.core import times
    from company_ai.definitions import defs
    from company_ai.ledger import due
    from company_ai.schedules import JOBS, TIMETABLE
    from company_ai.sensors.catchup import build_catchup_sensor

    now = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
    times.utc_now = lambda: now  # the sensor's one clock
    sensor = build_catchup_sensor(
        TIMETABLE, list(JOBS.values()), name="bench_catchup", lookback=timedelta(days=days)
    )
    slots = due(TIMETABLE, now - timedelta(days=days), now)
    instance = dg.DagsterInstance.get()
    # A month of history: every other slot ran (a run and its materialisations).
    for n, slot in enumerate(slots):
        if n % 2:
            continue
        entry = next(e for e in TIMETABLE if e.job == slot.job)
        job = defs.resolve_job_def(slot.job)
        instance.create_run_for_job(
            job,
            status=dg.DagsterRunStatus.SUCCESS,
            tags={"dagster/partition": slot.partition},
        )
        for asset in entry.assets:
            instance.report_runless_asset_event(
                dg.AssetMaterialization(asset, partition=slot.partition)
            )
    timings, requested = [], 0
    repository = dg.Definitions.merge(defs, dg.Definitions(sensors=[sensor]))
    for _ in range(evaluations):
        context = dg.build_sensor_context(
            instance=instance, definitions=repository, cursor="2026-01-01T00:00:00Z"
        )
        started = time.perf_counter()
        result = sensor.evaluate_tick(context)
        timings.append(time.perf_counter() - started)
        requested = len(result.run_requests or [])
    print(
        f"catch-up sensor, {days}-day look-back: {len(slots)} slots, {len(slots) // 2} missing,"
        f" {requested} run requests; evaluation median {statistics.median(timings) * 1000:.0f} ms,"
        f" max {max(timings) * 1000:.0f} ms (n={evaluations})"
    )


if __name__ == "__main__":
    main()
