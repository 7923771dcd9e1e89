"""The vector memory: a local, persistent ChromaDB store at `<data dir>/vectors/`.

Three collections: `episodes` (episode texts), `knowledge` (brain facts, decisions and
recall pages) and `archive` (what aging moved out of the other two). Vectors are derived,
never the system of record: each one's id and metadata point back to the row it came from
(`ref`, in the brain's source notation: `memory.contact_episodes:<id>`,
`brain.facts:<day>/<key>`, `brain.decisions:<day>/<key>`, `recall.pages:<title>`), and no
text is stored in Chroma: a reader fetches it from that row.

Every embedding comes from the project's one embedder and is handed to Chroma explicitly
(`embedding_function=None`): Chroma's own embedding function would download a model on
first use. Telemetry is off. Each collection records the model and dimension it was built
with; a builder opening it with another model removes it and embeds every row again
(`Opened.rebuilt` says so): two models are never mixed. A store that cannot be read
(deleted files, garbage in its SQLite or index files) is removed by `open_store` and
reported, so the builders fill it again from the stores.

Chroma's local store is not safe for two processes at once (runs of the same job for
several days go side by side, and `similar` may be asked meanwhile), so every opening
holds a file lock beside the store (`.vectors.lock`): exclusive for the writers, shared for
a reader, which waits at most `READ_WAIT_S` for a writer to finish.

Chroma keeps one shared system per path per process; `open_store` clears that cache on the
way in and out, so a store deleted or replaced between two runs in one process (the tests,
the demo) is never served from memory.

With a server URL (`COMPANY_AI_CHROMA_URL`, `url=` here) the same collections live on a
Chroma server (`vectors.server`): the client talks HTTP, nothing of Chroma's is written
under `path` (only the lock, which still orders this host's writers and readers), a server
that cannot be reached is an error (never taken for damage: nothing is removed), and a
`rebuild` or a change of model deletes the server's collections instead of the folder.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pickle
import shutil
import sqlite3
import struct
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from company_ai.core.files import write_atomic
from company_ai.core.vectors.errors import VectorStoreError

EPISODES, KNOWLEDGE, ARCHIVE = "episodes", "knowledge", "archive"
LIVE = (EPISODES, KNOWLEDGE)
COLLECTIONS = (*LIVE, ARCHIVE)
VECTORS_DIR = "vectors"
COMPLETE = "complete"  # a collection's `build` once every row it should hold is in it
PARTIAL = "partial"  # created, its first full build not finished: the next run resumes it
# The index (BENCHMARKS.md, issue 10): cosine distance. ef_construction 100 (was 200) cuts
# the build's CPU by 40%; ef_search 400 (was 200) brings recall@10 at 1M back over 0.95
# (0.97; 0.91-0.94 with 200), still ~5 ms a query.
# Chroma fixes ef_construction and max_neighbors when a collection is created; a collection
# built with other values keeps them (its answers are as good), while ef_search, a query
# setting, is brought to this value when the store is opened.
HNSW = {"space": "cosine", "ef_construction": 100, "ef_search": 400, "max_neighbors": 16}
PAGE = 5000  # ids per Chroma write (its own limit is 5,461 per batch)
READ_WAIT_S = 30.0  # how long `similar` waits for a writer to finish
READ_PAGE = 20_000  # rows per metadata read (Chroma binds one SQL variable per row: < 32,766)
# A filter that selects at most this many vectors (one contact's memories) is answered by
# scoring them exactly: Chroma's index searched with a small allowed set wanders the graph
# (1.8 s at 745,000 vectors), while reading and scoring a few thousand takes milliseconds.
EXACT_MAX = 20_000
# Chroma writes a collection's index files only once this many changes have gathered since
# it loaded them (its default); until then the changes live in its log.
SYNC_THRESHOLD = 1000
ERASING = ".erasing.json"  # the labels an `erase` is removing, until it has zeroed them


def vectors_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / VECTORS_DIR


def day_number(day: str) -> int:
    """2026-11-30 -> 20261130: Chroma compares numbers, not strings, in `$gte`/`$lte`."""
    return int(day.replace("-", ""))


@dataclass(frozen=True)
class Vector:
    """One memory as stored: id, embedding and metadata (no text)."""

    id: str
    embedding: np.ndarray
    meta: Mapping[str, Any]


@dataclass
class Opened:
    """What `open_store` found: collections it had to create, and why it rebuilt, if it did."""

    created: set[str] = field(default_factory=set)
    rebuilt: str = ""  # empty, or why the store was removed and is being rebuilt
    waited_s: float = 0.0  # how long another writer (a cold build, say) kept it locked


class VectorStore:
    """An open store. Use `open_store` (writers) or `open_existing` (readers, aging)."""

    def __init__(self, path: Path, client: Any, url: str = ""):
        self.path = path
        self.url = url
        self._client = client
        self._collections: dict[str, Any] = {}

    def has(self, name: str) -> bool:
        return name in self._collections

    def model(self, name: str) -> tuple[str, int]:
        meta = self._collections[name].metadata or {}
        return str(meta.get("model", "?")), int(meta.get("dim", 0))

    def built(self, name: str) -> bool:
        return (self._collections[name].metadata or {}).get("build") == COMPLETE

    def mark_built(self, name: str) -> None:
        collection = self._collections[name]
        collection.modify(metadata={**(collection.metadata or {}), "build": COMPLETE})

    def settings(self) -> dict[str, Any]:
        """What the store was opened with: telemetry, and each collection's embedding
        function (None: every embedding is handed over by the caller)."""
        functions = {n: c._embedding_function for n, c in self._collections.items()}
        telemetry = self._client.get_settings().anonymized_telemetry
        return {"telemetry": telemetry, "embedding_functions": functions}

    def count(self, name: str) -> int:
        return self._collections[name].count() if name in self._collections else 0

    def upsert(self, name: str, vectors: Sequence[Vector]) -> None:
        collection = self._collections[name]
        for start in range(0, len(vectors), PAGE):
            part = vectors[start : start + PAGE]
            collection.upsert(
                ids=[v.id for v in part],
                embeddings=np.stack([v.embedding for v in part]).astype(np.float32),
                metadatas=[dict(v.meta) for v in part],
            )

    def update_metadata(self, name: str, metas: Mapping[str, Mapping[str, Any]]) -> None:
        collection, ids = self._collections[name], list(metas)
        for start in range(0, len(ids), PAGE):
            part = ids[start : start + PAGE]
            collection.update(ids=part, metadatas=[dict(metas[i]) for i in part])

    def delete(self, name: str, ids: Iterable[str]) -> int:
        ids = list(ids)
        for start in range(0, len(ids), PAGE):
            self._collections[name].delete(ids=ids[start : start + PAGE])
        return len(ids)

    def metadata(
        self, name: str, where: Mapping[str, Any] | None = None
    ) -> dict[str, dict[str, Any]]:
        """{id: metadata} of every vector in a collection (or those matching `where`)."""
        if name not in self._collections:
            return {}
        found: dict[str, dict[str, Any]] = {}
        collection, offset = self._collections[name], 0
        while True:
            got = collection.get(
                where=dict(where) if where else None,
                include=["metadatas"],
                limit=READ_PAGE,
                offset=offset,
            )
            found.update(zip(got["ids"], got["metadatas"], strict=True))
            if len(got["ids"]) < READ_PAGE:
                return found
            offset += len(got["ids"])

    def metadata_of(self, name: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """{id: metadata} of those of `ids` that the collection holds."""
        if name not in self._collections or not ids:
            return {}
        got = self._collections[name].get(ids=list(ids), include=["metadatas"])
        return dict(zip(got["ids"], got["metadatas"], strict=True))

    def vectors(self, name: str, ids: Sequence[str]) -> list[Vector]:
        out = []
        for start in range(0, len(ids), PAGE):
            got = self._collections[name].get(
                ids=list(ids[start : start + PAGE]), include=["embeddings", "metadatas"]
            )
            out += [
                Vector(i, np.asarray(e, dtype=np.float32), m)
                for i, e, m in zip(got["ids"], got["embeddings"], got["metadatas"], strict=True)
            ]
        return out

    def query(
        self, name: str, vector: np.ndarray, limit: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float, dict[str, Any]]]:
        """The `limit` nearest (id, cosine similarity, metadata), best first."""
        collection = self._collections.get(name)
        if collection is None or limit < 1:
            return []
        got = collection.query(
            query_embeddings=np.asarray(vector, dtype=np.float32).reshape(1, -1),
            n_results=limit,
            where=dict(where) if where else None,
            include=["metadatas", "distances"],
        )
        return [
            (i, 1.0 - float(d), m)
            for i, d, m in zip(got["ids"][0], got["distances"][0], got["metadatas"][0], strict=True)
        ]

    def nearest_exact(
        self, name: str, vector: np.ndarray, limit: int, where: Mapping[str, Any]
    ) -> list[tuple[str, float, dict[str, Any]]] | None:
        """Like `query`, but over every vector `where` selects, scored exactly (cosine);
        None when more than `EXACT_MAX` match (the index is then the faster way)."""
        collection = self._collections.get(name)
        if collection is None or limit < 1:
            return []
        got = collection.get(
            where=dict(where), include=["embeddings", "metadatas"], limit=EXACT_MAX + 1
        )
        if len(got["ids"]) > EXACT_MAX:
            return None
        if not got["ids"]:
            return []
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        scores = (matrix @ query) / np.where(norms > 0, norms, 1.0)
        best = np.lexsort((np.array(got["ids"]), -scores))[:limit]  # ties: by id
        return [(got["ids"][k], float(scores[k]), got["metadatas"][k]) for k in best]

    def index_settings(self, name: str) -> dict[str, Any]:
        """The collection's HNSW settings as Chroma holds them."""
        return dict(self._collections[name].configuration_json.get("hnsw") or {})

    def _tune(self, name: str) -> None:
        """Bring a collection's mutable settings (ef_search, and the sync threshold an
        interrupted `erase` may have left at 1) to ours."""
        held = self.index_settings(name)
        wanted = {"ef_search": HNSW["ef_search"], "sync_threshold": SYNC_THRESHOLD}
        self._configure(name, **{k: v for k, v in wanted.items() if held.get(k) != v})

    def _configure(self, name: str, **hnsw: Any) -> None:
        if hnsw:
            # Chroma reads the collection's whole configuration back first and calls the
            # "embedding function: none" it finds there legacy; the value is still set.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                self._collections[name].modify(configuration={"hnsw": hnsw})

    def probe(self) -> None:
        """Read every collection's index once, so a damaged file fails here, not mid-run."""
        for collection in self._collections.values():
            if collection.count():
                dim = int((collection.metadata or {}).get("dim", 0))
                collection.get(limit=1, include=["metadatas"])
                if dim > 0:
                    probe = np.zeros((1, dim), dtype=np.float32)
                    probe[0, 0] = 1.0
                    collection.query(query_embeddings=probe, n_results=1, include=["distances"])


