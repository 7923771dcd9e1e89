"""The outreach day as plain core (core/outreach/day.py): research, draft, check and send one
day against the sample stores, with a fake model and mailer. No Dagster: the wiring is
tested in tests/assets/test_outreach.py."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest.mock import ANY

import pytest

from company_ai.core.llm import ModelError
from company_ai.core.outreach import day as day_of
from company_ai.core.outreach import drafting, read_page
from company_ai.core.outreach.drafting import Draft
from company_ai.core.outreach.research import Fact, Findings, pick_for_day
from company_ai.core.store import DRAFT_CAP, RESEARCH_CAP, Stores, transaction
from company_ai.core.times import Day
from tests.fakes import Crash, FakeMailer, FakeModel

DAY = "2026-11-27"  # a Friday
FRIDAY_MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


def clock() -> datetime:
    return FRIDAY_MORNING


@dataclass
class Pages:
    """The sample's company pages, read as the ResearchSource resource reads them."""

    folder: Path

    def page(self, domain: str) -> str:
        return read_page(self.folder, domain)


def research(data, model=None, **kw):
    return day_of.research_day(
        Stores(data),
        Day.of(DAY, "UTC"),
        model=model or FakeModel(),
        pages=Pages(data / "company_pages"),
        clock=clock,
        **kw,
    )


def draft(data, model=None, mailer=None):
    return day_of.draft_day(
        Stores(data), DAY, model=model or FakeModel(), sender=mailer or FakeMailer(), clock=clock
    )


def check(data, mailer=None):
    return day_of.check_day(Stores(data), DAY, sender=mailer or FakeMailer())


def send(data, mailer):
    return day_of.send_day(Stores(data), DAY, tz="UTC", mailer=mailer, clock=clock)


def rows(data, domain, sql, *args):
    with Stores(data).connect(domain, readonly=True) as conn:
        return [dict(r) for r in conn.execute(sql, args)]


def research_episodes(data):
    """The episodes research wrote for DAY (the sample has its own episodes that day)."""
    return rows(
        data,
        "memory",
        "SELECT * FROM contact_episodes WHERE natural_key LIKE 'research:' || $1 || ':%'"
        " OR natural_key LIKE 'company:' || $2 || ':%'",
        DAY,
        DAY,
    )


def sent_messages(data):
    return rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL ORDER BY id")


def drafts(data, status=None):
    sql = "SELECT * FROM drafts WHERE day = $1" + (" AND status = $2" if status else "")
    return rows(data, "outreach", sql + " ORDER BY id", DAY, *([status] if status else []))


def update(data, domain, sql, *args):
    with Stores(data).connect(domain) as conn, transaction(conn):
        conn.execute(sql, args)


def test_a_day_is_researched_drafted_checked_and_sent_within_its_caps(data):
    found = research(data)
    assert found.picked == RESEARCH_CAP and found.researched > 0
    episodes = research_episodes(data)
    assert len(episodes) == found.episodes_written > 0
    assert {e["episode_type"] for e in episodes} == {"research", "company"}
    assert all(e["source"].startswith("web:") and e["confidence"] < 1 for e in episodes)
    assert all(e["natural_key"].startswith(f"{e['episode_type']}:{DAY}:") for e in episodes)
    assert {e["created_at"] for e in episodes} == {"2026-11-27T09:00:00Z"}  # when recorded

    written = draft(data)
    stored = drafts(data)
    assert len(stored) == DRAFT_CAP == written.drafted
    for d in stored:
        assert d["dossier"] in json.loads(d["sources"])[1]
        assert (d["verdict"] == "fail") == (d["status"] == "quarantined")
        assert (json.loads(d["unsupported"]) != []) == (d["verdict"] == "fail")
    quarantined = drafts(data, "quarantined")
    assert quarantined, "the offline drafter's unsourced statistics are caught"
    assert written.stored["quarantined"] == len(quarantined)

    checked = check(data)
    assert checked.checked == DRAFT_CAP and checked.rejudged == 0 and checked.leaking == []
    assert len(checked.quarantined) == len(quarantined)
    assert f"| {quarantined[0]['id']} |" in checked.table()

    mailer = FakeMailer()
    done = send(data, mailer)
    messages = sent_messages(data)
    assert len(messages) == done.sent == written.stored["ready"] == len(mailer.sent) > 0
    assert done.sent_in_total == done.sent and done.skipped == {}
    assert {m["draft_id"] for m in messages} == {d["id"] for d in drafts(data, "sent")}
    assert all(d["message_id"] is None for d in drafts(data, "quarantined"))
    # Each message's episode, dated when it was sent, never back-dated into the day.
    sent_at = {f"outreach:message:{m['id']}": m["sent_at"] for m in messages}
    stored_episodes = rows(
        data, "memory", "SELECT natural_key, created_at FROM contact_episodes"
        " WHERE natural_key LIKE 'outreach:message:%'"
    )  # fmt: skip
    assert {e["natural_key"]: e["created_at"] for e in stored_episodes}.items() >= sent_at.items()
    assert done.episodes_written == len(messages)

    # Again, the same day: nothing new is researched, drafted or sent.
    assert research(data).episodes_written == 0
    assert draft(data).drafted == 0
    again = send(data, mailer)
    assert again.sent == 0 and again.sent_in_total == len(messages)
    assert sent_messages(data) == messages and len(mailer.sent) == len(messages)


