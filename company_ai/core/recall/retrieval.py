"""Hybrid retrieval over a store's `search_*` tables: full text (FTS5's bm25; on
PostgreSQL the same formula over a tsvector, `PG_BM25`) and dense
vectors, fused by their standard scores, each ranking counting by how far its best
score stands out (`confident_fusion`).

The same code indexes the recall pages (`recall_index`) and any BEIR corpus
(`company-ai eval-retrieval`). Dense vectors live in the store beside the documents:
float32 blobs keyed by the hash of the text they embed, so an unchanged document is
never embedded twice and a rebuild of the documents is one transaction. The index
records the embedding model's name and dimension and refuses vectors from another.

The fused score orders results and nothing else: it is not a confidence, and nothing
here thresholds on it.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from company_ai.core.embedding import MINILM_NAME, query_vectors
from company_ai.core.store import transaction
from company_ai.core.store.db import dialect

RRF_K = 60  # plain RRF's constant (`rrf`), the baseline the fusion is measured against
CANDIDATES = 100  # taken from each ranking before fusion
# The rankings' scores (bm25, cosine: different scales) become standard scores over their
# candidates and are summed, each ranking weighted by its confidence (how far its best
# score stands above its candidates, in their standard deviations) to CONFIDENCE_POWER. On
# a question in another language than the documents the keyword scores are flat noise and
# the dense best stands out, so the dense ranking leads; where the model is weak and the
# words match, the keyword ranking does. Unlike ranks, scores keep how much better the
# first candidates are, so a near-perfect list is not pulled down by the other one's
# order. Chosen on half of the queries of every evaluation set, reported on the other
# half (bench_retrieval.py): it beat confidence-weighted RRF on every set.
CONFIDENCE_POWER = 1.0
# The power suits a model's score spread, so it is chosen per model on the same halves:
# for the English MiniLM every power above 0 lost (its cross-lingual scores are noise).
POWER_OF_MODEL = {MINILM_NAME: 0.0}


def fusion_power(model: str) -> float:
    """The confidence power the hybrid search fuses with, for the model of the index."""
    return POWER_OF_MODEL.get(model, CONFIDENCE_POWER)


_TERM = re.compile(r"\w+", re.UNICODE)
# Function words match nearly every document: they cost bm25 time and add no signal.
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i in is it its of on or our "
    "the their them they this to was we what when where which who whom why will with you".split()
)


class IndexModelMismatch(ValueError):
    """The index holds vectors from another embedding model."""


@dataclass(frozen=True)
class Doc:
    key: str
    title: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.body}" if self.title else self.body

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def rebuild_docs(conn: sqlite3.Connection, docs: Iterable[Doc]) -> int:
    """Replace every document and its full-text row (inside the caller's transaction)."""
    conn.execute("DELETE FROM search_docs")
    conn.executemany(
        "INSERT INTO search_docs (key, title, body, text_hash) VALUES ($1, $2, $3, $4)",
        ((d.key, d.title, d.body, d.text_hash) for d in docs),
    )
    if dialect(conn) == "sqlite":  # on Postgres a trigger keeps each row's tsvector
        conn.execute("INSERT INTO search_fts (search_fts) VALUES ('rebuild')")
    return conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]


def replace_docs(
    conn: sqlite3.Connection, docs: Iterable[tuple[Doc, str]], remove: Iterable[str] = ()
) -> int:
    """Write the given documents (each with the digest of what it was built from) and delete
    the documents keyed `remove`, with their full-text rows, inside the caller's
    transaction; every other document is left as it is. A vector no document uses any more
    is dropped. Returns how many documents' text changed."""
    changed = 0
    dropped: set[str] = set()
    docs = list(docs)
    fts = dialect(conn) == "sqlite"  # FTS5's rows follow by hand; Postgres' by trigger
    for key in [*remove, *(doc.key for doc, _ in docs)]:
        old = conn.execute(
            "SELECT id, title, body, text_hash FROM search_docs WHERE key = $1", (key,)
        ).fetchone()
        if old is None:
            continue
        if fts:
            conn.execute(
                "INSERT INTO search_fts (search_fts, rowid, title, body)"
                " VALUES ('delete', $1, $2, $3)",
                (old["id"], old["title"], old["body"]),
            )
        conn.execute("DELETE FROM search_docs WHERE id = $1", (old["id"],))
        dropped.add(old["text_hash"])
    for doc, source in docs:
        (doc_id,) = conn.execute(
            "INSERT INTO search_docs (key, title, body, text_hash, source)"
            " VALUES ($1, $2, $3, $4, $5) RETURNING id",
            (doc.key, doc.title, doc.body, doc.text_hash, source),
        ).fetchone()
        if fts:
            conn.execute(
                "INSERT INTO search_fts (rowid, title, body) VALUES ($1, $2, $3)",
                (doc_id, doc.title, doc.body),
            )
        changed += doc.text_hash not in dropped
    conn.executemany(
        "DELETE FROM search_vectors WHERE text_hash = $1"
        " AND NOT EXISTS (SELECT 1 FROM search_docs WHERE text_hash = $2)",
        [(h, h) for h in dropped],
    )
    return changed


