"""`check(mentions, index)`: the mentions the sources do not hold anywhere, as `Claim`s (the
presence gate)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from company_ai.core.gate.claim import Claim, Kind
from company_ai.core.gate.extract import Mentions
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.names import (
    _ALSO_CALLED,
    _ALSO_CALLED_FIRST,
    _HYPHEN_SUFFIX,
    _name_key,
    _norm,
    _norm_tokens,
)
from company_ai.core.gate.phrases import _PHRASE_KINDS, _hedge_before, _noun_after
from company_ai.core.gate.values import _Spans
from company_ai.core.gate.words import (
    CONNECTORS,
    CORPORATE,
    DEMONYMS,
    ENGLISH_ENDINGS,
    HEDGES,
    HONORIFICS,
    OBJECT_OPENERS,
    OPENERS,
    ORG_WORDS,
    PLACES,
    ROLE_WORDS,
    TIME_NOUNS,
    TITLE_WORDS,
    VAGUE_COUNTS,
)


def check(mentions: Mentions, index: SourceIndex) -> list[Claim]:
    """The mentions the sources do not support, as claims in text order. A capitalised
    run is split into the longest phrases the sources know; the rest are its claims."""
    text = mentions.folded or mentions.text
    origin = mentions.origin
    found: list[tuple[int, int, Kind]] = [
        (start, end, value.kind)
        for start, end, value, hedge, noun in mentions.values
        if not index.supports_value(value, hedge, noun)
    ]
    found += [
        (start, end, "product") for start, end, key in mentions.quoted if not index.has_phrase(key)
    ]
    lowered = text.lower() if mentions.phrases else text
    found += [
        (start, end, kind)  # type: ignore[misc]
        for start, end, kind, what in mentions.phrases
        if not index.supports_phrase(
            kind,
            what,
            _noun_after(lowered, end),
            _hedge_before(lowered, start) if what in VAGUE_COUNTS else None,
        )
    ]
    # Sources that do not say who the reader is (no CRM line): the names a greeting
    # addresses are the reader's, no claim there or later ("Hi Dana, … Dana, you said…").
    # Sources that do (an outreach draft's material) must hold them: "Hello Maja," to
    # Donald is a claim.
    reader = [set(key.split()) for key in mentions.reader]
    if reader and _NAMES_THE_READER.search(index.joined):
        reader = []
    inside: frozenset[str] | None = None  # the words the text capitalises past an opening
    for start, end, words, before in mentions.names:
        if reader and _is_reader(words, reader):
            continue
        if all(_norm(w) in HONORIFICS for w in words):
            continue  # "Ms" cut from its name by the full stop ("Dear Ms. Reyes"): no name
        offsets = None  # of each word in the run, found once: a long run has many parts
        dotted = "." in text[start:end]  # "U.S." is "US"
        for a, b, _part in _unsupported_parts(
            [_undot(w) for w in words] if dotted else words, index
        ):
            if a == 0 and start in mentions.openings:
                after = ""  # the text after a word alone, unless the text names it elsewhere
                if len(words) == 1:
                    inside = named_inside(mentions) if inside is None else inside
                    after = "" if words[0] in inside else text[end : end + 64]
                # A sentence-opening word the company knows as no name ("Impressive …",
                # "Clearly Acme …", "Verify the …") is an ordinary word; a known name
                # ("Calendly") is not.
                if _plain_opening(words, index, after):
                    if b == 1:
                        continue
                    a = 1
            offsets = offsets or _offsets(text[start:end], words)
            s = start + offsets[a]
            e = start + offsets[b - 1] + len(words[b - 1])
            if b - a == 1 and "-" in words[a] and (parts := _unknown_parts(words[a], index)):
                # "British-Iranian" where the sources say "British": the claim is "Iranian".
                found += [(s + at, s + at + len(p), _classify([p], before)) for at, p in parts]
                continue
            found.append((s, e, _classify(words[a:b], before)))
    found += index.known_in(text, mentions)
    # A role that is also an unsupported name ("As CFO,") is one claim: the name; and a
    # number inside a boast ("#1") is the boast.
    named = _Spans([(s, e) for s, e, kind in found if kind not in _PHRASE_KINDS])
    boasts = _Spans([(s, e) for s, e, kind in found if kind == "superlative"])
    found = [
        (s, e, kind)
        for s, e, kind in found
        if not (kind == "role" and (named(s) or named(e - 1)))
        and not (kind == "number" and boasts(s))
    ]
    claims = []
    for s, e, kind in found:
        if origin is not None:
            s, e = origin[s], origin[e - 1] + 1
        claims.append(Claim(mentions.text[s:e], kind, s, e))
    claims.sort(key=lambda c: (c.start, c.end))
    return claims


# The material's line saying who the reader is (`core/outreach/drafting.py`).
_NAMES_THE_READER = re.compile(r"^CRM: ", re.MULTILINE)


def _is_reader(words: list[str], reader: list[set[str]]) -> bool:
    """Whether a name is the greeting's reader's, or a part of it ("Dana" of "Dana Reyes")."""
    tokens = set(_name_key(words).split())
    return bool(tokens) and any(tokens <= names for names in reader)


def named_inside(mentions: Mentions) -> frozenset[str]:
    """The words `mentions` capitalises other than at a sentence's opening: a word the text
    writes so ("… we help Zentrix") is a name wherever it stands."""
    return frozenset(
        w
        for start, _, words, _ in mentions.names
        for w in (words[1:] if start in mentions.openings else words)
    )


def _plain_opening(words: list[str], index: SourceIndex, after: str = "") -> bool:
    """Whether a sentence-opening run's first word is an ordinary word: alone in its run,
    or an adverb or participle before a name ("Clearly Acme"), and no name anyone knows.
    `after` is the text right after the run (or "" not to read it): one word before an
    object is a verb (`_imperative`)."""
    first = words[0]
    lower = first.lower()
    if first.isupper() or index.is_name(first):
        return False
    if index.writes_lower(lower):
        return True  # "Shares in Acme…": the sources use it as an ordinary word
    if after and len(words) == 1 and _imperative(first, after):
        return True  # "Verify the numbers with me": a verb, its object after it
    if len(words) > 1:
        return lower.endswith(("ly", "ing", "ed"))  # "Clearly Acme", "Congratulating Acme"
    english = len(lower) > 5 and lower.endswith(ENGLISH_ENDINGS)
    compound = "-" in first and first.split("-", 1)[1].islower()  # "Month-end", "Follow-up"
    # A hedge word the gate reads before numbers ("Almost 400 people…") names no one.
    return lower in OPENERS or lower in HEDGES or english or compound


def _imperative(word: str, after: str) -> bool:
    """Whether a word alone opening a sentence is a verb in the imperative: a word of
    letters, then one space and a determiner or object pronoun ("Verify the numbers",
    "Send me the deck"), which a name is very rarely followed by (it is followed by its
    verb, or a comma: "Dana, the numbers…"), unless they open a time: "Acme this year
    grew", "Acme a decade ago" name Acme."""
    if not word.isalpha() or after[:1] != " ":
        return False
    tokens = after.split(None, 3)[:3]
    if not tokens or tokens[0].rstrip(".,;:!?") not in OBJECT_OPENERS:
        return False
    for token in tokens[1:]:
        noun = token.rstrip(".,;:!?")
        if noun in TIME_NOUNS or (noun[-1:] == "s" and noun[:-1] in TIME_NOUNS):
            return False
    return True


