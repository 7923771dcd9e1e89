"""Look-alike letters folded, addresses, times a text offers, hedges, the nouns after a
number, and the phrase claims (relationships, boasts, roles, durations, ranks)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from company_ai.core.gate.values import Hedge, _word_start
from company_ai.core.gate.words import (
    COMMON,
    CONFUSABLES,
    CURRENCIES,
    HEDGES,
    MULTIPLES,
    NOUN_SYNONYMS,
    RELATIONSHIP_OPENINGS,
    RELATIONSHIPS,
    ROLE,
    ROLE_OPENINGS,
    SCALES,
    SHORT_SCALES,
    SUPERLATIVE,
    SUPERLATIVE_TRIGGERS,
    TIME_UNITS,
    TLDS,
    UNITS,
    VAGUE_COUNTS,
)

# --- look-alikes, addresses, hedges, nouns and phrase claims -------------------------------


def _runs_of(chars: str) -> re.Pattern:
    """Runs of `chars`, written `[c][c]*`, not `[c]+`: the regex engine skips ahead to a
    pattern's opening class, but tries one opening with a repeat at every position."""
    one = "[" + re.escape(chars) + "]"
    return re.compile(one + one + "*")


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_INVISIBLE_CHARS = re.compile("[" + "".join(map(chr, _INVISIBLE)) + "]")
# One table for str.translate (C speed, even on a 5 MB source).
_FOLD = {
    **{ord(k): v for k, v in CONFUSABLES.items()},
    **dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2009\u200a"), " "),
    **{ord(c): str(i) for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
    **{ord(c): str(i) for i, c in enumerate("₀₁₂₃₄₅₆₇₈₉")},
    **{ord(c): str(i) for i, c in enumerate("０１２３４５６７８９")},
    **_INVISIBLE,
}
# A thin, narrow or no-break space grouping digits in thousands ("7 391", as SI and
# French write it) is a thousands separator: read as a comma (one character for one, so
# no offset moves).
_DIGIT_GROUP_SPACE = re.compile(r"(?<=\d)[\u00a0\u2007\u202f\u2009](?=\d{3}(?!\d))")
# Only these characters change: a regex finds them faster than translate walks 5 MB.
_FOLDABLE = _runs_of("".join(map(chr, _FOLD)))
# A letter posing as a digit among digits: "l50" is 150, "4O%" is 40 %.
_DIGITISH = re.compile(r"(?<!\w)[\dlIO][\d,.lIO]*(?<![,.])(?!\w)")
_AS_DIGIT = str.maketrans("lIO", "110")
# What any such letter needs (a digit beside it, maybe across , or .): a cheap test that
# spares most texts the substitution.
_MAY_DIGITISH = re.compile(r"[\dlIO](?:(?<=\d)[,.]*[lIO]|(?<=[lIO])[,.]*\d)")
# In Latin-1 (where every decimal digit is 0-9), by bytes.translate: a digit as 0, a letter
# that may pose as one as l, the commas and full stops between them gone, anything else a
# space; then "0l" or "l0" is `_MAY_DIGITISH`'s test, at C speed.
_DIGIT_SHAPES = bytes(
    ord("0") if chr(c).isdecimal() else ord("l") if chr(c) in "lIO" else ord(" ")
    for c in range(256)
)


def _may_be_digitish(text: str) -> bool:
    try:
        shapes = text.encode("latin-1").translate(_DIGIT_SHAPES, b",.")
    except UnicodeEncodeError:  # beyond Latin-1: other digits may stand there
        return bool(_MAY_DIGITISH.search(text))
    return b"0l" in shapes or b"l0" in shapes


def _as_digits(m: re.Match) -> str:
    found = m.group()
    digits = sum(c.isdigit() for c in found)
    return found.translate(_AS_DIGIT) if digits >= 2 and digits < len(found) else found


def _fold(text: str) -> tuple[str, tuple[int, ...] | None]:
    """The text as a reader sees it: look-alike letters of other scripts as Latin, digits
    in other forms (superscript, full-width) as ASCII, invisible characters gone, and a
    letter posing as a digit among digits as that digit. With the offsets of each
    character in `text` when they moved (None when none did)."""
    origin = None
    if not text.isascii():
        if _INVISIBLE_CHARS.search(text):
            origin = tuple(i for i, c in enumerate(text) if ord(c) not in _INVISIBLE)
        text = _DIGIT_GROUP_SPACE.sub(",", text)
        text = _FOLDABLE.sub(lambda m: m.group().translate(_FOLD), text)
    return (_DIGITISH.sub(_as_digits, text) if _may_be_digitish(text) else text), origin


_ADDRESS = re.compile(
    r"(?=[\w@])(?:https?://[^\s<>\"]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*"
    r"\.[a-z]{2,10}(?:/[^\s<>\"]*)?)(?<![.,;:!?)])",
    re.IGNORECASE,
)


_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)


