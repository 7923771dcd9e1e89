import threading
import time
from datetime import UTC, datetime

import pytest

from company_ai.core.crm import Contact
from company_ai.core.outreach import page_text, read_page
from company_ai.core.outreach.drafting import (
    BumpLimitError,
    Thread,
    already_contacted,
    compose,
    judge_draft,
    next_thread,
    offline_draft,
    source_material,
    text_problem,
)
from company_ai.core.outreach.research import (
    SourceError,
    apply_writeback,
    pick_for_day,
    select_candidates,
)
from company_ai.core.store import DRAFT_CAP, RESEARCH_CAP, Stores, transaction
from company_ai.core.times import Day

NOW = "2026-11-20T09:00:00Z"
AT = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def stores(tmp_path):
    stores = Stores(tmp_path / "data")
    with stores.connect("crm") as crm, transaction(crm):
        crm.executemany(
            "INSERT INTO contacts (id, email, name, company, title, city, warmth, source,"
            " created_at, updated_at) VALUES ($1, $2, $3, 'Acme Ltd', 'CTO', 'Leeds', $4,"
            " 'sample', $5, $6)",
            [
                (i, None if i == 1 else f"p{i}@acme.example", f"Person {i}", 100 - i, NOW, NOW)
                for i in range(1, 41)
            ],
        )
    return stores


def add_message(stores, contact_id, sent_at, *, thread=None, bounce="none", replied=None, bump=0):
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at, replied_at,"
            " bounce_status, bump_count) VALUES ($1, $2, 'Hello', 'Body', $3, $4, $5, $6)",
            (contact_id, thread or f"t-{contact_id}", sent_at, replied, bounce, bump),
        )


def chosen(stores, day="2026-11-20"):
    with stores.connect("crm") as crm, stores.connect("outreach") as outreach:
        return [c.contact_id for c in select_candidates(crm, outreach, Day.of(day, "UTC"))]


def test_the_selection_rule_excludes_whom_it_must_and_prefers_warmth(stores):
    add_message(stores, 2, "2025-01-01T09:00:00Z", bounce="hard")  # bounced, long ago
    add_message(stores, 3, "2026-11-15T09:00:00Z")  # written to 5 days ago
    add_message(stores, 4, "2026-10-01T09:00:00Z", replied="2026-10-02T09:00:00Z")
    add_message(stores, 5, "2026-10-01T09:00:00Z", bump=2)  # politely twice: done
    add_message(stores, 6, "2026-10-01T09:00:00Z", bump=1)  # may still get a last bump
    add_message(stores, 7, "2026-11-25T09:00:00Z")  # after the day: a backfill must see it
    picked = chosen(stores)
    assert len(picked) == RESEARCH_CAP
    # no email, bounced, recent, replied, bumped twice, written to by a later day
    assert not {1, 2, 3, 4, 5, 7} & set(picked)
    assert picked[:3] == [6, 8, 9]  # warmest first (warmth 100 - id)


def test_each_days_picks_are_stored_once_and_capped_even_when_days_are_caught_up(stores):
    with stores.connect("crm") as crm, stores.connect("outreach") as outreach:
        days = ["2026-11-18", "2026-11-19", "2026-11-20"]
        first = {
            d: [r["contact_id"] for r in pick_for_day(crm, outreach, Day.of(d, "UTC"), AT)]
            for d in days
        }
        again = {
            d: [r["contact_id"] for r in pick_for_day(crm, outreach, Day.of(d, "UTC"), AT)]
            for d in days
        }
        assert first == again
        assert all(len(p) <= RESEARCH_CAP for p in first.values())
        # 39 contacts with email: 20 on the first day, 19 on the next, none left after.
        assert [len(first[d]) for d in days] == [20, 19, 0]
        assert not set(first[days[0]]) & set(first[days[1]])
        per_day = outreach.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM research_picks GROUP BY day) AS per_day"
        ).fetchone()[0]
        assert per_day <= RESEARCH_CAP


