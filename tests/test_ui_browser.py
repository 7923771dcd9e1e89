"""The UI as its owner meets it: the demo's history in a real browser.

`dagster-webserver` and `dagster-daemon` run on a copy of the session's demo; Debian's
`chromium` (installed by scripts/test-deps; never a downloaded browser build) is driven
headless by Playwright. The test looks where a user looks and does what a user does:
the asset graph, a partitioned asset's days, the fabrication gate's failed check with its
metadata, the schedules and sensors running, a two-day backfill launched from the
Materialize dialog and watched to the end, a run re-executed, and a capture launched for a
past day (green, its one sentence in the log). Screenshots of every
page go to test-artifacts/ui/ (gitignored), so a person can look at what was asserted.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import warnings
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest
from dagster_graphql import DagsterGraphQLClient

from company_ai.constants import PLAYED_AT_TAG
from company_ai.core.times import to_iso
from company_ai.core.timetable import TIMETABLE, scheduled_time
from tests.demo_run import ENV, PATIENCE_S, instance_of, wait_for_backfill, wait_for_run
from tests.pg_server import free_port
from tests.setup import DEFS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = (
    "Debian's chromium is not installed (no `chromium` in PATH): scripts/test-deps installs "
    "it with apt-get when run as root"
)
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "ui"
BIN = Path(sys.executable).parent
GRACE_S = 10  # for the webserver and the daemon to stop on SIGTERM before they are killed
WAIT_MS = 60_000  # for a page to show what it shows; a hang fails, never a speed claim


@pytest.fixture(scope="session")  # session-wide like `demo`, and set up before it
def chromium():
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    return CHROMIUM


@pytest.fixture
def ui(chromium, demo, tmp_path):
    """The webserver and the daemon on a copy of the demo; yields (base URL, instance)."""
    root = tmp_path / "demo"
    shutil.copytree(demo[0], root)
    env = ENV | {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "COMPANY_AI_DATA_DIR": str(root / "data"),
        "COMPANY_AI_PLAYED_CLOCK": "true",  # as scripts/ui sets it on the demo's data
    }
    port = free_port()
    commands = {
        "webserver": [BIN / "dagster-webserver", "-w", "workspace.yaml", "-h", "127.0.0.1",
                      "-p", str(port)],
        "daemon": [BIN / "dagster-daemon", "run", "-w", "workspace.yaml"],
    }  # fmt: skip
    logs, processes = {}, []
    try:
        for name, command in commands.items():
            logs[name] = tmp_path / f"{name}.log"
            with logs[name].open("w") as log:
                processes.append(
                    subprocess.Popen(
                        command,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                        start_new_session=True,  # its own group: its code servers go with it
                    )
                )
        base = f"http://127.0.0.1:{port}"
        _wait_until_serving(base, processes[0], logs["webserver"])
        yield base, instance_of(root)
        for process, name in zip(processes, logs, strict=True):
            assert process.poll() is None, logs[name].read_text()[-2000:]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=GRACE_S)
            # Then whatever is left of its group: a throwaway copy needs no clean shutdown.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)


def _wait_until_serving(base, process, log):
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"{base}/server_info", timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"the webserver never answered: {log.read_text()[-3000:]}")


def test_the_demo_history_in_a_real_browser(chromium, ui, demo):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    base, instance = ui
    # The check's page shows its latest evaluation: the last outreach day the demo played
    # (a third day once today's 07:55 slot has passed), so its count is the last printed.
    counts = re.findall(
        r"drafts: \d+ passed the fabrication gate, (\d+) quarantined", demo[1].stderr
    )
    assert counts and int(counts[-1]) > 0, "the demo's gate quarantined no draft"
    quarantined = counts[-1]
    # The demo played two days from the install (more, to reach a weekday's outreach or a
    # whole night): each night has run, and tonight's too once the demo starts after 23:15.
    days = sorted(instance.get_materialized_partitions(dg.AssetKey("contact_episodes")))
    every_day = DEFS.resolve_assets_def("contact_episodes").partitions_def.get_partition_keys()
    every_day = [d for d in every_day if d >= days[0]]
    assert len(every_day) >= 2 and every_day[0] == days[0], (days, every_day)
    assert len(every_day) - len(days) in (0, 1), "every night but tonight's has run"
    parent = next(r for r in instance.get_runs() if r.job_name == "memory_job")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {ARTIFACTS}")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox"])  # fmt: skip
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        # Dagster asks a new browser once to join its community: say no, as a user would.
        page.add_locator_handler(page.get_by_role("button", name="Skip"), lambda b: b.click())

        def shot(name):
            page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)

        # The asset graph lists every group.
        page.goto(f"{base}/asset-groups")
        groups = {spec.group_name for spec in DEFS.resolve_all_asset_specs()}
        for group in sorted(groups):
            expect(page.get_by_text(group, exact=True).first).to_be_visible()
        shot("1-asset-graph")

        # A partitioned asset shows its materialised days.
        page.goto(f"{base}/assets/contact_episodes?view=partitions")
        expect(page.get_by_text(f"Materialized ({len(days)})")).to_be_visible()
        for day in days:
            expect(page.get_by_text(day, exact=True).first).to_be_visible()
        page.goto(f"{base}/assets/contact_episodes?view=partitions&partition={days[-1]}")
        expect(page.get_by_text(seal_digest(instance, days[-1]), exact=True)).to_be_visible()
        shot("2-partitions")

        # The fabrication gate's failed check, with its metadata.
        page.goto(f"{base}/assets/outreach_drafts?view=checks")
        expect(page.get_by_text(f"{quarantined} draft(s) quarantined")).to_be_visible()
        expect(page.get_by_text("Failed", exact=True).first).to_be_visible()
        for key in ("drafts_checked", "unquarantined_with_claims"):
            expect(page.get_by_text(key, exact=True).first).to_be_visible()
        row = page.locator("tr").filter(has=page.get_by_text("quarantined", exact=True))
        expect(row.first).to_contain_text(quarantined)
        shot("3-fabrication-gate")

        # Every schedule and sensor is listed with its switch on.
        page.goto(f"{base}/automation")
        names = [s.name for s in DEFS.schedules] + [s.name for s in DEFS.sensors]
        for name in names:
            expect(page.get_by_text(name, exact=True).first).to_be_visible()
        # The switches render as the rows' states load: wait for them all to be on; if they
        # never are, the assertion below says which is off or missing.
        all_on = f"() => Object.values(({SWITCHES})()).filter(on => on).length >= {len(names)}"
        with contextlib.suppress(PlaywrightTimeout):
            page.wait_for_function(all_on)
        shot("4-automation")
        assert page.evaluate(SWITCHES) == dict.fromkeys(sorted(names), True)

        # A backfill of every day from the Materialize dialog ...
        page.goto(f"{base}/assets/contact_episodes?view=partitions")
        page.get_by_role("button", name="Materialize…").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("button", name="All", exact=True).click()
        n = len(every_day)
        expect(dialog.get_by_text(f"Showing {n} of {n} partitions")).to_be_visible()
        shot("5-backfill-dialog")
        dialog.get_by_role("button", name="Launch backfill").click()
        expect(dialog).to_be_hidden()
        # ... and a re-execution from a run's page, side by side.
        page.goto(f"{base}/runs/{parent.run_id}")
        page.get_by_role("button", name="Re-execute all (*)").click()
        page.wait_for_url(re.compile(r"/runs/(?!" + parent.run_id + r")[0-9a-f-]{36}$"))
        rerun_id = page.url.rsplit("/", 1)[1]

        page.goto(f"{base}/runs?tab=backfills")
        page.locator("a[href^='/runs/b/']").first.click()
        backfill_id = page.url.rsplit("/", 1)[1]
        status = wait_for_backfill(instance, backfill_id)
        page.reload()
        expect(page.get_by_text("Succeeded", exact=True).first).to_be_visible()
        expect(page.get_by_text("100% completed")).to_be_visible()
        shot("6-backfill-done")

        rerun = wait_for_run(instance, rerun_id)
        page.goto(f"{base}/runs/{rerun_id}")
        expect(page.get_by_text("Success", exact=True).first).to_be_visible()
        shot("7-re-execution")

        # A capture launched for a past day: green, its one sentence in the log, not red.
        # Its run is given a clock a day after the first day's 06:15 tick (as the demo gives
        # its runs theirs), so that day has passed whatever the wall clock says.
        port = int(base.rsplit(":", 1)[1])
        entry = next(e for e in TIMETABLE if e.job == "state_export_job")
        moment = scheduled_time(entry.slot, days[0], "UTC") + timedelta(days=1, hours=1)
        # The GraphQL client calls a deprecated function of its own gql library.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            past_id = DagsterGraphQLClient("127.0.0.1", port_number=port).submit_job_execution(
                "state_export_job",
                tags={"dagster/partition": days[0], PLAYED_AT_TAG: to_iso(moment)},
            )
        past = wait_for_run(instance, past_id)
        page.goto(f"{base}/runs/{past_id}")
        expect(page.get_by_text("Success", exact=True).first).to_be_visible()
        expect(page.get_by_text("Not taken: state_export records").first).to_be_visible()
        shot("8-a-past-capture-not-taken")
        browser.close()

    assert status.value in ("COMPLETED", "COMPLETED_SUCCESS"), status
    filled = instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
    assert sorted(r.tags["dagster/partition"] for r in filled) == every_day
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in filled)
    assert rerun.status == dg.DagsterRunStatus.SUCCESS
    assert rerun.tags["dagster/parent_run_id"] == parent.run_id
    assert past.status == dg.DagsterRunStatus.SUCCESS and past.tags["company_ai/not_taken"]
    events = [e.dagster_event for e in instance.all_logs(past_id) if e.dagster_event]
    assert not [e for e in events if e.is_step_materialization], "the past day stays as it was"


def seal_digest(instance, day):
    """The seal the day's latest materialisation recorded (its metadata)."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("contact_episodes"), asset_partitions=[day]),
        limit=1,
    ).records
    return records[0].asset_materialization.metadata["digest"].value


# Each schedule's and sensor's row on the Automation page: its name (from its link) and
# whether its switch is on.
SWITCHES = """() => Object.fromEntries(
  [...document.querySelectorAll("a[href*='/schedules/'], a[href*='/sensors/']")]
    .map(a => [a.href.split('/').pop(),
               a.parentElement.querySelector("label[class*='formatSwitch'] input")])
    .filter(([, input]) => input)
    .sort(([a], [b]) => a < b ? -1 : 1)
    .map(([name, input]) => [name, input.checked]))"""
