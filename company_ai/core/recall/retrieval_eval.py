"""Retrieval evaluation: nDCG@10 and Recall@100 for keyword-only, dense-only and hybrid.

`evaluate_beir` reads any BEIR-layout folder (`corpus.jsonl`, `queries.jsonl`,
`qrels/test.tsv`) and indexes the corpus with the recall index's own code
(`core.retrieval`) in a scratch store; `evaluate_searcher` scores any built index
against questions with known answers (the sample vault's set is `QUESTIONS`).
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

from company_ai.core.recall.retrieval import Doc, Searcher, rebuild_docs, update_vectors
from company_ai.core.store import Store, Stores, transaction

MODES = ("keyword", "dense", "hybrid")
QUESTIONS = Path(__file__).resolve().parents[2] / "sample_vault_questions.jsonl"


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(key, 0) / math.log2(i + 2) for i, key in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {key for key, rel in relevant.items() if rel > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def evaluate_searcher(
    searcher: Searcher, queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> dict[str, dict[str, float]]:
    """Mean nDCG@10 and Recall@100 per mode over the queries that have judgements."""
    scored = [q for q in queries if qrels.get(q)]
    run = {"keyword": searcher.keyword, "dense": searcher.dense_only, "hybrid": searcher.hybrid}
    results = {}
    for mode in MODES:
        ndcg = recall = 0.0
        for qid in scored:
            ranked = run[mode](queries[qid], 100)
            ndcg += ndcg_at(ranked, qrels[qid])
            recall += recall_at(ranked, qrels[qid])
        n = max(len(scored), 1)
        results[mode] = {"ndcg@10": ndcg / n, "recall@100": recall / n}
    results["queries"] = {"count": len(scored)}
    return results


def read_beir(folder: str | Path) -> tuple[list[Doc], dict[str, str], dict[str, dict[str, int]]]:
    folder = Path(folder)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder} is not a BEIR folder: {name} is missing")
    docs = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                docs.append(Doc(str(row["_id"]), row.get("title") or "", row.get("text") or ""))
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        queries = {str(r["_id"]): r["text"] for r in map(json.loads, filter(str.strip, lines))}
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return docs, queries, qrels


def evaluate_beir(
    folder: str | Path,
    embedder,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, dict[str, float]]:
    docs, queries, qrels = read_beir(folder)
    with (
        tempfile.TemporaryDirectory(prefix="company-ai-eval-") as scratch,
        Stores(scratch).connect(Store.RECALL) as conn,  # the recall schema, migrated
    ):
        with transaction(conn):
            rebuild_docs(conn, docs)
        update_vectors(conn, embedder, progress=progress)
        results = evaluate_searcher(Searcher(conn, embedder), queries, qrels)
    results["queries"]["documents"] = len(docs)
    return results


def sample_questions(path: str | Path = QUESTIONS) -> tuple[dict[str, str], dict]:
    """The sample vault's questions: (id -> question, id -> {page title: 1})."""
    queries, qrels = {}, {}
    with Path(path).open(encoding="utf-8") as lines:
        for i, row in enumerate(map(json.loads, filter(str.strip, lines)), start=1):
            queries[str(i)] = row["question"]
            qrels[str(i)] = {title: 1 for title in row["pages"]}
    return queries, qrels


def evaluate_recall(conn: sqlite3.Connection, embedder, path: str | Path = QUESTIONS) -> dict:
    queries, qrels = sample_questions(path)
    return evaluate_searcher(Searcher(conn, embedder), queries, qrels)


def render(results: dict) -> str:
    lines = [f"{'mode':<9} {'nDCG@10':>8} {'Recall@100':>11}"]
    for mode in MODES:
        r = results[mode]
        lines.append(f"{mode:<9} {r['ndcg@10']:>8.3f} {r['recall@100']:>11.3f}")
    lines.append(f"({results['queries']['count']} judged queries)")
    return "\n".join(lines)
