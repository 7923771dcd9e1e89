"""A domain store in PostgreSQL, behind the small part of sqlite3's interface the core uses.

Every domain lives in one database (`COMPANY_AI_DATABASE_URL`), each in a schema of its
own name (`crm`, `memory`, …) with its own versions (`pg_schema.PG_MIGRATIONS`), so the
domains stay as separate as their SQLite files. The code is the same as on SQLite:
`execute(sql, params)` with `?` placeholders, rows read by position or by name,
`transaction()` from `db`. psycopg2 is imported only when a URL is configured, so the
CLI's read path still imports no third-party package on a SQLite install.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")
# Postgres' wire protocol counts a statement's parameters in 16 bits.
MAX_PARAMETERS = 65535
CONNECT_TIMEOUT_S = 10
VERSIONS = "company_ai_schema"  # one row per store: the schema version applied


class PgStoreError(Exception):
    """Raised as db.StoreError by `db.Stores` (this module does not import db)."""


class PgNoSchemaError(PgStoreError):
    """A read-only connection found the store's schema not made yet."""


def redact(url: str) -> str:
    """`url` without its password (in the user part or a `password=` parameter)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<an unparseable URL>"
    netloc = host if ":" not in host else f"[{host}]"
    if port:
        netloc += f":{port}"
    if parts.username:
        secret = ":***" if parts.password is not None else ""
        netloc = f"{parts.username}{secret}@{netloc}"
    query = [(k, "***" if k.lower() == "password" else v) for k, v in parse_qsl(parts.query)]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="*/"), ""))


def check_url(url: str) -> str:
    """`url` if it is a PostgreSQL URL; the error names it without its password."""
    if urlsplit(url).scheme not in SCHEMES:
        raise PgStoreError(f"a store URL must be postgresql://…, not {redact(url)!r}")
    return url


class PgConnection:
    """One connection in autocommit mode: `db.transaction()` opens and ends transactions."""

    dialect = "postgres"

    def __init__(self, raw: Any, url: str):
        self.raw = raw
        self.url = redact(url)
        # The data directory of the `db.Stores` that opened it (`db.data_dir_of`).
        self.data_dir: Path | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        cursor = self.raw.cursor()
        # Always a tuple, never None: psycopg2 then treats `%%` as the `%` we escaped.
        cursor.execute(_to_pg(sql), tuple(params))
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        """As sqlite3's: one statement, many rows (sent in pages, not one round trip each)."""
        import psycopg2.extras

        cursor = self.raw.cursor()
        psycopg2.extras.execute_batch(
            cursor, _to_pg(sql), [tuple(row) for row in rows], page_size=500
        )
        return cursor

    # The DB-API's exception classes, as a sqlite3 connection also carries them: core code
    # catches `conn.IntegrityError` and means the same refusal on either database.
    @property
    def IntegrityError(self) -> type[Exception]:  # noqa: N802 (the DB-API's name)
        return self.raw.IntegrityError

    @property
    def OperationalError(self) -> type[Exception]:  # noqa: N802
        return self.raw.OperationalError

    @property
    def DatabaseError(self) -> type[Exception]:  # noqa: N802
        return self.raw.DatabaseError

    def close(self) -> None:
        self.raw.close()

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != 0  # TRANSACTION_STATUS_IDLE

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        # Postgres would only warn and let the inner COMMIT end the outer transaction early;
        # SQLite refuses a nested BEGIN, and so does this.
        if self.in_transaction:
            raise PgStoreError("cannot start a transaction within a transaction")
        self.execute("BEGIN")
        try:
            yield self
            self.execute("COMMIT")
        except BaseException:
            # A lost connection rolls back by itself; its own error is the one to report.
            with suppress(Exception):
                self.execute("ROLLBACK")
            raise

    def table_exists(self, name: str) -> bool:
        (found,) = self.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()
        return bool(found)


