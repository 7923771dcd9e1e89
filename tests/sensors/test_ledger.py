"""The ledger read as of an instant: what a replayed report or brain day sees."""

from datetime import UTC, datetime, time

import dagster as dg

from company_ai import ledger
from company_ai.core.install import record_first_day
from company_ai.core.timetable import Entry
from company_ai.resources.notifier import Notifier
from tests.ledger_time import backdate_run
from tests.setup import CLOCK, SETTINGS, named

daily_digest = named("daily_digest")


def utc(*args):
    return datetime(*args, tzinfo=UTC)


BROKEN = {"on": False}


@dg.asset(partitions_def=dg.DailyPartitionsDefinition(start_date="2026-01-01"))
def thing() -> None:
    if BROKEN["on"]:
        raise RuntimeError("the source went away\nsecond line")


def made_at(instance, at, took_s=1.0, partition="2026-03-04"):
    result = dg.materialize(
        [thing], partition_key=partition, instance=instance, raise_on_error=False
    )
    backdate_run(instance, result.run_id, at, took_s)
    return result.run_id


def test_a_run_is_read_with_the_status_it_had_at_the_instant_asked():
    with dg.instance_for_test() as instance:
        quick = made_at(instance, utc(2026, 3, 5, 1, 0))
        slow = made_at(instance, utc(2026, 3, 5, 8, 0), took_s=3 * 3600)  # ends 11:00
        runs = ledger.runs_between(
            instance, utc(2026, 3, 5), utc(2026, 3, 6), as_of=utc(2026, 3, 5, 9)
        )
        assert [(r.run_id, r.status) for r in runs] == [(quick, "SUCCESS"), (slow, "STARTED")]
        assert runs[1].ended_at is None and runs[0].ended_at == "2026-03-05T01:00:01Z"
        later = ledger.runs_between(instance, utc(2026, 3, 5), utc(2026, 3, 6))
        assert [r.status for r in later] == ["SUCCESS", "SUCCESS"]
        assert ledger.runs_between(instance, utc(2026, 3, 6), utc(2026, 3, 7)) == []


def test_a_failed_run_is_read_with_the_first_line_of_its_error():
    with dg.instance_for_test() as instance:
        BROKEN["on"] = True
        try:
            failed = made_at(instance, utc(2026, 3, 5, 1, 0))
        finally:
            BROKEN["on"] = False
        [run] = ledger.runs_between(instance, utc(2026, 3, 5), utc(2026, 3, 6))
    assert (run.run_id, run.status) == (failed, "FAILURE")
    assert run.error == "thing: RuntimeError: the source went away"


def test_slots_due_before_the_install_are_nobodys_miss(tmp_path):
    settings = SETTINGS.with_(data_dir=tmp_path)
    entries = [Entry("a_job", ("thing",), time(6, 0), 60)]
    with dg.instance_for_test() as instance:
        window = (utc(2026, 3, 3), utc(2026, 3, 6))
        assert len(ledger.missed_between(instance, entries, *window, settings)) == 3
        record_first_day(tmp_path, "2026-03-03", at=utc(2026, 3, 4, 12))
        missed = ledger.missed_between(instance, entries, *window, settings)
        assert [d.partition for d in missed] == ["2026-03-05"]


def test_after_an_outage_the_digest_reaches_back_to_the_last_digest(data, clock):
    notifier = Notifier(data_dir=str(data), outbox_path=str(data / "outbox.jsonl"))
    job = dg.define_asset_job("digest_job", selection=[daily_digest])
    defs = dg.Definitions(assets=[daily_digest], jobs=[job], resources={"notifier": notifier})

    def digest(instance, day):
        result = defs.resolve_job_def("digest_job").execute_in_process(
            partition_key=day, instance=instance
        )
        backdate_run(instance, result.run_id, CLOCK())  # made at the fake clock's time
        text = result.asset_materializations_for_node("daily_digest")[0].metadata["digest"]
        return text.value.splitlines()[1]  # "company_ai digest <since> .. <until>"

    with dg.instance_for_test() as instance:
        clock(utc(2026, 10, 21, 9, 10))
        assert digest(instance, "2026-10-21") == (
            "company_ai digest 2026-10-20T09:05:00Z .. 2026-10-21T09:05:00Z"
        )
        clock(utc(2026, 10, 25, 9, 10))  # three mornings without a digest
        assert digest(instance, "2026-10-25") == (
            "company_ai digest 2026-10-21T09:05:00Z .. 2026-10-25T09:05:00Z"
        )
        clock(utc(2026, 11, 20, 9, 10))  # a month dark: a week at most
        assert digest(instance, "2026-11-20") == (
            "company_ai digest 2026-11-13T09:05:00Z .. 2026-11-20T09:05:00Z"
        )
