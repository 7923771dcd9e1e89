"""Snapshots of the domain stores and the restore drill.

`take_snapshot` copies every domain store with SQLite's online backup API (consistent
while writers keep writing) into a staging folder, writes `manifest.json` (file, size,
sha256, row counts per table) and only then renames the folder to its day, so a
published snapshot is always whole and a run that dies half way leaves the previous ones
as they were.

Each store is judged alone against its own last good generation (`judge`): a table that
vanished, a table or a store whose rows fell sharply, a store file gone from the data
directory or one that is not a readable SQLite database is *set aside*: its copy (when
there is one) is kept under `<day>/suspect/`, never as the day's copy, and the manifest's
`last_good` still names the earlier day that holds its last good generation; the other
stores are taken as usual. `allow_shrink=True` says the stores shrank on purpose: their
copies become the new last good ones. Retention keeps the newest `keep` days and, always,
every day that holds a store's last good generation. `restore_drill` restores each
store's last good generation into a temporary folder and proves it: checksums,
`PRAGMA integrity_check`, row counts against the manifest, and that it holds rows at all.

A store in PostgreSQL (`Stores.urls`) is snapshotted as a logical dump of its schema,
`<store>.pgdump`, beside the SQLite copies, with the same manifest entry, judged and kept
the same way; the drill restores it into a scratch database on the server
(`pg_snapshots`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from company_ai.core.files import write_atomic
from company_ai.core.ops import pg_snapshots
from company_ai.core.ops.pg_snapshots import PgSnapshotError
from company_ai.core.store import DOMAINS, Stores
from company_ai.core.store.pg import redact
from company_ai.core.times import to_iso

MANIFEST = "manifest.json"
SUSPECT = "suspect"  # <day>/suspect/<store>: a copy set aside, never a restore's source
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# How a store is judged against its own last good generation (`judge`). The stores mostly
# grow: episodes are append-only, contacts deleted upstream are marked, never removed, and
# a forget removes one person's few rows. So a store is set aside when
# - a table it had is gone: no migration drops a table (a released version is never
#   edited), so a vanished table is a damaged store or the wrong file;
# - a table that had at least MIN_TABLE_ROWS rows now has fewer than MIN_ROWS_SHARE of
#   them: emptied or cut (1,000 -> 0), not cleaned up; smaller tables (cursors, marks, a
#   few drafts waiting) move by whole rows that mean nothing alone;
# - its content rows in all fell under MIN_ROWS_SHARE of the last good ones (a store of
#   many small tables, none big enough to judge alone).
# Halving overnight means a lost or wrong store; a real clean-up is rare and says so
# (allow_shrink). Each store is judged alone: a summed rule let an empty crm.db through
# because the memory store outweighs it.
MIN_ROWS_SHARE = 0.5
MIN_TABLE_ROWS = 20
# Caches emptied on purpose and filled again from another table: the index's vectors are
# all dropped when the embedding model changes, then embedded again.
REBUILT_TABLES = frozenset({"search_vectors"})
# SQLite's answers when a store file is not (or no longer) a whole database: the store is
# set aside. Any other error fails the whole snapshot (a full disk, no permission), unless
# the store itself cannot be read either (`_readable`: a short read of a cut file, …).
_UNREADABLE = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


class SnapshotError(Exception):
    """The snapshot could not be written; nothing was published. The message says why."""


@dataclass(frozen=True)
class Manifest:
    """One day's generation: `files` are the stores whose copy in `folder` is good;
    `suspect` the stores set aside (with `problems`, and `kept` when their copy is under
    `suspect/`); `last_good` names, for every store, the day that holds its last good copy
    (this day, or an earlier one when the store was set aside)."""

    day: str
    folder: Path
    files: list[dict]
    suspect: list[dict] = field(default_factory=list)
    last_good: dict[str, str] = field(default_factory=dict)

    @property
    def bytes(self) -> int:
        return sum(f["bytes"] for f in self.files)

    @property
    def rows(self) -> int:
        return total_rows(self.files)

    @property
    def refused(self) -> dict[str, str]:
        """Each store set aside, with why, in words."""
        return {s["file"]: "; ".join(s["problems"]) for s in self.suspect}


_SHADOW_SUFFIXES = ("_config", "_data", "_idx", "_docsize", "_content", "_segments", "_segdir")


def content_tables(tables: dict[str, int]) -> dict[str, int]:
    """The tables of content: a full-text index's own tables (`search_fts_data` beside
    `search_fts`) are left out, as they hold rows even in a store with no data."""
    return {
        t: n
        for t, n in tables.items()
        if not any(t.endswith(s) and t[: -len(s)] in tables for s in _SHADOW_SUFFIXES)
    }


def total_rows(files: list[dict]) -> int:
    """Rows of content in all the files (`content_tables`)."""
    return sum(sum(content_tables(f["tables"]).values()) for f in files)


def _copy_db(source: Path, target: Path) -> None:
    """One store copied page by page with the online backup API, as a standalone file."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # the copy needs no -wal beside it
        finally:
            dst.close()
    finally:
        src.close()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def row_counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def _user_version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def _integrity(path: Path, pragma: str) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute(f"PRAGMA {pragma}")]
    finally:
        conn.close()


