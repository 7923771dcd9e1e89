"""Drafts written to fool the fabrication gate: a labelled set built apart from the gate.

`adversarial_drafts()` makes a small CRM of its own (names, companies and facts unlike the
sample CRM's), gives each contact real-looking source material (the CRM row, a dated
dossier of episodes and the day's research, laid out as `core/outreach/drafting.py` lays them out)
and writes, for every perturbation class of issue 14, drafts that hide one fabrication
of that class (a flipped hedge, a number with another unit or noun, a swapped currency, a
scale word, a claim moved into the subject, salutation, signature or an address, look-alike
characters, a name in lower case or capitals, a date, a relationship, a superlative, a
role) and fair paraphrases of the same class that must pass.

Every class has several realisations ("variants") of each label. A quarter of the
variants of each class and label (the lowest by a sha256 of their name) are kept aside:
their drafts are never looked at while the gate is tuned, and the benchmark reports on
them apart (`Case.aside`). Holding out whole variants rather than drafts means the aside
quarter tests wordings the gate's author never saw. Deterministic: the same seed gives
the same drafts.
"""

from __future__ import annotations

import hashlib
import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

from company_ai.core.crm import Contact
from company_ai.core.outreach import source_material

SENDER = "Sam Rivers"
SENDER_COMPANY = "Company AI"
SENDER_EMAIL = "sam@companyai.example"
ALLOW = (SENDER, SENDER_COMPANY, SENDER_EMAIL)

STEMS = (
    "Meridian Harrowgate Kestrel Brightwater Copperline Larkspur Thornbury Westmarch Ashgrove"
    " Halcyon Redfern Saltmarsh Fernhill Oakridge Whitcombe Ironbridge Blackthorn Calder"
    " Pennant Greyfriars Wrenfield Holloway Castleton Lindenwood Bramley Quayside Stonechat"
    " Elmstead Northgate Marlowe Tenterden Kingsmere"
).split()
# (trade, what it runs, whom it serves)
SECTORS = (
    ("Freight", "depots", "retailers"),
    ("Foods", "kitchens", "restaurants"),
    ("Clinics", "clinics", "patients"),
    ("Retail", "stores", "suppliers"),
    ("Robotics", "plants", "manufacturers"),
    ("Hotels", "hotels", "travel agents"),
    ("Dental", "practices", "dentists"),
    ("Print", "print sites", "publishers"),
)
SUFFIXES = ("Ltd", "Limited", "plc", "GmbH", "BV", "Inc.")
PRODUCT_WORDS = ("Route", "Desk", "Track", "Loop", "Dock", "Board")
FIRST = (
    "Priya Tomasz Aisling Kofi Ingrid Mateus Yuki Farah Declan Noor Henrik Chiara Idris"
    " Marta Rafael Leonie Samir Eilidh Bogdan Amaka Lorcan Sunita Anneke Teodor Imogen"
    " Callum Dagny Ximena Oluwaseun Rhiannon"
).split()
LAST = (
    "Okonkwo Lindgren Varga Castellanos Achterberg Whitfield Nakamura Rahman O'Sullivan"
    " Brennan Kaur Moretti Haugen Pereira Szabo Delacroix Kowalczyk Fairweather Ashdown"
    " Quigley Thorsen Abernethy Mistry Galbraith Oyelaran Van Dijk"
).split()
TITLES = (
    ("CFO", "chief financial officer"),
    ("COO", "chief operating officer"),
    ("CEO", "chief executive"),
    ("Finance Director", "finance director"),
    ("Head of Operations", "head of operations"),
    ("Operations Manager", "operations manager"),
    ("Founder", "founder"),
    ("Managing Director", "managing director"),
    ("VP Operations", "vice president of operations"),
    ("Procurement Lead", "procurement lead"),
)
CITIES = (
    "Leeds York Bristol Cardiff Glasgow Dublin Galway Utrecht Ghent Lyon Porto Bilbao Aarhus"
    " Gdańsk Brno Graz Zürich Turin Nantes Malmö Kraków"
).split()
MONTHS = (
    "January February March April May June July August September October November December"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday".split()
# Names outside the CRM that a drafter's marketing reflex reaches for.
OUTSIDE = ("Globex", "Initech", "Calendly", "Stripe", "Zapier", "Umbrella Corp", "Hooli")
AWARDS = ("Northern Logistics Award", "Regional Growth Award", "Green Business Award")
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    " fifteen sixteen seventeen eighteen nineteen"
).split()
TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


ZWSP = "\u200b"  # a zero-width space


def _ascii(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalpha())


