"""The sample reads true: its history, replayed through the engine's rules, breaks none."""

import re
from collections import defaultdict
from datetime import timedelta
from email.message import EmailMessage

from company_ai.core.inbox.mail import classify, parse_mail
from company_ai.core.outreach import (
    MAX_BUMPS,
    RECENT_DAYS,
    RESEARCH_COOLDOWN_DAYS,
    contact_timezone,
)
from company_ai.core.outreach.research import select_candidates
from company_ai.core.outreach.send_rules import hold_reason, in_working_hours, read_holds
from company_ai.core.times import Day, parse_utc, to_iso
from tests.conftest import AS_OF


def load(sample_stores):
    with (
        sample_stores.connect("crm", readonly=True) as crm,
        sample_stores.connect("memory", readonly=True) as memory,
        sample_stores.connect("outreach", readonly=True) as outreach,
    ):
        contacts = {r["id"]: dict(r) for r in crm.execute("SELECT * FROM contacts")}
        episodes = [dict(r) for r in memory.execute("SELECT * FROM contact_episodes ORDER BY id")]
        messages = [dict(r) for r in outreach.execute("SELECT * FROM messages ORDER BY sent_at")]
        inbound = [dict(r) for r in outreach.execute("SELECT * FROM inbound")]
        holds = read_holds(outreach)
    return contacts, episodes, messages, inbound, holds


def violations(contacts, messages, inbound, holds) -> list[str]:
    """Every send the engine's rules would have refused, with why."""
    found = []
    sent: dict[int, list[dict]] = defaultdict(list)
    replied_threads = {m["thread_id"] for m in messages if m["replied_at"]}
    for m in messages:
        contact = contacts[m["contact_id"]]
        at, earlier = m["sent_at"], sent[m["contact_id"]]
        where = f"message {m['id']} to contact {m['contact_id']} at {at}"
        if not contact["email"]:
            found.append(f"{where}: the contact has no address")
        reason = hold_reason(holds.get(m["contact_id"], []), at, contact["email"])
        if reason:
            found.append(f"{where}: {reason}")
        if any(e["bounce_status"] == "hard" for e in earlier):
            found.append(f"{where}: an earlier message hard-bounced")
        quiet = parse_utc(at) - timedelta(days=RECENT_DAYS)
        if earlier and parse_utc(earlier[-1]["sent_at"]) > quiet:
            found.append(f"{where}: inside the {RECENT_DAYS}-day quiet period")
        if m["bump_count"] > MAX_BUMPS:
            found.append(f"{where}: a third follow-up")
        if m["bump_count"]:
            previous = [e for e in earlier if e["thread_id"] == m["thread_id"]]
            if [e["bump_count"] for e in previous] != list(range(m["bump_count"])):
                found.append(f"{where}: a follow-up without its earlier messages")
            if any(e["replied_at"] for e in previous):
                found.append(f"{where}: a follow-up on a thread that had a reply")
        elif (
            earlier
            and earlier[-1]["thread_id"] not in replied_threads
            and earlier[-1]["bump_count"] < MAX_BUMPS
        ):
            found.append(f"{where}: a new thread while the last one was still open")
        tz = contact_timezone(contact["city"])
        if not in_working_hours(parse_utc(at), tz):
            found.append(f"{where}: outside working hours in {tz}")
        earlier.append(m)
    for r in inbound:
        if r["received_at"] < next(m["sent_at"] for m in messages if m["id"] == r["message_id"]):
            found.append(f"reply {r['provider_id']} arrived before its message was sent")
    return found


def research_violations(contacts, episodes, holds) -> list[str]:
    """Every research episode the research rules would have refused: one while a hold
    stops the contact (an unsubscribe, a reply, a bounce, a "not now", an away notice),
    or one inside the cooldown after the contact's previous research."""
    found = []
    last: dict[int, str] = {}
    for e in sorted(episodes, key=lambda e: e["created_at"]):
        if e["episode_type"] != "research":
            continue
        cid, at = e["contact_id"], e["created_at"]
        where = f"research episode {e['id']} of contact {cid} at {at}"
        reason = hold_reason(holds.get(cid, []), at, contacts[cid]["email"])
        if reason:
            found.append(f"{where}: {reason}")
        if cid in last and parse_utc(at) - parse_utc(last[cid]) < timedelta(
            days=RESEARCH_COOLDOWN_DAYS
        ):
            found.append(f"{where}: inside the {RESEARCH_COOLDOWN_DAYS}-day research cooldown")
        last[cid] = at
    return found


def test_the_sample_history_replayed_through_the_rules_has_no_violation(sample_stores):
    contacts, episodes, messages, inbound, holds = load(sample_stores)
    assert violations(contacts, messages, inbound, holds) == []
    assert research_violations(contacts, episodes, holds) == []
    researched = [e for e in episodes if e["episode_type"] == "research"]
    assert {e["contact_id"] for e in researched} & set(holds), (
        "some held contacts were researched before their hold"
    )
    kinds = {r["kind"] for r in inbound}
    assert kinds == {"reply", "not_now", "unsubscribe", "out_of_office", "bounce"}, (
        "the sample exercises every rule"
    )