@lru_cache(maxsize=512)
def _to_pg(sql: str) -> str:
    """sqlite3's `?` placeholders as psycopg2's `%s`, and a literal `%` as `%%`.

    The statement is read as PostgreSQL's lexer reads it: a `?` inside a string literal
    ('…', E'…'), a quoted identifier ("…"), a dollar-quoted body ($tag$…$tag$) or a
    comment (-- … and nested /* … */) is text, not a parameter. Anything the lexer
    cannot close is refused rather than guessed at."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        char = sql[i]
        if char == "?":
            out.append("%s")
            i += 1
            continue
        if char in "'\"":
            end = _quoted_end(sql, i, char)
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
        elif sql.startswith("/*", i):
            end = _comment_end(sql, i)
        elif char == "$" and (tag := _DOLLAR_TAG.match(sql, i)) and not _in_word(sql, i):
            close = sql.find(tag.group(), tag.end())
            if close < 0:
                raise PgStoreError(f"an unterminated {tag.group()} quote in: {sql[:80]!r}")
            end = close + len(tag.group())
        else:
            out.append("%%" if char == "%" else char)
            i += 1
            continue
        out.append(sql[i:end].replace("%", "%%"))
        i = end
    return "".join(out)


_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")


def _in_word(sql: str, i: int) -> bool:
    """Whether the `$` at `i` continues an identifier (`a$b$`), where it quotes nothing."""
    return i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")


def _quoted_end(sql: str, start: int, quote: str) -> int:
    """Where the literal or identifier opened at `start` ends (a doubled quote is one
    quote; in an E'…' literal a backslash escapes the next character)."""
    escapes = quote == "'" and start > 0 and sql[start - 1] in "eE" and not _in_word(sql, start - 1)
    i = start + 1
    while i < len(sql):
        if escapes and sql[i] == "\\":
            i += 2
            continue
        if sql[i] == quote:
            if sql.startswith(quote * 2, i):
                i += 2
                continue
            return i + 1
        i += 1
    raise PgStoreError(f"an unterminated {quote} quote in: {sql[:80]!r}")


def _comment_end(sql: str, start: int) -> int:
    depth, i = 0, start
    while i < len(sql):
        if sql.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    raise PgStoreError(f"an unterminated /* comment in: {sql[:80]!r}")


def connect(url: str, store: str, migrations: list[list[str]], *, readonly: bool) -> PgConnection:
    """Connect to the store at `url`, migrated to the newest schema unless `readonly`."""
    import psycopg2
    import psycopg2.extras

    check_url(url)
    try:
        raw = psycopg2.connect(
            url,
            connect_timeout=CONNECT_TIMEOUT_S,
            cursor_factory=psycopg2.extras.DictCursor,
            application_name=f"company_ai:{store}",
            # The domain's schema first: its tables are found by their bare names.
            options=f"-c search_path={store}",
        )
    except psycopg2.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PgStoreError(
            f"cannot reach the {store} store at {redact(url)}: {reason}. Is PostgreSQL "
            f"running there? Nothing was read or written"
        ) from None
    raw.set_session(readonly=readonly, autocommit=True)
    conn = PgConnection(raw, url)
    try:
        if readonly:
            if current_version(conn, store) == 0:
                raise PgNoSchemaError(
                    f"the {store} store at {conn.url} has no schema yet: run a job that "
                    "writes it (or `company-ai demo`) first"
                )
        else:
            migrate(conn, store, migrations)
    except BaseException:
        conn.close()
        raise
    return conn


def stores_in(url: str, stores: Sequence[str]) -> list[str]:
    """Which of `stores` already have a schema in the database at `url`."""
    import psycopg2

    try:
        raw = psycopg2.connect(url, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg2.Error as exc:
        raise PgStoreError(f"cannot reach PostgreSQL at {redact(url)}: {exc}".strip()) from None
    try:
        with raw.cursor() as cursor:
            cursor.execute(
                "SELECT schema_name FROM information_schema.schemata"
                " WHERE schema_name = ANY(%s) ORDER BY schema_name",
                (list(stores),),
            )
            return [name for (name,) in cursor.fetchall()]
    finally:
        raw.close()


def current_version(conn: PgConnection, store: str) -> int:
    if not conn.table_exists(VERSIONS):
        return 0
    row = conn.execute(f"SELECT version FROM {VERSIONS} WHERE store = ?", (store,)).fetchone()
    return row[0] if row else 0


def migrate(conn: PgConnection, store: str, migrations: list[list[str]]) -> int:
    """Bring the store to the newest version; one transaction, under an advisory lock so
    that two processes starting at once migrate it once."""
    if current_version(conn, store) == len(migrations):
        return len(migrations)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"company_ai:{store}",))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {store}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {VERSIONS}"
            " (store TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        current = current_version(conn, store)
        if current > len(migrations):
            raise PgStoreError(
                f"the {store} store at {conn.url} has schema version {current}, newer than "
                f"this code knows ({len(migrations)}): upgrade company_ai before opening it"
            )
        for statements in migrations[current:]:
            for statement in statements:
                conn.execute(statement)
        conn.execute(
            f"INSERT INTO {VERSIONS} (store, version) VALUES (?, ?)"
            " ON CONFLICT (store) DO UPDATE SET version = excluded.version",
            (store, len(migrations)),
        )
    return len(migrations)