def erase(
    path: Path, select: Callable[[VectorStore], Mapping[str, Iterable[str]]], *, url: str = ""
) -> dict[str, list[str]]:
    """Remove vectors for good (`forget`); `select` names them, by collection, in the open
    store. Returns what it removed.

    Chroma's delete only marks a vector in the index, and below its sync threshold not even
    that reaches the files (the change waits in its log, which `forget` then purges, so the
    vector would come back). So the collections are opened again with threshold 1: opening
    writes every waiting change to the files (the id map then knows each vector's label), and
    the deletion goes there at once; the removed embeddings are then zeroed in the files.
    Raises VectorStoreError when the files still hold any of them.
    """
    if url:
        return _erase_on_server(path, url, select)
    with _locked(path, exclusive=True):
        _finish_erasing(path)
        with _open_existing(path) as store:
            chosen = {name: sorted(set(ids)) for name, ids in select(store).items()}
            doomed = {name: ids for name, ids in chosen.items() if ids}
            for name in doomed:
                store._configure(name, sync_threshold=1)
        segments = _segments(path)
        with _open_existing(path) as store:
            labels = {name: _labels(segments[name], ids) for name, ids in doomed.items()}
            # The labels (numbers, nothing personal) first: an erase cut short after the
            # deletion finds its vectors no more, and the next one zeroes them from here.
            held = {name: sorted(ls) for name, ls in labels.items()}
            write_atomic(path / ERASING, json.dumps(held).encode())
            for name, ids in doomed.items():
                store.delete(name, ids)
                store._configure(name, sync_threshold=SYNC_THRESHOLD)
        for name, ids in doomed.items():
            _zero_erased(segments[name], labels[name], ids)
        (path / ERASING).unlink()
    return doomed


