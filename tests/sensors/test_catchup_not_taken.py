"""The catch-up sensor records each missed capture partition as not taken, once.

The code location's own sensor and timetable on a real instance: the daemon is reduced
to what matters here (it evaluates the sensor from its cursor and stores the asset events
the sensor returns, as Dagster's sensor daemon does).
"""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.timetable import TIMETABLE
from company_ai.definitions import build
from company_ai.settings import Settings
from company_ai.setup import Setup
from tests.not_taken import not_taken
from tests.setup import CLOCK

INSTALLED = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)  # a Monday, the sensor's first tick
BACK = datetime(2026, 11, 25, 23, 0, tzinfo=UTC)  # the scheduler was dark since then
MISSED = "2026-11-24"  # every capture's Tuesday partition: its moment passed unrun


@pytest.fixture
def defs(tmp_path, clock):
    settings = Settings.from_env(
        {"COMPANY_AI_START_DATE": "2025-01-01", "COMPANY_AI_DATA_DIR": str(tmp_path / "data")}
    )
    return build(Setup(settings, CLOCK))


def tick(defs, instance, cursor):
    """One evaluation, as the daemon makes it: the asset events are stored, runs are not
    launched (nothing here is about them)."""
    sensor = defs.resolve_sensor_def("catchup_sensor")
    data = sensor.evaluate_tick(
        dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs)
    )
    for event in data.asset_events:
        instance.report_runless_asset_event(event)
    return data.cursor, data.asset_events


def test_each_missed_capture_partition_is_recorded_not_taken_once(defs, clock):
    captures = {e.job: e for e in TIMETABLE if e.capture}
    with dg.instance_for_test() as instance:
        clock(INSTALLED)
        cursor, events = tick(defs, instance, None)
        assert events == []
        clock(BACK)
        cursor, events = tick(defs, instance, cursor)
        recorded = {(e.asset_key.to_user_string(), e.partition) for e in events}
        for job in captures:
            # vault_job's pages and index are replays: only its staging is a capture
            assert (
                "vault_staging" if job == "vault_job" else captures[job].assets[0],
                MISSED,
            ) in recorded
        assert ("recall_pages", MISSED) not in recorded
        for asset, day in recorded:
            [said] = not_taken(instance, asset, day)
            assert said.startswith(f"Not taken: {asset}") and day in said
        # Later ticks, and a sensor whose cursor was lost, record nothing again.
        for _ in range(3):
            cursor, events = tick(defs, instance, cursor)
            assert events == []
        _, events = tick(defs, instance, INSTALLED.isoformat().replace("+00:00", "Z"))
        assert events == []
        assert all(len(not_taken(instance, a, d)) == 1 for a, d in recorded)
