"""The captures' whole path: `inbox_job` and `engagement_job` through Dagster, as processes.

    .venv/bin/python benchmarks/bench_capture_jobs.py                 # 10,000 mails, 2,000 files
    .venv/bin/python benchmarks/bench_capture_jobs.py --messages 2000 --files 500

The in-process figures (`bench_inbox.py`, `bench_engagement.py`) time the core alone; this
times what the scheduler starts: `dagster job execute` of each job for its current
partition, a fresh process each (start-up, definitions, the run, its event log), over a
data directory of `--messages` mails (the same mix as bench_inbox, a tenth of them hostile
from tests/hostile/mail) and `--files` drop files of 10 signals (a tenth poisoned). It
prints each run's wall time from outside and the step's own time from the run's events,
and what the run refused. Asserts no speed.
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_inbox import HOSTILE, SENT, message, seed  # noqa: E402

from company_ai.core.store import Stores  # noqa: E402
from company_ai.core.timetable import TIMETABLE, current_partitions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
POISON = [b'{"n": ' + b"1" * 5_000 + b"}", b"[" * 100_000, b'{"signals": [{"kind": "\\ud800"}]}']


def build(root: Path, messages: int, files: int) -> None:
    stores = Stores(root / "data")
    seed(stores, max(messages, 1_000))
    rng = random.Random(9)
    (root / "data" / "inbox").mkdir(parents=True)
    box = mailbox.Maildir(root / "data" / "inbox" / "maildir", create=True)
    hostile = sorted(HOSTILE.glob("x_*.eml")) or sorted(HOSTILE.glob("*.eml"))
    for i in range(1, messages + 1):
        raw = hostile[i % len(hostile)].read_bytes() if i % 10 == 0 else message(i, rng)
        delivered = mailbox.MaildirMessage(raw)
        delivered.set_date((SENT + timedelta(hours=3)).timestamp())
        box.add(delivered)
    drop = root / "data" / "engagement"
    drop.mkdir(parents=True)
    at = SENT.strftime("%Y-%m-%dT%H:%M:%SZ")
    for n in range(files):
        if n % 10 == 0:
            (drop / f"poison-{n:05}.json").write_bytes(POISON[n // 10 % len(POISON)])
            continue
        signals = [
            {"id": f"v{n}-{k}", "kind": "site_visit", "email": f"p{(n * 10 + k) % 1000 + 1}"
             f"@acme{((n * 10 + k) % 1000 + 1) % 97}.example", "at": at, "pages": ["pricing"]}
            for k in range(10)
        ]  # fmt: skip
        (drop / f"drop-{n:05}.json").write_text(json.dumps({"signals": signals}))


def run_job(job: str, root: Path, env: dict[str, str]) -> tuple[float, str]:
    entry = next(e for e in TIMETABLE if e.job == job)
    partition = current_partitions(entry.slot, datetime.now(UTC), "UTC")[0]
    started = time.perf_counter()
    done = subprocess.run(
        [str(ROOT / ".venv/bin/dagster"), "job", "execute", "-m", "company_ai.definitions",
         "-j", job, "--tags", json.dumps({"dagster/partition": partition})],
        env=env, cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{job} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, partition


def step_seconds(home: Path) -> dict[str, float]:
    """Each run's step time, from the run's own events (what the UI shows)."""
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(home)
    with dg.DagsterInstance.get() as instance:
        out = {}
        for run in instance.get_runs():
            stats = instance.get_run_stats(run.run_id)
            if stats.start_time and stats.end_time:
                out[run.job_name] = stats.end_time - stats.start_time
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-captures-"))
    build(root, args.messages, args.files)
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = os.environ | {
        "DAGSTER_HOME": str(home),
        "COMPANY_AI_DATA_DIR": str(root / "data"),
        "COMPANY_AI_ENGAGEMENT_DIR": str(root / "data" / "engagement"),
        "COMPANY_AI_START_DATE": "2026-11-01",
        "PYTHONPATH": str(ROOT),
    }
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    walls = {job: run_job(job, root, env) for job in ("inbox_job", "engagement_job")}
    steps = step_seconds(home)
    for job, (wall, partition) in walls.items():
        n = args.messages if job == "inbox_job" else args.files
        what = "mails" if job == "inbox_job" else "drop files"
        print(
            f"{job} {partition}: {wall:.1f} s whole process, run {steps.get(job, 0):.1f} s,"
            f" {n:,} {what} ({n / steps.get(job, wall):,.0f}/s in the run)"
        )
    rejected = len(list((root / "data" / "engagement" / "rejected").glob("*.json")))
    print(f"drop files set aside in rejected/: {rejected}")


if __name__ == "__main__":
    main()
