"""Measuring the fabrication gate: labelled drafts, EntFA, SummEdits, and the scores.

`labelled_drafts()` builds, deterministically from the sample CRM and its company pages,
drafts that are clean (fair paraphrases: `$1.2M` for `$1,200,000`, `twenty percent`,
`Acme` for `Acme Ltd`, a hedged `about 800` for `805`, greetings, sign-offs, the sender's
own name) and drafts with one fabricated number or name. `entfa_scores()` scores the gate
on the EntFA entity labels (positives: the two extrinsic hallucination labels) beside the
naive baseline (an entity is flagged if its lower-cased text is not in the source).
`adversarial_scores()` scores the drafts written to fool the gate (`gate_adversary`), the
tuning part and the aside quarter apart; `summedits_scores()` the balanced accuracy on the
SummEdits pairs a presence check is meant to catch (entity modifications, inserted facts).
Each takes `together=True` to score the gate with the co-occurrence check of
`core/gate_context.py` (measured, not run by the gate).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from company_ai.core.gate import Claim
from company_ai.core.gate.context import check_together
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.presence import check
from company_ai.core.outreach import page_text
from company_ai.sample_world.company_pages import MONTH_NAMES, company_facts, company_page
from company_ai.sample_world.crm import CITIES, FIRST, LAST, TITLES, iter_sample

SENDER = "Sam Rivers"
ALLOW = (SENDER, "Company AI")
NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    " fifteen sixteen seventeen eighteen nineteen"
).split()
TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def in_words(n: int) -> str:
    """0..99 in English words."""
    if n < 20:
        return NUMBER_WORDS[n]
    tens, unit = divmod(n, 10)
    return TENS_WORDS[tens - 2] + (f"-{NUMBER_WORDS[unit]}" if unit else "")


def short_money(amount: int) -> str:
    if amount >= 1_000_000:
        return f"${amount / 1_000_000:g}M"
    return f"${amount // 1000}k"


@dataclass(frozen=True)
class Case:
    text: str
    sources: list[str]
    fabricated: bool
    what: str  # which template made it


def labelled_drafts(n_contacts: int = 160, seed: int = 11) -> list[Case]:
    """About 1.5 drafts per sampled contact, half with one fabricated claim."""
    from datetime import UTC, datetime

    rng = random.Random(seed)
    people = [
        c for c, _, _ in iter_sample(contacts=n_contacts, as_of=datetime(2026, 11, 30, tzinfo=UTC))
    ]
    cases: list[Case] = []
    for row in people:
        cid, email, name, company, title, city = row[:6]
        domain = (email or f"x@{company.split()[0].lower()}.example").rpartition("@")[2]
        f = company_facts(company, domain)
        page = page_text(company_page(company, domain, [(name, title, city)]).encode(), domain)
        crm = f"CRM: {name} <{email}>, {title} at {company}, {city}."
        sources = [crm, "Dossier:\n" + f"{company} is hiring in {city}.", page]
        first = name.split()[0]
        short = company.rsplit(" ", 1)[0]  # "Bluewind Logistics Ltd" -> "Bluewind Logistics"
        year, month, day = f["office_date"]
        fair = [
            f"I saw that {short} now employs {f['people']} people.",
            f"Congratulations on {in_words(f['growth'])} percent revenue growth last year.",
            f"Noticed {f['product']} is helping finance teams close the month faster.",
            f"Raising {short_money(f['raised'])} in {f['raised_year']} must have been a milestone.",
            f"Since {f['founded']}, {short} has grown to about {round(f['people'], -1)} people.",
            f"Your new office in {f['office_city']}, opened in {MONTH_NAMES[month - 1]} {year},"
            " looks like a big step.",
            f"As {title} in {city}, you probably own this problem.",
            f"Revenue up {f['growth']}% is impressive for a team of {f['people']}.",
            f"Opening in {f['office_city']} on {MONTH_NAMES[month - 1]} {day} was a bold move.",
            f"I'm {SENDER.split()[0]} from Company AI, and we help teams like {short}'s.",
        ]
        other_city = rng.choice([c for c in CITIES if c not in (city, f["office_city"])])
        other_title = rng.choice([t for t in TITLES if t != title])
        invented_person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        fabricated = [
            f"I saw that {short} now employs {f['people'] + rng.randint(3, 40)} people.",
            f"Congratulations on {in_words(f['growth'] + 7)} percent revenue growth last year.",
            f"Raising {short_money(f['raised'] * 2)} in {f['raised_year']} must have been a"
            " milestone.",
            f"Since {f['founded'] - 3}, {short} has grown quickly.",
            f"Your new office in {other_city} looks like a big step.",
            f"As {other_title}, you probably own this problem.",
            f"{invented_person} suggested I get in touch.",
            f"Teams like yours cut reporting time by {rng.randint(20, 60)}% with us.",
            f"Our customers include {rng.choice(['Northwind Traders', 'Globex', 'Initech'])}.",
            f'We built "{rng.choice(["FlowDesk", "LedgerLoop", "CloseKit"])}" for teams like'
            " yours.",
            f"Opening on {day} {MONTH_NAMES[month % 12]} was a bold move.",
            f"Since {short} has about {f['people'] * 3} people, this matters.",
        ]
        greeting = rng.choice([f"Hi {first},", f"Dear {name},", f"Hello {first},", "Hi there,"])
        sign = rng.choice(
            [
                f"Best,\n{SENDER}",
                f"Kind regards,\n{SENDER}\nCompany AI",
                f"Cheers,\n{SENDER.split()[0]}",
                f"Thanks,\n{SENDER}\n+44 20 7946 0018",
            ]
        )
        filler = rng.choice(
            [
                "Would a short call next week be useful?",
                "Happy to share how other finance teams handle this.",
                "Worth a quick chat?",
            ]
        )
        for _ in range(2 if cid % 2 else 1):
            picks = rng.sample(fair, 2)
            lie = rng.random() < 0.5
            if lie:
                picks[rng.randrange(2)] = rng.choice(fabricated)
            body = "\n".join([greeting, "", " ".join(picks), filler, "", sign])
            cases.append(Case(body, sources, lie, "fabricated" if lie else "fair"))
    return cases


@dataclass(frozen=True)
class Scores:
    FIELDS = ("tp", "fp", "fn", "tn")

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0

    def line(self) -> str:
        return (
            f"P {self.precision:.3f} R {self.recall:.3f} "
            f"(tp {self.tp}, fp {self.fp}, fn {self.fn}, tn {self.tn})"
        )


def score(predicted: list[bool], truth: list[bool]) -> Scores:
    pairs = list(zip(predicted, truth, strict=True))
    return Scores(
        sum(p and t for p, t in pairs),
        sum(p and not t for p, t in pairs),
        sum(t and not p for p, t in pairs),
        sum(not p and not t for p, t in pairs),
    )


def unsupported(
    text: str,
    sources: list[str],
    allow: tuple[str, ...] = (),
    known: tuple[str, ...] = (),
    *,
    together: bool = False,
) -> list[Claim]:
    """The gate's claims on `text`; with `together`, the co-occurrence check's too."""
    index = SourceIndex(sources, allow, known=known)
    return (check_together if together else check)(extract(text), index)


def gate_scores(cases: list[Case], *, together: bool = False) -> Scores:
    predicted = [bool(unsupported(c.text, c.sources, ALLOW, together=together)) for c in cases]
    return score(predicted, [c.fabricated for c in cases])


EXTRINSIC = {"Factual Hallucination", "Non-factual Hallucination"}


# The public sets are split once, before any tuning, into a tuning part and an aside part
# (about a quarter) that is never looked at while tuning: by a sha256 of a stable id, the
# EntFA source article or the SummEdits document (so a document's pairs stay together).
Part = Literal["tuning", "aside", "whole"]
PARTS: tuple[Part, ...] = ("tuning", "aside", "whole")


def is_aside(stable_id: str) -> bool:
    """Whether the example with this id is in the aside part (a quarter of the ids)."""
    return hashlib.sha256(stable_id.encode()).digest()[0] < 64


def in_part(stable_id: str, part: Part) -> bool:
    return part == "whole" or is_aside(stable_id) == (part == "aside")


def entfa_scores(
    path: Path, part: Part = "whole", *, together: bool = False
) -> tuple[Scores, Scores]:
    """(gate, naive baseline) at the entity level on EntFA, on one part of it. With
    `together`, a misattributed pair overlapping an entity flags it too (EntFA's positives
    are extrinsic entities only, so such a flag on an intrinsic one is a false alarm)."""
    docs = [d for d in json.loads(path.read_text()) if in_part(d["source"], part)]
    gate_pred, naive_pred, truth = [], [], []
    for doc in docs:
        claims = unsupported(doc["prediction"], [doc["source"]], together=together)
        source = doc["source"].lower()
        for ent in doc["entities"]:
            truth.append(ent["label"] in EXTRINSIC)
            naive_pred.append(ent["ent"].lower() not in source)
            gate_pred.append(any(c.start < ent["end"] and ent["start"] < c.end for c in claims))
    return score(gate_pred, truth), score(naive_pred, truth)


def title_case_words(count: int, seed: int = 0) -> list[str]:
    """`count` invented title-case words ("Kelox", "Baraz"): one long capitalised run that
    names nothing the sources hold, the gate's worst case for speed."""
    rng = random.Random(seed)
    return [
        rng.choice("BDFGKLMNPRSTVZ")
        + rng.choice("aeiou")
        + rng.choice("lnrst")
        + rng.choice("aeiou")
        + rng.choice("kqxz")
        for _ in range(count)
    ]


