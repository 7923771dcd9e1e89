"""Research: who is researched each day, what is read about them, what the CRM may learn.

The selection rule (`select_candidates`), for the partition day D:
  1. the contact has an email address;
  2. no message to them ever hard-bounced;
  3. nothing was sent to them in the 14 days before D, or at any time since (`RECENT_DAYS`);
  4. no hold stops them at the day's start (core/send_rules.py): a reply (a conversation
     belongs to a person, not this job), an unsubscribe, a bounce to their address, a "not
     now" until the date it named, an out-of-office until its return date;
  5. their latest thread is not already bumped twice without a reply (politely twice, done);
  6. they were not researched in the 30 days before D (`RESEARCH_COOLDOWN_DAYS`);
  7. they are not marked deleted upstream (core/crm/people_sync.py: the address book dropped them);
then warmest first, then the longest since we last wrote, then the lowest id; at most
`RESEARCH_CAP` (20) a day. Every message ever sent counts, whatever day is being picked
for: a late or repeated day never writes to someone a later day already wrote to. The
day's picks are stored (`research_picks`) in one transaction the first time the day
runs, so re-runs, backfills and catch-ups of several days each keep their own 20 and
never pick more.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from company_ai.core.crm import Contact
from company_ai.core.intake import html_text
from company_ai.core.llm import DATA_RULE, quoted
from company_ai.core.outreach.send_rules import bounced_addresses, hold_reason, read_holds
from company_ai.core.store import RESEARCH_CAP, transaction
from company_ai.core.times import Day, to_iso

RECENT_DAYS = 14
RESEARCH_COOLDOWN_DAYS = 30
MAX_BUMPS = 2
# The only CRM columns a model may ever correct. Anything else it proposes is refused.
WRITEBACK_COLUMNS = frozenset({"city", "title", "company"})
MAX_PAGE_BYTES = 256 * 1024
MODEL_CONFIDENCE = 0.6  # what a model paraphrased
EXTRACTED_CONFIDENCE = 0.9  # a sentence found verbatim on the page


class SourceError(ValueError):
    """A research source could not be used (missing, too large, binary); nothing written."""


# --- selection ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    contact_id: int
    warmth: int
    last_sent: str | None


def select_candidates(
    crm: sqlite3.Connection,
    outreach: sqlite3.Connection,
    day: Day,
    cap: int = RESEARCH_CAP,
) -> list[Candidate]:
    """The day's research candidates by the rule in this module's docstring."""
    d = date.fromisoformat(day.key)
    recent = Day.of((d - timedelta(days=RECENT_DAYS)).isoformat(), day.tz).start
    cooldown = (d - timedelta(days=RESEARCH_COOLDOWN_DAYS)).isoformat()
    excluded: set[int] = set()
    last_sent: dict[int, str] = {}
    for contact_id, sent, bounce, bumps in outreach.execute(
        "SELECT contact_id, sent_at, bounce_status, bump_count FROM messages ORDER BY sent_at"
    ):
        last_sent[contact_id] = sent
        if bounce == "hard" or sent >= recent or bumps >= MAX_BUMPS:
            excluded.add(contact_id)
    holds = read_holds(outreach)
    excluded.update(
        cid
        for (cid,) in outreach.execute(
            "SELECT contact_id FROM research_picks WHERE day >= $1 AND day < $2",
            (cooldown, day.key),
        )
    )
    bounced = bounced_addresses(outreach)
    rows = crm.execute(
        "SELECT id, warmth, email FROM contacts"
        " WHERE email IS NOT NULL AND email != '' AND deleted_at IS NULL"
    ).fetchall()
    candidates = [
        Candidate(cid, warmth, last_sent.get(cid))
        for cid, warmth, email in rows
        if cid not in excluded
        and email.lower() not in bounced
        and (cid not in holds or hold_reason(holds[cid], day.start, email) is None)
    ]
    candidates.sort(key=lambda c: (-c.warmth, c.last_sent or "", c.contact_id))
    return candidates[:cap]


def pick_for_day(
    crm: sqlite3.Connection, outreach: sqlite3.Connection, day: Day, now: datetime
) -> list[sqlite3.Row]:
    """The day's picks: chosen and stored the first time (at `now`), then read back unchanged."""
    with transaction(outreach):
        if not outreach.execute(
            "SELECT 1 FROM research_picks WHERE day = $1", (day.key,)
        ).fetchone():
            at = to_iso(now)
            outreach.executemany(
                "INSERT INTO research_picks (day, contact_id, rank, created_at, updated_at)"
                " VALUES ($1, $2, $3, $4, $5)",
                [
                    (day.key, c.contact_id, rank, at, at)
                    for rank, c in enumerate(select_candidates(crm, outreach, day), start=1)
                ],
            )
        return outreach.execute(
            "SELECT * FROM research_picks WHERE day = $1 ORDER BY rank LIMIT $2",
            (day.key, RESEARCH_CAP),
        ).fetchall()


