"""Vector memory figures (see BENCHMARKS.md, "Vector memory (issue 10)").

    .venv/bin/python benchmarks/bench_vectors.py [--sizes 100000 1000000] [--queries 200]
        [--texts 2000] [--skip-embedding] [--keep DIR]

1. Embedding throughput of the offline default (all-MiniLM-L6-v2 int8 ONNX) on real
   text: the sample CRM's episode contents, embedded in batches as `episode_vectors` does
   (texts/s), and one query text at a time as `similar` does (ms).
2. For each size N: N synthetic 384-d unit vectors (clustered: 2,000 random centres plus
   Gaussian noise, so neighbours exist as they do in real text) with the metadata the
   assets write, inserted straight into an `episodes` collection through `VectorStore`
   (no embedding: the model would take hours at 1M). Then, in the same warm process,
   `similar`'s nearest-10 query through Chroma's HNSW index against an exact numpy scan
   of the same vectors: p50 and p99 over `--queries` query vectors (noisy copies of
   random stored vectors), the index's recall@10 against the exact answer, and a
   filtered query (one contact) p50.
With `--erase STORE`: on a copy of a kept store, `erase` (what `forget` runs) of one
contact's vectors, timed, then whether they are gone from the index files and answers,
and what a reader's opening (which ends by clearing the index files' unused bytes) costs.

3. `age_store` over the collection at its cap (cap = N): the stored days are drawn from
   each importance's live window (an aged store), and the pass runs one day later, so
   what crossed the archive line overnight moves (a few per cent); and the store's size on
   disk.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np

from company_ai.core.embedding import load_minilm
from company_ai.core.store import Stores
from company_ai.core.vectors import (
    EPISODES,
    KNOWLEDGE,
    Signals,
    Vector,
    age_store,
    erase,
    nearest,
    open_existing,
    open_store,
    where_filter,
)
from company_ai.core.vectors.store import _id_map, _segments
from company_ai.sample_world.crm import load_sample

DIM = 384
TYPES = ("research", "company", "outreach", "response", "engagement", "note", "scoring")
BASE = {"research": 2, "company": 2, "outreach": 3, "response": 4, "engagement": 2}
BASE |= {"note": 3, "scoring": 1}
TODAY = date(2026, 11, 30)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def embedding_throughput(texts: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stores = Stores(Path(tmp) / "data")
        load_sample(stores, contacts=400, as_of=datetime(2026, 11, 30, 7, tzinfo=UTC))
        with stores.connect("memory", readonly=True) as conn:
            rows = [r[0] for r in conn.execute("SELECT content FROM contact_episodes")]
    corpus = (rows * (texts // len(rows) + 1))[:texts]
    chars = statistics.mean(len(t) for t in corpus)
    started = time.perf_counter()
    model = load_minilm()
    loaded = time.perf_counter() - started
    model.embed(corpus[:64])  # warm
    started = time.perf_counter()
    model.embed(corpus)
    batch = time.perf_counter() - started
    singles = []
    for text in corpus[:200]:
        started = time.perf_counter()
        model.embed([text])
        singles.append(time.perf_counter() - started)
    print(f"embedding: model load {ms(loaded)}; {texts} texts (mean {chars:.0f} chars) in "
          f"{batch:.1f} s = {texts / batch:.0f} texts/s; one query text p50 "
          f"{ms(percentile(singles, 50))}, p99 {ms(percentile(singles, 99))}")  # fmt: skip


def synthetic(n: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        size = min(100_000, n - start)
        picks = centres[rng.integers(0, len(centres), size)]
        noise = rng.standard_normal((size, DIM)).astype(np.float32) * 0.06
        part = picks + noise
        out[start : start + size] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


# How long each importance stays above the archive line: an aged store holds ages below it.
LIVE_DAYS = {1: 7, 2: 42, 3: 155, 4: 540, 5: 1200}


def metadata(i: int, rng: np.random.Generator) -> dict:
    kind = TYPES[i % len(TYPES)]
    day = TODAY - timedelta(days=int(rng.integers(0, LIVE_DAYS[BASE[kind]])))
    return {
        "kind": "episode",
        "ref": f"memory.contact_episodes:{i}",
        "day": day.isoformat(),
        "day_num": int(day.strftime("%Y%m%d")),
        "type": kind,
        "base": BASE[kind],
        "importance": BASE[kind],
        "contact_id": int(rng.integers(1, 150_000)),
        "text_hash": f"{i:032x}",
    }


def disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def one_size(
    n: int, queries: int, keep: Path | None, age_days: int = 1, resume: Path | None = None
) -> None:
    """Build a store of n synthetic vectors and measure it; with `resume`, measure the store
    an interrupted build of the same n left there (its first `count` vectors, in order)."""
    rng = np.random.default_rng(7)
    if resume is None:
        root = keep or Path(tempfile.mkdtemp(prefix="bench-vectors-"))
        path = root / f"vectors-{n}"
        shutil.rmtree(path, ignore_errors=True)
    else:
        path = resume
    vectors = synthetic(n, rng)
    metas = [metadata(i, rng) for i in range(n)]
    started = time.perf_counter()
    with open_store(path, "synthetic-384", DIM) as (store, _):
        if resume is None:
            insert(store, vectors, metas, 0, n)
        else:
            n = store.count(EPISODES)
            vectors, metas = vectors[:n], metas[:n]
            print(f"[{n:,}] resumed: the store an interrupted build left, opened in "
                  f"{time.perf_counter() - started:.0f} s")  # fmt: skip
        measure(store, vectors, metas, queries, age_days, path, rng)
    if keep is None and resume is None:
        shutil.rmtree(root, ignore_errors=True)


def insert(store, vectors, metas, start: int, stop: int) -> None:
    """Upsert vectors[start:stop] and print the rate, wall and CPU time, and the load."""
    started, cpu = time.perf_counter(), time.process_time()
    step = 50_000
    for at in range(start, stop, step):
        part = range(at, min(stop, at + step))
        store.upsert(EPISODES, [Vector(f"episode:{i}", vectors[i], metas[i]) for i in part])
        print(f"  {part[-1] + 1:,} in {time.perf_counter() - started:.0f} s", flush=True)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"[{start:,}..{stop:,}] inserted {stop - start:,} in {wall:.0f} s "
          f"({(stop - start) / wall:.0f} vectors/s), CPU {cpu:.0f} s, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip


def build_chunk(n: int, path: Path, chunk: int) -> None:
    """Add the next `chunk` of the n synthetic vectors to the store at `path` (a 1M build
    in pieces short enough to share the benchmark lock): it resumes at the store's count."""
    rng = np.random.default_rng(7)
    vectors = synthetic(n, rng)
    metas = [metadata(i, rng) for i in range(n)]
    with open_store(path, "synthetic-384", DIM) as (store, _):
        have = store.count(EPISODES)
        insert(store, vectors, metas, have, min(n, have + chunk))
    print(f"store on disk: {disk_size(path) / 2**20:.0f} MiB")