def _erase_on_server(
    path: Path, url: str, select: Callable[[VectorStore], Mapping[str, Iterable[str]]]
) -> dict[str, list[str]]:
    """`erase` on a server: deleted through its API (its files: `scrub.scrub_files`)."""
    with _locked(path, exclusive=True), _open_existing(path, url) as store:
        chosen = {name: sorted(set(ids)) for name, ids in select(store).items()}
        doomed = {name: ids for name, ids in chosen.items() if ids}
        try:
            for name, ids in doomed.items():
                store.delete(name, ids)
        except Exception as exc:
            from company_ai.core.vectors.server import server_error

            raise VectorStoreError(
                f"{server_error(url, exc)} while deleting vectors; run it again (a delete "
                "of what is gone already is harmless)"
            ) from exc
    return doomed


def _finish_erasing(path: Path) -> None:
    """Zero what an erase cut short had deleted but not yet zeroed (see `erase`)."""
    if (path / ERASING).is_file():
        segments = _segments(path)
        for name, labels in json.loads((path / ERASING).read_text()).items():
            if name in segments:
                _zero_erased(segments[name], set(labels), (), only_deleted=True)
        (path / ERASING).unlink()


# The index files. Chroma keeps each collection's HNSW index (its fork of hnswlib) in
# `<store>/<segment id>/`: header.bin, data_level0.bin (per element: links, vector, label),
# length.bin, link_lists.bin, and the id map in index_metadata.pickle. Two things in them
# would keep what must not be kept:
# - A collection whose changes have not reached the files yet (fewer than SYNC_THRESHOLD) is
#   created afresh at every opening, readers' too, and hnswlib writes its new buffers whole
#   without clearing them: whatever the process had in that memory before (a page title, a
#   query) lands in the files. Only elements below the header's count are ever read, so
#   `_scrub` zeroes everything past them whenever a store is closed.
# - A deleted vector is only marked: its embedding stays. `erase` zeroes it.
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # hnswlib's header, persistence version 1
_DELETED = 0x01  # the mark in the third byte of an element's link-count word


