import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.crm.people_sync import Cursor, load_cursor, pass_state
from company_ai.core.store import Stores
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.resources.people import PeopleSource
from company_ai.resources.stores import StoresResource
from company_ai.sample_world.people import SAMPLE_PEOPLE_FILE
from tests.not_taken import declined
from tests.setup import named

crm_contacts = named("crm_contacts")
DAY = "2026-11-30"  # at 07:35 on the 30th: the day of the 07:30 tick just gone
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
        synced = "SELECT count(*) FROM contacts WHERE synced_from = 'sample' AND seen_in = $1"
        state = pass_state(crm, "sample")
        assert crm.execute(synced, (state.generation,)).fetchone()[0] == 300
    assert load_cursor(data / "cursors" / "crm_contacts.json", "sample") == (Cursor(), None)


def test_a_past_day_is_declined_as_a_capture(data):
    with dg.instance_for_test() as instance:
        result = materialize(data, day="2026-11-20", instance=instance)
        assert "crm_contacts records the address book" in declined(
            instance, result, "2026-11-20", "crm_contacts"
        )
    assert not (data / "cursors" / "crm_contacts.json").exists()


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


# --- the Google source through the real client ------------------------------------------


def google_book(people: int, per_page: int = 10, sync: str = "s1") -> list[tuple]:
    """The address book as `connections.list` answers, `per_page` people a page."""
    from tests.core.crm.test_people_sync import book

    return book(-(-people // per_page), per_page, sync)


@pytest.fixture
def google(monkeypatch):
    """`google(responses)`: the real People client (its bundled discovery document, the
    resource's own JSON model) reading `responses` over an HttpMockSequence."""
    from googleapiclient.discovery import build
    from googleapiclient.http import HttpMockSequence

    from company_ai.resources.people import FastJsonModel

    def answer(responses):
        http = HttpMockSequence(list(responses))
        monkeypatch.setattr(
            PeopleSource,
            "_service",
            lambda self: build(
                "people", "v1", http=http, static_discovery=True, model=FastJsonModel()
            ),
        )
        return http

    return answer


def sync_google(data, clock, at, instance, max_pages=None, monkeypatch=None):
    clock(at)
    if max_pages is not None:
        monkeypatch.setattr("company_ai.assets.crm.MAX_PAGES", max_pages)
    result = dg.materialize(
        [crm_contacts],
        partition_key=at.date().isoformat(),  # the day of the 07:30 tick just gone
        instance=instance,
        resources={
            "stores": StoresResource(data_dir=str(data)),
            "people": PeopleSource(backend="google"),
        },
        raise_on_error=False,
    )
    assert result.success
    return metadata(result)


def backup(source, target) -> None:
    """An online backup of a SQLite file, as a snapshot takes it."""
    with (
        sqlite3.connect(factory=StoreConnection, database=source) as src,
        sqlite3.connect(factory=StoreConnection, database=target) as dst,
    ):
        src.backup(dst)
    dst.close()


def deleted(stores) -> int:
    with stores.connect("crm", readonly=True) as crm:
        return crm.execute(
            "SELECT count(*) FROM contacts WHERE synced_from = 'google_people'"
            " AND deleted_at IS NOT NULL"
        ).fetchone()[0]


@pytest.mark.sqlite_only("it backs up and restores the file crm.db")
def test_a_cursor_or_a_store_restored_from_another_pass_deletes_nobody(
    stores, clock, google, monkeypatch
):
    data = stores.data_dir
    stores.create_all()
    cursor = data / "cursors" / "crm_contacts.json"
    day = [MORNING - timedelta(days=5 - n) for n in range(6)]
    with dg.instance_for_test() as instance:
        google(google_book(60))
        first = sync_google(data, clock, day[0], instance, 5, monkeypatch)  # pass B, 5 pages
        assert (first["people"], first["stopped"]) == (50, "page cap")
        old_cursor = cursor.read_bytes()  # a backup of the cursor, mid-pass
        backup(stores.path("crm"), data.parent / "crm-mid-pass.db")  # and of the store
        google(google_book(60)[5:])
        assert sync_google(data, clock, day[0], instance)["stopped"] == "complete"
        cursor.unlink()  # e.g. the sync token expired: the next pass is a full one (C)
        google(google_book(60))
        assert sync_google(data, clock, day[1], instance, 15, monkeypatch)["stopped"] == "complete"
        assert deleted(stores) == 0

        cursor.write_bytes(old_cursor)  # the cursor restored from the backup
        http = google(google_book(60))
        found = sync_google(data, clock, day[2], instance)
        assert "pageToken" not in http.request_sequence[0][0]  # a new full pass
        assert "not to this CRM store's pass" in found["restarted"]
        assert (found["people"], found["marked_deleted_absent"], deleted(stores)) == (60, 0, 0)

        # The store restored from the mid-pass backup, the cursor left as it is now.
        for suffix in ("-wal", "-shm"):
            Path(f"{stores.path('crm')}{suffix}").unlink(missing_ok=True)
        shutil.copy(data.parent / "crm-mid-pass.db", stores.path("crm"))
        google(google_book(60))
        found = sync_google(data, clock, day[3], instance)
        assert found["marked_deleted_absent"] == 0 and deleted(stores) == 0
        assert found["people"] == 60 and "not to this CRM store's pass" in found["restarted"]


def test_a_complete_pass_that_misses_most_people_holds_the_deletions(
    stores, clock, google, monkeypatch
):
    data = stores.data_dir
    stores.create_all()
    with dg.instance_for_test() as instance:
        google(google_book(60))
        sync_google(data, clock, MORNING, instance)
        (data / "cursors" / "crm_contacts.json").unlink()
        google(google_book(20))  # a full pass that returns 20 of the 60
        found = sync_google(data, clock, MORNING - timedelta(days=1), instance)
        assert (found["marked_deleted_absent"], found["deletions_held"]) == (0, 40)
        assert deleted(stores) == 0
        assert (
            not (data / "cursors" / "crm_contacts.json").exists()
            or load_cursor(data / "cursors" / "crm_contacts.json", "google_people")[0].fresh
        )  # the next run checks with a full pass again
