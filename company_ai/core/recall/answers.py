"""The read side of the vault: recall answers, pages and stale pages, from `recall.db`.

Assistants and people read these; nothing here writes a page. `index_entities` is the
one writer of the search tables for recall (called by the `recall_index` asset).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from company_ai.core.recall.retrieval import (
    Doc,
    Searcher,
    WarmIndex,
    index_model,
    replace_docs,
    update_vectors,
)
from company_ai.core.store import Parameters, Store, Stores, transaction
from company_ai.core.store.db import indexed_by

STALE_CATEGORIES = ("status", "goal")  # the lines that age: a page with one is `reviewable`
PAGES_MARK, INDEX_MARK = "recall_pages", "recall_index"  # the steps in `sync_marks`


def read_mark(conn: sqlite3.Connection, step: str) -> str | None:
    """What `step` of the vault night last brought itself fully in line with (RECALL_V3)."""
    row = conn.execute("SELECT mark FROM sync_marks WHERE step = $1", (step,)).fetchone()
    return row[0] if row else None


def set_mark(conn: sqlite3.Connection, step: str, mark: str | None) -> None:
    """Record `mark` for `step` (inside the caller's transaction); None forgets it, so the
    next night compares everything."""
    conn.execute("DELETE FROM sync_marks WHERE step = $1", (step,))
    if mark is not None:
        conn.execute("INSERT INTO sync_marks (step, mark) VALUES ($1, $2)", (step, mark))


def entity_docs(conn: sqlite3.Connection, titles: list[str] | None = None) -> list[Doc]:
    """One search document per entity (or per entity titled in `titles`): its title, recall
    paragraph, observations and relations (what a question may be about)."""
    if titles is None:
        titles = [row[0] for row in conn.execute("SELECT title FROM entities ORDER BY title")]
    docs = []
    for title in titles:
        entity = conn.execute(
            "SELECT id, title, recall FROM entities WHERE title = $1", (title,)
        ).fetchone()
        observations = [
            r[0]
            for r in conn.execute(
                "SELECT text FROM observations WHERE entity_id = $1 ORDER BY position",
                (entity["id"],),
            )
        ]
        relations = [
            f"{r[0].replace('_', ' ')} {r[1]}"
            for r in conn.execute(
                "SELECT relation, target FROM relations WHERE entity_id = $1 ORDER BY rowid",
                (entity["id"],),
            )
        ]
        body = "\n".join([entity["recall"], *observations, *relations])
        docs.append(Doc(entity["title"], entity["title"], body))
    return docs


def index_entities(
    conn: sqlite3.Connection,
    embedder,
    *,
    rebuild: bool = False,
    log: Callable[[str], None] = lambda _: None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Bring the search index in line with the entities, touching only what differs: the
    documents of entities written since they were indexed (their markdown digest moved)
    are rewritten with their full-text rows, those of deleted entities removed; then what
    has no vector is embedded. An index of another model's vectors is re-embedded whole.

    An index last completed over the pages as they are now (the pages' mark) with this
    model compares nothing at all. `progress(done, total)` is told after each batch embedded."""
    pages = read_mark(conn, PAGES_MARK)
    mark = f"{pages}|{embedder.name}|{embedder.dim}" if pages and not rebuild else None
    summary = {"documents": 0, "rewritten": 0, "removed": 0, "text_changed": 0,
               "embedded": 0, "model": embedder.name, "pages_per_s": None}  # fmt: skip
    if mark and read_mark(conn, INDEX_MARK) == mark:
        summary["documents"] = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
        return summary
    by_source = indexed_by(conn, "idx_search_docs_source")
    with transaction(conn):
        set_mark(conn, INDEX_MARK, None)  # a run stopped midway leaves no mark behind
        digests = dict(
            conn.execute(
                f"SELECT e.title, e.digest FROM entities e LEFT JOIN search_docs d{by_source}"
                " ON d.key = e.title"
                " WHERE d.id IS NULL OR d.source != e.digest OR e.digest = '' ORDER BY e.title"
            ).fetchall()
        )
        stale = list(digests)
        gone = [
            row[0]
            for row in conn.execute(
                "SELECT d.key FROM search_docs d LEFT JOIN entities e ON e.title = d.key"
                " WHERE e.id IS NULL"
            )
        ]
        docs = [(doc, digests[doc.key]) for doc in entity_docs(conn, stale)]
        changed = replace_docs(conn, docs, gone)
        count = conn.execute("SELECT count(*) FROM search_docs").fetchone()[0]
    previous = index_model(conn)
    started = time.perf_counter()
    embedded = update_vectors(
        conn, embedder, rebuild=rebuild, sweep=False, log=log, progress=progress
    )
    took = time.perf_counter() - started
    with transaction(conn):
        set_mark(conn, INDEX_MARK, mark)
    summary |= {
        "documents": count,
        "rewritten": len(stale),
        "removed": len(gone),
        "text_changed": changed,
        "embedded": embedded,
        "pages_per_s": round(embedded / took, 1) if embedded else None,
    }
    if previous and previous != (embedder.name, embedder.dim):
        summary["reembedded_from"] = previous[0]
    return summary


@dataclass
class Hit:
    title: str
    type: str
    recall: str
    derived_from: str
    distilled: str
    note_touched: str
    stale: bool


@dataclass
class Answer:
    question: str
    hits: list[Hit]
    # the top hit's one-hop neighbourhood: (relation, direction, title, exists)
    neighbourhood: list[tuple[str, str, str, bool]] = field(default_factory=list)


def recall(
    conn: sqlite3.Connection,
    searcher: Searcher,
    question: str,
    *,
    now: datetime,
    max_age_days: int,
    limit: int = 5,
) -> Answer:
    titles = searcher.hybrid(question, limit)
    stale = {p.title for p in stale_pages(conn, now, max_age_days, titles=titles)}
    hits = []
    for title in titles:
        row = conn.execute("SELECT * FROM entities WHERE title = $1", (title,)).fetchone()
        if row:  # the index may trail the entities by one asset; skip what is gone
            hits.append(
                Hit(row["title"], row["type"], row["recall"], row["derived_from"],
                    row["distilled"], row["note_touched"], row["title"] in stale)
            )  # fmt: skip
    answer = Answer(question, hits)
    if hits:
        answer.neighbourhood = neighbourhood(conn, hits[0].title)
    return answer


class EmptyIndexError(RuntimeError):
    """The recall index has not been built yet; the message says what builds it."""


def open_searcher(
    conn: sqlite3.Connection, ollama_host: str, warm: WarmIndex | None = None
) -> Searcher:
    """A searcher over the index with the embedder it was built with (`warm`: the dense
    matrix kept between calls by a long-running reader)."""
    from company_ai.core.embedding import embedder_for  # numpy and the model: only here

    model = index_model(conn)
    if model is None:
        raise EmptyIndexError("the recall index is empty: run the vault job (or `company-ai demo`)")
    dense = warm.dense(conn) if warm is not None else None
    return Searcher(conn, embedder_for(*model, ollama_host), dense)


def ask(
    stores: Stores,
    question: str,
    *,
    now: datetime,
    max_age_days: int,
    ollama_host: str,
    limit: int = 5,
    warm: WarmIndex | None = None,
) -> Answer:
    """`recall` over the recall store, read-only (`company-ai recall`, the MCP server)."""
    with stores.connect(Store.RECALL, readonly=True) as conn:
        searcher = open_searcher(conn, ollama_host, warm)
        return recall(conn, searcher, question, now=now, max_age_days=max_age_days, limit=limit)


def neighbourhood(conn: sqlite3.Connection, title: str) -> list[tuple[str, str, str, bool]]:
    """One hop from `title`: its relations out, and the entities that relate to it."""
    out = conn.execute(
        "SELECT r.relation, r.target, t.id IS NOT NULL FROM relations r"
        " JOIN entities e ON e.id = r.entity_id LEFT JOIN entities t ON t.title = r.target"
        " WHERE e.title = $1 ORDER BY r.rowid",
        (title,),
    ).fetchall()
    into = conn.execute(
        "SELECT r.relation, e.title FROM relations r JOIN entities e ON e.id = r.entity_id"
        " WHERE r.target = $1 ORDER BY e.title",
        (title,),
    ).fetchall()
    return [(rel, "out", other, bool(exists)) for rel, other, exists in out] + [
        (rel, "in", other, True) for rel, other in into
    ]


def render_answer(answer: Answer) -> str:
    if not answer.hits:
        return f"Nothing in recall matches {answer.question!r}."
    lines = []
    for i, hit in enumerate(answer.hits, start=1):
        mark = "  [STALE: review]" if hit.stale else ""
        lines.append(f"{i}. {hit.title} ({hit.type}), as of {hit.distilled}{mark}")
        lines.append(f"   {hit.recall}")
        lines.append(f"   derived from: {hit.derived_from} (note touched {hit.note_touched})")
    top = answer.hits[0].title
    lines.append("")
    lines.append(f"Around {top}:")
    for relation, direction, other, exists in answer.neighbourhood or []:
        arrow = f"{top} {relation} {other}" if direction == "out" else f"{other} {relation} {top}"
        lines.append(f"  - {arrow}{'' if exists else ' (no page yet)'}")
    if not answer.neighbourhood:
        lines.append("  (no relations)")
    return "\n".join(lines)


def page_markdown(conn: sqlite3.Connection, title: str) -> str:
    row = conn.execute(
        # lower(): ASCII on SQLite as NOCASE was, every script on PostgreSQL.
        "SELECT markdown FROM entities WHERE lower(title) = lower($1)",
        (title,),
    ).fetchone()
    if row is None:
        raise LookupError(f"no recall page titled {title!r}")
    return row[0]


_STALE = "FROM entities e WHERE e.reviewable = 1 AND e.note_touched < $1"


def count_stale(conn: sqlite3.Connection, now: datetime, max_age_days: int) -> int:
    """How many pages `stale_pages` would list."""
    cutoff = (now.date() - timedelta(days=max_age_days)).isoformat()
    return conn.execute(f"SELECT count(*) {_STALE}", (cutoff,)).fetchone()[0]


@dataclass
class StalePage:
    title: str
    derived_from: str
    note_touched: str
    age_days: int
    observations: list[tuple[str, str]]  # (category, text) of the status/goal lines


def stale_pages(
    conn: sqlite3.Connection,
    now: datetime,
    max_age_days: int,
    *,
    titles: list[str] | None = None,
    limit: int | None = None,
) -> list[StalePage]:
    """Pages whose status or goal observations come from a note untouched for longer than
    `max_age_days` (a note that stopped being true is never re-staged, so it never
    changes on its own): the oldest first, for review in the morning brief. `titles`
    limits the look to those pages, `limit` the number listed."""
    today = now.date()
    cutoff = (today - timedelta(days=max_age_days)).isoformat()
    args = Parameters([cutoff])  # _STALE's $1
    only = f" AND e.title IN ({args.marks(titles)})" if titles is not None else ""
    most = "" if limit is None else f" LIMIT {args.mark(limit)}"
    found = []
    for row in conn.execute(
        f"SELECT e.id, e.title, e.derived_from, e.note_touched {_STALE}{only}"
        f" ORDER BY e.note_touched, e.title{most}",
        args,
    ):
        age = (today - date.fromisoformat(row["note_touched"])).days
        of = Parameters([row["id"]])
        marks = conn.execute(
            "SELECT category, text FROM observations WHERE entity_id = $1 AND category IN"
            f" ({of.marks(STALE_CATEGORIES)}) ORDER BY position",
            of,
        ).fetchall()
        found.append(
                StalePage(row["title"], row["derived_from"], row["note_touched"], age,
                      [(m[0], m[1]) for m in marks])
        )  # fmt: skip
    return found


def answer_json(answer: Answer) -> str:
    return json.dumps(
        {
            "question": answer.question,
            "hits": [hit.__dict__ for hit in answer.hits],
            "neighbourhood": [
                {"relation": r, "direction": d, "title": t, "has_page": e}
                for r, d, t, e in answer.neighbourhood
            ],
        },
        ensure_ascii=False,
        indent=2,
    )
