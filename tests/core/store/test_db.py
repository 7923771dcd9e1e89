import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from company_ai.core.memory import append_episodes
from company_ai.core.store import (
    DOMAINS,
    Positional,
    Store,
    StoreError,
    Stores,
    dialect,
    numbered,
    pg,
)
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.store.db import DataDirError, StoreBusyError
from company_ai.core.store.schema import MIGRATIONS
from tests.conftest import episode


@pytest.mark.sqlite_only("reads SQLite's journal mode")
def test_every_domain_gets_its_own_wal_file_at_the_newest_schema(stores):
    stores.create_all()
    for domain in DOMAINS:
        with stores.connect(domain) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == stores.busy_timeout_ms
            assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS[domain])
        assert stores.path(domain).is_file()


# Each schema version as written, by the start of its sha256. A store that already ran a
# version never runs it again, so an edit to one (a cap written as a constant changed, say)
# would reach new stores only: append a version instead, and its digest here.
MIGRATION_DIGESTS = {
    "crm": ["64f9d22c152311f3", "889efa67bfc4a937", "115d763731929b88", "8daea106578a6e76"],
    "memory": ["8f0d96f681760a59", "a92ba291772e7824", "3800f296e64466b3"],
    "outreach": [
        "b74b5507cfa13a81",
        "c5a12f014f92e9e7",
        "937150be8ad2febb",
        "3bbff696ee617a62",
        "90907c3ee885e181",
        "4aa8925e4f2ec69f",
        "115d763731929b88",
        "b0ce01cdecb47159",
        "e016a21617189d24",
    ],
    "brain": ["2de42875ffaed632"],
    "recall": [
        "a35d89bb7f6c30a1",
        "889aee0d0a8a5bb1",
        "7942698a014afe1f",
        "fc83f14667a8dcb3",
        "e3b0c44298fc1c14",  # RECALL_V5, empty: new in this change, not released yet
    ],
    "ops": [
        "1feb30494c594a54",
        "cbaaa81ed48237f3",
    ],  # OPS_V2 is new in this change: not released yet
}


def test_a_released_schema_version_is_never_edited():
    digests = {
        domain: [hashlib.sha256("\n".join(v).encode()).hexdigest()[:16] for v in versions]
        for domain, versions in MIGRATIONS.items()
    }
    assert digests == MIGRATION_DIGESTS


def test_reopening_does_not_migrate_again(stores):
    with stores.connect("memory") as conn:
        conn.execute(
            "INSERT INTO day_seals VALUES ('2026-01-01', 0, NULL, 'd', '{}', '{}', 'x', NULL, NULL)"
        )
    with stores.connect("memory") as conn:
        assert conn.execute("SELECT count(*) FROM day_seals").fetchone()[0] == 1


def test_a_store_from_newer_code_is_refused(stores):
    with stores.connect("crm") as conn:
        if dialect(conn) == "postgres":
            conn.execute(f"UPDATE {pg.VERSIONS} SET version = 99 WHERE store = 'crm'")
        else:
            conn.execute("PRAGMA user_version=99")
    with pytest.raises(StoreError, match="newer than this code knows"):
        stores.open("crm")


def test_unknown_domain_is_a_clear_error(stores):
    with pytest.raises(ValueError, match="unknown store 'sales'"):
        stores.path("sales")


@pytest.mark.sqlite_only("a missing file; on PostgreSQL an empty schema (test_postgres.py)")
def test_reading_a_missing_store_says_what_to_do(stores):
    with pytest.raises(DataDirError, match="company-ai demo"):
        stores.open("memory", readonly=True)
    assert not stores.data_dir.exists(), "a read must never create the data directory"


@pytest.mark.sqlite_only("the data directory holds the SQLite files")
def test_a_data_dir_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "data"
    target.write_text("not a directory")
    with pytest.raises(DataDirError, match="not a directory"):
        Stores(target).open("memory")
    with pytest.raises(DataDirError, match="not a directory"):
        Stores(target / "nested").open("memory")


