"""The demo as a new user meets it: a whole process, its runs on the instance, the UI's API."""

import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import dagster as dg

from company_ai.constants import PLAYED_AT_TAG
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.timetable import TIMETABLE
from company_ai.demo import MARKER, _fresh, demo_plan
from tests.demo_run import (
    ENV,
    PATIENCE_S,
    demo_args,
    instance_of,
    wait_for_backfill,
    wait_for_run,
)

IN_FLIGHT = {
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
}


def test_the_demo_installs_and_runs_its_first_night_through_the_run_launcher(demo):
    root, done = demo
    assert "loading: 150/150 contacts" in done.stderr
    instance = instance_of(root)
    runs = instance.get_runs()
    assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
    # Every run came through the code location, as a scheduled run does, so the job pages,
    # the timeline and "Re-execute" know its code.
    assert all(r.remote_job_origin is not None for r in runs)
    assert {r.remote_job_origin.location_name for r in runs} == {"company_ai"}
    assert f"Runs recorded in DAGSTER_HOME: {len(runs)}" in done.stdout
    assert "company_ai digest" in done.stdout and "the scheduler is dark" in done.stdout
    assert "passed the fabrication gate" in done.stderr
    assert "$ company-ai timeline " in done.stdout and "--bodies" in done.stdout
    assert "received    reply to msg#" in done.stdout, "the demo's inbox triage matched a reply"
    assert "Thanks Sam, good timing." in done.stdout
    assert "Vault: 21 notes staged" in done.stdout and "21 recall pages" in done.stdout
    assert "1. " in done.stdout and ", as of 2026-" in done.stdout and "Around " in done.stdout
    # Every slot from the install to now ran once, at its own moment, and filled its day.
    played = [(r.job_name, r.tags.get("dagster/partition")) for r in runs
              if PLAYED_AT_TAG in r.tags and r.job_name != "held_sends_job"]  # fmt: skip
    assert len(played) == len(set(played)), "every slot once"
    by_job = {e.job: e.assets for e in TIMETABLE}
    for job, day in played:
        for asset in by_job[job]:
            assert day in instance.get_materialized_partitions(dg.AssetKey(asset)), (asset, day)
    days = sorted({day for _, day in played})
    assert len(days) >= 2, days  # the two asked for, or more to reach a weekday's outreach
    assert {job for job, _ in played} == {e.job for e in TIMETABLE}, "every job played"
    for asset in ("contact_episodes", "memory_export", "brain_facts"):
        filled = instance.get_materialized_partitions(dg.AssetKey(asset))
        assert days[0] in filled, asset
    # The first night's brain read that day's runs and the pages the vault distilled.
    with sqlite3.connect(factory=StoreConnection, database=root / "data" / "brain.db") as brain:
        kinds = {k for (k,) in brain.execute("SELECT kind FROM facts WHERE day = $1", days[:1])}
    assert {"run_ok", "page_distilled"} <= kinds, kinds
    # The install date is the first demo day: the UI shows no older "missing" days.
    install = (root / "data" / "install.json").read_text()
    first = min(instance.get_materialized_partitions(dg.AssetKey("contact_episodes")))
    assert f'"first_day": "{first}"' in install


def test_a_demo_run_re_executes_and_a_two_day_backfill_runs_through_the_ui_api(
    demo, tmp_path, monkeypatch
):
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster_graphql.test.utils import execute_dagster_graphql

    root = tmp_path / "demo"
    shutil.copytree(demo[0], root)
    env = ENV | {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "COMPANY_AI_DATA_DIR": str(root / "data"),
        "COMPANY_AI_PLAYED_CLOCK": "true",  # as scripts/ui sets it on the demo's data
    }
    instance = instance_of(root)
    parent = next(r for r in instance.get_runs() if r.job_name == "memory_job")
    days = sorted(instance.get_materialized_partitions(dg.AssetKey("contact_episodes")))
    with (tmp_path / "daemon.log").open("w") as log:
        daemon = subprocess.Popen(
            [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", "workspace.yaml"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    # The code server this test starts must see what the daemon's sees.
    monkeypatch.setenv("COMPANY_AI_DATA_DIR", env["COMPANY_AI_DATA_DIR"])
    monkeypatch.setenv("COMPANY_AI_PLAYED_CLOCK", "true")
    monkeypatch.delenv("COMPANY_AI_START_DATE", raising=False)
    try:
        target = WorkspaceFileTarget(paths=["workspace.yaml"])
        # Dagster's own backfill code calls a deprecated function of its own.
        with warnings.catch_warnings(), WorkspaceProcessContext(instance, target) as workspace:
            warnings.simplefilter("ignore", DeprecationWarning)
            context = workspace.create_request_context()
            again = execute_dagster_graphql(context, REEXECUTE, {"params": {
                "parentRunId": parent.run_id, "strategy": "ALL_STEPS"}})  # fmt: skip
            result = again.data["launchPipelineReexecution"]
            assert result["__typename"] == "LaunchRunSuccess", result
            backfill = execute_dagster_graphql(
                context,
                BACKFILL,
                {
                    "params": {
                        "partitionNames": days,
                        "assetSelection": [{"path": ["contact_episodes"]}],
                    }
                },
            )
            launched = backfill.data["launchPartitionBackfill"]
            assert launched["__typename"] == "LaunchBackfillSuccess", launched
        assert daemon.poll() is None, (tmp_path / "daemon.log").read_text()[-2000:]
        rerun = wait_for_run(instance, result["run"]["runId"])
        assert rerun.status == dg.DagsterRunStatus.SUCCESS
        assert rerun.tags["dagster/parent_run_id"] == parent.run_id
        status = wait_for_backfill(instance, launched["backfillId"])
        assert status.value in ("COMPLETED", "COMPLETED_SUCCESS"), status
        filled = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": launched["backfillId"]}))
        assert sorted(r.tags["dagster/partition"] for r in filled) == days
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in filled)
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)


