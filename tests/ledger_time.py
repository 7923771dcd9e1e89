"""Simulated history: runs made now, filed at the instant a test's fake clock says.

Dagster stamps a run with the real time it was created, started and ended; the reports
read the ledger by those times. A test that simulates days of history on a fake clock
moves each run's stamps to its simulated instant, so the ledger reads as it would have.
"""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg
from dagster._core.storage.runs.schema import RunsTable


def backdate_run(instance: dg.DagsterInstance, run_id: str, at: datetime, took_s: float = 1.0):
    """File the run as created and started at `at` and (if finished) ended `took_s` later."""
    naive = at.astimezone(UTC).replace(tzinfo=None)
    finished = instance.get_run_by_id(run_id).is_finished
    values = {
        "create_timestamp": naive,
        "update_timestamp": naive,
        "start_time": at.timestamp(),
        "end_time": at.timestamp() + took_s if finished else None,
    }
    with instance.run_storage.connect() as conn:
        conn.execute(RunsTable.update().where(RunsTable.c.run_id == run_id).values(**values))