def unsendable_reason(outreach: sqlite3.Connection, contact: Contact | None, at: str) -> str | None:
    """Why we must not write to this contact at `at` (stored UTC time): no address, a
    bounce, or a hold (core/send_rules.py); or None."""
    if contact is None:
        return "the contact is no longer in the CRM"
    if not contact.email:
        return "the contact has no email address"
    bounced = outreach.execute(
        "SELECT 1 FROM messages WHERE contact_id = $1 AND bounce_status = 'hard' LIMIT 1",
        (contact.id,),
    ).fetchone()
    if bounced:
        return "an earlier message to this address hard-bounced"
    if contact.email.lower() in bounced_addresses(outreach):
        return f"mail to {contact.email} bounced"
    return hold_reason(read_holds(outreach, contact.id).get(contact.id, []), at, contact.email)


# --- company pages -----------------------------------------------------------------------


def page_text(raw: bytes, name: str, max_bytes: int = MAX_PAGE_BYTES) -> str:
    """A page's readable text, or SourceError if it is too large, binary or empty."""
    if len(raw) > max_bytes:
        raise SourceError(f"{name} is {len(raw):,} bytes, over the {max_bytes:,}-byte limit")
    if b"\x00" in raw:
        raise SourceError(f"{name} is binary, not a web page")
    try:
        html = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{name} is not UTF-8 text ({exc.reason})") from None
    return readable_text(html, name)


def readable_text(html: str, name: str) -> str:
    """The readable text of an HTML page, one line per block (`intake.html_text`: parsed as
    a browser would, scripts, styles, templates and the head left out), or SourceError."""
    text = html_text(html, MAX_PAGE_BYTES, lines=True)
    if not text:
        raise SourceError(f"{name} has no readable text")
    return text


def read_page(pages_dir: Path, domain: str, max_bytes: int = MAX_PAGE_BYTES) -> str:
    """The local company page of `domain` (`<pages_dir>/<domain>.html`) as text."""
    if not domain or "/" in domain or domain.startswith("."):
        raise SourceError(f"not a company domain: {domain!r}")
    path = pages_dir / f"{domain}.html"
    if not path.is_file():
        raise SourceError(f"no company page for {domain} in {pages_dir}")
    with path.open("rb") as handle:
        raw = handle.read(max_bytes + 1)
    return page_text(raw, path.name, max_bytes)


# --- findings ----------------------------------------------------------------------------


class Fact(BaseModel):
    text: str = Field(min_length=1, max_length=500)
    about: Literal["contact", "company"]


class Findings(BaseModel):
    """What a research pass found: facts from the page, and proposed CRM corrections."""

    facts: list[Fact] = Field(max_length=20)
    corrections: dict[str, str] = Field(default_factory=dict)