def fold(text: str) -> str:
    """`text` without its accents: "Malmö" -> "Malmo"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def in_words(n: int) -> str:
    """0..99 in English words."""
    if n < 20:
        return NUMBER_WORDS[n]
    tens, unit = divmod(n, 10)
    return TENS_WORDS[tens - 2] + (f"-{NUMBER_WORDS[unit]}" if unit else "")


def nice(n: int, *, above: bool, within: float) -> int | None:
    """The roundest number strictly above (or below) `n` and within `within` of it."""
    for step in (1000, 500, 100, 50, 25, 10, 5, 1):
        x = (n // step + 1) * step if above else (n - 1) // step * step
        if x > 0 and abs(x - n) <= within * n:
            return x
    return None


def near(n: int, within: float) -> int:
    """The roundest number within `within` of `n` (`n` itself if none is rounder)."""
    for step in (1000, 500, 100, 50, 25, 10, 5):
        x = round(n / step) * step
        if x > 0 and abs(x - n) <= within * n:
            return x
    return n


def money(amount: int, currency: str) -> str:
    return f"{currency}{amount / 1_000_000:g}M" if amount >= 1_000_000 else f"{currency}{amount:,}"


@dataclass(frozen=True)
class Facts:
    """One contact, their company and what the research says about it."""

    contact: Contact
    first: str
    last: str
    title: str
    title_words: str  # the title spelled out: "chief financial officer"
    short: str  # the company without its suffix
    product: str
    trade: str
    site_noun: str
    customer_noun: str
    people: int
    growth: int
    sites: int
    customers: int
    reply_minutes: int
    onboarding: str  # "a month", "two weeks"
    raised: int
    currency: str
    raised_year: int
    office_city: str
    office_date: tuple[int, int, int]
    launch: tuple[int, int]  # (quarter, year)
    open_roles: int
    doubled: bool  # the research says orders doubled
    award: str | None  # "the Green Business Award"
    largest: bool  # the research calls it the largest of its kind in its city


@dataclass(frozen=True)
class Piece:
    """What a variant writes: a body sentence and any part it moves a claim into, plus
    the dossier lines or findings the sources gain (the evidence a fair draft uses)."""

    sentence: str = ""
    subject: str | None = None
    greeting: str | None = None
    signature: tuple[str, ...] | None = None
    dossier: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    key: str
    perturbation: str
    variant: str
    fabricated: bool
    subject: str
    body: str
    sources: list[str]
    aside: bool

    @property
    def parts(self) -> dict[str, str]:
        return {"subject": self.subject, "body": self.body}


@dataclass
class World:
    """The set's CRM: every contact's facts, and the names a gate may know."""

    people: list[Facts] = field(default_factory=list)

    def others(self, f: Facts) -> list[Facts]:
        return [o for o in self.people if o.short != f.short]

    @property
    def known(self) -> tuple[str, ...]:
        """Every company, product and person in the CRM."""
        names = set()
        for p in self.people:
            names |= {p.contact.name, p.short, p.product, p.contact.company or ""}
        return tuple(sorted(names))


def make_world(n: int, rng: random.Random) -> World:
    world = World()
    stems = rng.sample(STEMS, min(len(STEMS), max(1, n // 2 + 1)))
    for i in range(n):
        stem = stems[i % len(stems)]
        trade, site_noun, customer_noun = SECTORS[STEMS.index(stem) % len(SECTORS)]
        short = f"{stem} {trade}"
        company = f"{short} {SUFFIXES[STEMS.index(stem) % len(SUFFIXES)]}"
        first, last = rng.choice(FIRST), rng.choice(LAST)
        title, title_words = rng.choice(TITLES)
        city = rng.choice(CITIES)
        domain = stem.lower() + ".example"
        contact = Contact(
            id=100 + i,
            name=f"{first} {last}",
            email=f"{first.lower()}.{_ascii(last)}@{domain}",
            company=company,
            title=title,
            city=city,
            warmth=rng.randint(0, 100),
        )
        people = rng.choice([rng.randint(14, 95), rng.randint(120, 980), rng.randint(1100, 4800)])
        world.people.append(
            Facts(
                contact=contact,
                first=first,
                last=last,
                title=title,
                title_words=title_words,
                short=short,
                product=f"{stem} {PRODUCT_WORDS[STEMS.index(stem) % len(PRODUCT_WORDS)]}",
                trade=trade,
                site_noun=site_noun,
                customer_noun=customer_noun,
                people=people,
                growth=rng.randint(11, 64),
                sites=rng.choice([rng.randint(3, 9), 12, rng.randint(14, 38), rng.randint(40, 90)]),
                customers=rng.choice(
                    [rng.randint(30, 95), rng.randint(210, 940), rng.randint(2100, 9400)]
                ),
                reply_minutes=rng.randint(33, 58),
                onboarding=rng.choice(["a month", "a week", "two weeks", "three months"]),
                raised=rng.choice([rng.randint(2, 9) * 100_000, rng.randint(11, 48) * 100_000]),
                currency=rng.choice("$£€"),
                raised_year=rng.randint(2019, 2025),
                office_city=rng.choice([c for c in CITIES if c != city]),
                office_date=(rng.randint(2024, 2026), rng.randint(1, 12), rng.randint(1, 28)),
                launch=(rng.randint(1, 4), rng.randint(2023, 2026)),
                open_roles=rng.randint(2, 9),
                doubled=rng.random() < 0.4,
                award=f"the {rng.choice(AWARDS)}" if rng.random() < 0.5 else None,
                largest=rng.random() < 0.5,
            )
        )
    return world


def episode(day: str, kind: str, source: str, content: str) -> str:
    """A dossier line as `core/crm/dossier.py` writes it."""
    return f"{day}: {kind} (from {source}): {content}"


def base_dossier(f: Facts, rng: random.Random) -> list[str]:
    lines = [
        episode(
            "2026-09-02",
            "research",
            f"web:{f.short.split()[0].lower()}.example, confidence 0.74",
            f"{f.contact.company} is hiring in {f.contact.city}; {f.first} leads as {f.title}.",
        ),
        episode(
            "2026-10-14",
            "engagement",
            "site",
            f"Viewed the {rng.choice(['pricing page', 'product tour', 'security page'])}"
            f" ({f.open_roles} pages).",
        ),
    ]
    if rng.random() < 0.5:
        lines.append(
            episode("2026-11-03", "scoring", "model:warmth, confidence 0.66", "Warmth estimated.")
        )
    return lines


def research(f: Facts) -> list[str]:
    y, m, d = f.office_date
    q, qy = f.launch
    found = [
        f"{f.short} now employs {f.people:,} people across {f.sites} {f.site_noun}.",
        f"Revenue grew {f.growth}% last year, led by {f.product}.",
        f"It serves {f.customers:,} {f.customer_noun}; support replies within"
        f" {f.reply_minutes} minutes on average.",
        f"Onboarding a new client takes {f.onboarding}.",
        f"In {f.raised_year} it raised {f.currency}{f.raised:,} from investors.",
        f"It opened an office in {f.office_city} on {d} {MONTHS[m - 1]} {y}.",
        f"{f.product} launched in Q{q} {qy}.",
        f"The careers page lists {f.open_roles} open roles.",
    ]
    if f.doubled:
        found.append("Orders doubled in 2025.")
    if f.award:
        found.append(f"{f.short} won {f.award} in {f.raised_year}.")
    if f.largest:
        found.append(
            f"It calls itself the largest independent {f.trade.lower()} group in {f.contact.city}."
        )
    return found


# --- the perturbation classes: each variant returns a Piece, or None where it cannot apply --

Variant = Callable[[Facts, World, random.Random], Piece | None]


def other(f: Facts, w: World, r: random.Random) -> Facts:
    return r.choice(w.others(f))


def quarter_word(q: int) -> str:
    return ("first", "second", "third", "fourth")[q - 1]


def wrong(n: int, r: random.Random, lo: float = 0.2, hi: float = 0.6) -> int:
    """A number clearly not `n`: 20-60 % away, never equal."""
    x = round(n * (1 + r.choice([-1, 1]) * r.uniform(lo, hi)))
    return x if x != n and x > 0 else n + 7


P = Piece
CLASSES: dict[str, dict[bool, dict[str, Variant]]] = {
    "hedge": {
        True: {
            "more-than-above": lambda f, w, r: P(
                f"Revenue up more than {f.growth + r.randint(2, 6)}% last year is a real"
                " achievement."
            ),
            "over-above": lambda f, w, r: (
                P(f"{f.short} now has over {nice(f.people, above=True, within=0.3)} people.")
                if nice(f.people, above=True, within=0.3)
                else None
            ),
            "nearly-far-above": lambda f, w, r: P(
                f"Serving nearly {near(round(f.customers * r.uniform(1.09, 1.25)), 0.02):,}"
                f" {f.customer_noun} is no small thing."
            ),
            "under-below": lambda f, w, r: P(
                f"Support that replies in under {f.reply_minutes - r.randint(2, 9)} minutes"
                " sets a high bar."
            ),
            "at-least-above": lambda f, w, r: P(
                f"With at least {f.sites + r.randint(2, 5)} {f.site_noun}, scheduling must be"
                " a puzzle."
            ),
            "almost-far-above": lambda f, w, r: P(
                f"Almost {near(round(f.people * r.uniform(1.1, 1.3)), 0.03):,} people now work"
                f" at {f.short}."
            ),
            "fewer-than-below": lambda f, w, r: (
                P(
                    f"Running fewer than {max(2, f.sites - r.randint(2, 4))} {f.site_noun} keeps"
                    " things simple."
                )
                if f.sites > 4
                else None
            ),
            "about-far": lambda f, w, r: P(
                f"Growing revenue by about {round(f.growth * r.uniform(1.3, 1.6))}% is impressive."
            ),
        },
        False: {
            "more-than-below": lambda f, w, r: (
                P(
                    f"Revenue up more than {nice(f.growth, above=False, within=0.2)}% last year"
                    " is a real achievement."
                )
                if nice(f.growth, above=False, within=0.2)
                else None
            ),
            "over-below": lambda f, w, r: (
                P(f"{f.short} now has over {nice(f.people, above=False, within=0.15):,} people.")
                if nice(f.people, above=False, within=0.15)
                else None
            ),
            "nearly-just-above": lambda f, w, r: (
                P(
                    f"Serving nearly {nice(f.customers, above=True, within=0.04):,}"
                    f" {f.customer_noun} is no small thing."
                )
                if nice(f.customers, above=True, within=0.04)
                else None
            ),
            "under-above": lambda f, w, r: (
                P(
                    f"Support that replies in under {nice(f.reply_minutes, above=True, within=0.2)}"
                    " minutes sets a high bar."
                )
                if nice(f.reply_minutes, above=True, within=0.2)
                else None
            ),
            "about-close": lambda f, w, r: P(
                f"About {near(f.people, 0.06):,} people now work at {f.short}."
            ),
            "roughly-close": lambda f, w, r: P(
                f"Growing revenue by roughly {near(f.growth, 0.1)}% is impressive."
            ),
            "at-least-below": lambda f, w, r: (
                P(
                    f"With at least {nice(f.sites, above=False, within=0.2)} {f.site_noun},"
                    " scheduling must be a puzzle."
                )
                if nice(f.sites, above=False, within=0.2)
                else None
            ),
            "almost-just-above": lambda f, w, r: (
                P(
                    f"Almost {nice(f.people, above=True, within=0.04):,} people now work at"
                    f" {f.short}."
                )
                if nice(f.people, above=True, within=0.04)
                else None
            ),
        },
    },
    "number-meaning": {
        True: {
            "percent-as-sites": lambda f, w, r: (
                P(f"Running {f.growth} {f.site_noun} is a serious operation.")
                if f.growth != f.sites
                else None
            ),
            "count-as-percent": lambda f, w, r: (
                P(f"Growing {f.sites}% in a year takes a strong team.")
                if f.sites != f.growth
                else None
            ),
            "digit-borrowed": lambda f, w, r: P(
                f"Revenue grew {f.open_roles}% last year, which is still growth."
            ),
            "percent-as-multiple": lambda f, w, r: P(
                f"{f.product} users close the month {f.growth}x faster, I hear."
            ),
            "people-as-customers": lambda f, w, r: (
                P(f"{f.people:,} {f.customer_noun} rely on {f.product}.")
                if f.people != f.customers
                else None
            ),
            "minutes-as-people": lambda f, w, r: P(
                f"A {f.reply_minutes}-person support team is a big investment."
            ),
            "people-as-percent": lambda f, w, r: (
                P(f"Retention of {f.open_roles * 10 + f.sites % 10}% is rare in {f.trade.lower()}.")
                if f.open_roles * 10 + f.sites % 10 not in (f.growth, f.sites)
                else None
            ),
            "year-as-count": lambda f, w, r: (
                P(f"{f.raised_year - 2000} {f.site_noun} is a big footprint.")
                if f.raised_year - 2000 != f.sites
                else None
            ),
        },
        False: {
            "staff-synonym": lambda f, w, r: P(f"{f.short} now has {f.people:,} staff."),
            "team-of": lambda f, w, r: P(f"A team of {f.people} is a lot to keep in step."),
            "strong-team": lambda f, w, r: P(f"A {f.people}-strong team needs tidy reporting."),
            "per-cent-spelled": lambda f, w, r: P(
                f"Revenue up {f.growth} per cent last year is a real achievement."
            ),
            "percent-words": lambda f, w, r: P(
                f"Congratulations on {in_words(f.growth)} percent growth last year."
            ),
            "sites-exact": lambda f, w, r: P(
                f"Keeping {f.sites} {f.site_noun} in step is hard work."
            ),
            "customers-no-comma": lambda f, w, r: P(
                f"Serving {f.customers} {f.customer_noun} is no small thing."
            ),
            "employees-synonym": lambda f, w, r: P(
                f"With {f.people:,} employees, month-end must be busy."
            ),
        },
    },
    "unit": {
        True: {
            "minutes-to-seconds": lambda f, w, r: P(
                f"Support replies within {f.reply_minutes} seconds, which is remarkable."
            ),
            "minutes-to-hours": lambda f, w, r: P(
                f"Replying to clients within {f.reply_minutes} hours still leaves room to grow."
            ),
            "onboarding-unit": lambda f, w, r: P(
                "Onboarding a new client in "
                + {"a month": "a day", "a week": "a day", "two weeks": "two days"}.get(
                    f.onboarding, "three weeks"
                )
                + " is fast."
            ),
            "currency-swap": lambda f, w, r: P(
                f"Raising {money(f.raised, r.choice([c for c in '$£€¥' if c != f.currency]))}"
                f" in {f.raised_year} must have been a milestone."
            ),
            "currency-word-swap": lambda f, w, r: P(
                f"Raising {f.raised / 1_000_000:g} million "
                + {"$": "pounds", "£": "euros", "€": "dollars"}[f.currency]
                + " was a milestone."
            ),
            "months-to-years": lambda f, w, r: P(
                f"Onboarding in {f.onboarding.replace('month', 'year').replace('week', 'month')}"
                " seems long."
            ),
            "minutes-to-days": lambda f, w, r: P(
                f"Answering {f.customer_noun} within {f.reply_minutes} days is steady work."
            ),
        },
        False: {
            "mins-abbrev": lambda f, w, r: P(
                f"Support replies within {f.reply_minutes} mins, which is remarkable."
            ),
            "minute-hyphen": lambda f, w, r: P(f"A {f.reply_minutes}-minute reply time is rare."),
            "onboarding-same": lambda f, w, r: P(
                f"Onboarding a new client in {f.onboarding} is fast."
            ),
            "currency-written-out": lambda f, w, r: P(
                f"Raising {f.raised:,} "
                + {"$": "dollars", "£": "pounds", "€": "euros"}[f.currency]
                + f" in {f.raised_year} must have been a milestone."
            ),
            "currency-short": lambda f, w, r: P(
                f"Raising {money(f.raised, f.currency)} in {f.raised_year} was a milestone."
            ),
            "currency-code": lambda f, w, r: P(
                "Raising "
                + {"$": "USD", "£": "GBP", "€": "EUR"}[f.currency]
                + f" {f.raised:,} in {f.raised_year} was a milestone."
            ),
            "minutes-words": lambda f, w, r: P(
                f"Replying within {in_words(f.reply_minutes)} minutes is rare."
            ),
        },
    },
    "scale": {
        True: {
            "dozen": lambda f, w, r: (
                P(f"Running a dozen {f.site_noun} takes real coordination.")
                if not 10 <= f.sites <= 14
                else None
            ),
            "hundreds": lambda f, w, r: (
                P(f"Hundreds of {f.customer_noun} now rely on you.")
                if not 200 <= f.customers < 1000
                else None
            ),
            "thousands": lambda f, w, r: (
                P(f"Thousands of {f.customer_noun} rely on you.") if f.customers < 1500 else None
            ),
            "doubled": lambda f, w, r: (
                P("Doubling revenue last year is quite a story.") if not f.doubled else None
            ),
            "twice": lambda f, w, r: (
                P(f"Having twice as many {f.site_noun} as a year ago is quite a change.")
                if not f.doubled
                else None
            ),
            "in-half": lambda f, w, r: P(
                f"Cutting onboarding time in half is what {f.product} is known for."
            ),
            "tripled": lambda f, w, r: P(f"{f.short} tripled its team in two years."),
            "dozens": lambda f, w, r: (
                P(f"Dozens of {f.site_noun} is a big footprint.") if f.sites < 20 else None
            ),
        },
        False: {
            "million-word": lambda f, w, r: P(
                f"Raising {f.currency}{f.raised / 1_000_000:g} million in {f.raised_year} must"
                " have been a milestone."
            ),
            "m-lower": lambda f, w, r: P(
                f"Raising {f.currency}{f.raised / 1_000_000:g}m was a big step."
            ),
            "hundreds-true": lambda f, w, r: (
                P(f"Hundreds of {f.customer_noun} now rely on you.")
                if 200 <= f.customers < 1000
                else None
            ),
            "thousands-true": lambda f, w, r: (
                P(f"Thousands of {f.customer_noun} rely on you.") if f.customers >= 2000 else None
            ),
            "dozen-true": lambda f, w, r: (
                P(f"Running a dozen {f.site_noun} takes real coordination.")
                if f.sites == 12
                else None
            ),
            "doubled-true": lambda f, w, r: (
                P("Doubling orders last year is quite a story.") if f.doubled else None
            ),
            "twice-true": lambda f, w, r: (
                P("Twice the orders is quite a change.") if f.doubled else None
            ),
            "dozens-true": lambda f, w, r: (
                P(f"Dozens of {f.site_noun} is a big footprint.") if 24 <= f.sites < 100 else None
            ),
        },
    },
    "subject": {
        True: {
            "hello-from-other": lambda f, w, r: P(
                subject=f"Hello from {other(f, w, r).contact.company}"
            ),
            "wrong-growth": lambda f, w, r: P(
                subject=f"Congrats on {f.growth + r.randint(5, 15)}% growth"
            ),
            "plus-other": lambda f, w, r: P(subject=f"{f.short} + {r.choice(OUTSIDE)}?"),
            "re-call": lambda f, w, r: P(subject=f"Re: our call on {r.choice(WEEKDAYS)}"),
            "suggested": lambda f, w, r: P(
                subject=f"{f.first}, {other(f, w, r).contact.name} suggested I write"
            ),
            "saving-hours": lambda f, w, r: P(
                subject=f"Saving {f.short} {r.randint(12, 40)} hours a month"
            ),
        },
        False: {
            "thought-on": lambda f, w, r: P(subject=f"{f.first}, a thought on month-end close"),
            "right-growth": lambda f, w, r: P(subject=f"Congrats on {f.growth}% growth"),
            "hello-from-sender": lambda f, w, r: P(subject=f"Hello from {SENDER_COMPANY}"),
            "about-product": lambda f, w, r: P(subject=f"Quick question about {f.product}"),
            "new-office": lambda f, w, r: P(subject=f"{f.short}'s new {f.office_city} office"),
            "hi-name": lambda f, w, r: P(subject=f"Hi {f.first}"),
        },
    },
    "salutation": {
        True: {
            "and-other-team": lambda f, w, r: P(
                greeting=f"Hi {f.first} and the {other(f, w, r).short.split()[0]} team,"
            ),
            "everyone-at": lambda f, w, r: P(
                greeting=f"Dear {f.first} (and everyone at {r.choice(OUTSIDE)}),"
            ),
            "wrong-person": lambda f, w, r: (
                lambda o: P(greeting=f"Hello {o.contact.name},") if o.first != f.first else None
            )(other(f, w, r)),
            "congrats-award": lambda f, w, r: (
                P(greeting=f"Hi {f.first}, congrats on the {r.choice(AWARDS)}!")
                if not f.award
                else None
            ),
            "greeting-city": lambda f, w, r: P(
                greeting=f"Good morning {f.first}, from a rainy"
                f" {r.choice([c for c in CITIES if c not in (f.contact.city, f.office_city)])}!"
            ),
        },
        False: {
            "and-own-team": lambda f, w, r: P(
                greeting=f"Hi {f.first} and the {f.short.split()[0]} team,"
            ),
            "full-name": lambda f, w, r: P(greeting=f"Dear {f.contact.name},"),
            "and-team": lambda f, w, r: P(greeting=f"Hello {f.first} and team,"),
            "good-morning": lambda f, w, r: P(greeting=f"Good morning {f.first},"),
            "hi-there": lambda f, w, r: P(greeting="Hi there,"),
        },
    },
    "signature": {
        True: {
            "trusted-by": lambda f, w, r: P(
                signature=(SENDER, SENDER_COMPANY, f"Trusted by {r.randint(120, 900)} teams")
            ),
            "number-one": lambda f, w, r: P(
                signature=(SENDER, f"{SENDER_COMPANY}, the #1 close platform")
            ),
            "award-winning": lambda f, w, r: P(
                signature=(SENDER, f"{SENDER_COMPANY} | Award-winning since 2019")
            ),
            "rated": lambda f, w, r: P(
                signature=(SENDER, f"Rated 4.9/5 by {r.randint(200, 600)} finance teams")
            ),
            "used-by": lambda f, w, r: P(
                signature=(SENDER, f"Used by {other(f, w, r).short} and {r.choice(OUTSIDE)}")
            ),
        },
        False: {
            "name-company": lambda f, w, r: P(signature=(SENDER, SENDER_COMPANY)),
            "phone": lambda f, w, r: P(signature=(SENDER, SENDER_COMPANY, "+44 20 7946 0018")),
            "email": lambda f, w, r: P(signature=(SENDER, SENDER_EMAIL)),
            "pipe": lambda f, w, r: P(signature=(f"{SENDER} | {SENDER_COMPANY}",)),
            "title": lambda f, w, r: P(signature=(f"{SENDER}, Account Executive", SENDER_COMPANY)),
        },
    },
    "address": {
        True: {
            "local-part": lambda f, w, r: P(
                f"Write to top{r.choice([5, 10, 3])}@companyai.example for the details."
            ),
            "url-path": lambda f, w, r: P(
                "See companyai.example/award-winning-close for how it works."
            ),
            "other-case-study": lambda f, w, r: P(
                f"Our case study is at {other(f, w, r).short.split()[0].lower()}.example/"
                "case-study."
            ),
            "url-number": lambda f, w, r: P(
                f"Details: https://companyai.example/{r.randint(200, 900)}-customers"
            ),
            "other-email": lambda f, w, r: P(
                f"Your colleague {other(f, w, r).contact.email} asked me to write."
            ),
        },
        False: {
            "sender-email": lambda f, w, r: P(f"Reply to {SENDER_EMAIL} any time."),
            "sender-site": lambda f, w, r: P("There is more at companyai.example."),
            "own-email": lambda f, w, r: P(
                f"I have {f.contact.email} on file; tell me if another address suits."
            ),
            "own-domain": lambda f, w, r: P(
                f"I was reading {f.short.split()[0].lower()}.example this morning."
            ),
            "https-sender": lambda f, w, r: P("Details: https://companyai.example"),
        },
    },
    "look-alike": {
        True: {
            "l-for-1": lambda f, w, r: (
                P(f"A team of l{f.people % 100 + 50} is a lot to manage.")
                if f.people != int(f"1{f.people % 100 + 50}")
                else None
            ),
            "superscript": lambda f, w, r: P(
                f"Revenue up {''.join('⁰¹²³⁴⁵⁶⁷⁸⁹'[int(c)] for c in str(f.growth + 9))}% is"
                " impressive."
            ),
            "zero-width-digit": lambda f, w, r: P(
                f"Revenue up {f.growth // 10 + 1}\u200b{f.growth % 10}% is impressive."
            ),
            "fullwidth-digit": lambda f, w, r: P(
                "Revenue up "
                + "".join(chr(0xFF10 + int(c)) for c in str(f.growth + 5))
                + "% is impressive."
            ),
            "cyrillic-name": lambda f, w, r: P(
                "We already work with "
                + r.choice(OUTSIDE[:3]).replace("o", "\u043e").replace("e", "\u0435")
                + "."
            ),
            "zero-width-name": lambda f, w, r: P(
                "We already work with " + other(f, w, r).short.replace(" ", ZWSP, 1) + "."
            ),
            "o-for-0": lambda f, w, r: P(f"Revenue up {f.growth // 10 + 1}O% is impressive."),
        },
        False: {
            "nbsp": lambda f, w, r: P(f"{f.short} now employs {f.people}\u00a0people."),
            "fullwidth-true": lambda f, w, r: P(
                "Revenue up "
                + "".join(chr(0xFF10 + int(c)) for c in str(f.growth))
                + "% is impressive."
            ),
            "curly-quotes": lambda f, w, r: P(
                f"{f.short}\u2019s \u201c{f.product}\u201d looks good."
            ),
            "zero-width-true": lambda f, w, r: P(
                "Congrats on " + f.product.replace(" ", ZWSP + " ") + "."
            ),
            "accents-folded": lambda f, w, r: P(f"The {fold(f.office_city)} office must be busy."),
            "narrow-nbsp-thousands": lambda f, w, r: P(
                f"Serving {f.customers:,} {f.customer_noun}".replace(",", "\u202f")
                + " is no small thing."
            ),
        },
    },
    "lowercase-name": {
        True: {
            "work-with": lambda f, w, r: P(f"We already work with {other(f, w, r).short.lower()}."),
            "product-users": lambda f, w, r: P(
                f"{other(f, w, r).product.lower()} users tell us the close got easier."
            ),
            "person": lambda f, w, r: P(
                f"{other(f, w, r).contact.name.lower()} suggested I get in touch."
            ),
            "teams-at": lambda f, w, r: P(
                f"Teams at {other(f, w, r).short.split()[0].lower()} switched last spring."
            ),
            "like-other": lambda f, w, r: P(
                f"Companies like {other(f, w, r).contact.company.lower()} use us."  # type: ignore[union-attr]
            ),
        },
        False: {
            "own-company": lambda f, w, r: P(f"Congrats to everyone at {f.short.lower()}."),
            "own-product": lambda f, w, r: P(f"{f.product.lower()} looks like a neat product."),
            "own-first": lambda f, w, r: P(f"thanks, {f.first.lower()}, for reading this far."),
            "city-lower": lambda f, w, r: P(f"The {f.office_city.lower()} office must be busy."),
            "own-stem": lambda f, w, r: P(
                f"Everyone at {f.short.split()[0].lower()} must be proud."
            ),
        },
    },
    "name-case": {
        True: {
            "opening-ly-name": lambda f, w, r: P(
                f"{r.choice(['Calendly', 'Bookly', 'Shiftly', 'Ledgerly'])} shows your team"
                " is booking more demos."
            ),
            "opening-other": lambda f, w, r: P(
                f"{other(f, w, r).short.split()[0]} switched to us last spring."
            ),
            "caps-other": lambda f, w, r: P(
                f"{other(f, w, r).short.upper()} already uses {SENDER_COMPANY}."
            ),
            "opening-outside": lambda f, w, r: P(
                f"{r.choice(OUTSIDE)} cut its close time with us."
            ),
            "opening-ing-name": lambda f, w, r: P(
                f"{r.choice(['Routing', 'Tracking', 'Booking'])}Hub rolled us out across"
                f" {f.site_noun}."
            ),
        },
        False: {
            "caps-own": lambda f, w, r: P(f"{f.short.upper()} is clearly growing."),
            "impressive": lambda f, w, r: P(f"Impressive growth at {f.short}."),
            "huge": lambda f, w, r: P(f"Huge congratulations on the {f.office_city} office."),
            "clearly": lambda f, w, r: P(f"Clearly {f.short} is on the move."),
            "honestly": lambda f, w, r: P(f"Honestly, {f.product} looks great."),
            "brilliant": lambda f, w, r: P(f"Brilliant news about {f.product}."),
            "opening-own": lambda f, w, r: P(f"{f.short.split()[0]} is clearly busy."),
        },
    },
    "date": {
        True: {
            "lower-month": lambda f, w, r: P(
                f"Opening in {f.office_city} in {MONTHS[f.office_date[1] % 12].lower()} was a"
                " bold move."
            ),
            "quarter-lower": lambda f, w, r: P(
                f"{f.product} launching in q{f.launch[0] % 4 + 1} caught my eye."
            ),
            "quarter-words": lambda f, w, r: P(
                f"{f.product} launching in the {quarter_word(f.launch[0] % 4 + 1)} quarter"
                " caught my eye."
            ),
            "earlier-this-year": lambda f, w, r: P(
                f"I saw {f.short} raised money earlier this year."
            ),
            "weekday-question": lambda f, w, r: P(
                f"Following our chat on {r.choice(WEEKDAYS)}, are you free next week?"
            ),
            "wrong-year": lambda f, w, r: P(
                f"Raising money in {f.raised_year - r.randint(1, 3)} must have been a milestone."
            ),
        },
        False: {
            "lower-month-true": lambda f, w, r: P(
                f"Opening in {f.office_city} in {MONTHS[f.office_date[1] - 1].lower()}"
                f" {f.office_date[0]} was a bold move."
            ),
            "quarter-true": lambda f, w, r: P(
                f"{f.product} launching in q{f.launch[0]} caught my eye."
            ),
            "quarter-year-true": lambda f, w, r: P(
                f"{f.product} launching in Q{f.launch[0]} {f.launch[1]} caught my eye."
            ),
            "proposal-question": lambda f, w, r: P(
                f"Are you free on {r.choice(WEEKDAYS)} for a short call?"
            ),
            "weekday-or": lambda f, w, r: P("Would Tuesday or Wednesday suit you?"),
            "since-year": lambda f, w, r: P(
                f"Since raising money in {f.raised_year}, {f.short} has grown fast."
            ),
        },
    },
    "relationship": {
        True: {
            "discussed-call": lambda f, w, r: P(
                "As we discussed on our call, here are the details."
            ),
            "introduction": lambda f, w, r: P("Following our introduction, I wanted to write."),
            "long-time-customer": lambda f, w, r: P(
                "As a long-time customer, you will get early access."
            ),
            "proposal": lambda f, w, r: P("Per my proposal last week, the pricing stands."),
            "met-at": lambda f, w, r: P(
                f"It was great to meet you at the {f.contact.city} meetup."
            ),
            "your-reply": lambda f, w, r: P("Thanks for your reply about pricing."),
            "met-but-call": lambda f, w, r: P(
                "Thanks again for the call on Tuesday.",
                dossier=(
                    episode(
                        "2026-10-20",
                        "note",
                        "manual",
                        f"Met {f.first} at a {f.contact.city} meetup; prefers email.",
                    ),
                ),
            ),
        },
        False: {
            "call-evidence": lambda f, w, r: P(
                "Thanks again for the call; here are the details.",
                dossier=(
                    episode(
                        "2026-10-20",
                        "note",
                        "manual",
                        f"Call with {f.first}: budget sits with the {f.title} role.",
                    ),
                ),
            ),
            "met-evidence": lambda f, w, r: P(
                f"It was great to meet you at the {f.contact.city} meetup.",
                dossier=(
                    episode(
                        "2026-10-20",
                        "note",
                        "manual",
                        f"Met {f.first} at a {f.contact.city} meetup; prefers email.",
                    ),
                ),
            ),
            "intro-evidence": lambda f, w, r: (
                lambda o: P(
                    f"Following our introduction through {o.contact.name}, I wanted to write.",
                    dossier=(
                        episode(
                            "2026-10-02",
                            "note",
                            "manual",
                            f"Introduced to {f.first} by {o.contact.name}.",
                        ),
                    ),
                )
            )(other(f, w, r)),
            "customer-evidence": lambda f, w, r: P(
                "As a long-time customer, you will get early access.",
                dossier=(
                    episode(
                        "2026-06-01",
                        "note",
                        "crm",
                        f"{f.contact.company} has been a customer since 2019.",
                    ),
                ),
            ),
            "reply-evidence": lambda f, w, r: P(
                "Thanks for your reply about pricing.",
                dossier=(
                    episode(
                        "2026-11-10",
                        "response",
                        "gmail",
                        f"{f.first} replied: interested, asked for pricing.",
                    ),
                ),
            ),
            "proposal-evidence": lambda f, w, r: P(
                "Following up on my proposal, the pricing stands.",
                dossier=(
                    episode(
                        "2026-11-12",
                        "outreach",
                        "outreach",
                        f'Sent "Proposal for {f.short}" (message 4411).',
                    ),
                ),
            ),
        },
    },
    "superlative": {
        True: {
            "fastest": lambda f, w, r: P(
                f"{SENDER_COMPANY} is the fastest way to close the month."
            ),
            "award-winning": lambda f, w, r: P(
                f"Our award-winning platform fits teams like {f.short}."
            ),
            "number-one": lambda f, w, r: P("We are the #1 close platform for finance teams."),
            "industry-leading": lambda f, w, r: P("Our industry-leading accuracy saves hours."),
            "largest-other": lambda f, w, r: (
                P(f"As the largest {f.trade.lower()} group in {f.contact.city}, you need this.")
                if not f.largest
                else None
            ),
            "leading-provider": lambda f, w, r: P(
                "As the UK's leading provider of close software, we can help."
            ),
            "ranked": lambda f, w, r: P("Finance teams ranked us No. 1 this year."),
        },
        False: {
            "own-largest": lambda f, w, r: (
                P(
                    f"As the largest independent {f.trade.lower()} group in {f.contact.city},"
                    " you must be busy."
                )
                if f.largest
                else None
            ),
            "own-award": lambda f, w, r: (
                P(f"Congratulations on winning {f.award}.") if f.award else None
            ),
            "best-time": lambda f, w, r: P("When is the best time for a short call?"),
            "latest": lambda f, w, r: P("I read the latest news about your team."),
            "earliest": lambda f, w, r: P("Reply at your earliest convenience."),
            "all-the-best": lambda f, w, r: P("All the best with the busy season."),
        },
    },
    "role": {
        True: {
            "as-lower": lambda f, w, r: P(
                "As "
                + r.choice([t for t, _ in TITLES if t != f.title]).lower()
                + ", you probably own this problem."
            ),
            "vice-president": lambda f, w, r: P(
                "As vice president of sales, you will know the pain."
            ),
            "founder": lambda f, w, r: (
                P(f"As founder of {f.short}, you built this.") if f.title != "Founder" else None
            ),
            "role-as": lambda f, w, r: P(
                "In your role as "
                + r.choice([w for t, w in TITLES if t != f.title])
                + ", this lands on your desk."
            ),
            "cfo-mention": lambda f, w, r: P(
                f"I know you are {f.short}'s "
                + r.choice([t for t, _ in TITLES if t != f.title and t.isupper()]).lower()
                + "."
            ),
        },
        False: {
            "as-lower-true": lambda f, w, r: P(
                f"As {f.title.lower()}, you probably own this problem."
            ),
            "spelled-out": lambda f, w, r: P(
                f"In your role as {f.title_words}, this lands on your desk."
            ),
            "as-title": lambda f, w, r: P(f"As {f.title}, you probably own this problem."),
            "as-the": lambda f, w, r: P(
                f"As the {f.title.lower()} at {f.short}, you see the whole picture."
            ),
            "generic-role": lambda f, w, r: P("Finance leaders often tell us the same."),
        },
    },
}

# Classes added after the first fifteen were measured take their variants in turn and
# compose their drafts apart (their own count, their own random stream), so that the first
# fifteen classes' drafts stay exactly as they were measured.
_FIRST_CLASSES = frozenset(CLASSES)


def rival(f: Facts, w: World, r: random.Random) -> Facts | None:
    """Another company the research mentions beside the contact's, with different facts."""
    rivals = [
        o
        for o in w.others(f)
        if o.short.split()[0] != f.short.split()[0]
        and o.people != f.people
        and o.growth != f.growth
        and o.sites != f.sites
        and o.raised != f.raised
        and o.office_city not in (f.office_city, f.contact.city)
    ]
    return r.choice(rivals) if rivals else None


