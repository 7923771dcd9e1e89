"""Snapshots of the domain stores and the restore drill.

`take_snapshot` copies every domain store with SQLite's online backup API (consistent
while writers keep writing) into a staging folder, writes `manifest.json` (file, size,
sha256, row counts per table) and only then renames the folder to its day, so a
published snapshot is always whole. Old dated folders beyond `keep` are removed.

A snapshot never replaces a better one by accident: one taken from an empty or wrong data
directory is refused (`shrinkage`) unless `allow_shrink=True` says the stores shrank on
purpose. `restore_drill` restores the latest snapshot into a temporary folder and proves
it: checksums, `PRAGMA integrity_check`, row counts against the manifest, and that it
holds stores and rows at all.
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
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from company_ai.core.db import Stores
from company_ai.core.schema import DOMAINS
from company_ai.core.times import to_iso

MANIFEST = "manifest.json"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A snapshot with fewer rows in all than this share of the last good one's is refused.
# The stores mostly grow (episodes are append-only); halving overnight means the wrong
# folder or a lost store, while a real clean-up is rare and can say so (allow_shrink).
MIN_ROWS_SHARE = 0.5


class SnapshotError(Exception):
    """The snapshot could not be written; nothing was published. The message says why."""


@dataclass(frozen=True)
class Manifest:
    day: str
    folder: Path
    files: list[dict]

    @property
    def bytes(self) -> int:
        return sum(f["bytes"] for f in self.files)

    @property
    def rows(self) -> int:
        return total_rows(self.files)


_SHADOW_SUFFIXES = ("_config", "_data", "_idx", "_docsize", "_content", "_segments", "_segdir")


def total_rows(files: list[dict]) -> int:
    """Rows of content in all the files: a full-text index's own tables (`search_fts_data`
    beside `search_fts`) are left out, as they hold rows even in a store with no data."""
    total = 0
    for f in files:
        tables = f["tables"]
        total += sum(
            n
            for t, n in tables.items()
            if not any(t.endswith(s) and t[: -len(s)] in tables for s in _SHADOW_SUFFIXES)
        )
    return total


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
    """Snapshot every existing domain store into `root/<day>/`; keep the newest `keep`.

    Refused (SnapshotError, nothing published) when the data directory holds no store, or
    when the snapshot would be smaller than the last good one (`shrinkage`) and
    `allow_shrink` is not set.
    """
    root = Path(root)
    if not any(stores.path(domain).is_file() for domain in DOMAINS):
        raise SnapshotError(
            f"there is no store in {stores.data_dir} to snapshot: is COMPANY_AI_DATA_DIR "
            "the right folder? Nothing was published"
        )
    staging = root / f".{day}.partial-{os.getpid()}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        # A run killed mid-snapshot leaves only its staging folder behind: clear it.
        for stale in root.glob(f".{day}.*"):
            shutil.rmtree(stale)
        staging.mkdir()
        files = []
        for domain in DOMAINS:
            source = stores.path(domain)
            if not source.is_file():
                continue
            target = staging / source.name
            _copy_db(source, target)
            files.append(
                {
                    "file": source.name,
                    "domain": domain,
                    "bytes": target.stat().st_size,
                    "sha256": sha256_file(target),
                    "tables": row_counts(target),
                }
            )
        problems = [] if allow_shrink else shrinkage(last_good(root), files)
        if problems:
            shutil.rmtree(staging)
            raise SnapshotError(
                f"refusing a snapshot of {stores.data_dir} smaller than the last good one: "
                f"{'; '.join(problems)}. Nothing was published. Is "
                "COMPANY_AI_DATA_DIR the right folder? If the stores shrank on purpose, take "
                "this snapshot with allow_shrink=True"
            )
        manifest = {"day": day, "taken_at": to_iso(now), "files": files}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
        _publish(staging, root / day)
    except (OSError, sqlite3.Error) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise SnapshotError(
            f"cannot write the snapshot of {day} into {root}: {explain_os_error(exc)}. Nothing "
            "was published; free space there or point COMPANY_AI_SNAPSHOT_DIR at a writable "
            "folder"
        ) from exc
    prune(root, keep)
    return Manifest(day, root / day, files)


def last_good(root: Path) -> Manifest | None:
    """The newest published snapshot that has a readable manifest and holds a store."""
    for day in reversed(snapshot_days(root)):
        try:
            manifest = load_manifest(Path(root) / day)
        except (OSError, ValueError, KeyError):
            continue
        if manifest.files:
            return manifest
    return None


def shrinkage(last: Manifest | None, files: list[dict]) -> list[str]:
    """Why `files` would be a worse snapshot than `last`: a store it has that they lack, or
    fewer rows in all than `MIN_ROWS_SHARE` of its rows. Empty when they are no worse."""
    if last is None:
        return []
    have = {f["file"] for f in files}
    problems = [
        f"no {f['file']}, which the snapshot of {last.day} has"
        for f in last.files
        if f["file"] not in have
    ]
    rows = total_rows(files)
    if rows < MIN_ROWS_SHARE * last.rows:
        problems.append(
            f"{rows:,} rows, under {MIN_ROWS_SHARE:.0%} of the {last.rows:,} in the snapshot"
            f" of {last.day}"
        )
    return problems


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
    """Remove dated snapshot folders beyond the newest `keep`; returns the days removed."""
    if keep < 1:
        raise ValueError("keep at least one snapshot")
    removed = snapshot_days(root)[:-keep]
    for day in removed:
        shutil.rmtree(Path(root) / day)
    return removed


def load_manifest(folder: Path) -> Manifest:
    data = json.loads((Path(folder) / MANIFEST).read_text())
    return Manifest(data["day"], Path(folder), data["files"])


@dataclass
class DrillReport:
    snapshot: str | None
    restored: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.snapshot is not None and not self.problems


def restore_drill(root: Path) -> DrillReport:
    """Restore the latest snapshot into a temporary folder and check every file in it."""
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
    if not manifest.files:
        report.problems.append("the snapshot holds no store")
        return report
    if manifest.rows == 0:
        report.problems.append("the snapshot holds no rows")
    with tempfile.TemporaryDirectory(prefix="company-ai-drill-") as scratch:
        for entry in manifest.files:
            name = entry["file"]
            restored = Path(scratch) / name
            try:
                shutil.copyfile(folder / name, restored)
            except OSError as exc:
                report.problems.append(f"{name}: cannot be restored: {exc}")
                continue
            if sha256_file(restored) != entry["sha256"]:
                report.problems.append(f"{name}: sha256 differs from the manifest")
            try:
                report.problems += [f"{name}: {p}" for p in _check_restored(restored, entry)]
            except sqlite3.DatabaseError as exc:
                report.problems.append(f"{name}: not a readable database ({exc})")
            report.restored.append(name)
    return report


def _check_restored(path: Path, entry: dict) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        verdict = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()
    if verdict != ["ok"]:
        return [f"integrity_check: {'; '.join(verdict[:5])}"]
    counts = row_counts(path)
    return [
        f"table {table}: {counts.get(table)} rows, the manifest says {expected}"
        for table, expected in entry["tables"].items()
        if counts.get(table) != expected
    ]
