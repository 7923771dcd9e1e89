"""Claims that belong together: a true fact pinned on the wrong subject.

The presence gate (`check`) asks of each claim whether the sources hold it anywhere,
so "Globex cut costs by 41%" passes sources saying that Initech cut costs by 41% and Globex
grew 12%. This check asks more of the claims one sentence ties together (a name with a
number, two names): that one source passage, a sentence or a few neighbouring ones, holds
them together without pinning the figure on someone else. A date pairs with nothing: on
the dev parts of issue 28's split a name-date pair held back more fair drafts than it
caught fabricated ones (`PAIRS`).

    >>> from company_ai.core.gate.extract import extract
    >>> sources = SourceIndex(["Initech cut costs by 41%. Globex grew 12%."])
    >>> check_together(extract("Globex cut costs by 41%."), sources)
    [Claim(text='Globex cut costs by 41%', kind='misattributed', start=0, end=23)]

A pair no passage holds is a `misattributed` claim spanning both parts, but only where the
sources pin the fact on another subject: every passage holding one part names someone else,
before the value there, or anywhere beside a name ("Revenue grew 41%, led by Keystone"
pins the 41% on nobody, and "It opened an office in Lyon with 40 staff" pins the 40 on
nobody: a place is where, not who). Names in a list ("Ana, Bob and Carl"), places, peoples,
quoted words, the reader named in the greeting and the sender (`allow`) pair with nothing;
claims pair only within a clause (", and", "while", "against", a colon or a dash starts
another, and so does a new subject: ", you …", "after Featherstone led …", "… in 2024 and
Heatpulse …"; a relative clause is about the claim just before it), and a semicolon ends a
passage. Two prepositions' objects are not tied to each other ("for Hanil Energy with
steel from Aceros"), and a name after a preposition or an -ing verb is no subject of the
figure after it ("Using Mews … for 11 hotels"). A source sentence ties a figure to its
clause's subject, whoever else it names (`Passages._gives`: "Accountancy Age ranked Marlowe
& Co 48th" gives the 48th to Marlowe). These are issue 28's rules: each fair draft the
check held back on the dev parts was sorted by why (`evals/gate_held_fair.py`), and only
the readings of English went in.

The reader and their company (the greeting, the material's CRM line) are present
in every sentence: a figure in a sentence that names no one is said of the reader's company
("Congratulations on reaching 600 customers"), and a passage pinning a fact on them pins it
on no one else, unless the sentence gives it to another ("Initech employs 412" when the
reader's company does).

Outreach drafts are judged with this check (`gate.judge(..., together=True)`); a summary
(a vault page) is not, since it joins what its source says in different sentences (it
lowered SummEdits' balanced accuracy: BENCHMARKS.md); `company-ai gate` judges as outreach
does (`find_unsupported_claims(..., together=True)`). The sources are looked at only for a
sentence that may pair (a name and another claim); a pair is first looked for in the passages that
may hold both, and a name in a passage's normalised text, before any passage is indexed
(each at most once); each claim pairs with at most `REACH` claims after it, so the work
stays linear in the draft and in the sources. Each shortcut gives the plain form's answer
(tests compare them).
"""

from __future__ import annotations

import functools
import re
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from typing import NamedTuple

from company_ai.core.gate.claim import Claim
from company_ai.core.gate.clauses import (
    _A_NAME,
    _CLAUSE_END,
    _CONJOINED,
    _DESCRIBED,
    _GERUND,
    _JOINING,
    _LIST,
    _NOUN_ENDINGS,
    _OBJECT,
    _POSSESSED,
    _YOURS,
    _after_lower,
    _just_before,
    _relatives,
    sentences,
)
from company_ai.core.gate.extract import Mentions
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.names import _ALSO_CALLED_FIRST, _PLACE_OF, _name_key, _names, _norm
from company_ai.core.gate.phrases import _fold, _sentence_start
from company_ai.core.gate.presence import _plain_opening as presence_plain_opening
from company_ai.core.gate.presence import _undot, _unsupported_parts, check, named_inside
from company_ai.core.gate.values import DATE_WORDS, GREETING
from company_ai.core.gate.words import CONNECTORS, DEMONYMS, PLACES

