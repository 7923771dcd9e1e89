"""kill -9 in the middle of a write: every store stays consistent, the re-run completes.

The writer runs in a subprocess. A SQLite progress handler (called while a statement is
executing) announces that the process is inside an open write transaction and waits
there, so SIGKILL lands mid-batch, deterministically and without timing assumptions.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from company_ai.core.memory import seal_day
from company_ai.core.ops import restore_drill
from company_ai.core.ops.snapshots import snapshot_days
from company_ai.core.store import DOMAINS, Stores
from company_ai.core.times import Day

DAY = "2026-11-29"
BATCHES, PER_BATCH = 4, 500

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from company_ai.core.store.db import Stores
    from company_ai.core.memory.episodes import append_episodes

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
            ], now="{day}T10:00:00Z")
            done += 1
""").format(batches=BATCHES, per_batch=PER_BATCH, day=DAY)

SNAPSHOTTER = textwrap.dedent("""
    import sys, time
    from datetime import UTC, datetime
    from pathlib import Path
    from company_ai.core.ops import snapshots
    from company_ai.core.store.db import Stores

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
            "SELECT count(*) FROM contact_episodes WHERE day = $1", (DAY,)
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
        window = Day.of(DAY, "UTC")  # the writer recorded them at 10:00 that day
        assert seal_day(conn, window, now=datetime.now(UTC)).episodes == BATCHES * PER_BATCH


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


# --- `company-ai forget` killed at each of its steps ----------------------------------------
#
# The CLI runs in a child that patches forget's own functions (no hook in the product), and
# SIGKILLs itself where the case says: as a step begins, or inside its work (a SQLite write
# transaction open, with its journal on disk). The next forget, a plain CLI process, must
# finish it; a third says the person was forgotten before.

FORGETTER = textwrap.dedent("""
    import os, signal, sqlite3, sys
    from pathlib import Path
    from company_ai.core.crm import tombstones
    from company_ai.core.ops import forgetting as forget
    from company_ai.core.vectors import store as vectors
    from company_ai.cli import main

    data, email, case = sys.argv[1], sys.argv[2], sys.argv[3]
    step, _, where = case.partition(":")
    armed = []  # the database files a kill inside a write waits for
    WRITES = {"INSERT", "UPDATE", "DELETE", "VACUUM"}

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def step_of(name, run):
        def killed(*args, **kwargs):
            if where == "begins":
                die()
            armed.append(where)
            try:
                return run(*args, **kwargs)
            finally:
                armed.clear()
        return killed

    connect = sqlite3.connect

    def connect_watched(target, *args, **kwargs):
        conn = connect(target, *args, **kwargs)
        name = str(target).split("$1")[0].rsplit("/", 1)[-1]
        last = [""]
        conn.set_trace_callback(lambda sql: last.__setitem__(0, sql))

        def inside():
            # A write under way in the armed store (a statement that changes it running).
            if armed and name == armed[0] and last[0].split(" ")[0].upper() in WRITES:
                die()
            return 0

        conn.set_progress_handler(inside, 1)
        return conn

    sqlite3.connect = connect_watched
    if step == "tombstone":
        tombstones.Tombstones.bury = step_of(step, tombstones.Tombstones.bury)
    elif step == "compact":
        forget._compact = step_of(step, forget._compact)
    elif step == "audit":
        log = tombstones.Tombstones.log
        def logged(self, entry):
            if where == "begins":
                die()
            log(self, entry)
            die()  # written: the progress file is still there
        tombstones.Tombstones.log = logged
    elif step == "progress":
        # Killed inside the progress file's atomic write after the first place: its
        # temporary copy (the person's addresses) written, not yet renamed.
        import tempfile
        writes = []
        def write_then_killed(path, data_, **kwargs):
            writes.append(path)
            if len(writes) == 2:
                fd, _ = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                os.write(fd, data_)
                die()
            write(path, data_, **kwargs)
        write = forget.write_atomic
        forget.write_atomic = write_then_killed
    elif step == "vectors" and where == "erasing":
        # Chroma's deletions are committed and the labels to zero are noted: the process
        # dies in a write to Chroma's SQLite (its pages half written, the journal hot).
        zero = vectors._zero_erased
        def hot_then_killed(*args, **kwargs):
            conn = connect(Path(data) / "vectors" / "chroma.sqlite3", isolation_level=None)
            conn.execute("PRAGMA cache_size=1")  # pages spill to the file mid-transaction
            conn.execute("BEGIN")
            conn.execute("UPDATE embeddings_queue SET metadata = metadata")
            conn.execute("UPDATE embedding_metadata SET key = key")
            die()
        vectors._zero_erased = hot_then_killed
    else:
        forget.PLACES[:] = [
            (n, step_of(n, run) if n == step else run) for n, run in forget.PLACES
        ]
    sys.exit(main(["--data-dir", data, "forget", email]))
""")

# (step, where): "begins", or the store file a write inside the step is killed in.
KILLS = [
    ("tombstone", "begins"),
    ("memory", "begins"),
    ("memory", "memory.db"),
    ("outreach", "outreach.db"),
    ("brain", "brain.db"),
    ("recall", "recall.db"),
    ("vault_staging", "begins"),
    ("vectors", "begins"),
    ("vectors", "erasing"),
    ("vectors", "chroma.sqlite3"),
    ("files", "begins"),
    ("rows", "begins"),
    ("crm", "crm.db"),
    ("compact", "begins"),
    ("compact", "crm.db"),
    ("compact", "chroma.sqlite3"),
    ("audit", "begins"),
    ("audit", "written"),
    ("progress", "tmp"),
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A few contacts with episodes and messages, a brain fact, a recall page and the
    vault staging naming one of them, and both vector collections: built once (a second),
    copied per case. Returns (data dir, their id, address, name, their vector ids)."""
    from company_ai.core.store import transaction
    from company_ai.core.vault import distill_staging, offline_page, stage_vault, staging_dir
    from company_ai.core.vectors import (
        COLLECTIONS,
        Signals,
        open_store,
        sync_episodes,
        sync_knowledge,
        vectors_dir,
    )
    from company_ai.sample_world.crm import load_sample
    from tests.conftest import AS_OF, SAMPLE_VAULT, fixed_clock
    from tests.fakes import WordEmbedder

    root = tmp_path_factory.mktemp("forget-kill")
    data, stores = root / "data", Stores(root / "data")
    load_sample(stores, contacts=8, as_of=AS_OF)
    with stores.connect("outreach", readonly=True) as outreach:
        [cid] = outreach.execute(
            "SELECT contact_id FROM messages GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
        ).fetchone()
    with stores.connect("crm", readonly=True) as crm:
        email, name = crm.execute(
            "SELECT email, name FROM contacts WHERE id = $1", (cid,)
        ).fetchone()
    vault = Path(shutil.copytree(SAMPLE_VAULT, root / "vault"))
    (vault / "people" / "them.md").write_text(f"# {name}\n\n- [context] {name} ({email}).\n")
    stage_vault(vault, staging_dir(data), day=DAY)
    with stores.connect("recall") as conn:
        distill_staging(
            conn, str(staging_dir(data)), day=DAY, source="model:offline",
            distill=lambda title, path, text: offline_page(path, text), clock=fixed_clock(),
        )  # fmt: skip
    with stores.connect("brain") as brain, transaction(brain):
        brain.execute(
            "INSERT INTO facts (day, key, kind, about, text, importance, sources)"
            " VALUES ($1, 'f1', 'contact', $2, $3, 3, '[]')",
            (DAY, f"contact:{cid}", f"{name} asked for a quote"),
        )
    words = WordEmbedder()
    with open_store(vectors_dir(data), words.name, words.dim) as (store, opened):
        for sync in (sync_episodes, sync_knowledge):
            sync(store, opened, stores, words, Day.of(DAY, "UTC"), cap=10_000, signals=Signals())
        theirs = {
            n: sorted({*store.metadata(n, {"contact_id": cid}),
                       *store.metadata_of(n, [f"fact:{DAY}/f1", f"page:{name}"])})
            for n in COLLECTIONS
        }  # fmt: skip
    assert theirs["episodes"] and len(theirs["knowledge"]) == 2, theirs
    return data, cid, email, name, theirs


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "company_ai.cli", *map(str, args)],
        env=os.environ | {"PYTHONPATH": os.getcwd()},
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(("step", "where"), KILLS, ids=[f"{s}-{w}" for s, w in KILLS])
def test_a_forget_killed_at_any_step_is_finished_by_the_next(small, tmp_path, step, where):
    from company_ai.core.crm import Tombstones
    from company_ai.core.crm.tombstones import TOMBSTONE_FILE
    from company_ai.core.ops.forgetting import PROGRESS_FILE
    from company_ai.core.vectors import open_existing, vectors_dir
    from tests.hostile.canary import find_canary

    source, cid, email, name, theirs = small
    data = shutil.copytree(source, tmp_path / "data")
    killed = subprocess.run(
        [sys.executable, "-c", FORGETTER, str(data), email, f"{step}:{where}"],
        env=os.environ | {"PYTHONPATH": os.getcwd()},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]

    finished = cli("--data-dir", data, "forget", email)
    assert finished.returncode == 0, finished.stderr[-2000:]
    stores = Stores(data)
    assert_consistent(stores)
    with stores.connect("crm", readonly=True) as crm:
        assert crm.execute("SELECT count(*) FROM contacts WHERE id = $1", (cid,)).fetchone()[0] == 0
    with stores.connect("memory", readonly=True) as memory:
        left = memory.execute(
            "SELECT count(*) FROM contact_episodes WHERE contact_id = $1", (cid,)
        ).fetchone()[0]
        assert left == 0
    with open_existing(vectors_dir(data)) as store:
        for collection, ids in theirs.items():
            assert store.metadata_of(collection, ids) == {}, collection
            assert store.metadata(collection, {"contact_id": cid}) == {}, collection
    for secret in (email, name):
        assert find_canary(secret, data) == [], secret
    assert not list(data.glob(f"*{PROGRESS_FILE}*")), "the progress file (and its temp) gone"
    assert list(data.glob(f".{TOMBSTONE_FILE}*")) == []
    assert len(Tombstones.load(data).forgets) == 1, "one audit entry for one forget"

    third = cli("--data-dir", data, "forget", email, "--json")
    assert third.returncode == 0, third.stderr[-2000:]
    assert json.loads(third.stdout)["already_forgotten"] is True


def test_a_killed_forgets_progress_file_is_its_own_and_no_snapshot_takes_it(small, tmp_path):
    """The progress file holds their addresses until the forget is finished: readable by
    its owner only, and not in a snapshot taken meanwhile (snapshots copy the stores)."""
    from company_ai.core.ops import take_snapshot
    from company_ai.core.ops.forgetting import PROGRESS_FILE

    source, _, email, _, _ = small
    data = shutil.copytree(source, tmp_path / "data")
    killed = subprocess.run(
        [sys.executable, "-c", FORGETTER, str(data), email, "files:begins"],
        env=os.environ | {"PYTHONPATH": os.getcwd()},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    progress = data / PROGRESS_FILE
    assert email in progress.read_text()
    assert progress.stat().st_mode & 0o077 == 0, "readable by its owner only"
    snap = take_snapshot(Stores(data), tmp_path / "snaps", DAY, keep=1, now=datetime.now(UTC))
    assert snap.files
    assert [p for p in (tmp_path / "snaps").rglob("*") if "progress" in p.name] == []
    assert cli("--data-dir", data, "forget", email).returncode == 0
    assert list(data.glob(f"*{PROGRESS_FILE}*")) == []
