"""A domain store in PostgreSQL, behind the small part of sqlite3's interface the core uses.

Every domain lives in one database (`COMPANY_AI_DATABASE_URL`), each in a schema of its
own name (`crm`, `memory`, …) with its own versions (`pg_schema.PG_MIGRATIONS`), so the
domains stay as separate as their SQLite files. The code is the same as on SQLite:
`execute(sql, params)` with `$1` placeholders (`db.Connection`), rows read by position or
by name, `transaction()` from `db`. psycopg is imported only when a URL is configured, so
the CLI's read path still imports no third-party package on a SQLite install.
"""

from __future__ import annotations

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
    """One connection in autocommit mode: `db.transaction()` opens and ends transactions.

    Statements go to the server as they are written, `$1`, `$2` … and all (psycopg's raw
    cursor): the server parses them and binds the parameters, nothing is rewritten here,
    so a `?`, a `%` or a `$1` inside a literal or a comment is only text."""

    dialect = "postgres"

    def __init__(self, raw: Any, url: str):
        self.raw = raw
        self.url = redact(url)
        # The data directory of the `db.Stores` that opened it (`db.data_dir_of`).
        self.data_dir: Path | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        # No parameters: the simple protocol, which also runs a migration's several
        # statements in one string.
        return self.raw.execute(sql, tuple(params) if params else None)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        """As sqlite3's: one statement, many rows (pipelined, not one round trip each)."""
        cursor = self.raw.cursor()
        cursor.executemany(sql, [tuple(row) for row in rows])
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
        return self.raw.info.transaction_status != 0  # TransactionStatus.IDLE

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
        (found,) = self.execute("SELECT to_regclass($1) IS NOT NULL", (name,)).fetchone()
        return bool(found)


class Row(tuple):
    """A row read by position or by column name, as a `sqlite3.Row` is."""

    __slots__ = ()
    names: dict[str, int] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.names)


def _rows(cursor: Any) -> type[Row]:
    """psycopg's row factory: it makes `Row`s whose class knows the result's columns."""
    return _row_class(tuple(col.name for col in cursor.description or ()))


@lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"__slots__": (), "names": {n: i for i, n in enumerate(names)}})


def connect_raw(url: str, **kwargs: Any) -> Any:
    """A psycopg connection to `url` whose statements go to the server as written, with
    their `$1` parameters; autocommit, as a store's transactions are its own."""
    import psycopg

    return psycopg.connect(
        url,
        connect_timeout=CONNECT_TIMEOUT_S,
        autocommit=True,
        cursor_factory=psycopg.RawCursor,
        **kwargs,
    )


def connect(url: str, store: str, migrations: list[list[str]], *, readonly: bool) -> PgConnection:
    """Connect to the store at `url`, migrated to the newest schema unless `readonly`."""
    import psycopg

    check_url(url)
    # The domain's schema first: its tables are found by their bare names. A reader's
    # every transaction is read-only on the server's side.
    options = f"-c search_path={store}"
    if readonly:
        options += " -c default_transaction_read_only=on"
    try:
        raw = connect_raw(
            url,
            row_factory=_rows,
            application_name=f"company_ai:{store}",
            options=options,
        )
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PgStoreError(
            f"cannot reach the {store} store at {redact(url)}: {reason}. Is PostgreSQL "
            f"running there? Nothing was read or written"
        ) from None
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
    import psycopg

    try:
        raw = connect_raw(url)
    except psycopg.Error as exc:
        raise PgStoreError(f"cannot reach PostgreSQL at {redact(url)}: {exc}".strip()) from None
    try:
        rows = raw.execute(
            "SELECT schema_name FROM information_schema.schemata"
            " WHERE schema_name = ANY($1) ORDER BY schema_name",
            (list(stores),),
        ).fetchall()
        return [name for (name,) in rows]
    finally:
        raw.close()


def current_version(conn: PgConnection, store: str) -> int:
    if not conn.table_exists(VERSIONS):
        return 0
    row = conn.execute(f"SELECT version FROM {VERSIONS} WHERE store = $1", (store,)).fetchone()
    return row[0] if row else 0


def migrate(conn: PgConnection, store: str, migrations: list[list[str]]) -> int:
    """Bring the store to the newest version; one transaction, under an advisory lock so
    that two processes starting at once migrate it once."""
    if current_version(conn, store) == len(migrations):
        return len(migrations)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", (f"company_ai:{store}",))
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
            f"INSERT INTO {VERSIONS} (store, version) VALUES ($1, $2)"
            " ON CONFLICT (store) DO UPDATE SET version = excluded.version",
            (store, len(migrations)),
        )
    return len(migrations)
