"""`similar`: the memories nearest to a text, one line per text.

`find_similar` is the whole search, for the CLI and for a warm caller (the MCP server):
the query embedded by the embedder that made the collections (through its interface), the
vectors scored exactly from the store's own files (`reader`: no chromadb; Chroma's index
only for a collection over `SCAN_MAX` vectors, or files this reader does not know), the
filters applied, and the hits grouped by text.

A group is one line of text however many memories hold it: the same note on forty
episodes, or the same reply to forty messages ("Not now" to message 311, to message 905…):
texts are the same line when they differ only in spacing, case, the numbers in them and
the name of the contact they are about ("Call with Dennis: budget sits with the CFO role").
Its score is its best member's; it carries its count, its days (first and last) and its
contacts, and each member's provenance. The count is taken among the nearest
`window` memories (at least `WINDOW` of them, or `WINDOW_PER_GROUP` a group asked for, more
while fewer than `limit` lines were found), which the result says.

Read-only: the store is read under its shared lock, the source rows (`memory.db`,
`brain.db`, `recall.db`, `crm.db`) through read-only connections.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from company_ai.core.embedding import TextEmbedder, embedder_for, query_vectors
from company_ai.core.store import Parameters, Store, Stores
from company_ai.core.terminal import shorten
from company_ai.core.vectors.reader import SCAN_MAX, StoreReader, UnreadableStore, best
from company_ai.core.vectors.store import LIVE, VectorStoreError, day_number, vectors_dir

MAX_QUERY_CHARS = 8000  # as `memories.MAX_EMBED_CHARS`: the model reads no more
WINDOW = 200  # nearest memories a grouping looks through, at least
WINDOW_PER_GROUP = 20
FEW_DAYS = 3  # a group on at most this many days lists them; more: first – last
_NUMBERS = re.compile(r"\d+")
_READERS: dict[Path, StoreReader] = {}  # one per store per process: a warm caller's cache
# The rows' texts and contacts a warm caller has read, per store, kept while the vectors
# are unchanged: a forget erases vectors (and so drops these), and a new text is embedded.
_KEPT_ROWS: dict[Path, tuple[tuple[Any, ...], _Rows]] = {}
KEPT_TEXTS = 200_000


class VectorModelMismatch(VectorStoreError):
    """A query embedded by another model than the one that made the store."""


@dataclass(frozen=True)
class Member:
    """One memory of a group, and where it came from."""

    collection: str
    id: str
    ref: str  # the row it points to, e.g. memory.contact_episodes:17168
    day: str
    kind: str  # episode, fact, decision, page
    type: str
    score: float  # cosine similarity, 1 = the same direction
    importance: int
    contact_id: int | None
    contact: str  # "Name <email>", or ""
    text: str  # this member's own text (a group's members may differ in numbers)


@dataclass(frozen=True)
class Group:
    """One line of text and every memory among the window that holds it."""

    text: str  # the best member's text
    score: float  # the best member's
    count: int
    first_day: str
    last_day: str
    days: tuple[str, ...]  # distinct days, in order
    contacts: tuple[str, ...]  # distinct contacts, in order of the members' scores
    kinds: tuple[str, ...]  # distinct "kind type", e.g. "episode response"
    members: tuple[Member, ...]  # best first

    def when(self) -> str:
        if len(self.days) <= FEW_DAYS:
            return ", ".join(self.days)
        return f"{self.first_day} – {self.last_day}"


@dataclass(frozen=True)
class Similar:
    query: str
    model: str
    note: str  # a warning about the model and the query's language, or ""
    groups: tuple[Group, ...]
    window: int  # how many nearest memories the groups were counted among
    searched: tuple[str, ...]  # the collections searched
    exact: bool  # True: every vector scored from the files; False: Chroma's index answered

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Filters:
    """The `similar` filters; `contact_id` is the CRM's id (find it with `find_contact`)."""

    contact_id: int | None = None
    type_: str | None = None
    since: str | None = None  # YYYY-MM-DD, inclusive
    until: str | None = None

    def check(self) -> None:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"--since {self.since} is after --until {self.until}")
        if self.type_:
            from company_ai.core.vectors.memories import TYPES

            if self.type_ not in TYPES:
                raise ValueError(f"unknown type {self.type_!r}; the types are {', '.join(TYPES)}")

    def parts(self) -> list[tuple[str, str, Any]]:
        """(metadata key, comparison, value) for the reader."""
        found: list[tuple[str, str, Any]] = []
        if self.contact_id is not None:
            found.append(("contact_id", "=", int(self.contact_id)))
        if self.type_:
            found.append(("type", "=", self.type_))
        if self.since:
            found.append(("day_num", ">=", day_number(self.since)))
        if self.until:
            found.append(("day_num", "<=", day_number(self.until)))
        return found

    def chroma_where(self) -> dict[str, Any] | None:
        ops = {"=": "$eq", ">=": "$gte", "<=": "$lte"}
        parts = [{k: {ops[op]: v}} for k, op, v in self.parts()]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {"$and": parts}


