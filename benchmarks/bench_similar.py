"""`similar` figures (see BENCHMARKS.md, "similar (issue 30)").

    .venv/bin/python benchmarks/bench_similar.py [--data DIR] [--contacts 2000] [--runs 10]
        [--queries 40]

On demo-sized data (the sample CRM of `--contacts` people, its episodes embedded into the
`episodes` collection as `episode_vectors` does; built into DIR when it holds no store yet,
kept there for the next call):

1. The whole process, `company-ai similar TEXT --data-dir DIR`, timed from outside
   (start to exit, `--runs` runs after one warm-up): median, min and max wall seconds. Then
   the same search as the command ran it before issue 30 (chromadb's client and index,
   `open_existing` + `nearest` + `fill_rows`), as one `python -c` process.
2. In one process: the first `find_similar` call (loads the model, reads the files) and
   warm calls over `--queries` texts (p50, p99), scored from the files and, for
   comparison, by Chroma's index (`SCAN_MAX` 0).
3. Repeats: of the 10 nearest memories to the demo's text, how many repeat a line already
   shown above them, against the groups `similar` prints now.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from company_ai.core.embedding import load_minilm
from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vectors import Signals, open_store, sync_episodes, vectors_dir
from company_ai.core.vectors import similar as similar_module
from company_ai.core.vectors.similar import find_similar, line_key
from company_ai.sample_world.crm import load_sample

TEXT = "asked us to call back after the quarter"
QUERIES = (
    TEXT,
    "pricing",
    "budget sits with the CFO",
    "security review before we sign",
    "not a priority right now",
    "viewed the integration docs",
    "we chose another vendor",
    "send me a case study",
)
BEFORE = """
import sys
from company_ai.core.embedding import embedder_for
from company_ai.core.store import Stores
from company_ai.core.vectors import LIVE, fill_rows, nearest, open_existing, vectors_dir
stores = Stores(sys.argv[1])
with open_existing(vectors_dir(stores.data_dir)) as store:
    names = [n for n in LIVE if store.has(n)]
    model, dim = store.model(names[0])
    vector = embedder_for(model, dim, "").embed([sys.argv[2]])[0]
    hits = nearest(store, vector, names, 10)
fill_rows(stores, hits)
for n, h in enumerate(hits, 1):
    print(f"{n}. {h.score:.3f}  {h.day}  {h.kind} {h.type}  {h.contact}  [{h.ref}]")
    print(f"   {h.text}")
"""


def build(data: Path, contacts: int) -> None:
    stores = Stores(data)
    started = time.perf_counter()
    summary = load_sample(stores, contacts=contacts, as_of=datetime(2026, 11, 30, 7, tzinfo=UTC))
    model = load_minilm()
    with open_store(vectors_dir(data), model.name, model.dim) as (store, opened):
        day = Day.of("2026-11-29", "UTC")
        sync_episodes(store, opened, stores, model, day, cap=1_000_000, signals=Signals())
    took = time.perf_counter() - started
    print(f"built {data}: {summary.contacts} contacts, {summary.episodes} episodes, {took:.0f} s")


def whole_process(command: list[str], runs: int) -> str:
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    walls = []
    for n in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode:
            raise SystemExit(done.stderr)
        if n:  # the first is a warm-up (the files into the page cache)
            walls.append(time.perf_counter() - started)
    return f"median {statistics.median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f})"


def in_process(stores: Stores, queries: int) -> None:
    started = time.perf_counter()
    find_similar(stores, TEXT)
    print(
        f"  first call (model loaded, files read): {(time.perf_counter() - started) * 1000:.0f} ms"
    )
    for label, scan_max in (("from the files", similar_module.SCAN_MAX), ("Chroma's index", 0)):
        similar_module.SCAN_MAX = scan_max
        find_similar(stores, TEXT)  # this path's own first call
        took = []
        for n in range(queries):
            started = time.perf_counter()
            find_similar(stores, QUERIES[n % len(QUERIES)])
            took.append((time.perf_counter() - started) * 1000)
        p50, p99 = np.percentile(took, 50), np.percentile(took, 99)
        print(f"  warm, {label}: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({queries} calls)")


def repeats(stores: Stores) -> None:
    result = find_similar(stores, TEXT, limit=10)
    members = sorted((m for g in result.groups for m in g.members), key=lambda m: (-m.score, m.id))[
        :10
    ]
    seen: set[str] = set()
    repeated = 0
    for m in members:
        key = line_key(m.text, m.contact.split(" <")[0])
        repeated += key in seen
        seen.add(key)
    counts = ", ".join(str(g.count) for g in result.groups)
    print(f"  10 nearest memories: {repeated} repeat a line shown above them")
    print(f"  10 lines now, memories per line among the nearest {result.window}: {counts}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("bench-similar-data"))
    parser.add_argument("--contacts", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    if not (vectors_dir(args.data) / "chroma.sqlite3").is_file():
        build(args.data, args.contacts)
    stores = Stores(args.data)
    cli = [sys.executable, "-m", "company_ai.cli", "--data-dir", str(args.data), "similar", TEXT]
    print(f"whole process, `company-ai similar {TEXT!r}`, {args.runs} runs:")
    print(f"  now (files read, no chromadb): {whole_process(cli, args.runs)}")
    before = [sys.executable, "-c", BEFORE, str(args.data), TEXT]
    print(f"  before issue 30 (chromadb's client): {whole_process(before, args.runs)}")
    print("in process, find_similar:")
    in_process(stores, args.queries)
    print(f"repeats, {TEXT!r}:")
    repeats(stores)


if __name__ == "__main__":
    main()
