"""kill -9 in the middle of a write: every store stays consistent, the re-run completes.

The writer runs in a subprocess. A SQLite progress handler (called while a statement is
executing) announces that the process is inside an open write transaction and waits
there, so SIGKILL lands mid-batch, deterministically and without timing assumptions.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.db import Stores
from company_ai.core.episodes import seal_day
from company_ai.core.schema import DOMAINS
from company_ai.core.snapshots import restore_drill, snapshot_days

DAY = "2026-11-29"
BATCHES, PER_BATCH = 4, 500

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from company_ai.core.db import Stores
    from company_ai.core.episodes import append_episodes

    data, marker, stop_in = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    done = 0

    def in_the_middle():
        if done == stop_in and not marker.exists():
            marker.write_text("inside batch")
            time.sleep(600)  # waiting for SIGKILL
        return 0

    with Stores(data).connect("memory") as conn:
        conn.set_progress_handler(in_the_middle, 200)
        for batch in range({batches}):
            append_episodes(conn, [
                dict(contact_id=i % 50 + 1, episode_type="research", source="web:example.com",
                     confidence=0.8, created_at="{day}T10:00:00Z", day="{day}",
                     content=f"finding {{batch}}/{{i}}",
                     natural_key=f"research:{day}:{{batch}}:{{i}}")
                for i in range({per_batch})
            ])
            done += 1
""").format(batches=BATCHES, per_batch=PER_BATCH, day=DAY)

SNAPSHOTTER = textwrap.dedent("""
    import sys, time
    from datetime import UTC, datetime
    from pathlib import Path
    from company_ai.core import snapshots
    from company_ai.core.db import Stores

    data, root, marker, kill = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4] == "1"
    copy = snapshots._copy_db

    def copy_then_wait(source, target):
        copy(source, target)
        if kill:
            marker.write_text("one store copied")
            time.sleep(600)  # waiting for SIGKILL

    snapshots._copy_db = copy_then_wait
    snapshots.take_snapshot(
        Stores(data), Path(root), "{day}", keep=3, now=datetime.now(UTC)
    )
""").format(day=DAY)


def run(script, *args):
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        env=os.environ | {"PYTHONPATH": os.getcwd()},
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_when(process, marker: Path):
    while not marker.exists():  # a wait, not a timing assertion
        if process.poll() is not None:
            raise AssertionError(process.communicate()[1])
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL


def finish(process):
    errors = process.communicate()[1]
    assert process.returncode == 0, errors


def assert_consistent(stores):
    for domain in DOMAINS:
        if stores.path(domain).is_file():
            with stores.connect(domain, readonly=True) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchall()[0][0] == "ok", domain


def count(stores):
    with stores.connect("memory", readonly=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM contact_episodes WHERE day = ?", (DAY,)
        ).fetchone()[0]


def test_a_writer_killed_mid_batch_loses_only_that_batch_and_the_rerun_completes(tmp_path):
    stores = Stores(tmp_path / "data")
    stores.create_all()
    marker = tmp_path / "marker"
    kill_when(run(WRITER, stores.data_dir, marker, 2), marker)

    assert_consistent(stores)
    assert count(stores) == 2 * PER_BATCH, "two whole batches, nothing of the third"

    finish(run(WRITER, stores.data_dir, marker, -1))
    assert_consistent(stores)
    assert count(stores) == BATCHES * PER_BATCH, "the re-run completes; nothing doubles"
    with stores.connect("memory") as conn:
        assert seal_day(conn, DAY, now=datetime.now(UTC)).episodes == BATCHES * PER_BATCH


def test_a_snapshot_killed_midway_publishes_nothing_and_the_rerun_does(tmp_path, sample_dir):
    stores, root, marker = Stores(sample_dir), tmp_path / "snaps", tmp_path / "marker"
    kill_when(run(SNAPSHOTTER, sample_dir, root, marker, 1), marker)
    assert snapshot_days(root) == [], "a half-made snapshot is never published"
    assert [p.name.startswith(f".{DAY}.partial-") for p in root.iterdir()] == [True]

    finish(run(SNAPSHOTTER, sample_dir, root, marker, 0))
    assert snapshot_days(root) == [DAY]
    assert [p.name for p in root.iterdir()] == [DAY], "the dead run's staging is cleared"
    assert restore_drill(root).passed
    assert_consistent(stores)
