"""Inbox triage and engagement: messages per second through the rules and the stores.

    .venv/bin/python benchmarks/bench_inbox.py                  # 10,000 messages
    .venv/bin/python benchmarks/bench_inbox.py --messages 2000

Builds 10,000 contacts with one sent message each, then 10,000 inbound messages (replies
by In-Reply-To, by References and by sender alone, "not now"s, unsubscribes,
out-of-office notes, bounces as DSNs, and mail matching no thread) in a local Maildir.
Times reading the Maildir, the triage itself (`core.inbox.triage`: parse, classify,
match, store, warmth, episodes), a second triage of the same mail (everything already
stored), 10,000 engagement signals in 10 drop files, and the poisoned path: a batch
(a tenth of the messages, `--poisoned`) where every mail is hostile (tests/hostile/mail:
nested 1,000 deep, a 300,000-character header, broken MIME, junk, read receipts, foreign
delivery reports), against the good path's cost per mail. Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import platform
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from company_ai.core.inbox import InboundMail, read_maildir, take_signals, triage
from company_ai.core.store import Stores, transaction
from company_ai.core.times import to_iso

NOW = datetime(2026, 11, 30, 6, 30, tzinfo=UTC)
HOSTILE = Path(__file__).parents[1] / "tests" / "hostile" / "mail"
SENT = NOW - timedelta(days=5)
TEXTS = (
    ("in_reply_to", "Thanks, this is timely. Could you send pricing?", 45),
    ("references", "Yes, let's talk next week.\n\nOn Mon Sam wrote:\n> Hi\n> there", 10),
    ("sender", "Replying from my phone: interested.\n\nSent from my phone", 5),
    ("in_reply_to", "Not now, try again next quarter.", 10),
    ("in_reply_to", "Please unsubscribe me.", 5),
    ("ooo", "I am out of the office until 7 December.", 10),
    ("dsn", "", 5),
    ("stranger", "Buy our SEO services", 10),
)


def seed(stores: Stores, n: int) -> None:
    at = to_iso(SENT)
    with stores.connect("crm") as crm, transaction(crm):
        crm.executemany(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES ($1, $2, $3, 30, 'bench', $4, $5)",
            [(i, f"p{i}@acme{i % 97}.example", f"Person {i}", at, at) for i in range(1, n + 1)],
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.executemany(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES ($1, $2, $3, 'Hello', 'Hi,\nA note.', $4, $5)",
            [(i, i, f"t-{i}", at, f"<m{i}@company-ai.example>") for i in range(1, n + 1)],
        )


def message(i: int, rng: random.Random) -> bytes:
    how, text, _ = rng.choices(TEXTS, [w for *_, w in TEXTS])[0]
    if how == "dsn":
        return (
            "From: mailer-daemon@mx.example\r\nSubject: Undelivered\r\n"
            'Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n'
            "--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx\r\n\r\n"
            f"Final-Recipient: rfc822; p{i}@acme{i % 97}.example\r\nAction: failed\r\n"
            f"Status: 5.1.1\r\n\r\n--B\r\nContent-Type: text/rfc822-headers\r\n\r\n"
            f"Message-ID: <m{i}@company-ai.example>\r\n\r\n--B--\r\n"
        ).encode()
    m = EmailMessage()
    m["From"] = "x@elsewhere.example" if how == "stranger" else f"p{i}@acme{i % 97}.example"
    m["Subject"] = "Automatic reply: Hello" if how == "ooo" else "Re: Hello"
    if how in ("in_reply_to", "ooo"):
        m["In-Reply-To"] = f"<m{i}@company-ai.example>"
    if how == "references":
        m["References"] = f"<m{i}@company-ai.example>"
    m.set_content(text)
    return m.as_bytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--poisoned", type=int, default=0, help="default: a tenth of --messages")
    args = parser.parse_args()
    n = args.messages
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python"
        f" {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    root = Path(tempfile.mkdtemp(prefix="bench-inbox-"))
    stores = Stores(root / "data")
    seed(stores, n)
    rng = random.Random(9)
    box = mailbox.Maildir(root / "maildir", create=True)
    for i in range(1, n + 1):
        delivered = mailbox.MaildirMessage(message(i, rng))
        delivered.set_date((SENT + timedelta(hours=3)).timestamp())
        box.add(delivered)

    started = time.perf_counter()
    fetched = read_maildir(root / "maildir", set(), NOW)
    read_s = time.perf_counter() - started
    print(f"read the Maildir: {len(fetched.mails):,} messages in {read_s:.2f} s"
          f" ({len(fetched.mails) / read_s:,.0f} messages/s)")  # fmt: skip

    wall, cpu = time.perf_counter(), time.process_time()
    done = triage(stores, fetched.mails, source="maildir", tz="UTC", now=NOW)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    good_wall = wall
    print(
        f"triage: {n:,} messages in {wall:.2f} s wall, {cpu:.2f} s CPU:"
        f" {n / wall:,.0f} messages/s ({done.matched}, unmatched {done.unmatched},"
        f" {done.episodes_written:,} episodes, {done.warmth_changes:,} warmth changes)"
    )
    wall = time.perf_counter()
    again = triage(stores, fetched.mails, source="maildir", tz="UTC", now=NOW)
    wall = time.perf_counter() - wall
    print(
        f"re-run over the same mail: {n / wall:,.0f} messages/s"
        f" ({again.already_triaged:,} already triaged, {again.episodes_written} new episodes)"
    )

    drop = root / "drop"
    drop.mkdir()
    per_file = n // 10
    for f in range(10):
        ids = range(f * per_file + 1, (f + 1) * per_file + 1)
        signals = [
            {"id": f"s{i}", "kind": "site_visit", "email": f"p{i}@acme{i % 97}.example",
             "at": to_iso(SENT), "pages": ["pricing page"]}
            for i in ids
        ]  # fmt: skip
        (drop / f"{f}.json").write_text(json.dumps({"signals": signals}))
    wall = time.perf_counter()
    taken = take_signals(stores, drop, tz="UTC", now=NOW, warn=lambda _: None)
    wall = time.perf_counter() - wall
    print(
        f"engagement: {taken.signals:,} signals in {taken.processed} files in {wall:.2f} s:"
        f" {taken.signals / wall:,.0f} signals/s ({taken.episodes_written:,} episodes)"
    )
    poisoned = poison(args.poisoned or n // 10)
    wall = time.perf_counter()
    bad = triage(stores, poisoned, source="maildir", tz="UTC", now=NOW)
    wall = time.perf_counter() - wall
    refused = len(bad.taken.refusals) if hasattr(bad, "taken") else getattr(bad, "unreadable", 0)
    print(
        f"poisoned: {len(poisoned):,} hostile messages in {wall:.2f} s:"
        f" {wall / len(poisoned) * 1e6:,.0f} us a message ({len(poisoned) / wall:,.0f}/s;"
        f" {refused:,} refused, {bad.unmatched:,} unmatched); good path:"
        f" {good_wall / n * 1e6:,.0f} us a message"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def poison(count: int) -> list[InboundMail]:
    """`count` hostile mails, each one unique (its Message-ID made its own)."""
    kinds = ("x_", "d4_mdn", "d4_dsn_delivered", "d4_dsn_foreign")
    corpus = [p.read_bytes() for p in sorted(HOSTILE.glob("*.eml")) if p.name.startswith(kinds)]
    mails = []
    for i in range(count):
        raw = corpus[i % len(corpus)].replace(b"Message-ID: <", f"Message-ID: <p{i}.".encode(), 1)
        mails.append(InboundMail(f"maildir:poison{i}", SENT + timedelta(hours=4), raw))
    return mails


if __name__ == "__main__":
    main()