_MAY_ADDRESS = re.compile(r"[.@](?<=\w[.@])[a-z]", re.IGNORECASE)  # "\w[.@][a-z]", from each . or @


def _is_address(found: str) -> bool:
    """A URL, an email address or a domain (its last part a top-level domain we know)."""
    if found.lower().startswith(("http", "www.")) or "@" in found:
        return True
    host = found.split("/", 1)[0].lower()
    return "." in host and host.rsplit(".", 1)[1] in TLDS and not host[0].isdigit()


_PAST = re.compile(r"\b(?:last|ago|spoke|met|discussed|said|sent|was|were|did|had|our|since)\b")


def _proposes(lowered: str, start: int, end: int) -> bool:
    """Whether a weekday sits in a question that proposes it ("free on Thursday?"),
    not one that asserts a past ("after our call on Tuesday, any thoughts?")."""
    if not _in_question(lowered, end):
        return False
    opening = max(lowered.rfind(c, 0, start) for c in ".!?\n")
    return not _PAST.search(lowered, opening + 1, start)


# Words of a sentence that offers the reader a time rather than asserting one.
_OFFER = re.compile(
    r"\b(?:call|chat|talk|speak|meet|meeting|catch up|demo|coffee|free|available|availability"
    r"|follow up|get back|touch base|reconnect|let's|let me know|happy to|i'll|i will|i can"
    r"|could we|can we|shall we|would you|are you|works? for you|suit)\b"
)


# The length of a call the writer asks for: "Would twenty minutes be useful?", "Could we talk
# for 20 minutes?", "a quick 15-minute call" (not "cut the close by 20 minutes").
_ASKING_FOR = re.compile(
    r"\b(?:would|could|have|got|for|spare|take|grab|a|an|quick|short|just)\s+$"
)
_MINUTES = re.compile(r"[ -](?:minutes?|mins?)\b")
_A_CALL = re.compile(r"\b(?:call|chat|talk|speak|meet|meeting|demo|catch up|coffee)\b")


def _call_length(lowered: str, start: int, end: int) -> bool:
    """Whether a number of minutes is the length of a call the writer asks for, in a
    question or beside a call it offers, rather than a claim."""
    if not (
        _MINUTES.match(lowered, end) and _ASKING_FOR.search(lowered, max(0, start - 12), start)
    ):
        return False
    if _in_question(lowered, end):
        return True
    return bool(_A_CALL.search(lowered, *_sentence(lowered, start, end))) and _offers(
        lowered, start, end
    )


def _offers(lowered: str, start: int, end: int) -> bool:
    """Whether the sentence around a future time proposes it ("a call next week?") rather
    than asserting it ("the price rises next month")."""
    if _proposes(lowered, start, end):
        return True
    return bool(_OFFER.search(lowered, *_sentence(lowered, start, end)))


