import json

import pytest

from company_ai.core.crm import (
    UnknownContactError,
    build_dossier,
    find_contact,
    load_timeline,
    normalize_email,
    render_text,
)
from company_ai.core.crm.dossier import NO_HISTORY
from company_ai.core.memory import append_episodes
from tests.conftest import episode


def add_contact(stores, contact_id, email, name="Zoë Müller"):
    with stores.connect("crm") as crm:
        crm.execute(
            "INSERT INTO contacts (id, email, name, company, title, city, warmth, source,"
            " created_at, updated_at) VALUES ($1, $2, $3, 'Acme Ltd', 'CTO', 'Leeds', 40,"
            " 'test', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
            (contact_id, email, name),
        )


def test_a_contact_without_history_gets_exactly_the_no_history_line(stores):
    with stores.connect("memory") as memory:
        assert build_dossier(memory, 42) == "No prior research or interaction history."


def test_the_dossier_is_the_last_30_episodes_oldest_first_dated_on_every_line(stores):
    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                episode(
                    content=f"event {day:02d}\nsecond line",
                    created_at=f"2026-10-{day:02d}T09:00:00Z",
                )
                for day in range(1, 32)
            ]
            + [episode(contact_id=2, content="someone else")],
            now="2026-11-30T00:00:00Z",
        )
        lines = build_dossier(memory, 1).splitlines()
    assert len(lines) == 30
    assert lines[0].startswith("2026-10-02: note (from manual): event 02 second line")
    assert lines[-1].startswith("2026-10-31: ")
    assert all(line[:10] == f"2026-10-{i:02d}" for i, line in enumerate(lines, start=2))


def test_the_dossier_shows_provenance_and_model_confidence(stores):
    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                episode(
                    episode_type="scoring",
                    source="model:warmth",
                    confidence=0.65,
                    content="Warmth 40.",
                )
            ],
            now="2026-11-30T00:00:00Z",
        )
        assert (
            build_dossier(memory, 1)
            == "2026-11-29: scoring (from model:warmth, confidence 0.65): Warmth 40."
        )


def test_the_timeline_merges_episodes_and_messages_in_time_order(sample_stores):
    with sample_stores.connect("outreach", readonly=True) as outreach:
        contact_id = outreach.execute(
            "SELECT contact_id FROM messages WHERE replied_at IS NOT NULL LIMIT 1"
        ).fetchone()[0]
    with sample_stores.connect("crm", readonly=True) as crm:
        email = crm.execute("SELECT email FROM contacts WHERE id = $1", (contact_id,)).fetchone()[0]
    timeline = load_timeline(sample_stores, email.upper() + "  ")
    kinds = {e["kind"] for e in timeline.entries}
    assert kinds == {"episode", "message", "received"}
    assert [e["at"] for e in timeline.entries] == sorted(e["at"] for e in timeline.entries)
    with sample_stores.connect("memory", readonly=True) as memory:
        stored = memory.execute(
            "SELECT count(*) FROM contact_episodes WHERE contact_id = $1", (contact_id,)
        ).fetchone()[0]
    assert sum(e["kind"] == "episode" for e in timeline.entries) == stored
    text = render_text(timeline)
    assert f"<{email}>" in text and "Subject: " in text and "replied 2026-" in text
    first_episode = next(e for e in timeline.entries if e["kind"] == "episode")
    assert f"#{first_episode['id']}" in text and first_episode["source"] in text
    assert json.loads(json.dumps(timeline.to_json()))["contact"]["id"] == contact_id


def test_the_timeline_shows_every_word_sent_and_received_with_bodies(sample_stores):
    with sample_stores.connect("outreach", readonly=True) as outreach:
        reply = outreach.execute("SELECT * FROM inbound WHERE kind = 'not_now' LIMIT 1").fetchone()
        sent = outreach.execute(
            "SELECT body FROM messages WHERE id = $1", (reply["message_id"],)
        ).fetchone()[0]
    with sample_stores.connect("crm", readonly=True) as crm:
        email = crm.execute(
            "SELECT email FROM contacts WHERE id = $1", (reply["contact_id"],)
        ).fetchone()[0]
    timeline = load_timeline(sample_stores, email)
    plain, full = render_text(timeline), render_text(timeline, bodies=True)
    assert f"    | {reply['body']}" not in plain and f"    | {reply['body']}" in full
    assert all(f"    | {line}".rstrip() in full for line in sent.splitlines())
    assert "received" in plain and "not now to msg#" in plain
    entries = json.loads(json.dumps(timeline.to_json()))["entries"]
    assert {e["body"] for e in entries if e["kind"] in ("message", "received")} >= {
        sent,
        reply["body"],
    }


def test_an_unknown_email_is_a_clear_error(sample_stores):
    with pytest.raises(UnknownContactError, match="no contact with email 'nobody@nowhere.example'"):
        load_timeline(sample_stores, "Nobody@Nowhere.example")


def test_unicode_and_sql_in_emails_are_just_data(stores):
    add_contact(stores, 1, "zoë.o'brien@exämple.com")
    with stores.connect("crm", readonly=True) as crm:
        assert find_contact(crm, " ZOË.O'Brien@Exämple.com ")["id"] == 1
        with pytest.raises(UnknownContactError):
            find_contact(crm, "x'OR'1'='1@example.com")
    with stores.connect("memory") as memory:
        append_episodes(memory, [episode()], now="2026-11-30T00:00:00Z")
    assert "No prior" not in render_text(load_timeline(stores, "zoë.o'brien@exämple.com"))


@pytest.mark.parametrize(
    "bad", ["", "no-at-sign", "@example.com", "ada@", "a da@example.com", "ada@exa\x00mple.com"]
)
def test_malformed_emails_are_refused(bad):
    with pytest.raises(ValueError, match="not an email address"):
        normalize_email(bad)


def test_a_contact_with_no_history_has_an_honest_timeline(stores):
    add_contact(stores, 7, "quiet@example.com")
    with stores.connect("memory"):
        pass
    timeline = load_timeline(stores, "quiet@example.com")
    assert timeline.entries == []
    assert render_text(timeline).endswith(NO_HISTORY)


def test_a_late_arrival_keeps_its_own_time_and_says_when_it_was_recorded(stores):
    from company_ai.core.crm import read_timeline

    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                episode(content="on time", created_at="2026-11-30T08:00:00Z"),
                episode(content="late reply", created_at="2026-11-17T09:12:00Z"),
            ],
            now="2026-11-30T10:00:00Z",
        )
        contact = {"id": 1, "name": "Ada", "email": "a@x", "company": None, "title": None}
        timeline = read_timeline(memory, None, contact | {"city": None, "warmth": 0})
    text = render_text(timeline)
    assert [e["content"] for e in timeline.entries] == ["late reply", "on time"]
    assert "2026-11-17 09:12:00 UTC (recorded 2026-11-30)" in text
    assert "2026-11-30 08:00:00 UTC  note" in text  # recorded the day it describes: no note