def rival_findings(o: Facts) -> tuple[str, ...]:
    """What the day's research says about the rival: its own facts, each with its name."""
    return (
        f"{o.short} now employs {o.people:,} people across {o.sites} {o.site_noun}.",
        f"{o.short} grew revenue {o.growth}% last year.",
        f"{o.short} raised {o.currency}{o.raised:,} in {o.raised_year}.",
        f"{o.short} opened an office in {o.office_city}.",
        f"{o.contact.name} is {o.title} of {o.short}, maker of {o.product}.",
    )


def misattribution(
    write: Callable[[Facts, Facts], str],
) -> Variant:
    """A variant whose sources also hold a rival's facts and whose sentence `write`s about
    the contact (`f`) and the rival (`o`)."""

    def variant(f: Facts, w: World, r: random.Random) -> Piece | None:
        o = rival(f, w, r)
        return P(write(f, o), findings=rival_findings(o)) if o else None

    return variant


CLASSES["misattribution"] = {
    True: {
        "people-of-rival": misattribution(
            lambda f, o: f"I saw that {f.short} now employs {o.people:,} people."
        ),
        "growth-of-rival": misattribution(
            lambda f, o: f"{f.short} growing revenue {o.growth}% last year is impressive."
        ),
        "raised-by-rival": misattribution(
            lambda f, o: (
                f"{f.short} raising {money(o.raised, o.currency)} in {o.raised_year}"
                " must have been a milestone."
            )
        ),
        "office-of-rival": misattribution(
            lambda f, o: f"{f.short} opening an office in {o.office_city} is a big step."
        ),
        "leader-of-rival": misattribution(
            lambda f, o: f"I gather {o.contact.name} runs things at {f.short}."
        ),
        "product-of-rival": misattribution(lambda f, o: f"{f.short} built {o.product}, I hear."),
        "sites-of-rival": misattribution(
            lambda f, o: f"{o.sites} {o.site_noun} is a lot for {f.short} to run."
        ),
        "rival-gets-own": misattribution(
            lambda f, o: f"{o.short} now employs {f.people:,} people, I read."
        ),
    },
    False: {
        "people-own": misattribution(
            lambda f, o: f"I saw that {f.short} now employs {f.people:,} people."
        ),
        "growth-of-rival-right": misattribution(
            lambda f, o: f"{o.short} growing revenue {o.growth}% last year is impressive."
        ),
        "raised-own": misattribution(
            lambda f, o: (
                f"Raising {money(f.raised, f.currency)} in {f.raised_year} must have"
                " been a milestone."
            )
        ),
        "office-of-rival-right": misattribution(
            lambda f, o: (
                f"{o.short} opening an office in {o.office_city} shows the sector is growing."
            )
        ),
        "leader-of-rival-right": misattribution(
            lambda f, o: f"I gather {o.contact.name} runs things at {o.short}."
        ),
        "product-own": misattribution(lambda f, o: f"{f.product} looks like a neat product."),
        "sites-of-rival-right": misattribution(
            lambda f, o: f"{o.sites} {o.site_noun} is a lot for {o.short} to run."
        ),
        "both-right": misattribution(
            lambda f, o: f"{f.short} has {f.people:,} people and {o.short} {o.people:,}."
        ),
    },
}