def test_the_gate_judges_each_draft_once(data, monkeypatch):
    judged = []
    judge = drafting.judge
    monkeypatch.setattr(drafting, "judge", lambda *a, **k: judged.append(a) or judge(*a, **k))
    research(data)
    draft(data)
    assert len(judged) == DRAFT_CAP
    check(data)
    mailer = FakeMailer()
    assert send(data, mailer).sent > 0
    assert len(judged) == DRAFT_CAP  # the check and the send read the stored verdict


@pytest.mark.parametrize("tamper", ["body", "verdict"])
def test_an_edited_draft_or_verdict_is_judged_again_caught_and_never_sent(data, tamper):
    research(data)
    draft(data)
    if tamper == "body":  # a ready draft now says something its material does not
        [target] = drafts(data, "ready")[:1]
        update(
            data,
            "outreach",
            "UPDATE drafts SET body = replace(body, '\n\nBest,',"
            " ' We saved Globex 70% last year.\n\nBest,') WHERE id = $1",
            target["id"],
        )
    else:  # a quarantined draft's verdict rewritten to pass, its status to ready
        [target] = drafts(data, "quarantined")[:1]
        update(
            data,
            "outreach",
            "UPDATE drafts SET status = 'ready', verdict = 'pass', unsupported = '[]'"
            " WHERE id = $1",
            target["id"],
        )
    checked = check(data)
    assert checked.rejudged == 1
    [leaking] = checked.leaking
    assert leaking.startswith(f"| {target['id']} |")
    assert "Globex" in leaking or tamper == "verdict"

    # Were the sends run without the check (a re-executed step), they still refuse it.
    mailer = FakeMailer()
    done = send(data, mailer)
    assert done.skipped == {str(target["id"]): "the fabrication gate does not pass this draft"}
    assert target["id"] not in {m["draft_id"] for m in sent_messages(data)}
    assert done.sent == len(mailer.sent) > 0


def test_a_draft_stored_before_verdicts_had_fingerprints_is_judged_again(data):
    research(data)
    draft(data)
    update(data, "outreach", "UPDATE drafts SET judged = NULL")
    checked = check(data)
    assert checked.rejudged == DRAFT_CAP and checked.leaking == []
    assert len(checked.quarantined) == len(drafts(data, "quarantined"))


def test_a_crash_after_a_send_or_before_its_episodes_never_sends_twice(data, monkeypatch):
    research(data)
    draft(data)
    ready = drafts(data, "ready")
    assert len(ready) >= 3
    # The second mail leaves, and the process dies before the ledger records it.
    mailer = FakeMailer(crash_on=2)
    with pytest.raises(Crash):
        send(data, mailer)
    assert [d["status"] for d in drafts(data, "sending")] == ["sending"]
    assert len(mailer.sent) == 2 and len(sent_messages(data)) == 1
    # The next run resumes that send without sending it, sends the rest, and then dies
    # before the day's episodes are appended.
    mailer.crash_on = None

    def die(*args, **kwargs):
        raise Crash("died before the episodes")

    with monkeypatch.context() as patch:
        patch.setattr(day_of, "append_episodes", die)
        with pytest.raises(Crash):
            send(data, mailer)
    assert len(sent_messages(data)) == len(ready) == len(mailer.sent)
    # The run after that only appends the missing episodes.
    done = send(data, mailer)
    assert (done.sent, done.resumed_after_crash) == (0, 0)
    assert done.episodes_written == len(ready) == done.sent_in_total
    assert len(mailer.sent) == len(ready)