class EmptyStore(LookupError):
    """The vector memory has none of the collections asked for."""


@lru_cache(maxsize=65_536)  # a warm caller meets the same lines again and again
def line_key(text: str, name: str = "") -> str:
    """What makes two texts the same line: their words, ignoring spacing, case, numbers
    and the words of `name` (the contact the memory is about)."""
    key = _NUMBERS.sub("#", " ".join(text.split()).casefold())
    for word in sorted(set(name.casefold().split()), key=len, reverse=True):
        if len(word) > 1:
            key = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", "@", key)
    return key


def find_similar(
    stores: Stores,
    text: str,
    *,
    collections: Sequence[str] | None = None,
    filters: Filters = Filters(),
    limit: int = 10,
    embedder: TextEmbedder | None = None,
    ollama_host: str = "http://127.0.0.1:11434",
    chroma_copy: Callable[[], Path] | None = None,
) -> Similar:
    """The `limit` lines nearest to `text` in the vector memory of `stores`, best first.

    `collections`: "episodes", "knowledge" (default both). `embedder`: the one to embed the
    query with; by default the one that made the collections (`embedder_for` their recorded
    model; `ollama_host` for an Ollama model); one of another model is refused
    (VectorModelMismatch, which says how to rebuild), never mixed. Raises ValueError for a
    bad filter, EmptyStore when no collection asked for exists, VectorStoreError when the
    store cannot be read, EmbedderError when the model cannot be loaded. When the store's
    files cannot be read here, Chroma answers: on the store itself, or on the folder
    `chroma_copy` gives (a reader that must not write: Chroma writes to what it opens).
    With a Chroma server (`stores.chroma_url`) the server answers: its files are not here.
    """
    filters.check()
    if limit < 1:
        raise ValueError("limit must be at least 1")
    wanted = tuple(collections or LIVE)
    path = vectors_dir(stores.data_dir)
    url = stores.chroma_url
    reader = _READERS.setdefault(path, StoreReader(path))
    opening: Any = _ServerSnapshot.reading(path, url) if url else reader.reading()
    with opening as snapshot:
        present = snapshot.collections()
        names = tuple(n for n in wanted if n in present)
        if not names:
            raise EmptyStore(
                "the vector memory is empty: run the memory job (or `company-ai demo`)"
            )
        models = {present[n][1:] for n in names}
        if len(models) > 1:
            raise UnreadableStore(f"the collections {names} were made by different models")
        [(model, dim)] = models
        embedder = embedder or embedder_for(model, dim, ollama_host)
        if (embedder.name, embedder.dim) != (model, dim):
            raise VectorModelMismatch(
                f"the vector memory holds {model} ({dim}-d) vectors; a query embedded by "
                f"{embedder.name} ({embedder.dim}-d) cannot be compared with them (the next "
                "memory run rebuilds the store with the configured model)"
            )
        vector = np.asarray(query_vectors(embedder, [text[:MAX_QUERY_CHARS]])[0], np.float32)
        window = max(WINDOW, WINDOW_PER_GROUP * limit)
        read = _Rows()
        exact = not url and all(snapshot.count(present[n][0]) <= SCAN_MAX for n in names)
        if exact:
            try:
                read = _kept_rows(path, tuple(snapshot.load(n).signature for n in names))
            except UnreadableStore:
                exact = False
        while True:
            try:
                found = _nearest_exact(snapshot, names, vector, window, filters) if exact else None
            except UnreadableStore:
                found = None
            if found is None:
                exact = False
                found = _nearest_chroma(
                    chroma_copy() if chroma_copy and not url else path,
                    names,
                    vector,
                    window,
                    filters,
                    url,
                )
            lines = _lines(found, _rows(stores, found, read))
            if len(lines) >= limit or len(found) < window:
                break
            window *= 4  # too few lines among the window: look further
    groups = _groups(found, lines, limit, read)
    from company_ai.core.vectors.memories import language_note

    return Similar(
        query=text,
        model=model,
        note=language_note(model, text),
        groups=tuple(groups),
        window=window,
        searched=names,
        exact=exact,
    )


