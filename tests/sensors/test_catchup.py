"""The catch-up sensor against a real instance and a clock the test controls.

The daemon is simulated: while it is "up", every schedule tick runs on time; when it
comes back, each schedule runs only its latest missed tick (as Dagster 1.13 does), then
the catch-up sensor is evaluated every ten minutes and its run requests are executed.
"""

import json
import warnings
from collections import Counter
from datetime import UTC, datetime, time, timedelta

import dagster as dg
import pytest

from company_ai import ledger
from company_ai.core.timetable import Entry
from company_ai.resources.notifier import Notifier
from company_ai.schedules import _job, _schedule
from company_ai.sensors.catchup import build_catchup_sensor
from tests.ledger_time import backdate_run
from tests.setup import CLOCK, SETTINGS, SETUP, named

daily_digest = named("daily_digest")

FAILING: set[str] = set()


def utc(*args):
    return datetime(*args, tzinfo=UTC)


# partitions of `early` that fail, to test retries


@dg.asset(
    partitions_def=SETUP.daily,
    deps=[
        dg.AssetDep(
            "nightly",
            partition_mapping=dg.TimeWindowPartitionMapping(start_offset=-1, end_offset=-1),
        )
    ],
)
def nightly(context: dg.AssetExecutionContext) -> None:
    """Depends on its own previous day, like memory aging: one day at a time."""


@dg.asset(partitions_def=SETUP.daily)
def early(context: dg.AssetExecutionContext) -> None:
    if context.partition_key in FAILING:
        raise RuntimeError(f"early {context.partition_key} broke")


@dg.asset(partitions_def=SETUP.daily)
def brief(context: dg.AssetExecutionContext) -> None:
    pass


@dg.asset(partitions_def=SETUP.daily)
def snap(context: dg.AssetExecutionContext) -> None:
    """A capture, like the snapshots: records the world as it is when it runs."""


ENTRIES = [
    Entry("nightly_job", ("nightly",), time(2, 0), 60),
    Entry("early_job", ("early",), time(3, 30), 60),
    Entry("brief_job", ("brief",), time(6, 0), 60),
]
CAPTURES = [Entry("snap_job", ("snap",), time(4, 0), 60, capture=True)]
JOBS = {e.job: _job(e) for e in ENTRIES + CAPTURES}
REPLAYS = [e.job for e in ENTRIES]
# Short look-backs keep the simulated history (real runs) small: it starts at START.
START = utc(2026, 3, 3, 6, 30)
SENSOR = build_catchup_sensor(
    SETUP, ENTRIES, list(JOBS.values()), name="test_catchup", lookback=timedelta(days=2)
)
LONG_SENSOR = build_catchup_sensor(
    SETUP, ENTRIES, list(JOBS.values()), name="test_catchup_long", lookback=timedelta(days=4)
)
CAPTURE_SENSOR = build_catchup_sensor(
    SETUP, CAPTURES, [JOBS["snap_job"]], name="test_catchup_captures", lookback=timedelta(days=4)
)
SCHEDULES = {e.job: _schedule(e, JOBS[e.job], SETUP.tz) for e in ENTRIES + CAPTURES}
DEFS = dg.Definitions(
    assets=[nightly, early, brief, snap],
    jobs=list(JOBS.values()),
    schedules=list(SCHEDULES.values()),
    sensors=[SENSOR, LONG_SENSOR, CAPTURE_SENSOR],
)