def test_a_resumed_send_asks_the_mailer_first(data):
    research(data)
    draft(data)
    mailer = FakeMailer(crash_on=1)
    with pytest.raises(Crash):
        send(data, mailer)
    [sending] = drafts(data, "sending")
    done = send(data, FakeMailer(sent=dict(mailer.sent)))
    assert done.resumed_after_crash == 1
    assert sending["id"] in {m["draft_id"] for m in sent_messages(data)}
    # A mailer that never got it (the crash came before it left) is sent it now, once.
    update(data, "outreach", "DELETE FROM messages WHERE draft_id = $1", sending["id"])
    update(data, "outreach", "UPDATE drafts SET status = 'sending' WHERE id = $1", sending["id"])
    fresh = FakeMailer()
    again = send(data, fresh)
    assert (again.resumed_after_crash, again.sent) == (0, 1)
    assert list(fresh.sent) == [sending["rfc_message_id"]]


def test_nobody_lost_bounced_or_written_to_since_the_draft_is_sent_to(data):
    research(data)
    draft(data)
    ready = drafts(data, "ready")
    gone, bounced, written, deleted = (d["contact_id"] for d in ready[:4])
    update(data, "crm", "UPDATE contacts SET email = NULL WHERE id = $1", gone)
    update(data, "crm", "DELETE FROM contacts WHERE id = $1", deleted)
    update(
        data,
        "outreach",
        "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at, bounce_status)"
        " VALUES ($1, 'old', 's', 'b', '2025-01-01T00:00:00Z', 'hard')",
        bounced,
    )
    update(  # a later run of another day wrote to them after this draft was made
        data,
        "outreach",
        "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at)"
        " VALUES ($1, 'other-day', 's', 'b', '2026-11-26T09:00:00Z')",
        written,
    )
    mailer = FakeMailer()
    done = send(data, mailer)
    skipped = done.skipped
    assert "no email address" in skipped[str(ready[0]["id"])]
    assert "hard-bounced" in skipped[str(ready[1]["id"])]
    assert "inside the quiet period" in skipped[str(ready[2]["id"])]
    assert "no longer in the CRM" in skipped[str(ready[3]["id"])]
    after = {d["id"]: d for d in drafts(data)}
    assert all(after[d["id"]]["status"] == "skipped" for d in ready[:4])
    assert all(after[d["id"]]["message_id"] is None for d in ready[:4])
    assert done.sent == len(mailer.sent) == len(ready) - 4


def test_who_answered_since_the_draft_is_not_sent_to(data):
    """Holds the inbox triage set after drafting (core/outreach/send_rules.py) stop the send."""
    research(data)
    draft(data)
    ready = drafts(data, "ready")
    unsubscribed, away, back, bounced = (d["contact_id"] for d in ready[:4])
    holds = [
        (unsubscribed, "unsubscribed", "2026-11-26T10:00:00Z", None, None),
        (away, "out_of_office", "2026-11-26T10:00:00Z", "2026-12-01T00:00:00Z", None),
        (back, "out_of_office", "2026-11-20T10:00:00Z", "2026-11-25T00:00:00Z", None),
    ]
    with Stores(data).connect("outreach") as outreach, transaction(outreach):
        outreach.executemany(
            "INSERT INTO send_holds (contact_id, kind, since, until, address, reason, evidence)"
            " VALUES ($1, $2, $3, $4, $5, 'test', 'test')",
            holds,
        )
    with Stores(data).connect("crm") as crm:  # a bounce recorded for the address itself
        address = crm.execute("SELECT email FROM contacts WHERE id = $1", (bounced,)).fetchone()[0]
    update(
        data,
        "outreach",
        "INSERT INTO send_holds (contact_id, kind, since, address, reason, evidence)"
        " VALUES (999999, 'bounced', '2026-11-26T10:00:00Z', $1, 'test', 'test')",
        address,
    )
    done = send(data, FakeMailer())
    assert "unsubscribed at 2026-11-26" in done.skipped[str(ready[0]["id"])]
    assert "out_of_office until 2026-12-01" in done.skipped[str(ready[1]["id"])]
    assert str(ready[2]["id"]) not in done.skipped, "back from holiday: the hold has ended"
    assert f"mail to {address} bounced" in done.skipped[str(ready[3]["id"])]


