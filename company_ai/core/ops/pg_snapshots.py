"""Snapshots of the stores that live in PostgreSQL: a logical dump per store, and its drill.

Each store's schema (`crm`, `memory`, …) is dumped with `pg_dump --schema=<store>
--format=custom` into the snapshot's staging folder. Every store on the server is counted
and dumped inside one exported snapshot (`pg_export_snapshot`, `pg_dump --snapshot`), so
the row counts in the manifest are exactly the dump's, and the stores agree with each
other, while writers keep writing. The drill restores a dump into a scratch database on
the same server, compares its row counts with the manifest, checks that the append-only
guards still refuse, and drops the scratch database.

The password never reaches argv, a log, the manifest or an error: the tools get the URL
without it and the password in PGPASSWORD; anything they print is scrubbed of it.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from company_ai.core.store import pg

SUFFIX = ".pgdump"
FORMAT = "pg_dump"  # a manifest entry's `format` for a store dumped from the server
# Where Debian puts each PostgreSQL version's client tools beside the ones on PATH.
BIN_GLOB = "/usr/lib/postgresql/*/bin"
TOOL_TIMEOUT_S = 3600  # a dump or restore that hangs this long is a failure, not a wait
# How long a dump waits for a table another session holds exclusively (a migration): it
# then fails clearly rather than hang the morning's jobs behind it.
LOCK_WAIT_MS = 60_000
# tgtype bits (PostgreSQL's pg_trigger.h): which events a trigger fires on.
_ROW, _DELETE, _UPDATE, _TRUNCATE = 1, 8, 16, 32
_EVENTS = (("UPDATE", _UPDATE), ("DELETE", _DELETE), ("TRUNCATE", _TRUNCATE))
# The append-only guards: triggers whose function refuses with the "append-only" words
# (the same words as SQLite's RAISE(ABORT, ...)), enabled.
_GUARDS = """
    SELECT c.relname, t.tgtype FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_proc p ON p.oid = t.tgfoid
    WHERE n.nspname = $1 AND NOT t.tgisinternal AND t.tgenabled <> 'D'
      AND p.prosrc LIKE '%append-only%'
    ORDER BY c.relname, t.tgname
"""


class PgSnapshotError(Exception):
    """A dump could not be made (a tool missing, the server unreachable, pg_dump failed);
    the message says why, without the password."""


def dump_name(domain: str) -> str:
    return f"{domain}{SUFFIX}"


def find_tool(name: str) -> Path:
    """PostgreSQL's client tool `name` on PATH, else the newest in /usr/lib/postgresql/*/bin."""
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    found = sorted(glob.glob(f"{BIN_GLOB}/{name}"), key=_version)
    if not found:
        raise PgSnapshotError(
            f"{name} is not on PATH nor in {BIN_GLOB}: the stores in PostgreSQL are dumped "
            f"and restored with PostgreSQL's client tools; install them (Debian: apt-get "
            f"install postgresql-client) or put {name} on PATH"
        )
    return Path(found[-1])


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def _split_secret(url: str, database: str = "") -> tuple[str, str]:
    """`url` without its password (and on `database` when given), and the password."""
    parts = urlsplit(url)
    password = parts.password or ""
    query = []
    for key, value in parse_qsl(parts.query):
        if key.lower() == "password":
            password = value
        else:
            query.append((key, value))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if parts.username is not None:
        netloc = f"{parts.netloc.rsplit('@', 1)[0].split(':', 1)[0]}@{netloc}"
    path = f"/{database}" if database else parts.path
    return urlunsplit((parts.scheme, netloc, path, urlencode(query), "")), password


def _scrub(text: str, password: str) -> str:
    text = text.strip()
    return text.replace(password, "***") if password else text