class Daemon:
    """Dagster's daemon, reduced to what the catch-up sensor meets, on a fake clock."""

    def __init__(self, instance):
        self.instance = instance
        self.now = START
        self.sensor = SENSOR
        self.cursor: str | None = None
        self.requested: list[list[dg.RunRequest]] = []
        self.executed = 0

    @property
    def now(self):
        return CLOCK.at

    @now.setter
    def now(self, at):
        CLOCK.at = at  # the code location's clock: the sensor and the assets read it

    def execute(self, job: str, partition: str, tags: dict) -> None:
        result = DEFS.resolve_job_def(job).execute_in_process(
            partition_key=partition, instance=self.instance, tags=tags, raise_on_error=False
        )
        # Runs made at one fake instant keep the order they were made in.
        self.executed += 1
        backdate_run(self.instance, result.run_id, self.now + timedelta(milliseconds=self.executed))

    def schedule_tick(self, job: str, tick: datetime) -> None:
        context = dg.build_schedule_context(
            instance=self.instance,
            scheduled_execution_time=tick,
            repository_def=DEFS.get_repository_def(),
        )
        data = SCHEDULES[job].evaluate_tick(context)
        for request in data.run_requests or []:
            self.execute(job, request.partition_key, request.tags)

    def up_until(self, end: datetime) -> None:
        """Every tick from now to `end` runs on time (the sensor first ran at the start)."""
        if self.cursor is None:
            self.sensor_tick()
        for due in ledger.due(ENTRIES, self.now, end + ledger.GRACE, SETTINGS):
            self.now = due.tick
            self.schedule_tick(due.job, due.tick)
        self.now = end

    def comes_back(self, at: datetime, *, sensor_first: bool = False) -> None:
        """Dagster 1.13 after downtime: each schedule runs only its latest tick (the 06:00
        tick that is due right now counts as the latest)."""
        missed = ledger.due(ENTRIES, self.now, at + ledger.GRACE, SETTINGS)
        self.now = at
        latest = {d.job: d for d in missed if d.tick <= at}
        if sensor_first:
            self.sensor_tick()
        for due in latest.values():
            self.schedule_tick(due.job, due.tick)

    def sensor_tick(self) -> list[dg.RunRequest]:
        context = dg.build_sensor_context(
            instance=self.instance, definitions=DEFS, cursor=self.cursor
        )
        data = self.sensor.evaluate_tick(context)
        self.cursor = data.cursor or self.cursor
        requests = data.run_requests or []
        self.requested.append(requests)
        for request in requests:
            if self.instance.get_runs(dg.RunsFilter(tags={"dagster/run_key": request.run_key})):
                continue  # the daemon's run-key dedupe
            tags = {**request.tags, "dagster/run_key": request.run_key}
            self.execute(request.job_name, request.partition_key, tags)
        return requests

    def sensor_until(self, end: datetime) -> None:
        while self.now < end:
            self.sensor_tick()
            self.now += timedelta(minutes=10)


def runs(instance, job=None):
    records = instance.get_run_records(dg.RunsFilter(job_name=job) if job else None)
    return sorted(records, key=lambda r: r.create_timestamp)


def partitions(instance, job):
    return [r.dagster_run.tags["dagster/partition"] for r in runs(instance, job)]


@pytest.fixture
def daemon():
    FAILING.clear()
    with dg.instance_for_test() as instance:
        yield Daemon(instance)
    CLOCK.at = None


@pytest.mark.parametrize("sensor_first", [True, False])
def test_down_from_two_to_six_every_missed_slot_runs_once(daemon, sensor_first):
    daemon.up_until(utc(2026, 3, 5, 1, 59))
    before = {job: partitions(daemon.instance, job) for job in REPLAYS}
    assert before["nightly_job"] == ["2026-03-04"]

    daemon.comes_back(utc(2026, 3, 5, 6, 0), sensor_first=sensor_first)
    daemon.sensor_until(utc(2026, 3, 5, 7, 0))

    for job in REPLAYS:
        done = partitions(daemon.instance, job)
        assert done[: len(before[job])] == before[job], "nothing that ran runs again"
        assert done == sorted(done) and len(done) == len(set(done)), job
        assert done[-1] == "2026-03-05", job
    assert daemon.sensor_tick() == [], "a later pass never fires again"


