"""The inbox assets' wiring: resources, the cursor, metadata, and the capture's refusal."""

import json
import mailbox
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.db import Stores, transaction
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.inbox import InboxSource
from company_ai.resources.stores import StoresResource
from tests.core.test_inbox import ADA, RFC_2, mail
from tests.setup import named

inbox_replies, engagement_signals = named("inbox_replies", "engagement_signals")
DAY = "2026-11-29"
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
            " VALUES (1, ?, 'Ada Okafor', 40, 'sample', ?, ?)",
            (ADA, "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z"),
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES (2, 1, 't-1', 'Hi', 'Body', '2026-11-20T09:00:00Z', ?)",
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
        assert inbox["cursor_moved"] and inbox["warmth_changes"] == 1
        cursor = json.loads((tmp_path / "inbox" / "c.json").read_text())
        assert cursor["after"] == int(datetime(2026, 11, 29, 15, 0, tzinfo=UTC).timestamp())
        engagement = meta(first, "engagement_signals")
        assert engagement["processed"] == 1 and list(engagement["rejected"]) == ["b.json"]
        assert (tmp_path / "drop" / "rejected" / "b.json").is_file()

        again = dg.materialize(
            [inbox_replies], partition_key=DAY, instance=instance, resources=resources
        )
        assert meta(again, "inbox_replies")["already_triaged"] == 1
        assert meta(again, "inbox_replies")["warmth_changes"] == 0
        with Stores(data).connect("crm") as crm:
            assert crm.execute("SELECT warmth FROM contacts").fetchone()[0] == 50

        with pytest.raises(dg.Failure, match="inbox_replies is a capture"):
            dg.materialize(
                [inbox_replies], partition_key="2026-11-20", instance=instance, resources=resources
            )