_Found = list[tuple[float, str, str, Mapping[str, Any]]]  # (score, collection, id, metadata)


def _nearest_exact(
    snapshot: Any, names: Sequence[str], vector: np.ndarray, window: int, filters: Filters
) -> _Found:
    found: _Found = []
    for name in names:
        loaded = snapshot.load(name)
        top = best(loaded, vector, window, snapshot.allowed(loaded, filters.parts()))
        metas = snapshot.metadata(loaded, [i for i, _ in top])
        found += [(score, name, i, metas[i]) for i, score in top]
    return _ordered(found, window)


def _nearest_chroma(
    path: Path,
    names: Sequence[str],
    vector: np.ndarray,
    window: int,
    filters: Filters,
    url: str = "",
) -> _Found:
    """Chroma's index answers: a collection too large to scan, files not read here, or a
    store on a server. Opened without the shared lock `reading` holds already (flock: one
    per process)."""
    from company_ai.core.vectors.store import _open_existing

    where = filters.chroma_where()
    found: _Found = []
    with _open_existing(path, url) as store:
        for name in names:
            hits = None
            if filters.contact_id is not None:
                hits = store.nearest_exact(name, vector, window, where or {})
            if hits is None:
                hits = store.query(name, vector, window, where)
            found += [(score, name, i, m) for i, score, m in hits]
    return _ordered(found, window)


class _ServerSnapshot:
    """What `find_similar` asks of a snapshot, answered by a Chroma server: the
    collections and their models (the vectors are then searched on the server)."""

    def __init__(self, found: dict[str, tuple[str, str, int]]):
        self._found = found

    @classmethod
    @contextmanager
    def reading(cls, path: Path, url: str) -> Iterator[_ServerSnapshot]:
        from company_ai.core.vectors.store import _open_existing

        with _open_existing(path, url) as store:
            found = {n: (n, *store.model(n)) for n in store._collections}
        yield cls(found)

    def collections(self) -> dict[str, tuple[str, str, int]]:
        return self._found


def _ordered(found: _Found, window: int) -> _Found:
    return sorted(found, key=lambda f: (-f[0], f[2]))[:window]


MISSING = "(the row is no longer in its store)"


def _lines(found: _Found, read: _Rows) -> dict[str, list[int]]:
    """{line: positions in `found` of the memories holding it}, best line first."""
    by_line: dict[str, list[int]] = {}
    for k, (_, _, _, meta) in enumerate(found):
        person = read.contacts.get(meta.get("contact_id", -1))
        text = read.texts.get(str(meta.get("ref", "")), MISSING)
        by_line.setdefault(line_key(text, person[0] if person else ""), []).append(k)
    return by_line


def _groups(found: _Found, lines: dict[str, list[int]], limit: int, read: _Rows) -> list[Group]:
    texts, names, missing = read.texts, read.contacts, MISSING
    groups = []
    for rows in list(lines.values())[:limit]:  # dicts keep order: best line first
        members = tuple(_member(found[k], texts, names, missing) for k in rows)
        days = tuple(sorted({m.day for m in members}))
        groups.append(
            Group(
                text=members[0].text,
                score=members[0].score,
                count=len(members),
                first_day=days[0],
                last_day=days[-1],
                days=days,
                contacts=tuple(dict.fromkeys(m.contact for m in members if m.contact)),
                kinds=tuple(dict.fromkeys(f"{m.kind} {m.type}" for m in members)),
                members=members,
            )
        )
    return groups


def _member(
    found: tuple[float, str, str, Mapping[str, Any]],
    texts: Mapping[str, str],
    names: Mapping[int, tuple[str, str | None]],
    missing: str,
) -> Member:
    score, collection, id_, meta = found
    contact_id = meta.get("contact_id")
    person = names.get(contact_id if contact_id is not None else -1)
    ref = str(meta.get("ref", ""))
    return Member(
        collection=collection,
        id=id_,
        ref=ref,
        day=str(meta.get("day", "")),
        kind=str(meta.get("kind", "")),
        type=str(meta.get("type", "")),
        score=round(score, 6),
        importance=int(meta.get("importance", 0)),
        contact_id=contact_id,
        contact=_named(*person) if person else "",
        text=texts.get(ref, missing),
    )