def test_down_for_three_days_every_slot_runs_once_in_order(daemon):
    daemon.now, daemon.sensor = utc(2026, 3, 1, 6, 30), LONG_SENSOR
    daemon.up_until(utc(2026, 3, 2, 1, 59))
    daemon.comes_back(utc(2026, 3, 5, 6, 0))
    daemon.sensor_until(utc(2026, 3, 5, 8, 0))

    expected = ["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"]
    for job in REPLAYS:
        assert sorted(partitions(daemon.instance, job)) == expected, job
    # The self-dependent job ran one day at a time and in order. (Its latest tick
    # came from the schedule itself when the daemon came back, as 1.13 does.)
    per_tick = [sum(r.job_name == "nightly_job" for r in tick) for tick in daemon.requested]
    assert max(per_tick) == 1
    caught = [
        r.dagster_run.tags["dagster/partition"]
        for r in runs(daemon.instance, "nightly_job")
        if ledger.CATCHUP_TAG in r.dagster_run.tags
    ]
    assert caught == ["2026-03-02", "2026-03-03", "2026-03-04"]
    early = [
        r.dagster_run.tags["dagster/partition"]
        for r in runs(daemon.instance, "early_job")
        if ledger.CATCHUP_TAG in r.dagster_run.tags
    ]
    assert early == sorted(early), "oldest first"
    counts = Counter(
        (r.dagster_run.job_name, r.dagster_run.tags["dagster/partition"])
        for r in runs(daemon.instance)
    )
    assert set(counts.values()) == {1}, "every slot exactly once"


def test_slots_that_fall_due_while_catching_up_are_picked_up(daemon):
    daemon.up_until(utc(2026, 3, 4, 1, 59))
    daemon.now = utc(2026, 3, 5, 1, 0)
    daemon.sensor_until(utc(2026, 3, 5, 4, 0))  # 02:00 and 03:30 fall due meanwhile
    assert partitions(daemon.instance, "nightly_job")[-1] == "2026-03-05"
    assert partitions(daemon.instance, "early_job")[-1] == "2026-03-05"


def test_a_slot_with_a_run_in_flight_is_left_alone(daemon):
    daemon.up_until(utc(2026, 3, 5, 1, 59))
    job = DEFS.resolve_job_def("early_job")
    daemon.instance.create_run_for_job(
        job, status=dg.DagsterRunStatus.STARTED, tags={"dagster/partition": "2026-03-05"}
    )
    daemon.now = utc(2026, 3, 5, 6, 0)
    assert [(r.job_name, r.partition_key) for r in daemon.sensor_tick()] == [
        ("nightly_job", "2026-03-05")
    ]


def test_a_failed_catch_up_is_retried_a_bounded_number_of_times(daemon):
    daemon.up_until(utc(2026, 3, 5, 1, 59))
    FAILING.add("2026-03-05")
    daemon.now = utc(2026, 3, 5, 6, 0)
    daemon.sensor_until(utc(2026, 3, 5, 7, 0))
    attempts = [
        (r.dagster_run.tags[ledger.CATCHUP_TAG], r.dagster_run.status.value)
        for r in runs(daemon.instance, "early_job")
        if r.dagster_run.tags["dagster/partition"] == "2026-03-05"
    ]
    assert attempts == [("1", "FAILURE"), ("2", "FAILURE"), ("3", "FAILURE")]
    FAILING.clear()
    daemon.now += timedelta(hours=1)
    assert daemon.sensor_tick() == [], "given up after 3 attempts; the failures were alerted"


