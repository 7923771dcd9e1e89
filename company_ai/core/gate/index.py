"""`SourceIndex`: the sources, normalised once, and what they support (values, phrases,
names)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal

from company_ai.core.gate.claim import Kind
from company_ai.core.gate.extract import Mentions
from company_ai.core.gate.names import (
    _ACRONYM,
    _ALSO_CALLED,
    _CAPITALISED_WORD,
    _DOMAIN_DOT,
    _LOWER_WORD,
    _NAMES_AFTER,
    _NOT_RUN,
    _PLACE_OF,
    _TWO,
    _YEAR_ONLY,
    _alnum_runs,
    _known_names,
    _norm,
    _norm_tokens,
    _swap,
)
from company_ai.core.gate.phrases import (
    _COUNTED_IN,
    _DURATION_UNITS,
    _EVIDENCE,
    _MULTIPLE,
    _NOUN,
    _RANK_FORMS,
    _SCHEME,
    _TIME,
    _TRAILING_COMMON,
    _UNIT_FORMS,
    COUNTED,
    _canonical_noun,
    _fold,
    _ranked_unit,
    _word_char,
)
from company_ai.core.gate.values import _WORD, Hedge, _numbers, _Spans, _time_forms, _Value
from company_ai.core.gate.words import (
    C_SUITE,
    DEMONYMS,
    MULTIPLES,
    ORDINALS,
    PLACES,
    VAGUE_COUNTS,
)

# A hedged number ("about 900") is supported by a source within this fraction of it, on
# the side the hedge points to: "over 40" by 40 to 60, "under 40" by 27 to 40, "nearly
# 40" by 38 to 40 (see gate_words.HEDGES). A hedge pointing the wrong way is a claim.
HEDGE_TOLERANCE = Decimal("0.10")
HEDGE_RANGES = {
    "approx": (Decimal("0.90"), Decimal("1.10")),
    "nearly": (Decimal("0.95"), Decimal("1")),
    "min": (Decimal("1"), Decimal("1.5")),
    "max": (Decimal("0.67"), Decimal("1")),
}


class _SourceValues:
    """Every value the sources say, by kind; a number with the nouns it counts."""

    def __init__(self, joined: str, lowered: str) -> None:
        self.numbers: dict[Decimal, set[str | None]] = {}  # value -> the nouns it counts
        self.bare: set[Decimal] = set()  # values said with no noun after them
        self.percents: set[Decimal] = set()
        self.money: set[tuple[str | None, Decimal]] = set()
        self.dates: set[tuple[int | None, int | None, int | None]] = set()
        self.weekdays: set[str] = set()
        self.quarters: set[tuple[int | None, int]] = set()
        self.ordinals: set[Decimal] = set()  # ranks: "third", "4th"
        self.starts: list[int] = []  # where each value starts (`gate_context`'s passages)
        self.said: list[object] = []  # and what it says: its date or its value
        for start, end, v in _numbers(joined, relative=False):
            self.starts.append(start)
            self.said.append(v.date if v.kind == "date" else v.value)
            if v.kind == "date":
                if v.phrase:
                    continue  # found by text when needed
                if v.weekday:
                    self.weekdays.add(v.weekday)
                elif v.quarter:
                    self.quarters.add((v.date[0] if v.date else None, v.quarter))
                else:
                    self.dates.add(v.date)  # type: ignore[arg-type]
                    year, month, _ = v.date  # type: ignore[misc]
                    if year and not month:
                        self.numbers.setdefault(Decimal(year), set()).add(None)
            elif v.kind == "percent":
                self.percents.add(v.value)  # type: ignore[arg-type]
            elif v.kind == "money":
                self.money.add((v.currency, v.value))  # type: ignore[arg-type]
            else:
                if v.ordinal:  # "the fifth person" also counts five; "five" ranks nothing
                    self.ordinals.add(v.value)  # type: ignore[arg-type]
                nouns = self.numbers.setdefault(v.value, set())  # type: ignore[arg-type]
                position = end
                for step in range(3):  # "65 regional depots", "three second-half goals"
                    following = _NOUN.match(lowered, position)
                    noun = _canonical_noun(following.group(1)) if following else None
                    if step == 0 and noun is None:
                        self.bare.add(v.value)  # type: ignore[arg-type]  # "employs 80."
                    nouns.add(noun)
                    if not following:
                        break
                    position = following.end()
        self.both = _nouns_after_both(lowered)  # "both men" counts two men
        self.years = {d[0] for d in self.dates if d[0]}

    def counting(self, noun: str | None) -> Iterable[Decimal]:
        """The numbers that may count `noun` ("18 warehouses" needs 18 of them: not 18 %, nor
        18 people); all of them when there is no noun. Nouns the gate cannot compare
        ("residents", "fans") are taken as the same thing counted, by any number that counts
        something (a year said alone counts nothing)."""
        if not noun:
            return self.numbers
        counts = [
            n
            for n, nouns in self.numbers.items()
            if noun in nouns
            or (n in self.bare and noun not in _TIME)  # "three years" is no bare "3"
            or (noun not in COUNTED and nouns != _YEAR_ONLY and not nouns & COUNTED)
        ]
        if noun in self.both:
            counts.append(_TWO)
        return counts


def _nouns_after_both(lowered: str) -> set[str]:
    """The nouns "both" counts in a lower-case text: {"men"} for "Both men remain"."""
    nouns = set()
    at = lowered.find("both ")
    while at >= 0:
        following = _NOUN.match(lowered, at + 4)  # (no English word ends in "both")
        if following and (noun := _canonical_noun(following.group(1))):
            nouns.add(noun)
        at = lowered.find("both ", at + 5)
    return nouns


def _rounded_half(target: Decimal) -> Decimal:
    """Half the place a large round figure is rounded to ("11,000" to the thousand: 500), so
    that it is supported by the figure it rounds ("£11,072"); 0 for any other number. Only
    figures of at least two significant digits, rounded to the thousand or coarser: within
    5 % of their source, never a count a reader would take as exact ("810 people")."""
    sign, digits, exponent = target.normalize().as_tuple()
    if not isinstance(exponent, int) or exponent < 3 or len(digits) < 2:
        return Decimal(0)
    return Decimal(5).scaleb(exponent - 1)


class SourceIndex:
    """What the sources say, normalised once: their text, every value in them with the
    noun it counts, and the contact's history (the dossier) for relationship claims."""

    def __init__(
        self, sources: Sequence[str], allow: Iterable[str] = (), *, known: Iterable[str] = ()
    ) -> None:
        self.allow = tuple(allow)
        self.joined = _fold("\n".join(sources))[0]
        # Allowed names (the sender's) count as said: the whole name and each part of it.
        self.text = (
            " " + _norm(self.joined) + " | " + " | ".join(_norm(a) for a in self.allow) + " "
        )
        self.lowered = self.joined.lower()
        # The contact's history: the dossier of episodes and messages (`drafting`).
        # (Without one, as for a recall page checked against its note, all the sources.)
        dossiers = [s for s in sources if s.startswith("Dossier:")]
        self.history = "\n".join(dossiers).lower() if dossiers else self.lowered
        # Names the company knows, in any case: first token -> whole keys.
        self.known, self.names = _known_names(tuple(known))
        # Answers already given: a draft asks of one claim in the presence check and again
        # in the co-occurrence check (and of its subject and body alike). Per index, so
        # per draft; `known_phrase` is filled by `presence._known`.
        self._supported: dict[tuple, bool] = {}
        self.known_phrase: dict[tuple[str, ...], bool] = {}

    # The rest is indexed when a draft first asks for it: a draft without a number never
    # pays for the sources' numbers, one without a lone name never for their capitals.

    @functools.cached_property
    def capitalised(self) -> set[str]:
        """Words the sources capitalise: a lone name must be one ("Executive" is not
        supported by "the executive")."""
        text = self.joined + " " + " ".join(self.allow)
        try:
            runs = text.encode("latin-1").translate(_NOT_RUN).decode("latin-1").split()
        except UnicodeEncodeError:  # beyond Latin-1: word by word
            words = [w for w in _WORD.findall(text) if w[0].isupper()]
            return set(_norm_tokens(" ".join(words)))
        # In Latin-1, a `_WORD` is a run of word characters, ' . and - from its first letter
        # (or number): the runs are found at C speed, and their edges are punctuation to
        # `_norm` anyway.
        capitals = [run for run in runs if run[0].isupper()]
        capitals += [  # the rare run opening with a digit or a mark: "3M", "'Acme"
            word
            for run in runs
            if not run[0].isalpha() and (word := run.lstrip("0123456789_'.-"))[:1].isupper()
        ]
        return set(_norm_tokens(" ".join(capitals)))

    @functools.cached_property
    def acronyms(self) -> set[str]:
        return set(_ACRONYM.findall(self.joined + " " + " ".join(self.allow)))

    @functools.cached_property
    def values(self) -> _SourceValues:
        return _SourceValues(self.joined, self.lowered)

    @functools.cached_property
    def vague(self) -> set[str]:
        return {w for w in VAGUE_COUNTS if f" {w} " in self.text}

    @functools.cached_property
    def multiples(self) -> set[float]:
        return {MULTIPLES[w] for w in _MULTIPLE.findall(self.lowered)}

    def has_phrase(self, key: str) -> bool:
        if not key:
            return True
        return f" {key} " in self.text

    def has_acronym(self, word: str) -> bool:
        """An all-capitals word the sources hold: as written, or a longer word in title case
        ("WRENFIELD" for "Wrenfield"; IT is never "it")."""
        return (
            word in self.acronyms
            or (len(word) > 3 and _norm(word) in self.capitalised)
            or (len(word) < 4 and ".".join(word) + "." in self.joined)  # "U.S."
        )

    def calls_otherwise(self, key: str) -> bool:
        """Whether the sources name the country or body `key` by another of its names."""
        for other in _ALSO_CALLED.get(key, ()):
            if other == key:
                continue
            if len(other) < 4 and self.has_acronym(other.upper()):
                return True
            if len(other) > 3 and self.has_phrase(other):
                return True
        return False

    def alone_as(self, given: str, surname: str) -> bool:
        """Whether the sources write `given` alone (no capitalised word after it) and never
        before another name without `surname`: one person, named familiarly ("Conor" and
        "McGregor"), not two ("Priya Okonkwo" and "Tom Baker" make no "Priya Baker")."""
        alone, always_before = self.given_names.get(given, (False, None))
        return alone and (always_before is None or surname in always_before)

    @functools.cached_property
    def given_names(self) -> dict[str, tuple[bool, frozenset[str] | None]]:
        """Each word the sources capitalise (and each shorter part of it that ends a word,
        "O" of "O'Brien"): whether it stands alone somewhere, and the words found after it
        wherever names follow it (None if they never do). One pass over the sources."""
        found: dict[str, tuple[bool, frozenset[str] | None]] = {}
        joined = self.joined
        for m in _CAPITALISED_WORD.finditer(joined):
            token, start = m.group(), m.start()
            if not token[0].isupper():
                continue
            # The places a name may end: the token's end, or before ' ’ . - inside it.
            cuts = [len(token)]
            if not token.isalnum():
                cuts = [
                    c
                    for c in range(1, len(token) + 1)
                    if c == len(token) or not (token[c].isalnum() or token[c] == "_")
                ]
            for cut in cuts:
                end = start + cut
                if not _word_char(joined, end - 1):
                    continue
                after = _NAMES_AFTER.match(joined, end).group().split()  # type: ignore[union-attr]
                alone, before = found.get(token[:cut], (False, None))
                if not after:
                    alone = True
                else:
                    before = frozenset(after) if before is None else before & frozenset(after)
                found[token[:cut]] = (alone, before)
        return found

    def writes_lower(self, word: str) -> bool:
        """Whether the sources write `word` (lower case) in lower case, as a whole word
        (not in an address: "ana@globex.com" writes no ordinary word "globex")."""
        joined = self.joined
        at = joined.find(word)
        while at >= 0:
            end = at + len(word)
            if not (at and (joined[at - 1].isalpha() or joined[at - 1] in "@./")) and not (
                end < len(joined)
                and (joined[end].isalpha() or joined[end : end + 2] in _DOMAIN_DOT)
            ):
                return True
            at = joined.find(word, at + 1)
        return False

    def is_name(self, word: str) -> bool:
        """Whether anyone knows `word` as a name: the CRM, the catalogue, a famous company,
        a place or a people."""
        key = _norm(word)
        return key in self.names or key in PLACES or key in DEMONYMS or key in _PLACE_OF

    def supports_value(
        self, value: _Value, hedge: Hedge | bool | None = None, noun: str | None = None
    ) -> bool:
        found = self._supported.get((value, hedge, noun))
        if found is None:
            found = self._supported[(value, hedge, noun)] = self._supports(value, hedge, noun)
        return found

    def _supports(self, value: _Value, hedge: Hedge | bool | None, noun: str | None) -> bool:
        if value.kind == "date":
            return self._supports_date(value)
        said = self.values
        if value.ordinal:  # "a fourth title" needs a fourth, not "four titles"
            if value.value not in said.ordinals:
                return False
            if noun not in _UNIT_FORMS:
                return True
            n = int(value.value)
            forms = [w for w, i in ORDINALS.items() if i == n] + [rf"{n}(?:st|nd|rd|th)"]
            rank = r"\b(?:" + "|".join(forms) + ")"  # "its third season" needs a third season
            return bool(re.search(rank + _ranked_unit(noun), self.lowered))
        if value.kind == "percent":
            pool: Iterable[Decimal] = said.percents
        elif value.kind == "money":
            pool = [n for c, n in said.money if c == value.currency or not c or not value.currency]
        else:
            pool = said.counting(noun)
        target = value.value
        if target is None:
            return False
        if hedge is True:
            hedge = "approx"
        if not hedge or not target:
            if target in pool:
                return True
            half = _rounded_half(target)
            return bool(half) and any(target - half <= n < target + half for n in pool)
        low, high = HEDGE_RANGES[hedge]
        return any(low * target <= n <= high * target for n in pool)

    def _supports_date(self, value: _Value) -> bool:
        if value.phrase:
            return any(f" {form} " in self.text for form in _time_forms(value.phrase))
        said = self.values
        if value.weekday:
            return value.weekday in said.weekdays
        year, month, day = value.date  # type: ignore[misc]
        if value.quarter:
            return any(q == value.quarter and (year is None or y == year) for y, q in said.quarters)
        if month is None:
            return year in said.years or (year is not None and Decimal(year) in said.numbers)
        return any(
            (year is None or d[0] == year) and d[1] == month and (day is None or d[2] == day)
            for d in said.dates
        )

    def supports_phrase(
        self, kind: str, what: str, noun: str | None = None, hedge: Hedge | None = None
    ) -> bool:
        """A phrase claim: an address, a relationship with the contact (their history must
        show it), a superlative or award, a role, a vague count or a multiple."""
        key = _norm(what)
        if kind == "address":
            return f" {_norm(_SCHEME.sub('', what).rstrip('/'))} " in self.text
        if kind == "relationship":
            return f" {key} " in self.text or any(
                claim.fullmatch(what) and evidence.search(self.history)
                for claim, evidence in _EVIDENCE
            )
        if kind == "superlative":  # "#1" as written: normalised, it would be any "1"
            if key == "awards" and " award " in self.text:
                return True  # "the 2023 awards": an award the sources name will do
            last = key.rpartition(" ")[2]
            if last.endswith("est") and last in self.capitalised:
                return True  # "Northcrest's Northcrest Ledger": a name the sources write
            return what in self.lowered if not key.isalpha() else f" {key} " in self.text
        if kind == "role":
            key = _TRAILING_COMMON.sub("", key)
            forms = {key, key.replace(" of ", " ")}
            for short, long in C_SUITE.items():
                for form in list(forms):
                    forms |= {_swap(form, short, long), _swap(form, long, short)}
            return any(f" {f} " in self.text for f in forms)
        if what in _RANK_FORMS:
            return bool(re.search(_RANK_FORMS[what] + _ranked_unit(noun), self.lowered))
        if kind == "date":  # a duration: "a decade" needs the sources to count in decades
            stem = next(u for u in _DURATION_UNITS if u in what)
            return bool(re.search(_COUNTED_IN.format(stem=stem), self.lowered))
        said = self.values
        if what in VAGUE_COUNTS:
            low, high = (Decimal(bound) for bound in VAGUE_COUNTS[what])
            if hedge:  # "more than a dozen": 12 to 18
                low, high = low * HEDGE_RANGES[hedge][0], high * HEDGE_RANGES[hedge][1]
            return what in self.vague or any(low <= n <= high for n in said.counting(noun))
        factor = Decimal(str(MULTIPLES[what]))
        return (
            factor in self.multiples
            or (factor - 1) * 100 in said.percents
            or "times" in said.numbers.get(factor, ())
        )

    def known_in(self, text: str, mentions: Mentions) -> list[tuple[int, int, Kind]]:
        """Names the company knows written in lower case ("we work with globex") that the
        sources do not hold: claims like any capitalised name."""
        found: list[tuple[int, int, Kind]] = []
        if self.known.keys().isdisjoint(_alnum_runs(text)):
            return found  # the common case: no known name's first word, in lower case
        inside = _Spans([(a, b) for a, b, kind, _ in mentions.phrases if kind == "address"])
        for m in _LOWER_WORD.finditer(text):
            keys = self.known.get(m.group())
            if not keys or inside(m.start()):
                continue
            following = [_norm(w) for w in text[m.start() : m.start() + 200].split()[:6]]
            for key in sorted(keys, key=len, reverse=True):
                words = " ".join(following[: len(key)]).split()
                if tuple(words[: len(key)]) == key:
                    if not self.has_phrase(" ".join(key)):
                        end = m.start() + len(" ".join(text[m.start() :].split()[: len(key)]))
                        found.append((m.start(), end, "organisation"))
                    break
        return found