def adversarial_scores(aside: bool, *, together: bool = False) -> tuple[Scores, dict[str, Scores]]:
    """(all, by perturbation class) on the aside quarter (`aside=True`) or the tuning part
    of the drafts written to fool the gate; a draft is flagged if any claim is unsupported."""
    from evals.gate_adversary import ALLOW as SENDER_ALLOW
    from evals.gate_adversary import adversarial_drafts, known_names

    known = known_names()
    cases = [c for c in adversarial_drafts() if c.aside == aside]
    flagged = [
        any(
            unsupported(t, c.sources, SENDER_ALLOW, known, together=together)
            for t in c.parts.values()
        )
        for c in cases
    ]
    by_class = {
        name: score(
            [f for f, c in zip(flagged, cases, strict=True) if c.perturbation == name],
            [c.fabricated for c in cases if c.perturbation == name],
        )
        for name in sorted({c.perturbation for c in cases})
    }
    return score(flagged, [c.fabricated for c in cases]), by_class


def fair_scores(aside: bool, *, together: bool = False) -> Scores:
    """The fair drafts in the product's own shape (`gate_fair`), on the aside quarter of
    their shapes or the rest, judged as outreach judges them: every one flagged is a
    false alarm (fp); the rest are tn."""
    from evals.gate_fair import SENDER, fair_drafts

    drafts = [d for d in fair_drafts() if d.aside == aside]
    known = tuple(sorted({d.company for d in drafts}))
    flagged = [
        any(unsupported(t, d.sources, (SENDER,), known, together=together) for t in d.parts)
        for d in drafts
    ]
    return score(flagged, [False] * len(drafts))