def test_a_follow_up_names_the_thread_it_follows(data):
    """A bump carries In-Reply-To (the last message) and References (all), and the sent
    message's own Message-ID is stored, so a reply to it is matched."""
    research(data)
    draft(data)
    first = drafts(data, "ready")[0]
    thread = f"t-{first['contact_id']}-old"
    with Stores(data).connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at, bump_count,"
            " rfc_message_id) VALUES ($1, $2, 's', 'b', '2026-10-01T09:00:00Z', 0, '<old.0@x>')",
            (first["contact_id"], thread),
        )
        outreach.execute(
            "UPDATE drafts SET thread_id = $1, bump = 1 WHERE id = $2", (thread, first["id"])
        )
    mailer = FakeMailer()
    send(data, mailer)
    [stored] = rows(data, "outreach", "SELECT * FROM messages WHERE draft_id = $1", first["id"])
    message = mailer.sent[stored["rfc_message_id"]]
    assert message["In-Reply-To"] == "<old.0@x>" and message["References"] == "<old.0@x>"
    others = [m for m in mailer.sent.values() if m is not message]
    assert others and all(m["In-Reply-To"] is None for m in others), "first messages name none"


def test_who_lost_their_address_or_was_bumped_twice_since_the_pick_is_not_drafted(data):
    research(data)
    first, second, third = (
        r["contact_id"]
        for r in rows(
            data, "outreach", "SELECT contact_id FROM research_picks WHERE day = $1 AND"
            " status = 'done' ORDER BY rank LIMIT 3", DAY
        )
    )  # fmt: skip
    update(data, "crm", "UPDATE contacts SET email = NULL WHERE id = $1", second)
    update(data, "crm", "DELETE FROM contacts WHERE id = $1", third)
    for bump, sent in enumerate(("2026-10-01", "2026-10-10", "2026-10-20")):
        update(
            data,
            "outreach",
            "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at, bump_count)"
            " VALUES ($1, 'late', 's', 'b', $2, $3)",
            first,
            f"{sent}T09:00:00Z",
            bump,
        )
    written = draft(data)
    assert "no third bump" in written.not_drafted[str(first)]
    assert "no email address" in written.not_drafted[str(second)]
    assert "no longer in the CRM" in written.not_drafted[str(third)]
    assert not {first, second, third} & {d["contact_id"] for d in drafts(data)}
    assert written.drafted == DRAFT_CAP  # the next picks take their places


def test_a_pick_gone_from_the_crm_or_left_without_an_address_is_skipped(data):
    stores = Stores(data)
    with stores.connect("crm") as crm, stores.connect("outreach") as outreach:
        first, second = (
            p["contact_id"] for p in pick_for_day(crm, outreach, Day.of(DAY, "UTC"), clock())[:2]
        )
    update(data, "crm", "DELETE FROM contacts WHERE id = $1", first)
    update(data, "crm", "UPDATE contacts SET email = NULL WHERE id = $1", second)
    found = research(data)
    assert found.skip_reasons == {
        str(first): "the contact is no longer in the CRM",
        str(second): "the contact has no email address",
    }
    assert found.researched == RESEARCH_CAP - 2