@dataclass(frozen=True)
class _Layout:
    count: int  # elements in use
    size: int  # bytes per element in data_level0.bin
    vector: int  # offset of an element's vector
    label: int  # offset of its label (8 bytes, the element's last)


def _layout(segment: Path) -> _Layout | None:
    header = segment / "header.bin"
    if not header.is_file():
        return None
    raw = header.read_bytes()
    fields = _HEADER.unpack(raw) if len(raw) == _HEADER.size else (None,) * 7
    version, links_at, _capacity, count, size, label, vector = fields[:7]
    if version != 1 or links_at != 0 or not 0 < vector < label == size - 8:
        raise VectorStoreError(
            f"the index files in {segment} are not laid out as this version knows them "
            "(hnswlib persistence version 1), so they cannot be cleared of what they must "
            "not keep: check the chromadb version against uv.lock"
        )
    return _Layout(count, size, vector, label)


def _scrub(path: Path) -> None:
    """Zero every index file's bytes past its elements in use (see above)."""
    if not path.is_dir():
        return
    for segment in path.iterdir():
        layout = _layout(segment) if segment.is_dir() else None
        if layout is not None:
            _zero_from(segment / "data_level0.bin", layout.count * layout.size)
            _zero_from(segment / "length.bin", layout.count * 4)


