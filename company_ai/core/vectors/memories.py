"""What goes into the vector memory, and what comes out of `similar`.

`episodes` holds one vector per episode (`episode:<id>`, the episode's content embedded);
`knowledge` one per brain fact (`fact:<day>/<key>`), decision (`decision:<day>/<key>`) and
published recall page (`page:<title>`: title, recall paragraph and observations). Pages
come from `recall.db`'s `entities`, which hold only what the vault gate let through, so no
private note can reach a vector; a page that leaves recall (its note deleted, or moved into
a private folder) loses its vector on the next `knowledge_vectors` run, whichever day.

A day's sync upserts the vectors of that day's rows and nothing else (and drops the
vectors of that day's facts and decisions that a re-synthesis removed): the episodes
recorded in the day's window (`recorded_at`), the day's facts and decisions, the pages whose
distillation was recorded in the window (`page_log`). A collection that does not exist yet,
or whose first build did not finish, is built from every row recorded by the window's end
instead: the rows the aging rule would keep live on that day, most valuable first, up
to the cap; each batch is a checkpoint, and rows already embedded with the same text are
not embedded again. Vectors already archived are left in the archive. The first build
happens once: it marks its collection complete (`build` in the collection's metadata), and
every later run, whatever its day, embeds only its day's rows. A run that finds the store
held by another writer (the first build, run by another day's job side by side) waits for
it and then does its own day; its wait is logged, never a second build.

Only the first `MAX_EMBED_CHARS` characters of a text are embedded (the offline model reads
256 tokens); an empty text gets no vector and is counted.
"""

from __future__ import annotations

import hashlib
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from company_ai.core.brain import RULE_IMPORTANCE
from company_ai.core.embedding import MINILM_NAME
from company_ai.core.store import EPISODE_TYPES, Store, Stores, table_exists
from company_ai.core.times import Day
from company_ai.core.vectors.aging import PAGE_IMPORTANCE, Signals, episode_base, select
from company_ai.core.vectors.store import (
    ARCHIVE,
    EPISODES,
    KNOWLEDGE,
    Opened,
    Vector,
    VectorStore,
    day_number,
)

MAX_EMBED_CHARS = 8000
EMBED_BATCH = 256  # texts per embedding call and per upsert: one checkpoint
PAGE_TYPES = ("person", "anchor", "thread", "context", "note")
TYPES = tuple(dict.fromkeys((*EPISODE_TYPES, *RULE_IMPORTANCE, *PAGE_TYPES)))


@dataclass(frozen=True)
class Memory:
    """A row as the vector memory sees it: its vector's id, the text to embed, metadata."""

    id: str
    text: str
    meta: dict[str, Any]

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:32]


def _meta(kind: str, ref: str, day: str, type_: str, base: int, **more: Any) -> dict[str, Any]:
    meta = {"kind": kind, "ref": ref, "day": day, "day_num": day_number(day), "type": type_}
    meta |= {"base": base, "importance": base}
    return meta | {k: v for k, v in more.items() if v is not None}


def _outreach_message(natural_key: str) -> int | None:
    prefix = "outreach:message:"
    tail = natural_key[len(prefix) :] if natural_key.startswith(prefix) else ""
    return int(tail) if tail.isdigit() else None


_EPISODE_COLUMNS = "id, contact_id, episode_type, source, confidence, day, natural_key"


def _episode_memory(row: sqlite3.Row, content: str) -> Memory:
    meta = _meta(
        "episode",
        f"memory.contact_episodes:{row['id']}",
        row["day"],
        row["episode_type"],
        episode_base(row["episode_type"], row["source"], row["confidence"]),
        contact_id=row["contact_id"],
        source=row["source"],
        confidence=row["confidence"],
        message_id=_outreach_message(row["natural_key"]),
    )
    return Memory(f"episode:{row['id']}", content[:MAX_EMBED_CHARS], meta)


def episode_memories(memory: sqlite3.Connection, where: str, args: Sequence[Any]) -> list[Memory]:
    rows = memory.execute(
        f"SELECT {_EPISODE_COLUMNS}, substr(content, 1, {MAX_EMBED_CHARS}) AS content"
        f" FROM contact_episodes WHERE {where} ORDER BY id",
        tuple(args),
    ).fetchall()
    return [_episode_memory(r, r["content"]) for r in rows]


