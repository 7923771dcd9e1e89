"""Episodic memory at full size: append throughput, timeline and dossier latency, size.

    .venv/bin/python benchmarks/bench_memory.py                  # 156,925 contacts, ≥1.5M episodes
    .venv/bin/python benchmarks/bench_memory.py --contacts 20000 # a quicker look

Prints one figure a line, and the load average (the machine may be shared: appending uses
a second core when one is free); BENCHMARKS.md records a run. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.crm import build_dossier, find_contact, load_timeline, read_timeline
from company_ai.core.memory import append_episodes, episode_rows, validate
from company_ai.core.store import Stores
from company_ai.sample_world.crm import iter_sample, store_contacts, store_messages

AS_OF = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def percentiles(samples_s: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples_s)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms (n={len(ms)})"


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=156_925)
    parser.add_argument(
        "--density",
        type=float,
        default=1.1,
        help="episodes-per-contact scale; 1.1 gives ≥1.5M at full size",
    )
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--cli-runs", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="keep the stores in this directory")
    args = parser.parse_args()

    data = args.keep or Path(tempfile.mkdtemp(prefix="company-ai-bench-")) / "data"
    if data.exists():
        shutil.rmtree(data)
    stores = Stores(data)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}"
    )

    started = time.perf_counter()
    people, episodes, messages = [], [], []
    for contact, history, sent in iter_sample(
        contacts=args.contacts, as_of=AS_OF, density=args.density
    ):
        people.append(contact)
        episodes += history
        messages += sent
    print(
        f"generated {len(people):,} contacts, {len(episodes):,} episodes, "
        f"{len(messages):,} messages in {time.perf_counter() - started:.1f} s"
    )
    store_contacts(stores, people)
    store_messages(stores, messages)
    # The generated input is not part of the cost measured: keep the garbage collector
    # from re-scanning millions of input dicts on every collection.
    gc.freeze()

    half = len(episodes) // 2
    with stores.connect("memory") as memory:
        print(f"load average before appending: {load_average()}")
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(0, half, args.batch):
            append_episodes(memory, episodes[i : min(i + args.batch, half)], now=AS_OF)
        took, cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"append end to end (checking + storing, one transaction per {args.batch:,}): "
            f"{half / took:,.0f} episodes/s ({half:,} in {took:.1f} s, {cpu:.1f} s CPU "
            "in both threads)"
        )
        rest = episodes[half:]
        started = time.perf_counter()
        episode_rows(rest, now=AS_OF)
        took_check = time.perf_counter() - started
        started = time.perf_counter()
        validated = validate(rest)
        took_validate = time.perf_counter() - started
        started = time.perf_counter()
        for i in range(0, len(validated), args.batch):
            append_episodes(memory, validated[i : i + args.batch], now=AS_OF)
        took_store = time.perf_counter() - started
        print(
            f"  second half, {len(rest):,}, alone: checking (plain path) "
            f"{len(rest) / took_check:,.0f} episodes/s; pydantic validation "
            f"{len(rest) / took_validate:,.0f} episodes/s; storing pydantic-validated "
            f"episodes {len(rest) / took_store:,.0f} episodes/s (store then holds "
            f"{len(episodes):,})"
        )
        started = time.perf_counter()
        again = append_episodes(memory, episodes[: args.batch], now=AS_OF)
        took = time.perf_counter() - started
        print(
            f"re-append of a stored batch (all {again.duplicates:,} skipped as duplicates): "
            f"{args.batch / took:,.0f} episodes/s"
        )
        print(f"load average after appending: {load_average()}")
        memory.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    del episodes, rest, validated

    rng = random.Random(1)
    with_email = [(c[0], c[1]) for c in people if c[1]]
    picks = [rng.choice(with_email) for _ in range(args.lookups)]
    timings = []
    for _, email in picks:
        t0 = time.perf_counter()
        load_timeline(stores, email)
        timings.append(time.perf_counter() - t0)
    print(f"timeline (opens its stores, reads episodes and messages): {percentiles(timings)}")
    with (
        stores.connect("crm", readonly=True) as crm,
        stores.connect("memory", readonly=True) as memory,
        stores.connect("outreach", readonly=True) as outreach,
    ):
        timings = []
        for _, email in picks:
            t0 = time.perf_counter()
            read_timeline(memory, outreach, dict(find_contact(crm, email)))
            timings.append(time.perf_counter() - t0)
        print(
            f"timeline (open connections: contact by email, episodes, messages): "
            f"{percentiles(timings)}"
        )
        timings = []
        for contact_id, _ in picks:
            t0 = time.perf_counter()
            build_dossier(memory, contact_id)
            timings.append(time.perf_counter() - t0)
    print(f"dossier (last 30 episodes, open connection): {percentiles(timings)}")

    cli = Path(sys.executable).with_name("company-ai")
    timings = []
    for _, email in picks[: args.cli_runs]:
        t0 = time.perf_counter()
        subprocess.run(
            [str(cli), "--data-dir", str(data), "timeline", email],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        timings.append(time.perf_counter() - t0)
    print(f"`company-ai timeline EMAIL` as a whole process: {percentiles(timings)}")

    for domain in ("crm", "memory", "outreach"):
        size = stores.path(domain).stat().st_size
        print(f"size {domain}.db: {size / 2**20:,.1f} MiB")
    if not args.keep:
        shutil.rmtree(data.parent)


if __name__ == "__main__":
    main()