def _run(tool: Path, args: Sequence[str], url: str, password: str) -> None:
    """Run a client tool against the server; its error, scrubbed, as a PgSnapshotError."""
    env = {**os.environ, "PGCONNECT_TIMEOUT": str(pg.CONNECT_TIMEOUT_S)}
    if password:  # else the tools find it as libpq does: PGPASSWORD, ~/.pgpass
        env["PGPASSWORD"] = password
    try:
        done = subprocess.run(
            [str(tool), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=TOOL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PgSnapshotError(f"{tool.name} took over {TOOL_TIMEOUT_S} s at {url}") from None
    if done.returncode != 0:
        lines = _scrub(done.stderr, password).splitlines() or [f"exit code {done.returncode}"]
        raise PgSnapshotError(f"{tool.name} failed at {url}: {' / '.join(lines[-3:])}")


def _connect(url: str) -> Any:
    """A connection whose statements wait for a commit: a check that was not refused is
    rolled back."""
    import psycopg

    try:
        raw = pg.connect_raw(url)
    except psycopg.Error as exc:
        _, password = _split_secret(url)
        reason = _scrub(str(exc), password).splitlines() or [type(exc).__name__]
        raise PgSnapshotError(f"cannot reach PostgreSQL at {pg.redact(url)}: {reason[0]}") from None
    raw.autocommit = False
    return raw


def _guards(cursor: Any, schema: str) -> dict[str, dict[str, Any]]:
    """The append-only guards of `schema`: table -> the events refused, and whether a guard
    fires per row (then only a table with rows can show it refusing)."""
    cursor.execute(_GUARDS, (schema,))
    guards: dict[str, dict[str, Any]] = {}
    for table, tgtype in cursor.fetchall():
        guard = guards.setdefault(table, {"events": set(), "per_row": False})
        guard["events"] |= {event for event, bit in _EVENTS if tgtype & bit}
        guard["per_row"] = guard["per_row"] or bool(tgtype & _ROW)
    return guards


def _tables(cursor: Any, schema: str) -> dict[str, int]:
    """Rows per table of `schema` (its version table is bookkeeping, not content)."""
    cursor.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> $2"
        " ORDER BY tablename",
        (schema, pg.VERSIONS),
    )
    names = [name for (name,) in cursor.fetchall()]
    counts = {}
    for name in names:
        cursor.execute(f'SELECT count(*) FROM "{schema}"."{name}"')
        counts[name] = cursor.fetchone()[0]
    return counts


def _schema_version(cursor: Any, schema: str) -> int:
    cursor.execute("SELECT to_regclass($1) IS NOT NULL", (f'"{schema}".{pg.VERSIONS}',))
    if not cursor.fetchone()[0]:
        return 0
    cursor.execute(f'SELECT version FROM "{schema}".{pg.VERSIONS} WHERE store = $1', (schema,))
    row = cursor.fetchone()
    return row[0] if row else 0


class ServerSnapshot:
    """One consistent view of the server's stores, held open while they are dumped."""

    def __init__(self, url: str, pg_dump: Path):
        self.url, self.pg_dump = url, pg_dump
        self.target, self.password = _split_secret(url)
        self.raw = _connect(url)
        try:
            self.raw.autocommit = False
            cursor = self.raw.cursor()
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.execute(f"SET LOCAL lock_timeout = {int(LOCK_WAIT_MS)}")
            cursor.execute("SELECT pg_export_snapshot()")
            self.snapshot_id = cursor.fetchone()[0]
            cursor.execute("SELECT nspname FROM pg_namespace")
            self.schemas = {name for (name,) in cursor.fetchall()}
        except BaseException:
            self.raw.close()
            raise

    def dump(self, domain: str, staging: Path) -> dict:
        """Dump the store `domain` into `staging`: its manifest entry (without the file's
        size and checksum, which the caller adds as for any copy)."""
        cursor = self.raw.cursor()
        try:
            tables = _tables(cursor, domain)
        except Exception as exc:  # a lock held past LOCK_WAIT_MS, the connection lost
            reason = str(exc).strip().splitlines()[0]
            raise PgSnapshotError(
                f"cannot count the {domain} store at {pg.redact(self.url)}: {reason}"
            ) from None
        guards = _guards(cursor, domain)
        cursor.execute(
            "SELECT e.extname FROM pg_extension e JOIN pg_namespace n"
            " ON n.oid = e.extnamespace WHERE n.nspname = $1 ORDER BY e.extname",
            (domain,),
        )
        # An extension made in the store's schema (recall's unaccent) goes with it.
        extensions = [f"--extension={name}" for (name,) in cursor.fetchall()]
        target = staging / dump_name(domain)
        _run(
            self.pg_dump,
            [
                f"--dbname={self.target}",
                f"--schema={domain}",
                *extensions,
                "--format=custom",
                "--no-owner",
                "--no-privileges",
                f"--snapshot={self.snapshot_id}",
                f"--lock-wait-timeout={int(LOCK_WAIT_MS)}",
                f"--file={target}",
            ],
            pg.redact(self.url),
            self.password,
        )
        return {
            "file": target.name,
            "domain": domain,
            "format": FORMAT,
            "server": pg.redact(self.url),
            "schema_version": _schema_version(cursor, domain),
            "tables": tables,
            "append_only": {t: sorted(g["events"]) for t, g in guards.items()},
        }

    def close(self) -> None:
        with suppress(Exception):
            self.raw.rollback()
        self.raw.close()


@contextmanager
def server_snapshot(url: str) -> Iterator[ServerSnapshot]:
    snapshot = ServerSnapshot(url, find_tool("pg_dump"))
    try:
        yield snapshot
    finally:
        snapshot.close()


def drill(dump: Path, entry: dict, url: str) -> list[str]:
    """Restore `dump` into a scratch database on the server at `url` and check it against
    its manifest `entry`: row counts, and the append-only guards refusing. The scratch
    database is dropped afterwards. The problems found, in words (empty when it holds)."""
    pg_restore = find_tool("pg_restore")
    scratch = f"company_ai_drill_{os.getpid()}_{secrets.token_hex(4)}"
    admin = _connect(url)
    admin.autocommit = True
    try:
        try:
            admin.cursor().execute(f'CREATE DATABASE "{scratch}"')
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0]
            raise PgSnapshotError(
                f"cannot make a scratch database for the drill at {pg.redact(url)}: {reason}"
                " (the user needs CREATEDB)"
            ) from None
        try:
            target, password = _split_secret(url, scratch)
            _run(
                pg_restore,
                [
                    f"--dbname={target}",
                    "--exit-on-error",
                    "--single-transaction",
                    "--no-owner",
                    "--no-privileges",
                    str(dump),
                ],
                pg.redact(url),
                password,
            )
            return _check(_connect(urlunsplit(urlsplit(url)._replace(path=f"/{scratch}"))), entry)
        finally:
            admin.cursor().execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')
    finally:
        admin.close()