def _contact_of(about: str | None) -> int | None:
    kind, _, rest = (about or "").partition(":")
    return int(rest) if kind == "contact" and rest.isdigit() else None


def brain_memories(brain: sqlite3.Connection, where: str, args: Sequence[Any]) -> list[Memory]:
    """Facts and decisions of the days `where` selects (on `day`)."""
    found = []
    for table, kind, text in (("facts", "fact", "text"), ("decisions", "decision", "what")):
        if not table_exists(brain, table):
            continue
        for r in brain.execute(
            f"SELECT day, key, kind, about, importance, {text} AS text FROM {table}"
            f" WHERE {where} ORDER BY day, key",
            tuple(args),
        ):
            ref = f"brain.{table}:{r['day']}/{r['key']}"
            meta = _meta(
                kind, ref, r["day"], r["kind"], r["importance"], contact_id=_contact_of(r["about"])
            )
            found.append(Memory(f"{kind}:{r['day']}/{r['key']}", r["text"][:MAX_EMBED_CHARS], meta))
    return found


def page_memories(recall: sqlite3.Connection, where: str, args: Sequence[Any]) -> list[Memory]:
    """Published recall pages (the `entities` table) whose distillation `where` selects in
    `page_log` (on `recorded_at`), as they are published now."""
    if not table_exists(recall, "entities") or not table_exists(recall, "page_log"):
        return []
    found = []
    for e in recall.execute(
        "SELECT id, title, type, recall, distilled FROM entities WHERE title IN"
        f" (SELECT title FROM page_log WHERE event = 'distilled' AND {where}) ORDER BY title",
        tuple(args),
    ).fetchall():
        observations = [
            r[0]
            for r in recall.execute(
                "SELECT text FROM observations WHERE entity_id = $1 ORDER BY position", (e["id"],)
            )
        ]
        text = "\n".join([e["title"], e["recall"], *observations])[:MAX_EMBED_CHARS]
        meta = _meta(
            "page", f"recall.pages:{e['title']}", e["distilled"], e["type"], PAGE_IMPORTANCE
        )
        found.append(Memory(f"page:{e['title']}", text, meta))
    return found


def published_titles(recall: sqlite3.Connection) -> set[str]:
    if not table_exists(recall, "entities"):
        return set()
    return {r[0] for r in recall.execute("SELECT title FROM entities")}


@dataclass
class SyncResult:
    embedded: int = 0  # new or changed text, embedded and upserted
    unchanged: int = 0  # already there with the same text
    archived: int = 0  # already in the archive: left there
    empty: int = 0  # no text: no vector
    removed: int = 0  # vectors whose row is gone (or whose page left recall)
    full_build: bool = False  # built from every row up to the day
    not_kept: int = 0  # rows a full build left out (aged past the archive line, or the cap)
    notes: list[str] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        return {
            "embedded": self.embedded,
            "unchanged": self.unchanged,
            "already_archived": self.archived,
            "empty_texts": self.empty,
            "removed": self.removed,
            "full_build": self.full_build,
            "left_out_by_aging_rule": self.not_kept,
        }