PITCHES = (
    "We help finance teams close the month without the spreadsheet chase.",
    "We take the manual steps out of supplier onboarding.",
    "We make the weekly operations review a short, readable page.",
)
ASKS = (
    "Would a short call next week be useful?",
    "Worth a quick chat?",
    "Happy to share how other teams handle this.",
)
SIGN_OFFS = ("Best,", "Kind regards,", "Cheers,", "Thanks,")


def aside_variants() -> set[tuple[str, bool, str]]:
    """A quarter (at least one) of each class and label's variants, lowest by sha256."""
    aside = set()
    for name, labels in CLASSES.items():
        for fabricated, variants in labels.items():
            ranked = sorted(
                variants,
                key=lambda v: hashlib.sha256(f"{name}/{fabricated}/{v}".encode()).hexdigest(),
            )
            aside |= {(name, fabricated, v) for v in ranked[: max(1, round(len(ranked) / 4))]}
    return aside


def adversarial_drafts(contacts: int = 40, seed: int = 2026) -> list[Case]:
    """For every contact and class, one draft of each label per round; each variant is
    used in turn so that every one appears about equally often."""
    rng = random.Random(seed)
    world = make_world(contacts, rng)
    aside = aside_variants()
    cases: list[Case] = []
    later: list[Case] = []  # the classes added after the first fifteen: see `_FIRST_CLASSES`
    for f in world.people:
        dossier = base_dossier(f, rng)
        findings = research(f)
        for name, labels in CLASSES.items():
            for fabricated, variants in labels.items():
                first = name in _FIRST_CLASSES
                made = cases if first else later
                order = list(variants)
                start = (f.contact.id + len(made)) % len(order)
                for variant in order[start:] + order[:start]:
                    piece = variants[variant](
                        f, world, random.Random(f"{seed}/{f.contact.id}/{variant}")
                    )
                    if piece is not None:
                        break
                else:
                    continue
                stream = rng if first else random.Random(f"{seed}/{f.contact.id}/{name}/{variant}")
                made.append(
                    compose(
                        f,
                        name,
                        variant,
                        fabricated,
                        piece,
                        dossier,
                        findings,
                        stream,
                        (name, fabricated, variant) in aside,
                    )
                )
    return cases + later


