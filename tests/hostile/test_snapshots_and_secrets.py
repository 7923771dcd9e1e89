"""Snapshots and secrets under hostile conditions: a snapshot of the wrong (or an empty)
data directory, a full or read-only state folder, and a Telegram that echoes the token."""

from __future__ import annotations

import base64
import errno
import json
import logging
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, quote_plus

import dagster as dg
import pytest

from company_ai.core import snapshots
from company_ai.core.db import Stores
from company_ai.core.sample import load_sample
from company_ai.core.snapshots import (
    MANIFEST,
    SnapshotError,
    load_manifest,
    restore_drill,
    snapshot_days,
    take_snapshot,
)
from company_ai.core.state import StateExportError, export_state
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from tests.conftest import AS_OF
from tests.fakes import FakeServer, Reply
from tests.hostile.canary import find_canary
from tests.hostile.privileges import run_python_unprivileged
from tests.setup import named

state_export = named("state_export")

DAY = "2026-11-29"

TAKEN = datetime(2026, 11, 30, 8, 15, tzinfo=UTC)  # when a snapshot is taken


@pytest.fixture
def good(sample_dir, tmp_path):
    """A good snapshot of the sample data for DAY: (snapshot root, its manifest text)."""
    root = tmp_path / "snaps"
    take_snapshot(Stores(sample_dir), root, DAY, keep=3, now=TAKEN)
    return root, (root / DAY / MANIFEST).read_text()


def assert_untouched(root: Path, manifest_text: str) -> None:
    assert snapshot_days(root) == [DAY]
    assert (root / DAY / MANIFEST).read_text() == manifest_text
    assert [p.name for p in root.iterdir()] == [DAY], "no staging folder left behind"
    assert restore_drill(root).passed


# --- snapshots ----------------------------------------------------------------------


def test_a_snapshot_of_an_empty_data_dir_never_replaces_the_real_one(good, tmp_path):
    root, manifest = good
    empty = Stores(tmp_path / "empty")
    empty.data_dir.mkdir()
    with pytest.raises(SnapshotError, match=r"(?i)no store in .*empty.*nothing was published"):
        take_snapshot(empty, root, DAY, keep=3, now=TAKEN)
    assert_untouched(root, manifest)


def test_a_first_snapshot_of_an_empty_data_dir_is_refused_too(tmp_path):
    with pytest.raises(SnapshotError, match="no store in"):
        take_snapshot(Stores(tmp_path / "nothing-here"), tmp_path / "snaps", DAY, keep=3, now=TAKEN)
    assert snapshot_days(tmp_path / "snaps") == []


def test_a_snapshot_missing_a_store_of_the_last_good_one_is_refused(good, sample_dir, tmp_path):
    root, manifest = good
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    shutil.copy(sample_dir / "crm.db", wrong / "crm.db")  # another folder: only a CRM
    with pytest.raises(SnapshotError) as refused:
        take_snapshot(Stores(wrong), root, DAY, keep=3, now=TAKEN)
    message = str(refused.value)
    assert "memory.db" in message and "outreach.db" in message and DAY in message
    assert "allow_shrink" in message and "nothing was published" in message.lower()
    assert_untouched(root, manifest)


def test_an_empty_snapshot_published_earlier_is_no_baseline(sample_dir, tmp_path):
    # Old code published `files: []` over a good snapshot; compare with the good one before.
    root = tmp_path / "snaps"
    take_snapshot(Stores(sample_dir), root, "2026-11-28", keep=3, now=TAKEN)
    (root / DAY).mkdir()
    (root / DAY / MANIFEST).write_text(json.dumps({"day": DAY, "files": []}))
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    shutil.copy(sample_dir / "crm.db", wrong / "crm.db")
    with pytest.raises(SnapshotError, match="no memory.db, which the snapshot of 2026-11-28 has"):
        take_snapshot(Stores(wrong), root, DAY, keep=3, now=TAKEN)
    take_snapshot(Stores(sample_dir), root, DAY, keep=3, now=TAKEN)  # the real one replaces it
    assert restore_drill(root).passed


def test_a_snapshot_with_far_fewer_rows_is_refused(good, tmp_path):
    root, manifest = good
    small = Stores(tmp_path / "small")
    load_sample(small, contacts=20, as_of=AS_OF)  # the same stores, far fewer rows
    with pytest.raises(SnapshotError, match="under 50% of the"):
        take_snapshot(small, root, DAY, keep=3, now=TAKEN)
    assert_untouched(root, manifest)


