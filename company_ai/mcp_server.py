"""`company-ai mcp`: the memory for assistants, over the Model Context Protocol.

Any assistant (on a phone, a desktop, inside a coding session) may read the memory; none
may write it. That holds by construction, not by care: every store is opened through
`ReadOnlyStores` (SQLite `mode=ro` with `PRAGMA query_only=ON`, PostgreSQL in a read-only
session), no tool takes a writer, and the vault is read only from the copy the privacy
gate staged. Each tool calls the same function as the CLI command of the same name, so
the two can never disagree.

Transports: stdio (the assistant starts the server), and streamable HTTP bound to
127.0.0.1, where every request must carry `Authorization: Bearer $COMPANY_AI_MCP_TOKEN`
(compared in constant time, never logged); a tunnel brings a phone to it (docs/mcp.md).

Every answer is bounded (`MAX_ANSWER_BYTES`): lists are paged or cut with a note saying
so, long texts are cut with a note, oversized inputs are refused with a message an
assistant can act on.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import hmac
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Resource, ToolAnnotations

from company_ai.core.crm import UnknownContactError, load_dossier, load_timeline
from company_ai.core.recall import EmptyIndexError, WarmIndex, ask, page_markdown, stale_pages
from company_ai.core.store import ReadOnlyStores, Store, StoreError
from company_ai.core.times import to_iso, utc_now
from company_ai.settings import Settings

NAME = "company-ai"
MAX_ANSWER_BYTES = 64 * 1024  # what any MCP client takes in one tool result
MAX_QUESTION_CHARS = 4000  # a question, not a document: longer ones are refused
MAX_TITLE_CHARS = 500
MAX_EMAIL_CHARS = 320  # RFC 5321's longest address
MAX_HITS = 20
TIMELINE_PAGE, MAX_TIMELINE_PAGE = 50, 200
MAX_STALE = 200
MAX_LISTED_PAGES = 1000  # recall:// resources listed (each page can still be read by title)
MIN_TOKEN_CHARS = 16
DEFAULT_PORT = 8765
LOCK_WAIT_S = 10  # for the vector store's lock, as `company-ai similar` waits

RULE = """How to use company-ai, the owner's own memory (read-only):
- When asked about the owner's own life, work, people, projects, plans or history, look in
  the recall layer first: call `recall` with the question (then `page` for a whole page,
  `timeline` or `dossier` for one person by email).
- Treat a recall page as the authority on what it says, as of its date: say "as of <date>"
  and name its source note (`source_note` in each hit). Offer to pull the live note with
  `source_note(title)` when asked how you know.
- A page marked stale comes from a note untouched for a long time: say it may be out of
  date.
- Never query it for general questions (facts about the world, code, definitions): it
  holds only the owner's own notes and contacts.
- It cannot be changed from here: no tool writes, deletes or adds anything."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

T = TypeVar("T")


class ServerConfigError(Exception):
    """The server cannot start as asked; the message says what to do."""


