"""The CLI on a bad day: read-only data, a store locked exclusively by another process,
control characters in stored text, a reader that leaves early, and nonsense arguments."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from company_ai import cli
from company_ai.core.ops import take_snapshot
from company_ai.core.store import Stores, transaction
from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.privileges import run_python_unprivileged
from tests.test_cli import first_email, run
from tests.test_cli_recall import recall_data  # noqa: F401 (a module-scoped fixture)

TAKEN = datetime(2026, 11, 30, 8, 15, tzinfo=UTC)  # when a snapshot is taken


def run_unprivileged(*args):
    """The CLI as an ordinary user runs it, for whom a read-only folder is read-only."""
    return run_python_unprivileged("-m", "company_ai.cli", *args)


@pytest.fixture
def read_only_copy(tmp_path):
    """copy(source) -> a read-only copy of a data folder (files 0444, folders 0555)."""
    copies = []

    def copy(source: Path, *, keep_wal: bool = False) -> Path:
        target = tmp_path / f"read-only-{len(copies)}"
        skip = ("*-shm",) if keep_wal else ("*-wal", "*-shm")
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(*skip))
        for path in [*target.rglob("*"), target]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        copies.append(target)
        return target

    yield copy
    for target in copies:
        for path in [*target.rglob("*"), target]:
            path.chmod(0o755)


# --- read-only data -------------------------------------------------------------------


def test_timeline_and_dossier_read_a_read_only_copy_of_a_wal_store(sample_dir, read_only_copy):
    email = first_email(Stores(sample_dir))
    with Stores(sample_dir).connect("memory", readonly=True) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    copy = read_only_copy(sample_dir)
    files = sorted(p.name for p in copy.iterdir())
    for command in (["timeline", email], ["timeline", email, "--json"], ["dossier", email]):
        expected = run("--data-dir", str(sample_dir), *command)
        done = run_unprivileged("--data-dir", str(copy), *command)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected.stdout and done.stdout.strip()
    assert sorted(p.name for p in copy.iterdir()) == files


def test_a_restored_snapshot_is_readable_in_place(sample_dir, tmp_path, read_only_copy):
    email = first_email(Stores(sample_dir))
    manifest = take_snapshot(
        Stores(sample_dir), tmp_path / "snaps", "2026-11-29", keep=1, now=TAKEN
    )
    restored = read_only_copy(manifest.folder)
    done = run_unprivileged("--data-dir", str(restored), "timeline", email)
    assert done.returncode == 0, done.stderr
    assert done.stdout == run("--data-dir", str(sample_dir), "timeline", email).stdout


def test_page_recall_and_stale_read_a_read_only_recall_store(recall_data, read_only_copy):  # noqa: F811
    copy = read_only_copy(recall_data)
    for command in (["page", "Signalcrest"], ["stale"], ["recall", "who runs support?"]):
        done = run_unprivileged("--data-dir", str(copy), *command)
        assert done.returncode == 0, done.stderr
        assert done.stdout == run("--data-dir", str(recall_data), *command).stdout


def test_a_read_only_copy_whose_wal_holds_commits_is_refused_not_read_stale(
    tmp_path, read_only_copy
):
    # A copy taken while a writer was busy: the newest commits live only in memory.db-wal,
    # which a read-only folder cannot replay. Reading the main file alone would hide them.
    stores = Stores(tmp_path / "data")
    stores.create_all()
    writer = sqlite3.connect(
        factory=StoreConnection, database=stores.path("memory"), isolation_level=None
    )
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute(
        "INSERT INTO day_seals VALUES ('2026-01-01', 0, NULL, 'd', '{}', '{}', 'x', NULL, NULL)"
    )
    copy = read_only_copy(stores.data_dir, keep_wal=True)
    writer.close()
    assert (copy / "memory.db-wal").stat().st_size > 0 and not (copy / "memory.db-shm").exists()
    script = (
        "import sys; from company_ai.core.store.db import Stores, StoreError\n"
        "try:\n"
        f"    Stores({str(copy)!r}).open('memory', readonly=True)\n"
        "except StoreError as exc:\n"
        "    print(exc); sys.exit(0)\n"
        "sys.exit('opened a copy whose WAL it cannot read')\n"
    )
    done = run_python_unprivileged("-c", script)
    assert done.returncode == 0, done.stderr
    assert "memory.db-wal" in done.stdout and "writable" in done.stdout


# --- a store locked exclusively -------------------------------------------------------


@pytest.mark.parametrize("domain", ["crm", "memory"])
def test_note_against_an_exclusive_lock_gives_the_busy_message(data, capsys, monkeypatch, domain):
    stores = Stores(data)
    email = first_email(stores)
    with stores.connect("memory", readonly=True) as conn:
        before = conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]
    monkeypatch.setattr(cli, "Stores", functools.partial(Stores, busy_timeout_ms=100))
    holder = sqlite3.connect(
        factory=StoreConnection, database=stores.path(domain), isolation_level=None
    )
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("SELECT count(*) FROM sqlite_master").fetchone()  # take the lock now
    try:
        status = cli.main(["--data-dir", str(data), "note", email, "called back"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith("company-ai: error: the store is locked by another")
    assert "(100 ms)" in err and "try again" in err
    with stores.connect("memory", readonly=True) as conn:
        assert conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0] == before


# --- control characters in stored text ------------------------------------------------

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b31m \u202eevil\u202c \x00\x7f end"
RAW = ["\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\x00", "\x7f"]


def assert_inert(text: str) -> None:
    leaked = [c for c in RAW if c in text]
    assert not leaked, f"raw control characters printed: {leaked!r}"


def test_timeline_and_dossier_escape_control_characters(data, capsys):
    stores = Stores(data)
    email = first_email(stores)
    with stores.connect("crm") as crm:
        crm.execute("UPDATE contacts SET name = $1 WHERE email = $2", (f"Ada {HOSTILE}", email))
    assert cli.main(["--data-dir", str(data), "note", email, HOSTILE]) == 0
    capsys.readouterr()
    for command in (["timeline", email], ["dossier", email]):
        assert cli.main(["--data-dir", str(data), *command]) == 0
        out = capsys.readouterr().out
        assert_inert(out)
        assert "\\x1b[31mred" in out and "\\u202eevil" in out  # visible, not obeyed
    assert cli.main(["--data-dir", str(data), "timeline", email, "--json"]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    parsed = json.loads(out)
    assert parsed["contact"]["name"] == f"Ada {HOSTILE}"
    assert len([e for e in parsed["entries"] if e.get("content") == HOSTILE]) == 1


def test_page_recall_and_stale_escape_control_characters(recall_data, tmp_path):  # noqa: F811
    data = Path(shutil.copytree(recall_data, tmp_path / "data"))
    with Stores(data).connect("recall") as conn:
        conn.execute("UPDATE entities SET recall = recall || $1, markdown = markdown || $2",
                     (HOSTILE, HOSTILE))  # fmt: skip
        conn.execute("UPDATE observations SET text = text || $1", (HOSTILE,))
    for command in (
        ["page", "Signalcrest"],
        ["stale"],
        ["recall", "who runs customer support?"],
        ["recall", "who runs customer support?", "--json"],
    ):
        done = run("--data-dir", str(data), *command)
        assert done.returncode == 0, done.stderr
        assert_inert(done.stdout)
        assert "\\x1b[31mred" in done.stdout or "\\u001b[31mred" in done.stdout, command
    as_json = json.loads(run("--data-dir", str(data), "recall", "support", "--json").stdout)
    assert as_json["hits"][0]["recall"].endswith(HOSTILE)


def test_an_error_about_stored_or_typed_text_escapes_and_shortens_it(recall_data, tmp_path):  # noqa: F811
    typed = HOSTILE.replace("\x00", "")  # an argument cannot hold NUL
    done = run("--data-dir", str(recall_data), "page", f"Atlantis{typed}")
    assert done.returncode == 1
    assert_inert(done.stderr)
    # A file name is echoed as it is, not as a repr: escaped and shortened all the same.
    source = tmp_path / f"page{typed}.txt"
    draft = tmp_path / "draft.txt"
    draft.write_text("Hi")
    for name in (source, tmp_path / ("y" * 3000) / "page.txt"):
        done = run("gate", "--source", str(name), str(draft))
        assert done.returncode == 1 and done.stderr.startswith("company-ai: error: ")
        assert_inert(done.stderr)
        assert len(done.stderr) < 1200


def test_the_gate_quotes_a_hostile_drafts_sentences_inertly(tmp_path):
    source = tmp_path / "page.txt"
    source.write_text("Acme grew.")
    draft = tmp_path / "draft.txt"
    draft.write_text(f"Hi Ada,\n\nAcme grew 40% {HOSTILE}.\n", encoding="utf-8")
    for flags in ((), ("--json",)):
        done = run("gate", *flags, "--source", str(source), str(draft))
        assert done.returncode == 2, done.stderr
        assert_inert(done.stdout)
        assert "40%" in done.stdout


# --- a reader that leaves early, a huge argument ---------------------------------------


def test_output_into_a_closed_pipe_ends_quietly(data):
    stores = Stores(data)
    email = first_email(stores)
    with stores.connect("crm", readonly=True) as crm:
        contact_id = crm.execute("SELECT id FROM contacts WHERE email = $1", (email,)).fetchone()[0]
    with stores.connect("memory") as memory, transaction(memory):
        memory.executemany(
            "INSERT INTO contact_episodes (contact_id, episode_type, content, source, confidence,"
            " created_at, day, natural_key) VALUES ($1, 'note', $2, 'manual', 1.0, $3, $4, $5)",
            [
                (contact_id, f"note {i} " + "x" * 200, "2026-11-01T10:00:00Z", "2026-11-01",
                 f"bulk:{i}")
                for i in range(2000)
            ],
        )  # fmt: skip
    with subprocess.Popen(
        [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data), "timeline", email],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    ) as cli_process:
        assert cli_process.stdout.readline()  # `head -1`: one line, then the reader is gone
        cli_process.stdout.close()
        stderr = cli_process.stderr.read().decode()
    assert cli_process.returncode == 141, stderr  # as a program stopped by SIGPIPE (128 + 13)
    assert stderr == ""


def test_a_reader_gone_before_the_first_write_is_quiet_too(sample_dir):
    # Short output sits in the buffer until the end: the failure comes at the last flush.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "company_ai.cli", "--data-dir", str(sample_dir), "dossier",
             first_email(Stores(sample_dir))],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
            | {"PYTHONPATH": os.getcwd()},  # buffered, as stdout into a pipe usually is
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_huge_address_is_not_echoed_in_full(sample_dir):
    for address in ("x" * 100_000 + "@example.com", "no-at-sign-" + "y" * 100_000):
        done = run("--data-dir", str(sample_dir), "timeline", address)
        assert done.returncode == 1
        assert done.stderr.startswith("company-ai: error: ") and len(done.stderr) < 400
        assert "…" in done.stderr


# --- nonsense arguments ----------------------------------------------------------------


@pytest.fixture
def no_real_work(monkeypatch):
    """The demo and the sample loader replaced by recorders: a refused argument never gets
    there, and a test that fails does not run a 700-day demo."""
    calls = []
    monkeypatch.setattr("company_ai.demo.run_demo", lambda *a, **kw: calls.append(kw) or 0)
    monkeypatch.setattr(
        "company_ai.sample_world.crm.load_sample", lambda *a, **kw: calls.append(kw)
    )
    return calls


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["demo", "--days", "0"], "--days: must be between 1 and 90"),
        (["demo", "--days", "-2"], "--days: must be between 1 and 90"),
        (["demo", "--days", "91"], "--days: must be between 1 and 90"),
        (["demo", "--contacts", "0"], "--contacts: must be at least 1"),
        (["sample", "--contacts", "-5"], "--contacts: must be at least 1"),
        (["sample", "--density", "0"], "--density: must be a number greater than 0"),
        (["sample", "--density", "-1.5"], "--density: must be a number greater than 0"),
        (["sample", "--density", "nan"], "--density: must be a number greater than 0"),
        (["sample", "--density", "inf"], "--density: must be a number greater than 0"),
        (["recall", ""], "question: must not be empty"),
        (["recall", "   "], "question: must not be empty"),
        (["recall", "support", "--limit", "-1"], "--limit: must be between 1 and 100"),
        (["recall", "support", "--limit", "0"], "--limit: must be between 1 and 100"),
        (["recall", "support", "--limit", "ten"], "--limit: not a whole number: 'ten'"),
    ],
)
def test_nonsense_arguments_are_refused_before_any_work(
    argv, message, no_real_work, tmp_path, capsys
):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--data-dir", str(tmp_path / "data"), *argv])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert no_real_work == [] and not (tmp_path / "data").exists()


def test_sensible_arguments_still_reach_the_work(no_real_work, tmp_path):
    assert cli.main(["demo", "--dir", str(tmp_path), "--days", "90", "--contacts", "1"]) == 0
    assert no_real_work == [{"contacts": 1, "days": 90}]