def _zero_from(path: Path, start: int) -> None:
    if not path.is_file() or path.stat().st_size <= start:
        return
    with path.open("r+b") as f:
        f.seek(start)
        tail = f.read()
        if tail.count(0) != len(tail):
            f.seek(start)
            f.write(bytes(len(tail)))
            f.flush()
            os.fsync(f.fileno())


def _segments(path: Path) -> dict[str, Path]:
    """Each collection's index folder, from Chroma's catalogue.

    Opened for reading and writing (`mode=rw`: never created), though it only reads. A
    process killed inside a write to Chroma's SQLite (a forget, a build) leaves its rollback
    journal hot, and the next reader must roll it back first; a read-only connection cannot,
    and fails with "attempt to write a readonly database" (SQLITE_READONLY_ROLLBACK). Here
    that was fatal for good: an erase cut short reads this first (`_finish_erasing`) before
    Chroma opens the file, so every later forget failed the same way and the journal stayed.
    `erase` holds the store's exclusive lock meanwhile, and SQLite's own locks decide whether the
    journal is hot (no other writer holds the file), so the rollback undoes only the dead
    write."""
    conn = sqlite3.connect(f"file:{path / 'chroma.sqlite3'}?mode=rw", uri=True)
    try:
        rows = conn.execute(
            "SELECT c.name, s.id FROM segments s JOIN collections c ON c.id = s.collection "
            "WHERE s.scope = 'VECTOR'"
        ).fetchall()
    finally:
        conn.close()
    return {name: path / segment for name, segment in rows}


class _PlainData(pickle.Unpickler):
    """Reads Chroma's id map, which is plain data; anything else is refused, not run."""

    def find_class(self, module: str, name: str) -> Any:
        raise VectorStoreError(f"{module}.{name} in a vector index's id map: refused")


def _id_map(segment: Path) -> dict[str, int]:
    pickled = segment / "index_metadata.pickle"
    if not pickled.is_file():
        return {}
    return dict(_PlainData(io.BytesIO(pickled.read_bytes())).load().get("id_to_label") or {})


def _labels(segment: Path, ids: Sequence[str]) -> set[int]:
    known = _id_map(segment)
    return {known[i] for i in ids if i in known}


def _zero_erased(
    segment: Path, labels: set[int], ids: Sequence[str], *, only_deleted: bool = False
) -> None:
    """Zero the embeddings (and lengths) of the erased elements; check none is left
    (`only_deleted`: zero those of them marked deleted, leave the rest)."""
    if ids and set(ids) & set(_id_map(segment)):
        raise VectorStoreError(f"the index in {segment} still maps erased ids after deletion")
    layout = _layout(segment)
    if not labels or layout is None or layout.count == 0:
        return
    data = np.memmap(segment / "data_level0.bin", dtype=np.uint8, mode="r+")
    rows = data[: layout.count * layout.size].reshape(layout.count, layout.size)
    found = np.ascontiguousarray(rows[:, layout.label :]).view("<u8").ravel()
    hit = np.flatnonzero(np.isin(found, np.fromiter(labels, dtype=np.uint64)))
    if only_deleted:
        hit = hit[(rows[hit, 2] & _DELETED) != 0]
    if not (rows[hit, 2] & _DELETED).all():
        raise VectorStoreError(f"the index in {segment} holds erased vectors not marked deleted")
    _zero_rows(segment, layout, data, rows, hit)


def _zero_rows(segment: Path, layout: _Layout, data: Any, rows: Any, hit: np.ndarray) -> None:
    """Zero the embeddings and lengths of the elements `hit` of the mapped index `rows`."""
    rows[hit, layout.vector : layout.label] = 0
    data.flush()
    lengths = np.memmap(segment / "length.bin", dtype="<f4", mode="r+")
    lengths[hit] = 0
    lengths.flush()


def _client(path: Path, url: str = "") -> Any:
    if url:
        from company_ai.core.vectors.server import connect

        return connect(url)
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )


def _close(path: Path, url: str = "") -> None:
    """Every opening ends here: Chroma's clients dropped, then its index files cleared of
    what hnswlib leaves past their elements (see `_scrub`; a server's are not ours)."""
    _forget_clients()
    if not url:
        _scrub(path)


