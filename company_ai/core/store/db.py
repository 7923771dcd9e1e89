"""The domain stores: one SQLite file per domain under one data directory, or every
domain in one PostgreSQL database, a schema per domain (`Stores(database_url=...)`,
`core/store/pg.py`): the same code reads and writes both through the same calls.

Every connection runs in WAL mode with a busy timeout and foreign keys on, and every
store is migrated to the newest schema in `schema.MIGRATIONS` when it is opened for
writing. Transactions are explicit (`transaction()`), so a failure never leaves half
a batch behind. This module is on the read path of the CLI: it imports no third-party
package.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from company_ai.core.store import pg
from company_ai.core.store.pg_schema import PG_MIGRATIONS
from company_ai.core.store.schema import DOMAINS, MIGRATIONS, Store

DEFAULT_BUSY_TIMEOUT_MS = 5000


class StoreError(Exception):
    """A store could not be opened or written; the message says why and what to do."""


class DataDirError(StoreError):
    """The data directory is missing, not a directory, or not writable."""


class StoreBusyError(StoreError):
    """Another writer held the store past the busy timeout; nothing was written."""


class Stores:
    """The set of domain stores under `data_dir` (`crm.db`, `memory.db`, …), or, with a
    `database_url`, in that PostgreSQL database (the schema `crm`, `memory`, …); the data
    directory then still holds what is not a store (cursors, the outbox, the vectors)."""

    def __init__(
        self,
        data_dir: str | Path,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        database_url: str = "",
        chroma_url: str = "",
    ):
        self.data_dir = Path(data_dir)
        # The Chroma server holding the vector memory ("": its files in <data dir>/vectors/).
        self.chroma_url = chroma_url.strip()
        self.busy_timeout_ms = busy_timeout_ms
        self.database_url = database_url.strip()
        if self.database_url:
            try:
                pg.check_url(self.database_url)
            except pg.PgStoreError as exc:
                raise StoreError(str(exc)) from None
        self._local_checked = False  # the data dir is not on a network filesystem
        # The stores on the server: every domain with a Postgres schema.
        self.urls: dict[Store, str] = (
            {Store(d): self.database_url for d in PG_MIGRATIONS} if self.database_url else {}
        )

    def exists(self, domain: Store) -> bool:
        """Whether the store exists yet: a server store always does (reaching it may fail)."""
        return domain in self.urls or self.path(domain).is_file()

    def reader(self, domain: Store) -> Any:
        """A read-only connection to the store (the caller closes it), or None when the
        store does not exist yet."""
        if domain in self.urls:
            try:
                server = pg.connect(self.urls[domain], domain, PG_MIGRATIONS[domain], readonly=True)
                server.data_dir = self.data_dir
                return server
            except pg.PgNoSchemaError:
                return None
            except pg.PgStoreError as exc:
                raise StoreError(str(exc)) from None
        return self.open(domain, readonly=True) if self.exists(domain) else None

    def path(self, domain: Store) -> Path:
        if domain not in DOMAINS:
            raise ValueError(f"unknown store {domain!r}; the stores are {', '.join(DOMAINS)}")
        return self.data_dir / f"{domain}.db"

    @contextmanager
    def connect(self, domain: Store, *, readonly: bool = False) -> Iterator[Any]:
        """Open one domain store; read-only connections never create or migrate anything."""
        conn = self.open(domain, readonly=readonly)
        try:
            yield conn
        finally:
            conn.close()

    def open(self, domain: Store, *, readonly: bool = False) -> Any:
        """A sqlite3 connection, or for a store in `urls` a `pg.PgConnection` (same calls)."""
        if domain in self.urls:
            try:
                server = pg.connect(
                    self.urls[domain], domain, PG_MIGRATIONS[domain], readonly=readonly
                )
                server.data_dir = self.data_dir
                return server
            except pg.PgStoreError as exc:
                raise StoreError(str(exc)) from None
        path = self.path(domain)
        if not self._local_checked:
            refuse_network_filesystem(self.data_dir)
            self._local_checked = True
        if readonly:
            if not path.is_file():
                raise DataDirError(
                    f"no {domain} store at {path}: run `company-ai demo` for sample data, "
                    "or point COMPANY_AI_DATA_DIR at your data directory"
                )
            return _open_readonly(path, self.busy_timeout_ms)
        _ensure_writable_dir(self.data_dir)
        try:
            conn = _connect(str(path), self.busy_timeout_ms)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                migrate(conn, domain)
            except BaseException:
                conn.close()
                raise
        except sqlite3.OperationalError as exc:
            # Outside transaction(), e.g. another process holds the store in EXCLUSIVE
            # locking mode (which blocks even readers): explain it as transaction() does.
            raise _explain(exc, self.busy_timeout_ms) from exc
        return conn

    def create_all(self) -> None:
        """Create and migrate every domain store (idempotent)."""
        for domain in DOMAINS:
            with self.connect(domain):
                pass


class ReadOnlyStores(Stores):
    """`Stores` for readers that must never write (the MCP server): every store opens
    read-only, SQLite files through a `mode=ro` URI with `PRAGMA query_only=ON` (so not
    even a temporary table), a PostgreSQL store in a read-only session; asking for a
    writer is an error."""

    @contextmanager
    def connect(self, domain: Store, *, readonly: bool = True) -> Iterator[Any]:
        with super().connect(domain, readonly=readonly) as conn:
            yield conn

    def open(self, domain: Store, *, readonly: bool = True) -> Any:
        if not readonly:
            raise StoreError(f"the {domain} store is open read-only here: nothing can write it")
        conn = super().open(domain, readonly=True)
        if isinstance(conn, sqlite3.Connection):
            try:
                conn.execute("PRAGMA query_only=ON")
            except BaseException:
                conn.close()
                raise
        return conn


class Connection(sqlite3.Connection):
    """A sqlite3 connection whose statements are written with `$1`, `$2` … parameters.

    `$1` is SQLite's own syntax for a named parameter (named "1") and PostgreSQL's for a
    positional one, so one statement text runs on both stores as it is written: nothing
    reads it to place the parameters. A sequence binds here as `$1` = its first item,
    `$2` = its second…; a number the statement names without its value is refused by
    SQLite (a surplus value only by PostgreSQL, whose store tests run too)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _by_number(parameters))

    def executemany(self, sql: str, rows: Iterable[Any], /) -> sqlite3.Cursor:
        return super().executemany(sql, (_by_number(row) for row in rows))


