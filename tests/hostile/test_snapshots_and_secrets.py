"""Snapshots and secrets under hostile conditions: a snapshot of the wrong (or an empty)
data directory, a full or read-only state folder, and a Telegram that echoes the token."""

from __future__ import annotations

import base64
import errno
import json
import logging
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, quote_plus

import dagster as dg
import pytest

from company_ai.core.ops import (
    MANIFEST,
    StateExportError,
    export_state,
    restore_drill,
    snapshots,
    take_snapshot,
)
from company_ai.core.ops.snapshots import SnapshotError, load_manifest, snapshot_days
from company_ai.core.store import Stores
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF
from tests.fakes import FakeServer, Reply
from tests.hostile import stores as hostile_stores
from tests.hostile.canary import find_canary
from tests.hostile.privileges import run_python_unprivileged
from tests.setup import named

state_export = named("state_export")

DAY = "2026-11-29"
# 09:00 on DAY: DAY's 06:15 export and 08:15 snapshot are current (their ticks today
# processed DAY), and DAY's 09:05 digest is the next one due (so it is the one that sends).
MORNING = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)

TAKEN = datetime(2026, 11, 29, 8, 15, tzinfo=UTC)  # when DAY's snapshot is taken


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


def test_a_retake_from_a_folder_missing_stores_keeps_their_good_copies(good, sample_dir, tmp_path):
    root, manifest = good
    before = {f["file"]: f for f in load_manifest(root / DAY).files}
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    shutil.copy(sample_dir / "crm.db", wrong / "crm.db")  # another folder: only a CRM
    taken = take_snapshot(Stores(wrong), root, DAY, keep=3, now=TAKEN)  # the same day again
    assert set(taken.refused) == {"memory.db", "outreach.db"}
    assert all("is not in the data directory" in why for why in taken.refused.values())
    assert taken.last_good == {"crm.db": DAY, "memory.db": DAY, "outreach.db": DAY}
    # The day's folder was replaced, and the good copies it held went on into the new one.
    for name in ("memory.db", "outreach.db"):
        assert snapshots.sha256_file(root / DAY / name) == before[name]["sha256"]
    assert [p.name for p in root.iterdir()] == [DAY], "no staging folder left behind"
    assert restore_drill(root).passed


def test_an_empty_snapshot_published_earlier_is_no_baseline(sample_dir, tmp_path):
    # Old code published `files: []` over a good snapshot; compare with the good one before.
    root = tmp_path / "snaps"
    take_snapshot(Stores(sample_dir), root, "2026-11-28", keep=3, now=TAKEN)
    (root / DAY).mkdir()
    (root / DAY / MANIFEST).write_text(json.dumps({"day": DAY, "files": []}))
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    shutil.copy(sample_dir / "crm.db", wrong / "crm.db")
    taken = take_snapshot(Stores(wrong), root, DAY, keep=3, now=TAKEN)
    assert taken.refused["memory.db"].startswith("memory.db is not in the data directory")
    assert taken.last_good["memory.db"] == "2026-11-28"
    take_snapshot(Stores(sample_dir), root, DAY, keep=3, now=TAKEN)  # the real one replaces it
    assert load_manifest(root / DAY).last_good == dict.fromkeys(taken.last_good, DAY)
    assert restore_drill(root).passed


def test_a_snapshot_with_far_fewer_rows_keeps_every_last_good_generation(good, tmp_path):
    root, manifest = good
    small = Stores(tmp_path / "small")
    load_sample(small, contacts=20, as_of=AS_OF)  # the same stores, far fewer rows
    taken = take_snapshot(small, root, "2026-11-30", keep=3, now=TAKEN)
    assert taken.files == [] and set(taken.last_good.values()) == {DAY}
    assert "table contacts: 20 rows, under 50% of the 300 on 2026-11-29" in taken.refused["crm.db"]
    for entry in taken.suspect:  # the copies set aside are kept as evidence, not as backups
        assert entry["kept"] == f"suspect/{entry['file']}"
        assert (root / "2026-11-30" / entry["kept"]).is_file()
    assert (root / DAY / MANIFEST).read_text() == manifest
    report = restore_drill(root)
    assert report.passed and report.restored == [f"{f} ({DAY})" for f in sorted(taken.last_good)]


