import json
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.ops import alerts
from company_ai.core.store import Stores, pg
from company_ai.core.store.pg_schema import PG_MIGRATIONS
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from company_ai.resources.stores import StoresResource
from company_ai.sensors.alerts import check_failure_alerts
from tests.conftest import database_for
from tests.fakes import FakeServer, Reply
from tests.not_taken import declined
from tests.setup import named
from tests.test_notifier import TOKEN, telegram, telegram_ok

(daily_digest, db_snapshots, morning_brief, restore_drill, state_export) = named(
    "daily_digest", "db_snapshots", "morning_brief", "restore_drill", "state_export"
)

DAY = "2026-11-30"
# 09:00 on DAY: the 08:15 snapshot and the 06:15 export of DAY are current (their ticks
# today processed DAY), and DAY's 09:05 digest is the next one due (so it is the one that
# sends).
MORNING = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def morning(clock):
    clock(MORNING)


def resources(data, snapshot_dir=None, notifier=None):
    return {
        "stores": StoresResource(data_dir=str(data)),
        "ops_folders": OpsFolders(
            snapshot_dir=str(snapshot_dir or data / "snapshots"),
            snapshot_retention=2,
            state_dir=str(data / "state"),
            export_dir=str(data / "exports"),
        ),
        "notifier": notifier
        or Notifier(data_dir=str(data), outbox_path=str(data / "outbox.jsonl")),
    }


def outbox(data):
    return [json.loads(line)["text"] for line in (data / "outbox.jsonl").read_text().splitlines()]


def test_the_ops_assets_report_snapshot_and_export(data):
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [morning_brief, state_export, db_snapshots, daily_digest],
            partition_key=DAY,
            instance=instance,
            resources=resources(data),
        )
        assert result.success
    [brief] = [t for t in outbox(data) if t.startswith("company_ai morning brief")]
    [digest] = [t for t in outbox(data) if t.startswith("company_ai digest")]
    assert "Runs:" in brief and "scheduler is dark" in digest
    assert (data / "snapshots" / DAY / "manifest.json").is_file()
    assert json.loads((data / "state" / "stores.json").read_text())["crm"]["contacts"] == 300
    meta = result.asset_materializations_for_node("db_snapshots")[0].metadata
    # Every store taken: its file, or (--stores=postgres) its schema on the server.
    url = database_for(data)
    on_server = pg.stores_in(url, list(PG_MIGRATIONS)) if url else []
    files = [p for p in data.glob("*.db") if p.stem not in PG_MIGRATIONS or not url]
    assert meta["files"].value == len(files) + len(on_server) > 1


def test_a_snapshot_folder_that_cannot_be_written_fails_the_asset_clearly(data, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with (
        dg.instance_for_test() as instance,
        pytest.raises(dg.Failure, match="a part of the path is a file, not a folder"),
    ):
        dg.materialize(
            [db_snapshots],
            partition_key=DAY,
            instance=instance,
            resources=resources(data, snapshot_dir=blocker / "snaps"),
        )


def test_the_restore_drill_fails_loudly_on_a_corrupted_snapshot_and_is_alerted(data):
    defs = dg.Definitions(
        assets=[db_snapshots],
        asset_checks=[restore_drill],
        jobs=[
            dg.define_asset_job("drill", selection=dg.AssetSelection.checks(restore_drill)),
        ],
        sensors=[check_failure_alerts],
        resources=resources(data),
    )
    with dg.instance_for_test() as instance:
        dg.materialize(
            [db_snapshots], partition_key=DAY, instance=instance, resources=resources(data)
        )
        ok = defs.resolve_job_def("drill").execute_in_process(instance=instance)
        assert [c.passed for c in ok.get_asset_check_evaluations()] == [True]

        # The CRM's copy: its file, or its dump when it lives in PostgreSQL (--stores).
        name = "crm.pgdump" if (data / "snapshots" / DAY / "crm.pgdump").is_file() else "crm.db"
        copy = data / "snapshots" / DAY / name
        raw = bytearray(copy.read_bytes())
        raw[len(raw) // 2 : len(raw) // 2 + 4096] = bytes(4096)
        copy.write_bytes(bytes(raw))
        bad = defs.resolve_job_def("drill").execute_in_process(instance=instance)
        [evaluation] = bad.get_asset_check_evaluations()
        assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
        assert f"{name}: sha256 differs from the manifest" in evaluation.description

        context = dg.build_sensor_context(
            instance=instance, definitions=defs, resources=resources(data)
        )
        check_failure_alerts(context)
    assert any(
        t.startswith("ERROR: check failed: db_snapshots:restore_drill") for t in outbox(data)
    )


def test_a_notifier_that_is_down_does_not_fail_the_report_and_sends_it_later(data):
    path = f"/bot{TOKEN}/sendMessage"
    with dg.instance_for_test() as instance, FakeServer() as server:
        server.script(path, Reply({"ok": False, "description": "Too Many Requests"}, status=429))
        notifier = telegram(data, server.url)
        result = dg.materialize(
            [daily_digest],
            partition_key=DAY,
            instance=instance,
            resources=resources(data, notifier=notifier),
        )
        assert result.success
        meta = result.asset_materializations_for_node("daily_digest")[0].metadata
        assert meta["delivered"].value is False and meta["alerts_pending"].value == 1
        server.script(path, Reply(telegram_ok()))
        dg.materialize(
            [morning_brief],
            partition_key=DAY,
            instance=instance,
            resources=resources(data, notifier=notifier),
        )
    texts = [p["text"] for _, p in server.requests]
    assert texts[0] == texts[1] and texts[0].startswith("company_ai digest")
    assert texts[2].startswith("company_ai morning brief")
    with Stores(data).connect("ops", readonly=True) as ops:
        assert alerts.pending_count(ops) == 0


def failure_of(result) -> str:
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    return failure.step_failure_data.user_failure_data.description


def test_a_report_is_a_replay_only_its_own_day_sends_and_captures_refuse_the_past(data, clock):
    with dg.instance_for_test() as instance:

        def digest(day):
            result = dg.materialize(
                [daily_digest], partition_key=day, instance=instance, resources=resources(data)
            )
            return result.asset_materializations_for_node("daily_digest")[0].metadata

        first = digest(DAY)
        assert first["delivered"].value is True
        backfilled = digest("2026-11-26")
        assert "not_sent" in backfilled and backfilled["delivered"].value is False
        clock(datetime(2026, 12, 7, 9, 0, tzinfo=UTC))  # a week later
        again = digest(DAY)
        assert again["digest"].value == first["digest"].value, "a replay gives what the day gave"
        assert "not_sent" in again
        for capture in (state_export, db_snapshots):
            late = dg.materialize(
                [capture],
                partition_key=DAY,
                instance=instance,
                resources=resources(data),
                raise_on_error=False,
            )
            declined(instance, late, DAY, capture.key.to_user_string(), done_before=False)
    texts = [t for t in outbox(data) if t.startswith("company_ai digest")]
    assert len(texts) == 1, "one digest went out: its own day's"
    assert not (data / "snapshots").exists() and not (data / "state").exists()