def measure(store, vectors, metas, queries, age_days, path, rng) -> None:
    n = len(vectors)
    asks = (
        vectors[rng.integers(0, n, queries)]
        + rng.standard_normal((queries, DIM)).astype(np.float32) * 0.03
    )
    asks /= np.linalg.norm(asks, axis=1, keepdims=True)
    started = time.perf_counter()
    for q in asks[:10]:  # warm: the index is loaded on the first query
        store.query(EPISODES, q, 10)
    print(f"[{n:,}] first 10 queries (loading the index): {time.perf_counter() - started:.1f} s")
    hnsw, exact, hits = [], [], 0
    for q in asks:
        started = time.perf_counter()
        found = store.query(EPISODES, q, 10)
        hnsw.append(time.perf_counter() - started)
        started = time.perf_counter()
        scores = vectors @ q
        top = np.argpartition(-scores, 10)[:10]
        exact.append(time.perf_counter() - started)
        truth = {f"episode:{i}" for i in top}
        hits += len(truth & {i for i, _, _ in found})
    print(f"[{n:,}] similar top-10, Chroma HNSW: p50 {ms(percentile(hnsw, 50))}, p99 "
          f"{ms(percentile(hnsw, 99))}; exact numpy scan: p50 {ms(percentile(exact, 50))}, "
          f"p99 {ms(percentile(exact, 99))}; recall@10 {hits / (10 * len(asks)):.3f}")  # fmt: skip
    contact_filter(store, vectors, metas, asks[:50])
    size = disk_size(path)
    print(f"[{n:,}] store on disk: {size / 2**20:.0f} MiB ({size / n:.0f} bytes/vector)")
    if age_days > 0:
        age(store, n, age_days)