def test_each_store_and_table_is_judged_against_its_own_last_good_generation():
    def judge(was, now):
        return snapshots.judge({"tables": was}, DAY, {"tables": now})

    big = {"contacts": 1000, "contact_emails": 900, "intake_refusals": 0}
    assert judge(big, big | {"contacts": 999, "contact_emails": 899}) == [], "a forget"
    assert judge(big, big | {"contacts": 500}) == [], "half is still no sharp fall"
    assert judge(big, big | {"contacts": 499}) == [
        f"table contacts: 499 rows, under 50% of the 1,000 on {DAY}"
    ]
    assert judge(big, {"contacts": 1000, "intake_refusals": 0}) == [
        f"table contact_emails vanished (it had 900 rows on {DAY})"
    ]
    assert judge(big, {}) == [
        f"table {t} vanished (it had {n:,} rows on {DAY})" for t, n in big.items()
    ], "every table gone: each named, the empty ones too"
    # Tables too small to judge alone are judged as a store; a rebuilt cache is not judged.
    small = {"a": 19, "b": 19, "c": 19}
    assert judge(small, {"a": 0, "b": 19, "c": 19}) == []
    assert judge(small, {"a": 0, "b": 0, "c": 19}) == [
        f"19 rows in all, under 50% of the 57 on {DAY}"
    ]
    assert judge({"a": 10}, {"a": 0}) == [], "a store of ten rows moves by whole rows"
    assert (
        judge({"search_vectors": 5000, "search_docs": 50}, {"search_vectors": 0, "search_docs": 50})
        == []
    )
    fts = {"search_fts": 0, "search_fts_data": 300, "docs": 30}
    assert judge(fts, {"search_fts": 0, "search_fts_data": 2, "docs": 30}) == []


def test_an_intended_shrink_is_published_when_asked_for(good, tmp_path):
    root, _ = good
    small = Stores(tmp_path / "small")
    load_sample(small, contacts=20, as_of=AS_OF)
    manifest = take_snapshot(small, root, DAY, keep=3, now=TAKEN, allow_shrink=True)
    assert load_manifest(root / DAY).files == manifest.files and manifest.refused == {}
    assert restore_drill(root).passed
    # ... and the smaller snapshot is the new baseline: the next one is compared with it.
    assert take_snapshot(small, root, "2026-11-30", keep=3, now=TAKEN).refused == {}


def test_the_drill_fails_on_a_snapshot_without_stores_or_rows(good, tmp_path):
    root, _ = good
    path = root / DAY / MANIFEST
    path.write_text(json.dumps({"day": DAY, "files": []}))  # as published by the code
    report = restore_drill(root)  # before this check
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
        "from company_ai.core.store.db import Stores\n"
        "from company_ai.core.ops.state import StateExportError, export_state\n"
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
    from tests.assets.test_ops import resources

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
    from tests.assets.test_ops import resources

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


# --- damaged stores through the real asset (tests/hostile/stores/) ------------------

NEXT = "2026-11-30"  # the day after DAY: its 08:15 snapshot is current at 09:00 on NEXT
NEXT_MORNING = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def snapshot_run(data: Path, clock, at: datetime, day: str, instance) -> dg.ExecuteInProcessResult:
    from tests.assets.test_ops import resources

    clock(at)
    return dg.materialize(
        [named("db_snapshots")], partition_key=day, instance=instance, resources=resources(data)
    )