def test_a_huge_or_binary_company_page_skips_that_contact_with_a_reason(data):
    pages = sorted((data / "company_pages").glob("*.html"))
    for page in pages[: len(pages) // 2]:
        page.write_bytes(b"\x00\x01binary" if len(page.name) % 2 else b"x" * 400_000)
    found = research(data)
    assert found.skipped > 0 and found.researched > 0
    assert any("binary" in r or "byte limit" in r for r in found.skip_reasons.values())
    skipped = rows(
        data, "outreach", "SELECT * FROM research_picks WHERE day = $1 AND status = 'skipped'", DAY
    )
    assert len(skipped) == found.skipped and all(s["reason"] for s in skipped)
    assert {str(s["contact_id"]) for s in skipped} == set(found.skip_reasons)
    episodes = research_episodes(data)
    assert not {s["contact_id"] for s in skipped} & {e["contact_id"] for e in episodes}


@pytest.mark.parametrize(
    ("answer", "complaint"),
    [
        (ModelError("qwen3:8b failed 3 times; last: invalid output"), "invalid output"),
        (Findings(facts=[Fact(text="   ", about="company")]), "must not be empty"),
    ],
)
def test_a_failed_model_or_an_invalid_fact_writes_nothing(data, answer, complaint):
    crm_before = rows(data, "crm", "SELECT * FROM contacts ORDER BY id")
    warnings = []
    found = research(data, FakeModel({"Findings": answer}), warn=warnings.append)
    assert found.researched == 0 and found.skipped == RESEARCH_CAP
    assert all(complaint in r for r in found.skip_reasons.values())
    assert len(warnings) == RESEARCH_CAP and complaint in warnings[0]
    assert research_episodes(data) == []
    assert rows(data, "crm", "SELECT * FROM contacts ORDER BY id") == crm_before
    assert draft(data).drafted == 0  # nothing researched, nothing to draft


def test_the_model_may_correct_only_city_title_and_company(data):
    crm_before = {r["id"]: r for r in rows(data, "crm", "SELECT * FROM contacts")}
    findings = {
        "facts": [
            {"text": "The company is said to be doubling its sales team.", "about": "company"}
        ],
        "corrections": {
            "city": "York",
            "email": "attacker@evil.example",
            "warmth": "100",
            "id": "1",
            "shoe_size": "44",
        },
    }
    found = research(data, FakeModel({"Findings": findings}))
    n = found.researched
    assert n == RESEARCH_CAP
    assert found.writeback_applied == {"city": n}
    assert found.writeback_rejected == dict.fromkeys(["email", "id", "shoe_size", "warmth"], n)
    after = {r["id"]: r for r in rows(data, "crm", "SELECT * FROM contacts")}
    assert after.keys() == crm_before.keys()
    changed = {cid for cid in after if after[cid] != crm_before[cid]}
    assert len(changed) == n
    for cid in changed:
        for column in ("email", "warmth", "id", "name", "company", "title"):
            assert after[cid][column] == crm_before[cid][column]
        assert after[cid]["city"] == "York"
    [episode] = research_episodes(data)[:1]
    assert episode["source"] == "model:fake" and episode["confidence"] < 1


@pytest.mark.parametrize(
    ("answer", "status", "why"),
    [
        (
            Draft(
                subject="Quick idea",
                body="Hi,\n\nGlobex cut costs 300% with us in 2019.\n\nBest,\nSam Rivers",
                angle="costs",
            ),
            "quarantined",
            None,
        ),
        (
            Draft(subject="Hi\r\nBcc: everyone@example.com", body="Hello.", angle="x"),
            "skipped",
            "header injection",
        ),
        (Draft(subject="<b>Hello</b>", body="Hello.", angle="x"), "skipped", "HTML"),
    ],
)
def test_drafts_that_invent_facts_or_carry_html_are_never_sent(data, answer, status, why):
    research(data)
    draft(data, FakeModel({"Draft": answer}))
    stored = drafts(data)
    assert stored and all(d["status"] == status for d in stored)
    if why:
        assert all(why in d["reason"] for d in stored)
    else:
        claims = json.loads(stored[0]["unsupported"])
        assert {c["text"] for c in claims} >= {"Globex", "300%"}
        assert {c["field"] for c in claims} == {"body"}  # the sender's own name is no claim
    assert check(data).leaking == []
    mailer = FakeMailer()
    assert send(data, mailer).sent == 0
    assert sent_messages(data) == [] and mailer.sent == {}


def test_the_senders_own_name_is_no_claim_until_the_sender_changes(data):
    research(data)
    signed = Draft(subject="Hello", body="Hi,\n\nSam Rivers here, with a short note.\n", angle="x")
    draft(data, FakeModel({"Draft": signed}), FakeMailer(sender_name="Sam Rivers"))
    assert {d["status"] for d in drafts(data)} == {"ready"}
    assert check(data, FakeMailer(sender_name="Sam Rivers")).leaking == []
    # Sent under another name, the drafts are judged again: "Sam Rivers" is now a claim.
    renamed = FakeMailer(sender_name="Alex Moore")
    done = send(data, renamed)
    assert done.sent == 0 and renamed.sent == {}
    assert set(done.skipped.values()) == {"the fabrication gate does not pass this draft"}


@pytest.mark.parametrize("in_crm", [True, False])
def test_a_company_the_crm_knows_is_a_claim_even_in_lower_case(data, in_crm):
    research(data)
    if in_crm:  # a company none of the day's contacts works at, so in no draft's sources
        update(
            data,
            "crm",
            "INSERT INTO contacts (email, name, company, source, created_at, updated_at)"
            " VALUES ('ann@quillbrook.example', 'Ann Lee', 'Quillbrook Dynamics', 'test', $1, $2)",
            "2026-11-27T09:00:00Z",
            "2026-11-27T09:00:00Z",
        )
    slipped = Draft(
        subject="Hello", body="Hi,\n\nTeams like quillbrook dynamics use us daily.\n", angle="x"
    )
    draft(data, FakeModel({"Draft": slipped}))
    stored = drafts(data)
    if in_crm:
        assert stored and {d["status"] for d in stored} == {"quarantined"}
        claims = {c["text"].lower() for d in stored for c in json.loads(d["unsupported"])}
        assert any("quillbrook" in c for c in claims)
        assert check(data).leaking == [] and check(data).rejudged == 0
    else:  # the same words are no name to the gate when nobody knows them
        assert stored and {d["status"] for d in stored} == {"ready"}


def test_a_model_failure_leaves_that_contact_undrafted_with_its_reason(data):
    found = research(data)
    written = draft(data, FakeModel({"Draft": ModelError("timed out after 120 s")}))
    assert written.drafted == 0 and len(written.not_drafted) == found.researched > 0
    assert set(written.not_drafted.values()) == {"timed out after 120 s"}
    assert drafts(data) == []


# --- working hours: held sends -------------------------------------------------------------

MONDAY_TOKYO_0900 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)  # Friday 09:00 UTC is 18:00 there


