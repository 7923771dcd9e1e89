"""Drafts and sending: what a drafter is given, the draft, its gate verdict, the send ledger.

A draft is built from exactly three pieces of source material (the CRM row, the dossier,
and the day's research findings); all three are stored with it, and the fabrication gate
(`core.gate`) checks the draft against them alone.

The gate judges a draft once, when it is written (`judge_draft`); the verdict is stored
with the fingerprint of what it judged (`GateVerdict.judged`: the gate's version, the
subject, body, material and sender's name, and the claims found). The blocking check,
the pre-send re-check and a past day's report read it back (`stored_verdict`) and trust it
only while the fingerprint matches the row as it is then; a draft or verdict edited since,
a renamed sender or a newer gate fail the match and the draft is judged again, and that
fresh verdict is the one that counts.

Sending spans two stores and a mail server, so it is a ledger, not one transaction:
  1. the draft gets a fixed RFC 5322 Message-ID and status `sending` (outreach.db);
  2. the mailer sends it; a mailer can say whether that Message-ID already went out;
  3. the message row is inserted and the draft marked `sent`, in one transaction;
  4. the `outreach` episode is appended to memory.db under `outreach:message:<id>`.
A crash after 1 resumes at 2 (asking the mailer first), after 2 at 3, after 3 at 4; step
4 is idempotent, and every run re-appends the episodes of the day's sent messages, so no
message is ever sent twice or left without its episode.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from pydantic import BaseModel, Field

from company_ai.core.crm import Contact
from company_ai.core.gate import GateVerdict, Own, judge
from company_ai.core.llm import DATA_RULE, quoted
from company_ai.core.outreach.research import MAX_BUMPS
from company_ai.core.store import transaction
from company_ai.core.times import to_iso

MAX_SUBJECT_CHARS = 150
MAX_BODY_CHARS = 5_000
_HTML = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>|&[a-zA-Z]+;|&#\d+;")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029\u0085]")


# Nothing is the company's own: every link, address and number in a draft is a claim.
NOTHING_OWN = Own()


class BumpLimitError(ValueError):
    """The thread was already bumped twice: politely twice and done."""


class Draft(BaseModel):
    """What a drafter returns."""

    subject: str = Field(min_length=1, max_length=500)
    body: str = Field(min_length=1, max_length=20_000)
    angle: str = Field(min_length=1, max_length=200)


@dataclass(frozen=True)
class Thread:
    thread_id: str
    bump: int  # 0 = a first message; 1, 2 = follow-ups
    previous_subject: str | None = None


def next_thread(outreach: sqlite3.Connection, contact_id: int, day: str) -> Thread:
    """A follow-up in the contact's latest thread (of every message ever sent, whatever
    day is being drafted), or a new thread; BumpLimitError at 3."""
    row = outreach.execute(
        "SELECT thread_id, max(bump_count) AS bumps, max(replied_at) AS replied,"
        " max(sent_at) AS last FROM messages WHERE contact_id = $1"
        " GROUP BY thread_id ORDER BY last DESC, thread_id DESC LIMIT 1",
        (contact_id,),
    ).fetchone()
    if row is None or row["replied"]:
        return Thread(f"t-{contact_id}-{day}", 0)
    if row["bumps"] >= MAX_BUMPS:
        raise BumpLimitError(
            f"thread {row['thread_id']} was already followed up {MAX_BUMPS} times without a"
            " reply: no third bump"
        )
    # The subject of the thread's latest bump (a grouped query names no row's subject).
    (subject,) = outreach.execute(
        "SELECT subject FROM messages WHERE contact_id = $1 AND thread_id = $2"
        " ORDER BY bump_count DESC, id DESC LIMIT 1",
        (contact_id, row["thread_id"]),
    ).fetchone()
    return Thread(row["thread_id"], row["bumps"] + 1, subject)


def source_material(contact: Contact, dossier: str, findings: list[str]) -> list[str]:
    """The exact material a drafter is given (and the gate checks against)."""
    crm = (
        f"CRM: {contact.name} <{contact.email}>, {contact.title} at "
        f"{contact.company}, {contact.city}."
    )
    research = "Research today:\n" + ("\n".join(findings) if findings else "(nothing new)")
    return [crm, "Dossier:\n" + dossier, research]


DRAFT_SYSTEM = (
    "You write a short, plain-text business email from {sender}. Use ONLY facts, names and "
    "numbers that appear in the material; never invent any. No HTML. Reply in JSON with "
    "subject, body and angle (the reason for writing, in a few words). "
) + DATA_RULE.replace("{", "{{").replace("}", "}}")


def draft_prompt(material: list[str], thread: Thread) -> str:
    """What the drafter is asked: the kind of message, then each piece of material quoted
    as data (`llm.quoted`), never joined into the request itself."""
    kind = (
        f"A polite follow-up ({thread.bump} of {MAX_BUMPS}) to: {thread.previous_subject}"
        if thread.bump
        else "A first message."
    )
    pieces = [quoted(f"material {n}", piece) for n, piece in enumerate(material, start=1)]
    return kind + "\n\nThe material:\n\n" + "\n\n".join(pieces)


# Pitch lines of the offline drafter. Some carry a statistic of their own that no source
# supports, as a real model's marketing reflex would; the gate exists to stop those.
PITCHES = (
    ("month-end close", "We help finance teams close the month without the spreadsheet chase."),
    ("supplier onboarding", "We take the manual steps out of onboarding new suppliers."),
    ("reporting", "Teams like yours cut reporting time by 40% within a quarter."),
    ("operations", "We make the weekly operations review a short, readable page."),
    ("growth", "Our customers grow revenue 3x faster after switching, says Gartner."),
)


def offline_draft(contact: Contact, findings: list[str], thread: Thread, sender: str) -> Draft:
    """The deterministic template drafter: greeting, one sourced fact, a pitch, sign-off."""
    first = contact.name.split()[0]
    angle, pitch = PITCHES[(contact.id * 7 + len(findings)) % len(PITCHES)]
    company = contact.company or ""
    fact = next((f for f in findings if company and company.split()[0] in f), None)
    opener = f"I was reading about {company}: {fact}" if fact else ""
    if thread.bump:
        assert thread.previous_subject is not None  # a bump follows a sent message
        subject = f"Re: {thread.previous_subject.removeprefix('Re: ')}"
        lines = [f"Hi {first},", "", "Following up on my note in case it got buried."]
        lines += [opener] if opener else []
        lines += ["", "Best,", sender]
    else:
        subject = f"{first}, a thought on {angle}"
        lines = [
            f"Hi {first},",
            "",
            opener or f"I hope things are going well{f' at {company}' if company else ''}.",
        ]
        lines += [pitch, "Would a short call next week be useful?", "", "Best,", sender]
    return Draft(subject=subject, body="\n".join(lines), angle=angle)


def already_contacted(outreach: sqlite3.Connection, draft: sqlite3.Row, since: str) -> str | None:
    """Why this draft must not go out because of what was already sent, or None: its
    thread already has this bump, or the contact got any message since `since` (the
    quiet period). Checked just before sending, across every partition, so backfills,
    re-runs and catch-ups never write to a person twice."""
    row = outreach.execute(
        "SELECT sent_at FROM messages WHERE thread_id = $1 AND bump_count = $2",
        (draft["thread_id"], draft["bump"]),
    ).fetchone()
    if row:
        return f"bump {draft['bump']} of thread {draft['thread_id']} was already sent {row[0]}"
    row = outreach.execute(
        "SELECT max(sent_at) FROM messages WHERE contact_id = $1 AND sent_at >= $2",
        (draft["contact_id"], since),
    ).fetchone()
    if row[0]:
        return f"the contact was already written to at {row[0]}, inside the quiet period"
    return None


def text_problem(subject: str, body: str) -> str | None:
    """Why a draft cannot be sent as written (HTML, header injection, size), or None."""
    if not subject.strip():
        return "the subject is empty"
    if "\r" in subject or "\n" in subject or _CONTROL.search(subject):
        return "the subject contains line breaks or control characters (header injection)"
    if _HTML.search(subject) or _HTML.search(body):
        return "the draft contains HTML; drafts are plain text"
    if _CONTROL.search(body.replace("\t", " ")):
        return "the body contains control characters"
    if len(subject) > MAX_SUBJECT_CHARS:
        return f"the subject is over {MAX_SUBJECT_CHARS} characters"
    if len(body) > MAX_BODY_CHARS:
        return f"the body is over {MAX_BODY_CHARS} characters"
    return None


def judge_draft(
    subject: str,
    body: str,
    sources: list[str],
    allow: Iterable[str],
    known: Iterable[str] = (),
    own: Own = NOTHING_OWN,
) -> GateVerdict:
    """The fabrication gate's verdict on a draft's subject and body against its material,
    with the co-occurrence check (a rival's fact on the contact's company is a claim);
    `allow`: the sender's own name, never a claim; `known`: the CRM's companies, names in
    any case; `own`: the company's domains and numbers, the only links, addresses and
    numbers a draft may give (any other, or an instruction to log in or pay, is a claim
    however the material puts it: `gate.actionable`)."""
    parts = {"subject": subject, "body": body}
    own = own.with_readers(reader_addresses(sources))
    return judge(parts, sources, allow, known=known, together=True, own=own)


_CRM_ADDRESS = re.compile(r"\ACRM: [^<\n]*<([^<>\s]+@[^<>\s]+)>")


def reader_addresses(sources: Sequence[str]) -> list[str]:
    """The reader's own address, from the CRM line of a draft's material
    (`source_material`): a draft may say it back to them."""
    found = _CRM_ADDRESS.match(sources[0]) if sources else None
    return [found.group(1)] if found else []


def stored_verdict(
    draft: sqlite3.Row, allow: Iterable[str], known: Iterable[str] = (), own: Own = NOTHING_OWN
) -> tuple[GateVerdict, bool]:
    """A stored draft's verdict and whether it had to be judged again: the stored one while
    its fingerprint matches the row and the names the gate knew (see the module docstring),
    else a fresh one."""
    allow, known = tuple(allow), tuple(known)
    sources = json.loads(draft["sources"])
    stored = GateVerdict.from_json(draft["unsupported"], draft["judged"])
    parts = {"subject": draft["subject"], "body": draft["body"]}
    reader = own.with_readers(reader_addresses(sources))
    if stored and stored.holds_for(parts, sources, allow, known=known, own=reader):
        return stored, False
    return judge_draft(draft["subject"], draft["body"], sources, allow, known, own), True


def insert_draft(
    outreach: sqlite3.Connection,
    *,
    day: str,
    contact_id: int,
    thread: Thread,
    draft: Draft,
    dossier: str,
    sources: list[str],
    model: str,
    verdict: GateVerdict,
    problem: str | None,
    now: datetime,
) -> tuple[int, str]:
    """Store one draft with its material and verdict; returns (id, status)."""
    status = "skipped" if problem else ("ready" if verdict.passed else "quarantined")
    at = to_iso(now)
    with transaction(outreach):
        draft_id = outreach.execute(
            "INSERT INTO drafts (day, contact_id, thread_id, bump, subject, body, angle,"
            " dossier, sources, model, verdict, unsupported, judged, status, reason,"
            " created_at, updated_at) VALUES"
            " ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17) RETURNING id",
            (
                day,
                contact_id,
                thread.thread_id,
                thread.bump,
                draft.subject,
                draft.body,
                draft.angle,
                dossier,
                json.dumps(sources, ensure_ascii=False),
                model,
                "pass" if verdict.passed else "fail",
                json.dumps(verdict.to_json(), ensure_ascii=False),
                verdict.judged,
                status,
                problem,
                at,
                at,
            ),
        ).fetchone()[0]
    return int(draft_id), status


# --- sending -----------------------------------------------------------------------------


def compose(
    draft: sqlite3.Row,
    *,
    to: str,
    sender: str,
    sender_email: str,
    now: datetime,
    references: Sequence[str] = (),
) -> EmailMessage:
    """The RFC 5322 message of a draft, dated `now`; header injection raises ValueError.
    A follow-up names the thread's earlier Message-IDs (`references`, oldest first) in
    `In-Reply-To` (the last) and `References` (all), so it threads in the reader's client."""
    problem = text_problem(draft["subject"], draft["body"])
    if problem:
        raise ValueError(problem)
    message = EmailMessage()
    message["From"] = f"{sender} <{sender_email}>"
    message["To"] = to
    message["Subject"] = draft["subject"]
    message["Message-ID"] = draft["rfc_message_id"]
    message["Date"] = format_datetime(now)
    message["X-Company-AI-Thread"] = draft["thread_id"]
    if references:
        message["In-Reply-To"] = references[-1]
        message["References"] = " ".join(references)
    message.set_content(draft["body"])
    return message