def index_model(conn: sqlite3.Connection) -> tuple[str, int] | None:
    rows = dict(conn.execute("SELECT key, value FROM search_meta").fetchall())
    return (rows["model"], int(rows["dim"])) if "model" in rows else None


def update_vectors(
    conn: sqlite3.Connection,
    embedder,
    *,
    rebuild: bool = False,
    batch: int = 256,
    sweep: bool = True,
    progress: Callable[[int, int], None] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> int:
    """Embed every document without a vector, shortest texts first (batches of one length
    pad little), committing every `batch` (a checkpoint); returns how many were embedded.

    An index whose vectors another model made is re-embedded whole (and says so): two
    models are never mixed. `sweep` drops vectors no document uses (`replace_docs` drops
    them as it goes, so its callers need no sweep)."""
    recorded = index_model(conn)
    model = (embedder.name, embedder.dim)
    if recorded and recorded != model:
        log(
            f"the index holds {recorded[0]} ({recorded[1]}-d) vectors, not {model[0]} "
            f"({model[1]}-d): every document is embedded again with {model[0]}"
        )
    if rebuild or recorded != model:
        with transaction(conn):
            conn.execute("DELETE FROM search_vectors")
            conn.executemany(
                "INSERT INTO search_meta (key, value) VALUES ($1, $2)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [("model", model[0]), ("dim", str(model[1]))],
            )
    wanted = [
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT text_hash FROM search_docs d WHERE NOT EXISTS"
            " (SELECT 1 FROM search_vectors v WHERE v.text_hash = d.text_hash)"
        )
    ]
    missing = [
        conn.execute(
            "SELECT text_hash, title, body FROM search_docs WHERE text_hash = $1 LIMIT 1", (h,)
        ).fetchone()
        for h in wanted
    ]
    missing.sort(key=lambda r: len(r["title"]) + len(r["body"]))
    for start in range(0, len(missing), batch):
        rows = missing[start : start + batch]
        vectors = embedder.embed([Doc("", r["title"], r["body"]).text for r in rows])
        with transaction(conn):
            conn.executemany(
                "INSERT INTO search_vectors (text_hash, vector) VALUES ($1, $2)"
                " ON CONFLICT (text_hash) DO UPDATE SET vector = excluded.vector",
                [
                    (r["text_hash"], v.astype(np.float32).tobytes())
                    for r, v in zip(rows, vectors, strict=True)
                ],
            )
        if progress:
            progress(start + len(rows), len(missing))
    if sweep:
        with transaction(conn):
            conn.execute(
                "DELETE FROM search_vectors"
                " WHERE text_hash NOT IN (SELECT text_hash FROM search_docs)"
            )
    return len(missing)


def keyword_search(conn: sqlite3.Connection, query: str, limit: int = CANDIDATES) -> list[str]:
    """Document keys by bm25 (title weighted double), best first; any term may match
    (function words are dropped unless the query has nothing else)."""
    return [key for key, _ in keyword_scored(conn, query, limit)]


def keyword_scored(
    conn: sqlite3.Connection, query: str, limit: int = CANDIDATES
) -> list[tuple[str, float]]:
    """`keyword_search` with each document's bm25 score (higher is better)."""
    words = list(dict.fromkeys(t.lower() for t in _TERM.findall(query)))
    terms = [w for w in words if w not in STOPWORDS] or words
    if not terms:
        return []
    if dialect(conn) == "postgres":
        return [(row[0], float(row[1])) for row in conn.execute(PG_BM25, (terms, limit))]
    match = " OR ".join(f'"{t}"' for t in terms)
    return [
        (row[0], -row[1])
        for row in conn.execute(
            "SELECT d.key, bm25(search_fts, 2.0, 1.0) AS rank FROM search_fts f"
            " JOIN search_docs d ON d.id = f.rowid"
            " WHERE search_fts MATCH $1 ORDER BY rank LIMIT $2",
            (match, limit),
        )
    ]