def _sentence(lowered: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) of the sentence holding lowered[start:end]."""
    opening = max(lowered.rfind(c, 0, start) for c in ".!?\n") + 1
    ends = [i for i in (lowered.find(c, end) for c in ".!?\n") if i >= 0]
    return opening, min(ends) if ends else len(lowered)


_HEDGE_WORDS = re.compile(
    r"(?:^|[\s(])("
    + "|".join(re.escape(h) for h in sorted(HEDGES, key=len, reverse=True))
    + r")\s*$"
)


_HEDGE_ENDINGS = tuple(HEDGES)  # what a window holding a hedge ends with, spaces aside


def _hedge_before(lowered: str, start: int) -> Hedge | None:
    """The hedge right before a number ("over 40", "nearly 1,200", "~900"), or None."""
    window = max(0, start - 24)
    if not lowered[window:start].rstrip().endswith(_HEDGE_ENDINGS):
        return None  # the common case: no hedge ends right there, no search
    m = _HEDGE_WORDS.search(lowered, window, start)
    return HEDGES[m.group(1)] if m else None  # type: ignore[return-value]


_NOUN = re.compile(
    r"(?:[\s-]+(?:new |more |of |extra |full-time |active |regional |paying )?|(?=x\b))([a-z]+)"
)


def _noun_after(lowered: str, end: int) -> str | None:
    """What a number counts, as one canonical noun ("people" for "staff", "minute" for
    "mins", "times" for "3x"), or None when no noun follows."""
    m = _NOUN.match(lowered, end)
    return _canonical_noun(m.group(1)) if m else None


# Nouns the gate compares: a number counting one of these is not supported by the same
# number counting another ("120 people" is not "120 customers", "45 minutes" not seconds).
COUNTED = frozenset([*TIME_UNITS.values(), *NOUN_SYNONYMS.values(), "times"])
_TIME = frozenset(TIME_UNITS.values())


def _canonical_noun(word: str) -> str | None:
    """`_noun_of`, by one lookup in a table of the words it knows (`_NOUNS`)."""
    if word in _NOUNS:
        return _NOUNS[word]
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _noun_of(word: str) -> str | None:
    if word == "x":
        return "times"
    if word in COMMON or word in CURRENCIES or word in SCALES or word in SHORT_SCALES:
        return None
    for form in (
        word,
        word[:-1] if word.endswith("s") else word,
        word[:-2] if word.endswith("es") else word,
    ):
        if form in TIME_UNITS:
            return TIME_UNITS[form]
        if form in NOUN_SYNONYMS:
            return NOUN_SYNONYMS[form]
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


# Every word whose canonical noun is not the plain rule at the end of `_noun_of`: the words
# it looks up, and their forms in -s and -es.
_NOUNS = {
    word: _noun_of(word)
    for word in [
        "x",
        *COMMON,
        *CURRENCIES,
        *SCALES,
        *SHORT_SCALES,
        *(form + end for form in [*TIME_UNITS, *NOUN_SYNONYMS] for end in ("", "s", "es")),
    ]
}


_VAGUE = re.compile(
    rf"{_word_start(VAGUE_COUNTS)}(?:"
    + "|".join(sorted(VAGUE_COUNTS, key=len, reverse=True))
    + r")\b"
)
_MULTIPLE = re.compile(
    rf"{_word_start(MULTIPLES)}(?:" + "|".join(sorted(MULTIPLES, key=len, reverse=True)) + r")\b"
)
# Each alternative of SUPERLATIVE opens with \b or "#": checked once before them all, most
# positions fail at once instead of trying every alternative (a third of the work).
_SUPERLATIVE = re.compile(r"(?:\b|(?=#))(?:" + SUPERLATIVE + ")")


def _prefix_tree(words: Iterable[str]) -> str:
    """A pattern matching the start of any text that starts with one of `words`, as a tree
    of their prefixes ("c(?:eo|fo)"): the regex engine tries a few letters at each place,
    not every word (2.5x faster than the words joined by `|`)."""
    tree: dict = {}
    for word in words:
        node = tree
        for letter in word:
            node = node.setdefault(letter, {})
        node[""] = {}

    def pattern(node: dict) -> str:
        if "" in node:
            return ""  # a word ends here: any continuation matches too
        branches = [re.escape(letter) + pattern(sub) for letter, sub in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return pattern(tree)


# The words SUPERLATIVE needs, and the ending of a word in -est: literals only (as a tree of
# prefixes, see `_prefix_tree`), so the scan skips ahead to their first letters. ("most"
# never opened a scan in gate version 2, whose pattern left out its "m": adding it changes
# verdicts on EntFA and SummEdits, so it waits for a version that changes verdicts.)
_BOAST_WORD = re.compile(_prefix_tree([*(t for t in SUPERLATIVE_TRIGGERS if t != "most"), "est"]))


def _boast_words(lowered: str) -> Iterable[re.Match]:
    """Each trigger word, and each `est` ending a word ("fastest", "largest")."""
    pos = 0
    while hit := _BOAST_WORD.search(lowered, pos):
        start, end = hit.span()
        if hit.group() == "est" and not (
            start and "a" <= lowered[start - 1] <= "z" and not _word_char(lowered, end)
        ):
            pos = start + 1  # "estate", "est" alone: no ending; look on from the next letter
            continue
        yield hit
        pos = end


def _word_char(text: str, pos: int) -> bool:
    """Whether `text[pos]` is a letter, digit or underscore; False past the end."""
    return pos < len(text) and (text[pos].isalnum() or text[pos] == "_")


def _boasts(lowered: str) -> Iterable[re.Match]:
    """SUPERLATIVE's matches, looked for only around the words it needs (`award`, `most`,
    a word in -est): the long pattern on a whole draft is the gate's slowest step."""
    seen = -1
    for hit in _boast_words(lowered):
        start = max(seen, hit.start() - 40)
        if start >= hit.end():
            continue
        for m in _SUPERLATIVE.finditer(lowered, start, min(len(lowered), hit.end() + 40)):
            if m.start() >= seen:
                seen = m.end()
                yield m


