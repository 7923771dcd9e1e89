"""A deterministic, realistic sample CRM: contacts, their episodes and the messages sent.

Like a real CRM, most contacts are cold and have little history, many have no email
address, and a few warm ones carry most of the story. The same seed and `as_of` always
give the same data, and loading it twice changes nothing (every row has a fixed key).

The world reads true: a company's facts are its page's facts (`company_facts`), its head
count growing slowly at its own rate; outreach follows the engine's rules (working hours
in the contact's timezone, 14 days between messages, two follow-ups at most), and the
replies (stored as the inbox triage stores them: `inbound`, `send_holds`, a `response`
and a `scoring` episode) are obeyed: a bounce, a reply or an unsubscribe ends it, a "not
now" waits for the date it names, an out-of-office delays the next follow-up. Research
follows the research rules too: none while a hold stops the contact, and none twice
inside the 30-day cooldown (`RESEARCH_COOLDOWN_DAYS`). tests/core/test_sample_world.py
replays the history through the rules.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from company_ai.core.inbox import WARMTH_RULE, inbound_episodes, named_date, plural
from company_ai.core.memory import append_episodes
from company_ai.core.outreach import (
    MAX_BUMPS,
    RECENT_DAYS,
    RESEARCH_COOLDOWN_DAYS,
    WORK_END_HOUR,
    WORK_START_HOUR,
    Hold,
    add_hold,
    contact_timezone,
)
from company_ai.core.outreach.send_rules import hold_reason
from company_ai.core.store import Store, Stores, dialect, transaction
from company_ai.core.times import to_iso
from company_ai.sample_world.company_pages import MONTH_NAMES, company_facts, write_company_pages
from company_ai.sample_world.people import SAMPLE_PEOPLE_FILE, write_sample_people

FIRST = (
    "Ada Alan Grace Linus Margaret Tim Barbara Ken Radia Edsger Frances Donald Hedy Katherine"
    " Dennis Sophie Karen Niklaus Joan Guido Zoë José Łukasz Søren Aoife Siobhán Renée Björn"
    " Chloé Mateo Priya Arjun Mei Hiroshi Amara Kwame Fatima Omar Ingrid Nils Elena Marco"
    " Ana Tomás Yusuf Leila Hannah Jonas Clara Felix Rosa Emil Maja Oskar Lucía Pedro"
).split()
LAST = (
    "Lovelace Turing Hopper Torvalds Hamilton Berners-Lee Liskov Thompson Perlman Dijkstra"
    " Allen Knuth Lamarr Johnson Ritchie Wilson Spärck-Jones Wirth Clarke Rossum O'Brien"
    " Müller Nowak Jensen Murphy Ní-Bhriain Dubois Larsson Martin García Sharma Patel Chen"
    " Tanaka Okafor Mensah Haddad Farouk Berg Andersen Petrova Rossi Silva Costa Demir Nasser"
    " Weber Fischer Novak Horvat Lindqvist Moreau Fernández Almeida Kowalski Byrne"
).split()
PREFIX = (
    "North South West East Blue Green Red Silver Golden Bright Clear Swift Solid True"
    " Open Iron Stone River Harbour Summit Cedar Maple Oak Pine Falcon Fox Atlas Nova"
    " Orbit Pixel Quantum Vector Signal Beacon Anchor"
).split()
NOUN = (
    "wind field gate bridge works forge light path point line stone brook wood leaf"
    " peak crest wave tide spark port"
).split()
TRADE = (
    "Logistics Analytics Robotics Foods Health Energy Software Studios Labs Capital"
    " Manufacturing Design Consulting Systems Networks Materials Pharma Media"
).split()
SUFFIX = ("Ltd", "Inc.", "GmbH", "plc", "LLC", "BV", "AB", "SA")
TITLES = (
    "CEO",
    "Founder",
    "CTO",
    "COO",
    "CFO",
    "Head of Operations",
    "Head of Sales",
    "VP Engineering",
    "Operations Manager",
    "Procurement Lead",
    "Marketing Director",
    "Product Manager",
    "Finance Director",
    "Office Manager",
    "Managing Director",
    "IT Manager",
    "Supply Chain Manager",
    "Head of People",
)
CITIES = (
    "London Manchester Leeds Bristol Edinburgh Glasgow Cardiff Belfast Dublin Cork"
    " Amsterdam Rotterdam Berlin Hamburg Munich Paris Lyon Madrid Barcelona Lisbon"
    " Stockholm Oslo Copenhagen Helsinki Warsaw Kraków Prague Vienna Zürich Milan"
).split()
PAGES = (
    "pricing page",
    "case studies",
    "integration docs",
    "careers page",
    "blog post on automation",
    "webinar sign-up",
    "product tour",
    "security page",
)
ANGLES = (
    "cost of manual reporting",
    "their recent hiring push",
    "expansion to a new city",
    "a mutual customer",
    "slow month-end close",
    "supplier onboarding delays",
)


@dataclass(frozen=True)
class SampleSummary:
    contacts: int
    with_email: int
    episodes: int
    messages: int  # episodes and messages count what this load stored (0 on a reload)


@dataclass
class History:
    """One contact's sample history: what the stores would hold had the engine lived it."""

    contact: tuple
    episodes: list[dict]
    messages: list[list]
    inbound: list[tuple] = field(default_factory=list)  # rows of `inbound`
    holds: list[tuple] = field(default_factory=list)  # (contact_id, Hold, evidence)
    scores: list[tuple[datetime, int]] = field(default_factory=list)  # warmth after replies


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.replace("ø", "o").replace("ł", "l"))
    return "".join(c for c in folded if c.isascii() and (c.isalnum() or c == "-")).lower()