# FTS5's bm25 (k1 1.2, b 0.75, title weighted 2, idf floored at 1e-6) over the tsvector
# of `search_docs` (RECALL_PG_V1), its weighted term counts (`tf`) and `search_stats`
# (RECALL_PG_V2). The terms come as one array parameter and each becomes a tsquery through
# plainto_tsquery, which reads no operators: any text is a clean query. A tsvector keeps
# at most 256 positions of a lexeme, so a very long document's counts are capped there
# (FTS5 counts them all). Double precision throughout, as FTS5 scores (numeric cost a
# third of the search at 10,000 pages).
PG_BM25 = """
WITH q AS (
    SELECT any_term(plainto_tsquery('recall.recall_text', t)) AS query,
           array_agg(DISTINCT l) AS lexemes
    FROM unnest($1::text[]) AS t,
         unnest(tsvector_to_array(to_tsvector('recall.recall_text', t))) AS l
),
stats AS (SELECT docs::float8 AS n, doc_len_sum::float8 / greatest(docs, 1) AS avgdl
           FROM search_stats),
hits AS (SELECT d.id, d.key, d.doc_len, d.tf FROM search_docs d, q WHERE d.tsv @@ q.query),
tf AS (
    SELECT h.id, l AS lexeme, (h.tf ->> l)::float8 AS f
    FROM hits h, q, unnest(q.lexemes) AS l WHERE h.tf ->> l IS NOT NULL
),
df AS (SELECT lexeme, count(*)::float8 AS n FROM tf GROUP BY lexeme)
SELECT h.key, sum(
    greatest(ln((s.n - df.n + 0.5) / (df.n + 0.5)), 1e-6)
    * tf.f * 2.2 / (tf.f + 1.2 * (0.25 + 0.75 * h.doc_len / greatest(s.avgdl, 1)))
) AS score
FROM tf JOIN df USING (lexeme) JOIN hits h ON h.id = tf.id, stats s
GROUP BY h.id, h.key ORDER BY score DESC, h.id LIMIT $2
"""


class DenseIndex:
    """The index's vectors as one matrix, loaded once; exact cosine search."""

    def __init__(self, conn: sqlite3.Connection):
        rows = conn.execute(
            "SELECT d.key, v.vector FROM search_docs d"
            " JOIN search_vectors v ON v.text_hash = d.text_hash ORDER BY d.id"
        ).fetchall()
        self.model = index_model(conn)
        self.keys = [r[0] for r in rows]
        dim = self.model[1] if self.model else 0
        blob = b"".join(r[1] for r in rows)
        self.matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim)

    def search(self, query_vector: np.ndarray, limit: int = CANDIDATES) -> list[str]:
        return [key for key, _ in self.scored(query_vector, limit)]

    def scored(self, query_vector: np.ndarray, limit: int = CANDIDATES) -> list[tuple[str, float]]:
        """The nearest documents' keys with their cosine, best first."""
        if not self.keys:
            return []
        scores = self.matrix @ query_vector
        top = min(limit, len(scores))
        best = np.argpartition(-scores, top - 1)[:top]
        return [
            (self.keys[i], float(scores[i])) for i in best[np.argsort(-scores[best], kind="stable")]
        ]