def rival_scores(aside: bool, *, together: bool = False, path: Path | None = None) -> Scores:
    """The hand-written drafts that try to beat the co-occurrence check (`gate_rivals`; the
    second set, `gate_rivals2.json`, with `path`: all of it aside), on the aside part or the
    other: a draft is flagged when any claim of its subject or body is unsupported;
    positives are the fabricated ones."""
    from evals.gate_rivals import DATA, load

    drafts = [d for d in load(path or DATA) if d.aside == aside]
    flagged = [
        any(
            unsupported(t, d.sources, tuple(d.allow), tuple(d.known), together=together)
            for t in (d.subject, d.body)
        )
        for d in drafts
    ]
    return score(flagged, [d.fabricated for d in drafts])


SUMMEDITS_EDITS = {"entity_modification", "hallucinated_fact_insertion"}
SUMMEDITS_DOMAINS = ("news", "podcast", "qmsumm", "samsum")


def summedits_pairs(folder: Path, domain: str, part: Part = "whole") -> list[dict]:
    """One domain's pairs a presence check is meant to judge: the consistent ones and the
    inconsistent ones whose edits include an entity modification or an inserted fact (the
    rest are beyond any presence check), on one part (split by document)."""
    items = json.loads((folder / f"summedits_{domain}.json").read_text())
    return [
        i
        for i in items
        if (i["label"] == 1 or (i["label"] == 0 and SUMMEDITS_EDITS & set(i["edit_types"] or ())))
        and in_part(i["doc"], part)
    ]


def summedits_scores(
    folder: Path, part: Part = "whole", *, together: bool = False
) -> dict[str, Scores]:
    """Per domain, on one part: a pair is flagged when any claim of its summary is
    unsupported by its document; positives are the inconsistent pairs."""
    out = {}
    for domain in SUMMEDITS_DOMAINS:
        kept = summedits_pairs(folder, domain, part)
        predicted = [bool(unsupported(i["summary"], [i["doc"]], together=together)) for i in kept]
        out[domain] = score(predicted, [i["label"] == 0 for i in kept])
    return out


def balanced_accuracy(s: Scores) -> float:
    specificity = s.tn / (s.tn + s.fp) if s.tn + s.fp else 1.0
    return (s.recall + specificity) / 2
