"""The domain stores: one SQLite file per domain under one data directory.

Every connection runs in WAL mode with a busy timeout and foreign keys on, and every
store is migrated to the newest schema in `schema.MIGRATIONS` when it is opened for
writing. Transactions are explicit (`transaction()`), so a failure never leaves half
a batch behind. This module is on the read path of the CLI: it imports no third-party
package.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from company_ai.core.schema import DOMAINS, MIGRATIONS

DEFAULT_BUSY_TIMEOUT_MS = 5000


class StoreError(Exception):
    """A store could not be opened or written; the message says why and what to do."""


class DataDirError(StoreError):
    """The data directory is missing, not a directory, or not writable."""


class StoreBusyError(StoreError):
    """Another writer held the store past the busy timeout; nothing was written."""


class Stores:
    """The set of domain stores under `data_dir` (`crm.db`, `memory.db`, …)."""

    def __init__(self, data_dir: str | Path, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS):
        self.data_dir = Path(data_dir)
        self.busy_timeout_ms = busy_timeout_ms

    def path(self, domain: str) -> Path:
        if domain not in DOMAINS:
            raise ValueError(f"unknown store {domain!r}; the stores are {', '.join(DOMAINS)}")
        return self.data_dir / f"{domain}.db"

    @contextmanager
    def connect(self, domain: str, *, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        """Open one domain store; read-only connections never create or migrate anything."""
        conn = self.open(domain, readonly=readonly)
        try:
            yield conn
        finally:
            conn.close()

    def open(self, domain: str, *, readonly: bool = False) -> sqlite3.Connection:
        path = self.path(domain)
        if readonly:
            if not path.is_file():
                raise DataDirError(
                    f"no {domain} store at {path}: run `company-ai demo` for sample data, "
                    "or point COMPANY_AI_DATA_DIR at your data directory"
                )
            conn = _connect(f"file:{path}?mode=ro", self.busy_timeout_ms, uri=True)
        else:
            _ensure_writable_dir(self.data_dir)
            conn = _connect(str(path), self.busy_timeout_ms)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                migrate(conn, domain)
            except BaseException:
                conn.close()
                raise
        return conn

    def create_all(self) -> None:
        """Create and migrate every domain store (idempotent)."""
        for domain in DOMAINS:
            with self.connect(domain):
                pass


def _connect(target: str, busy_timeout_ms: int, *, uri: bool = False) -> sqlite3.Connection:
    try:
        # isolation_level=None: no implicit transactions; `transaction()` makes them.
        conn = sqlite3.connect(
            target, timeout=busy_timeout_ms / 1000, isolation_level=None, uri=uri
        )
    except sqlite3.OperationalError as exc:
        raise DataDirError(f"cannot open store {target}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys=ON")
    # NORMAL is durable against process crashes in WAL mode; only a power cut can lose
    # the last commits, and the file stays consistent either way.
    conn.execute("PRAGMA synchronous=NORMAL")
    # A 64 MiB page cache keeps the indexes of a large store in memory while a batch is
    # appended (the 2 MiB default thrashed past ~200k episodes; see BENCHMARKS.md).
    conn.execute("PRAGMA cache_size=-65536")
    return conn


def _ensure_writable_dir(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise DataDirError(f"data directory {data_dir} exists but is not a directory") from exc
    except NotADirectoryError as exc:
        raise DataDirError(f"data directory {data_dir}: a parent is not a directory") from exc
    except PermissionError as exc:
        raise DataDirError(f"cannot create data directory {data_dir}: permission denied") from exc
    probe = data_dir / ".write-probe"
    try:
        probe.touch()
        probe.unlink()
    except OSError as exc:
        reason = "read-only" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else exc
        raise DataDirError(f"data directory {data_dir} is not writable ({reason})") from exc


def migrate(conn: sqlite3.Connection, domain: str) -> int:
    """Bring `conn` to the newest schema version of `domain`; returns that version."""
    steps = MIGRATIONS[domain]
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > len(steps):
        raise StoreError(
            f"the {domain} store has schema version {current}, newer than this code "
            f"knows ({len(steps)}): upgrade company_ai before opening it"
        )
    if current == len(steps):
        return current
    with transaction(conn):
        # Re-read inside the write lock: another process may have migrated meanwhile.
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for version, statements in enumerate(steps[current:], start=current + 1):
            for statement in statements:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={version}")
    return len(steps)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: everything inside commits together or not at all."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise _explain(exc, conn) from exc
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError):
            raise _explain(exc, conn) from exc
        raise


def _explain(exc: sqlite3.OperationalError, conn: sqlite3.Connection) -> Exception:
    message = str(exc)
    if "locked" in message or "busy" in message:
        timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        return StoreBusyError(
            f"the store is locked by another writer and stayed locked past the busy "
            f"timeout ({timeout} ms); nothing was written, try again"
        )
    if "readonly" in message or "read-only" in message:
        return DataDirError(f"the store is read-only ({message}); nothing was written")
    return exc


def table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None