class Positional(tuple[Any, ...]):
    """Parameters bound by position, as they come, for a statement numbered in SQLite's
    own `?NNN` (`numbered`): a many-row INSERT, whose thousand parameters bound by name
    would cost the square of their count (SQLite finds each name along a list)."""


def numbered(conn: Any, n: int) -> str:
    """The placeholder of parameter `n` in this driver's own numbered style."""
    return f"${n}" if dialect(conn) == "postgres" else f"?{n}"


def _by_number(parameters: Any) -> Any:
    if isinstance(parameters, Mapping | Positional) or not parameters:
        return parameters
    return dict(zip(_names(len(parameters)), parameters, strict=True))


@lru_cache(maxsize=64)
def _names(count: int) -> tuple[str, ...]:
    return tuple(str(n) for n in range(1, count + 1))


class Parameters(list[Any]):
    """A statement's parameters while its text is composed: `mark(value)` adds one and
    returns its placeholder (`$3`), `marks(values)` a list's (`$4, $5`; NULL for none), so
    fragments number themselves in whatever order the text is put together."""

    def mark(self, value: Any) -> str:
        self.append(value)
        return f"${len(self)}"

    def marks(self, values: Iterable[Any]) -> str:
        return ", ".join(self.mark(v) for v in values) or "NULL"


