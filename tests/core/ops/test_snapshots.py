import errno
import json
import os
import shutil
import sqlite3
from datetime import UTC, datetime

import pytest

from company_ai.core.ops import restore_drill, snapshots, take_snapshot
from company_ai.core.ops.snapshots import SnapshotError, load_manifest, snapshot_days
from company_ai.core.store import Stores

TAKEN = datetime(2026, 11, 30, 8, 15, tzinfo=UTC)  # when a snapshot is taken


# A snapshot copies the stores that are SQLite files; these tests take crm.db as theirs.
CRM_FILE = pytest.mark.sqlite_only("it copies and damages the file crm.db")


@pytest.fixture
def data(data):
    """The sample copy, as its stores."""
    return Stores(data)


@CRM_FILE
def test_a_snapshot_copies_every_store_with_a_manifest_that_matches(data, tmp_path):
    root = tmp_path / "snaps"
    manifest = take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    assert snapshot_days(root) == ["2026-11-29"]
    assert {f["domain"] for f in manifest.files} == {p.stem for p in data.data_dir.glob("*.db")}
    on_disk = load_manifest(root / "2026-11-29")
    memory = next(f for f in on_disk.files if f["domain"] == "memory")
    with data.connect("memory", readonly=True) as conn:
        episodes = conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]
    assert memory["tables"]["contact_episodes"] == episodes > 0
    assert memory["sha256"] == snapshots.sha256_file(root / "2026-11-29" / "memory.db")
    assert memory["bytes"] == (root / "2026-11-29" / "memory.db").stat().st_size
    assert not list(root.glob("2026-11-29/*-wal")), "copies are standalone files"
    assert restore_drill(root).passed


def test_retention_keeps_the_newest_and_a_retake_replaces_its_day(data, tmp_path):
    root = tmp_path / "snaps"
    for day in ("2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"):
        take_snapshot(data, root, day, keep=2, now=TAKEN)
    assert snapshot_days(root) == ["2026-11-28", "2026-11-29"]
    take_snapshot(data, root, "2026-11-29", keep=2, now=TAKEN)
    assert snapshot_days(root) == ["2026-11-28", "2026-11-29"]
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []


@CRM_FILE
def test_the_drill_fails_loudly_on_a_corrupted_snapshot(data, tmp_path):
    root = tmp_path / "snaps"
    take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    copy = root / "2026-11-29" / "memory.db"
    raw = bytearray(copy.read_bytes())
    raw[4096 : 4096 + 2048] = b"\xde\xad" * 1024  # trash the second and third pages
    copy.write_bytes(bytes(raw))
    report = restore_drill(root)
    assert not report.passed
    assert any(p.startswith("memory.db: sha256 differs") for p in report.problems)
    assert any(
        "integrity_check" in p or "not a readable database" in p or "rows" in p
        for p in report.problems
    )


@CRM_FILE
def test_the_drill_compares_row_counts_with_the_manifest(data, tmp_path):
    root = tmp_path / "snaps"
    take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    path = root / "2026-11-29" / "manifest.json"
    manifest = json.loads(path.read_text())
    crm = next(f for f in manifest["files"] if f["domain"] == "crm")
    crm["tables"]["contacts"] += 1
    path.write_text(json.dumps(manifest))
    report = restore_drill(root)
    assert report.problems == [
        f"crm.db: table contacts: {crm['tables']['contacts'] - 1} rows, "
        f"the manifest says {crm['tables']['contacts']}"
    ]


def test_the_drill_fails_without_a_snapshot_or_manifest(tmp_path):
    assert restore_drill(tmp_path / "none").problems == [f"no snapshot in {tmp_path / 'none'}"]
    (tmp_path / "snaps" / "2026-11-29").mkdir(parents=True)
    assert "unreadable" in restore_drill(tmp_path / "snaps").problems[0]


def test_a_snapshot_folder_under_a_file_fails_clearly(data, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(SnapshotError, match="a part of the path is a file") as err:
        take_snapshot(data, blocker / "snaps", "2026-11-29", keep=3, now=TAKEN)
    assert "Nothing was published" in str(err.value)


@CRM_FILE
@pytest.mark.parametrize(
    ("code", "reason"),
    [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "it is read-only")],
)
def test_a_full_or_read_only_disk_fails_clearly_and_publishes_nothing(
    data, tmp_path, monkeypatch, code, reason
):
    root = tmp_path / "snaps"
    take_snapshot(data, root, "2026-11-28", keep=3, now=TAKEN)
    copied = []

    def full(source, target):
        if copied:
            raise OSError(code, os.strerror(code))
        copied.append(source)
        shutil.copyfile(source, target)

    monkeypatch.setattr(snapshots, "_copy_db", full)
    with pytest.raises(SnapshotError, match=reason):
        take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    assert snapshot_days(root) == ["2026-11-28"]
    assert sorted(p.name for p in root.iterdir()) == ["2026-11-28"], "no staging left behind"


def empty_crm(data: Stores) -> None:
    """Every table of crm.db dropped; the other stores left as they are."""
    from tests.hostile.stores import empty_crm

    empty_crm.damage(data.data_dir)