REEXECUTE = """
mutation ($params: ReexecutionParams) {
  launchPipelineReexecution(reexecutionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message stack }
  }
}"""
BACKFILL = """
mutation ($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
  }
}"""


def test_sigterm_stops_the_demo_cleanly_and_leaves_no_run_started(tmp_path):
    root = tmp_path / "demo"
    process = subprocess.Popen(
        demo_args(root, "--contacts", "100", "--days", "2"),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(process.stderr), daemon=True)
    reader.start()
    try:
        # Open the instance only once the demo has made it ("[2/3]"): two processes
        # creating one SQLite instance at once would race each other.
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline and process.poll() is None:
            made = any(line.startswith("[2/3]") for line in said)
            if made and any(r.status in IN_FLIGHT for r in instance_of(root).get_runs()):
                break
            time.sleep(0.2)
        assert process.poll() is None, "".join(said)[-3000:]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=PATIENCE_S)
        reader.join(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        process.stderr.close()
    stderr = "".join(said)
    assert process.returncode == 143, stderr[-2000:]
    assert "stopped by SIGTERM" in stderr and "Traceback" not in stderr
    runs = instance_of(root).get_runs()
    assert runs and not [(r.job_name, r.status) for r in runs if r.status in IN_FLIGHT], stderr
    assert any(
        r.status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED) for r in runs
    )


def test_the_plan_plays_every_slot_from_the_install_to_now_in_tick_order():
    from datetime import UTC, datetime

    first, installed, plan = demo_plan(datetime(2026, 11, 30, 14, 0, tzinfo=UTC), "UTC", 3)
    assert (first, installed) == ("2026-11-28", datetime(2026, 11, 28, tzinfo=UTC))
    assert [p.tick for p in plan] == sorted(p.tick for p in plan)
    assert all(installed < p.tick <= datetime(2026, 11, 30, 14, 0, tzinfo=UTC) for p in plan)
    runs = [(p.job, p.partition) for p in plan]
    assert len(runs) == len(set(runs))
    assert [d for j, d in runs if j == "memory_job"] == ["2026-11-28", "2026-11-29"]
    assert [d for j, d in runs if j == "outreach_job"] == ["2026-11-30"]  # Monday's own
    snapshots = ["2026-11-28", "2026-11-29", "2026-11-30"]
    assert [d for j, d in runs if j == "snapshots_job"] == snapshots
    # Each slot runs at its tick on its partition's day.
    assert all(p.tick.date().isoformat() == p.partition for p in plan)
    order = [j for j, d in runs if d == "2026-11-30"]
    assert [d for j, d in runs if j == "outreach_growth_job"] == snapshots  # daily, 05:30
    assert order.index("vault_job") < order.index("outreach_job") < order.index("digest_job")


def test_a_demo_on_a_weekend_or_a_monday_night_reaches_back_until_every_job_played():
    from datetime import UTC, datetime

    sunday_night = datetime(2026, 12, 6, 1, 30, tzinfo=UTC)
    first, _, plan = demo_plan(sunday_night, "UTC", 2)
    assert first == "2026-12-04"  # Friday: Saturday and Sunday hold no outreach
    assert [p.partition for p in plan if p.job == "outreach_job"] == ["2026-12-04"]
    monday_early = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)  # before Monday's 07:55 slot
    first, _, plan = demo_plan(monday_early, "UTC", 3)
    assert first == "2026-11-27"
    assert [p.partition for p in plan if p.job == "outreach_job"] == ["2026-11-27"]
    # A window that holds every job is not widened; one without a whole night is.
    assert demo_plan(datetime(2026, 12, 4, 23, 50, tzinfo=UTC), "UTC", 1)[0] == "2026-12-04"
    assert demo_plan(datetime(2026, 12, 4, 12, 0, tzinfo=UTC), "UTC", 1)[0] == "2026-12-03"


def test_a_new_demo_starts_fresh_and_never_deletes_a_folder_it_did_not_make(tmp_path):
    root = tmp_path / "demo"
    data, _ = _fresh(root)
    (data / "old.db").write_text("from the last demo")
    data, _ = _fresh(root)
    assert (root / MARKER).exists() and not (data / "old.db").exists()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.md").write_text("keep me")
    done = subprocess.run(demo_args(precious), capture_output=True, text=True, env=ENV)
    assert done.returncode != 0
    assert "was not made by the demo" in done.stderr
    assert (precious / "notes.md").read_text() == "keep me"
