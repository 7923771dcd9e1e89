"""The vector memory on a Chroma server (`chroma run`, `COMPANY_AI_CHROMA_URL`).

The server holds the collections; this side only talks HTTP to it. Chroma's client waits
for ever on a server that accepts and never answers (its HTTP session has no timeout), so
every opening first asks the server's heartbeat within `CONNECT_TIMEOUT_S`, and the
client's session then gets `REQUEST_TIMEOUT_S`: a server down or hung is a clear
`VectorStoreError` naming the server (credentials never: there are none in the URL), in
bounded time, before anything is written.

A forget on a server deletes the vectors through its API; what Chroma's files on the
server still hold of them (a deleted vector's embedding stays in its index files, its ids
and metadata in its log and in SQLite's free pages) the API cannot reach. `scrub_files`
clears them, run on the server's host with the server stopped (`company-ai
vectors-scrub PATH`); docs/operations.md says when.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

CONNECT_TIMEOUT_S = 5.0  # the heartbeat: a live server answers in milliseconds
REQUEST_TIMEOUT_S = 120.0  # one request: a page of 5,000 vectors written or read


def check_url(url: str) -> tuple[str, int, bool]:
    """(host, port, ssl) of a Chroma server URL `http(s)://host[:port]`; ValueError if it
    is anything else (Chroma's token auth is not supported: no credentials in it)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValueError("must be http(s)://host:port, and this is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"must be http(s)://host:port, not {shown(url)!r}")
    if parts.username or parts.password or parts.query or parts.path.strip("/"):
        raise ValueError(f"must be http(s)://host:port and nothing more, not {shown(url)!r}")
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


def shown(url: str) -> str:
    """The URL fit for a message: scheme, host and port only."""
    try:
        parts = urlsplit(url.strip())
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname or ''}{port}"
    except ValueError:
        return "<unreadable url>"


def connect(url: str) -> Any:
    """A Chroma HTTP client for the server at `url`, its heartbeat answered first."""
    import chromadb
    import httpx
    from chromadb.config import Settings

    from company_ai.core.vectors.store import VectorStoreError

    host, port, ssl = check_url(url)
    base = f"{'https' if ssl else 'http'}://{host}:{port}"
    try:
        answer = httpx.get(f"{base}/api/v2/heartbeat", timeout=CONNECT_TIMEOUT_S)
        answer.raise_for_status()
    except httpx.TimeoutException:
        raise VectorStoreError(
            f"the Chroma server at {shown(url)} did not answer within {CONNECT_TIMEOUT_S:.0f} s "
            "(COMPANY_AI_CHROMA_URL): nothing was written; check the server"
        ) from None
    except httpx.HTTPError as exc:
        raise VectorStoreError(
            f"cannot reach the Chroma server at {shown(url)} (COMPANY_AI_CHROMA_URL): "
            f"{type(exc).__name__}; is `chroma run` up? Nothing was written"
        ) from None
    try:
        client: Any = chromadb.HttpClient(
            host=host, port=port, ssl=ssl, settings=Settings(anonymized_telemetry=False)
        )
    except ValueError as exc:  # Chroma's words for a server it could not reach or use
        raise VectorStoreError(f"the Chroma server at {shown(url)}: {exc}") from None
    client._server._session.timeout = httpx.Timeout(REQUEST_TIMEOUT_S)
    return client


def close(client: Any) -> None:
    """Close the client's HTTP connections (Chroma's client has no close of its own)."""
    for part in (client, getattr(client, "_admin_client", None)):  # each has its own
        session = getattr(getattr(part, "_server", None), "_session", None)
        if session is not None:
            session.close()


def server_error(url: str, exc: BaseException) -> str:
    """What went wrong talking to the server, in one line without the request's data."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return f"the Chroma server at {shown(url)} did not answer in {REQUEST_TIMEOUT_S:.0f} s"
    if isinstance(exc, httpx.HTTPError):
        return f"the Chroma server at {shown(url)} failed: {type(exc).__name__}"
    return f"the Chroma server at {shown(url)}: {type(exc).__name__}: {str(exc)[:200]}"


def scrub_files(path: Path) -> dict[str, int]:
    """Clear a Chroma server's persist directory of what deleted vectors leave (see above).

    Run it with the server stopped (it opens the directory as a local store). Every change
    waiting in the log is first written into the index files (opening with threshold 1),
    then: each element marked deleted has its embedding zeroed, the log rows of ids no
    longer held are removed, index folders no collection names are removed, and SQLite is
    vacuumed. Returns what it cleared."""
    import shutil

    from company_ai.core.vectors import store as s

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
    from company_ai.core.vectors.store import _DELETED, _layout, _zero_rows

    layout = _layout(segment)
    if layout is None or layout.count == 0:
        return 0
    data = np.memmap(segment / "data_level0.bin", dtype=np.uint8, mode="r+")
    rows = data[: layout.count * layout.size].reshape(layout.count, layout.size)
    hit = np.flatnonzero((rows[:, 2] & _DELETED) != 0)
    _zero_rows(segment, layout, data, rows, hit)
    return int(len(hit))
