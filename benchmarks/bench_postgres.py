"""SQLite and PostgreSQL side by side, in one run: episodes appended per second, timeline
p50, and the demo end to end as a whole process.

    PYTHONPATH=. .venv/bin/python -u benchmarks/bench_postgres.py                # 20,000 contacts
    PYTHONPATH=. .venv/bin/python -u benchmarks/bench_postgres.py --no-demo      # stores only

The PostgreSQL server is a throwaway one started here from Debian's binaries (as the tests
do), with fsync and synchronous commits on, on this machine: a local server, so the
figures leave out a network's round trips. Every store `pg_schema.PG_MIGRATIONS` lists goes to
it; the rest stay SQLite files. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.crm import load_timeline
from company_ai.core.memory import append_episodes
from company_ai.core.store import Stores
from company_ai.core.store.pg_schema import PG_MIGRATIONS
from company_ai.sample_world.crm import iter_sample, store_contacts, store_messages
from tests.pg_server import throwaway

AS_OF = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def p50_ms(samples_s: list[float]) -> str:
    return f"{statistics.median(samples_s) * 1000:.2f} ms"


def stores_figures(stores: Stores, contacts: int, batch: int, lookups: int) -> list[str]:
    people, episodes, messages = [], [], []
    for contact, history, sent in iter_sample(contacts=contacts, as_of=AS_OF, density=1.1):
        people.append(contact)
        episodes += history
        messages += sent
    store_contacts(stores, people)
    store_messages(stores, messages)
    gc.freeze()  # the generated input is not part of the cost measured
    with stores.connect("memory") as memory:
        started = time.perf_counter()
        for i in range(0, len(episodes), batch):
            append_episodes(memory, episodes[i : i + batch], now=AS_OF)
        took = time.perf_counter() - started
    gc.unfreeze()
    rng = random.Random(1)
    emails = [c[1] for c in people if c[1]]
    timings = []
    for email in (rng.choice(emails) for _ in range(lookups)):
        t0 = time.perf_counter()
        load_timeline(stores, email)
        timings.append(time.perf_counter() - t0)
    return [
        f"episodes appended: {len(episodes) / took:,.0f}/s ({len(episodes):,} in {took:.1f} s, "
        f"one transaction per {batch:,})",
        f"timeline (opens its stores each call): p50 {p50_ms(timings)} (n={lookups})",
    ]


def demo_seconds(root: Path, database_url: str, days: int) -> float:
    env = {**os.environ, "COMPANY_AI_DATABASE_URL": database_url}
    command = [str(Path(sys.executable).parent / "company-ai"), "demo", "--days", str(days)]
    started = time.perf_counter()
    subprocess.run(command, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--lookups", type=int, default=500)
    parser.add_argument("--days", type=int, default=3, help="the demo's --days")
    parser.add_argument("--no-demo", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="company-ai-bench-pg-"))
    with throwaway(durable=True) as server:
        print(f"{os.cpu_count()} cores; on PostgreSQL: {', '.join(sorted(PG_MIGRATIONS))}")
        backends = {"sqlite": "", "postgres": server.create_database("bench")}
        for name, url in backends.items():
            stores = Stores(work / name / "data", database_url=url)
            for line in stores_figures(stores, args.contacts, args.batch, args.lookups):
                print(f"{name:8}  {line}", flush=True)
        if not args.no_demo:
            for name, url in backends.items():
                if url:
                    url = server.create_database("demo")
                root = work / f"demo-{name}"
                root.mkdir()
                took = demo_seconds(root, url, args.days)
                print(f"{name:8}  demo --days {args.days}, whole process: {took:.1f} s")
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
