"""Mail that comes in, read and parsed: where it is read from, what one mail is, and what
a reply says by rule (its kind, a date it names); matching and acting: `replies.py`.

Reading: a `MailSource` (the Gmail API in resources/inbox.py, or a local Maildir here)
gives every message not yet taken, raw. What is taken is what WE recorded, never a time a
sender controls: a Maildir is read by its keys, skipping those already stored (`inbound`),
refused (`intake_refusals`) or seen and not stored (`inbox_seen`, keys only, no sender:
`taken_keys`); Gmail by the History API from the `historyId` this system checkpointed
(`read_cursor`/`write_cursor`). A mail's file time or Gmail `internalDate` is data,
bounded by `intake.outside_time`: one in the future is kept as now and flagged.

Each is parsed inside `BOUNDS` (`parse_mail`: too big, nested too deep, a header too long
or unparsable is `Refused`, recorded with its reason, not met again; nothing from one mail
fails the run), sorted into a kind by fixed rules of code (`classify`).
"""

from __future__ import annotations

import calendar
import email
import json
import os
import re
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.header import decode_header, make_header
from email.message import Message
from email.utils import getaddresses
from pathlib import Path
from typing import Protocol

from company_ai.core.crm import normalize_email
from company_ai.core.files import write_atomic
from company_ai.core.intake import (
    Bounds,
    Refused,
    clean_text,
    html_text,
    outside_time,
)
from company_ai.core.store import Store, Stores

Log = Callable[[str], None]
INTAKE = "inbox"  # the intake's name in `intake_refusals`
LOOKBACK_DAYS = 30  # how far back Gmail is listed without a (usable) history id
MAX_BODY_CHARS = 10_000  # of a reply's stripped text, stored and put in its episode
# One mail: its bytes (Gmail's limit is 25 MB), a header's characters, MIME containers.
BOUNDS = Bounds(max_bytes=35 * 1024 * 1024, max_depth=100, max_chars=100_000)
MAX_TEXT_BYTES = 1024 * 1024  # of a text part decoded: the reply's text is far shorter


def _quiet(_: str) -> None:
    pass


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class InboundMail:
    """One message as a source gives it: the provider's id, when it arrived (bounded: never
    after now), why that differs from the time it claimed ("" if not), its bytes."""

    provider_id: str  # gmail:<id> or maildir:<key>
    received: datetime
    raw: bytes
    time_flag: str = ""


@dataclass
class Fetched:
    mails: list[InboundMail] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # what could not be read, and why
    history_id: str | None = None  # gmail: where the next run starts (None: keep the cursor)


class MailSource(Protocol):
    """Where new mail is read (`resources/inbox.py::InboxSource`)."""

    source: str  # the episodes' provenance: gmail | maildir

    def fetch(
        self, history_id: str | None, taken: Container[str], now: datetime, warn: Log
    ) -> Fetched: ...


def taken_keys(stores: Stores) -> set[str]:
    """The provider ids already taken: stored, refused, or seen and not stored."""
    with stores.connect(Store.OUTREACH) as outreach:
        rows = outreach.execute(
            "SELECT provider_id FROM inbound UNION SELECT provider_id FROM inbox_seen"
            " UNION SELECT item_key FROM intake_refusals WHERE intake = $1",
            (INTAKE,),
        )
        return {row[0] for row in rows}


def read_maildir(path: Path, taken: Container[str], now: datetime, warn: Log = _quiet) -> Fetched:
    """Every message in the Maildir at `path` (new/ and cur/, read only) whose key is not
    `taken`, with its file time bounded by `now`. A file that cannot be read is a failure,
    read again next run (it is not taken)."""
    fetched = Fetched()
    for sub in ("new", "cur"):
        try:
            entries = sorted(os.scandir(path / sub), key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            key = entry.name.split(":")[0]  # the key, as Python's `mailbox` names it
            provider_id = f"maildir:{key}"
            if entry.name.startswith(".") or provider_id in taken:
                continue
            try:
                if not entry.is_file():
                    continue
                with open(entry.path, "rb") as f:
                    raw = f.read(BOUNDS.max_bytes + 1)  # parse_mail refuses one too big
                    mtime = os.fstat(f.fileno()).st_mtime
                claimed = datetime.fromtimestamp(mtime, UTC).replace(microsecond=0)
            except (OSError, ValueError, OverflowError) as exc:
                fetched.failures.append(f"{provider_id}: {exc}")
                warn(f"inbox: could not read {provider_id}: {exc}")
                continue
            when = outside_time(claimed, now)
            fetched.mails.append(InboundMail(provider_id, when.at, raw, when.flag))
    return fetched


def read_cursor(path: Path, warn: Log = _quiet) -> str | None:
    """The Gmail history id checkpointed by the last run, or None (none yet, or unreadable:
    Gmail is then listed `LOOKBACK_DAYS` back; mail already taken is skipped)."""
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_bytes())
        history_id = value.get("history_id") if isinstance(value, dict) else None
        if value.get("version") == 1 and history_id is None:
            return None  # the time cursor of older code: read by history from now on
        if not (isinstance(history_id, str) and history_id.isdigit() and len(history_id) < 30):
            raise ValueError("no history id")
        return history_id
    except (OSError, ValueError, AttributeError) as exc:
        warn(
            f"inbox: the cursor {path} is unreadable ({type(exc).__name__}): listing the last"
            f" {LOOKBACK_DAYS} days again; mail already triaged is recognised and skipped"
        )
        return None