def explain_os_error(exc: BaseException) -> str:
    """Why a write failed, in words: "the disk is full", "it is read-only", …"""
    code = getattr(exc, "errno", None)
    if code == errno.ENOSPC or "full" in str(exc):
        return "the disk is full"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or "readonly" in str(exc):
        return "it is read-only"
    if code in (errno.ENOTDIR, errno.EEXIST):
        return "a part of the path is a file, not a folder"
    return f"{type(exc).__name__}: {exc}"


def take_snapshot(
    stores: Stores,
    root: Path,
    day: str,
    *,
    keep: int,
    now: datetime,
    allow_shrink: bool = False,
) -> Manifest:
    """Snapshot every existing domain store into `root/<day>/`; keep the newest `keep` days
    and every day that holds a store's last good generation.

    Each store is judged alone (`judge`); one set aside keeps its last good generation and
    is named in the manifest's `suspect` with why; the others are taken. `allow_shrink`
    takes every readable store as the new last good one (a store gone from the data
    directory is then dropped). Refused (SnapshotError, nothing published) when the data
    directory holds no store at all, or when the copies cannot be written.
    """
    root = Path(root)
    on_server = [domain for domain in DOMAINS if domain in stores.urls]
    # One consistent view of the server's stores, held while they are dumped.
    held = pg_snapshots.server_snapshot(stores.database_url) if on_server else nullcontext()
    try:
        with held as server:
            found = [d for d in on_server if server and d in server.schemas] + [
                d for d in DOMAINS if d not in on_server and stores.path(d).is_file()
            ]
            if not found:
                where = f"{stores.data_dir}" + (
                    f" nor in {redact(stores.database_url)}" if on_server else ""
                )
                raise SnapshotError(
                    f"there is no store in {where} to snapshot: is COMPANY_AI_DATA_DIR "
                    f"the right folder? {_NOTHING}"
                )
            files, suspect, last_good = _take_all(
                stores, server, root, day, now=now, allow_shrink=allow_shrink
            )
    except PgSnapshotError as exc:  # the server or pg_dump could not be reached
        raise SnapshotError(
            f"cannot snapshot the stores in PostgreSQL: {exc}. {_NOTHING}"
        ) from None
    prune(root, keep)
    return Manifest(day, root / day, files, suspect, last_good)


_NOTHING = "Nothing was published"


