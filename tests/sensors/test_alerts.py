import json
from datetime import timedelta

import dagster as dg
import pytest

from company_ai.core.ops import alerts
from company_ai.core.store import Stores
from company_ai.resources.notifier import Notifier
from company_ai.sensors.alerts import check_failure_alerts, freshness_alerts, run_failure_alerts
from company_ai.sensors.internal import FreshnessState
from tests.fakes import FakeServer, Reply
from tests.test_notifier import TOKEN, telegram, telegram_ok

BROKEN = {"on": True, "warn": False}


@dg.asset(freshness_policy=dg.FreshnessPolicy.time_window(fail_window=timedelta(hours=26)))
def watched() -> None:
    if BROKEN["on"]:
        raise RuntimeError("the source is gone")


@dg.asset_check(asset=watched)
def watched_is_sane() -> dg.AssetCheckResult:
    severity = dg.AssetCheckSeverity.WARN if BROKEN["warn"] else dg.AssetCheckSeverity.ERROR
    return dg.AssetCheckResult(passed=not BROKEN["on"], severity=severity)


DEFS = dg.Definitions(
    assets=[watched],
    asset_checks=[watched_is_sane],
    sensors=[run_failure_alerts, check_failure_alerts, freshness_alerts],
)


@pytest.fixture
def outbox(tmp_path):
    BROKEN["on"], BROKEN["warn"] = True, False
    path = tmp_path / "outbox.jsonl"
    return path, Notifier(data_dir=str(tmp_path), outbox_path=str(path))


def sent(path):
    return (
        [json.loads(line)["text"] for line in path.read_text().splitlines()]
        if path.exists()
        else []
    )


def evaluate(sensor, instance, notifier, cursor=None):
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, definitions=DEFS, resources={"notifier": notifier}
    )
    sensor(context)
    return context.cursor


def test_a_failed_run_is_alerted_once(outbox):
    path, notifier = outbox
    with dg.instance_for_test() as instance:
        result = dg.materialize([watched], instance=instance, raise_on_error=False)
        for _ in range(2):
            context = dg.build_run_status_sensor_context(
                sensor_name="run_failure_alerts",
                dagster_instance=instance,
                dagster_run=result.dagster_run,
                dagster_event=result.get_run_failure_event(),
                resources={"notifier": notifier},
            ).for_run_failure()
            run_failure_alerts(context)
    [alert] = sent(path)
    assert alert.startswith(
        f"ERROR: run failed: __ephemeral_asset_job__  run {result.run_id[:8]} steps watched"
    )


def test_each_failed_check_is_alerted_once_across_ticks(outbox):
    path, notifier = outbox
    BROKEN["on"] = False  # the asset materialises; its check still fails below
    with dg.instance_for_test() as instance:
        job = [watched, watched_is_sane]
        dg.materialize(job, instance=instance, selection=dg.AssetSelection.all())
        cursor = evaluate(check_failure_alerts, instance, notifier)
        assert sent(path) == []
        BROKEN["on"] = True
        dg.materialize(
            job,
            instance=instance,
            raise_on_error=False,
            selection=dg.AssetSelection.checks(watched_is_sane),
        )
        cursor = evaluate(check_failure_alerts, instance, notifier, cursor)
        cursor = evaluate(check_failure_alerts, instance, notifier, cursor)
        assert [a.split(" run ")[0] for a in sent(path)] == [
            "ERROR: check failed: watched:watched_is_sane"
        ]
        dg.materialize(
            job,
            instance=instance,
            raise_on_error=False,
            selection=dg.AssetSelection.checks(watched_is_sane),
        )
        evaluate(check_failure_alerts, instance, notifier, cursor)
        assert len(sent(path)) == 2, "a new failure is a new alert"


def test_a_failed_warn_check_is_left_to_the_digest_not_pushed(outbox):
    path, notifier = outbox
    BROKEN["on"], BROKEN["warn"] = False, False
    with dg.instance_for_test() as instance:
        job = [watched, watched_is_sane]
        dg.materialize(job, instance=instance, selection=dg.AssetSelection.all())
        cursor = evaluate(check_failure_alerts, instance, notifier)
        BROKEN["on"], BROKEN["warn"] = True, True
        for _ in range(3):  # a warning that recurs every day
            dg.materialize(
                job,
                instance=instance,
                raise_on_error=False,
                selection=dg.AssetSelection.checks(watched_is_sane),
            )
            cursor = evaluate(check_failure_alerts, instance, notifier, cursor)
        assert sent(path) == []
        BROKEN["warn"] = False  # the same check failing as an ERROR is pushed
        dg.materialize(
            job,
            instance=instance,
            raise_on_error=False,
            selection=dg.AssetSelection.checks(watched_is_sane),
        )
        evaluate(check_failure_alerts, instance, notifier, cursor)
        assert [a.split(" run ")[0] for a in sent(path)] == [
            "ERROR: check failed: watched:watched_is_sane"
        ]


def change(instance, new, previous, at):
    from dagster._core.definitions.freshness import FreshnessStateChange  # test-only private

    instance.report_runless_asset_event(
        FreshnessStateChange(
            key=dg.AssetKey("watched"),
            new_state=new,
            previous_state=previous,
            state_change_timestamp=at,
        )
    )


def test_a_change_to_fail_is_alerted_once(outbox):
    path, notifier = outbox
    with dg.instance_for_test() as instance:
        change(instance, FreshnessState.PASS, FreshnessState.UNKNOWN, 1000.0)
        cursor = evaluate(freshness_alerts, instance, notifier)
        change(instance, FreshnessState.FAIL, FreshnessState.PASS, 2000.0)
        cursor = evaluate(freshness_alerts, instance, notifier, cursor)
        cursor = evaluate(freshness_alerts, instance, notifier, cursor)
        assert [a.split(" freshness")[0] for a in sent(path)] == ["ERROR: stale: watched"]
        change(instance, FreshnessState.PASS, FreshnessState.FAIL, 3000.0)
        change(instance, FreshnessState.FAIL, FreshnessState.PASS, 4000.0)
        evaluate(freshness_alerts, instance, notifier, cursor)
        assert len(sent(path)) == 2


def test_an_alert_sensor_survives_a_notifier_that_is_down_and_retries_later(tmp_path):
    path = f"/bot{TOKEN}/sendMessage"
    with dg.instance_for_test() as instance, FakeServer() as server:
        server.script(path, Reply({"ok": False, "description": "down"}, status=503))
        notifier = telegram(tmp_path, server.url)
        change(instance, FreshnessState.FAIL, FreshnessState.PASS, 2000.0)
        cursor = evaluate(freshness_alerts, instance, notifier)  # does not raise
        with Stores(tmp_path).connect("ops", readonly=True) as ops:
            assert alerts.pending_count(ops) == 1
        server.script(path, Reply(telegram_ok()))
        evaluate(freshness_alerts, instance, notifier, cursor)  # nothing new: flushes the queue
    texts = [p["text"] for _, p in server.requests]
    assert len(texts) == 2 and texts[0] == texts[1] and texts[0].startswith("ERROR: stale: watched")