def test_the_replay_finds_a_violation_when_there_is_one(sample_stores):
    """The check can fail: a message after an unsubscribe, and one at 3 a.m., are caught."""
    contacts, _, messages, inbound, holds = load(sample_stores)
    stop = next(r for r in inbound if r["kind"] == "unsubscribe")
    late = dict(messages[0], id=10**6, contact_id=stop["contact_id"], bump_count=0,
                thread_id="t-x", sent_at="2026-11-28T03:00:00Z")  # fmt: skip
    found = violations(contacts, [*messages, late], inbound, holds)
    assert any("unsubscribed" in f for f in found)
    assert any("outside working hours" in f for f in found)


def test_the_research_replay_finds_a_violation_when_there_is_one(sample_stores):
    """The check can fail: research after an unsubscribe, and twice inside the cooldown."""
    contacts, episodes, _, inbound, holds = load(sample_stores)
    stop = next(r for r in inbound if r["kind"] == "unsubscribe")
    after = parse_utc(stop["received_at"]) + timedelta(days=1)
    late = {"id": -1, "contact_id": stop["contact_id"], "episode_type": "research",
            "created_at": to_iso(after)}  # fmt: skip
    found = research_violations(contacts, [*episodes, late], holds)
    assert any("unsubscribed" in f for f in found)
    free = next(cid for cid, c in contacts.items() if cid not in holds and c["email"])
    twice = [
        {"id": -2 - n, "contact_id": free, "episode_type": "research",
         "created_at": to_iso(after + timedelta(days=n * (RESEARCH_COOLDOWN_DAYS - 1)))}
        for n in range(2)
    ]  # fmt: skip
    found = research_violations(contacts, [*episodes, *twice], holds)
    assert any("cooldown" in f for f in found)


def test_the_replies_mean_what_the_rules_read_in_them(sample_stores):
    """Each sample reply, read by the triage's own classifier, is what the sample says;
    a "not now" defers exactly to the date it names."""
    _, _, messages, inbound, holds = load(sample_stores)
    for r in inbound:
        if r["kind"] == "bounce":
            continue
        m = EmailMessage()
        m["From"], m["Subject"] = r["from_address"], r["subject"]
        m.set_content(r["body"])
        assert classify(parse_mail(m.as_bytes())) == r["kind"], r["body"]
    for r in (r for r in inbound if r["kind"] == "not_now"):
        until = next(h.until for h in holds[r["contact_id"]] if h.kind == "deferred")
        later = [
            m
            for m in messages
            if m["contact_id"] == r["contact_id"] and m["sent_at"] > r["received_at"]
        ]
        assert all(m["sent_at"] >= until for m in later)


def test_the_engine_picks_nobody_the_sample_told_to_stop(sample_stores):
    _, _, _, inbound, _ = load(sample_stores)
    stopped = {r["contact_id"] for r in inbound if r["kind"] in ("reply", "unsubscribe", "bounce")}
    with (
        sample_stores.connect("crm", readonly=True) as crm,
        sample_stores.connect("outreach", readonly=True) as outreach,
    ):
        day = (AS_OF + timedelta(days=200)).date().isoformat()
        picked = {
            c.contact_id for c in select_candidates(crm, outreach, Day.of(day, "UTC"), cap=10**6)
        }
    assert stopped and not stopped & picked


def test_company_facts_change_slowly_and_agree_across_contacts(sample_stores):
    contacts, episodes, _, _, _ = load(sample_stores)
    heads: dict[str, list[int]] = defaultdict(list)
    growth: dict[str, set[str]] = defaultdict(set)
    for e in episodes:
        company = contacts[e["contact_id"]]["company"]
        if e["episode_type"] == "research" and (
            m := re.search(r"lists (\d+) (people|person)", e["content"])
        ):
            heads[company].append(int(m[1]))
        if e["source"] == "companies_register":
            growth[company].add(e["content"])
    assert heads
    for company, counts in heads.items():
        assert max(counts) <= min(counts) * 1.1 + 1, f"{company}: {sorted(counts)}"
    assert all(len(texts) == 1 for texts in growth.values())


def test_plurals_are_right(sample_stores):
    _, episodes, _, _, _ = load(sample_stores)
    texts = [e["content"] for e in episodes]
    assert not [t for t in texts if re.search(r"\b1 (pages|people)\b", t)]
    assert any("(1 page)" in t for t in texts)


def test_every_reply_has_its_row_its_hold_and_its_episodes(sample_stores):
    _, episodes, messages, inbound, holds = load(sample_stores)
    keys = {(e["contact_id"], e["natural_key"]) for e in episodes}
    replied = {m["id"] for m in messages if m["replied_at"]}
    assert replied == {
        r["message_id"] for r in inbound if r["kind"] in ("reply", "not_now", "unsubscribe")
    }
    for r in inbound:
        assert (r["contact_id"], f"inbox:{r['provider_id']}") in keys
        assert r["contact_id"] in holds
        if r["warmth_after"] is not None:
            assert (r["contact_id"], f"inbox:{r['provider_id']}:scoring") in keys