def _check(raw: Any, entry: dict) -> list[str]:
    schema = entry["domain"]
    try:
        cursor = raw.cursor()
        counts = _tables(cursor, schema)
        problems = [
            f"table {table}: {counts.get(table)} rows, the manifest says {expected}"
            for table, expected in entry["tables"].items()
            if counts.get(table) != expected
        ]
        version = _schema_version(cursor, schema)
        if version != entry["schema_version"]:
            problems.append(
                f"schema version {version}, the manifest says {entry['schema_version']}"
            )
        raw.rollback()
        guards = _guards(cursor, schema)
        raw.rollback()
        for table, events in entry.get("append_only", {}).items():
            guard = guards.get(table, {"events": set(), "per_row": False})
            for event in events:
                if event not in guard["events"]:
                    problems.append(f"table {table}: its append-only guard on {event} is gone")
                elif not (guard["per_row"] and counts.get(table, 0) == 0):
                    # A guard per row shows only on a row: an empty table proves nothing.
                    problems += _refuses(raw, schema, table, event)
        return problems
    finally:
        raw.close()


def _refuses(raw: Any, schema: str, table: str, event: str) -> list[str]:
    """Whether `event` on `table` is refused as append-only (tried, then rolled back)."""
    cursor = raw.cursor()
    cursor.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0"
        " AND NOT attisdropped AND attidentity = '' AND attgenerated = '' ORDER BY attnum"
        " LIMIT 1",
        (f'"{schema}"."{table}"',),
    )
    column = cursor.fetchone()[0]
    statement = {
        "UPDATE": f'UPDATE "{schema}"."{table}" SET "{column}" = "{column}"',
        "DELETE": f'DELETE FROM "{schema}"."{table}"',
        "TRUNCATE": f'TRUNCATE "{schema}"."{table}"',
    }[event]
    try:
        cursor.execute(statement)
    except Exception as exc:
        raw.rollback()
        if "append-only" in str(exc):
            return []
        return [f"table {table}: {event} failed, but not as append-only: {str(exc).strip()}"]
    raw.rollback()
    return [f"table {table}: {event} was not refused: its append-only guard does not hold"]
