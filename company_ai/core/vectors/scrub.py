"""What a Chroma server's files keep of forgotten vectors, cleared (`company-ai
vectors-scrub PATH`).

A forget on a server deletes the vectors through its API, but a deleted vector's
embedding stays in its index files, its ids and metadata in its log and in SQLite's free
pages. `scrub_files` clears them, run on the server's host with the server stopped;
docs/operations.md says when.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np

from company_ai.core.vectors import store as s


def scrub_files(path: Path) -> dict[str, int]:
    """Clear a Chroma server's persist directory of what deleted vectors leave (see above).

    Run it with the server stopped (it opens the directory as a local store). Every change
    waiting in the log is first written into the index files (opening with threshold 1),
    then: each element marked deleted has its embedding zeroed, the log rows of ids no
    longer held are removed, index folders no collection names are removed, and SQLite is
    vacuumed. Returns what it cleared."""
    if not (path / "chroma.sqlite3").is_file():
        raise s.VectorStoreError(f"no Chroma store at {path} (its chroma.sqlite3 is missing)")
    with s._locked(path, exclusive=True):
        with s._open_existing(path) as store:
            names = list(store._collections)
            for name in names:
                store._configure(name, sync_threshold=1)
        with s._open_existing(path) as store:  # opening applies the whole log
            for name in names:
                store._configure(name, sync_threshold=s.SYNC_THRESHOLD)
        segments = s._segments(path)
        zeroed = sum(_zero_deleted(segment) for segment in segments.values())
        known = {p.name for p in segments.values()}
        stale = [p for p in path.iterdir() if p.is_dir() and _is_segment(p) and p.name not in known]
        for folder in stale:
            shutil.rmtree(folder)
        conn = sqlite3.connect(path / "chroma.sqlite3", isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            purged = conn.execute(
                "DELETE FROM embeddings_queue WHERE id NOT IN (SELECT embedding_id FROM embeddings)"
            ).rowcount
            conn.execute("COMMIT")
            conn.execute("VACUUM")
        finally:
            conn.close()
    return {"zeroed": zeroed, "log_rows": purged, "folders": len(stale)}


def _is_segment(folder: Path) -> bool:
    return (folder / "header.bin").is_file() or (folder / "data_level0.bin").is_file()


def _zero_deleted(segment: Path) -> int:
    """Zero the embedding and length of every element marked deleted; how many."""
    layout = s._layout(segment)
    if layout is None or layout.count == 0:
        return 0
    data = np.memmap(segment / "data_level0.bin", dtype=np.uint8, mode="r+")
    rows = data[: layout.count * layout.size].reshape(layout.count, layout.size)
    hit = np.flatnonzero((rows[:, 2] & s._DELETED) != 0)
    s._zero_rows(segment, layout, data, rows, hit)
    return int(len(hit))