_PHRASE_KINDS = frozenset(
    ["number", "date", "money", "percent", "address", "relationship", "superlative", "role"]
)
# Every phrase claim but the boasts in one pattern: one scan of the draft, not eleven. Each
# opens a word, checked once before the alternatives (3x faster than inside each).
_PHRASES = re.compile(
    r"(?=[a-z])\b(?:"
    + "|".join(
        f"(?P<{kind}_{i}>{pattern})"
        for i, (kind, pattern) in enumerate(
            [
                ("number", _VAGUE.pattern),
                ("number", _MULTIPLE.pattern),
                *(("relationship", claim) for claim, _ in RELATIONSHIPS.values()),
                ("role", ROLE),
            ]
        )
    )
    + ")"
)
# A span of time in words ("for more than a decade", "within a week"): a claim the sources
# support by naming the same unit. (After a number it is a rate: "$5k a year".)
_DURATION_UNITS = ("decade", "fortnight", "week", "month", "year", "centur")
_DURATION = re.compile(
    r"\b(?:for|than|within|after|over|nearly|almost|about|around|under|in) "
    r"(?P<date>a (?:decade|fortnight|week|month|year|century)|decades|centuries)\b"
)


# "The first", "its second": a rank the sources must give (first, 1st). Not a sequence the
# writer sets out ("the first step") nor the common idioms.
_FIRST = re.compile(
    r"\b(?:the|its|their|his|her|your|our|a) (?P<rank>first|second)\b(?!-hand|[ -](?:step"
    r"|thing|few|half|glance|sight|look|of all|and|or|to|one|time (?:i|we|you)\b))"
)
_RANK_FORMS = {"first": r"\b(?:first|1st)\b", "second": r"\b(?:second|2nd)\b"}
_UNIT_FORMS = {
    unit: [w for w, u in TIME_UNITS.items() if u == unit] for unit in TIME_UNITS.values()
}