def contact_filter(store, vectors, metas, asks) -> None:
    """`similar --contact`: Chroma's index with the filter (the old way) against `nearest`,
    which scores the contact's vectors exactly; and whether `nearest` matches the truth."""
    contacts = np.array([m["contact_id"] for m in metas])
    index, exact, same = [], [], 0
    for k, q in enumerate(asks):
        contact = metas[k]["contact_id"]
        started = time.perf_counter()
        store.query(EPISODES, q, 10, {"contact_id": contact})
        index.append(time.perf_counter() - started)
        started = time.perf_counter()
        found = nearest(store, q, [EPISODES], 10, where_filter(contact_id=contact))
        exact.append(time.perf_counter() - started)
        mine = np.flatnonzero(contacts == contact)
        truth = mine[np.argsort(-(vectors[mine] @ q))[:10]]
        same += {h.id for h in found} == {f"episode:{i}" for i in truth}
    print(f"[{len(vectors):,}] one-contact filter: Chroma index p50 {ms(percentile(index, 50))}, "
          f"p99 {ms(percentile(index, 99))}; exact over the contact's vectors (`nearest`) p50 "
          f"{ms(percentile(exact, 50))}, p99 {ms(percentile(exact, 99))}; "
          f"{same}/{len(asks)} answers equal the exact top 10 "
          f"(contacts hold {np.bincount(contacts).max()} vectors at most)")  # fmt: skip
    # A contact with thousands of memories: one day's vectors stand in for it (a filter
    # selecting a few thousand), scored exactly the same way.
    days = np.array([m["day_num"] for m in metas])
    sizes, times = [], []
    for k, q in enumerate(asks[:20]):
        day = int(days[k])
        started = time.perf_counter()
        store.nearest_exact(EPISODES, q, 10, {"day_num": day})
        times.append(time.perf_counter() - started)
        sizes.append(int((days == day).sum()))
    print(f"[{len(vectors):,}] exact over one day's vectors ({min(sizes)} to {max(sizes)}, "
          f"median {int(np.median(sizes))}): p50 {ms(percentile(times, 50))}, "
          f"p99 {ms(percentile(times, 99))}")  # fmt: skip


def age(store, n: int, age_days: int) -> None:
    caps = {EPISODES: n, KNOWLEDGE: n}
    started = time.perf_counter()
    result = age_store(
        store, Signals(), today=TODAY + timedelta(days=age_days), caps=caps, ttl_days=180
    )
    aged = time.perf_counter() - started
    print(f"[{n:,}] aging pass at the cap: {aged:.0f} s (kept {result.kept[EPISODES]:,}, "
          f"archived {result.archived[EPISODES]:,})")  # fmt: skip


def erase_contact(kept: Path) -> None:
    path = Path(tempfile.mkdtemp(prefix="bench-erase-")) / "vectors"
    started = time.perf_counter()
    shutil.copytree(kept, path)
    print(f"copied {kept} ({disk_size(path) / 2**20:,.0f} MiB) in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    try:
        with open_existing(path) as store:
            count = store.count(EPISODES)
            contact = next(iter(store.metadata_of(EPISODES, ["episode:0"]).values()))["contact_id"]
            theirs = store.vectors(
                EPISODES, list(store.metadata(EPISODES, {"contact_id": contact}))
            )
        started = time.perf_counter()
        removed = erase(path, lambda store: {EPISODES: [v.id for v in theirs]})
        took = time.perf_counter() - started
        print(f"[{count:,}] erase of one contact's {len(removed[EPISODES])} vectors: {took:.1f} s")
        started = time.perf_counter()
        with open_existing(path):
            pass
        opened = time.perf_counter() - started
        with open_existing(path) as store:
            answers = [h[0] for v in theirs for h in store.query(EPISODES, v.embedding, 3)]
        ids = {v.id for v in theirs}
        mapped = ids & set(_id_map(_segments(path)[EPISODES]))
        print(f"[{count:,}] afterwards: {len(ids & set(answers))} of them in answers, "
              f"{len(mapped)} in the id map; a reader's open + close {opened:.2f} s")  # fmt: skip
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--skip-embedding", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the stores here and keep them")
    parser.add_argument("--resume", type=Path, help="measure a store an interrupted build left")
    parser.add_argument("--build", type=Path, help="add --chunk more vectors to this store, stop")
    parser.add_argument("--chunk", type=int, default=200_000)
    parser.add_argument("--erase", type=Path, help="time erasing a contact from a copy of this")
    # 1 (the recorded run): the stored ages reach each live window's edge, which is still
    # kept, so that pass moves nothing; 2 or more moves what crossed the line meanwhile.
    parser.add_argument(
        "--age-days", type=int, default=1, help="age the store this much later (0: no aging)"
    )
    args = parser.parse_args()
    if args.build:
        build_chunk(args.sizes[0], args.build, args.chunk)
        return
    if args.erase:
        erase_contact(args.erase)
        return
    if not args.skip_embedding:
        embedding_throughput(args.texts)
    for n in args.sizes:
        one_size(n, args.queries, args.keep, args.age_days, args.resume)


if __name__ == "__main__":
    main()