def _connect(target: str, busy_timeout_ms: int, *, uri: bool = False) -> sqlite3.Connection:
    try:
        # isolation_level=None: no implicit transactions; `transaction()` makes them.
        conn = sqlite3.connect(
            target,
            timeout=busy_timeout_ms / 1000,
            isolation_level=None,
            uri=uri,
            factory=Connection,
        )
    except sqlite3.OperationalError as exc:
        raise DataDirError(f"cannot open store {target}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys=ON")
        # NORMAL is durable against process crashes in WAL mode; only a power cut can lose
        # the last commits, and the file stays consistent either way.
        conn.execute("PRAGMA synchronous=NORMAL")
        # A 64 MiB page cache keeps the indexes of a large store in memory while a batch is
        # appended (the 2 MiB default thrashed past ~200k episodes; see BENCHMARKS.md).
        conn.execute("PRAGMA cache_size=-65536")
        # The first read opens the file for real: a lock or a missing -shm shows up here.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _open_readonly(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """A read-only connection, also to a WAL store in a folder this process cannot write.

    A WAL store is read through its `-shm` index, which SQLite must be able to create or
    write; in a read-only folder (a restored copy, a chmod'ed one, a read-only mount) it
    cannot, and even the first PRAGMA fails. There, and only there, the file is opened
    with `immutable=1`: SQLite then takes no locks and ignores any `-wal`. The tradeoff:
    a writer changing the file meanwhile could make the reader see a torn state, and
    commits still in a `-wal` would be silently missing. A store this process may not
    write is read, not kept, by it (a snapshot, a mount, another user's copy): the first
    risk is accepted; the second is refused below.
    """
    uri = path.resolve().as_uri()
    try:
        return _connect(f"{uri}?mode=ro", busy_timeout_ms, uri=True)
    except sqlite3.OperationalError as exc:
        if _is_lock(exc):
            raise _explain(exc, busy_timeout_ms) from exc
        if _writable(path) and _writable(path.parent):
            raise DataDirError(f"cannot read the store {path}: {exc}") from exc
        wal = path.with_name(path.name + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:
            raise DataDirError(
                f"{wal} holds commits that cannot be read in a read-only folder: copy "
                f"{path.name} with its -wal into a writable folder and read it there"
            ) from exc
    try:
        return _connect(f"{uri}?mode=ro&immutable=1", busy_timeout_ms, uri=True)
    except sqlite3.OperationalError as exc:
        raise DataDirError(f"cannot read the store {path}: {exc}") from exc


# Filesystems reached over a network: SQLite's locks and WAL's shared-memory index are not
# safe there (two machines can both believe they hold the write lock). FUSE types are
# named `fuse.<name>`.
NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "afs", "ncpfs", "ceph", "glusterfs", "lustre",
     "fuse.sshfs", "fuse.glusterfs", "fuse.cephfs", "fuse.s3fs", "fuse.rclone", "fuse.gcsfuse"}
)  # fmt: skip
MOUNTINFO = Path("/proc/self/mountinfo")


def filesystem_of(path: Path, mountinfo: str | None = None) -> str:
    """The type of the filesystem `path` is on, from Linux's mount table ("" elsewhere, or
    when the table cannot be read): the mount whose point is the longest prefix."""
    if mountinfo is None:
        try:
            mountinfo = MOUNTINFO.read_text()
        except OSError:
            return ""
    target = _nearest_existing(path)
    best, best_type = "", ""
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        point = _unescape_mount(fields[4])
        fstype = line.split(" - ", 1)[1].split()[0]
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, best_type = point, fstype
    return best_type


def refuse_network_filesystem(data_dir: Path, mountinfo: str | None = None) -> None:
    """A data directory on NFS, SMB or another network filesystem is refused: SQLite there
    can lose or corrupt commits. The stores belong in PostgreSQL then."""
    fstype = filesystem_of(data_dir, mountinfo)
    if fstype in NETWORK_FILESYSTEMS:
        raise DataDirError(
            f"the data directory {data_dir} is on a network filesystem ({fstype}), where "
            "SQLite's locking and WAL mode are not safe: put the stores in PostgreSQL "
            "(COMPANY_AI_DATABASE_URL) or the data directory on a local disk"
        )


def _nearest_existing(path: Path) -> str:
    """`path` with its existing part resolved (links followed): a data dir not made yet is
    on the filesystem of its nearest existing parent."""
    path = Path(os.path.abspath(path))
    for candidate in (path, *path.parents):
        if candidate.exists():
            return str(candidate.resolve() / path.relative_to(candidate))
    return str(path)


def _unescape_mount(field: str) -> str:
    # The kernel writes space, tab, newline and backslash in a mount point as \ooo.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def _ensure_writable_dir(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise DataDirError(f"data directory {data_dir} exists but is not a directory") from exc
    except NotADirectoryError as exc:
        raise DataDirError(f"data directory {data_dir}: a parent is not a directory") from exc
    except PermissionError as exc:
        raise DataDirError(f"cannot create data directory {data_dir}: permission denied") from exc
    # A name of this process and thread: two writers opening stores at once each probe
    # their own file (one would delete the other's mid-probe).
    probe = data_dir / f".write-probe-{os.getpid()}-{threading.get_ident()}"
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


def dialect(conn: Any) -> str:
    """`sqlite` or `postgres`: for the few statements the two spell differently."""
    return getattr(conn, "dialect", "sqlite")


def data_dir_of(conn: Any) -> Path | None:
    """The data directory of a store's connection (what is not a store lives there: the
    tombstones, the cursors); None for an in-memory SQLite store."""
    if dialect(conn) == "postgres":
        return conn.data_dir
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    return Path(path).parent if path else None


def indexed_by(conn: Any, index: str) -> str:
    """SQLite's `INDEXED BY` hint (it holds the planner to a covering index); nothing on
    PostgreSQL, which has no hints."""
    return f" INDEXED BY {index}" if dialect(conn) == "sqlite" else ""


def max_parameters(conn: Any) -> int:
    """How many parameters one statement may have on this connection."""
    if dialect(conn) == "postgres":
        return pg.MAX_PARAMETERS
    return conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)


@contextmanager
def transaction(conn: Any) -> Iterator[Any]:
    """One write transaction: everything inside commits together or not at all."""
    if dialect(conn) == "postgres":
        with conn.transaction():
            yield conn
        return
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise _explain(exc, timeout) from exc
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError):
            raise _explain(exc, timeout) from exc
        raise


def _is_lock(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _explain(exc: sqlite3.OperationalError, timeout_ms: int) -> Exception:
    message = str(exc)
    if _is_lock(exc):
        return StoreBusyError(
            f"the store is locked by another process and stayed locked past the busy "
            f"timeout ({timeout_ms} ms); nothing was written, try again"
        )
    if "readonly" in message or "read-only" in message:
        return DataDirError(f"the store is read-only ({message}); nothing was written")
    return exc


def table_exists(conn: Any, name: str) -> bool:
    if dialect(conn) == "postgres":
        return conn.table_exists(name)
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1", (name,)
    ).fetchone()
    return row is not None


def column_names(conn: Any, table: str) -> set[str]:
    """The columns `table` has (none when it does not exist): readers of a store not
    migrated yet ask before naming a newer column."""
    if dialect(conn) == "postgres":
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = $1",
            (table,),
        )
        return {row[0] for row in rows}
    return {row[1] for row in conn.execute("SELECT * FROM pragma_table_info($1)", (table,))}
