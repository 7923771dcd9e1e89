"""Snapshots of the stores in PostgreSQL: a dump per store, its manifest and the drill.

These run on the session's real server in both --stores modes: the stores here are given a
database URL of their own (with a password, to see that it never leaks)."""

import json
import os
from datetime import UTC, datetime

import psycopg
import pytest

from company_ai.core.ops import pg_snapshots, restore_drill, snapshots, take_snapshot
from company_ai.core.ops.snapshots import SnapshotError, load_manifest, snapshot_days
from company_ai.core.store import DOMAINS, Store, Stores
from company_ai.core.store.pg_schema import PG_MIGRATIONS
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF
from tests.pg_server import free_port

TAKEN = datetime(2026, 11, 30, 8, 15, tzinfo=UTC)
DAY = "2026-11-29"
SECRET = "hunter2-not-for-logs"


def with_secret(url: str) -> str:
    # The test server trusts every local login: any password is accepted, and must not leak.
    return url.replace(":not-checked@", f":{SECRET}@")


def sample(tmp_path, url: str, *, sqlite: tuple[Store, ...] = ()) -> Stores:
    """A small sample world, its stores at `url` but for `sqlite` (kept as files)."""
    stores = Stores(tmp_path / "data", database_url=url)
    for domain in sqlite:
        stores.urls.pop(domain)
    load_sample(stores, contacts=40, as_of=AS_OF)
    stores.create_all()  # the other stores too (recall brings its unaccent extension)
    return stores


@pytest.fixture
def pg_stores(tmp_path, pg_url):
    return sample(tmp_path, with_secret(pg_url))


def drill_databases(url: str) -> list[str]:
    conn = psycopg.connect(url)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT datname FROM pg_database WHERE datname LIKE 'company_ai_drill%'")
            return [name for (name,) in cursor.fetchall()]
    finally:
        conn.close()


def everything_written(root) -> str:
    return "".join(p.read_bytes().decode("latin-1") for p in root.rglob("*") if p.is_file())


def test_each_store_on_the_server_is_dumped_with_a_manifest_that_matches(pg_stores, tmp_path):
    root = tmp_path / "snaps"
    manifest = take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    on_server = {f"{d}.pgdump" for d in PG_MIGRATIONS}
    as_files = {f"{d}.db" for d in DOMAINS if d not in PG_MIGRATIONS}
    assert {f["file"] for f in manifest.files} == on_server | as_files
    assert set(manifest.last_good) == on_server | as_files and not manifest.suspect
    memory = next(f for f in load_manifest(root / DAY).files if f["domain"] == "memory")
    with pg_stores.connect(Store.MEMORY, readonly=True) as conn:
        episodes = conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]
    assert memory["tables"]["contact_episodes"] == episodes > 0
    assert memory["sha256"] == snapshots.sha256_file(root / DAY / "memory.pgdump")
    assert memory["bytes"] == (root / DAY / "memory.pgdump").stat().st_size
    assert memory["schema_version"] == len(PG_MIGRATIONS[Store.MEMORY])
    assert memory["append_only"] == {"contact_episodes": ["DELETE", "TRUNCATE", "UPDATE"]}
    assert "company_ai_schema" not in memory["tables"], "bookkeeping, not content"
    assert SECRET not in everything_written(root)
    assert ":***@" in memory["server"]

    report = restore_drill(root, pg_stores.database_url)
    assert report.problems == [] and report.passed
    assert sorted(report.restored) == sorted(f"{name} ({DAY})" for name in manifest.last_good)
    assert drill_databases(pg_stores.database_url) == [], "the scratch databases are dropped"


def test_a_mixed_setup_snapshots_files_and_dumps_side_by_side(tmp_path, pg_url):
    stores = sample(tmp_path, with_secret(pg_url), sqlite=(Store.MEMORY,))
    root = tmp_path / "snaps"
    manifest = take_snapshot(stores, root, DAY, keep=3, now=TAKEN)
    names = {f["file"] for f in manifest.files}
    assert {"memory.db", "crm.pgdump"} <= names and "memory.pgdump" not in names
    memory = next(f for f in manifest.files if f["file"] == "memory.db")
    assert memory["tables"]["contact_episodes"] > 0
    assert restore_drill(root, stores.database_url).passed