@CRM_FILE
def test_retention_keeps_n_days_and_always_each_stores_last_good_one(data, tmp_path):
    root = tmp_path / "snaps"
    good = take_snapshot(data, root, "2026-11-25", keep=2, now=TAKEN)
    crm = next(f for f in good.files if f["file"] == "crm.db")
    empty_crm(data)
    for day in ("2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"):
        taken = take_snapshot(data, root, day, keep=2, now=TAKEN)
        assert list(taken.refused) == ["crm.db"] and taken.last_good["crm.db"] == "2026-11-25"
    assert snapshot_days(root) == ["2026-11-25", "2026-11-28", "2026-11-29"]
    assert snapshots.sha256_file(root / "2026-11-25" / "crm.db") == crm["sha256"]
    report = restore_drill(root)
    assert report.passed and "crm.db (2026-11-25)" in report.restored
    assert "memory.db (2026-11-29)" in report.restored

    for extra in ("crm.db-wal", "crm.db-shm"):
        (data.data_dir / extra).unlink(missing_ok=True)
    # Restored from its last good generation: that day need not be held any longer.
    shutil.copy(root / "2026-11-25" / "crm.db", data.data_dir / "crm.db")
    taken = take_snapshot(data, root, "2026-11-30", keep=2, now=TAKEN)
    assert taken.refused == {} and set(taken.last_good.values()) == {"2026-11-30"}
    assert snapshot_days(root) == ["2026-11-29", "2026-11-30"]


@CRM_FILE
def test_a_crash_mid_snapshot_leaves_the_last_good_generations_as_they_were(
    data, tmp_path, monkeypatch
):
    root = tmp_path / "snaps"
    take_snapshot(data, root, "2026-11-28", keep=3, now=TAKEN)
    manifest = (root / "2026-11-28" / snapshots.MANIFEST).read_bytes()
    copies = {p.name: p.read_bytes() for p in (root / "2026-11-28").iterdir()}
    real, copied = snapshots._copy_db, []

    def dies(source, target):
        if len(copied) == 2:
            raise RuntimeError("killed")  # not a write error: nothing catches it
        copied.append(source)
        real(source, target)

    monkeypatch.setattr(snapshots, "_copy_db", dies)
    for day in ("2026-11-28", "2026-11-29"):  # a retake of the day, and the next day
        copied.clear()
        with pytest.raises(RuntimeError, match="killed"):
            take_snapshot(data, root, day, keep=3, now=TAKEN)
        assert sorted(p.name for p in root.iterdir()) == ["2026-11-28"], "nothing half-made"
        assert (root / "2026-11-28" / snapshots.MANIFEST).read_bytes() == manifest
        assert {p.name: p.read_bytes() for p in (root / "2026-11-28").iterdir()} == copies


@CRM_FILE
def test_a_run_killed_between_the_two_renames_of_a_retake_loses_nothing(data, tmp_path):
    root = tmp_path / "snaps"
    good = take_snapshot(data, root, "2026-11-28", keep=3, now=TAKEN)
    # `_publish` moves the day aside, then renames the new folder in: killed in between.
    os.replace(root / "2026-11-28", root / ".2026-11-28.old-999")
    (root / ".2026-11-28.partial-999").mkdir()
    empty_crm(data)
    taken = take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    assert taken.refused["crm.db"].startswith("table contact_emails vanished")
    assert taken.last_good["crm.db"] == "2026-11-28"
    assert sorted(p.name for p in root.iterdir()) == ["2026-11-28", "2026-11-29"]
    assert load_manifest(root / "2026-11-28").files == good.files
    assert restore_drill(root).passed


@CRM_FILE
def test_an_error_copying_a_store_sets_it_aside_only_when_the_store_itself_cannot_be_read(
    data, tmp_path, monkeypatch
):
    root = tmp_path / "snaps"
    take_snapshot(data, root, "2026-11-28", keep=3, now=TAKEN)
    real = snapshots._copy_db

    def io_error_on_crm(source, target):
        if source.name == "crm.db":
            raise sqlite3.OperationalError("disk I/O error")  # which side: unknown
        real(source, target)

    monkeypatch.setattr(snapshots, "_copy_db", io_error_on_crm)
    # The CRM reads: the error is the copy's (the disk), so the whole run fails.
    with pytest.raises(SnapshotError, match="disk I/O error. Nothing was published"):
        take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    assert snapshot_days(root) == ["2026-11-28"]
    # The CRM itself cannot be read: it alone is set aside, the other stores are taken.
    for extra in ("crm.db-wal", "crm.db-shm"):
        (data.data_dir / extra).unlink(missing_ok=True)
    (data.data_dir / "crm.db").write_bytes(b"\x00" * 100 + b"not sqlite" * 100)
    taken = take_snapshot(data, root, "2026-11-29", keep=3, now=TAKEN)
    assert taken.refused == {"crm.db": "crm.db is not a readable SQLite database (disk I/O error)"}
    assert taken.last_good["crm.db"] == "2026-11-28" and "memory.db" in taken.last_good