def embed_into(
    store: VectorStore,
    name: str,
    memories: Sequence[Memory],
    embedder: Any,
    result: SyncResult,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Upsert `memories` into a collection, embedding only new or changed text."""
    for start in range(0, len(memories), EMBED_BATCH):
        batch = memories[start : start + EMBED_BATCH]
        ids = [m.id for m in batch]
        have = store.metadata_of(name, ids)
        archived = store.metadata_of(ARCHIVE, ids)
        todo = []
        for m in batch:
            if m.id in archived:
                result.archived += 1
            elif not m.text.strip():
                result.empty += 1
            elif have.get(m.id, {}).get("text_hash") == m.text_hash:
                result.unchanged += 1
            else:
                todo.append(m)
        if todo:
            vectors = embedder.embed([m.text for m in todo])
            store.upsert(
                name,
                [
                    Vector(m.id, v, m.meta | {"text_hash": m.text_hash})
                    for m, v in zip(todo, vectors, strict=True)
                ],
            )
            result.embedded += len(todo)
        if progress:
            progress(start + len(batch), len(memories))


def _worth_keeping(
    memories: list[Memory], signals: Signals, day: str, cap: int, result: SyncResult
) -> list[Memory]:
    """The rows the aging rule keeps live on `day`, most valuable first, at most `cap`."""
    chosen = select({m.id: m.meta for m in memories}, signals, date.fromisoformat(day), cap)
    result.not_kept = len(chosen.leave)
    by_id = {m.id: m for m in memories}
    return [by_id[i] for i in chosen.keep]


def sync_episodes(
    store: VectorStore,
    opened: Opened,
    stores: Stores,
    embedder: Any,
    day: Day,
    *,
    cap: int,
    signals: Signals,
    progress: Callable[[int, int], None] | None = None,
) -> SyncResult:
    """The `episodes` collection for `day`'s window (see the module docstring); `progress(done,
    total)` is told after each batch of rows (`core.progress.Progress`)."""
    result = SyncResult(full_build=not store.built(EPISODES))
    memory = stores.reader(Store.MEMORY)
    if memory is None:
        result.notes.append("no memory store yet: nothing to embed")
        memories: list[Memory] = []
    else:
        with closing(memory) as conn:
            if result.full_build:
                memories = episode_memories(conn, "recorded_at < $1", (day.end,))
                memories = _worth_keeping(memories, signals, day.key, cap, result)
            else:
                window = "recorded_at >= $1 AND recorded_at < $2"
                memories = episode_memories(conn, window, (day.start, day.end))
    embed_into(store, EPISODES, memories, embedder, result, progress)
    if result.full_build:
        store.mark_built(EPISODES)
    if EPISODES in opened.created:
        result.notes.append("the episodes collection did not exist: built from memory.db")
    return result


def sync_knowledge(
    store: VectorStore,
    opened: Opened,
    stores: Stores,
    embedder: Any,
    day: Day,
    *,
    cap: int,
    signals: Signals,
    progress: Callable[[int, int], None] | None = None,
) -> SyncResult:
    """The `knowledge` collection for `day`: that day's facts and decisions, the pages
    whose distillation was recorded in its window, and no vector for a page that has left
    recall."""
    result = SyncResult(full_build=not store.built(KNOWLEDGE))
    on = "day <= $1" if result.full_build else "day = $1"
    bounds: tuple[str, ...]
    if result.full_build:
        distilled, bounds = "recorded_at < $1", (day.end,)
    else:
        distilled, bounds = "recorded_at >= $1 AND recorded_at < $2", (day.start, day.end)
    memories: list[Memory] = []
    titles: set[str] = set()
    brain = stores.reader(Store.BRAIN)
    if brain is not None:
        with closing(brain) as conn:
            memories += brain_memories(conn, on, (day.key,))
    recall = stores.reader(Store.RECALL)
    if recall is not None:
        with closing(recall) as conn:
            memories += page_memories(conn, distilled, bounds)
            titles = published_titles(conn)
    if result.full_build:
        memories = _worth_keeping(memories, signals, day.key, cap, result)
    else:
        result.removed += _drop_gone_brain_rows(store, day.key, {m.id for m in memories})
    result.removed += _drop_withdrawn_pages(store, titles)
    embed_into(store, KNOWLEDGE, memories, embedder, result, progress)
    if result.full_build:
        store.mark_built(KNOWLEDGE)
    if KNOWLEDGE in opened.created:
        result.notes.append("the knowledge collection did not exist: built from brain and recall")
    return result


def _drop_gone_brain_rows(store: VectorStore, day: str, current: set[str]) -> int:
    removed = 0
    for name in (KNOWLEDGE, ARCHIVE):
        where = {"$and": [{"day_num": day_number(day)}, {"kind": {"$in": ["fact", "decision"]}}]}
        gone = [i for i in store.metadata(name, where) if i not in current]
        removed += store.delete(name, gone)
    return removed


def _drop_withdrawn_pages(store: VectorStore, titles: set[str]) -> int:
    """Delete every page vector (live or archived) whose page is no longer published."""
    removed = 0
    for name in (KNOWLEDGE, ARCHIVE):
        pages = store.metadata(name, {"kind": "page"})
        removed += store.delete(name, [i for i in pages if i.removeprefix("page:") not in titles])
    return removed


# --- the index search ------------------------------------------------------------------------
# `similar` itself is `vectors.similar` (the store's files, read without chromadb, and the
# hits grouped by line); `nearest` asks Chroma's index, for the tests and the benchmarks.


@dataclass
class Hit:
    id: str
    collection: str
    score: float  # cosine similarity, 1 = the same direction
    kind: str
    ref: str
    day: str
    type: str
    importance: int
    contact_id: int | None
    contact: str = ""  # "Name <email>", filled from crm.db
    text: str = ""  # the row's text, read from its store


def where_filter(
    *,
    contact_id: int | None = None,
    type_: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> dict[str, Any] | None:
    """Chroma's `where` for the `similar` filters (None: no filter)."""
    parts: list[dict[str, Any]] = []
    if contact_id is not None:
        parts.append({"contact_id": contact_id})
    if type_:
        if type_ not in TYPES:
            raise ValueError(f"unknown type {type_!r}; the types are {', '.join(TYPES)}")
        parts.append({"type": type_})
    if since:
        parts.append({"day_num": {"$gte": day_number(since)}})
    if until:
        parts.append({"day_num": {"$lte": day_number(until)}})
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


def names_contact(where: Mapping[str, Any]) -> bool:
    """Whether a `where_filter` result selects one contact (few vectors)."""
    return "contact_id" in where or any("contact_id" in part for part in where.get("$and", ()))


def nearest(
    store: VectorStore,
    vector: np.ndarray,
    collections: Iterable[str],
    limit: int,
    where: Mapping[str, Any] | None = None,
) -> list[Hit]:
    """The `limit` nearest memories across `collections`, best first. A filter on one
    contact is answered exactly from that contact's vectors (`VectorStore.nearest_exact`)."""
    hits = []
    for name in collections:
        found = None
        if where is not None and names_contact(where):
            found = store.nearest_exact(name, vector, limit, where)
        if found is None:
            found = store.query(name, vector, limit, where)
        for i, score, m in found:
            hits.append(
                Hit(
                    id=i,
                    collection=name,
                    score=score,
                    kind=m["kind"],
                    ref=m["ref"],
                    day=m["day"],
                    type=m["type"],
                    importance=int(m["importance"]),
                    contact_id=m.get("contact_id"),
                )
            )
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


def fill_rows(stores: Stores, hits: list[Hit]) -> None:
    """Each hit's text and contact, read from the rows it points to (read-only)."""
    readers = {d: stores.reader(d) for d in (Store.MEMORY, Store.BRAIN, Store.RECALL, Store.CRM)}
    try:
        for hit in hits:
            hit.text = _row_text(readers, hit)
            crm = readers[Store.CRM]
            if hit.contact_id is not None and crm is not None:
                row = crm.execute(
                    "SELECT name, email FROM contacts WHERE id = $1", (hit.contact_id,)
                ).fetchone()
                if row:
                    hit.contact = f"{row['name']} <{row['email']}>" if row["email"] else row["name"]
    finally:
        for conn in readers.values():
            if conn is not None:
                conn.close()


def _row_text(readers: Mapping[Store, sqlite3.Connection | None], hit: Hit) -> str:
    table, _, key = hit.ref.partition(":")
    memory, brain, recall = readers[Store.MEMORY], readers[Store.BRAIN], readers[Store.RECALL]
    row = None
    if table == "memory.contact_episodes" and memory:
        query = "SELECT content FROM contact_episodes WHERE id = $1"
        row = memory.execute(query, (int(key),)).fetchone()
    elif table in ("brain.facts", "brain.decisions") and brain:
        day, _, row_key = key.partition("/")
        query = {
            "brain.facts": "SELECT text FROM facts WHERE day = $1 AND key = $2",
            "brain.decisions": "SELECT what FROM decisions WHERE day = $1 AND key = $2",
        }[table]
        row = brain.execute(query, (day, row_key)).fetchone()
    elif table == "recall.pages" and recall:
        row = recall.execute("SELECT recall FROM entities WHERE title = $1", (key,)).fetchone()
    return row[0] if row else "(the row is no longer in its store)"


def language_note(model: str, text: str) -> str:
    """A warning when an English-only model is asked about mostly non-Latin text."""
    letters = [c for c in text if c.isalpha()]
    if model != MINILM_NAME or not letters:
        return ""
    latin = sum(1 for c in letters if unicodedata.name(c, "").startswith("LATIN"))
    if latin / len(letters) >= 0.5:
        return ""
    return (
        f"{model} is an English model: matches for text in other scripts are weak. "
        "COMPANY_AI_EMBEDDER_BACKEND=ollama (bge-m3) is multilingual; changing model needs "
        "a rebuild of the vector store."
    )