# Which classes of claim pair up: "name", "number" (numbers, money, percentages). A name
# and a date do not: on the dev parts of issue 28's split (`evals/gate_split.py`) that pair
# caught 2 fabricated drafts and held back 6 fair ones ("Orwell Vets in 2025", "an FDA
# inspection in June 2024"); a date is checked by presence alone.
PAIRS = frozenset({("name", "number"), ("name", "name")})
# How many neighbouring source sentences a pair may span (1: one sentence).
WINDOW = 1
# Each claim pairs with at most this many claims after it in its sentence: linear time.
REACH = 4


class Mine(NamedTuple):
    """The subjects a draft's sentence may give a fact to, as the words of their names:
    those it names, and those present in every sentence unnamed (the reader and their
    company, from the greeting and the material's CRM line)."""

    named: list[tuple[str, ...]]
    present: list[tuple[str, ...]]


class _Item(NamedTuple):
    """A supported claim that may pair: its span, class and how to test a passage."""

    start: int
    end: int
    cls: str
    supported_by: Callable[[SourceIndex], bool]
    memo: tuple  # what it claims, the same for the same claim: its passages are found once
    key: str  # the name's key ("" for a value)
    # A lower-case word every passage holding it contains ("" for a value: a passage with a
    # value); None when there is none to rely on (another name of a country, an acronym).
    hint: str | None
    quick: str  # how a passage may be tested without its index (`_quick`): "" for a value


