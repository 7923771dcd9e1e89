"""Fair drafts in the product's own shape: what the outreach engine gives the gate.

Each contact's company page is written as the sample's pages are (`company_pages`), its
product named either after the company ("Redfern Ledger") or on its own ("Roadrunner"),
read by the offline researcher and put in the drafter's material by `source_material`, as
a morning run does. Each draft says, in a careful writer's words, only what that material
says of the contact's own company: every one must pass. A draft flagged here is one the
owner would have to release by hand, so this set measures the false alarms a check costs
in the product rather than on drafts written beside the check.

A quarter of the sentence shapes (by sha256) is aside: scored, never tuned on.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from company_ai.core.crm import Contact
from company_ai.core.outreach import offline_research, readable_text, source_material
from company_ai.sample_world.company_pages import MONTH_NAMES, company_facts, company_page
from company_ai.sample_world.crm import CITIES, FIRST, LAST, NOUN, PREFIX, SUFFIX, TITLES, TRADE

SENDER = "Sam"
# Products named on their own, as many real companies name theirs.
OWN_NAMES = ("Roadrunner", "Quill", "Keystone", "Meridian", "Tempo", "Lantern", "Bramble")


@dataclass(frozen=True)
class Facts:
    """What a contact's material says: the CRM row and the company page's facts."""

    contact: Contact
    short: str  # the company without its legal suffix
    product: str
    founded: int
    people: int
    growth: int
    raised: int
    raised_year: int
    office_city: str
    office_day: int
    office_month: str
    office_year: int

    @property
    def first(self) -> str:
        return self.contact.name.split()[0]


@dataclass(frozen=True)
class FairDraft:
    shape: str
    aside: bool
    subject: str
    body: str
    sources: list[str]
    company: str  # the contact's, as the CRM names it (the gate's `known` names)

    @property
    def parts(self) -> tuple[str, str]:
        return (self.subject, self.body)


Shape = Callable[[Facts], str]

# One sentence each, true to the material; the body wraps it in a greeting and a pitch.
SHAPES: dict[str, Shape] = {
    "growth-congrats": lambda f: f"Congratulations on {f.short}'s {f.growth}% revenue growth.",
    "growth-opening": lambda f: f"{f.short} growing revenue {f.growth}% last year is impressive.",
    "growth-led-by": lambda f: (
        f"I read that revenue at {f.short} grew {f.growth}% last year, led by {f.product}."
    ),
    "product-led": lambda f: f"{f.product} leading {f.growth}% growth at {f.short} caught my eye.",
    "people": lambda f: f"{f.short} now employs {f.people:,} people, I read.",
    "founded-full": lambda f: f"{f.contact.company} was founded in {f.founded}, I see.",
    "founded-since": lambda f: f"Since {f.founded}, {f.short} has grown to {f.people:,} people.",
    "office-date": lambda f: (
        f"{f.short} opened an office in {f.office_city} on {f.office_day} {f.office_month}"
        f" {f.office_year}."
    ),
    "office-month": lambda f: (
        f"{f.short} opening in {f.office_city} in {f.office_month} {f.office_year} is a big step."
    ),
    "office-city": lambda f: f"Congratulations on the new {f.office_city} office at {f.short}.",
    "raised": lambda f: f"{f.short} raised ${f.raised:,} in {f.raised_year}, I saw.",
    "raised-investors": lambda f: (
        f"In {f.raised_year} {f.short} raised ${f.raised:,} from investors."
    ),
    "role": lambda f: (
        f"As {f.contact.title} at {f.short}, {f.first}, you will know the month-end crunch."
    ),
    "product-helps": lambda f: f"{f.product} helps finance teams at {f.short} close faster.",
    "product-of": lambda f: f"{f.short}'s {f.product} looks like a neat product.",
    "team-city": lambda f: f"I saw that {f.contact.name} is {f.contact.title} in {f.contact.city}.",
    "product-first": lambda f: (
        f"{f.product}, {f.short}'s product, led {f.growth}% growth last year."
    ),
    "two-facts": lambda f: f"{f.short}: {f.people:,} people and a new office in {f.office_city}.",
    "behind-it": lambda f: (
        f"With {f.product} behind it, {f.short} grew revenue {f.growth}% last year."
    ),
    "reader-named": lambda f: f"{f.first}, {f.growth}% growth at {f.short} is impressive.",
    "office-year": lambda f: (
        f"The {f.office_city} office {f.short} opened in {f.office_year} caught my eye."
    ),
    "person-at": lambda f: f"I gather {f.contact.name} looks after things at {f.short}.",
}
PITCH = "We help finance teams close the month without the spreadsheet chase."


def aside_shapes() -> set[str]:
    """A quarter of the shapes, lowest by sha256: scored, never tuned on."""
    ranked = sorted(SHAPES, key=lambda s: hashlib.sha256(f"fair/{s}".encode()).hexdigest())
    return set(ranked[: round(len(ranked) / 4)])


def contacts(n: int, rng: random.Random) -> list[tuple[Contact, str, str]]:
    """(contact, domain, product) for `n` contacts of distinct sample-style companies."""
    found: list[tuple[Contact, str, str]] = []
    seen: set[str] = set()
    while len(found) < n:
        stem = f"{rng.choice(PREFIX)}{rng.choice(NOUN)}"
        if stem in seen:
            continue
        seen.add(stem)
        company = f"{stem} {rng.choice(TRADE)} {rng.choice(SUFFIX)}"
        first, last = rng.choice(FIRST), rng.choice(LAST)
        domain = f"{stem.lower()}.example"
        contact = Contact(
            id=len(found) + 1,
            name=f"{first} {last}",
            email=f"{first.lower()}@{domain}",
            company=company,
            title=rng.choice(TITLES),
            city=rng.choice(CITIES),
        )
        own = len(found) % 2 == 0  # half the products named on their own
        product = rng.choice(OWN_NAMES) if own else ""
        found.append((contact, domain, product))
    return found


def fair_drafts(n_contacts: int = 40, seed: int = 7) -> list[FairDraft]:
    """Every shape for every contact: a draft whose one claim sentence is true."""
    aside = aside_shapes()
    drafts = []
    for contact, domain, own_product in contacts(n_contacts, random.Random(seed)):
        assert contact.company is not None
        raw = company_facts(contact.company, domain)
        product = own_product or raw["product"]
        team = [(contact.name, contact.title or "", contact.city or "")]
        html = company_page(contact.company, domain, team)
        page = readable_text(html.replace(raw["product"], product), domain)
        findings = [fact.text for fact in offline_research(contact, page).facts]
        sources = source_material(contact, "No prior research or interaction history.", findings)
        year, month, day = raw["office_date"]
        short = contact.company.rsplit(" ", 1)[0]
        f = Facts(
            contact, short, product, raw["founded"], raw["people"], raw["growth"], raw["raised"],
            raw["raised_year"], raw["office_city"], day, MONTH_NAMES[month - 1], year,
        )  # fmt: skip
        for shape, write in SHAPES.items():
            body = f"Hi {f.first},\n\n{write(f)}\n{PITCH}\n\nBest,\n{SENDER}"
            drafts.append(
                FairDraft(
                    shape,
                    shape in aside,
                    f"{f.first}, a thought on {short}",
                    body,
                    sources,
                    contact.company,
                )
            )
    return drafts
