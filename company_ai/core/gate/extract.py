"""`extract(text)`: what a text mentions that could be a claim (`Mentions`), found without
looking at any source."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

from company_ai.core.gate.names import _name_key, _names, _norm
from company_ai.core.gate.phrases import (
    _ADDRESS,
    _MAY_ADDRESS,
    _boasts,
    _call_length,
    _durations,
    _firsts,
    _fold,
    _hedge_before,
    _is_address,
    _noun_after,
    _offers,
    _phrase_matches,
    _proposes,
    _sentence_start,
)
from company_ai.core.gate.values import (
    _FUTURE,
    _QUOTED,
    Hedge,
    _exempt_spans,
    _numbers,
    _salutation_spans,
    _Spans,
    _Value,
)


@dataclass(frozen=True)
class Mentions:
    """What a text mentions that could be a claim, found without looking at any source.
    Offsets are into `folded` (look-alikes read as the letters they imitate, invisible
    characters gone); `origin[i]` is where folded character i sits in `text`."""

    text: str
    # (start, end, value, hedge, the noun or unit after it): "about 900 people"
    values: list[tuple[int, int, _Value, Hedge | None, str | None]]
    # (start, end, normalised key) of a quoted name: "FlowDesk"
    quoted: list[tuple[int, int, str]]
    # (start, end, words, the lower-case word before it) of a capitalised run
    names: list[tuple[int, int, list[str], str]]
    folded: str = ""
    origin: tuple[int, ...] | None = None
    # (start, end, kind, what) of a phrase claim: a relationship, superlative, role, address
    phrases: list[tuple[int, int, str, str]] = field(default_factory=list)
    # (start, end) of each sentence-opening capitalised run (it may be an ordinary word)
    openings: frozenset[int] = frozenset()
    # The name keys of the reader the greeting addresses ("Hi Dana,": "dana"), named in
    # `names` like any: whether they are claims is the sources' to say (`presence.check`).
    reader: frozenset[str] = frozenset()


def extract(text: str) -> Mentions:
    """Every value, quoted name, capitalised run and phrase claim in `text` outside its
    greeting and sign-off words (the reader's names the greeting addresses are kept as
    `reader` too); a weekday in a question that proposes a time is left out. (A subject
    line gets the same: only the words `Hello`, `Thanks`… are exempt.)"""
    folded, origin = _fold(text)
    exempt = _exempt_spans(folded)
    reader = frozenset(_name_key(folded[a:b].split()) for a, b in _salutation_spans(folded))
    lowered = folded.lower()
    addresses = [
        m.span()
        for m in (_ADDRESS.finditer(folded) if _MAY_ADDRESS.search(folded) else ())
        if _is_address(m.group())
    ]
    blocked: list[tuple[int, int]] = [*exempt, *addresses]  # no name is looked for inside
    skip = _Spans(blocked)
    phrases = [(a, b, "address", folded[a:b]) for a, b in addresses]
    values: list[tuple[int, int, _Value, Hedge | None, str | None]] = []
    for start, end, value in _numbers(folded):
        if skip(start):
            continue
        blocked.append((start, end))
        if value.weekday and _proposes(lowered, start, end):
            continue  # "Are you free on Thursday?" proposes a day; it claims nothing
        if value.phrase and value.phrase.startswith(_FUTURE) and _offers(lowered, start, end):
            continue  # "Happy to talk next week" proposes a time
        if value.kind == "number" and _call_length(lowered, start, end):
            continue  # "Could we talk for twenty minutes?" proposes a call's length
        noun = _noun_after(lowered, end) if value.kind in ("number", "money") else None
        values.append((start, end, value, _hedge_before(lowered, start), noun))
    quoted: list[tuple[int, int, str]] = []
    for m in _QUOTED.finditer(folded):
        if skip(m.start()):
            continue
        quoted.append((m.start(1), m.end(1), _norm(m.group(1))))
        blocked.append((m.start(1), m.end(1)))
    for m in chain(
        _phrase_matches(lowered), _boasts(lowered), _durations(lowered), _firsts(lowered)
    ):
        kind = m.lastgroup.rsplit("_", 1)[0] if m.lastgroup else "superlative"
        # A duration or a rank is the words after its preposition or determiner.
        claim = kind if kind in ("date", "rank") else 0
        start, end = m.span(claim)
        kind = "number" if kind == "rank" else kind
        if not skip(start):
            phrases.append((start, end, kind, m.group(claim)))
            if kind == "number":
                blocked.append((start, end))  # "Dozens of" is a count, not a name
    names: list[tuple[int, int, list[str], str]] = []
    openings = set()
    for start, end, words in _names(folded, blocked):
        before_words = lowered[max(0, start - 12) : start].split()
        names.append((start, end, words, before_words[-1] if before_words else ""))
        if _sentence_start(folded, start):
            openings.add(start)
    return Mentions(
        text, values, quoted, names, folded, origin, phrases, frozenset(openings), reader
    )
