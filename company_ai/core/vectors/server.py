"""The vector memory on a Chroma server (`chroma run`, `COMPANY_AI_CHROMA_URL`).

The server holds the collections; this side only talks HTTP to it. Chroma's client waits
for ever on a server that accepts and never answers (its HTTP session has no timeout), so
every opening first asks the server's heartbeat within `CONNECT_TIMEOUT_S`, and the
client's session then gets `REQUEST_TIMEOUT_S`: a server down or hung is a clear
`VectorStoreError` naming the server (credentials never: there are none in the URL), in
bounded time, before anything is written.

A forget on a server deletes the vectors through its API; what Chroma's files on the
server still hold of them the API cannot reach: `vectors.scrub` clears them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from company_ai.core.vectors.errors import VectorStoreError

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