@pytest.mark.parametrize("recipe", sorted(hostile_stores.recipes()))
def test_a_damaged_store_keeps_its_last_good_generation_the_others_go_on(data, clock, recipe):
    root = data / "snapshots"
    with dg.instance_for_test() as instance:
        assert snapshot_run(data, clock, MORNING, DAY, instance).success
        good = {f["file"]: f for f in load_manifest(root / DAY).files}
        expected = hostile_stores.recipes()[recipe].damage(data)
        result = snapshot_run(data, clock, NEXT_MORNING, NEXT, instance)
        assert result.success, "one bad store does not fail the others' snapshots"
        [check] = result.get_asset_check_evaluations()
    assert check.check_name == "db_snapshots_refused_nothing" and not check.passed
    assert check.severity == dg.AssetCheckSeverity.ERROR
    reasons = check.metadata["reasons"].value
    assert check.metadata["refused"].value == 1 and list(reasons) == [expected.store]
    assert expected.reason in reasons[expected.store]
    if expected.table:
        assert f"table {expected.table}" in reasons[expected.store]
    assert expected.store in check.description
    meta = result.asset_materializations_for_node("db_snapshots")[0].metadata
    assert meta["items_refused"].value == 1 and expected.store in meta["reasons"].value

    after = json.loads((root / NEXT / MANIFEST).read_text())
    assert after["last_good"][expected.store] == DAY, "the last good generation is kept"
    assert all(day == NEXT for f, day in after["last_good"].items() if f != expected.store)
    assert expected.store not in {f["file"] for f in after["files"]}
    assert {f["file"] for f in after["files"]} == set(good) - {expected.store}
    # The day's good copy of the damaged store is untouched, and the restore uses it.
    assert snapshots.sha256_file(root / DAY / expected.store) == good[expected.store]["sha256"]
    report = restore_drill(root)
    assert report.passed, report.problems
    assert f"{expected.store} ({DAY})" in report.restored


def test_a_store_set_aside_reaches_the_alerts_and_the_digest(data, clock):
    from company_ai import ledger
    from company_ai.core.ops import build_digest
    from company_ai.core.times import utc_now
    from company_ai.sensors.alerts import check_failure_alerts
    from tests.assets.test_ops import outbox, resources
    from tests.hostile.stores import empty_crm

    defs = dg.Definitions(
        assets=[named("db_snapshots")], sensors=[check_failure_alerts], resources=resources(data)
    )
    started = utc_now() - timedelta(minutes=1)  # Dagster records runs at the wall clock
    with dg.instance_for_test() as instance:
        assert snapshot_run(data, clock, MORNING, DAY, instance).success
        empty_crm.damage(data)
        assert snapshot_run(data, clock, NEXT_MORNING, NEXT, instance).success
        check_failure_alerts(
            dg.build_sensor_context(instance=instance, definitions=defs, resources=resources(data))
        )
        ended = utc_now() + timedelta(minutes=1)
        runs = ledger.runs_between(instance, started, ended)  # as the digest reads them
    assert any(
        t.startswith("ERROR: check failed: db_snapshots:db_snapshots_refused_nothing")
        for t in outbox(data)
    )
    digest = build_digest(runs, [], started, ended).render()
    assert (
        "ERROR: checks failed (each alerted when it failed):\n"
        "- db_snapshots db_snapshots_refused_nothing: 1"
    ) in digest


def test_forgetting_one_person_is_no_shrink(data, clock):
    from company_ai.core.ops import forget

    stores = Stores(data)
    with stores.connect("crm", readonly=True) as crm:
        (email,) = crm.execute("SELECT email FROM contact_emails LIMIT 1").fetchone()
    with dg.instance_for_test() as instance:
        assert snapshot_run(data, clock, MORNING, DAY, instance).success
        forget(stores, email, now="2026-11-29T10:00:00Z", log=lambda _: None)
        result = snapshot_run(data, clock, NEXT_MORNING, NEXT, instance)
    [check] = result.get_asset_check_evaluations()
    assert check.passed, check.description
    after = json.loads((data / "snapshots" / NEXT / MANIFEST).read_text())
    assert set(after["last_good"].values()) == {NEXT}