@pytest.mark.parametrize(
    "proposal",
    [{"email": "evil@x.example"}, {"warmth": "100"}, {"id": "999"}, {"favourite_colour": "red"}],
)
def test_writeback_outside_the_whitelist_changes_nothing(stores, proposal):
    with stores.connect("crm") as crm:
        before = [tuple(r) for r in crm.execute("SELECT * FROM contacts ORDER BY id")]
        result = apply_writeback(crm, 5, proposal, AT)
        after = [tuple(r) for r in crm.execute("SELECT * FROM contacts ORDER BY id")]
    assert after == before
    assert result.applied == {} and set(result.rejected) == set(proposal)


def test_writeback_inside_the_whitelist_is_applied_and_the_rest_refused(stores):
    with stores.connect("crm") as crm:
        result = apply_writeback(crm, 5, {"city": "York", "title": "CEO", "email": "x@y.z"}, AT)
        row = crm.execute("SELECT city, title, email FROM contacts WHERE id = 5").fetchone()
    assert tuple(row) == ("York", "CEO", "p5@acme.example")
    assert result.applied == {"city": "York", "title": "CEO"}
    assert result.rejected == {"email": "x@y.z"}


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        (b"<p>" + b"x" * 300_000 + b"</p>", "over the"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"\xff\xfe<p>hi</p>", "not UTF-8"),
        (b"<html><script>var a = 1;</script></html>", "no readable text"),
    ],
)
def test_huge_binary_or_empty_pages_are_refused(raw, complaint):
    with pytest.raises(SourceError, match=complaint):
        page_text(raw, "acme.example.html")


def test_a_missing_or_odd_page_is_refused(tmp_path):
    with pytest.raises(SourceError, match="no company page"):
        read_page(tmp_path, "acme.example")
    with pytest.raises(SourceError, match="not a company domain"):
        read_page(tmp_path, "../etc/passwd")


def test_a_third_bump_cannot_be_drafted_or_stored(stores):
    add_message(stores, 6, "2026-10-01T09:00:00Z", thread="t-6", bump=0)
    with stores.connect("outreach") as outreach:
        assert next_thread(outreach, 6, "2026-11-20").bump == 1
    add_message(stores, 6, "2026-10-20T09:00:00Z", thread="t-6", bump=1)
    add_message(stores, 6, "2026-11-01T09:00:00Z", thread="t-6", bump=2)
    with stores.connect("outreach") as outreach:
        with pytest.raises(BumpLimitError, match="no third bump"):
            next_thread(outreach, 6, "2026-11-20")
        with pytest.raises(outreach.IntegrityError, match="(?i)check"):
            outreach.execute(
                "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at,"
                " bump_count) VALUES (6, 't-6', 's', 'b', $1, 3)",
                (NOW,),
            )


def test_a_past_day_drafting_sees_the_thread_a_later_day_started(stores):
    add_message(stores, 6, "2026-11-25T09:00:00Z", thread="t-6-later")
    with stores.connect("outreach") as outreach:
        thread = next_thread(outreach, 6, "2026-11-20")
    assert (thread.thread_id, thread.bump) == ("t-6-later", 1)


def test_a_thread_bump_goes_out_once_and_nobody_is_written_to_twice_in_the_quiet_period(stores):
    add_message(stores, 6, "2026-11-25T09:00:00Z", thread="t-6", bump=0)
    draft = {"contact_id": 6, "thread_id": "t-6", "bump": 0}
    with stores.connect("outreach") as outreach:
        assert "already sent 2026-11-25T09:00:00Z" in already_contacted(
            outreach, draft, "2026-11-01T00:00:00Z"
        )
        follow_up = draft | {"bump": 1}
        assert "inside the quiet period" in already_contacted(
            outreach, follow_up, "2026-11-20T00:00:00Z"
        )
        assert already_contacted(outreach, follow_up, "2026-11-26T00:00:00Z") is None
        assert already_contacted(outreach, draft | {"contact_id": 8, "thread_id": "t-8"},
                                 "2026-11-01T00:00:00Z") is None  # fmt: skip
        with pytest.raises(outreach.IntegrityError, match="(?i)unique"):
            outreach.execute(
                "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at,"
                " bump_count) VALUES (6, 't-6', 's', 'b', $1, 0)",
                (NOW,),
            )


