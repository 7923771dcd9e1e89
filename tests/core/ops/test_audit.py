import sqlite3

import pytest

from company_ai.core.memory import append_episodes
from company_ai.core.ops import (
    WARMTH_BANDS,
    Audit,
    audit_crm,
    audit_stores,
    band_of,
    is_valid_email,
    latest_audit,
    record_audit,
    stored_audit,
)
from company_ai.core.outreach import Hold, add_hold
from company_ai.core.store import transaction
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.times import parse_utc
from tests.conftest import episode

NOW = "2026-11-30T05:45:00Z"


def contact(crm, cid, name, email, warmth, deleted_at=None):
    crm.execute(
        "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at,"
        " deleted_at) VALUES ($1, $2, $3, $4, 'test', $5, $6, $7)",
        (cid, email, name, warmth, NOW, NOW, deleted_at),
    )


@pytest.fixture
def world(stores):
    with stores.connect("crm") as crm, transaction(crm):
        contact(crm, 1, "Ada Lovelace", "ada@example.com", 0)  # cold, actionable
        contact(crm, 2, "Bo Chen", "bo@example.com", 20)  # cold (20 is the top of cold)
        contact(crm, 3, "Cy Ames", "cy@example.com", 21)  # warm, but replied: held
        contact(crm, 4, "  ", "blank@example.com", 60)  # warm, no name
        contact(crm, 5, "Di Roy", None, 61)  # hot, no email
        contact(crm, 6, "Ed Fox", "ed@localhost", 100)  # hot, not a valid address
        contact(crm, 7, "Fay Orr", "fay@example.org", 90, deleted_at=NOW)  # deleted: not counted
        contact(crm, 8, "Gil Parr", "gil@example.net", 70)  # hot, deferred until tomorrow
        contact(crm, 9, "Hal Ives", "hal@example.net", 40)  # warm, deferral already over
    with stores.connect("outreach") as outreach, transaction(outreach):
        add_hold(outreach, 3, Hold("replied", "2026-11-20T10:00:00Z", None, None, "r"), "t:1")
        add_hold(
            outreach,
            8,
            Hold("deferred", "2026-11-20T10:00:00Z", "2026-12-01T00:00:00Z", None, "q1"),
            "t:2",
        )
        add_hold(
            outreach,
            9,
            Hold("deferred", "2026-11-01T10:00:00Z", "2026-11-15T00:00:00Z", None, "later"),
            "t:3",
        )
    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                episode(contact_id=1, episode_type="engagement", content="site visit"),
                episode(contact_id=2, episode_type="engagement", content="portal login"),
                episode(contact_id=2, episode_type="note"),
            ],
            now=parse_utc(NOW),
        )
    return stores


def test_the_audit_counts_bands_emails_and_what_can_be_acted_on(world):
    audit = audit_stores(world, NOW)
    assert audit == Audit(
        contacts=8,
        cold=2,
        warm=3,
        hot=3,
        actionable=3,  # Ada, Bo and Hal (whose deferral is over)
        with_email=6,  # all but Di (none) and Ed (ed@localhost)
        engagement_rows=2,
        deleted=1,
    )
    numbers = audit.numbers()
    assert numbers["cold_share"] == 0.25 and numbers["actionable_share"] == 0.375
    assert numbers["with_email_share"] == 0.75
    assert audit.lines()[1] == (
        "warmth: cold 2 (25.0%), warm 3 (37.5%), hot 3 (37.5%) [bands: cold 0-20, warm 21-60,"
        " hot 61-100]"
    )


def test_a_hold_counts_as_it_stands_at_the_audit_moment(world):
    # Gil's deferral ends at midnight: the next morning's audit can act on him.
    assert audit_stores(world, "2026-12-01T05:45:00Z").actionable == 4
    # Before Cy's reply, Cy was actionable too (and Gil's deferral had not begun).
    assert audit_stores(world, "2026-11-10T05:45:00Z").actionable == 4


def test_the_bands_cover_every_warmth_once():
    assert [band_of(w) for w in (0, 20, 21, 60, 61, 100)] == [
        "cold",
        "cold",
        "warm",
        "warm",
        "hot",
        "hot",
    ]
    covered = [w for _, low, high in WARMTH_BANDS for w in range(low, high + 1)]
    assert covered == list(range(101))
    with pytest.raises(ValueError, match="outside 0-100"):
        band_of(101)


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("ada@example.com", True),
        (" Ada@Example.CO.UK ", True),
        ("ada@localhost", False),
        ("ada@example.c0m", False),
        ("ada@@example.com", False),
        ("ada example@example.com", False),
        ("@example.com", False),
        ("ada@-example.com", False),
        ("", False),
        (None, False),
    ],
)
def test_a_valid_email_has_a_deliverable_shape(address, valid):
    assert is_valid_email(address) is valid


def test_no_store_counts_as_an_empty_crm(stores):
    audit = audit_stores(stores, NOW)
    assert audit == Audit(0, 0, 0, 0, 0, 0, 0, 0)
    assert audit.numbers()["cold_share"] is None
    assert (
        audit_crm(sqlite3.connect(factory=StoreConnection, database=":memory:"), None, None, NOW)
        == audit
    )


def test_each_capture_is_a_row_and_a_reader_takes_the_latest_before_its_moment(world):
    first = audit_stores(world, NOW)
    with world.connect("ops") as ops, transaction(ops):
        record_audit(ops, "2026-11-30", NOW, first)
        record_audit(ops, "2026-11-30", NOW, first)  # the same moment twice: one row
    with world.connect("crm") as crm, transaction(crm):
        contact(crm, 10, "Ivy Lake", "ivy@example.com", 5)
    again = audit_stores(world, "2026-11-30T09:00:00Z")
    with world.connect("ops") as ops, transaction(ops):
        record_audit(ops, "2026-11-30", "2026-11-30T09:00:00Z", again)
    with world.connect("ops", readonly=True) as ops:
        assert ops.execute("SELECT count(*) FROM crm_audits").fetchone()[0] == 2
        before_rerun = latest_audit(ops, "2026-11-30T06:00:00Z")
        assert before_rerun is not None and before_rerun.audit == first
        assert before_rerun.recorded_at == NOW and before_rerun.day == "2026-11-30"
        assert latest_audit(ops, NOW) is None, "strictly before the moment"
    latest = stored_audit(world)
    assert latest is not None and latest.audit.contacts == first.contacts + 1


def test_no_ops_store_or_table_has_no_stored_audit(stores):
    assert stored_audit(stores) is None
    assert latest_audit(sqlite3.connect(factory=StoreConnection, database=":memory:")) is None
