"""One rule for every capture launched for a day whose moment has passed (issue 26).

Each capture job of the timetable is run for a past partition through a real Dagster run,
as the UI's launch does: the run ends green, nothing is materialised, the partition carries
a `not_taken` observation, the run's log says why in one sentence, the run is tagged, and
the alert sensors find nothing to say.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from company_ai import days
from company_ai.constants import CAPTURE_META, DAY_KIND
from company_ai.core import install
from company_ai.core.crm import SyncError
from company_ai.core.store import Store, Stores, table_exists
from company_ai.core.timetable import TIMETABLE
from company_ai.definitions import build
from company_ai.sensors.alerts import check_failure_alerts, run_failure_alerts
from company_ai.settings import Settings
from company_ai.setup import Setup
from tests.ledger_time import backdate_run
from tests.not_taken import declined, logged, not_taken
from tests.setup import CLOCK

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # a Monday, past every capture's morning
PAST = "2026-11-24"  # a Tuesday: a partition of every capture, daily or weekday
CAPTURE_JOBS = sorted(e.job for e in TIMETABLE if e.capture)
NO_LOG_CAPTURE = {
    "compute_logs": {
        "module": "dagster._core.storage.noop_compute_log_manager",
        "class": "NoOpComputeLogManager",
    }
}


@pytest.fixture
def defs(tmp_path, clock):
    clock(NOW)
    settings = Settings.from_env(
        {"COMPANY_AI_START_DATE": "2025-01-01", "COMPANY_AI_DATA_DIR": str(tmp_path / "data")}
    )
    return build(Setup(settings, CLOCK))


def captures_of(defs: dg.Definitions, job: str) -> list[str]:
    entry = next(e for e in TIMETABLE if e.job == job)
    specs = {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}
    return [a for a in entry.assets if specs[a].metadata.get(DAY_KIND) == CAPTURE_META[DAY_KIND]]


def alerts_enqueued(defs: dg.Definitions, instance: dg.DagsterInstance, cursors: dict) -> list:
    """Evaluate the alert sensors as the daemon does (each from its cursor) and return every
    alert the notifier holds."""
    notifier = defs.resources["notifier"]
    for sensor in (run_failure_alerts, check_failure_alerts):
        context = dg.build_sensor_context(
            instance=instance,
            cursor=cursors.get(sensor.name),
            definitions=defs,
            resources={"notifier": notifier},
        )
        result = sensor.evaluate_tick(context)
        cursors[sensor.name] = result.cursor
    stores = Stores(Path(notifier.data_dir))
    if not (Path(notifier.data_dir) / "ops.db").exists():
        return []
    with stores.connect(Store.OPS, readonly=True) as ops:
        if not table_exists(ops, "alerts"):
            return []
        return ops.execute("SELECT key, text FROM alerts").fetchall()


@pytest.mark.parametrize("job", CAPTURE_JOBS)
def test_a_past_day_of_every_capture_ends_green_having_done_nothing_and_says_why(defs, job):
    captures = captures_of(defs, job)
    with dg.instance_for_test() as instance:
        cursors: dict = {}
        assert alerts_enqueued(defs, instance, cursors) == []  # the sensors start watching
        result = defs.resolve_job_def(job).execute_in_process(
            partition_key=PAST, instance=instance, raise_on_error=False
        )
        declined(instance, result, PAST, *captures)
        assert alerts_enqueued(defs, instance, cursors) == []


def test_the_digest_lists_a_capture_run_that_declined_a_past_day_as_not_taken(defs):
    # installed long before: the window's unrun slots are misses, not "before the install"
    data = Path(defs.resources["stores"].data_dir)
    install.record_first_day(data, "2025-01-01", datetime(2025, 1, 1, tzinfo=UTC))
    with dg.instance_for_test() as instance:
        late = defs.resolve_job_def("crm_job").execute_in_process(
            partition_key=PAST, instance=instance, raise_on_error=False
        )
        backdate_run(instance, late.run_id, datetime(2026, 11, 30, 8, 0, tzinfo=UTC))
        digest = defs.resolve_job_def("digest_job").execute_in_process(
            partition_key="2026-11-30", instance=instance, raise_on_error=False
        )
        [event] = digest.get_asset_materialization_events()
        text = event.materialization.metadata["digest"].value
    sections = dict(re.findall(r"(?m)^([A-Z][^\n]*):\n((?:- [^\n]*\n)*)", text))
    not_taken = sections["Not taken (a capture records its own moment; it is never run late)"]
    assert f"- crm_job {PAST} (run {late.run_id[:8]}): not taken, launched for a past day" in (
        not_taken
    )
    assert "Ran" not in sections and "ERROR: failed" not in sections
    # This morning's unrun captures may still run (their moment has not passed): missed.
    assert "- inbox_job 2026-11-30" in sections["Missed (no run yet)"]


def test_two_runs_of_one_capture_started_together_do_its_work_once(defs, monkeypatch):
    """The older run does the work; the other ends green at once, saying why in one
    sentence, and takes nothing: the sync ran once."""
    from company_ai.assets import crm

    inside, release, synced = threading.Event(), threading.Event(), []

    def slow_sync(*args, **kwargs):
        synced.append(1)
        inside.set()
        assert release.wait(60), "the second run never ended"
        raise SyncError("stopped here by the test")  # how the first run ends is not the point

    monkeypatch.setattr(crm, "sync_people", slow_sync)
    job, today = defs.resolve_job_def("crm_job"), "2026-11-30"
    # Two runs in one process's threads: Dagster's log capture swaps the process's stdout
    # and stderr under both, and a run's `tail` of its log then outlived the run by 60 s
    # (CI, 2026-12-06). A run is a process of its own in the product; here no capture.
    with dg.instance_for_test(overrides=NO_LOG_CAPTURE) as instance:
        results = {}
        first = threading.Thread(
            target=lambda: results.setdefault(
                "first",
                job.execute_in_process(
                    partition_key=today, instance=instance, raise_on_error=False
                ),
            )
        )
        first.start()
        assert inside.wait(60), "the first run never reached the sync"
        second = job.execute_in_process(
            partition_key=today, instance=instance, raise_on_error=False
        )
        release.set()
        first.join(60)
        assert not first.is_alive(), "the first run never ended"
        run = instance.get_run_by_id(second.run_id)
        assert second.success and second.get_asset_materialization_events() == []
        assert run.tags[days.NOT_TAKEN_TAG] == days.BUSY
        [said] = [line for line in logged(instance, second.run_id) if line.startswith("Not run")]
        assert results["first"].run_id[:8] in said and ". " not in said
        assert not_taken(instance, "crm_contacts", today) == []  # its day is being taken
    assert synced == [1]


def test_no_capture_partition_exists_before_the_install_day(tmp_path):
    """Capture partitions start at the install day (`settings.start_date`): no day before
    it can be launched, or shown as missing."""
    settings = Settings.from_env({"COMPANY_AI_DATA_DIR": str(tmp_path / "data")})
    installed = settings.start_date  # unset: the install date, recorded on first use
    specs = build(Setup(settings)).resolve_all_asset_specs()
    captures = [s for s in specs if s.metadata.get(DAY_KIND) == CAPTURE_META[DAY_KIND]]
    assert sorted(s.key.to_user_string() for s in captures) == sorted(
        a
        for e in TIMETABLE
        if e.capture
        for a in e.assets
        if a not in ("recall_pages", "recall_index")
    )
    for spec in captures:
        keys = spec.partitions_def.get_partition_keys()
        assert all(key >= installed for key in keys), spec.key
        assert not spec.partitions_def.has_partition_key(
            (date.fromisoformat(installed) - timedelta(days=1)).isoformat()
        )