def iter_sample(
    *, as_of: datetime, contacts: int = 2000, seed: int = 7, density: float = 1.0
) -> Iterator[tuple[tuple, list[dict], list[list]]]:
    """Per contact: its CRM row, its episodes, and the message rows sent to it, as of `as_of`."""
    for h in iter_world(as_of=as_of, contacts=contacts, seed=seed, density=density):
        yield h.contact, h.episodes, h.messages


def iter_world(
    *, as_of: datetime, contacts: int = 2000, seed: int = 7, density: float = 1.0
) -> Iterator[History]:
    """Per contact, its whole history (`History`), as of `as_of`."""
    as_of = as_of.replace(microsecond=0)
    rng = random.Random(seed)
    next_message_id = 1
    for contact in list(_contacts(rng, contacts, as_of)):
        history = _history(rng, contact, as_of, density, seed, next_message_id)
        next_message_id += len(history.messages)
        yield history


def load_sample(
    stores: Stores,
    *,
    as_of: datetime,
    contacts: int = 2000,
    seed: int = 7,
    density: float = 1.0,
    tz: str = "UTC",
    progress: Callable[[int, int], None] | None = None,
    batch: int = 50_000,
) -> SampleSummary:
    """Generate the sample and load it; `progress(done, total)` is told after each batch."""
    people: list[tuple] = []
    episodes: list[dict] = []
    messages: list[list] = []
    inbound: list[tuple] = []
    holds: list[tuple] = []
    total = 0
    with stores.connect(Store.MEMORY) as memory:
        for history in iter_world(contacts=contacts, as_of=as_of, seed=seed, density=density):
            people.append(history.contact)
            episodes += history.episodes
            messages += history.messages
            inbound += history.inbound
            holds += history.holds
            if len(episodes) >= batch:
                total += _append_history(memory, episodes, as_of, tz)
                episodes.clear()
                if progress:
                    progress(len(people), contacts)
        total += _append_history(memory, episodes, as_of, tz)
    store_contacts(stores, people)
    write_sample_people(stores.data_dir / SAMPLE_PEOPLE_FILE, people)  # the offline People API
    stored_messages = store_messages(stores, messages, inbound, holds)
    write_company_pages(stores)
    if progress:
        progress(len(people), contacts)
    return SampleSummary(len(people), sum(1 for p in people if p[1]), total, stored_messages)


