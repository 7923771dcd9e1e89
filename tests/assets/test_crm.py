from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.db import Stores
from company_ai.core.people import Cursor, load_cursor, pass_state
from company_ai.core.sample_people import SAMPLE_PEOPLE_FILE
from company_ai.resources.people import PeopleSource
from company_ai.resources.stores import StoresResource
from tests.setup import named

crm_contacts = named("crm_contacts")
DAY = "2026-11-29"  # at 07:35 on the 30th, the 07:30 tick's day
MORNING = datetime(2026, 11, 30, 7, 35, tzinfo=UTC)


@pytest.fixture(autouse=True)
def morning(clock):
    clock(MORNING)


def materialize(data, day=DAY, instance=None):
    return dg.materialize(
        [crm_contacts],
        partition_key=day,
        instance=instance,
        resources={
            "stores": StoresResource(data_dir=str(data)),
            "people": PeopleSource(sample_file=str(data / SAMPLE_PEOPLE_FILE)),
        },
        raise_on_error=False,
    )


def metadata(result) -> dict:
    [event] = result.asset_materializations_for_node("crm_contacts")
    return {k: v.value for k, v in event.metadata.items()}


def test_the_sync_of_the_sample_crm_adopts_every_contact_and_changes_nothing_else(data):
    with Stores(data).connect("crm", readonly=True) as crm:
        before = crm.execute("SELECT id, email, name, updated_at FROM contacts").fetchall()
    with dg.instance_for_test() as instance:
        first = materialize(data, instance=instance)
        again = materialize(data, instance=instance)
    for result in (first, again):
        assert result.success
        found = metadata(result)
        assert (found["people"], found["unchanged"], found["stopped"]) == (300, 300, "complete")
        assert found["inserted"] == found["updated"] == found["marked_deleted_absent"] == 0
    with Stores(data).connect("crm", readonly=True) as crm:
        assert crm.execute("SELECT id, email, name, updated_at FROM contacts").fetchall() == before
        synced = "SELECT count(*) FROM contacts WHERE synced_from = 'sample' AND seen_in = ?"
        state = pass_state(crm, "sample")
        assert crm.execute(synced, (state.generation,)).fetchone()[0] == 300
    assert load_cursor(data / "cursors" / "crm_contacts.json", "sample") == (Cursor(), None)


def test_a_past_day_is_refused_as_a_capture(data):
    with dg.instance_for_test() as instance:
        result = materialize(data, day="2026-11-20", instance=instance)
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert "crm_contacts is a capture" in failure.step_failure_data.error.message + str(
        failure.step_failure_data.user_failure_data.description
    )


def refused_check(result):
    [check] = [
        c for c in result.get_asset_check_evaluations()
        if c.check_name == "crm_contacts_refused_nothing"
    ]  # fmt: skip
    return check


def test_a_malformed_source_is_one_refused_page_and_the_cursor_is_kept(data):
    cursor = data / "cursors" / "crm_contacts.json"
    (data / SAMPLE_PEOPLE_FILE).write_text('{"connections": [')  # cut short mid-write
    with dg.instance_for_test() as instance:
        result = materialize(data, instance=instance)
    assert result.success and not cursor.exists()
    found = metadata(result)
    assert (found["items_refused"], found["stopped"]) == (1, "page refused")
    check = refused_check(result)
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["refused"].value == 1
    [reason] = check.metadata["reasons"].value.values()
    assert "is not a people list" in reason
    with Stores(data).connect("crm", readonly=True) as crm:
        assert crm.execute("SELECT count(*) FROM intake_refusals").fetchone()[0] == 1