def _forget_clients() -> None:
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()


def _attach(path: Path, url: str = "") -> VectorStore:
    """Open the store and its existing collections; any Chroma error means it is damaged
    (locally; on a server `_on_server` says what failed)."""
    store = VectorStore(path, _client(path, url), url)
    if url:
        from company_ai.core.vectors.server import close

        try:
            return _collections_of(store)
        except BaseException:
            close(store._client)
            raise
    return _collections_of(store)


def _collections_of(store: VectorStore) -> VectorStore:
    names = {c.name for c in store._client.list_collections()}
    for name in COLLECTIONS:
        if name in names:
            store._collections[name] = store._client.get_collection(name, embedding_function=None)
    store.probe()
    return store


def _damage(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


@contextmanager
def _locked(
    path: Path,
    *,
    exclusive: bool,
    wait_s: float | None = None,
    waiting: Callable[[], None] | None = None,
) -> Iterator[float]:
    """Hold the store's lock: exclusive (writers: wait as long as it takes) or shared
    (readers: wait at most `wait_s`, then a clear error). `waiting` is told once when the
    lock is held by another; yields the seconds it waited."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent / f".{path.name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        started = time.monotonic()
        deadline = None if wait_s is None else started + wait_s
        told = False
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if waiting is not None and not told:
                    waiting()
                told = True
                if deadline is None:
                    fcntl.flock(fd, mode)
                    break
                if time.monotonic() > deadline:
                    raise VectorStoreError(
                        f"the vector store at {path} is being written (a memory job is "
                        f"running); waited {wait_s:.0f} s: try again in a minute"
                    ) from None
                time.sleep(0.1)
        yield time.monotonic() - started
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def open_store(
    path: Path,
    model: str,
    dim: int,
    *,
    rebuild: bool = False,
    log: Callable[[str], None] = lambda _: None,
    url: str = "",
) -> Iterator[tuple[VectorStore, Opened]]:
    """The store for the builders, with every collection made by `model` (`dim`-d).

    `rebuild` removes the store first. A store that cannot be read is removed and recreated
    (`Opened.rebuilt` says why). Collections that do not exist yet are created (their first
    build is then due: `Opened.created`). A store with a collection made by another model
    (the embedder setting changed) is removed and made again, with `Opened.rebuilt` saying
    so. With `url`, the store on that Chroma server (see the module's docstring). A store
    another writer holds (the first
    build, run by another day's job) is waited for, and `log` told so: that wait is not a
    build of this run's own (`Opened.waited_s`).
    """

    def waiting() -> None:
        log(f"the vector store at {path} is being written by another run: waiting for it")

    with _locked(path, exclusive=True, waiting=waiting) as waited:
        if waited >= 1:
            log(f"waited {waited:.0f} s for the vector store; it is this run's now")
        opening = (
            _open_server_store(path, url, model, dim, rebuild)
            if url
            else _open_store(path, model, dim, rebuild)
        )
        with opening as (store, opened):
            opened.waited_s = round(waited, 1)
            yield store, opened


@contextmanager
def _open_store(
    path: Path, model: str, dim: int, rebuild: bool
) -> Iterator[tuple[VectorStore, Opened]]:
    opened = Opened()
    _forget_clients()
    if rebuild and path.exists():
        shutil.rmtree(path)
        opened.rebuilt = "a rebuild was asked for"
    existed = path.exists()
    try:
        store = _attach(path)
    except Exception as exc:  # Chroma raises its own errors, sqlite3's and OSError
        if not existed:
            raise VectorStoreError(f"cannot create a vector store at {path}: {exc}") from exc
        _forget_clients()
        shutil.rmtree(path, ignore_errors=True)
        opened.rebuilt = f"the store at {path} could not be read ({_damage(exc)})"
        store = _attach(path)
    other = next(
        (
            (name, store.model(name))
            for name in COLLECTIONS
            if store.has(name) and store.model(name) != (model, dim)
        ),
        None,
    )
    if other is not None:
        # The embedder was changed on purpose (the setting): the store is made again with
        # it, once, from the stores; two models' vectors are never mixed in it.
        name, found = other
        _close(path)
        _forget_clients()
        shutil.rmtree(path)
        opened.rebuilt = (
            f"the {name} collection held {found[0]} ({found[1]}-d) vectors, not {model} "
            f"({dim}-d): every row is embedded again with {model}"
        )
        store = _attach(path)
    try:
        _complete(store, model, dim, opened)
        yield store, opened
    finally:
        _close(path)


def _complete(store: VectorStore, model: str, dim: int, opened: Opened) -> None:
    """Create the collections the store lacks; bring the others' settings to ours."""
    for name in COLLECTIONS:
        if store.has(name):
            store._tune(name)
        else:
            store._collections[name] = store._client.create_collection(
                name,
                embedding_function=None,
                metadata={"model": model, "dim": dim, "build": PARTIAL},
                configuration={"hnsw": HNSW},
            )
            opened.created.add(name)


@contextmanager
def _open_server_store(
    path: Path, url: str, model: str, dim: int, rebuild: bool
) -> Iterator[tuple[VectorStore, Opened]]:
    opened = Opened()
    with _on_server(url), _attached(path, url) as store:
        other = next(
            (
                (name, store.model(name))
                for name in COLLECTIONS
                if store.has(name) and store.model(name) != (model, dim)
            ),
            None,
        )
        if rebuild or other is not None:
            for name in list(store._collections):
                store._client.delete_collection(name)
            store._collections.clear()
            opened.rebuilt = "a rebuild was asked for"
            if other is not None:
                name, found = other
                opened.rebuilt = (
                    f"the {name} collection held {found[0]} ({found[1]}-d) vectors, not "
                    f"{model} ({dim}-d): every row is embedded again with {model}"
                )
        _complete(store, model, dim, opened)
        yield store, opened


@contextmanager
def _attached(path: Path, url: str) -> Iterator[VectorStore]:
    """The store on the server, its client's connections closed on the way out."""
    from company_ai.core.vectors.server import close

    store = _attach(path, url)
    try:
        yield store
    finally:
        close(store._client)


@contextmanager
def _on_server(url: str) -> Iterator[None]:
    """Any failure talking to the server (down, hung, refusing) as a VectorStoreError: a
    build cut short leaves its collection `partial`, and the next run resumes it."""
    try:
        yield
    except VectorStoreError:
        raise
    except Exception as exc:
        import httpx
        from chromadb.errors import ChromaError

        if not isinstance(exc, (httpx.HTTPError, ChromaError)):
            raise
        from company_ai.core.vectors.server import server_error

        raise VectorStoreError(server_error(url, exc)) from exc
    finally:
        _forget_clients()


@contextmanager
def open_existing(
    path: Path,
    *,
    write: bool = False,
    log: Callable[[str], None] | None = None,
    url: str = "",
) -> Iterator[VectorStore]:
    """The store as it is (for `similar`, and aging with `write`): never creates or removes
    anything, and a store that cannot be read is an error that says what rebuilds it.
    `log` is told when another writer holds the store and this opening waits for it.
    With `url`, the store on that Chroma server."""
    if not url and not (path / "chroma.sqlite3").is_file():
        raise VectorStoreError(
            f"no vector store at {path}: the memory job builds it (or run `company-ai demo`)"
        )
    wait_s = None if write else READ_WAIT_S

    def waiting() -> None:
        if log is not None:
            log(f"the vector store at {path} is being written by another run: waiting for it")

    with (
        _locked(path, exclusive=write, wait_s=wait_s, waiting=waiting),
        _open_existing(path, url) as store,
    ):
        yield store


@contextmanager
def _open_existing(path: Path, url: str = "") -> Iterator[VectorStore]:
    if url:
        with _on_server(url), _attached(path, url) as store:
            yield store
        return
    _forget_clients()
    try:
        store = _attach(path)
    except Exception as exc:
        raise VectorStoreError(
            f"the vector store at {path} cannot be read ({_damage(exc)}); the next "
            "episode_vectors run rebuilds it from the stores"
        ) from exc
    try:
        yield store
    finally:
        _close(path)