# --- checking: what the sources do not support --------------------------------------------


def _offsets(segment: str, words: list[str]) -> list[int]:
    """Where each of `words` starts in `segment`, the words found in order."""
    found, pos = [], 0
    for w in words:
        found.append(segment.index(w, pos))
        pos = found[-1] + len(w)
    return found


_DOTTED = re.compile(r"(?:[A-Z]\.){1,3}[A-Z]\.?")


def _undot(word: str) -> str:
    """An acronym written with full stops as one without: "U.S." is "US"."""
    return word.replace(".", "") if "." in word and _DOTTED.fullmatch(word) else word


def _known(words: list[str], index: SourceIndex) -> bool:
    """The sources name this phrase (an acronym must appear in capitals: IT is not "it").
    Asked once an index for each phrase (`SourceIndex.known_phrase`)."""
    phrase = tuple(words)
    found = index.known_phrase.get(phrase)
    if found is None:
        found = index.known_phrase[phrase] = _known_afresh(words, index)
    return found


def _known_afresh(words: list[str], index: SourceIndex) -> bool:
    key = _name_key(words)
    if key in _ALSO_CALLED and index.calls_otherwise(key):
        return True
    acronyms = [w for w in words if len(w) > 1 and w.isupper()]
    if not all(index.has_acronym(a) for a in acronyms):
        return False
    if len(words) == 1 and not acronyms and " " not in key:
        if key in index.capitalised and index.has_phrase(key):
            return True
        # A people in the singular or the plural is one claim ("Indian" and "Indians").
        other = _other_number(key)
        if other is not None and other in index.capitalised and index.has_phrase(other):
            return True
        return _of_a_named_place(words, index)
    return index.has_phrase(key) or _of_a_named_place(words, index)