def test_the_shrink_threshold_is_any_store_missing_or_under_half_the_rows(tmp_path):
    def entry(name, rows):
        return {"file": name, "tables": {"t": rows}}

    last = snapshots.Manifest(DAY, tmp_path, [entry("crm.db", 60), entry("memory.db", 140)])
    assert snapshots.shrinkage(last, [entry("crm.db", 60), entry("memory.db", 40)]) == []
    assert snapshots.shrinkage(last, [entry("crm.db", 60), entry("memory.db", 39)]) == [
        f"99 rows, under 50% of the 200 in the snapshot of {DAY}"
    ]
    assert snapshots.shrinkage(last, [entry("memory.db", 900)]) == [
        f"no crm.db, which the snapshot of {DAY} has"
    ]
    assert snapshots.shrinkage(None, [entry("crm.db", 1)]) == []


def test_an_intended_shrink_is_published_when_asked_for(good, tmp_path):
    root, _ = good
    small = Stores(tmp_path / "small")
    load_sample(small, contacts=20, as_of=AS_OF)
    manifest = take_snapshot(small, root, DAY, keep=3, now=TAKEN, allow_shrink=True)
    assert load_manifest(root / DAY).files == manifest.files
    assert restore_drill(root).passed
    # ... and the smaller snapshot is the new baseline: the next one is compared with it.
    take_snapshot(small, root, "2026-11-30", keep=3, now=TAKEN)


def test_the_drill_fails_on_a_snapshot_without_stores_or_rows(good, tmp_path):
    root, _ = good
    path = root / DAY / MANIFEST
    path.write_text(json.dumps(json.loads(path.read_text()) | {"files": []}))  # as published
    report = restore_drill(root)  # by the code before this check
    assert not report.passed and report.problems == ["the snapshot holds no store"]

    fresh = Stores(tmp_path / "fresh")
    fresh.create_all()  # every store, not one row yet
    take_snapshot(fresh, tmp_path / "fresh-snaps", DAY, keep=1, now=TAKEN)
    report = restore_drill(tmp_path / "fresh-snaps")
    assert not report.passed and report.problems == ["the snapshot holds no rows"]


# --- the state export on a full or read-only disk -------------------------------------


def full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("call", ["fsync", "replace"])
def test_a_state_export_on_a_full_disk_says_so_and_leaves_the_old_files(
    sample_dir, tmp_path, monkeypatch, call
):
    stores, folder = Stores(sample_dir), tmp_path / "state"
    export_state(stores, folder, tmp_path / "snaps", "2026-11-28T06:15:00Z")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    monkeypatch.setattr(f"company_ai.core.files.os.{call}", full_disk)
    with pytest.raises(StateExportError) as failed:
        export_state(stores, folder, tmp_path / "snaps", "2026-11-29T06:15:00Z")
    message = str(failed.value)
    assert message.startswith(f"cannot write the state files into {folder}: the disk is full")
    assert "COMPANY_AI_STATE_DIR" in message
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before, "nothing half-written"


def test_a_state_export_into_a_read_only_folder_says_so(sample_dir, tmp_path):
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(0o555)
    script = (
        "import sys\n"
        "from company_ai.core.db import Stores\n"
        "from company_ai.core.state import StateExportError, export_state\n"
        "try:\n"
        f"    export_state(Stores({str(sample_dir)!r}), {str(folder)!r}, '/nonexistent', 'x')\n"
        "except StateExportError as exc:\n"
        "    print(exc); sys.exit(0)\n"
        "sys.exit('wrote into a read-only folder')\n"
    )
    done = run_python_unprivileged("-c", script)
    folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert "it is read-only" in done.stdout and "COMPANY_AI_STATE_DIR" in done.stdout
    assert list(folder.iterdir()) == []


def test_the_state_export_asset_fails_clearly(data, tmp_path, clock):
    from tests.assets.test_ops import MORNING, resources

    clock(MORNING)  # DAY's own export: a capture runs for its current day only
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    ops = resources(data) | {
        "ops_folders": OpsFolders(
            snapshot_dir=str(tmp_path / "snaps"),
            snapshot_retention=2,
            state_dir=str(blocker),
            export_dir=str(tmp_path / "exports"),
        )
    }
    with (
        dg.instance_for_test() as instance,
        pytest.raises(dg.Failure, match="a part of the path is a file, not a folder"),
    ):
        dg.materialize([state_export], partition_key=DAY, instance=instance, resources=ops)


# --- secrets ------------------------------------------------------------------------

CANARY_TOKEN = "8123456789:AAFcanaryTokenVelvetOtter42"