def test_the_drill_fails_loudly_on_a_damaged_dump(pg_stores, tmp_path):
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    dump = root / DAY / "memory.pgdump"
    raw = bytearray(dump.read_bytes())
    middle = len(raw) // 2
    raw[middle : middle + 256] = b"\xde\xad" * 128
    dump.write_bytes(bytes(raw))
    report = restore_drill(root, pg_stores.database_url)
    assert not report.passed
    assert "memory.pgdump: sha256 differs from the manifest" in report.problems
    restored = [p for p in report.problems if p.startswith("memory.pgdump: cannot be restored")]
    assert restored and "pg_restore failed" in restored[0], report.problems
    assert not any(p.startswith("crm.pgdump") for p in report.problems)
    assert SECRET not in " ".join(report.problems)
    assert drill_databases(pg_stores.database_url) == []


def test_the_drill_compares_row_counts_and_append_only_guards_with_the_manifest(
    pg_stores, tmp_path
):
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    path = root / DAY / "manifest.json"
    manifest = json.loads(path.read_text())
    crm = next(f for f in manifest["files"] if f["domain"] == "crm")
    contacts = crm["tables"]["contacts"]
    crm["tables"]["contacts"] += 1
    crm["append_only"] = {"contacts": ["DELETE"]}  # a guard the store never had
    path.write_text(json.dumps(manifest))
    report = restore_drill(root, pg_stores.database_url)
    assert report.problems == [
        f"crm.pgdump: table contacts: {contacts} rows, the manifest says {contacts + 1}",
        "crm.pgdump: table contacts: its append-only guard on DELETE is gone",
    ]


def test_the_drill_sees_a_guard_that_no_longer_refuses(pg_stores, tmp_path):
    # The guard's function made harmless (it still mentions append-only, so it is found).
    with pg_stores.connect(Store.MEMORY) as conn:
        conn.execute(
            "CREATE OR REPLACE FUNCTION contact_episodes_append_only() RETURNS trigger"
            " LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; /* append-only, once */ END $$"
        )
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    problems = restore_drill(root, pg_stores.database_url).problems
    assert problems == [
        f"memory.pgdump: table contact_episodes: {event} was not refused: its append-only"
        " guard does not hold"
        for event in ("DELETE", "TRUNCATE", "UPDATE")
    ]


def test_a_dump_needs_a_server_for_its_drill(pg_stores, tmp_path):
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    problems = restore_drill(root).problems
    needs = (
        "crm.pgdump: cannot be restored: it is a PostgreSQL dump, and the drill needs a server"
        " (COMPANY_AI_DATABASE_URL) to restore it into a scratch database"
    )
    assert needs in problems