def compose(
    f: Facts,
    name: str,
    variant: str,
    fabricated: bool,
    piece: Piece,
    dossier: list[str],
    findings: list[str],
    rng: random.Random,
    aside: bool,
) -> Case:
    neutral = [
        f"I hope things are going well at {f.short}.",
        f"I saw that {f.short} opened an office in {f.office_city}.",
        f"{f.product} looks like a neat product.",
    ]
    sentence = piece.sentence or rng.choice(neutral)
    body = [
        piece.greeting or rng.choice([f"Hi {f.first},", f"Hello {f.first},", f"Dear {f.first},"]),
        "",
        sentence,
        rng.choice(PITCHES),
        rng.choice(ASKS),
        "",
        rng.choice(SIGN_OFFS),
        *(piece.signature or (SENDER,)),
    ]
    subject = piece.subject or rng.choice(
        [f"{f.first}, a thought on reporting", "Month-end close", f"A question for {f.first}"]
    )
    sources = source_material(
        f.contact, "\n".join([*dossier, *piece.dossier]), [*findings, *piece.findings]
    )
    key = f"{f.contact.id}/{name}/{'fab' if fabricated else 'fair'}/{variant}"
    return Case(key, name, variant, fabricated, subject, "\n".join(body) + "\n", sources, aside)


def known_names(contacts: int = 40, seed: int = 2026) -> tuple[str, ...]:
    """The CRM's companies, products and people for the set made with the same arguments."""
    return make_world(contacts, random.Random(seed)).known
