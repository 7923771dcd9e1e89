"""The vector store read from its own files, read-only, without chromadb.

`similar` is one query: importing chromadb and opening its client cost more than a second
of a two-second process, for a search that, at the sizes the memory holds for a person,
is an exact scan of a few thousand vectors (milliseconds). So this module reads what Chroma
persisted and scores every vector exactly:

- the catalogue, the metadata and the log, in `chroma.sqlite3` (opened `mode=ro`);
- each collection's HNSW index files (`data_level0.bin`: per element its links, vector and
  label; `index_metadata.pickle`: label -> id), only the elements below the header's count,
  those not marked deleted;
- the changes not yet in those files (Chroma writes them once `SYNC_THRESHOLD` have
  gathered): the log rows (`embeddings_queue`) after the index's own `max_seq_id`, applied
  in order as Chroma applies them (add if absent, update if present, upsert, delete).

The result is checked before it is used: the ids found must be exactly the ids of the
collection's metadata segment, and that segment must have applied the whole log. A store
laid out otherwise (another Chroma version, a log the metadata has not caught up with, a
damaged file) raises `UnreadableStore`, and the caller asks Chroma instead. A collection
over `SCAN_MAX` vectors is left to Chroma's index too, where an exact scan stops being
cheaper.

Opened collections are kept (`StoreReader`), keyed on what changes when a writer writes
(the segments' `max_seq_id`, the log's last row, the index files' size and time): a warm
caller (the MCP server) reads the files again only after a write.
"""

from __future__ import annotations

import io
import pickle
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from company_ai.core.vectors.store import (
    _DELETED,
    READ_WAIT_S,
    VectorStoreError,
    _layout,
    _locked,
)

SCAN_MAX = 200_000  # vectors in a collection up to which an exact scan beats the index
SQL_IDS = 900  # ids per `IN (...)` (SQLite binds at most 32,766 variables)
KEPT_MASKS = 64  # filters whose selection a warm reader keeps
ADD, UPDATE, UPSERT, DELETE = 0, 1, 2, 3  # Chroma's operation codes in its log
META_COLUMNS = "m.string_value, m.int_value, m.float_value, m.bool_value"


class UnreadableStore(VectorStoreError):
    """The files are not as this reader knows them: ask Chroma instead."""


@dataclass(frozen=True)
class Loaded:
    """One collection's vectors, as unit rows of `matrix`, in the order of `ids`."""

    name: str
    model: str
    dim: int
    ids: np.ndarray  # str, one per row
    matrix: np.ndarray  # float32 (n, dim), unit rows
    metadata_segment: str
    signature: tuple[Any, ...]
    # Read once, then kept with the vectors (a write changes the signature: a new Loaded).
    kept_metadata: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False)
    kept_masks: dict[tuple[Any, ...], np.ndarray] = field(default_factory=dict, compare=False)


class _Labels(pickle.Unpickler):
    """Chroma's id map is plain data; anything else in it is refused, not run."""

    def find_class(self, module: str, name: str) -> Any:
        raise UnreadableStore(f"{module}.{name} in a vector index's id map: refused")


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"file:{path / 'chroma.sqlite3'}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise UnreadableStore(f"chroma.sqlite3: {exc}") from exc


class StoreReader:
    """Reads collections of the store at `path`; keeps each until a writer changes it."""

    def __init__(self, path: Path):
        self.path = path
        self._loaded: dict[str, Loaded] = {}

    @contextmanager
    def reading(self) -> Iterator[Snapshot]:
        """The store under its shared lock (writers wait; a writer makes this wait at most
        `READ_WAIT_S`), with one read-only connection to its catalogue."""
        if not (self.path / "chroma.sqlite3").is_file():
            raise VectorStoreError(
                f"no vector store at {self.path}: the memory job builds it "
                "(or run `company-ai demo`)"
            )
        with (
            _locked(self.path, exclusive=False, wait_s=READ_WAIT_S),
            closing(_connect(self.path)) as conn,
        ):
            yield Snapshot(self, conn)