def at(moment: datetime):
    return lambda: moment


def send_due(data, mailer, moment):
    return day_of.send_due(Stores(data), tz="UTC", mailer=mailer, clock=at(moment))


def move_to(data, draft_row, city):
    update(
        data, "crm", "UPDATE contacts SET city = $1 WHERE id = $2", city, draft_row["contact_id"]
    )


def test_a_contact_far_away_is_held_to_their_morning_and_sent_exactly_once(data):
    research(data)
    draft(data)
    far, *near = drafts(data, "ready")
    move_to(data, far, "Tokyo")
    mailer = FakeMailer()
    done = send(data, mailer)
    assert done.held == {str(far["id"]): "2026-11-30T00:00:00Z"}  # Monday 09:00 in Tokyo
    assert done.sent == len(near) == len(mailer.sent)
    assert drafts(data, "ready") == [dict(far, due_at="2026-11-30T00:00:00Z", updated_at=ANY)]
    # The morning job again (a re-execution), and the sensor before the due time: no send.
    assert send(data, mailer).sent == 0 and send(data, mailer).held == done.held
    sunday = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)
    assert day_of.due_drafts(Stores(data), sunday) == 0
    assert send_due(data, mailer, sunday).sent == 0
    # Two ticks after the due time: one send, then nothing.
    tick = MONDAY_TOKYO_0900 + timedelta(minutes=7)
    assert day_of.due_drafts(Stores(data), tick) == 1
    first = send_due(data, mailer, tick)
    second = send_due(data, mailer, tick + timedelta(minutes=15))
    assert (first.sent, second.sent, second.held, second.skipped) == (1, 0, {}, {})
    assert len(mailer.sent) == len(near) + 1 and day_of.due_drafts(Stores(data), tick) == 0
    [message] = [m for m in sent_messages(data) if m["draft_id"] == far["id"]]
    assert message["sent_at"] == "2026-11-30T00:07:00Z"
    assert first.episodes_written == 1  # its outreach episode, dated when it left
    assert rows(
        data, "memory", "SELECT created_at FROM contact_episodes WHERE natural_key = $1",
        f"outreach:message:{message['id']}",
    ) == [{"created_at": "2026-11-30T00:07:00Z"}]  # fmt: skip
    # The morning job re-executed after all that still sends nothing again.
    assert send(data, mailer).sent == 0 and len(mailer.sent) == len(near) + 1


