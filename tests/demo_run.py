"""The demo as the tests run it: one whole `company-ai demo` process and its instance.

The demo costs minutes, so the session runs it once (the `demo` fixture in conftest.py)
and the tests that write to it work on a copy.
"""

import os
import sys
import time

import dagster as dg

ENV = os.environ | {"PYTHONPATH": os.getcwd()}
ENV.pop("COMPANY_AI_START_DATE", None)  # the demo records its own install date
PATIENCE_S = 600  # a hung daemon fails the test instead of hanging CI; never a speed claim


def demo_args(root, *extra):
    return [sys.executable, "-m", "company_ai.cli", "demo", "--dir", str(root), *extra]


def instance_of(root):
    return dg.DagsterInstance.from_config(str(root / "dagster_home"))


def wait_for_run(instance, run_id):
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run.is_finished:
            return run
        time.sleep(1)
    raise AssertionError(f"run {run_id} did not finish")


def wait_for_backfill(instance, backfill_id):
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        status = instance.get_backfill(backfill_id).status
        if status.value not in ("REQUESTED", "CANCELING"):
            return status
        time.sleep(1)
    raise AssertionError(f"backfill {backfill_id} did not finish")
