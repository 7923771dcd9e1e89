"""The inbox assets' wiring: resources, the cursor, metadata, and the capture's refusal."""

import json
import mailbox
import os
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.store import Stores, transaction
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.inbox import InboxSource
from company_ai.resources.stores import StoresResource
from tests.core.inbox.test_inbox import ADA, RFC_2, mail
from tests.not_taken import declined
from tests.setup import named

inbox_replies, engagement_signals = named("inbox_replies", "engagement_signals")
DAY = "2026-11-30"
MORNING = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # after the 06:30 triage of DAY


@pytest.fixture(autouse=True)
def morning(clock):
    clock(MORNING)


def setup_data(tmp_path):
    data = tmp_path / "data"
    stores = Stores(data)
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES (1, $1, 'Ada Okafor', 40, 'sample', $2, $3)",
            (ADA, "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z"),
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES (2, 1, 't-1', 'Hi', 'Body', '2026-11-20T09:00:00Z', $1)",
            (RFC_2,),
        )
    (tmp_path / "inbox").mkdir()
    box = mailbox.Maildir(tmp_path / "inbox" / "maildir", create=True)
    spam = mail("Cheap watches", sender="spam@x.example", in_reply_to=None, references=None)
    for message in (mail("Yes, send pricing."), spam):
        message = mailbox.MaildirMessage(message.as_bytes())
        message.set_date(datetime(2026, 11, 29, 15, 0, tzinfo=UTC).timestamp())
        box.add(message)
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "a.json").write_text(
        json.dumps({"kind": "portal_signup", "email": ADA, "at": "2026-11-29T12:00:00Z"})
    )
    (drop / "b.json").write_text("{broken")
    return data, {
        "stores": StoresResource(data_dir=str(data)),
        "inbox_source": InboxSource(
            maildir=str(tmp_path / "inbox" / "maildir"), cursor=str(tmp_path / "inbox" / "c.json")
        ),
        "engagement_drop": EngagementDrop(folder=str(drop)),
    }


def meta(result, node):
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


def test_the_inbox_assets_triage_the_maildir_and_the_drop_folder(tmp_path):
    data, resources = setup_data(tmp_path)
    with dg.instance_for_test() as instance:
        first = dg.materialize(
            [inbox_replies, engagement_signals],
            partition_key=DAY,
            instance=instance,
            resources=resources,
        )
        inbox = meta(first, "inbox_replies")
        assert (inbox["read"], inbox["matched"], inbox["unmatched_not_stored"]) == (
            2, {"reply": 1}, 1
        )  # fmt: skip
        assert inbox["warmth_changes"] == 1 and not inbox["cursor_moved"], "maildir: by keys"
        engagement = meta(first, "engagement_signals")
        assert engagement["processed"] == 1 and list(engagement["rejected"]) == ["b.json"]
        assert (tmp_path / "drop" / "rejected" / "b.json").is_file()

        again = dg.materialize(
            [inbox_replies], partition_key=DAY, instance=instance, resources=resources
        )
        assert meta(again, "inbox_replies")["read"] == 0, "every key is taken: none read again"
        assert meta(again, "inbox_replies")["warmth_changes"] == 0
        with Stores(data).connect("crm") as crm:
            assert crm.execute("SELECT warmth FROM contacts").fetchone()[0] == 50

        late = dg.materialize(
            [inbox_replies], partition_key="2026-11-20", instance=instance, resources=resources
        )
        assert "inbox_replies records the inbox" in declined(
            instance, late, "2026-11-20", "inbox_replies"
        )


# --- the hostile corpus through the real asset (tests/hostile/mail) --------------------------

CORPUS = Path(__file__).parents[1] / "hostile" / "mail"
ADA_HOME = "ada.okafor@home.example"
BEN = "ben@acme.example"
RFC_B = "<b@company-ai.example>"
TODAY = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
IN_2035 = datetime(2035, 1, 1, 9, 0, tzinfo=UTC)


