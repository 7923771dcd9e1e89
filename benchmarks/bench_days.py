"""Days through Dagster as a user runs them: a 30-day backfill of the night, one daemon-launched
outreach day, and proof that replaying a day gives byte-identical exports.

    .venv/bin/python benchmarks/bench_days.py                       # the demo's 2,000 contacts
    .venv/bin/python benchmarks/bench_days.py --contacts 156925     # the benchmark data

Every run goes through the code location and the instance's run launcher (a run worker
process per run, steps in one process), as the daemon launches a scheduled run. For each
of the last `--days` complete days it runs `memory_job`, `brain_job` and
`memory_export_job` in order and prints the wall time per run (what a backfill costs) and
the run's own duration as Dagster records it (start to end, what the UI shows). Then it
replays three days and compares every export file's bytes, and finally starts
`dagster-daemon`, queues today's outreach run and times it from queued to finished.
Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

NIGHT = ("memory_job", "brain_job", "memory_export_job")


def folder_digest(folder: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    for path in files:
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return len(files), digest.hexdigest()


def run_durations(instance, run_id: str) -> tuple[float, str]:
    record = instance.get_run_record_by_id(run_id)
    took = (record.end_time - record.start_time) if record.start_time and record.end_time else 0
    return took, record.dagster_run.status.value


def show(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    print(
        f"  {label:<42} median {statistics.median(ordered):6.2f} s  min {ordered[0]:6.2f}"
        f"  max {ordered[-1]:6.2f}  (n={len(ordered)})"
    )


# The nightly assets that read a window of what exists (issue 15): each should cost its
# window, not the store. The brief and the digest read run history since their last run.
READERS = ("memory_job", "morning_brief_job", "state_export_job", "digest_job")


def nightly_reads(runs, instance, last_day: str, repeat: int, tz: str) -> None:
    """Launch each reader `repeat` times for the partition its schedule would run now."""
    from company_ai.core.times import utc_now
    from company_ai.core.timetable import TIMETABLE

    print(f"\nnightly readers, {repeat} runs each (launch to finish / run start to end):")
    for job in READERS:
        entry = next(e for e in TIMETABLE if e.job == job)
        partition = entry.slot.partition(utc_now(), tz) if entry.capture else last_day
        walls, took = [], []
        for _ in range(repeat):
            t = time.perf_counter()
            [run] = runs.wait([runs.launch(job, partition)])
            walls.append(time.perf_counter() - t)
            duration, status = run_durations(instance, run.run_id)
            if status != "SUCCESS":
                raise SystemExit(f"{job} {partition} ended {status}")
            took.append(duration)
        show(f"{job} {partition}: launch to finish", walls)
        show(f"{job} {partition}: run start to end", took)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--density", type=float, default=1.0)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="keep the stores and instance here")
    parser.add_argument(
        "--reads", type=int, default=0, metavar="N",
        help="only time the nightly readers N times each (seal, brief, state export, digest)",
    )  # fmt: skip
    args = parser.parse_args()

    root = Path(args.keep or tempfile.mkdtemp(prefix="bench-days-"))
    data, home = root / "data", root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry: {enabled: false}\n")
    os.environ |= {"COMPANY_AI_DATA_DIR": str(data), "DAGSTER_HOME": str(home)}
    os.environ.pop("COMPANY_AI_START_DATE", None)

    from bench_brain import load

    from company_ai import settings
    from company_ai.core.install import record_first_day
    from company_ai.core.store import Stores
    from company_ai.core.times import utc_now
    from company_ai.core.timetable import TIMETABLE, current_partitions
    from company_ai.sample_world.company_pages import write_company_pages

    now = utc_now()
    last = now.astimezone(UTC).date() - timedelta(days=1)
    days = [(last - timedelta(days=n)).isoformat() for n in range(args.days - 1, -1, -1)]
    stores = Stores(data)
    stores.create_all()
    load(stores, args.contacts, args.density, 50_000, as_of=now)
    write_company_pages(stores)  # what the outreach day's research reads
    record_first_day(data, days[0], now)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; {args.contacts:,} contacts, {args.days} days"
    )

    import dagster as dg

    from company_ai.launch import launcher

    instance = dg.DagsterInstance.get()
    config = settings.Settings.from_env()
    if args.reads:
        with launcher(instance) as runs:
            nightly_reads(runs, instance, days[-1], args.reads, config.timezone)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        return
    walls: dict[str, list[float]] = {job: [] for job in NIGHT}
    durations: dict[str, list[float]] = {job: [] for job in NIGHT}
    per_day: list[float] = []
    with launcher(instance) as runs:
        started = time.perf_counter()
        for day in days:
            day_started = time.perf_counter()
            for job in NIGHT:
                t = time.perf_counter()
                [run] = runs.wait([runs.launch(job, day)])
                walls[job].append(time.perf_counter() - t)
                took, status = run_durations(instance, run.run_id)
                durations[job].append(took)
                if status != "SUCCESS":
                    raise SystemExit(f"{job} {day} ended {status}")
            per_day.append(time.perf_counter() - day_started)
        total = time.perf_counter() - started
        print(f"\n30-day backfill of the night ({len(days)} days, {3 * len(days)} runs):")
        print(f"  total {total:.1f} s, {total / len(days):.2f} s per day (three runs)")
        show("a day (seal + brain + export), wall", per_day)
        for job in NIGHT:
            show(f"{job}: launch to finish (wall)", walls[job])
            show(f"{job}: run start to end (Dagster)", durations[job])

        exports = config.export_dir
        replayed = days[-3:]
        before = {day: folder_digest(exports / day) for day in replayed}
        for day in replayed:
            runs.wait([runs.launch("brain_job", day)])
            runs.wait([runs.launch("memory_export_job", day)])
        after = {day: folder_digest(exports / day) for day in replayed}
        files = sum(n for n, _ in after.values())
        print(
            f"\nreplay of {len(replayed)} days: exports byte-identical: {before == after}"
            f" ({files:,} files compared by sha256)"
        )

        outreach = next(e for e in TIMETABLE if e.job == "outreach_job")
        partition = current_partitions(outreach.slot, utc_now(), config.timezone)[0]
        log = root / "daemon.log"
        with log.open("w") as out:
            daemon = subprocess.Popen(
                [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w",
                 str(Path(__file__).resolve().parent.parent / "workspace.yaml")],
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
            try:
                time.sleep(5)  # let the daemon start before the run is queued
                t = time.perf_counter()
                [run] = runs.wait([runs.launch("outreach_job", partition, queue=True)])
                wall = time.perf_counter() - t
            finally:
                daemon.terminate()
                daemon.wait(timeout=60)
        took, status = run_durations(instance, run.run_id)
        print(
            f"\none outreach day ({partition}) queued and launched by dagster-daemon: {status},"
            f" queued to finished {wall:.1f} s, run start to end {took:.2f} s"
        )
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