def test_a_held_send_is_checked_again_when_due_and_a_crashed_one_never_goes_twice(data):
    research(data)
    draft(data)
    far, other, *_ = drafts(data, "ready")
    move_to(data, far, "San Francisco")  # Friday 01:00 there: held to 09:00, 17:00 UTC
    move_to(data, other, "Sydney")  # Friday 20:00 there: held to Monday 09:00
    send(data, FakeMailer())
    # Meanwhile the Sydney contact bounced: the held draft is skipped when due, not sent.
    update(
        data, "outreach", "INSERT INTO send_holds (contact_id, kind, since, until, address,"
        " reason, evidence) VALUES ($1, 'bounced', '2026-11-27T10:00:00Z', NULL, NULL, 'DSN',"
        " 'test')", other["contact_id"],
    )  # fmt: skip
    crashing = FakeMailer(crash_on=1)
    with pytest.raises(Crash):
        send_due(data, crashing, datetime(2026, 11, 27, 17, 1, tzinfo=UTC))
    again = send_due(
        data, FakeMailer(sent=dict(crashing.sent)), datetime(2026, 11, 27, 17, 16, tzinfo=UTC)
    )
    assert (again.sent, again.resumed_after_crash) == (0, 1)  # looked up, not resent
    monday = send_due(data, FakeMailer(), datetime(2026, 11, 29, 22, 5, tzinfo=UTC))
    assert monday.sent == 0 and "bounced" in monday.skipped[str(other["id"])]


def test_a_held_send_found_late_waits_for_the_next_morning_or_is_dropped_when_stale(data):
    research(data)
    draft(data)
    far, other, *_ = drafts(data, "ready")
    move_to(data, far, "Tokyo")
    move_to(data, other, "Tokyo")
    send(data, FakeMailer())
    # The machine was off on Monday morning: at Monday 10:00 UTC it is 19:00 in Tokyo.
    late = send_due(data, FakeMailer(), datetime(2026, 11, 30, 10, 0, tzinfo=UTC))
    assert late.sent == 0 and set(late.held.values()) == {"2026-12-01T00:00:00Z"}
    # ... and off for two days more: a held draft a day past its due time is not sent late.
    stale = send_due(data, FakeMailer(), datetime(2026, 12, 2, 1, 0, tzinfo=UTC))
    assert stale.sent == 0 and set(stale.skipped) == {str(far["id"]), str(other["id"])}
    assert all("not sent within a day" in why for why in stale.skipped.values())


def test_a_contact_with_no_known_city_keeps_the_owners_working_hours(data):
    research(data)
    draft(data)
    first, *_ = drafts(data, "ready")
    move_to(data, first, None)
    evening = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
    done = day_of.send_day(
        Stores(data), DAY, tz="Asia/Tokyo", mailer=FakeMailer(), clock=at(evening)
    )
    assert done.held[str(first["id"])] == "2026-11-30T00:00:00Z"  # the owner is in Tokyo


@pytest.mark.sqlite_only("it builds an old outreach.db file by hand")
def test_a_store_from_before_held_sends_has_none_due_and_is_not_migrated_by_asking(tmp_path):
    import sqlite3

    from company_ai.core.store.db import Connection as StoreConnection
    from company_ai.core.store.schema import MIGRATIONS

    path = tmp_path / "outreach.db"
    conn = sqlite3.connect(factory=StoreConnection, database=path)
    for version, statements in enumerate(MIGRATIONS["outreach"][:5], start=1):
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version={version}")
    conn.commit()
    conn.close()
    assert day_of.due_drafts(Stores(tmp_path), MONDAY_TOKYO_0900) == 0
    with sqlite3.connect(factory=StoreConnection, database=path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 5


def test_the_checks_table_names_the_contact_and_quotes_each_claim_in_its_sentence(data):
    research(data)
    draft(data)
    [target] = drafts(data, "ready")[:1]
    update(
        data,
        "outreach",
        "UPDATE drafts SET body = replace(body, '\n\nBest,',"
        " ' We | *saved* Globex 70% last year.\n\nBest,') WHERE id = $1",
        target["id"],
    )
    [contact] = rows(
        data, "crm", "SELECT name, email FROM contacts WHERE id = $1", target["contact_id"]
    )
    checked = check(data)
    table = checked.table()
    [leaking] = checked.leaking
    assert leaking.startswith(f"| {target['id']} | {contact['name']} \\<{contact['email']}\\> |")
    # The sentence, inert in the cell, with the claim in bold, and a reason a person reads.
    assert "| percent in the body | We \\| \\*saved\\* Globex **70%** last year. |" in leaking
    assert "| no source gives 70% of anything |" in leaking
    assert table.index(leaking) < table.index("| quarantined |")  # leaking drafts first
    # Bounded: at most so many rows, then how many more.
    rows_in_all = table.count("\n| ")  # a row a claim, below the head
    short = checked.table(limit=2)
    assert short.count("\n| ") == 2 and short.endswith(f"… and {rows_in_all - 2} more")