class Snapshot:
    """What a reader sees while it holds the lock."""

    def __init__(self, reader: StoreReader, conn: sqlite3.Connection):
        self._reader = reader
        self._conn = conn

    def _sql(self, query: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(query, tuple(args)).fetchall()
        except sqlite3.Error as exc:
            raise UnreadableStore(f"chroma.sqlite3: {exc}") from exc

    def collections(self) -> dict[str, tuple[str, str, int]]:
        """{name: (collection id, model, dim)} of the collections the store has."""
        found = {}
        for cid, name in self._sql("SELECT id, name FROM collections"):
            meta = {
                k: s if s is not None else i
                for k, s, i in self._sql(
                    "SELECT key, str_value, int_value FROM collection_metadata "
                    "WHERE collection_id = ?",
                    (cid,),
                )
            }
            found[name] = (cid, str(meta.get("model", "?")), int(meta.get("dim") or 0))
        return found

    def count(self, collection_id: str) -> int:
        return int(
            self._sql(
                "SELECT count(*) FROM embeddings e JOIN segments s ON s.id = e.segment_id "
                "WHERE s.collection = ? AND s.scope = 'METADATA'",
                (collection_id,),
            )[0][0]
        )

    def load(self, name: str) -> Loaded:
        """The collection's vectors: kept from an earlier call if no writer came since."""
        cid, model, dim = self.collections()[name]
        segments = dict(self._sql("SELECT scope, id FROM segments WHERE collection = ?", (cid,)))
        vector_segment, metadata_segment = segments.get("VECTOR"), segments.get("METADATA")
        if vector_segment is None or metadata_segment is None:
            raise UnreadableStore(f"the {name} collection has no vector or metadata segment")
        seqs = dict(
            self._sql(
                "SELECT segment_id, seq_id FROM max_seq_id WHERE segment_id IN (?, ?)",
                (vector_segment, metadata_segment),
            )
        )
        topic = self._sql(
            "SELECT max(seq_id), count(*) FROM embeddings_queue WHERE topic LIKE ?",
            (f"%/{cid}",),
        )[0]
        folder = self._reader.path / vector_segment
        files = (
            tuple(
                (f.name, f.stat().st_size, f.stat().st_mtime_ns)
                for f in sorted(folder.iterdir())
                if f.is_file()
            )
            if folder.is_dir()
            else ()
        )
        signature = (cid, model, dim, tuple(sorted(seqs.items())), topic, files)
        kept = self._reader._loaded.get(name)
        if kept is not None and kept.signature == signature:
            return kept
        logged = int(topic[0] or 0)
        if int(seqs.get(metadata_segment, 0) or 0) < logged:
            raise UnreadableStore(f"the {name} collection's metadata has not applied its log")
        ids, matrix = self._index_vectors(folder, dim)
        changes = self._log_changes(cid, int(seqs.get(vector_segment, 0) or 0), dim, set(ids))
        if changes:
            keep = [k for k, i in enumerate(ids) if i not in changes]
            added = [(i, v) for i, v in changes.items() if v is not None]
            ids = [ids[k] for k in keep] + [i for i, _ in added]
            matrix = np.concatenate(
                [matrix[keep], np.array([v for _, v in added], dtype=np.float32).reshape(-1, dim)]
            )
        known = {
            r[0]
            for r in self._sql(
                "SELECT embedding_id FROM embeddings WHERE segment_id = ?", (metadata_segment,)
            )
        }
        if len(known) != len(ids) or known != set(ids):
            raise UnreadableStore(
                f"the {name} collection's index files and metadata disagree "
                f"({len(ids)} vectors, {len(known)} metadata rows)"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = matrix / np.where(norms > 0, norms, 1.0)
        loaded = Loaded(
            name, model, dim, np.array(ids, dtype=str), matrix, metadata_segment, signature
        )
        self._reader._loaded[name] = loaded
        return loaded

    def _index_vectors(self, folder: Path, dim: int) -> tuple[list[str], np.ndarray]:
        """(ids, vectors) of the index files' live elements."""
        empty: tuple[list[str], np.ndarray] = ([], np.zeros((0, dim), dtype=np.float32))
        try:
            layout = _layout(folder) if folder.is_dir() else None
        except VectorStoreError as exc:
            raise UnreadableStore(str(exc)) from exc
        if layout is None or layout.count == 0:
            return empty
        if (layout.label - layout.vector) != 4 * dim:
            raise UnreadableStore(f"the index in {folder} does not hold {dim}-d vectors")
        pickled = folder / "index_metadata.pickle"
        try:
            held = _Labels(io.BytesIO(pickled.read_bytes())).load()
            label_to_id = dict(held["label_to_id"])
            raw = np.fromfile(
                folder / "data_level0.bin", dtype=np.uint8, count=layout.count * layout.size
            )
        except (OSError, KeyError, TypeError, pickle.UnpicklingError, EOFError) as exc:
            raise UnreadableStore(f"the index in {folder}: {exc}") from exc
        if raw.size != layout.count * layout.size:
            raise UnreadableStore(f"the index in {folder} is shorter than its header says")
        rows = raw.reshape(layout.count, layout.size)
        labels = np.ascontiguousarray(rows[:, layout.label :]).view("<u8").ravel().tolist()
        deleted = ((rows[:, 2] & _DELETED) != 0).tolist()
        found = [label_to_id.get(label) for label in labels]
        live = [k for k, i in enumerate(found) if i is not None and not deleted[k]]
        vectors = np.ascontiguousarray(rows[live, layout.vector : layout.label]).view("<f4")
        return [str(found[k]) for k in live], vectors

    def _log_changes(
        self, collection_id: str, after: int, dim: int, held: set[str]
    ) -> dict[str, np.ndarray | None]:
        """{id: its vector now, or None when deleted} for the ids the log changed after the
        index files' own point, applied in order as Chroma's local index applies them."""
        changes: dict[str, np.ndarray | None] = {}
        for operation, id_, blob, encoding in self._sql(
            "SELECT operation, id, vector, encoding FROM embeddings_queue "
            "WHERE topic LIKE ? AND seq_id > ? ORDER BY seq_id",
            (f"%/{collection_id}", after),
        ):
            present = changes[id_] is not None if id_ in changes else id_ in held
            if operation == DELETE:
                if present:
                    changes[id_] = None
                continue
            if operation not in (ADD, UPDATE, UPSERT):
                raise UnreadableStore(f"operation {operation!r} in the vector store's log")
            if blob is None:
                continue  # a change of metadata only
            if encoding != "FLOAT32" or len(blob) != 4 * dim:
                raise UnreadableStore(f"a {encoding} vector of {len(blob)} bytes in the log")
            if (operation == ADD and present) or (operation == UPDATE and not present):
                continue
            changes[id_] = np.frombuffer(blob, dtype="<f4")
        return changes

    def allowed(self, loaded: Loaded, where: Sequence[tuple[str, str, Any]]) -> np.ndarray | None:
        """A mask of `loaded`'s rows matching every (key, op, value) of `where` (None: no
        filter). `op` is "=", ">=" or "<="; values are ints or strings, as stored."""
        if not where:
            return None
        kept = loaded.kept_masks.get(tuple(where))
        if kept is not None:
            return kept
        parts, args = [], []
        for key, op, value in where:
            if op not in ("=", ">=", "<="):
                raise ValueError(f"unknown comparison {op!r}")
            column = "int_value" if isinstance(value, int) else "string_value"
            parts.append(
                "SELECT e.embedding_id FROM embeddings e JOIN embedding_metadata m "
                f"ON m.id = e.id WHERE e.segment_id = ? AND m.key = ? AND m.{column} {op} ?"
            )
            args += [loaded.metadata_segment, key, value]
        chosen = {r[0] for r in self._sql(" INTERSECT ".join(parts), args)}
        mask = np.fromiter((i in chosen for i in loaded.ids), dtype=bool, count=len(loaded.ids))
        if len(loaded.kept_masks) >= KEPT_MASKS:
            loaded.kept_masks.clear()
        loaded.kept_masks[tuple(where)] = mask
        return mask

    def metadata(self, loaded: Loaded, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """{id: metadata} of `ids`, read from the collection's metadata segment (once)."""
        found = loaded.kept_metadata
        missing = [i for i in ids if i not in found]
        for start in range(0, len(missing), SQL_IDS):
            part = missing[start : start + SQL_IDS]
            marks = ",".join("?" * len(part))
            for id_, key, s, i, f, b in self._sql(
                f"SELECT e.embedding_id, m.key, {META_COLUMNS} FROM embeddings e "
                "JOIN embedding_metadata m ON m.id = e.id "
                f"WHERE e.segment_id = ? AND e.embedding_id IN ({marks})",
                [loaded.metadata_segment, *part],
            ):
                value = s if s is not None else i if i is not None else f
                if value is None and b is not None:
                    value = bool(b)
                found.setdefault(id_, {})[key] = value
        return {i: found[i] for i in ids if i in found}


def scores(loaded: Loaded, query: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row to `query`."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    return loaded.matrix @ (q / norm if norm > 0 else q)


def best(
    loaded: Loaded, query: np.ndarray, limit: int, mask: np.ndarray | None = None
) -> list[tuple[str, float]]:
    """The `limit` best (id, score) of `loaded`, best first, ties by id (as `nearest`)."""
    scored = scores(loaded, query)
    rows = np.arange(len(scored)) if mask is None else np.flatnonzero(mask)
    if len(rows) > limit:
        # A little beyond `limit`, so that ties at the edge are settled by id.
        cut = np.argpartition(-scored[rows], limit - 1)[:limit]
        edge = scored[rows[cut]].min()
        rows = rows[scored[rows] >= edge]
    order = np.lexsort((loaded.ids[rows], -scored[rows]))[:limit]
    return [(str(loaded.ids[rows[k]]), float(scored[rows[k]])) for k in order]