@pytest.mark.parametrize(
    ("subject", "body", "complaint"),
    [
        ("Hello\r\nBcc: all@example.com", "Hi", "header injection"),
        ("Hello\nthere", "Hi", "header injection"),
        ("<b>Hello</b>", "Hi", "HTML"),
        ("Hello", "<p>Hi</p>", "HTML"),
        ("Hello", "Hi &nbsp; there", "HTML"),
        ("", "Hi", "empty"),
    ],
)
def test_html_and_header_injection_are_refused(subject, body, complaint):
    assert complaint in text_problem(subject, body)
    draft = {"subject": subject, "body": body, "rfc_message_id": "<1@x>", "thread_id": "t"}
    with pytest.raises(ValueError, match=complaint):
        compose(draft, to="a@b.example", sender="Sam", sender_email="sam@x.example", now=AT)


def test_a_clean_draft_composes_to_rfc_5322():
    draft = {
        "subject": "Über uns",
        "body": "Hi Ada,\n\nHello.\n",
        "rfc_message_id": "<1@x>",
        "thread_id": "t-1",
    }
    message = compose(
        draft, to="Ada <ada@b.example>", sender="Sam", sender_email="sam@x.example", now=AT
    )
    assert message["Message-ID"] == "<1@x>" and message["Subject"] == "Über uns"
    assert b"Subject: =?utf-8?" in message.as_bytes()


def test_the_daily_caps_hold_in_the_store_itself(stores):
    with stores.connect("outreach") as outreach:
        for n in range(RESEARCH_CAP):
            outreach.execute(
                "INSERT INTO research_picks (day, contact_id, rank, created_at, updated_at)"
                " VALUES ('2026-11-20', $1, $2, $3, $4)",
                (n + 1, n + 1, NOW, NOW),
            )
        with pytest.raises(outreach.IntegrityError, match=f"at most {RESEARCH_CAP} contacts a day"):
            outreach.execute(
                "INSERT INTO research_picks (day, contact_id, rank, created_at, updated_at)"
                " VALUES ('2026-11-20', 99, 99, $1, $2)",
                (NOW, NOW),
            )
        row = (
            "INSERT INTO drafts (day, contact_id, thread_id, bump, subject, body, angle, dossier,"
            " sources, model, verdict, status, created_at, updated_at) VALUES"
            " ('2026-11-20', $1, 't', 0, 's', 'b', 'a', 'd', '[]', 'm', 'pass', 'ready', $2, $3)"
        )
        for n in range(DRAFT_CAP):
            outreach.execute(row, (n + 1, NOW, NOW))
        with pytest.raises(outreach.IntegrityError, match=f"at most {DRAFT_CAP} drafts a day"):
            outreach.execute(row, (99, NOW, NOW))


def test_the_offline_drafter_writes_to_a_contact_without_a_company():
    contact = Contact(id=3, name="Ada Lovelace", email="ada@b.example", company=None, title=None,
                      city=None)  # fmt: skip
    draft = offline_draft(contact, ["Acme grew 20%."], Thread("t-3", 0), "Sam Rivers")
    assert draft.body.startswith("Hi Ada,") and "None" not in draft.body
    assert "I hope things are going well." in draft.body