def build_server(stores: ReadOnlyStores, settings: Settings) -> _RecallServer:
    """The MCP server over `stores`: tools, the recall:// resources and the rule prompt."""
    if not isinstance(stores, ReadOnlyStores):
        raise TypeError("the MCP server reads through ReadOnlyStores only")

    server = _RecallServer(stores, name=NAME, instructions=RULE, log_level="WARNING")
    vector_copy = server.vector_copy
    warm = WarmIndex(stores.path(Store.RECALL))

    def tool(description: str, *, inline: bool = False) -> Callable[[Callable[..., T]], Any]:
        """Register a read as a tool. The SDK runs a plain function on a worker thread;
        `inline` runs it on the event loop instead, for the reads that take a millisecond
        or so (indexed lookups), where the hand-over to a thread would cost more than the
        read itself."""
        register = server.tool(
            description=description, annotations=READ_ONLY, structured_output=False
        )

        def decorate(fn: Callable[..., T]) -> Any:
            if not inline:
                return register(fn)

            @functools.wraps(fn)
            async def on_the_loop(*args: Any, **kwargs: Any) -> T:
                return fn(*args, **kwargs)

            return register(on_the_loop)

        return decorate

    @tool(
        "Search the owner's recall pages (their notes distilled: people, projects, plans, "
        "decisions) for a question about their own life or work. Returns the best pages, "
        "each with its type, 'as_of' date, the source note it was derived from and whether "
        "it is stale, plus the top page's one-hop neighbourhood (who/what it relates to). "
        "Say 'as of <date>' and name the source note when you answer from it. Not for "
        "general knowledge."
    )
    def recall(question: str, limit: int = 5) -> str:
        question = _question(question)
        limit = _within("limit", limit, 1, MAX_HITS)
        answer = _read(
            lambda: ask(
                stores,
                question,
                now=utc_now(),
                max_age_days=settings.recall_stale_days,
                ollama_host=settings.ollama_host,
                limit=limit,
                warm=warm,
            )
        )
        hits = [
            {
                "title": h.title,
                "type": h.type,
                "as_of": h.distilled,
                "source_note": h.derived_from,
                "note_touched": h.note_touched,
                "stale": h.stale,
                "recall": h.recall,
            }
            for h in answer.hits
        ]
        payload: dict[str, Any] = {
            "question": question,
            "hits": hits,
            "neighbourhood": [
                {"relation": r, "direction": d, "title": t, "has_page": e}
                for r, d, t, e in answer.neighbourhood
            ],
        }
        if not hits:
            payload["note"] = "nothing in recall matches: say so rather than guess"
        return _json(payload, "hits")

    @tool(
        "One recall page by its exact title (case does not matter), as Markdown with its "
        "front matter: type, dates, the note it was derived from, observations, relations. "
        "An unknown title is an error: search with `recall` first.",
        inline=True,
    )
    def page(title: str) -> str:
        title = _title(title)
        return _text(_read(lambda: _page(stores, title)))

    @tool(
        "The vault note a recall page was derived from, as the privacy gate last let it "
        "through (its staged copy). Use it when asked how you know something, or to check "
        "a page against the note itself. A private note, or one made private since, is "
        "never shown: that is an error.",
        inline=True,
    )
    def source_note(title: str) -> str:
        from company_ai.core.vault import published_note, staging_dir

        title = _title(title)
        derived_from = _read(lambda: _derived_from(stores, title))
        text = _read(lambda: published_note(staging_dir(stores.data_dir), derived_from))
        return _text(f"source note {derived_from} of the page {title!r}:\n\n{text}")

    @tool(
        "Everything known about one contact (by any of their email addresses), oldest "
        "first: episodes (with source and confidence), messages sent and mail received, "
        "each dated. Paged: pass the returned `next_offset` as `offset` for more; "
        "`next_offset` is null at the end. An unknown email is an error.",
        inline=True,
    )
    def timeline(email: str, offset: int = 0, limit: int = TIMELINE_PAGE) -> str:
        email = _email(email)
        offset = _within("offset", offset, 0, 10**9)
        limit = _within("limit", limit, 1, MAX_TIMELINE_PAGE)
        found = _read(lambda: load_timeline(stores, email))
        entries = found.entries[offset : offset + limit]
        payload = {
            "contact": _contact(found.contact),
            "total": len(found.entries),
            "offset": offset,
            "entries": entries,
        }
        return _json(payload, "entries", offset=offset, total=len(found.entries))

    @tool(
        "What a drafter is given about one contact (by email): their latest episodes, one "
        "dated receipt a line with its source and, when under 1, its confidence. An "
        "unknown email is an error.",
        inline=True,
    )
    def dossier(email: str) -> str:
        email = _email(email)
        text = _read(lambda: load_dossier(stores, email))
        payload = {"email": email, "as_of": to_iso(utc_now()), "receipts": text.splitlines()}
        return _json(payload, "receipts")

    @tool(
        "Have we seen something like this before? The memories nearest in meaning to a "
        "text (episodes, brain facts and decisions, recall pages), each with its day, "
        "type, score, contact and the row it came from. `collection`: episodes or "
        "knowledge; `contact`: an email to look at one person only."
    )
    def similar(
        text: str,
        limit: int = 10,
        collection: Literal["episodes", "knowledge"] | None = None,
        contact: str | None = None,
    ) -> str:
        from company_ai.core.crm import find_contact
        from company_ai.core.vectors.similar import EmptyStore, Filters, find_similar

        text = _question(text, "text")
        limit = _within("limit", limit, 1, MAX_HITS)
        filters = Filters()
        if contact:
            email = _email(contact)

            def contact_id() -> int:
                with stores.connect(Store.CRM, readonly=True) as crm:
                    return find_contact(crm, email)["id"]

            filters = Filters(contact_id=_read(contact_id))

        def search() -> dict:
            try:
                return find_similar(
                    stores,
                    text,
                    collections=(collection,) if collection else None,
                    filters=filters,
                    limit=limit,
                    ollama_host=settings.ollama_host,
                    chroma_copy=vector_copy.current,  # never Chroma on the data directory
                ).to_json()
            except EmptyStore as exc:
                raise ToolError(str(exc)) from None

        payload = _read(search)
        return _json(payload, "groups")

    @tool(
        "Recall pages whose status or goal comes from a note untouched for longer than the "
        "stale limit (oldest first): things that may no longer be true. Each with its "
        "source note, the day the note was last touched and the lines that may be stale.",
        inline=True,
    )
    def stale(limit: int = 50) -> str:
        limit = _within("limit", limit, 1, MAX_STALE)
        pages = _read(lambda: _stale(stores, settings, limit))
        payload = {
            "max_age_days": settings.recall_stale_days,
            "pages": [
                {
                    "title": p.title,
                    "source_note": p.derived_from,
                    "note_touched": p.note_touched,
                    "age_days": p.age_days,
                    "lines": [{"category": c, "text": t} for c, t in p.observations],
                }
                for p in pages
            ],
        }
        return _json(payload, "pages")

    @tool(
        "The latest morning brief as it was sent (what happened overnight: runs, replies, "
        "drafts waiting, the night's brain facts, stale pages, growth, the CRM audit), with "
        "its day and when it was made.",
        inline=True,
    )
    def brief() -> str:
        report = _read(lambda: _brief(stores))
        return _text(f"{report.key}, made {report.created_at}:\n\n{report.text}")

    @tool(
        "The CRM audit: how many contacts, with and without a valid email, by warmth band, "
        "and how many can be acted on; the latest stored audit, or the same numbers "
        "computed now when none is stored (`source` says which), with its 'as_of' time."
    )
    def audit() -> str:
        from company_ai.core.ops import audit_report

        report = _read(lambda: audit_report(stores, to_iso(utc_now())))
        return _json(report.to_json())

    @server.resource(
        "recall://{title}",
        name="recall page",
        description="One recall page by title, as Markdown with its front matter.",
        mime_type="text/markdown",
    )
    def recall_page(title: str) -> str:
        if len(title) > MAX_TITLE_CHARS:
            raise ResourceError(f"a title is at most {MAX_TITLE_CHARS} characters")
        try:
            return _text(_page(stores, title))
        except (LookupError, StoreError) as exc:
            raise ResourceError(str(exc)) from None

    @server.prompt(
        name="read_side_rule",
        description="When and how to use the owner's memory: recall first for their own "
        "life and work, pages as the authority 'as of' their date, name the source.",
    )
    def read_side_rule() -> str:
        return RULE

    return server


