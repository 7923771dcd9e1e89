"""Everything known about one person, in time order. Stdlib only (CLI read path).

Entries are in the order of the time they describe; a late arrival (a reply dated last week
that was only recorded today) keeps its own time, and says when it was recorded when that
is another (UTC) day: "2026-11-17 09:12 UTC (recorded 2026-11-30)".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from company_ai.core.crm.contacts import find_contact
from company_ai.core.crm.dossier import NO_HISTORY
from company_ai.core.store import Store, Stores, table_exists


@dataclass(frozen=True)
class Timeline:
    contact: dict[str, Any]
    # episodes, messages sent and mail received (replies, out-of-office notes, bounces
    # matched to a thread: core/inbox/replies.py), oldest first; messages carry their bodies
    entries: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"contact": self.contact, "entries": self.entries}


def load_timeline(stores: Stores, email: str) -> Timeline:
    """The contact's every episode, every message sent to them and every mail received from
    them on a thread, oldest first, with the messages' bodies."""
    with stores.connect(Store.CRM, readonly=True) as crm:
        contact = dict(find_contact(crm, email))
    with stores.connect(Store.MEMORY, readonly=True) as memory:
        outreach = stores.reader(Store.OUTREACH)  # None: no outreach store yet
        try:
            return read_timeline(memory, outreach, contact)
        finally:
            if outreach is not None:
                outreach.close()


def read_timeline(
    memory: sqlite3.Connection, outreach: sqlite3.Connection | None, contact: dict[str, Any]
) -> Timeline:
    """`load_timeline` through connections the caller keeps open (no outreach store: None)."""
    entries = [
        {"kind": "episode", "at": r["created_at"], **dict(r)}
        for r in memory.execute(
            "SELECT id, episode_type, source, confidence, created_at, recorded_at, content"
            " FROM contact_episodes WHERE contact_id = $1 ORDER BY created_at, id",
            (contact["id"],),
        )
    ]
    if outreach is not None:
        entries += _messages(outreach, contact["id"]) + _received(outreach, contact["id"])
    entries.sort(key=lambda e: (e["at"], e["kind"], e["id"]))
    return Timeline(contact, entries)


def _messages(outreach: sqlite3.Connection, contact_id: int) -> list[dict[str, Any]]:
    if not table_exists(outreach, "messages"):
        return []
    return [
        {"kind": "message", "at": r["sent_at"], **dict(r)}
        for r in outreach.execute(
            "SELECT id, thread_id, subject, angle, sent_at, opened_at, replied_at,"
            " bounce_status, bump_count, body FROM messages WHERE contact_id = $1",
            (contact_id,),
        )
    ]


def _received(outreach: sqlite3.Connection, contact_id: int) -> list[dict[str, Any]]:
    if not table_exists(outreach, "inbound"):
        return []
    return [
        {"kind": "received", "at": r["received_at"], **dict(r)}
        for r in outreach.execute(
            "SELECT rowid AS id, kind AS received_as, message_id, thread_id, received_at,"
            " created_at AS recorded_at, from_address, subject, body FROM inbound"
            " WHERE contact_id = $1",
            (contact_id,),
        )
    ]


def _body(text: str) -> list[str]:
    return [f"    | {line}".rstrip() for line in (text or "(no text)").splitlines()]


def render_text(timeline: Timeline, *, bodies: bool = False) -> str:
    """The timeline for a person to read; `bodies`: every word of each message and reply."""
    c = timeline.contact
    about = " · ".join(str(x) for x in (c["company"], c["title"], c["city"]) if x)
    episodes = sum(e["kind"] == "episode" for e in timeline.entries)
    messages = sum(e["kind"] == "message" for e in timeline.entries)
    received = sum(e["kind"] == "received" for e in timeline.entries)
    lines = [
        f"{c['name']} <{c['email']}>" + (f" · {about}" if about else ""),
        f"contact #{c['id']} · warmth {c['warmth']} · {episodes} episodes · {messages} messages"
        + (f" · {received} received" if received else ""),
        "",
    ]
    if not timeline.entries:
        lines.append(NO_HISTORY)
    for e in timeline.entries:
        when = e["at"].replace("T", " ").rstrip("Z") + " UTC"
        recorded = e.get("recorded_at") or e["at"]
        if recorded[:10] != e["at"][:10]:
            when += f" (recorded {recorded[:10]})"
        if e["kind"] == "episode":
            conf = "" if e["confidence"] is None else f"  confidence {e['confidence']:.2f}"
            lines.append(
                f"{when}  {e['episode_type']:<10}  #{e['id']}  source {e['source'] or '-'}{conf}"
            )
            lines.append(f"    {' '.join(e['content'].split())}")
        elif e["kind"] == "received":
            what = e["received_as"].replace("_", " ")
            lines.append(
                f"{when}  {'received':<10}  {what} to msg#{e['message_id']}"
                f"  thread {e['thread_id']}  from {e['from_address']}"
            )
            if bodies:
                lines += _body(e["body"])
        else:
            status = [f"sent {e['sent_at']}"]
            status += [f"opened {e['opened_at']}"] if e["opened_at"] else ["not opened"]
            status += [f"replied {e['replied_at']}"] if e["replied_at"] else ["no reply"]
            status.append(f"bounce {e['bounce_status']}")
            if e["bump_count"]:
                status.append(f"follow-ups {e['bump_count']}")
            lines.append(f"{when}  {'message':<10}  msg#{e['id']}  thread {e['thread_id']}")
            lines.append(f"    Subject: {e['subject']}")
            lines.append(f"    {' · '.join(status)}")
            if bodies:
                lines += _body(e["body"])
    return "\n".join(lines)