def _append_history(memory, episodes: list[dict], as_of: datetime, tz: str) -> int:
    """The sample's past, appended as if it was recorded as it happened (recorded_at =
    created_at): a replay of a sample day then reads what that day would have recorded."""
    for episode in episodes:
        episode["recorded_at"] = episode["created_at"]
    return append_episodes(memory, episodes, now=as_of, tz=tz).inserted


def store_contacts(stores: Stores, rows: list[tuple]) -> int:
    with stores.connect(Store.CRM) as crm, transaction(crm):
        # Counted, not total_changes (which PostgreSQL has not): the rows the load added.
        (before,) = crm.execute("SELECT count(*) FROM contacts").fetchone()
        crm.executemany(
            "INSERT INTO contacts (id, email, name, company, title, city, warmth, source,"
            " external_id, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"
            " ON CONFLICT (id) DO NOTHING",
            rows,
        )
        stored = crm.execute("SELECT count(*) FROM contacts").fetchone()[0] - before
        crm.execute(  # each contact's address is its primary one (core/crm/people.py)
            "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
            " SELECT email, id, 1, updated_at FROM contacts WHERE email IS NOT NULL"
            " ON CONFLICT (email) DO NOTHING"
        )
        return stored


def store_messages(
    stores: Stores,
    rows: list[list],
    inbound: Sequence[tuple] = (),
    holds: Sequence[tuple[int, Hold, str]] = (),
) -> int:
    """The messages, and the replies and holds the sample's triage would have stored."""
    with stores.connect(Store.OUTREACH) as outreach, transaction(outreach):
        # Counted, not `total_changes` (SQLite's alone): the same on PostgreSQL.
        count = "SELECT count(*) FROM messages"
        before = outreach.execute(count).fetchone()[0]
        outreach.executemany(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, angle, sent_at,"
            " opened_at, replied_at, bounce_status, bump_count, rfc_message_id)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (id) DO NOTHING",
            rows,
        )
        added = outreach.execute(count).fetchone()[0] - before
        if dialect(outreach) == "postgres":
            # Ids given by hand leave the identity behind: the next send must not reuse one.
            outreach.execute(
                "SELECT setval(pg_get_serial_sequence('messages', 'id'),"
                " (SELECT coalesce(max(id), 0) + 1 FROM messages), false)"
            )
        outreach.executemany(
            "INSERT INTO inbound (provider_id, message_id, contact_id, thread_id, kind,"
            " received_at, from_address, subject, body, warmth_before, warmth_after,"
            " warmth_applied, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,1,$12)"
            " ON CONFLICT (provider_id) DO NOTHING",
            inbound,
        )
        for contact_id, hold, evidence in holds:
            add_hold(outreach, contact_id, hold, evidence)
        return added