def test_a_read_only_data_dir_is_refused_and_nothing_is_written():
    # Outside pytest's tmp dir, which only its owner may enter.
    parent = Path(tempfile.mkdtemp(prefix="company-ai-ro-"))
    parent.chmod(0o755)
    data = parent / "data"
    data.mkdir()
    data.chmod(0o555)
    # Root ignores permission bits, so the check runs as an unprivileged user.
    script = textwrap.dedent(f"""
        import os, sys
        from company_ai.core.store.db import DataDirError, Stores  # import before dropping root
        if os.geteuid() == 0:
            os.setgid(65534); os.setuid(65534)
        try:
            Stores({str(data)!r}).open("memory")
        except DataDirError as exc:
            print(exc); sys.exit(0)
        sys.exit("opened a store in a read-only directory")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 0, done.stderr
    assert "not writable" in done.stdout
    assert list(data.iterdir()) == []
    data.chmod(0o755)
    shutil.rmtree(parent)


@pytest.mark.sqlite_only("SQLite's file lock and busy timeout")
def test_a_store_locked_past_the_busy_timeout_fails_cleanly(tmp_path):
    stores = Stores(tmp_path / "data", busy_timeout_ms=100)
    with stores.connect("memory"):
        pass
    holder = sqlite3.connect(
        factory=StoreConnection, database=stores.path("memory"), isolation_level=None
    )
    holder.execute("BEGIN IMMEDIATE")
    try:
        with stores.connect("memory") as conn, pytest.raises(StoreBusyError, match="100 ms"):
            append_episodes(conn, [episode()], now="2026-11-29T12:00:00Z")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with stores.connect("memory") as conn:
        assert conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0] == 0
        assert not conn.in_transaction


@pytest.mark.sqlite_only("upgrades a SQLite file made at version 2")
def test_memory_v3_backfills_recorded_at_from_created_at_and_keeps_episodes_append_only(
    tmp_path,
):
    from company_ai.core.store.schema import MEMORY_V1, MEMORY_V2

    with sqlite3.connect(factory=StoreConnection, database=tmp_path / "memory.db") as conn:
        for statement in [*MEMORY_V1, *MEMORY_V2]:
            conn.execute(statement)
        conn.execute("PRAGMA user_version=2")
        conn.execute(
            "INSERT INTO contact_episodes (contact_id, episode_type, content, created_at,"
            " natural_key, day) VALUES (1, 'note', 'x', '2026-11-17T09:00:00Z', 'k', '2026-11-17')"
        )
    with Stores(tmp_path).connect("memory") as conn:
        row = conn.execute("SELECT created_at, recorded_at FROM contact_episodes").fetchone()
        assert tuple(row) == ("2026-11-17T09:00:00Z", "2026-11-17T09:00:00Z")
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM contact_episodes"
            " WHERE recorded_at >= '2026-11-17' AND recorded_at < '2026-11-18'"
        ).fetchall()
        assert "idx_episodes_recorded_at" in str([tuple(r) for r in plan])
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE contact_episodes SET recorded_at = 'x'")


@pytest.mark.sqlite_only("upgrades a SQLite recall file made at an earlier version")
def test_recall_v4_logs_the_existing_pages_once_at_the_day_they_were_distilled(tmp_path):
    from company_ai.core.store.schema import RECALL_V1, RECALL_V2, RECALL_V3

    with sqlite3.connect(factory=StoreConnection, database=tmp_path / "recall.db") as conn:
        for statement in [*RECALL_V1, *RECALL_V2, *RECALL_V3]:
            conn.execute(statement)
        conn.execute("PRAGMA user_version=3")
        for title, published in (("a", 1), ("b", 0)):
            conn.execute(
                "INSERT INTO pages (title, note_path, note_hash, distilled, generated_by, page,"
                " markdown, published, digest) VALUES ($1, $2, 'h', '2026-11-17', 'm', '{}', 'md',"
                " $3, 'd')",
                (title, f"{title}.md", published),
            )
    with Stores(tmp_path).connect("recall") as conn:
        rows = conn.execute(
            "SELECT title, event, note_path, digest, recorded_at FROM page_log ORDER BY id"
        ).fetchall()
        assert [tuple(r) for r in rows] == [
            ("a", "distilled", "a.md", "d", "2026-11-17T00:00:00Z"),
            ("b", "withheld", "b.md", "d", "2026-11-17T00:00:00Z"),
        ]
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute("UPDATE page_log SET digest = 'x'")


def test_the_page_log_refuses_an_update_on_either_backend(stores):
    with stores.connect("recall") as conn:
        conn.execute(
            "INSERT INTO page_log (title, event, note_path, digest, recorded_at)"
            " VALUES ('a', 'distilled', 'a.md', 'd', '2026-11-17T00:00:00Z')"
        )
    with (
        stores.connect("recall") as conn,
        pytest.raises(Exception, match="page_log is append-only"),
    ):
        conn.execute("UPDATE page_log SET digest = 'x'")
    with stores.connect("recall", readonly=True) as conn:
        assert conn.execute("SELECT digest FROM page_log").fetchall()[0][0] == "d"


@pytest.mark.sqlite_only("upgrades a SQLite recall file made at an earlier version")
def test_recall_v3_marks_the_existing_pages_with_status_or_goal_lines_reviewable(tmp_path):
    from company_ai.core.store.schema import RECALL_V1, RECALL_V2

    path = tmp_path / "recall.db"
    with sqlite3.connect(factory=StoreConnection, database=path) as conn:
        for statement in [*RECALL_V1, *RECALL_V2]:
            conn.execute(statement)
        conn.execute("PRAGMA user_version=2")
        for n, category in enumerate(("status", "context", "goal")):
            conn.execute(
                "INSERT INTO entities (id, title, type, tags, derived_from, note_touched,"
                " distilled, recall, markdown) VALUES ($1, $2, 'note', '[]', 'x.md',"
                " '2020-01-01', '2020-01-01', 'r', 'm')",
                (n + 1, f"page {n}"),
            )
            conn.execute(
                "INSERT INTO observations (entity_id, position, category, text)"
                " VALUES ($1, 0, $2, 't')",
                (n + 1, category),
            )
    with Stores(tmp_path).connect("recall") as conn:
        rows = conn.execute("SELECT title, reviewable FROM entities ORDER BY id").fetchall()
        assert [tuple(r) for r in rows] == [("page 0", 1), ("page 1", 0), ("page 2", 1)]


# Nothing reads a statement's text to place its parameters: each driver binds `$1`, `$2` …
# itself (SQLite as named parameters, PostgreSQL as positional ones), so what looks like a
# parameter inside a literal, a quoted name or a comment stays text on both.
STATEMENT = (
    "SELECT $2 AS second, '?' AS mark, 'it''s $1 and %s' AS quoted, \"who? $1\" , $1 AS first"
    " -- don't ? $1 %s here\n FROM (SELECT 'x' AS \"who? $1\") AS t /* it's $2 ? */"
)


def test_a_statement_runs_as_written_whatever_its_literals_and_comments_hold(stores):
    with stores.connect(Store.OPS) as conn:
        row = conn.execute(STATEMENT, ("one", "two")).fetchone()
    assert tuple(row) == ("two", "?", "it's $1 and %s", "x", "one")
    assert (row["first"], row["second"]) == ("one", "two")


def test_a_many_row_statement_in_the_drivers_own_numbers_binds_by_position(stores):
    # `numbered` writes SQLite's `?3` or PostgreSQL's `$3`; `Positional` values are bound
    # by those numbers as they come, whatever order the statement names them in.
    with stores.connect(Store.OPS) as conn:
        second, first = numbered(conn, 2), numbered(conn, 1)
        assert second in ("?2", "$2") and first[0] == second[0]
        sql = f"SELECT CAST({second} AS TEXT) AS b, CAST({first} AS TEXT) AS a"
        assert tuple(conn.execute(sql, Positional(("one", "two"))).fetchone()) == ("two", "one")
        # Bound by position, a surplus value is refused (bound by name, SQLite ignored it).
        with pytest.raises(conn.DatabaseError):
            conn.execute(sql, Positional(("one", "two", "three")))


def test_a_statement_without_its_parameters_is_refused(stores):
    with stores.connect(Store.OPS) as conn, pytest.raises(conn.DatabaseError):
        conn.execute("SELECT $1 AS a, $2 AS b", ("only one",))


MOUNTS = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
31 27 0:40 / /srv/shared rw,relatime - nfs4 files:/export rw,vers=4.2
32 27 0:41 / /mnt/office\\040share rw,relatime - cifs //nas/office rw
33 31 8:2 / /srv/shared/local rw,relatime - ext4 /dev/sdb1 rw
34 27 0:42 / /home/sam/remote rw,nosuid - fuse.sshfs sam@box:/data rw
"""


@pytest.mark.parametrize(
    ("data_dir", "fstype"),
    [
        ("/srv/shared/company/data", "nfs4"),
        ("/srv/shared", "nfs4"),
        ("/mnt/office share/data", "cifs"),  # the kernel's \\040 is a space
        ("/home/sam/remote/data", "fuse.sshfs"),
    ],
)
def test_a_data_dir_on_a_network_filesystem_is_refused_naming_the_database_url(data_dir, fstype):
    from company_ai.core.store.db import DataDirError, refuse_network_filesystem

    with pytest.raises(DataDirError, match=f"network filesystem \\({fstype}\\).*DATABASE_URL"):
        refuse_network_filesystem(Path(data_dir), MOUNTS)


@pytest.mark.parametrize(
    "data_dir", ["/srv/shared/local/data", "/srv/sharedx/data", "/var/data", "/mnt/office"]
)
def test_a_local_disk_is_accepted_even_beside_or_inside_a_network_mount(data_dir):
    from company_ai.core.store.db import refuse_network_filesystem

    refuse_network_filesystem(Path(data_dir), MOUNTS)  # a local mount inside NFS is local


@pytest.mark.sqlite_only("the data directory holds the SQLite files")
def test_stores_on_a_network_filesystem_refuse_before_writing_anything(tmp_path, monkeypatch):
    from company_ai.core.store import db

    mounts = f"27 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 27 0:50 / {tmp_path} rw - nfs nas:/x rw\n"
    monkeypatch.setattr(db, "MOUNTINFO", tmp_path / "mountinfo")
    (tmp_path / "mountinfo").write_text(mounts)
    with pytest.raises(StoreError, match="network filesystem"):
        Stores(tmp_path / "data").open(Store.CRM)
    assert not (tmp_path / "data").exists()


def test_writers_opening_stores_at_once_each_find_the_data_dir_writable(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from company_ai.core.store.db import _ensure_writable_dir

    def probe_often(_):
        for _ in range(300):
            _ensure_writable_dir(tmp_path)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(probe_often, range(8)))  # a probe deleted by another raises here
    assert list(tmp_path.iterdir()) == []