def mark_sending(outreach: sqlite3.Connection, draft_id: int, domain: str, now: datetime) -> str:
    """Fix the draft's Message-ID before anything leaves (the idempotency key)."""
    rfc_id = make_msgid(idstring=f"draft{draft_id}", domain=domain)
    with transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET status = 'sending', rfc_message_id = $1, updated_at = $2"
            " WHERE id = $3 AND status = 'ready'",
            (rfc_id, to_iso(now), draft_id),
        )
        return outreach.execute(
            "SELECT rfc_message_id FROM drafts WHERE id = $1", (draft_id,)
        ).fetchone()[0]


def record_sent(outreach: sqlite3.Connection, draft: sqlite3.Row, now: datetime) -> int:
    """Insert the message row (sent `now`) and mark the draft sent, together; returns
    messages.id. A message row already there (a crash after it) is kept as it is."""
    sent_at = to_iso(now)
    with transaction(outreach):
        existing = outreach.execute(
            "SELECT id FROM messages WHERE draft_id = $1", (draft["id"],)
        ).fetchone()
        if existing:
            message_id = existing[0]
        else:
            message_id = outreach.execute(
                "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at,"
                " bump_count, draft_id, rfc_message_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
                " RETURNING id",
                (
                    draft["contact_id"],
                    draft["thread_id"],
                    draft["subject"],
                    draft["body"],
                    draft["angle"],
                    sent_at,
                    draft["bump"],
                    draft["id"],
                    draft["rfc_message_id"],
                ),
            ).fetchone()[0]
        outreach.execute(
            "UPDATE drafts SET status = 'sent', message_id = $1, updated_at = $2 WHERE id = $3",
            (message_id, sent_at, draft["id"]),
        )
    return int(message_id)


