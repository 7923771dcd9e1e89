"""Replays by recorded time at the benchmark's size: the window reads and 30 nights again.

    .venv/bin/python benchmarks/bench_replay.py --contacts 156925 --density 1.1   # benchmark data
    .venv/bin/python benchmarks/bench_replay.py                                   # 2,000 contacts

A replay of day D reads what was recorded in D's window (issue 26). This loads the sample
world, then for each of the last `--days` nights:
  - times the window read of the episodes two ways on the same store: by the calendar
    `day` column (`idx_episodes_day`, how replays read before recorded time) and by the
    recorded window (`idx_episodes_recorded_at`), printing rows/s and the index SQLite
    chose for each;
  - replays the night in process as `memory_job` and `brain_job` do (seal the window's
    episodes, synthesise the brain day), then replays every night again and checks that
    each seal's digest and each brain day's rows come out identical.
Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

BEFORE = "SELECT id, natural_key FROM contact_episodes WHERE day = $1 ORDER BY id"
AFTER = (
    "SELECT id, natural_key FROM contact_episodes"
    " WHERE recorded_at >= $1 AND recorded_at < $2 ORDER BY id"
)


def plan(conn, sql: str, params) -> str:
    return "; ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


def timed_reads(conn, sql: str, windows: list) -> tuple[int, float]:
    rows, started = 0, time.perf_counter()
    for params in windows:
        rows += len(conn.execute(sql, params).fetchall())
    return rows, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--density", type=float, default=1.0)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="window-read passes to time")
    parser.add_argument("--keep", type=Path, help="keep (or reuse) the stores here")
    args = parser.parse_args()

    from bench_brain import load

    from company_ai import days as dagster_days
    from company_ai.core.brain import synthesize_day, write_day
    from company_ai.core.memory import seal_day
    from company_ai.core.store import Store, Stores
    from company_ai.core.times import utc_now
    from company_ai.settings import Settings
    from company_ai.setup import Setup

    root = Path(args.keep or tempfile.mkdtemp(prefix="bench-replay-"))
    stores = Stores(root / "data")
    now = utc_now()
    if not stores.path(Store.MEMORY).is_file():
        stores.create_all()
        started = time.perf_counter()
        load(stores, args.contacts, args.density, 50_000, as_of=now)
        print(f"loaded in {time.perf_counter() - started:.0f} s")
    setup = Setup(Settings.from_env({"COMPANY_AI_DATA_DIR": str(root / "data")}))
    last = now.astimezone(UTC).date() - timedelta(days=1)
    keys = [(last - timedelta(days=n)).isoformat() for n in range(args.days - 1, -1, -1)]
    seal_windows = [dagster_days.window(setup, "contact_episodes", k) for k in keys]
    brain_windows = [dagster_days.window(setup, "brain_facts", k) for k in keys]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; {args.contacts:,} contacts, {args.days} nights"
    )

    with stores.connect(Store.MEMORY, readonly=True) as memory:
        total = memory.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]
        print(f"\nwindow reads of the episodes ({total:,} in the store), best of {args.repeat}:")
        for label, sql, params in (
            ("by calendar day (before)", BEFORE, [(k,) for k in keys]),
            ("by recorded window (after)", AFTER, [(w.start, w.end) for w in seal_windows]),
        ):
            best = min(timed_reads(memory, sql, params) for _ in range(args.repeat))
            rows, took = best
            print(
                f"  {label:<28} {rows:>9,} rows in {took * 1000:7.1f} ms = "
                f"{rows / took:>12,.0f} rows/s  [{plan(memory, sql, params[0])}]"
            )

    def night(n: int) -> tuple[str, str, float, float]:
        started = time.perf_counter()
        with stores.connect(Store.MEMORY) as memory:
            seal = seal_day(memory, seal_windows[n], now=now)
        sealed = time.perf_counter()
        brain_day = synthesize_day(stores, brain_windows[n], [])
        with stores.connect(Store.BRAIN) as brain:
            write_day(brain, keys[n], brain_day)
            rows = [
                [
                    tuple(r)
                    for r in brain.execute(f"SELECT * FROM {t} WHERE day = $1", keys[n : n + 1])
                ]
                for t in ("facts", "decisions", "edges")
            ]
        return (
            seal.digest,
            json.dumps(rows, default=str),
            sealed - started,
            time.perf_counter() - sealed,
        )

    first = [night(n) for n in range(len(keys))]
    again = [night(n) for n in range(len(keys))]
    seals, brains = [f[2] for f in first], [f[3] for f in first]
    print(f"\n{len(keys)} nights replayed in process (seal + brain synthesis):")
    print(f"  seal of a window     median {statistics.median(seals) * 1000:7.1f} ms")
    print(f"  brain synthesis      median {statistics.median(brains) * 1000:7.1f} ms")
    nights = [a + b for a, b in zip(seals, brains, strict=True)]
    print(f"  a night              median {statistics.median(nights):.3f} s")
    same = all(a[:2] == b[:2] for a, b in zip(first, again, strict=True))
    print(f"  every night replayed again identical (seal digests and brain rows): {same}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
