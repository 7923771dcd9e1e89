"""A deterministic, realistic sample CRM: contacts, their episodes and the messages sent.

Like a real CRM, most contacts are cold and have little history, many have no email
address, and a few warm ones carry most of the story. The same seed and `as_of` always
give the same data, and loading it twice changes nothing (every row has a fixed key).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from company_ai.core.db import Stores, transaction
from company_ai.core.episodes import append_episodes
from company_ai.core.sample_people import SAMPLE_PEOPLE_FILE, write_sample_people
from company_ai.core.schema import Store
from company_ai.core.times import to_iso
from company_ai.tools.company_pages import write_company_pages

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


def _ascii(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.replace("ø", "o").replace("ł", "l"))
    return "".join(c for c in folded if c.isascii() and (c.isalnum() or c == "-")).lower()


def iter_sample(
    *, as_of: datetime, contacts: int = 2000, seed: int = 7, density: float = 1.0
) -> Iterator[tuple[tuple, list[dict], list[list]]]:
    """Per contact: its CRM row, its episodes, and the message rows sent to it, as of `as_of`."""
    as_of = as_of.replace(microsecond=0)
    rng = random.Random(seed)
    next_message_id = 1
    for contact in list(_contacts(rng, contacts, as_of)):
        episodes, messages = _history(rng, contact, as_of, density, seed, next_message_id)
        next_message_id += len(messages)
        yield contact, episodes, messages


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
    total = 0
    with stores.connect(Store.MEMORY) as memory:
        for contact, history, sent in iter_sample(
            contacts=contacts, as_of=as_of, seed=seed, density=density
        ):
            people.append(contact)
            episodes += history
            messages += sent
            if len(episodes) >= batch:
                total += append_episodes(memory, episodes, tz=tz).inserted
                episodes.clear()
                if progress:
                    progress(len(people), contacts)
        total += append_episodes(memory, episodes, tz=tz).inserted
    store_contacts(stores, people)
    write_sample_people(stores.data_dir / SAMPLE_PEOPLE_FILE, people)  # the offline People API
    stored_messages = store_messages(stores, messages)
    write_company_pages(stores)
    if progress:
        progress(len(people), contacts)
    return SampleSummary(len(people), sum(1 for p in people if p[1]), total, stored_messages)


def store_contacts(stores: Stores, rows: list[tuple]) -> int:
    with stores.connect(Store.CRM) as crm, transaction(crm):
        before = crm.total_changes
        crm.executemany(
            "INSERT INTO contacts (id, email, name, company, title, city, warmth, source,"
            " external_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (id) DO NOTHING",
            rows,
        )
        stored = crm.total_changes - before
        crm.execute(  # each contact's address is its primary one (core/people.py)
            "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
            " SELECT email, id, 1, updated_at FROM contacts WHERE email IS NOT NULL"
            " ON CONFLICT (email) DO NOTHING"
        )
        return stored


def store_messages(stores: Stores, rows: list[list]) -> int:
    with stores.connect(Store.OUTREACH) as outreach, transaction(outreach):
        before = outreach.total_changes
        outreach.executemany(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, angle, sent_at,"
            " opened_at, replied_at, bounce_status, bump_count)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING",
            rows,
        )
        return outreach.total_changes - before


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


def _history(
    rng: random.Random,
    contact: tuple,
    as_of: datetime,
    density: float,
    seed: int,
    next_message_id: int,
) -> tuple[list[dict], list[list]]:
    """One contact's last 90 days: its episodes, and the message rows sent to it."""
    contact_id, email, name, company, title, city, warmth = contact[:7]
    low, high = (0, 6) if warmth <= 20 else (8, 26) if warmth <= 60 else (20, 60)
    count = round(rng.randint(low, high) * density)
    window = 90 * 86400
    times = sorted(as_of - timedelta(seconds=rng.randint(1, window)) for _ in range(count))
    first_name = name.split()[0]
    episodes: list[dict] = []
    messages: list[list] = []
    open_message: list = []  # the last message sent, awaiting a reply
    for n, when in enumerate(times):
        kinds = ["research", "company", "engagement", "note", "scoring"]
        weights = [25, 10, 25, 10, 7]
        if email:
            kinds.append("outreach")
            weights.append(15)
        if open_message:
            kinds.append("response")
            weights.append(30)
        kind = rng.choices(kinds, weights)[0]
        at = to_iso(when)
        key = f"sample:{seed}:{contact_id}:{n}"
        episode = {
            "contact_id": contact_id,
            "episode_type": kind,
            "created_at": at,
            "natural_key": key,
        }
        if kind == "research":
            headcount = rng.randint(12, 900)
            episode |= {
                "source": f"web:{company.split()[0].lower()}.example",
                "confidence": round(rng.uniform(0.55, 0.9), 2),
                "content": f"{company} is hiring in {city}; the team page lists "
                f"{headcount} people and {first_name} leads as {title}.",
            }
        elif kind == "company":
            growth = rng.randint(-5, 40)
            episode |= {
                "source": "companies_register",
                "confidence": 0.95,
                "content": f"{company} filed accounts showing revenue growth of "
                f"{growth}% year on year; registered office in {city}.",
            }
        elif kind == "engagement":
            episode |= {
                "source": rng.choice(["site", "linkedin", "portal"]),
                "confidence": round(rng.uniform(0.8, 1.0), 2),
                "content": f"Viewed the {rng.choice(PAGES)} ({rng.randint(1, 9)} pages).",
            }
        elif kind == "note":
            episode |= {
                "source": "manual",
                "confidence": 1.0,
                "content": rng.choice(
                    [
                        f"Met {first_name} at a {city} meetup; prefers email to calls.",
                        f"{first_name} asked us to get back in touch after the quarter ends.",
                        f"Call with {first_name}: budget sits with the {title} role.",
                    ]
                ),
            }
        elif kind == "scoring":
            episode |= {
                "source": "model:warmth",
                "confidence": round(rng.uniform(0.5, 0.9), 2),
                "content": f"Warmth estimated at {warmth} from recent engagement.",
            }
        elif kind == "outreach":
            message_id = next_message_id
            next_message_id += 1
            angle = rng.choice(ANGLES)
            subject = f"{first_name}, a thought on {angle}"
            opened_when = when + timedelta(hours=rng.randint(1, 48))
            opened = to_iso(opened_when) if rng.random() < 0.5 and opened_when < as_of else None
            bounce = "hard" if rng.random() < 0.03 else "none"
            row = [
                message_id,
                contact_id,
                f"t-{contact_id}-{message_id}",
                subject,
                f"Hi {first_name},\n\nA short note about {angle} at {company}.\n",
                angle,
                at,
                opened,
                None,
                bounce,
                0,
            ]
            messages.append(row)
            open_message = row if bounce == "none" else []
            episode |= {
                "source": "outreach",
                "confidence": 1.0,
                "natural_key": f"outreach:message:{message_id}",
                "content": f'Sent "{subject}" (message {message_id}).',
            }
        else:  # response: the reply also proves the message was opened
            open_message[7] = min(open_message[7] or at, at)
            open_message[8] = at
            episode |= {
                "source": "gmail",
                "confidence": 1.0,
                "content": rng.choice(
                    [
                        f"{first_name} replied: interested, asked for pricing.",
                        f"{first_name} replied: not now, try again next quarter.",
                        f"{first_name} replied: forwarded to a colleague.",
                    ]
                ),
            }
            open_message = []
        episodes.append(episode)
    return episodes, messages