def test_the_digest_lists_what_was_recovered(daemon, tmp_path):
    daemon.up_until(utc(2026, 3, 5, 1, 59))
    daemon.comes_back(utc(2026, 3, 5, 6, 0), sensor_first=True)
    daemon.sensor_until(utc(2026, 3, 5, 6, 30))
    daemon.now = utc(2026, 3, 5, 9, 5)
    notifier = Notifier(data_dir=str(tmp_path), outbox_path=str(tmp_path / "outbox.jsonl"))
    result = dg.materialize(
        [daily_digest],
        partition_key=daemon.now.date().isoformat(),
        instance=daemon.instance,
        resources={"notifier": notifier},
    )
    text = result.asset_materializations_for_node("daily_digest")[0].metadata["digest"].value
    assert "Recovered by catch-up:" in text
    recovered = text.split("Recovered by catch-up:\n")[1].split("\nRan:")[0].splitlines()
    assert [line.split(" (run")[0] for line in recovered] == [
        "- nightly_job 2026-03-05",
        "- early_job 2026-03-05",
    ]
    assert "the scheduler is dark" in (tmp_path / "outbox.jsonl").read_text()


def test_a_fresh_deployment_owes_nothing_from_before_the_sensor_first_ran(daemon):
    daemon.now = utc(2026, 3, 5, 6, 30)
    assert daemon.sensor_tick() == [], "first evaluation: only remembers when it started"
    assert json.loads(daemon.cursor) == {"since": "2026-03-05T06:30:00Z", "not_taken": []}
    daemon.now = utc(2026, 3, 6, 4, 0)
    assert [(r.job_name, r.partition_key) for r in daemon.sensor_tick()] == [
        ("nightly_job", "2026-03-06"),
        ("early_job", "2026-03-06"),
    ]


def remote_schedule(instance, name):
    """The schedule as the daemon and the UI see it (to stop and start it as a person does)."""
    from dagster._core.test_utils import in_process_test_workspace
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    origin = LoadableTargetOrigin(python_file=__file__, attribute="DEFS")
    # Dagster's own snapshot code reads a deprecated property of every schedule.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with in_process_test_workspace(instance, origin) as workspace:
            [location] = workspace.code_locations
            [repo] = location.get_repositories().values()
            return repo.get_schedule(name)


def test_a_schedule_stopped_in_the_ui_stops_its_catch_up_too(daemon):
    daemon.up_until(utc(2026, 3, 5, 1, 59))
    early = remote_schedule(daemon.instance, "early_job_schedule")
    daemon.instance.stop_schedule(early.get_remote_origin_id(), early.selector_id, early)
    daemon.now = utc(2026, 3, 7, 6, 30)  # two days of early_job slots fall due meanwhile
    daemon.sensor_until(utc(2026, 3, 7, 7, 0))
    assert partitions(daemon.instance, "early_job") == ["2026-03-04"], "nothing ran"
    assert partitions(daemon.instance, "nightly_job")[-1] == "2026-03-07", "others caught up"
    # Switched back on: what fell due while it was off is still not owed; new slots are.
    daemon.instance.start_schedule(early)
    daemon.sensor_until(utc(2026, 3, 7, 8, 0))
    assert partitions(daemon.instance, "early_job") == ["2026-03-04"]


def test_a_missed_capture_is_never_run_late_only_its_latest_tick_runs(daemon):
    daemon.sensor = CAPTURE_SENSOR
    daemon.sensor_tick()  # the sensor starts watching on the 3rd
    daemon.now = utc(2026, 3, 6, 4, 0)  # the daemon was down for three 04:00 ticks
    daemon.schedule_tick("snap_job", daemon.now)  # Dagster 1.13 runs the latest one only
    daemon.sensor_until(utc(2026, 3, 6, 6, 0))
    assert partitions(daemon.instance, "snap_job") == ["2026-03-06"]
    assert all(r == [] for r in daemon.requested), "no capture is faked under an old name"
    slots = ledger.due(CAPTURES, utc(2026, 3, 3, 6, 30), daemon.now, SETTINGS)
    late = ledger.late_captures(CAPTURES, slots, daemon.now, SETUP.tz)
    assert late == {("snap_job", "2026-03-04"), ("snap_job", "2026-03-05")}