def echoed(token: str) -> str:
    """A Telegram error that echoes the token back in every way a service might."""
    url = f"bot{token}/sendMessage"
    escapes = "".join(f"\\u{ord(c):04x}" for c in token)
    return " ".join(
        [
            f"Not Found: {quote(url, safe='')}",
            f"path {quote(url).lower()}",
            f"query token={quote_plus(token)}",
            f"upper {token.upper()}",
            f"json {json.dumps({'t': token}, ensure_ascii=True)}",
            f"escaped {escapes}",
            f"debug {base64.b64encode(url.encode()).decode()}",
            f"debug2 {base64.urlsafe_b64encode(('x' + url).encode()).decode()}",
        ]
    )


def test_a_telegram_error_echoing_the_token_leaves_no_trace_anywhere(data, tmp_path, caplog, clock):
    from tests.setup import named

    daily_digest = named("daily_digest")
    from tests.assets.test_ops import MORNING, resources

    clock(MORNING)  # DAY's own digest: only a day's own run sends

    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    with FakeServer() as server, caplog.at_level(logging.DEBUG):
        reply = {"ok": False, "error_code": 404, "description": echoed(CANARY_TOKEN)}
        server.script(f"/bot{CANARY_TOKEN}/sendMessage", Reply(reply, status=404))
        notifier = Notifier(
            backend="telegram",
            data_dir=str(data),
            outbox_path=str(data / "outbox.jsonl"),
            telegram_token=CANARY_TOKEN,
            telegram_chat_id="42",
            telegram_base_url=server.url,
            timeout_s=5,
        )
        with dg.instance_for_test(temp_dir=str(dagster_home)) as instance:
            result = dg.materialize(
                [daily_digest],
                partition_key=DAY,
                instance=instance,
                resources=resources(data, notifier=notifier),
            )
            assert result.success  # a notifier that is down never fails the job
            logs = instance.all_logs(result.run_id)
        assert len(server.requests) == 1, "the fake was asked, and answered with the token"
    meta = result.asset_materializations_for_node("daily_digest")[0].metadata
    assert meta["delivered"].value is False and meta["alerts_pending"].value == 1
    with Stores(data).connect("ops", readonly=True) as ops:
        last_error = ops.execute("SELECT last_error FROM alerts").fetchone()[0]
    assert "telegram answered 404: Not Found: " in last_error and "<secret>" in last_error
    assert any("<secret>" in (e.message or "") for e in logs), "the warning was logged"
    assert find_canary(CANARY_TOKEN, data, dagster_home) == []
    assert CANARY_TOKEN.lower() not in caplog.text.lower()
    assert quote(CANARY_TOKEN, safe="").lower() not in caplog.text.lower()


def test_an_alert_whose_text_holds_a_secret_stores_logs_and_sends_it_masked(
    tmp_path, monkeypatch, caplog
):
    # A run failure that quotes a URL with the token: the secret comes from the settings.
    monkeypatch.setenv("COMPANY_AI_TELEGRAM_TOKEN", CANARY_TOKEN)
    notifier = Notifier(data_dir=str(tmp_path / "data"), outbox_path=str(tmp_path / "o.jsonl"))
    url = f"https://api.telegram.org/bot{quote(CANARY_TOKEN, safe='')}/getMe"
    with caplog.at_level(logging.DEBUG):
        assert notifier.send("run-failure:1", f"FAILED probe: GET {url} timed out").sent == 1
    assert find_canary(CANARY_TOKEN, tmp_path) == []
    assert quote(CANARY_TOKEN, safe="") not in caplog.text
    sent = json.loads((tmp_path / "o.jsonl").read_text())["text"]
    assert sent == "FAILED probe: GET https://api.telegram.org/bot<secret>/getMe timed out"


def test_the_retry_on_a_quiet_tick_scrubs_the_error_too(tmp_path):
    with FakeServer() as server:
        reply = {"ok": False, "error_code": 401, "description": echoed(CANARY_TOKEN)}
        server.script(f"/bot{CANARY_TOKEN}/sendMessage", Reply(reply, status=401))
        notifier = Notifier(
            backend="telegram",
            data_dir=str(tmp_path),
            outbox_path=str(tmp_path / "o.jsonl"),
            telegram_token=CANARY_TOKEN,
            telegram_chat_id="42",
            telegram_base_url=server.url,
            timeout_s=5,
        )
        notifier.send("a", "first")
        retried = notifier.flush()
        assert len(server.requests) == 2
    assert retried.pending == 1 and retried.error.startswith("NotifierError: telegram answered 401")
    assert find_canary(CANARY_TOKEN, tmp_path) == [] and "<secret>" in retried.error