def _of_a_named_place(words: list[str], index: SourceIndex) -> bool:
    """A people's name the sources support by naming its place: "Kenyan" by "Kenya",
    "South African" by "South Africa", "German" by "Germany", "British-Iranian" by each.
    One way only: a people is of its place, while a place is not shown by a people
    ("Welsh" singers live anywhere)."""
    if len(words) == 1 and "-" in words[0]:
        parts = words[0].split("-")
        return all(_places_of(p.lower()) and _known([p], index) for p in parts)
    places = _places_of(words[-1].lower())  # (most words: none, from a memo)
    if not places or not words[-1][:1].isupper() or any(len(w) > 1 and w.isupper() for w in words):
        return False
    head = " ".join(w.lower() for w in words[:-1])
    return any(
        index.has_phrase(named) and named.rsplit(" ", 1)[-1] in index.capitalised
        for place in places
        if (named := f"{head} {place}".strip())
    )


@functools.lru_cache(maxsize=4096)
def _places_of(people: str) -> tuple[str, ...]:
    """The places a people's name (lower case) is of: the gate's demonyms' ("german":
    "germany"), or a place the gate knows with the name's ending taken off ("kenyan":
    "kenya"; "Christian" is not of "Christ"). A short form (`UK`) is left out: "us"."""
    if people.endswith("s") and people[:-1] in _PEOPLE_PLACES:
        people = people[:-1]
    found = list(_PEOPLE_PLACES.get(people, ()))
    for end, add in _PEOPLE_ENDINGS:
        if people.endswith(end) and (place := people[: -len(end)] + add) in PLACES:
            found.append(place)
    return tuple(found)


def _unknown_parts(word: str, index: SourceIndex) -> list[tuple[int, str]]:
    """The parts of a compound of names ("British-Iranian") the sources do not know, with
    where each starts in it; none when they know none of them (the compound is the claim)."""
    parts, at = [], 0
    for part in word.split("-"):
        if not part[:1].isupper():
            return []  # "Follow-up", "Anglo-based": one word, not names joined
        parts.append((at, part))
        at += len(part) + 1
    unknown = [(at, part) for at, part in parts if not _known([part], index)]
    return unknown if len(unknown) < len(parts) else []


# How a people's name ends where its place's ends otherwise: Kenya-n, Brazil-ian, Israel-i,
# Mexi-can from Mexico, Kenyan-s.
_PEOPLE_ENDINGS = (("ns", ""), ("n", ""), ("ians", ""), ("ian", ""), ("i", ""), ("can", "co"))
# Each demonym's places, whole ("united kingdom"), short forms left out ("uk": "us").
_PEOPLE_PLACES = {
    people: [p for p in re.split(r" (?!kingdom|states)", places) if len(p) > 3]
    for people, places in DEMONYMS.items()
}


def _other_number(key: str) -> str | None:
    """The other number of a people's name: "indians" for "indian", and back; None for
    any other word."""
    if key in DEMONYMS:
        return key + "s"
    if key.endswith("s") and key[:-1] in DEMONYMS:
        return key[:-1]
    return None


def _segments(words: list[str], index: SourceIndex) -> list[tuple[int, int, bool]]:
    """The run as (start, end, supported): from each start, the longest phrase the sources
    know, else the one word, unsupported (a lone connector is left out)."""
    segments = []
    tokens = [_norm_tokens(_HYPHEN_SUFFIX.sub("", w) if "-" in w else w) for w in words]
    i = 0
    while i < len(words):
        j = _longest_known(words, tokens, i, index)
        if j is not None:
            segments.append((i, j, True))
            i = j
        else:
            if words[i].lower() not in CONNECTORS:
                segments.append((i, i + 1, False))
            i += 1
    return segments


def _longest_known(
    words: list[str], tokens: list[list[str]], i: int, index: SourceIndex
) -> int | None:
    """`_longest_held`, or longer: a country the sources name otherwise ("United States")."""
    best = _longest_held(words, tokens, i, index)
    if tokens[i][:1] and tokens[i][0] in _ALSO_CALLED_FIRST:
        for j in range(min(len(words), i + 4), (best or i), -1):
            if _name_key(words[i:j]) in _ALSO_CALLED and _known(words[i:j], index):
                return j
    return best