def thread_references(outreach: sqlite3.Connection, thread_id: str, bump: int) -> list[str]:
    """The Message-IDs of the thread's messages before this bump, oldest first."""
    return [
        r[0]
        for r in outreach.execute(
            "SELECT rfc_message_id FROM messages WHERE thread_id = $1 AND bump_count < $2"
            " AND rfc_message_id IS NOT NULL ORDER BY bump_count",
            (thread_id, bump),
        )
    ]


def outreach_episodes(outreach: sqlite3.Connection, day: str) -> list[dict]:
    """The `outreach` episode of every message the day's drafts sent, dated when it was sent."""
    return [
        {
            "contact_id": r["contact_id"],
            "episode_type": "outreach",
            "content": f'Sent "{r["subject"]}" (message {r["id"]}, thread {r["thread_id"]},'
            f" bump {r['bump_count']}) at {r['sent_at']}.",
            "source": "outreach",
            "confidence": 1.0,
            "created_at": r["sent_at"],
            "natural_key": f"outreach:message:{r['id']}",
        }
        for r in outreach.execute(
            "SELECT m.* FROM messages m JOIN drafts d ON d.message_id = m.id"
            " WHERE d.day = $1 AND d.status = 'sent' ORDER BY m.id",
            (day,),
        )
    ]