class _RecallServer(MCPServer):
    """An MCPServer whose resource list holds the recall pages as they are now."""

    def __init__(self, stores: ReadOnlyStores, **kwargs: Any):
        super().__init__(**kwargs)
        self._stores = stores
        self.vector_copy = VectorCopy(stores.data_dir)

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        return listed + await asyncio.to_thread(self._pages)

    def _pages(self) -> list[Resource]:
        if not self._stores.exists(Store.RECALL):
            return []
        with self._stores.connect(Store.RECALL, readonly=True) as conn:
            rows = conn.execute(
                "SELECT title, type, distilled, derived_from FROM entities ORDER BY title LIMIT $1",
                (MAX_LISTED_PAGES,),
            ).fetchall()
        return [
            Resource(
                uri=f"recall://{quote(r['title'], safe='')}",
                name=r["title"],
                description=f"{r['type']} page, as of {r['distilled']}, from {r['derived_from']}",
                mime_type="text/markdown",
            )
            for r in rows
        ]


class VectorCopy:
    """A private copy of the vector store, for `similar`: Chroma writes its own file each
    time it opens it (a row in `acquire_write`), even to query, so the server never opens
    the one in the data directory. The copy is taken under the store's shared lock (the
    lock file opened read-only, so it is not created) and taken again only when the
    store's files change; it lives in a temporary folder removed at exit."""

    def __init__(self, data_dir: Path):
        from company_ai.core.vectors import vectors_dir

        self.source = vectors_dir(data_dir)
        self._lock_path = self.source.parent / f".{self.source.name}.lock"
        self._taken: tuple | None = None
        self._guard = threading.Lock()
        self._folder: tempfile.TemporaryDirectory | None = None

    def _signature(self) -> tuple:
        return tuple(
            (str(p.relative_to(self.source)), p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(self.source.rglob("*"))
            if p.is_file()
        )

    def close(self) -> None:
        """Remove the copy (at the server's exit)."""
        with self._guard:
            if self._folder is not None:
                self._folder.cleanup()
                self._folder = None

    def current(self) -> Path:
        """The copy's path, fresh: the original's as it is now."""
        if not (self.source / "chroma.sqlite3").is_file():
            return self.source  # nothing to copy: find_similar says what builds it
        with self._guard, self._shared_lock():
            signature = self._signature()
            if self._folder is None or signature != self._taken:
                if self._folder is not None:
                    self._folder.cleanup()
                self._folder = tempfile.TemporaryDirectory(prefix="company-ai-mcp-")
                shutil.copytree(self.source, Path(self._folder.name) / self.source.name)
                self._taken = signature
            return Path(self._folder.name) / self.source.name

    @contextmanager
    def _shared_lock(self) -> Iterator[None]:
        try:
            fd = os.open(self._lock_path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:  # no writer has ever run here
            yield
            return
        try:
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ToolError(
                            "the vector memory is being written (a memory job is running): "
                            "ask again in a minute"
                        ) from None
                    time.sleep(0.1)
            yield
        finally:
            os.close(fd)


# --- the reads (each through the stores, read-only) ------------------------------------


def _read(fn: Callable[[], T]) -> T:
    """Run one read; what the stores say is wrong becomes a tool error an assistant can
    repeat to the owner (never a traceback, never a stored value beyond the message)."""
    try:
        return fn()
    except (KeyError, IndexError):
        raise  # a bug, not an answer: the SDK reports it as an unexpected error
    except (UnknownContactError, LookupError, EmptyIndexError, StoreError, ValueError) as exc:
        raise ToolError(str(exc)) from None
    except RuntimeError as exc:  # e.g. the vector store's VectorStoreError
        raise ToolError(str(exc)) from None
    except OSError as exc:  # e.g. a store in a folder this process may not even lock
        raise ToolError(f"cannot read the data directory: {exc.strerror or exc}") from None


def _page(stores: ReadOnlyStores, title: str) -> str:
    with stores.connect(Store.RECALL, readonly=True) as conn:
        return page_markdown(conn, title)


def _derived_from(stores: ReadOnlyStores, title: str) -> str:
    with stores.connect(Store.RECALL, readonly=True) as conn:
        row = conn.execute(
            "SELECT derived_from FROM entities WHERE title = $1 COLLATE NOCASE", (title,)
        ).fetchone()
    if row is None:
        raise LookupError(f"no recall page titled {title!r}")
    return row[0]


def _stale(stores: ReadOnlyStores, settings: Settings, limit: int):
    with stores.connect(Store.RECALL, readonly=True) as conn:
        return stale_pages(conn, utc_now(), settings.recall_stale_days, limit=limit)


def _brief(stores: ReadOnlyStores):
    from company_ai.core.ops import latest_report

    ops = stores.reader(Store.OPS)
    try:
        report = latest_report(ops, "brief:")
    finally:
        if ops is not None:
            ops.close()
    if report is None:
        raise LookupError("no morning brief yet: `morning_brief` makes one each day at 06:00")
    return report


def _contact(contact: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "name", "email", "company", "title", "city", "warmth")
    return {k: contact.get(k) for k in keys}


# --- inputs and answers, bounded --------------------------------------------------------


def _question(text: str, what: str = "question") -> str:
    if not text.strip():
        raise ToolError(f"the {what} is empty: ask something")
    if len(text) > MAX_QUESTION_CHARS:
        raise ToolError(
            f"the {what} is {len(text):,} characters; at most {MAX_QUESTION_CHARS:,} are "
            "read: ask a shorter one (a question, not a document)"
        )
    return text


def _title(title: str) -> str:
    if not title.strip():
        raise ToolError("the title is empty: find one with `recall`")
    if len(title) > MAX_TITLE_CHARS:
        raise ToolError(f"a title is at most {MAX_TITLE_CHARS} characters")
    return title


def _email(email: str) -> str:
    if len(email) > MAX_EMAIL_CHARS:
        raise ToolError(f"an email address is at most {MAX_EMAIL_CHARS} characters")
    if "@" not in email:
        raise ToolError(f"not an email address: {email[:80]!r}")
    return email


def _within(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ToolError(f"{name} must be between {low} and {high}, not {value}")
    return value


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _text(text: str) -> str:
    """`text`, cut to fit `MAX_ANSWER_BYTES` with a note that says so."""
    if _size(text) <= MAX_ANSWER_BYTES:
        return text
    note = f"\n\n[cut: the whole text is {_size(text):,} bytes; only the first part fits]"
    room = MAX_ANSWER_BYTES - _size(note)
    return text.encode("utf-8")[:room].decode("utf-8", "ignore") + note


def _json(payload: dict[str, Any], items: str | None = None, **page: int) -> str:
    """`payload` as JSON within `MAX_ANSWER_BYTES`: the list under `items` loses its last
    entries until it fits, and the answer says how many it holds and where to go on.
    A paged list (`page`: offset and total) always gets `next_offset`."""
    listed: list[Any] = payload[items] if items else []
    whole = len(listed)

    def encode() -> str:
        if page:
            shown = page["offset"] + len(listed)
            payload["next_offset"] = shown if shown < page["total"] else None
        return json.dumps(payload, ensure_ascii=False, indent=1, default=str)

    text = encode()
    if _size(text) <= MAX_ANSWER_BYTES or not items:
        return _text(text)
    low, high = 0, whole  # the most entries that fit, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        payload[items] = listed[:middle]
        if _size(json.dumps(payload, ensure_ascii=False, indent=1, default=str)) + 300 <= (
            MAX_ANSWER_BYTES
        ):
            low = middle
        else:
            high = middle - 1
    listed = listed[:low]
    payload[items] = listed
    more = "pass next_offset as offset for the rest" if page else "ask for fewer"
    payload["cut"] = f"{low} of {whole} {items} fit in {MAX_ANSWER_BYTES:,} bytes: {more}"
    return _text(encode())


# --- running it -------------------------------------------------------------------------


def serve(
    stores: ReadOnlyStores, settings: Settings, *, http: bool = False, port: int = DEFAULT_PORT
) -> None:
    """Serve until stopped: over stdio, or over HTTP on 127.0.0.1:`port` with the token."""
    if not stores.data_dir.is_dir():
        raise ServerConfigError(
            f"no data directory at {stores.data_dir}: point --data-dir or COMPANY_AI_DATA_DIR "
            "at your data (or run `company-ai demo`)"
        )
    token = _token(settings) if http else ""  # checked before anything is built or bound
    server = build_server(stores, settings)
    # A client stopping the server sends SIGTERM: unwind as for ^C, so the finally runs.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        if http:
            _serve_http(server, token, port)
        else:
            server.run("stdio")
    finally:
        server.vector_copy.close()


def _token(settings: Settings) -> str:
    token = settings.mcp_token
    if not token:
        raise ServerConfigError(
            "--http needs a token: set COMPANY_AI_MCP_TOKEN to a long random string (e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`) and give the "
            "same one to the assistant as `Authorization: Bearer <token>`"
        )
    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable():
        raise ServerConfigError(
            f"COMPANY_AI_MCP_TOKEN must be at least {MIN_TOKEN_CHARS} printable ASCII "
            "characters (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    return token


def _serve_http(server: _RecallServer, token: str, port: int) -> None:
    import uvicorn

    app = BearerOnly(server.streamable_http_app(host="127.0.0.1"), token)
    # No access log: a request line is all it would add, and nothing here needs one.
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    uvicorn.Server(config).run()


class BearerOnly:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` gets 401.
    The comparison takes the same time whatever the token given; the token is never
    logged or echoed."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = b""
            for name, value in scope.get("headers", ()):
                if name.lower() == b"authorization":
                    given = value
            if not hmac.compare_digest(given, self._expected):
                body = (
                    b'{"error": "unauthorized: send Authorization: Bearer <COMPANY_AI_MCP_TOKEN>"}'
                )
                await send({
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="company-ai"'),
                    ],
                })  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