RESEARCH_SYSTEM = (
    "You research one business contact from their company's web page. Reply in JSON. "
    "List only facts the page states, each as one sentence copied from the page, marked "
    "'contact' if it is about the person and 'company' otherwise. Under corrections, give "
    "CRM fields the page shows are out of date (title, city, company) with the new value. "
    + DATA_RULE
)


def research_prompt(contact: Contact, page: str) -> str:
    """What the researcher is asked: the CRM row and the page, each quoted as data."""
    row = (
        f"name={contact.name}; company={contact.company}; "
        f"title={contact.title}; city={contact.city}"
    )
    return (
        "Research this contact from their company's page.\n\n"
        + quoted("CRM row", row)
        + "\n\n"
        + quoted("company page", page)
    )


def offline_research(contact: Contact, page: str) -> Findings:
    """The deterministic extractive researcher: sentences copied from the page."""
    facts: list[Fact] = []
    corrections: dict[str, str] = {}
    for line in page.splitlines():
        name, _, rest = line.partition(", ")
        if name == contact.name and rest:
            title, _, city = rest.rpartition(", ")
            facts.append(Fact(text=f"{name} is {title} in {city}.", about="contact"))
            if title and title != contact.title:
                corrections["title"] = title
            if city and city != contact.city:
                corrections["city"] = city
        elif line.endswith(".") and len(line.split()) > 3:
            facts.append(Fact(text=line, about="company"))
    return Findings(facts=facts[:20], corrections=corrections)


def research_episodes(
    *,
    day: str,
    contact_id: int,
    domain: str,
    page: str,
    findings: Findings,
    model_source: str,
    created_at: str,
) -> list[dict]:
    """One episode per fact: `web:<domain>` if the page says it verbatim, else the model's."""
    flat_page = " ".join(page.split())
    episodes = []
    for n, fact in enumerate(findings.facts, start=1):
        verbatim = " ".join(fact.text.split()) in flat_page or _team_line(fact.text, flat_page)
        kind = "research" if fact.about == "contact" else "company"
        episodes.append(
            {
                "contact_id": contact_id,
                "episode_type": kind,
                "content": fact.text,
                "source": f"web:{domain}" if verbatim else model_source,
                "confidence": EXTRACTED_CONFIDENCE if verbatim else MODEL_CONFIDENCE,
                "created_at": created_at,
                "natural_key": f"{kind}:{day}:{contact_id}:{n}",
            }
        )
    return episodes


def _team_line(text: str, page: str) -> bool:
    """'Ada Lovelace is CTO in Leeds.' restates the page's team line 'Ada Lovelace, CTO, Leeds'."""
    name, is_, rest = text.rstrip(".").partition(" is ")
    title, in_, city = rest.rpartition(" in ")
    return bool(is_ and in_) and f"{name}, {title}, {city}" in page


@dataclass(frozen=True)
class Writeback:
    applied: dict[str, str] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # column -> proposed value

    def to_json(self) -> str:
        return json.dumps({"applied": self.applied, "rejected": self.rejected}, sort_keys=True)


def apply_writeback(
    crm: sqlite3.Connection, contact_id: int, corrections: dict[str, str], now: datetime
) -> Writeback:
    """Write the whitelisted corrections (WRITEBACK_COLUMNS) in one transaction, at `now`.

    Every other column, known or not, is rejected and returned; the column names written
    into SQL come only from the hard-coded whitelist, never from the model.
    """
    applied: dict[str, str] = {}
    rejected: dict[str, str] = {}
    for column, value in sorted(corrections.items()):
        clean = " ".join(str(value).split())[:200]
        if column in WRITEBACK_COLUMNS and clean:
            applied[column] = clean
        else:
            rejected[column] = str(value)[:200]
    if applied:
        with transaction(crm):
            for column in sorted(WRITEBACK_COLUMNS & applied.keys()):
                crm.execute(
                    f"UPDATE contacts SET {column} = $1, updated_at = $2 WHERE id = $3",
                    (applied[column], to_iso(now), contact_id),
                )
    return Writeback(applied, rejected)