def write_cursor(path: Path, history_id: str) -> None:
    write_atomic(path, json.dumps({"version": 2, "history_id": history_id}).encode())


# --- parsing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """One recipient block of a delivery-status report."""

    recipients: tuple[str, ...]  # Final-Recipient, then Original-Recipient, lower-cased
    action: str  # failed | delayed | delivered | relayed | expanded | ""
    status: str  # 5.1.1, 4.4.1, 2.0.0, ...

    @property
    def severity(self) -> str | None:
        """hard, soft, or None (not a bounce: delivered, relayed, expanded, unknown)."""
        if self.action == "failed":
            return "soft" if self.status.startswith("4") else "hard"
        if self.action == "delayed":
            return "soft"
        return None


@dataclass(frozen=True)
class Parsed:
    from_address: str  # lower-cased, "" if none could be read
    subject: str
    in_reply_to: list[str]
    references: list[str]  # oldest first, as written
    text: str  # the plain text, not yet stripped
    auto_reply: bool
    message_id: str = ""  # its own Message-ID, "" if none
    report: str = ""  # multipart/report's report-type: delivery-status, disposition-notification
    deliveries: tuple[Delivery, ...] = ()  # a delivery-status report's recipient blocks
    original_id: str | None = None  # the Message-ID a report is about


_MSGID = re.compile(r"<[^<>\s]+>")
_CONTAINER = re.compile(rb"(?i)content-type:\s*(multipart/|message/rfc822)")


def _header(msg: Message, name: str) -> str:
    """A header as text, its RFC 2047 encoded words decoded; undecodable parts replaced."""
    value = msg.get(name)
    if value is None:
        return ""
    try:
        text = str(make_header(decode_header(str(value))))
    except (LookupError, ValueError, UnicodeError, AssertionError):
        text = str(value)
    return clean_text(" ".join(text.split()))