def _contacts(rng: random.Random, n: int, as_of: datetime) -> Iterator[tuple]:
    companies = []
    for _ in range(max(1, n // 8)):
        name = f"{rng.choice(PREFIX)}{rng.choice(NOUN)} {rng.choice(TRADE)}"
        companies.append((f"{name} {rng.choice(SUFFIX)}", _ascii(name.split()[0]) + ".example"))
    taken: set[str] = set()
    for contact_id in range(1, n + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        company, domain = rng.choice(companies)
        email = None
        if rng.random() < 0.7:  # many real contacts have no address
            base = f"{_ascii(first)}.{_ascii(last)}"
            email, k = f"{base}@{domain}", 2
            while email in taken:
                email, k = f"{base}{k}@{domain}", k + 1
            taken.add(email)
        band = rng.random()  # most contacts are cold
        warmth = (
            rng.randint(0, 20)
            if band < 0.7
            else rng.randint(21, 60)
            if band < 0.9
            else rng.randint(61, 100)
        )
        created = to_iso(as_of - timedelta(days=rng.randint(90, 900)))
        yield (
            contact_id,
            email,
            f"{first} {last}",
            company,
            rng.choice(TITLES),
            rng.choice(CITIES),
            warmth,
            "sample",
            f"sample/{contact_id}",
            created,
            created,
        )


# How likely a contact is written to at all in the window, and answers a message, by warmth
# band (cold, lukewarm, warm).
REACHED = (0.3, 0.6, 0.8)
ANSWERS = (0.12, 0.25, 0.45)
BOUNCES = 0.03
REPLIES = (
    ("reply", 30, "Thanks, this is timely. Could you send pricing for a team of our size?"),
    ("reply", 15, "I've forwarded this to our operations lead, who looks after this."),
    ("not_now", 15, "Not now, we're in the middle of budgeting. Try again next quarter."),
    ("not_now", 10, "Not a priority right now; get back to me in {month}."),
    ("unsubscribe", 10, "Please take me off your list."),
    ("out_of_office", 20, "I am out of the office until {back} with limited access to email."),
)
SENDER = "Sam"


def _band(warmth: int) -> int:
    return 0 if warmth <= 20 else 1 if warmth <= 60 else 2


def _working_slot(rng: random.Random, after: datetime, zone: ZoneInfo) -> datetime:
    """A moment at or after `after` on a weekday between 09:00 and 17:00 in `zone`."""
    local = after.astimezone(zone)
    if local.hour >= WORK_END_HOUR:
        local = (local + timedelta(days=1)).replace(hour=WORK_START_HOUR, minute=0, second=0)
    elif local.hour < WORK_START_HOUR:
        local = local.replace(hour=WORK_START_HOUR, minute=0, second=0)
    while local.weekday() >= 5:
        local = (local + timedelta(days=1)).replace(hour=WORK_START_HOUR, minute=0, second=0)
    end = local.replace(hour=WORK_END_HOUR, minute=0, second=0)
    room = int((end - local).total_seconds()) - 60
    moment = local + timedelta(seconds=rng.randint(0, max(0, room)))
    # a local time that does not exist (a spring-forward gap) is normalised by the round trip
    return moment.astimezone(UTC).replace(microsecond=0)


def _history(
    rng: random.Random,
    contact: tuple,
    as_of: datetime,
    density: float,
    seed: int,
    next_message_id: int,
) -> History:
    """One contact's last 90 days, lived by the engine's rules (core/outreach/send_rules.py): sends
    in their working hours, 14 days apart, at most two follow-ups a thread; a bounce, a
    reply or an unsubscribe stops them; a "not now" waits for the date it names; an
    out-of-office delays the next follow-up to the return date. Company facts come from
    the company's own page facts, changing slowly (`company_facts`)."""
    contact_id, email, name, company, title, city, warmth = contact[:7]
    first_name = name.split()[0]
    domain, facts = _company(company)
    window_start = as_of - timedelta(days=90)
    history = History(contact, [], [])
    if email and rng.random() < min(1.0, REACHED[_band(warmth)] * density):
        _outreach(rng, history, as_of, window_start, seed, next_message_id)
        if history.scores:  # the CRM holds the warmth the replies left
            history.contact = (*contact[:6], history.scores[-1][1], *contact[7:])
    low, high = (0, 6) if warmth <= 20 else (8, 26) if warmth <= 60 else (20, 60)
    count = round(rng.randint(low, high) * density)
    window = 90 * 86400
    times = sorted(as_of - timedelta(seconds=rng.randint(1, window)) for _ in range(count))
    holds = [hold for _, hold, _ in history.holds]
    researched: datetime | None = None
    for n, when in enumerate(times):
        kind = rng.choices(KINDS, cum_weights=CUM_WEIGHTS)[0]
        episode = {
            "contact_id": contact_id,
            "episode_type": kind,
            "created_at": to_iso(when),
            "natural_key": f"sample:{seed}:{contact_id}:{n}",
        }
        if kind == "research":
            # Research obeys the research rules (core/outreach/research.py): never while a
            # hold stops the contact, never twice inside the cooldown. A refused one is
            # still drawn, so the random stream (and every other contact) stays the same.
            refused = hold_reason(holds, to_iso(when), email) is not None or (
                researched is not None
                and when - researched < timedelta(days=RESEARCH_COOLDOWN_DAYS)
            )
            researched = researched if refused else when
            years = (when - as_of).total_seconds() / (365 * 86400)
            headcount = round(facts["people"] * (1 + facts["growth"] / 100) ** years)
            episode |= {
                "source": f"web:{domain}",
                "confidence": round(rng.uniform(0.55, 0.9), 2),
                "content": f"{company} is hiring in {city}; the team page lists "
                f"{plural(headcount, 'person')} and {first_name} leads as {title}.".replace(
                    " persons", " people"
                ),
            }
            if refused:
                continue
        elif kind == "company":
            episode |= {
                "source": "companies_register",
                "confidence": 0.95,
                "content": f"{company} filed accounts showing revenue growth of "
                f"{facts['growth']}% year on year; registered office in {facts['office_city']}.",
            }
        elif kind == "engagement":
            pages = rng.randint(1, 9)
            episode |= {
                "source": rng.choice(["site", "linkedin", "portal"]),
                "confidence": round(rng.uniform(0.8, 1.0), 2),
                "content": f"Viewed the {rng.choice(PAGES)} ({plural(pages, 'page')}).",
            }
        elif kind == "note":
            episode |= {
                "source": "manual",
                "confidence": 1.0,
                "content": rng.choice(
                    [
                        f"Met {first_name} at a {city} meetup; prefers email to calls.",
                        f"Call with {first_name}: budget sits with the {title} role.",
                    ]
                ),
            }
        else:  # scoring: the model's estimate of the warmth the contact had then
            then = next((w for at, w in reversed(history.scores) if at <= when), warmth)
            episode |= {
                "source": "model:warmth",
                "confidence": round(rng.uniform(0.5, 0.9), 2),
                "content": f"Warmth estimated at {then} from recent engagement.",
            }
        history.episodes.append(episode)
    return history


KINDS = ("research", "company", "engagement", "note", "scoring")
CUM_WEIGHTS = (25, 35, 60, 70, 77)  # weights 25, 10, 25, 10, 7


def _outreach(
    rng: random.Random,
    history: History,
    as_of: datetime,
    window_start: datetime,
    seed: int,
    next_message_id: int,
) -> None:
    """The contact's threads, lived by the send rules."""
    contact_id, email, name, company, _, city, warmth = history.contact[:7]
    first_name = name.split()[0]
    zone = _zone(contact_timezone(city))
    moment = window_start + timedelta(seconds=rng.randint(0, 45 * 86400))
    bump, thread, subject, angle = 0, "", "", ""
    while True:
        moment = _working_slot(rng, moment, zone)
        if moment >= as_of:
            return
        message_id = next_message_id
        next_message_id += 1
        if bump == 0:
            angle = rng.choice(ANGLES)
            thread, subject = f"t-{contact_id}-{message_id}", f"{first_name}, a thought on {angle}"
            body = f"Hi {first_name},\n\nA short note about {angle} at {company}.\n"
        else:
            body = f"Hi {first_name},\n\nFollowing up on my note in case it got buried.\n"
        title = subject if bump == 0 else f"Re: {subject}"
        opened_at = moment + timedelta(hours=rng.randint(1, 48))
        row = [
            message_id, contact_id, thread, title, body, angle, to_iso(moment),
            to_iso(opened_at) if rng.random() < 0.5 and opened_at < as_of else None,
            None, "none", bump, f"<sample.{seed}.{message_id}@company-ai.example>",
        ]  # fmt: skip
        history.messages.append(row)
        history.episodes.append(
            {
                "contact_id": contact_id,
                "episode_type": "outreach",
                "source": "outreach",
                "confidence": 1.0,
                "created_at": to_iso(moment),
                "natural_key": f"outreach:message:{message_id}",
                "content": f'Sent "{title}" (message {message_id}, thread {thread},'
                f" bump {bump}) at {to_iso(moment)}.",
            }
        )
        roll = rng.random()
        if roll < BOUNCES:
            received = moment + timedelta(minutes=rng.randint(1, 20))
            row[9] = "hard"
            hold = Hold("bounced", to_iso(received), None, email, "delivery failed (5.1.1)")
            _answer(history, row, "bounce", received, "5.1.1", email, seed, hold)
            return
        received = moment + timedelta(seconds=rng.randint(3600, 4 * 86400))
        if roll < BOUNCES + ANSWERS[_band(warmth)] and received < as_of:
            kind, text = _reply_text(rng, received)
            if kind == "out_of_office":
                received = moment + timedelta(minutes=rng.randint(1, 10))
                back = named_date(text, received.date())
                assert back is not None  # the template names the date
                until = datetime.combine(back, time(0), UTC)
                hold = Hold("out_of_office", to_iso(received), to_iso(until), None, "away")
                _answer(history, row, kind, received, text, email, seed, hold)
                bump += 1
                if bump > MAX_BUMPS:
                    return
                moment = max(moment + timedelta(days=RECENT_DAYS, hours=1), until)
                continue
            row[7] = min(row[7] or to_iso(received), to_iso(received))
            row[8] = to_iso(received)
            if kind == "not_now":
                day = named_date(text, received.date())
                assert day is not None
                until = datetime.combine(day, time(0), UTC)
                hold = Hold("deferred", to_iso(received), to_iso(until), None, "not now")
                _answer(history, row, kind, received, text, email, seed, hold)
                bump, moment = 0, max(until, moment + timedelta(days=RECENT_DAYS, hours=1))
                continue
            kept = "replied" if kind == "reply" else "unsubscribed"
            reason = "replied" if kind == "reply" else "asked to stop"
            hold = Hold(kept, to_iso(received), None, None, reason)
            _answer(history, row, kind, received, text, email, seed, hold)
            return
        bump += 1
        if bump > MAX_BUMPS:
            return
        moment += timedelta(days=RECENT_DAYS, seconds=rng.randint(3600, 7 * 86400))


@lru_cache(maxsize=4096)
def _company(company: str) -> tuple[str, dict]:
    """A sample company's domain (as `_contacts` makes it) and its page's facts."""
    domain = _ascii(company.split()[0]) + ".example"
    return domain, company_facts(company, domain)


@lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _reply_text(rng: random.Random, received: datetime) -> tuple[str, str]:
    kind, _, text = rng.choices(REPLIES, [w for _, w, _ in REPLIES])[0]
    back = received.date() + timedelta(days=rng.randint(3, 16))
    month = MONTH_NAMES[(received.month + rng.randint(1, 3) - 1) % 12]
    return kind, text.format(back=f"{back.day} {MONTH_NAMES[back.month - 1]}", month=month)


def _answer(
    history: History,
    message: list,
    kind: str,
    received: datetime,
    text: str,
    email: str,
    seed: int,
    hold: Hold,
) -> None:
    """The inbound row, hold and episodes the inbox triage would have written for a reply,
    warmth changed by the same rule."""
    contact_id = history.contact[0]
    before = after = None
    if kind in WARMTH_RULE:
        before = history.scores[-1][1] if history.scores else history.contact[6]
        after = max(0, min(100, before + WARMTH_RULE[kind][0]))
        history.scores.append((received, after))
    subject = {
        "bounce": "Undelivered Mail Returned to Sender",
        "out_of_office": f"Automatic reply: {message[3]}",
    }.get(kind, f"Re: {message[3].removeprefix('Re: ')}")
    row = {
        "provider_id": f"sample:{seed}:{message[0]}",
        "message_id": message[0],
        "contact_id": contact_id,
        "thread_id": message[2],
        "kind": kind,
        "received_at": to_iso(received),
        "from_address": email,
        "subject": subject,
        "body": text,
        "warmth_before": before,
        "warmth_after": after,
    }
    history.inbound.append((*row.values(), row["received_at"]))
    history.holds.append((contact_id, hold, row["provider_id"]))
    history.episodes += inbound_episodes(row, "gmail")