def _ranked_unit(noun: str | None) -> str:
    """What must follow a rank in a source when the rank counts a unit of time: "the second
    year in a row" needs a second year ("a second successive year"), not "finished second"."""
    if noun not in _UNIT_FORMS:
        return ""
    return r"[ -](?:[a-z]+[ -])?(?:" + "|".join(_UNIT_FORMS[noun]) + r")s?\b"


def _firsts(lowered: str) -> Iterable[re.Match]:
    if "first" in lowered or "second" in lowered:
        yield from _FIRST.finditer(lowered)


# The sources count in a unit: "weeks", "a week", "six-week", "3 weeks" (not "last week").
_COUNTED_IN = (
    r"\b{stem}(?:s|ies)\b|\b(?:a|an|one|few|several|many|\d+|" + "|".join(UNITS) + r")[ -]{stem}"
)


_DURATION_WORDS = ("a decade", "a fortnight", "a week", "a month", "a year", "a century")


def _durations(lowered: str) -> Iterable[re.Match]:
    if any(w in lowered for w in _DURATION_WORDS) or "decades" in lowered or "centuries" in lowered:
        for m in _DURATION.finditer(lowered):
            if not (m.group().startswith("in ") and _A_TIME_WHEN.match(lowered, m.end())):
                yield m  # ("in a year when…" is a time, not a span of one)


_A_TIME_WHEN = re.compile(r" (?:when|that|in which|where)\b")


_EVIDENCE = [
    (re.compile(claim), re.compile(evidence)) for claim, evidence in RELATIONSHIPS.values()
]


# Where a match of each part of `_PHRASES` opens: the words of the vague counts and the
# multiples (each is matched whole), and the openings written beside each relationship's
# claim and ROLE (`words.RELATIONSHIP_OPENINGS`, `words.ROLE_OPENINGS`). Every match of
# `_PHRASES` starts with one of them (a test holds each set against its pattern).
PHRASE_OPENINGS = (
    *VAGUE_COUNTS,
    *MULTIPLES,
    *(w for openings in RELATIONSHIP_OPENINGS.values() for w in openings),
    *ROLE_OPENINGS,
)


def _opening_scan(openings: Iterable[str]) -> re.Pattern:
    """A fast scan for the places a match may start: a word starting with one of
    `openings` (each a word's first letters)."""
    openings = list(openings)
    if not all(openings):
        raise ValueError("an opening needs at least one letter")
    # A lookahead: an opening of several words ("as we discussed") may hold the start of
    # another ("we"), which must be tried too.
    return re.compile(r"\b(?=" + _prefix_tree(openings) + ")")


_PHRASE_OPENINGS = _opening_scan(PHRASE_OPENINGS)


def _phrase_matches(lowered: str) -> Iterable[re.Match]:
    """`_PHRASES.finditer(lowered)`, tried only where a match may open (a tenth of the work:
    the long pattern tried at every word was the gate's slowest step)."""
    end = 0
    for candidate in _PHRASE_OPENINGS.finditer(lowered):
        if candidate.start() >= end and (m := _PHRASES.match(lowered, candidate.start())):
            end = m.end()
            yield m


_TRAILING_COMMON = re.compile(r"(?: (?:at|of|in|for|and|with|to|the|on|from|is|was))+$")


def _sentence_start(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t\"“'‘([":
        i -= 1
    return i < 0 or text[i] in ".!?:;\n•-—*"


def _in_question(text: str, pos: int) -> bool:
    """Whether the sentence around `pos` ends with a question mark."""
    ends = [i for i in (text.find(c, pos) for c in ".!?\n") if i >= 0]
    return bool(ends) and text[min(ends)] == "?"