class Passages:
    """The sources cut into sentences, each indexed on its own when first asked."""

    def __init__(self, index: SourceIndex) -> None:
        self.joined = index.joined
        self.allow = index.allow
        self._index = weakref.ref(index)  # (its entry in _PASSAGES must not keep it alive)
        self.spans = sentences(self.joined)
        self.starts = [a for a, _ in self.spans]
        self.lowered = index.lowered if len(index.lowered) == len(self.joined) else None
        self._indexes: dict[int, SourceIndex] = {}
        self._held: dict[tuple, frozenset[int]] = {}
        self._holds: dict[tuple, bool] = {}
        self._texts: dict[int, tuple[str, str]] = {}
        self._subjects: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
        self._foreign: dict[frozenset[str], bool] = {}
        self._scanned: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
        self._contain: dict[str, set[int]] = {}

    def index(self, i: int) -> SourceIndex:
        found = self._indexes.get(i)
        if found is None:
            a, b = self.spans[i]
            found = self._indexes[i] = SourceIndex([self.joined[a:b]], self.allow)
        return found

    def holding(self, item: _Item) -> frozenset[int]:
        """The passages that support `item` on their own (only those that may are tested)."""
        found = self._held.get(item.memo)
        if found is None:
            found = frozenset(i for i in self._candidates(item) if self.holds(item, i))
            self._held[item.memo] = found
        return found

    def holds(self, item: _Item, i: int) -> bool:
        """Whether passage i supports `item` on its own: `item.supported_by` its index,
        spared where the passage's text alone shows it (`_quickly_held`)."""
        found = self._holds.get((item.memo, i))
        if found is None:
            found = self._quickly_held(item, i) or item.supported_by(self.index(i))
            self._holds[(item.memo, i)] = found
        return found

    def _quickly_held(self, item: _Item, i: int) -> bool:
        """True only where `item.supported_by(self.index(i))` is: a name whose key passage
        i holds as a phrase (`SourceIndex.has_phrase`) and, for one word, written there
        capitalised as a word of its own (so in `SourceIndex.capitalised`). False means
        "ask the index"."""
        if not item.quick:
            return False
        text, normalised = self._text(i)
        if f" {item.key} " not in normalised:
            return False
        if item.quick == "phrase":
            return True  # `presence._known` asks only the phrase
        return _capitalised_word(text, item.memo[1][0])

    def _text(self, i: int) -> tuple[str, str]:
        """Passage i as its own `SourceIndex` holds it: (`joined`, `text`) when the passage
        and the allowed names are ASCII; ("", "") otherwise (no quick answer then)."""
        found = self._texts.get(i)
        if found is None:
            a, b = self.spans[i]
            joined = _fold(self.joined[a:b])[0]
            if joined.isascii() and self._allowed is not None:
                found = (joined, f" {_norm(joined)} | {self._allowed} ")
            else:
                found = ("", "")
            self._texts[i] = found
        return found

    @functools.cached_property
    def _allowed(self) -> str | None:
        """The allowed names as a `SourceIndex` adds them to its `text`; None if any is not
        ASCII (its capitalised words are found otherwise)."""
        if not all(a.isascii() for a in self.allow):
            return None
        return " | ".join(_norm(a) for a in self.allow)

    def held_together(self, a: _Item, b: _Item, mine: Mine, yours: bool = False) -> bool:
        """Whether one passage holds both `a` and `b`, and, for a name and a value, does not
        pin the value on another subject ("Mercadona cut its bills by 30% with Lumen" does
        not tie Lumen to the 30%): tried first, only on the passages that may hold both, so
        a fair pair rarely needs all of either's passages."""
        value = a if not a.key else b if not b.key else None
        name = b if value is a else a
        for i in sorted(set(self._candidates(a)).intersection(self._candidates(b))):
            if (
                self.holds(a, i)
                and self.holds(b, i)
                and (
                    value is None
                    or self._gives(i, value, name)
                    or not self._elsewhere(i, value, mine, value is b and not yours)
                )
            ):
                return True
        return False

    def _gives(self, i: int, value: _Item, name: _Item) -> bool:
        """Whether the name passage i pins `value` on is `name`: the nearest name before
        the value that is no preposition's object. Then the passage ties the two,
        whoever else it names ("Accountancy Age ranked Marlowe & Co 48th" ties Marlowe to
        the 48th; "worked at KPMG for 12 years" ties KPMG to no figure)."""
        before = self._before(i, value)
        a, b = self.spans[i]
        text = self.joined[a:b]
        mine = tuple(name.key.split())
        said = self._named(i)
        if value.start < name.start and any(at > before and _same(w, mine) for at, w in said):
            return True  # in the draft's order: "…at 9%, against 38% for BT"
        named = [(at, w) for at, w in said if at < before and w]
        if not named:
            return False
        inside = [r for r in _relatives(text, 0, len(text)) if r[0] < before < r[1]]
        if inside:  # "Docuverse, whose product is used by 9,000 firms": Docuverse's
            ahead = [w for at, w in named if at < inside[0][0]]
            return bool(ahead) and _same(ahead[-1], mine)
        nearest = next(
            (w for at, w in reversed(named) if not _just_before(_OBJECT, text, 0, at)), None
        )
        # The clause's subject: its first name, or the nearest to the figure that is no
        # preposition's object ("Sundara holds GOTS certification and employs 1,800").
        return _same(named[0][1], mine) or (nearest is not None and _same(nearest, mine))

    def _named(self, i: int) -> list[tuple[int, tuple[str, ...]]]:
        """Where passage i names someone, and the words of the name's key: its capitalised
        runs less dates, ordinary opening words, places and peoples, those owned by a
        pronoun ("its Leoben project") or inside a relative clause included (`subjects`
        starts from these: the passage is scanned once)."""
        found = self._scanned.get(i)
        if found is None:
            a, b = self.spans[i]
            text = self.joined[a:b]
            index = self._index()  # the whole sources say which words are ordinary
            assert index is not None
            found = self._scanned[i] = [
                (start, tuple(key.split()))
                for start, end, words in _names(text, [])
                if not any(w.lower() in DATE_WORDS for w in words)  # "March", "Monday"
                and not (
                    _sentence_start(text, start)
                    and _plain_opening(words, index, text[end : end + 64])
                )
                and not _is_place(key := _name_key(words))
            ]
        return found

    def _before(self, i: int, value: _Item) -> int:
        """Where passage i says `value`: its first figure saying it, else its last one (its
        end if it says none)."""
        values = self.index(i).values
        if not values.starts:
            return self.spans[i][1] - self.spans[i][0]
        said = value.memo[1].date if value.memo[1].kind == "date" else value.memo[1].value
        return next(
            (s for s, v in zip(values.starts, values.said, strict=True) if v == said),
            values.starts[-1],
        )

    def _candidates(self, item: _Item) -> Iterable[int]:
        if item.hint is None or self.lowered is None:
            return range(len(self.spans))
        if not item.hint:
            return self._valued
        return self._containing(item.hint)

    @functools.cached_property
    def _valued(self) -> list[int]:
        """The passages that say a value, or "both" (which counts two): where the values
        the whole sources say start (parsed once, for the presence gate)."""
        index = self._index()
        assert index is not None  # (asked only while the index is in use)
        found = {self._at(start) for start in index.values.starts}
        return sorted(found | self._containing("both"))

    def _containing(self, word: str) -> set[int]:
        """The passages holding `word` (read only: kept, since each pair asks again)."""
        found = self._contain.get(word)
        if found is not None:
            return found
        found, at = set(), self.lowered.find(word)  # type: ignore[union-attr]
        while at >= 0:
            found.add(self._at(at))
            at = self.lowered.find(word, at + 1)  # type: ignore[union-attr]
        self._contain[word] = found
        return found

    def foreign(self, present: frozenset[str]) -> bool:
        """Whether a passage saying a value may pin it on someone: it capitalises a word
        that is no word of `present` (lower case), no date, place or people, and no
        ordinary word opening it. (A text test, before any passage is indexed: false only
        where `subjects` would find no one but the present.)"""
        found = self._foreign.get(present)
        if found is None:
            found = self._foreign[present] = self._names_someone(present)
        return found

    def _names_someone(self, present: frozenset[str]) -> bool:
        index = self._index()
        assert index is not None
        for i in self._valued:
            a, b = self.spans[i]
            passage = self.joined[a:b]
            for at, words in _capitalised_runs(passage):
                end = passage.find(words[0]) + len(words[0]) if at == 0 else 0
                if at == 0 and _plain_opening(words, index, passage[end : end + 64]):
                    words = words[1:]  # "Revenue grew…", "In 2021…"
                lower = [w.lower() for w in words]
                if not lower or lower[0] in present:
                    continue  # the present's own name ("Globex Harbor"): `_same`, by its first word
                if all(w in DATE_WORDS or _is_place(w) for w in lower):
                    continue
                return True
        return False

    def _at(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def subjects(self, i: int, partner: _Item) -> list[tuple[str, ...]]:
        """The words of each name passage i pins `partner` on: for a value, the names
        before it ("Revenue grew 41%, led by Keystone" pins the 41% on no one); for a name,
        every other name ("Ana Silva leads Hooli" ties Ana to Hooli). A place or a people
        is where, not who; a sentence-opening word that is no name is left out."""
        found = self._subjects.get(i)
        if found is None:
            a, b = self.spans[i]
            text = self.joined[a:b]
            relatives = _relatives(text, 0, len(text))
            found = self._subjects[i] = [
                (start, words)
                for start, words in self._named(i)
                # "Its Jebel Ali terminal": its; "opened a Fukuoka office": what, not who
                if not _just_before(_POSSESSED, text, 0, start)
                and not any(a <= start < b for a, b in relatives)  # "Diageo, which owns …,"
                and not _just_before(_A_NAME, text, 0, start)
            ]
            between = text[: found[1][0]].split()[1:] if len(found) > 1 else []
            if (
                len(between) == 1
                and between[0] in _DESCRIBED
                and found[0][0] == 0
                and len(found[0][1]) == 1
            ):
                del found[0]  # "Grocery chain Bukka Fresh…": a word describing the name
        if partner.key:
            return [words for _, words in found]
        at = self._before(i, partner)
        return [words for start, words in found if start < at]

    def together(self, a: _Item, b: _Item, mine: Mine, yours: bool = False) -> bool:
        """Whether the sources may tie `a` to `b`: a passage (or a window of `WINDOW`)
        holds both; or neither is a name whose partner is pinned, in every passage holding
        it, on a subject that is none of `mine` (the sentence's names, as words). `yours`:
        the sentence gives `b` to the reader ("led your $75 million round")."""
        if self.held_together(a, b, mine, yours):
            return True  # the common case, found without all the passages of either
        for name, partner in ((a, b), (b, a)):
            if name.key and self._pinned_elsewhere(partner, mine, name is a and not yours):
                held, held_name = self.holding(partner), self.holding(name)
                if held_name and not any(
                    i + d in held
                    for i in held_name
                    for d in range(1 - WINDOW, WINDOW)
                    if d or partner.key  # (one passage pinning a value elsewhere ties nothing)
                ):
                    return False
        return True  # (or the name is held nowhere, or in one window with its partner)

    def _pinned_elsewhere(self, item: _Item, mine: Mine, after_name: bool) -> bool:
        """Whether some passage holds `item` and every one that does pins it on a subject
        none of `mine` names; the passages are tried only until one does not."""
        held = False
        for i in self._candidates(item):
            if self.holds(item, i):
                if not self._elsewhere(i, item, mine, after_name):
                    return False
                held = True
        return held

    def _elsewhere(self, i: int, partner: _Item, mine: Mine, after_name: bool) -> bool:
        """Whether passage i pins `partner` on a subject the sentence does not name: one
        neither named nor present, or, where the sentence's name stands before `partner`
        as its subject (`after_name`), only the reader's own (the sentence gives their
        figure to someone else: "Initech now employs 412" when the reader's company does;
        not "the 2024 award from the Institute", which gives it to no one)."""
        subjects = [words for words in self.subjects(i, partner) if words]
        named = [any(_same(words, m) for m in mine.named) for words in subjects]
        present = [any(_same(words, m) for m in mine.present) for words in subjects]
        if any(not n and not p for n, p in zip(named, present, strict=True)):
            return True
        return after_name and any(present) and not any(named)


_RUN_CHAR = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_'.-")


def _capitalised_word(text: str, word: str) -> bool:
    """Whether ASCII `text` writes `word` (a capitalised ASCII word, letters and digits) as
    a run of its own (`index._ASCII_RUN`, the run `SourceIndex.capitalised` reads), or
    followed by . or - (after which `_norm` splits it off all the same)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if not (at and text[at - 1] in _RUN_CHAR) and not (
            end < len(text) and text[end] in _RUN_CHAR and text[end] not in ".-"
        ):
            return True
        at = text.find(word, at + 1)
    return False


def _plain_opening(words: list[str], index: SourceIndex, after: str = "") -> bool:
    """`presence._plain_opening`, and one word alone that ends as an abstract noun does."""
    if len(words) == 1 and len(words[0]) > 5 and words[0].lower().endswith(_NOUN_ENDINGS):
        return not index.is_name(words[0])
    return presence_plain_opening(words, index, after)


def _same(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two names may name one subject: the same first word ("Redfern Clinics",
    "Redfern Dock"), or one inside the other ("Globex", "the Globex Group")."""
    if a[0] == b[0]:
        return True
    short, long = sorted((a, b), key=len)
    return f" {' '.join(short)} " in f" {' '.join(long)} "


_PASSAGES: weakref.WeakKeyDictionary[SourceIndex, Passages] = weakref.WeakKeyDictionary()


def _passages(index: SourceIndex) -> Passages:
    found = _PASSAGES.get(index)
    if found is None:
        found = _PASSAGES[index] = Passages(index)
    return found


def _items(mentions: Mentions, index: SourceIndex, reader: set[str]) -> list[_Item]:
    """The text's claims the sources support that may pair, in text order."""
    return [item for item in _claims(mentions, index, reader) if item.supported_by(index)]


def _claims(
    mentions: Mentions, index: SourceIndex, reader: set[str], pairable: _Pairable | None = None
) -> list[_Item]:
    """The text's claims that may pair, in text order, supported or not; with `pairable`,
    only those in a sentence that may pair (`_pairable`)."""
    text = mentions.folded or mentions.text
    items: list[_Item] = []
    for n, (start, end, value, hedge, noun) in enumerate(mentions.values):
        if value.weekday or value.phrase or value.kind == "date":
            continue  # a weekday or "last year" is the writer's time; a date pairs with nothing
        if pairable is not None and not pairable.values[n]:
            continue

        def value_held(i: SourceIndex, value=value, hedge=hedge, noun=noun) -> bool:
            return i.supports_value(value, hedge, noun)

        cls = "number"
        said = ("v", value, hedge, noun)
        items.append(_Item(start, end, cls, value_held, said, "", "", ""))
    allowed = _allowed_words(index.allow)
    inside: frozenset[str] | None = None  # as `presence.check` reads an opening word alone
    for n, (start, end, words, _) in enumerate(mentions.names):
        if pairable is not None and not pairable.names[n]:
            continue
        after = ""
        if len(words) == 1 and start in mentions.openings:
            inside = named_inside(mentions) if inside is None else inside
            after = "" if words[0] in inside else text[end : end + 64]
        if start in mentions.openings and presence_plain_opening(words, index, after):
            if len(words) == 1:
                continue  # "Impressive growth…": an ordinary word
            start = end - len(" ".join(words[1:]))
            words = words[1:]
        while len(words) > 1 and words[0].lower() in CONNECTORS:
            start = end - len(" ".join(words[1:]))  # "of the Commission": "Commission"
            words = words[1:]
        if "." in text[start:end]:
            words = [_undot(w) for w in words]
        key = _name_key(words)
        if not key or key in reader or set(key.split()) <= allowed or _is_place(key):
            continue
        items.append(_name_item(start, end, words))
    items.sort(key=lambda item: item.start)
    return items


def _name_item(start: int, end: int, words: list[str]) -> _Item:
    """A name at [start, end) of the text (empty for the reader's company, named nowhere)."""
    key = _name_key(words)

    def name_held(i: SourceIndex) -> bool:
        return next(iter(_unsupported_parts(words, i)), None) is None

    named = ("n", tuple(words))
    return _Item(start, end, "name", name_held, named, key, _hint(words, key), _quick(words, key))


@functools.lru_cache(maxsize=16)
def _allowed_words(allow: tuple[str, ...]) -> frozenset[str]:
    """The words of the allowed names' keys (the sender's: the same for every draft)."""
    return frozenset(word for a in allow for word in _name_key(a.split()).split())


def _hint(words: list[str], key: str) -> str | None:
    """The first word of a name's key ("redfern" for "the Redfern Clinics"), which every
    passage holding the name holds too, in lower case; None where the sources may write it
    otherwise (an acronym, another name of a country, an accent or an apostrophe); `key`
    is the name's (`_name_key`)."""
    first = key.split(" ", 1)[0]
    if not first.isascii() or not first.isalpha() or first in _ALSO_CALLED_FIRST:
        return None
    if not any(w.lower().startswith(first) and not w.isupper() for w in words):
        return None
    return first


def _quick(words: list[str], key: str) -> str:
    """How `Passages._quickly_held` may test a name: "phrase" when `presence._known` asks only
    that the sources hold its key as a phrase (several words or a key of several, none an
    acronym); "word" for one plain ASCII word opening with a capital, its own key (the
    phrase and a capitalised word); else "" (the index is asked)."""
    if any(len(w) > 1 and w.isupper() for w in words):
        return ""
    if len(words) > 1 or " " in key:
        return "phrase"
    word = words[0]
    if word.isascii() and word.isalnum() and word[0].isupper() and key == word.lower():
        return "word"
    return ""


def _is_place(key: str) -> bool:
    """A place or a people: where something happens, rarely whom a fact is about."""
    return key in PLACES or key in DEMONYMS or key in _PLACE_OF


# The contact and their company as `drafting.source_material` writes them: "CRM: Ana
# Silva <ana@globex.example>, CFO at Globex Ltd, Leeds."
_CRM = re.compile(
    r"^CRM: ([^<\n]+?) <[^>\n]*>, [^\n]* at ([^\n]+?), [^,\n]*\.[ \t]*$", re.MULTILINE
)


class _Crm(NamedTuple):
    """Who the material's CRM line says the reader is."""

    names: frozenset[str]  # the name keys of the contact and their company
    company: tuple[str, ...] | None  # the company's words, if it names one


@functools.lru_cache(maxsize=64)
def _crm(joined: str) -> _Crm:
    found = _CRM.search(joined) if "CRM: " in joined else None
    if found is None:
        return _Crm(frozenset(), None)
    company = tuple(found.group(2).split())
    return _Crm(
        frozenset(_name_key(part.split()) for part in found.groups()),
        company if company and company != ("None",) else None,
    )


def _capitalised_runs(text: str) -> Iterable[tuple[int, list[str]]]:
    """(where it starts, its words) of each run of capitalised words in `text`, stripped of
    the punctuation around them (any script: "Łódź Logistics")."""
    run: list[str] = []
    start = at = 0
    for token in text.split(" "):
        word = token.strip(_PUNCTUATION)
        if word[:1].isupper():
            if not run:
                start = at
            run.append(word)
            if token != token.rstrip(_PUNCTUATION):
                yield start, run  # a comma or full stop after it ends the run
                run = []
        elif run:
            yield start, run
            run = []
        at += len(token) + 1
    if run:
        yield start, run


_PUNCTUATION = ".,;:!?\"'“”‘’()[]"
# A sentence about the sender's own company: its figures are not the reader's.
_OURS = re.compile(r"\b(?:we|our|ours|us)\b", re.IGNORECASE)


def _reader(mentions: Mentions) -> set[str]:
    """The name keys of a greeting line ("Hi Priya and team,"): the reader is no claim."""
    text = mentions.folded or mentions.text
    skipped = len(text) - len(text.lstrip())
    first = text[skipped:].split("\n", 1)[0]
    if not GREETING.match(first):
        return set()
    end = skipped + len(first)
    named = {_name_key(words) for start, _, words, _ in mentions.names if start < end}
    return named | mentions.reader


def misattributed(mentions: Mentions, index: SourceIndex) -> list[tuple[int, int]]:
    """The [start, end) spans (in `mentions.folded`) of the pairs of supported claims that
    one sentence ties together and no source passage holds together."""
    if not mentions.values and len(mentions.names) < 2:
        return []  # the common case for a short text: nothing to pair
    crm = _crm(index.joined)
    company = crm.company if mentions.values else None
    if len(mentions.values) + len(mentions.names) < (1 if company else 2):
        return []
    text = mentions.folded or mentions.text
    spans = sentences(text)
    pairable = _pairable(mentions, [end for _, end in spans], company is not None)
    if not pairable:
        return []
    reader = _reader(mentions)
    items = _claims(mentions, index, reader, pairable)
    # Named in every sentence without being written there: the reader and their company.
    present = [tuple(key.split()) for key in reader | crm.names if key]
    present_words = frozenset(word for words in present for word in words)
    found: list[tuple[int, int]] = []
    at = 0
    for start, end in spans:
        inside = []
        while at < len(items) and items[at].start < end:
            inside.append(items[at])
            at += 1
        if company and inside and not any(i.key for i in inside):
            inside = [item for item in inside if item.supported_by(index)]
            if not any(i.cls == "number" for i in inside) or _OURS.search(text, start, end):
                continue  # no figure the sources hold, or the sender's own ("We grew 40%")
            if not _passages(index).foreign(present_words):
                continue  # no passage saying a figure names anyone else
            # No name: a figure said of the reader's company ("Congratulations on reaching
            # 600 customers"), as if it were named at the sentence's start.
            inside.insert(0, _name_item(start, start, list(company)))
        if len(inside) < 2 or all(not item.key for item in inside):
            continue  # no pair: its claims need not be looked for in the sources
        inside = [item for item in inside if item.supported_by(index)]
        mine = Mine([tuple(item.key.split()) for item in inside if item.key], present)
        # listed[k]: the items from the one opening item k's list ("Ana, Bob and Carl") on
        listed = list(range(len(inside)))
        for k in range(1, len(inside)):
            a, b = inside[k - 1], inside[k]
            if a.key and b.key and _LIST.fullmatch(text[a.end : b.start]):
                listed[k] = listed[k - 1]
        if len(inside) < 2:
            continue
        first, last = inside[0].end, inside[-1].start
        # (to the sentence's end: a break's look-ahead reads the claim after it)
        breaks = [m.start() for m in _CLAUSE_END.finditer(text, first, end) if m.start() < last]
        breaks += [
            m.start()
            for m in _CONJOINED.finditer(text, first, end)
            if m.start() < last and _after_lower(text, m.start())
        ]
        breaks.sort()
        relatives = _relatives(text, first, end)
        for k, a in enumerate(inside):
            for j in range(k + 1, min(len(inside), k + 1 + REACH)):
                b = inside[j]
                if (a.cls, b.cls) not in PAIRS and (b.cls, a.cls) not in PAIRS:
                    continue
                after_a = bisect_left(breaks, a.end)
                if after_a < len(breaks) and breaks[after_a] < b.start:
                    continue  # in two clauses: "…in 2023, and Initech…" ties nothing
                if not _one_clause(a, b, inside[k + 1].start, relatives):
                    continue
                if a.key == b.key or listed[j] <= k:
                    continue  # the same name twice, or one list ties nothing together
                if (
                    a.key
                    and b.key
                    and _object(text, start, inside, k)
                    and _object(text, start, inside, j)
                ):
                    continue  # two objects: "for Hanil Energy with steel from Aceros del Norte"
                yours = _just_before(_YOURS, text, a.end, b.start)
                # A name after a preposition or an -ing verb is its object, not the subject
                # the figure after it is said of: "Using Mews … for 11 hotels".
                yours |= bool(a.key) and _just_before(_GERUND, text, start, a.start)
                if not _passages(index).together(a, b, mine, yours):
                    found.append((a.start, b.end))
    return found


def _object(text: str, start: int, inside: list[_Item], k: int) -> bool:
    """Whether name k of `inside` is a preposition's object ("from Aceros del Norte"; the
    name it continues after a connector, such as "del", counts), not a possessor
    ("on Sundara's factory", which ties Sundara to what follows)."""
    item = inside[k]
    while k and _JOINING.fullmatch(text, inside[k - 1].end, item.start):
        k -= 1  # "Aceros del Norte": "Norte" is part of the name before it
        item = inside[k]
    end = inside[k].end
    while end < len(text) and text[end] not in " ,.;":
        end += 1
    if text[item.start : end].lower().endswith(("'s", "’s", "'", "’")):
        return False
    return _just_before(_OBJECT, text, start, item.start)


def _one_clause(a: _Item, b: _Item, after_a: int, relatives: list[tuple[int, int]]) -> bool:
    """Whether a relative clause leaves `a` and `b` tied: a claim inside one is tied to the
    claim just before it (`after_a`: where the claim after `a` starts) and to nothing after
    it ("Mews, which also serves Accor, for 11 hotels": Accor and 11 are not tied)."""
    for start, stop in relatives:
        if a.end <= start < b.start < stop:
            return after_a >= start  # the antecedent: "Globex, which grew 41%"
        if start <= a.start < stop <= b.start:
            return False
    return True


class _Pairable(NamedTuple):
    """Which sentences may hold a name and another claim (what `misattributed` needs
    before it looks at the sources), and so which of `mentions.values` and
    `mentions.names` may pair. A claim belongs to the first sentence ending after its
    start; a name, trimmed at its start, to one its run touches. False when none may."""

    may: list[bool]
    values: list[bool]
    names: list[bool]

    def __bool__(self) -> bool:
        return any(self.may)


def _pairable(mentions: Mentions, ends: list[int], implied: bool = False) -> _Pairable:
    """`_Pairable` for the sentences ending at `ends`; with `implied`, a sentence with a
    figure and no name may pair too (with the reader's company)."""
    counts, named = [0] * len(ends), [False] * len(ends)
    figures = [False] * len(ends)
    value_at = []  # each value's sentence (none for a weekday or a relative time)
    for start, _, value, _, _ in mentions.values:
        pairs = not (value.weekday or value.phrase or value.kind == "date")
        k = bisect_right(ends, start) if pairs else len(ends)
        value_at.append(k)
        if k < len(ends):
            counts[k] += 1
            figures[k] |= value.kind != "date"
    name_at = []
    for start, end, _, _ in mentions.names:
        touched = range(bisect_right(ends, start), min(len(ends), bisect_right(ends, end - 1) + 1))
        name_at.append(touched)
        for k in touched:
            counts[k] += 1
            named[k] = True
    may = [
        (n > 1 and name) or (implied and figure and not name)
        for n, name, figure in zip(counts, named, figures, strict=True)
    ]
    return _Pairable(
        may,
        [k < len(ends) and may[k] for k in value_at],
        [any(may[k] for k in touched) for touched in name_at],
    )


def check_together(mentions: Mentions, index: SourceIndex) -> list[Claim]:
    """`check`, and the pairs the sources do not hold together (`misattributed`)."""
    claims = check(mentions, index)
    origin = mentions.origin
    for s, e in misattributed(mentions, index):
        if origin is not None:
            s, e = origin[s], origin[e - 1] + 1
        claims.append(Claim(mentions.text[s:e], "misattributed", s, e))
    claims.sort(key=lambda c: (c.start, c.end))
    return claims
