"""Retrieval quality on every evaluation set, and the fusion chosen on half of them.

    .venv/bin/python benchmarks/bench_retrieval.py [--model offline|minilm] [--keep DIR]
        [--sets tatoeba-fra,tatoeba-ita,tatoeba-por,vaswani,sample] [--data ../shared/data]

Indexes each BEIR set under ../shared/data (and the sample vault, distilled offline) with
the recall index's own code, then scores nDCG@10 for keyword, dense, plain RRF and the
confidence-weighted fusion of standard scores that `Searcher.hybrid` uses. The fusion's
one parameter is chosen on one half of the queries of every set (a fixed split by a hash
of the query id, the mean over sets), never on one set alone, and reported on the other
half once (held-out), then on all queries. `--keep` keeps the indexes, so a second run
only queries. Prints the embedding throughput of a fresh build and the query embedding time.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.embedding import OFFLINE
from company_ai.core.recall import index_entities
from company_ai.core.recall.retrieval import (
    Searcher,
    confident_fusion,
    fusion_power,
    index_model,
    keyword_scored,
    rebuild_docs,
    rrf,
    update_vectors,
)
from company_ai.core.recall.retrieval_eval import ndcg_at, read_beir, sample_questions
from company_ai.core.store import Store, Stores, transaction
from company_ai.core.vault import distill_staging, offline_page, stage_vault

DATA = Path("../shared/data")  # beside the checkout, as the lead's is laid out
SETS = ("tatoeba-fra", "tatoeba-ita", "tatoeba-por", "vaswani", "sample")
POWERS = (0.0, 0.5, 1.0, 1.5, 2.0, 4.0, 6.0)  # 0: the standard scores summed alike


def build_beir(folder: Path, conn, embedder):
    docs, queries, qrels = read_beir(folder)
    if index_model(conn) != (embedder.name, embedder.dim) or conn.execute(
        "SELECT count(*) FROM search_docs"
    ).fetchone()[0] != len(docs):
        with transaction(conn):
            rebuild_docs(conn, docs)
        started = time.perf_counter()
        embedded = update_vectors(conn, embedder)
        took = time.perf_counter() - started
        print(f"  embedded {embedded:,} documents in {took:.1f} s: {embedded / took:.1f} texts/s")
    return queries, qrels


def build_sample(root: Path, conn, embedder):
    vault = Path(__file__).resolve().parents[1] / "company_ai" / "sample_vault"
    if not conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]:
        staging = root / "sample-staging"
        stage_vault(vault, staging, day="2026-11-29")
        distill_staging(
            conn, str(staging), day="2026-11-29",
            distill=lambda t, p, x: offline_page(p, x), source="model:offline",
            clock=lambda: datetime(2026, 11, 29, tzinfo=UTC),
        )  # fmt: skip
    index_entities(conn, embedder)
    return sample_questions()


def rankings(searcher: Searcher, queries, qrels):
    """(qid, keyword top 100, dense top 100, relevant) per judged query, and the mean ms
    of one dense search (embedding the question and the matrix product)."""
    rows, laps = [], []
    for qid, text in queries.items():
        if not qrels.get(qid):
            continue
        keyword = keyword_scored(searcher.conn, text, 100)
        started = time.perf_counter()
        dense = searcher.dense_scored(text, 100)
        laps.append((time.perf_counter() - started) * 1000)
        rows.append((qid, keyword, dense, qrels[qid]))
    return rows, statistics.median(laps)


def held_out(qid: str) -> bool:
    return hashlib.sha256(qid.encode()).digest()[0] % 2 == 1


def keys(ranking):
    return [key for key, _ in ranking]


def score(rows, fuse) -> float:
    return statistics.fmean(ndcg_at(fuse(k, d), rel) for _, k, d, rel in rows) if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(OFFLINE), default="offline")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the indexes here")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--data", type=Path, default=DATA, help="the BEIR sets' folder")
    args = parser.parse_args()
    name, dim, load = OFFLINE[args.model]
    embedder = load()
    print(f"model: {name} ({dim}-d)")
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        root = args.keep or Path(tmp)
        per_set = {}
        for label in args.sets.split(","):
            print(f"{label}:")
            with Stores(root / f"{label}-{args.model}").connect(Store.RECALL) as conn:
                if label == "sample":
                    queries, qrels = build_sample(root, conn, embedder)
                else:
                    queries, qrels = build_beir(args.data / label, conn, embedder)
                rows, dense_ms = rankings(Searcher(conn, embedder), queries, qrels)
            per_set[label] = rows
            print(f"  {len(rows)} judged queries; dense search p50 {dense_ms:.1f} ms")
    halves = {
        label: ([r for r in rows if not held_out(r[0])], [r for r in rows if held_out(r[0])])
        for label, rows in per_set.items()
    }

    def fusion(power):
        return lambda k, d: confident_fusion([k, d], power=power)

    tuning = {p: statistics.fmean(score(a, fusion(p)) for a, _ in halves.values()) for p in POWERS}
    chosen = max(POWERS, key=lambda p: tuning[p])
    print(
        "mean tuning-half nDCG@10 by power: "
        + ", ".join(f"{p:g}: {tuning[p]:.3f}" for p in POWERS)
        + f"; chosen {chosen:g}, shipped {fusion_power(name):g}"
    )
    modes = {
        "keyword": lambda k, d: keys(k),
        "dense": lambda k, d: keys(d),
        "rrf": lambda k, d: rrf([keys(k), keys(d)]),
        "hybrid": fusion(fusion_power(name)),
        f"power {chosen:g}": fusion(chosen),
    }
    print(f"nDCG@10 with {name}: all queries (held-out half in brackets)")
    print(f"{'set':<12}" + "".join(f"{mode:>16}" for mode in modes))
    for label, rows in per_set.items():
        cells = [
            f"{score(rows, fuse):.3f} ({score(halves[label][1], fuse):.3f})"
            for fuse in modes.values()
        ]
        print(f"{label:<12}" + "".join(f"{c:>16}" for c in cells))


if __name__ == "__main__":
    main()
