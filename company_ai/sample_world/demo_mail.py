"""The demo's outside world: a Maildir with a few answers to the sample's latest outreach
(two replies, an out-of-office, a bounce and one stranger's mail) and an engagement drop
file, so the demo's `inbox_replies` and `engagement_signals` have something true to read."""

from __future__ import annotations

import json
import mailbox
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from company_ai.core.files import write_atomic
from company_ai.core.store import Store, Stores
from company_ai.core.times import parse_utc, to_iso
from company_ai.sample_world.company_pages import MONTH_NAMES

SENDER = "sam@company-ai.example"
ANSWERS = (
    ("reply", "Thanks Sam, good timing. Could you send pricing for a team of our size?"),
    ("not_now", "Not now, we're mid-budget. Try again next quarter.\n\nBest,\n-- \n{name}"),
    ("out_of_office", "I am out of the office until {back} with limited access to email."),
    ("bounce", ""),
)


def _open_threads(stores: Stores, now: datetime, count: int) -> list[dict]:
    """The latest message of the warmest contacts with a thread still open (no answer,
    no hold), sent in the last 25 days."""
    since = to_iso(now - timedelta(days=25))
    with (
        stores.connect(Store.OUTREACH, readonly=True) as outreach,
        stores.connect(Store.CRM, readonly=True) as crm,
    ):
        rows = outreach.execute(
            "SELECT m.* FROM messages m WHERE m.sent_at >= $1 AND m.sent_at < $2"
            " AND m.replied_at IS NULL AND m.bounce_status = 'none'"
            " AND m.sent_at = (SELECT max(sent_at) FROM messages WHERE contact_id = m.contact_id)"
            " AND NOT EXISTS (SELECT 1 FROM send_holds h WHERE h.contact_id = m.contact_id)",
            (since, to_iso(now - timedelta(hours=6))),
        ).fetchall()
        people = {
            r["id"]: dict(r)
            for r in crm.execute("SELECT id, name, email, warmth FROM contacts WHERE email != ''")
        }
    open_threads = [dict(r) | {"contact": people[r["contact_id"]]} for r in rows]
    open_threads.sort(key=lambda m: (-m["contact"]["warmth"], m["id"]))
    return open_threads[:count]


def _answer(kind: str, text: str, message: dict, at: datetime) -> bytes:
    contact = message["contact"]
    if kind == "bounce":
        return (
            "From: Mail Delivery Subsystem <mailer-daemon@mx.example>\r\n"
            f"To: Sam Rivers <{SENDER}>\r\nDate: {format_datetime(at)}\r\n"
            "Subject: Undelivered Mail Returned to Sender\r\nMIME-Version: 1.0\r\n"
            'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n'
            "\r\n--B\r\nContent-Type: text/plain\r\n\r\nYour message could not be"
            " delivered.\r\n--B\r\nContent-Type: message/delivery-status\r\n\r\n"
            "Reporting-MTA: dns; mx.example\r\n\r\n"
            f"Final-Recipient: rfc822; {contact['email']}\r\nAction: failed\r\n"
            "Status: 5.1.1\r\n\r\n--B\r\nContent-Type: text/rfc822-headers\r\n\r\n"
            f"Message-ID: {message['rfc_message_id']}\r\n\r\n--B--\r\n"
        ).encode()
    mail = EmailMessage()
    mail["From"] = f"{contact['name']} <{contact['email']}>"
    subject = message["subject"].removeprefix("Re: ")
    mail["Subject"] = f"Automatic reply: {subject}" if kind == "out_of_office" else f"Re: {subject}"
    mail["In-Reply-To"] = message["rfc_message_id"]
    mail["References"] = message["rfc_message_id"]
    if kind == "out_of_office":
        mail["Auto-Submitted"] = "auto-replied"
    back = (at + timedelta(days=6)).date()
    body = text.format(name=contact["name"], back=f"{back.day} {MONTH_NAMES[back.month - 1]}")
    quoted = "\n".join(f"> {line}" for line in message["body"].splitlines())
    mail.set_content(f"{body}\n\nOn {message['sent_at']} Sam Rivers wrote:\n{quoted}\n")
    mail["To"] = f"Sam Rivers <{SENDER}>"
    mail["Date"] = format_datetime(at)
    return mail.as_bytes()


def fill_demo_inbox(stores: Stores, maildir: Path, now: datetime) -> list[str]:
    """Answers to the warmest open threads, delivered a few hours after each was sent;
    returns the addresses that answered."""
    maildir.parent.mkdir(parents=True, exist_ok=True)
    box = mailbox.Maildir(maildir, create=True)
    answered = []
    threads = _open_threads(stores, now, len(ANSWERS))
    for (kind, text), message in zip(ANSWERS, threads, strict=False):
        at = min(parse_utc(message["sent_at"]) + timedelta(hours=3), now - timedelta(minutes=5))
        delivered = mailbox.MaildirMessage(_answer(kind, text, message, at))
        delivered.set_date(at.timestamp())
        box.add(delivered)
        answered.append(message["contact"]["email"])
    stranger = EmailMessage()
    stranger["From"] = "Deals <offers@elsewhere.example>"
    stranger["Subject"] = "Boost your SEO today"
    stranger.set_content("Not an answer to anything: triage leaves it unstored.")
    spam = mailbox.MaildirMessage(stranger.as_bytes())
    spam.set_date((now - timedelta(hours=2)).timestamp())
    box.add(spam)
    return answered


def drop_demo_signals(folder: Path, email: str, now: datetime, day: str = "1") -> None:
    """One webhook drop file for `day`: a site visit and a portal signup by `email`."""
    at = to_iso(now - timedelta(hours=2))
    signals = [
        {"id": f"demo-visit-{day}", "kind": "site_visit", "email": email, "at": at,
         "pages": ["pricing page", "case studies"]},
        {"id": f"demo-signup-{day}", "kind": "portal_signup", "email": email, "at": at,
         "detail": "started a trial workspace"},
    ]  # fmt: skip
    body = json.dumps({"signals": signals}).encode()
    write_atomic(folder / f"demo-webhooks-{day}.json", body)