def rrf(rankings: Iterable[list[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion: sum of 1/(k + rank) over the rankings; ties by first seen."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: -scores[key])


class WarmIndex:
    """The dense matrix of the index in one SQLite store, kept between searches while the
    store's files are unchanged: for a long-running reader (the MCP server), which would
    otherwise read every vector again for each question. Thread-safe."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._state: tuple | None = None
        self._dense: DenseIndex | None = None

    def _files(self) -> tuple:
        # A commit changes the -wal, a checkpoint the file itself: either reloads.
        found: list[tuple[int, int, int] | None] = []
        for p in (self.path, self.path.with_name(self.path.name + "-wal")):
            try:
                info = p.stat()
                found.append((info.st_ino, info.st_size, info.st_mtime_ns))
            except FileNotFoundError:
                found.append(None)
        return tuple(found)

    def _rows(self, conn: Any) -> tuple:
        # A store on PostgreSQL has no files to watch: its rows' counts and newest row
        # versions (a write, even of the same key, makes a row with a newer xmin).
        return tuple(
            conn.execute(
                f"SELECT count(*), coalesce(max(xmin::text::bigint), 0) FROM {table}"
            ).fetchone()
            for table in ("search_docs", "search_vectors", "search_meta")
        )

    def dense(self, conn: sqlite3.Connection) -> DenseIndex:
        """The matrix as `conn` reads it, reused while the store stays as it was."""
        with self._lock:
            # Taken before reading: a change meanwhile reloads next time.
            state = self._rows(conn) if dialect(conn) == "postgres" else self._files()
            if self._dense is None or state != self._state:
                self._dense, self._state = DenseIndex(conn), state
            return self._dense


def confidence(scores: list[float]) -> float:
    """How far the best of `scores` (best first) stands above all of them, in standard
    deviations; 0 for fewer than two or all equal."""
    if len(scores) < 2:
        return 0.0
    spread = float(np.std(scores))
    return (scores[0] - float(np.mean(scores))) / spread if spread > 1e-9 else 0.0


def standard_scores(ranking: list[tuple[str, float]]) -> dict[str, float]:
    """Each key's score in standard deviations from the ranking's mean; all 0 when the
    scores are equal (they say nothing about which key is better)."""
    values = np.array([score for _, score in ranking], dtype=np.float64)
    spread = float(values.std()) if len(values) else 0.0
    if spread <= 1e-9:
        return {key: 0.0 for key, _ in ranking}
    mean = float(values.mean())
    return {key: (score - mean) / spread for key, score in ranking}


def confident_fusion(
    rankings: list[list[tuple[str, float]]], *, power: float = CONFIDENCE_POWER
) -> list[str]:
    """The keys of (key, score) rankings, best first, by the sum of their standard
    scores, each ranking weighted by its `confidence` to the `power` (weights summing to
    one; equal when none stands out). A key missing from a ranking takes its lowest
    standard score: it ranked below every candidate there. Ties keep first-seen order."""
    weights = [confidence([score for _, score in r]) ** power if power else 1.0 for r in rankings]
    total = sum(weights)
    weights = [w / total for w in weights] if total > 0 else [1.0] * len(rankings)
    scored = [
        (w, z, min(z.values(), default=0.0))
        for w, z in zip(weights, map(standard_scores, rankings), strict=True)
    ]
    keys = dict.fromkeys(key for ranking in rankings for key, _ in ranking)
    scores = {key: sum(w * z.get(key, floor) for w, z, floor in scored) for key in keys}
    return sorted(keys, key=lambda key: -scores[key])


class Searcher:
    """Keyword, dense and hybrid search over one index, with the query embedder checked
    against the model the index was built with. `dense`: a matrix already loaded."""

    def __init__(self, conn: sqlite3.Connection, embedder, dense: DenseIndex | None = None):
        self.conn = conn
        self.embedder = embedder
        self.dense = dense if dense is not None else DenseIndex(conn)
        if self.dense.model and self.dense.model != (embedder.name, embedder.dim):
            raise IndexModelMismatch(
                f"the index was built with {self.dense.model[0]}, the query embedder is "
                f"{embedder.name}: use the same model"
            )

    def keyword(self, query: str, limit: int = CANDIDATES) -> list[str]:
        return keyword_search(self.conn, query, limit)

    def dense_only(self, query: str, limit: int = CANDIDATES) -> list[str]:
        return [key for key, _ in self.dense_scored(query, limit)]

    def dense_scored(self, query: str, limit: int = CANDIDATES) -> list[tuple[str, float]]:
        return self.dense.scored(query_vectors(self.embedder, [query])[0], limit)

    def hybrid(self, query: str, limit: int = CANDIDATES) -> list[str]:
        keyword = keyword_scored(self.conn, query, CANDIDATES)
        dense = self.dense_scored(query, CANDIDATES)
        fused = confident_fusion([keyword, dense], power=fusion_power(self.embedder.name))
        return fused[:limit]