def _kept_rows(path: Path, signature: tuple[Any, ...]) -> _Rows:
    kept = _KEPT_ROWS.get(path)
    if kept is None or kept[0] != signature or len(kept[1].texts) > KEPT_TEXTS:
        kept = _KEPT_ROWS[path] = (signature, _Rows())
    return kept[1]


def _named(name: str, email: str | None) -> str:
    return f"{name} <{email}>" if email else name


@dataclass
class _Rows:
    """What one search has read from the stores, so a wider window reads only the rest."""

    texts: dict[str, str] = field(default_factory=dict)  # ref -> text
    contacts: dict[int, tuple[str, str | None]] = field(default_factory=dict)  # (name, email)
    asked: set[str] = field(default_factory=set)  # refs looked up (found or not)
    asked_contacts: set[int] = field(default_factory=set)


def _rows(stores: Stores, found: _Found, read: _Rows) -> _Rows:
    """`read`, with the texts and contacts of what `found` points to added (read-only)."""
    refs: dict[str, list[str]] = {}
    for _, _, _, meta in found:
        ref = str(meta.get("ref", ""))
        if ref not in read.asked:
            read.asked.add(ref)
            table, _, key = ref.partition(":")
            refs.setdefault(table, []).append(key)
    texts = read.texts
    episodes = sorted({int(k) for k in refs.get("memory.contact_episodes", ()) if k.isdigit()})
    for id_, content in _select(
        stores, Store.MEMORY, "SELECT id, content FROM contact_episodes WHERE id IN", episodes
    ):
        texts[f"memory.contact_episodes:{id_}"] = content
    for table, query in (
        ("brain.facts", "SELECT text FROM facts WHERE day = $1 AND key = $2"),
        ("brain.decisions", "SELECT what FROM decisions WHERE day = $1 AND key = $2"),
    ):
        if refs.get(table):
            with _reader(stores, Store.BRAIN) as brain:
                for key in refs[table]:
                    row = (
                        brain.execute(query, key.partition("/")[::2]).fetchone() if brain else None
                    )
                    if row:
                        texts[f"{table}:{key}"] = row[0]
    if refs.get("recall.pages"):
        with _reader(stores, Store.RECALL) as recall:
            for title in refs["recall.pages"]:
                query = "SELECT recall FROM entities WHERE title = $1"
                row = recall.execute(query, (title,)).fetchone() if recall else None
                if row:
                    texts[f"recall.pages:{title}"] = row[0]
    ids = {int(m["contact_id"]) for *_, m in found if m.get("contact_id") is not None}
    ids -= read.asked_contacts
    read.asked_contacts |= ids
    query = "SELECT id, name, email FROM contacts WHERE id IN"
    for i, name, email in _select(stores, Store.CRM, query, sorted(ids)):
        read.contacts[i] = (name, email)
    return read


class _reader:
    """A read-only connection to one store, or None when it does not exist yet."""

    def __init__(self, stores: Stores, which: Store):
        self._conn = stores.reader(which)

    def __enter__(self) -> sqlite3.Connection | None:
        return self._conn

    def __exit__(self, *_: object) -> None:
        if self._conn is not None:
            self._conn.close()


def _select(stores: Stores, which: Store, query: str, ids: Sequence[int]) -> list[tuple]:
    """Rows of `query` (ending in `WHERE x IN`) for `ids`, in parts SQLite can bind."""
    rows: list[tuple] = []
    if not ids:
        return rows
    with _reader(stores, which) as conn:
        if conn is None:
            return rows
        for start in range(0, len(ids), 900):
            part = ids[start : start + 900]
            marks = Parameters().marks(part)
            rows += [tuple(r) for r in conn.execute(f"{query} ({marks})", part)]
    return rows


def render(result: Similar, width: int = 200) -> str:
    """The groups as the terminal shows them: a header line and the text, per group."""
    if not result.groups:
        return "nothing similar (try fewer filters)"
    lines = []
    for n, g in enumerate(result.groups, 1):
        first = g.members[0]
        times = f"{g.count} times  " if g.count > 1 else ""
        who = ""
        if g.contacts:
            more = len(g.contacts) - 2
            who = "  " + ", ".join(g.contacts[:2]) + (f" and {more} more" if more > 0 else "")
        refs = first.ref + (f" and {g.count - 1} more" if g.count > 1 else "")
        kinds = ", ".join(g.kinds)
        lines.append(f"{n}. {g.score:.3f}  {times}{g.when()}  {kinds}{who}  [{refs}]")
        lines.append(f"   {shorten(' '.join(g.text.split()), width)}")
    return "\n".join(lines)