def _decoded(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    payload = payload[:MAX_TEXT_BYTES]
    charset = part.get_content_charset() or "utf-8"
    try:
        text = payload.decode(charset, "replace")
    except (LookupError, ValueError):  # a charset Python does not know
        text = payload.decode("utf-8", "replace")
    if part.get_content_type() == "text/html":
        return html_text(text)
    return clean_text(text)


def _body_text(msg: Message) -> str:
    """The first plain-text part that is not an attachment (else the first HTML one).
    Attachments are skipped before anything is decoded."""
    html = None
    for part in msg.walk():
        if part.is_multipart() or part.get_content_disposition() == "attachment":
            continue
        kind = part.get_content_type()
        if kind == "text/plain":
            return _decoded(part)
        if kind == "text/html" and html is None:
            html = part
    return _decoded(html) if html is not None else ""


def _bounded(raw: bytes) -> Message:
    """The parsed message, or `Refused` when it is past `BOUNDS` (checked before the
    parser, whose recursion a deep nesting would exhaust, and after it, on each header)."""
    if len(raw) > BOUNDS.max_bytes:
        raise Refused(f"over {BOUNDS.max_bytes:,} bytes")
    containers = len(_CONTAINER.findall(raw))
    if containers > BOUNDS.max_depth:
        raise Refused(f"{containers:,} nested MIME containers (at most {BOUNDS.max_depth})")
    try:
        msg = email.message_from_bytes(raw)
    except RecursionError:
        raise Refused("MIME nested too deep") from None
    for part in msg.walk():
        for name, value in part.items():
            size = len(value) if isinstance(value, str) else len(str(value))
            if size > BOUNDS.max_chars:
                raise Refused(
                    f"a {clean_text(name)[:40]} header of {size:,} characters"
                    f" (at most {BOUNDS.max_chars:,})"
                )
    return msg


def parse_mail(raw: bytes) -> Parsed:
    """The parts of a message triage uses, or `Refused` saying why it cannot be read.
    Attachments are never decoded: only the text. (The stdlib's compat32 parser: the
    modern policy's header objects cost 4x the time.)"""
    msg = _bounded(raw)
    addresses = getaddresses([_header(msg, "From")])
    sender = ""
    if addresses and addresses[0][1]:
        try:
            sender = normalize_email(addresses[0][1])
        except ValueError:
            sender = ""
    report = ""
    deliveries: tuple[Delivery, ...] = ()
    original = None
    text = ""
    if msg.get_content_type() == "multipart/report":
        report = clean_text(str(msg.get_param("report-type") or "")).lower()[:60]
        deliveries, original = _report(msg)
    if report not in ("delivery-status", "disposition-notification"):
        text = _body_text(msg)
    auto = (
        _header(msg, "Auto-Submitted").lower().startswith("auto-replied")
        or msg.get("X-Autoreply") is not None
        or msg.get("X-Autorespond") is not None
    )
    own = _MSGID.findall(_header(msg, "Message-ID"))
    return Parsed(
        from_address=sender,
        subject=_header(msg, "Subject")[:300],
        in_reply_to=_MSGID.findall(_header(msg, "In-Reply-To")),
        references=_MSGID.findall(_header(msg, "References")),
        text=text,
        auto_reply=auto,
        message_id=own[0][:500] if own else "",
        report=report,
        deliveries=deliveries,
        original_id=original,
    )


def _fields(part: Message) -> list[dict[str, str]]:
    """The field blocks of a message/delivery-status or disposition-notification part."""
    payload = part.get_payload()
    blocks = payload if isinstance(payload, list) else []
    return [
        {clean_text(k).lower(): clean_text(str(v)).strip() for k, v in block.items()}
        for block in blocks
        if isinstance(block, Message)
    ]


def _address(field_value: str) -> str:
    """`rfc822; ada@acme.example` -> `ada@acme.example` ("" if it is no address)."""
    try:
        return normalize_email(field_value.rpartition(";")[2].strip())
    except ValueError:
        return ""


def _report(msg: Message) -> tuple[tuple[Delivery, ...], str | None]:
    """(the recipient blocks, the original Message-ID) of a multipart/report."""
    deliveries: list[Delivery] = []
    original = None
    for part in msg.walk():
        kind = part.get_content_type()
        if kind == "message/delivery-status":
            for block in _fields(part):
                if "action" not in block:
                    continue  # the per-message block (Reporting-MTA, ...)
                named = (block.get("final-recipient", ""), block.get("original-recipient", ""))
                recipients = tuple(a for a in map(_address, named) if a)
                deliveries.append(
                    Delivery(recipients, block["action"].lower()[:20], block.get("status", "")[:20])
                )
        elif kind == "message/disposition-notification" and original is None:
            for block in _fields(part):
                ids = _MSGID.findall(block.get("original-message-id", ""))
                original = ids[0] if ids else original
        elif kind in ("message/rfc822", "text/rfc822-headers") and original is None:
            inner = part.get_payload()
            if isinstance(inner, list) and inner and isinstance(inner[0], Message):
                found = _MSGID.findall(str(inner[0].get("Message-ID", "")))
            else:
                found = re.findall(r"(?im)^message-id:\s*(<[^<>\s]+>)", str(inner))
            original = clean_text(found[0]) if found else None
    return tuple(deliveries), original


# --- what a reply says, by rule --------------------------------------------------------------

_QUOTE_HEAD = re.compile(
    r"^(On .{0,200}wrote:|-{2,}\s*Original Message\s*-{2,}|From: .*|_{10,})\s*$", re.I
)
_SIGNATURE = re.compile(r"^(-- ?|Sent from my .*|Get Outlook for .*)$")


def strip_reply(text: str) -> str:
    """The new text of a reply: quoted lines, the quoted history after "On … wrote:" and the
    signature after "-- " removed, blank runs squeezed, capped at `MAX_BODY_CHARS`."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if _QUOTE_HEAD.match(stripped) or _SIGNATURE.match(line.rstrip()):
            break
        if stripped.startswith(">"):
            continue
        kept.append(line.rstrip())
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return body[:MAX_BODY_CHARS]


_UNSUBSCRIBE = re.compile(
    r"\b(unsubscribe|stop (e-?mailing|contacting|writing to|sending)|remove me|take me off"
    r"|do not (contact|e-?mail)|don'?t (contact|e-?mail) me)",
    re.I,
)
_NOT_NOW = re.compile(
    r"\b(not now|not right now|not at the moment|not a priority (right )?now|bad time"
    r"|try (me |us )?again|get back (to me|in touch)|circle back|reach out again)",
    re.I,
)
_AWAY = re.compile(r"\b(out of (the )?office|on (annual )?leave|on holiday|on vacation)\b", re.I)
_MONTHS = {m.lower(): n for n, m in enumerate(calendar.month_name) if m} | {
    m.lower(): n for n, m in enumerate(calendar.month_abbr) if m
}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]{3,9})\b")
_MONTH_DAY = re.compile(r"\b([A-Za-z]{3,9}) (\d{1,2})(?:st|nd|rd|th)?\b")
_IN_MONTH = re.compile(r"\b(?:in|after|until|from) ([A-Za-z]{3,9})\b", re.I)


def classify(parsed: Parsed) -> str:
    """The kind of a message, by fixed rules: bounce (a delivery-status report naming a
    failure or a delay), delivered (one that names neither: no bounce), read_receipt,
    out_of_office, unsubscribe, not_now, or reply. The subject counts for an out-of-office;
    the text for the rest."""
    if parsed.report == "delivery-status":
        failing = any(d.severity for d in parsed.deliveries)
        return "bounce" if failing else "delivered"
    if parsed.report == "disposition-notification":
        return "read_receipt"
    subject = parsed.subject.lower()
    if parsed.auto_reply or subject.startswith(("out of office", "automatic reply", "auto:")):
        return "out_of_office"
    text = strip_reply(parsed.text)
    if _UNSUBSCRIBE.search(text):
        return "unsubscribe"
    if _NOT_NOW.search(text):
        return "not_now"
    if _AWAY.search(text) and len(text) < 600:
        return "out_of_office"
    return "reply"


def named_date(text: str, received: date) -> date | None:
    """The first date a reply names, on or after the day it arrived, or None: an ISO date,
    "7 December", "December 7", "next week/month/quarter/year", "in N weeks/months",
    "in/after/until January"."""
    lowered = text.lower()
    if m := _ISO_DATE.search(lowered):
        try:
            return max(date(int(m[1]), int(m[2]), int(m[3])), received)
        except ValueError:
            pass
    for pattern, day_first in ((_DAY_MONTH, True), (_MONTH_DAY, False)):
        for m in pattern.finditer(lowered):
            day_text, month_text = (m[1], m[2]) if day_first else (m[2], m[1])
            if month_text in _MONTHS and 1 <= int(day_text) <= 31:
                return _next_date(received, _MONTHS[month_text], int(day_text))
    if "next quarter" in lowered:
        first_month = (received.month - 1) // 3 * 3 + 4
        return date(received.year + (first_month > 12), (first_month - 1) % 12 + 1, 1)
    if "next year" in lowered:
        return date(received.year + 1, 1, 1)
    if "next month" in lowered:
        return _add_months(received.replace(day=1), 1)
    if "next week" in lowered:
        return received + timedelta(days=7 - received.weekday())
    if m := re.search(r"\bin (\d{1,2}|a|two|three|six) (week|month)s?\b", lowered):
        n = {"a": 1, "two": 2, "three": 3, "six": 6}.get(m[1]) or int(m[1])
        return received + timedelta(weeks=n) if m[2] == "week" else _add_months(received, n)
    for m in _IN_MONTH.finditer(lowered):
        if m[1] in _MONTHS:
            return _next_date(received, _MONTHS[m[1]], 1)
    return None


def _next_date(after: date, month: int, day: int) -> date:
    for year in (after.year, after.year + 1):
        try:
            candidate = date(year, month, min(day, calendar.monthrange(year, month)[1]))
        except ValueError:
            continue
        if candidate >= after:
            return candidate
    return after


def _add_months(start: date, months: int) -> date:
    index = start.month - 1 + months
    year, month = start.year + index // 12, index % 12 + 1
    return date(year, month, min(start.day, calendar.monthrange(year, month)[1]))