def test_a_draft_greets_its_own_contact_and_a_greeting_to_anyone_else_is_held():
    dana = Contact(7, "Dana Reyes", "dana@acme.example", "Acme Ltd", "CTO", "Leeds")
    material = source_material(dana, "2026-11-02 call: asked about onboarding.", [])
    body = "\n\nHappy to help with onboarding at Acme.\n\nBest,\nSam Rivers"
    for greeting in ("Hi Dana,", "Dear Ms. Reyes,", "Bonjour Dana,", "Hello Dana Reyes —"):
        assert judge_draft("Onboarding", greeting + body, material, ["Sam Rivers"]).passed
    # The material says who the reader is: a greeting to someone else is a claim.
    wrong = judge_draft("Onboarding", "Hello Maja Thompson," + body, material, ["Sam Rivers"])
    assert [(part, c.text) for part, c in wrong.claims] == [("body", "Maja Thompson")]


CAPPED = {
    "research": (
        RESEARCH_CAP,
        "INSERT INTO research_picks (day, contact_id, rank, created_at, updated_at)"
        " VALUES ('2026-11-20', $1, 1, $2, $3)",
        "research_picks",
        f"at most {RESEARCH_CAP} contacts a day",
    ),
    "drafts": (
        DRAFT_CAP,
        "INSERT INTO drafts (day, contact_id, thread_id, bump, subject, body, angle, dossier,"
        " sources, model, verdict, status, created_at, updated_at) VALUES"
        " ('2026-11-20', $1, 't', 0, 's', 'b', 'a', 'd', '[]', 'm', 'pass', 'ready', $2, $3)",
        "drafts",
        f"at most {DRAFT_CAP} drafts a day",
    ),
}


@pytest.mark.parametrize("kind", sorted(CAPPED))
def test_writers_racing_past_a_daily_cap_store_exactly_the_cap(stores, kind):
    # Writers on connections of their own fill the same day at once, each row in its own
    # transaction that stays open a moment after its insert: counting without a lock on
    # the day, two would both see room for one more (on PostgreSQL: read committed).
    cap, insert, table, refusal = CAPPED[kind]
    writers, each = 4, cap  # four times the cap is attempted
    with stores.connect("outreach"):
        pass  # made and migrated once, before the race
    start = threading.Barrier(writers, timeout=60)  # a writer that fails cannot hang it
    opening = threading.Lock()
    refused: list[str] = []
    failures: list[BaseException] = []

    def write(n: int) -> None:
        with opening:  # opening is not the race (its write probe is not thread-safe)
            conn = stores.open("outreach")
        try:
            start.wait()
            for i in range(each):
                try:
                    with transaction(conn):
                        conn.execute(insert, (1000 * n + i, NOW, NOW))
                        time.sleep(0.002)
                except conn.IntegrityError as exc:
                    refused.append(str(exc))
        except BaseException as exc:
            failures.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with stores.connect("outreach") as outreach:
        (stored,) = outreach.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert stored == cap
    assert len(refused) == writers * each - cap
    assert all(refusal in message for message in refused)


def test_writers_racing_to_send_one_thread_bump_store_it_once(stores):
    # The send-once refusal under concurrency: the unique (thread, bump) lets one through.
    writers = 4
    with stores.connect("outreach"):
        pass
    start = threading.Barrier(writers, timeout=60)
    opening = threading.Lock()
    outcomes: list[str] = []

    def send(n: int) -> None:
        with opening:  # opening is not the race (its write probe is not thread-safe)
            conn = stores.open("outreach")
        try:
            start.wait()
            with transaction(conn):
                conn.execute(
                    "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at,"
                    " bump_count) VALUES (6, 't-6', 's', $1, $2, 1)",
                    (f"writer {n}", NOW),
                )
                time.sleep(0.01)
            outcomes.append("sent")
        except conn.IntegrityError:
            outcomes.append("refused")
        finally:
            conn.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * (writers - 1) + ["sent"]
    with stores.connect("outreach") as outreach:
        rows = outreach.execute("SELECT count(*) FROM messages WHERE thread_id = 't-6'")
        assert rows.fetchone()[0] == 1
