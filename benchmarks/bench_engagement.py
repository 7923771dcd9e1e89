"""Engagement drops: good files per second, and poisoned files per second.

    .venv/bin/python benchmarks/bench_engagement.py                 # 2,000 files of 10
    .venv/bin/python benchmarks/bench_engagement.py --files 500 --signals 10

Builds 1,000 contacts, then times `core.engagement.take_signals` over `--files` good drop
files of `--signals` site visits each (one run), and over poisoned files, each alone in
its own run (as the code before the intake discipline failed on each), beside a good
file timed the same way: a 5,000-digit
number, 100,000 brackets, a lone surrogate escape, 5 MB of junk bytes and 5 MB of one
long JSON array of numbers (past the item bound). Runs against whichever `company_ai` is
on PYTHONPATH, so the same script times an older checkout; a poisoned file the code
cannot take (an uncaught error) is timed up to the error and counted as `crashed`.
Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.inbox import take_signals
from company_ai.core.store import Stores, transaction

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
AT = "2026-11-29T12:00:00Z"
CONTACTS = 1_000
SIGNAL = '"kind": "portal_signup", "email": "p1@acme.example", "at": "2026-11-29T12:00:00Z"'
POISONS = {  # name: (bytes, copies); the first is a good file, the baseline
    "good": (
        json.dumps([
            {"id": f"g{i}", "kind": "site_visit", "email": "p1@acme.example", "at": AT,
             "pages": ["pricing page", "case studies"]}
            for i in range(10)
        ]).encode(),
        200,
    ),
    "5,000 digits": (("{" + SIGNAL + ', "n": ' + "1" * 5000 + "}").encode(), 200),
    "100k brackets": (b"[" * 100_000 + b"]" * 100_000, 200),
    "surrogate": (("{" + SIGNAL + r', "detail": "a \ud800 b"}').encode(), 200),
    "5 MB junk": (bytes(range(256)) * (5_000_000 // 256), 10),
    "5 MB numbers": (b"[" + b"1," * 2_499_990 + b"1]", 10),
}  # fmt: skip


def run(stores: Stores, drop: Path) -> tuple[object | None, str | None]:
    kwargs = {"now": NOW} if "now" in inspect.signature(take_signals).parameters else {}
    try:
        return take_signals(stores, drop, tz="UTC", warn=lambda _: None, **kwargs), None
    except Exception as exc:  # noqa: BLE001 (the old code's failure is what is measured)
        return None, type(exc).__name__


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--signals", type=int, default=10)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores")
    root = Path(tempfile.mkdtemp(prefix="bench-engagement-"))
    stores = Stores(root / "data")
    with stores.connect("crm") as crm, transaction(crm):
        crm.executemany(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES ($1, $2, $3, 10, 'bench', $4, $5)",
            [(i, f"p{i}@acme.example", f"P {i}", AT, AT) for i in range(1, CONTACTS + 1)],
        )

    drop = root / "drop"
    drop.mkdir()
    for f in range(args.files):
        signals = [
            {"id": f"s{f}-{i}", "kind": "site_visit", "at": AT,
             "email": f"p{(f * 7 + i) % CONTACTS + 1}@acme.example",
             "pages": ["pricing page", "case studies"]}
            for i in range(args.signals)
        ]  # fmt: skip
        (drop / f"{f:05d}.json").write_text(json.dumps({"signals": signals}))
    wall, cpu = time.perf_counter(), time.process_time()
    done, crashed = run(stores, drop)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert crashed is None and done is not None, crashed
    n = args.files * args.signals
    size = sum(p.stat().st_size for p in (drop / "processed").iterdir())
    print(
        f"good: {args.files:,} files of {args.signals} signals in {wall:.2f} s wall,"
        f" {cpu:.2f} s CPU: {args.files / wall:,.0f} files/s, {n / wall:,.0f} signals/s,"
        f" {wall / args.files * 1e3:.2f} ms a file, {size / wall / 1e6:.1f} MB/s"
        f" ({done.episodes_written:,} episodes)"  # type: ignore[attr-defined]
    )

    # Each file alone in its own run, the good one too (the baseline: the same run's cost).
    for name, (raw, copies) in POISONS.items():
        folders = []
        for c in range(copies):
            folder = root / f"poison-{len(os.listdir(root))}"
            folder.mkdir()
            (folder / f"{c}.json").write_bytes(raw)
            folders.append(folder)
        fates: dict[str, int] = {}
        wall = time.perf_counter()
        for folder in folders:
            done, crashed = run(stores, folder)
            if crashed:
                fate = f"crashed ({crashed})"
            else:
                fate = "rejected" if done.rejected else "processed"  # type: ignore[attr-defined]
            fates[fate] = fates.get(fate, 0) + 1
        wall = time.perf_counter() - wall
        print(
            f"alone, {name} ({len(raw):,} bytes): {copies / wall:,.0f} files/s,"
            f" {wall / copies * 1e3:.2f} ms a file, {len(raw) * copies / wall / 1e6:,.1f} MB/s,"
            f" {fates}"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