def _longest_held(
    words: list[str], tokens: list[list[str]], i: int, index: SourceIndex
) -> int | None:
    """The largest j such that the sources know words[i:j] (`_known`), neither end being a
    connector; None when there is none.

    The same answer as trying every j from the longest down, in time linear in the
    phrase found rather than cubic in the run: the chunk grows one word at a time and its
    key (`_name_key`: the words' normalised tokens, less leading honorifics and `the` and
    trailing corporate suffixes) is kept as it grows. Past one word, a chunk is known when
    its acronyms are and the sources hold its key as a phrase; every prefix of a phrase
    they hold is held too, so the first key of two or more tokens that is missing ends
    the search, as does the first unknown acronym. `tokens[k]` is words[k]'s tokens.
    """
    if words[i].lower() in CONNECTORS:
        return None
    best = i + 1 if _known(words[i : i + 1], index) else None
    core: list[str] = []  # the chunk's tokens without the leading honorifics and `the`
    significant = 0  # len(core) less its trailing corporate suffixes (1 if all are)
    checked = 1  # core's prefixes up to this many tokens are held (one: checked alone)
    for j in range(i + 1, len(words) + 1):
        word = words[j - 1]
        if len(word) > 1 and word.isupper() and not index.has_acronym(word):
            break  # an unknown acronym: no chunk holding it is known
        for token in tokens[j - 1]:
            if core or (token not in HONORIFICS and token != "the"):
                core.append(token)
                if token not in CORPORATE or len(core) == 1:
                    significant = len(core)
        if j == i + 1:
            continue  # one word: decided by _known above (it may accept a variant)
        if significant == 1 and not index.has_phrase(core[0]):
            break  # nor does any longer key, each starting " core[0] "
        while checked < significant:
            if not index.has_phrase(" ".join(core[: checked + 1])):
                return best  # nor is any longer key, all starting with this one
            checked += 1
        if word.lower() not in CONNECTORS:
            best = j
    return best


def _name_like(word: str) -> bool:
    """A word that could be half of a person's name (not an acronym, role, place, possessive)."""
    lower = word.lower()
    return not (
        word.isupper()
        or lower.endswith(("'s", "’s"))
        or lower in ROLE_WORDS
        or lower in TITLE_WORDS
        or lower in HONORIFICS
        or lower in PLACES
    )


def _unsupported_parts(
    words: list[str], index: SourceIndex
) -> Iterable[tuple[int, int, list[str]]]:
    """Split a capitalised run into the longest phrases the sources know; yield the rest.

    Two adjacent single, title-case words found only apart ("John" + "Smith") are not
    a supported name: the pair is reported.
    """
    if _known(words, index):
        return
    segments = _segments(words, index)
    merged: list[list] = []
    for k, (a, b, ok) in enumerate(segments):
        single_name = b - a == 1 and _name_like(words[a])
        prev = segments[k - 1] if k else None
        pair = (
            prev is not None
            and ok
            and prev[2]
            and single_name
            and prev[1] - prev[0] == 1
            and _name_like(words[prev[0]])
            and prev[1] == a
        )
        if pair and prev is not None and index.alone_as(words[prev[0]], words[a]):
            continue  # "Conor McGregor" where the sources say "Conor" and "McGregor" apart
        if pair and prev is not None:
            # Both names are known, never together: the given name is the likely invention.
            lo, hi = prev[0], prev[1]
        elif not ok:
            lo, hi = a, b
        else:
            continue
        if merged and merged[-1][1] >= lo:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    for a, b in merged:
        yield a, b, words[a:b]


def _classify(words: list[str], before: str) -> Kind:
    lower = [w.lower().rstrip(".") for w in words]
    key = _norm(" ".join(words))
    if any(w in ORG_WORDS for w in lower):
        return "organisation"
    if any(w in TITLE_WORDS for w in lower):
        return "other"
    if key in PLACES or key in DEMONYMS or before in ("in", "from", "near", "across", "to"):
        return "place"
    if lower[0] in HONORIFICS:
        return "person"
    if any(any(c.isdigit() for c in w) or re.search(r"[a-z][A-Z]", w) for w in words):
        return "product"
    if all(w[:1].isupper() and not w.isupper() for w in words) and 2 <= len(words) <= 3:
        return "person"
    return "other"