def _take_all(
    stores: Stores,
    server: pg_snapshots.ServerSnapshot | None,
    root: Path,
    day: str,
    *,
    now: datetime,
    allow_shrink: bool,
) -> tuple[list[dict], list[dict], dict[str, str]]:
    """Take every store into a staging folder and publish it as `root/<day>`."""
    staging = root / f".{day}.partial-{os.getpid()}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        _recover(root)
        before = baselines(root)
        staging.mkdir()
        files: list[dict] = []
        suspect: list[dict] = []
        last_good: dict[str, str] = {}
        for domain in DOMAINS:
            if domain in stores.urls:
                name = pg_snapshots.dump_name(domain)
                present = server is not None and domain in server.schemas
                where = f"the database {redact(stores.database_url)}"
            else:
                name = stores.path(domain).name
                present = stores.path(domain).is_file()
                where = f"the data directory {stores.data_dir}"
            base = before.get(name)
            problems: list[str] = []
            if present:
                if server is not None and domain in stores.urls:
                    entry = _dump(server, staging, str(domain))
                else:
                    entry, problems = _take(stores.path(domain), staging, str(domain))
                if base and not problems and not allow_shrink:
                    problems = judge(base[1], base[0], entry)
            elif base and not allow_shrink:
                entry = {"file": name, "domain": str(domain)}
                problems = [f"{name} is not in {where}"]
            else:
                continue
            if not problems:
                files.append(entry)
                last_good[name] = day
                continue
            suspect.append(_set_aside(staging, entry, problems))
            if base:
                good_day, good = base
                if good_day == day:  # a retake of the day: its good copy goes on with it
                    shutil.copy2(root / day / name, staging / name)
                    files.append(good)
                last_good[name] = good_day
        manifest = {
            "day": day,
            "taken_at": to_iso(now),
            "files": files,
            "suspect": suspect,
            "last_good": last_good,
        }
        write_atomic(staging / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
        _publish(staging, root / day)
    except PgSnapshotError as exc:
        raise SnapshotError(
            f"cannot snapshot the stores in PostgreSQL: {exc}. {_NOTHING}"
        ) from None
    except (OSError, sqlite3.Error) as exc:
        raise SnapshotError(
            f"cannot write the snapshot of {day} into {root}: {explain_os_error(exc)}. Nothing "
            "was published; free space there or point COMPANY_AI_SNAPSHOT_DIR at a writable "
            "folder"
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # whatever was not published
    return files, suspect, last_good


def _dump(server: pg_snapshots.ServerSnapshot, staging: Path, domain: str) -> dict:
    """Dump one store from the server into `staging`: its manifest entry."""
    entry = server.dump(domain, staging)
    target = staging / entry["file"]
    return {**entry, "bytes": target.stat().st_size, "sha256": sha256_file(target)}


def _take(source: Path, staging: Path, domain: str) -> tuple[dict, list[str]]:
    """Copy one store into `staging`: its manifest entry, and why it is unfit if it is."""
    target = staging / source.name
    try:
        _copy_db(source, target)
        tables = row_counts(target)
        verdict = _integrity(target, "quick_check")
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorname", None) not in _UNREADABLE and _readable(source):
            raise  # the store reads: the copy could not be written (a full disk, …)
        target.unlink(missing_ok=True)
        return {"file": source.name, "domain": domain}, [
            f"{source.name} is not a readable SQLite database ({exc})"
        ]
    entry = {
        "file": source.name,
        "domain": domain,
        "bytes": target.stat().st_size,
        "sha256": sha256_file(target),
        "tables": tables,
        "schema_version": _user_version(target),
    }
    if verdict != ["ok"]:
        return entry, [f"{source.name}: quick_check says {'; '.join(verdict[:3])}"]
    return entry, []


def _readable(source: Path) -> bool:
    """Whether SQLite can read the store's schema at all (an error copying it that this
    survives is the copy's, not the store's)."""
    try:
        conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return False
    return True


def _set_aside(staging: Path, entry: dict, problems: list[str]) -> dict:
    """Move a judged-bad copy under `suspect/` (it is evidence, never a restore's source)."""
    copy = staging / entry["file"]
    kept = None
    if copy.is_file():
        (staging / SUSPECT).mkdir(exist_ok=True)
        kept = f"{SUSPECT}/{entry['file']}"
        os.replace(copy, staging / kept)
    return {**entry, "problems": problems, "kept": kept}


def judge(last: dict, last_day: str, entry: dict) -> list[str]:
    """Why the copy `entry` of a store is worse than its last good generation `last` (taken
    on `last_day`): vanished tables, tables or a store whose rows fell sharply (the rule
    beside MIN_ROWS_SHARE). Empty when it is no worse."""
    was, now = content_tables(last["tables"]), content_tables(entry["tables"])
    problems = [
        f"table {t} vanished (it had {n:,} rows on {last_day})"
        for t, n in was.items()
        if t not in now
    ]
    problems += [
        f"table {t}: {now[t]:,} rows, under {MIN_ROWS_SHARE:.0%} of the {n:,} on {last_day}"
        for t, n in was.items()
        if t in now
        and t not in REBUILT_TABLES
        and n >= MIN_TABLE_ROWS
        and now[t] < MIN_ROWS_SHARE * n
    ]
    rows_was = sum(n for t, n in was.items() if t not in REBUILT_TABLES)
    rows_now = sum(n for t, n in now.items() if t not in REBUILT_TABLES)
    if not problems and rows_was >= MIN_TABLE_ROWS and rows_now < MIN_ROWS_SHARE * rows_was:
        problems.append(
            f"{rows_now:,} rows in all, under {MIN_ROWS_SHARE:.0%} of the {rows_was:,} on"
            f" {last_day}"
        )
    return problems


def baselines(root: Path) -> dict[str, tuple[str, dict]]:
    """Each store's last good generation, `file -> (day, its manifest entry)`, as the
    newest readable manifest that names any says (an empty one is no baseline). A store
    whose named day is gone or unreadable has none, and is taken as a first snapshot."""
    root = Path(root)
    for day in reversed(snapshot_days(root)):
        try:
            newest = load_manifest(root / day)
        except (OSError, ValueError, KeyError):
            continue
        if newest.last_good:
            return {
                name: (good_day, entry)
                for name, good_day in newest.last_good.items()
                if (entry := good_entry(root, good_day, name)) is not None
            }
    return {}


def good_entry(root: Path, day: str, name: str) -> dict | None:
    """The manifest entry of store `name` in the generation of `day`, if it is good there."""
    try:
        manifest = load_manifest(Path(root) / day)
    except (OSError, ValueError, KeyError):
        return None
    return next((f for f in manifest.files if f["file"] == name), None)


def _recover(root: Path) -> None:
    """Undo what a run killed mid-snapshot left: its staging folder is removed, and a day
    it had moved aside to replace (`_publish`) is put back if the new one never arrived."""
    for old in root.glob(".*.old-*"):
        final = root / old.name[1:].split(".old-")[0]
        if final.exists():
            shutil.rmtree(old)
        else:
            os.replace(old, final)
    for stale in root.glob(".*.partial-*"):
        shutil.rmtree(stale)


def _publish(staging: Path, final: Path) -> None:
    """Replace `final` with `staging` by renames, so a reader sees old or new, never half."""
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    os.replace(staging, final)
    shutil.rmtree(old, ignore_errors=True)


def snapshot_days(root: Path) -> list[str]:
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and _DAY.match(p.name))


def prune(root: Path, keep: int) -> list[str]:
    """Remove dated snapshot folders beyond the newest `keep`, except a day that holds a
    store's last good generation (the newest manifest's `last_good`); the days removed."""
    if keep < 1:
        raise ValueError("keep at least one snapshot")
    held = {day for day, _ in baselines(root).values()}
    removed = [day for day in snapshot_days(root)[:-keep] if day not in held]
    for day in removed:
        shutil.rmtree(Path(root) / day)
    return removed


def load_manifest(folder: Path) -> Manifest:
    data = json.loads((Path(folder) / MANIFEST).read_text())
    files = data["files"]
    # A manifest written before stores were judged alone: every file in it is good there.
    last_good = data.get("last_good", {f["file"]: data["day"] for f in files})
    return Manifest(data["day"], Path(folder), files, data.get("suspect", []), last_good)


@dataclass
class DrillReport:
    snapshot: str | None
    restored: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.snapshot is not None and not self.problems


def restore_drill(root: Path, database_url: str = "") -> DrillReport:
    """Restore each store's last good generation, as the latest snapshot's manifest names
    it, into a temporary folder and check every file in it; a store dumped from PostgreSQL
    is restored into a scratch database on the server at `database_url`, then dropped."""
    days = snapshot_days(root)
    if not days:
        return DrillReport(None, problems=[f"no snapshot in {root}"])
    report = DrillReport(days[-1])
    folder = Path(root) / days[-1]
    try:
        manifest = load_manifest(folder)
    except (OSError, ValueError, KeyError) as exc:
        report.problems.append(f"{folder}/{MANIFEST} is unreadable: {exc}")
        return report
    if not manifest.last_good:
        report.problems.append("the snapshot holds no store")
        return report
    plan = []
    for name, day in sorted(manifest.last_good.items()):
        entry = good_entry(Path(root), day, name)
        if entry is None:
            report.problems.append(f"{name}: its last good generation, {day}, is gone")
        else:
            plan.append((day, entry))
    if plan and total_rows([entry for _, entry in plan]) == 0:
        report.problems.append("the snapshot holds no rows")
    with tempfile.TemporaryDirectory(prefix="company-ai-drill-") as scratch:
        for day, entry in plan:
            name = entry["file"]
            if entry.get("format") == pg_snapshots.FORMAT:
                report.problems += [
                    f"{name}: {p}" for p in _drill_dump(root, day, entry, database_url)
                ]
                report.restored.append(f"{name} ({day})")
                continue
            restored = Path(scratch) / name
            try:
                shutil.copyfile(Path(root) / day / name, restored)
            except OSError as exc:
                report.problems.append(f"{name}: cannot be restored: {exc}")
                continue
            if sha256_file(restored) != entry["sha256"]:
                report.problems.append(f"{name}: sha256 differs from the manifest")
            try:
                report.problems += [f"{name}: {p}" for p in _check_restored(restored, entry)]
            except sqlite3.DatabaseError as exc:
                report.problems.append(f"{name}: not a readable database ({exc})")
            report.restored.append(f"{name} ({day})")
    return report


def _check_restored(path: Path, entry: dict) -> list[str]:
    verdict = _integrity(path, "integrity_check")
    if verdict != ["ok"]:
        return [f"integrity_check: {'; '.join(verdict[:5])}"]
    counts = row_counts(path)
    return [
        f"table {table}: {counts.get(table)} rows, the manifest says {expected}"
        for table, expected in entry["tables"].items()
        if counts.get(table) != expected
    ]


def _drill_dump(root: Path, day: str, entry: dict, database_url: str) -> list[str]:
    """The problems of one store's dump, restored into a scratch database on the server."""
    dump = Path(root) / day / entry["file"]
    if not dump.is_file():
        return ["cannot be restored: its dump is gone"]
    problems = [] if sha256_file(dump) == entry["sha256"] else ["sha256 differs from the manifest"]
    if not database_url:
        return [
            *problems,
            "cannot be restored: it is a PostgreSQL dump, and the drill needs a server "
            "(COMPANY_AI_DATABASE_URL) to restore it into a scratch database",
        ]
    try:
        return problems + pg_snapshots.drill(dump, entry, database_url)
    except PgSnapshotError as exc:
        return [*problems, f"cannot be restored: {exc}"]