def hostile_setup(tmp_path):
    """Ada (two addresses, message 2 of thread t-1) and Ben (message 3 of t-2); an empty
    Maildir; the resources of the inbox asset."""
    data = tmp_path / "data"
    stores = Stores(data)
    at = "2026-11-01T00:00:00Z"
    with stores.connect("crm") as crm, transaction(crm):
        crm.executemany(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES ($1, $2, $3, $4, 'sample', $5, $6)",
            [(1, ADA, "Ada Okafor", 40, at, at), (2, BEN, "Ben", 95, at, at)],
        )
        crm.execute(
            "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
            " VALUES ($1, 1, 0, $2)",
            (ADA_HOME, at),
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.executemany(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES ($1, $2, $3, 'Hi', 'Body', '2026-11-20T09:00:00Z', $4)",
            [(2, 1, "t-1", RFC_2), (3, 2, "t-2", RFC_B)],
        )
    box = mailbox.Maildir(tmp_path / "maildir", create=True)
    resources = {
        "stores": StoresResource(data_dir=str(data)),
        "inbox_source": InboxSource(
            maildir=str(tmp_path / "maildir"), cursor=str(tmp_path / "cursor.json")
        ),
    }
    return stores, box, resources


def deliver(box, name: str, at: datetime = TODAY) -> str:
    """Deliver a corpus file to the Maildir with the file time `at`; its Maildir key."""
    key = box.add((CORPUS / name).read_bytes())  # bytes: written as they are, not parsed
    (path,) = (Path(box._path) / "new").glob(f"{key}*")
    os.utime(path, (at.timestamp(), at.timestamp()))
    return key


def triage_run(instance, resources):
    result = dg.materialize(
        [inbox_replies], partition_key=DAY, instance=instance, resources=resources
    )
    return result, meta(result, "inbox_replies")


def q(stores, store, sql, *args):
    with stores.connect(store) as conn:
        return [tuple(r) for r in conn.execute(sql, args)]


def test_a_2035_mail_does_not_hide_a_later_unsubscribe(tmp_path):
    """Defect 3: the file time (and Date) of a mail is data, never the cursor."""
    stores, box, resources = hostile_setup(tmp_path)
    deliver(box, "d3_maildir_2035.eml", IN_2035)
    with dg.instance_for_test() as instance:
        _, first = triage_run(instance, resources)
        assert first["matched"] == {"reply": 1} and first["times_flagged"] == 1
        assert q(stores, "outreach", "SELECT received_at FROM inbound") == [
            ("2026-11-30T07:00:00Z",)
        ], "a time in the future is kept as now"
        deliver(box, "d3_unsubscribe_today.eml", TODAY)
        _, second = triage_run(instance, resources)
    assert second["read"] == 1 and second["matched"] == {"unsubscribe": 1}
    assert ("unsubscribed",) in q(stores, "outreach", "SELECT kind FROM send_holds")


def test_the_hostile_corpus_through_the_asset(tmp_path):
    stores, box, resources = hostile_setup(tmp_path)
    keys = {
        path.name: deliver(box, path.name, IN_2035 if path.name.startswith("d3_m") else TODAY)
        for path in sorted(CORPUS.glob("*.eml"))
        if path.name != "d3_unsubscribe_today.eml"
    }
    with dg.instance_for_test() as instance:
        result, first = triage_run(instance, resources)
        assert result.success
        refused = {f"maildir:{keys[n]}" for n in ("x_huge_header.eml", "x_nested_1000_deep.eml")}
        assert first["items_refused"] == 2 and set(first["reasons"]) == refused
        assert first["duplicates"] == 1
        (check,) = result.get_asset_check_evaluations()
        assert check.check_name == "inbox_replies_refused_nothing" and not check.passed
        assert check.severity == dg.AssetCheckSeverity.WARN
        assert check.metadata["refused"].value == 2
        assert set(check.metadata["reasons"].value) == refused
        assert set(q(stores, "outreach", "SELECT item_key FROM intake_refusals")) == {
            (k,) for k in refused
        }
        # d4: no read receipt, delivered report or foreign reporter bounces anyone; the real
        # bounce holds the address we sent to, not the daemon's
        assert q(stores, "outreach", "SELECT id, bounce_status FROM messages ORDER BY id") == [
            (2, "none"),
            (3, "hard"),
        ]
        assert q(stores, "outreach", "SELECT contact_id, address FROM send_holds"
                 " WHERE kind = 'bounced'") == [(2, BEN)]  # fmt: skip
        assert q(stores, "outreach", "SELECT from_address FROM inbound WHERE kind = 'bounce'") == [
            (BEN,)
        ]
        # d5: one answer for the mail delivered twice; d6: the second address unsubscribes;
        # Ada: the 2035 reply +10, the duplicated reply +10 once, the unsubscribe -30
        assert q(stores, "outreach", "SELECT count(*) FROM inbound WHERE contact_id = 1") == [(3,)]
        assert ("unsubscribed",) in q(
            stores, "outreach", "SELECT kind FROM send_holds WHERE contact_id = 1"
        )
        assert q(stores, "crm", "SELECT warmth FROM contacts WHERE id = 1") == [(30,)]
        for text in q(stores, "outreach", "SELECT subject || body || from_address FROM inbound"):
            assert text[0].encode("utf-8") and not set(text[0]) & {"\x00", "\x1b", "\ud800"}
            assert "alert(1)" not in text[0]
        # nothing is met again: the next run reads no mail
        _, again = triage_run(instance, resources)
        assert again["read"] == 0 and again["items_refused"] == 0


def test_the_refused_nothing_check_passes_on_a_clean_run(tmp_path):
    stores, box, resources = hostile_setup(tmp_path)
    deliver(box, "d3_unsubscribe_today.eml")
    with dg.instance_for_test() as instance:
        result, first = triage_run(instance, resources)
    (check,) = result.get_asset_check_evaluations()
    assert check.passed and first["items_refused"] == 0 and first["matched"] == {"unsubscribe": 1}