def no_client_tools(monkeypatch, tmp_path) -> None:
    """A machine without PostgreSQL's client tools: none on PATH nor where Debian puts them."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(pg_snapshots, "BIN_GLOB", str(tmp_path / "postgresql" / "*" / "bin"))


def test_without_pg_dump_the_snapshot_fails_clearly_and_publishes_nothing(
    pg_stores, tmp_path, monkeypatch
):
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, "2026-11-28", keep=3, now=TAKEN)
    before = {p.name: p.read_bytes() for p in (root / "2026-11-28").iterdir()}
    no_client_tools(monkeypatch, tmp_path)
    with pytest.raises(SnapshotError, match="pg_dump is not on PATH nor in ") as err:
        take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    assert "postgresql-client" in str(err.value) and "Nothing was published" in str(err.value)
    assert sorted(p.name for p in root.iterdir()) == ["2026-11-28"]
    assert {p.name: p.read_bytes() for p in (root / "2026-11-28").iterdir()} == before
    problems = restore_drill(root, pg_stores.database_url).problems
    assert any("pg_restore is not on PATH" in p for p in problems), problems


def test_a_dump_failing_half_way_publishes_nothing(pg_stores, tmp_path, monkeypatch):
    root = tmp_path / "snaps"
    take_snapshot(pg_stores, root, "2026-11-28", keep=3, now=TAKEN)
    monkeypatch.setattr(pg_snapshots, "LOCK_WAIT_MS", 300)
    # A migration holding the ops store: the stores before it are dumped, then it fails.
    blocker = psycopg.connect(pg_stores.database_url)
    try:
        blocker.cursor().execute("LOCK TABLE ops.alerts IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(SnapshotError, match="ops store") as err:
            take_snapshot(pg_stores, root, DAY, keep=3, now=TAKEN)
    finally:
        blocker.rollback()
        blocker.close()
    assert "lock timeout" in str(err.value) and "Nothing was published" in str(err.value)
    assert SECRET not in str(err.value)
    assert sorted(p.name for p in root.iterdir()) == ["2026-11-28"], "no staging left behind"
    assert snapshot_days(root) == ["2026-11-28"]


def test_an_unreachable_server_fails_clearly_without_its_password(tmp_path):
    url = f"postgresql://company:{SECRET}@127.0.0.1:{free_port()}/company"
    (tmp_path / "data").mkdir()
    with pytest.raises(SnapshotError, match="cannot reach PostgreSQL at") as err:
        take_snapshot(Stores(tmp_path / "data", database_url=url), tmp_path / "snaps", DAY,
                      keep=3, now=TAKEN)  # fmt: skip
    assert SECRET not in str(err.value) and "company:***@127.0.0.1" in str(err.value)
    assert not (tmp_path / "snaps").exists() or snapshot_days(tmp_path / "snaps") == []


def test_a_store_emptied_on_the_server_is_set_aside_and_keeps_its_last_good_dump(
    pg_stores, tmp_path
):
    root = tmp_path / "snaps"
    good = take_snapshot(pg_stores, root, "2026-11-28", keep=1, now=TAKEN)
    crm = next(f for f in good.files if f["file"] == "crm.pgdump")
    with pg_stores.connect(Store.CRM) as conn:
        conn.execute("DROP TABLE contact_emails CASCADE")
    taken = take_snapshot(pg_stores, root, DAY, keep=1, now=TAKEN)
    assert taken.refused["crm.pgdump"].startswith("table contact_emails vanished")
    assert taken.last_good["crm.pgdump"] == "2026-11-28"
    assert (root / DAY / "suspect" / "crm.pgdump").is_file()
    assert snapshot_days(root) == ["2026-11-28", DAY], "the last good day is held"
    assert snapshots.sha256_file(root / "2026-11-28" / "crm.pgdump") == crm["sha256"]
    report = restore_drill(root, pg_stores.database_url)
    assert report.passed and "crm.pgdump (2026-11-28)" in report.restored


def test_the_tools_get_the_url_without_its_password():
    target, password = pg_snapshots._split_secret(
        f"postgresql://company:{SECRET}@db.example:5433/co?sslmode=require&password=other"
    )
    assert target == "postgresql://company@db.example:5433/co?sslmode=require"
    assert password == "other"  # libpq lets the parameter win over the user part
    assert pg_snapshots._split_secret("postgresql://db.example/co", "drill") == (
        "postgresql://db.example/drill",
        "",
    )


def test_pg_dump_gets_the_password_in_its_environment_never_in_its_arguments(
    pg_stores, tmp_path, monkeypatch
):
    # The real pg_dump, behind a script that writes down what it was given.
    real = pg_snapshots.find_tool("pg_dump")
    spy = tmp_path / "bin" / "pg_dump"
    spy.parent.mkdir()
    log = tmp_path / "argv.log"
    spy.write_text(f'#!/bin/sh\necho "$@ PGPASSWORD=$PGPASSWORD" >> {log}\nexec {real} "$@"\n')
    spy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{spy.parent}:{os.environ['PATH']}")
    take_snapshot(pg_stores, tmp_path / "snaps", DAY, keep=3, now=TAKEN)
    calls = log.read_text().splitlines()
    assert len(calls) == len(PG_MIGRATIONS)
    for call in calls:
        arguments, env = call.split(" PGPASSWORD=")
        assert SECRET not in arguments and "--dbname=postgresql://postgres@127.0.0.1" in arguments
        assert env == SECRET


def test_a_server_without_any_store_is_refused_clearly(tmp_path, pg_url):
    stores = Stores(tmp_path / "data", database_url=with_secret(pg_url))
    with pytest.raises(SnapshotError, match="there is no store in .* nor in postgresql") as err:
        take_snapshot(stores, tmp_path / "snaps", DAY, keep=3, now=TAKEN)
    assert SECRET not in str(err.value) and "Nothing was published" in str(err.value)
    assert snapshot_days(tmp_path / "snaps") == []
