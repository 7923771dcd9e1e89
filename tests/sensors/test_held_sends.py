"""The held-send sensor and job through Dagster: a draft held for a far contact's working
hours is sent once its morning comes, however many ticks see it. (The rule itself is
tested as plain core in tests/core/outreach/test_outreach_day.py.)"""

from datetime import UTC, datetime, timedelta

import dagster as dg

from company_ai.core.outreach import day as outreach
from company_ai.core.outreach import read_page
from company_ai.core.store import Stores, transaction
from company_ai.core.times import Day
from company_ai.resources.mailer import Mailer
from company_ai.resources.stores import StoresResource
from tests.fakes import FakeMailer, FakeModel
from tests.setup import DEFS

DAY = "2026-11-27"  # a Friday
FRIDAY_MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)  # 18:00 in Tokyo
TOKYO_MONDAY_0900 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


class Pages:
    def __init__(self, folder):
        self.folder = folder

    def page(self, domain):
        return read_page(self.folder, domain)


def held_far_draft(data) -> int:
    """The day researched, drafted and sent by core, one ready draft's contact in Tokyo."""
    stores, now = Stores(data), lambda: FRIDAY_MORNING
    pages = Pages(data / "company_pages")
    outreach.research_day(stores, Day.of(DAY, "UTC"), model=FakeModel(), pages=pages, clock=now)
    outreach.draft_day(stores, DAY, model=FakeModel(), sender=FakeMailer(), clock=now)
    with stores.connect("outreach") as conn:
        draft_id, contact_id = conn.execute(
            "SELECT id, contact_id FROM drafts WHERE status = 'ready' ORDER BY id"
        ).fetchone()
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute("UPDATE contacts SET city = 'Tokyo' WHERE id = $1", (contact_id,))
    done = outreach.send_day(stores, DAY, tz="UTC", mailer=FakeMailer(), clock=now)
    assert done.held == {str(draft_id): "2026-11-30T00:00:00Z"}
    return draft_id


def tick(instance, data):
    sensor = DEFS.resolve_sensor_def("held_sends_sensor")
    context = dg.build_sensor_context(
        instance=instance,
        definitions=DEFS,
        resources={"stores": StoresResource(data_dir=str(data))},
    )
    return sensor.evaluate_tick(context)


def test_two_ticks_after_the_due_time_send_the_held_draft_once(data, clock):
    draft_id = held_far_draft(data)
    outbox = data / "outbox"
    job = DEFS.resolve_job_def("held_sends_job")
    assert job.tags["dagster/max_runtime"] == "300"
    with dg.instance_for_test() as instance:
        clock(TOKYO_MONDAY_0900 - timedelta(minutes=1))
        assert not tick(instance, data).run_requests  # not yet due
        clock(TOKYO_MONDAY_0900 + timedelta(minutes=5))
        sent = 0
        for _ in range(2):  # two ticks, each running what it asked for
            for request in tick(instance, data).run_requests:
                result = job.execute_in_process(
                    instance=instance,
                    run_config=request.run_config,
                    resources={
                        "stores": StoresResource(data_dir=str(data)),
                        "mailer": Mailer(outbox_dir=str(outbox)),
                    },
                )
                assert result.success
                sent += 1
    assert sent == 1 and len(list(outbox.glob("*.eml"))) == 1
    with Stores(data).connect("outreach", readonly=True) as conn:
        status, message_id = conn.execute(
            "SELECT status, message_id FROM drafts WHERE id = $1", (draft_id,)
        ).fetchone()
    assert status == "sent" and message_id is not None


def test_the_sensor_waits_while_a_held_send_run_is_in_flight(data, clock):
    held_far_draft(data)
    clock(TOKYO_MONDAY_0900 + timedelta(minutes=5))
    with dg.instance_for_test() as instance:
        [request] = tick(instance, data).run_requests
        instance.create_run_for_job(
            DEFS.resolve_job_def("held_sends_job"), run_id=None
        )  # a run not started yet: queued work in flight
        result = tick(instance, data)
        assert not result.run_requests and "in flight" in result.skip_message
        assert request.run_key.startswith("held_sends:")
