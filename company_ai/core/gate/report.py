"""Verdicts a person reads: each unsupported claim quoted in its sentence, marked, with the
reason the gate held it (`explain`, `explain_verdict`, `explain_stored`), as text for a
terminal (`Explained.line`), a Markdown table cell (`markdown_cell`) or JSON with the
claim's offsets kept (`Explained.to_json`).

    >>> [e] = explain("Hi Dana,\\n\\nAcme grew 40% in 2024.", [Claim("40%", "percent", 20, 23)])
    >>> e.sentence, e.reason
    ('Acme grew «40%» in 2024.', 'no source gives 40% of anything')

It judges nothing: the claims are the gate's (`find_unsupported_claims`, a `GateVerdict`,
or claims stored with a draft), the text the one they were found in.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from company_ai.core.gate.actionable import ACTIONABLE_KINDS, why_refused
from company_ai.core.gate.claim import Claim
from company_ai.core.gate.clauses import sentences
from company_ai.core.gate.phrases import _noun_after
from company_ai.core.gate.verdict import GateVerdict

MARK = ("«", "»")
# A sentence longer than this is cut around its claim: a reader needs the claim's
# neighbourhood, and a table cell stays readable whatever the draft holds.
SENTENCE_CHARS = 240
CLAIM_CHARS = 120  # a claim longer than this (a misattributed pair) is cut in its middle
_SPACE = re.compile(r"\s+")
_COUNTS = frozenset(["number", "money"])

# What no source gives, by kind: "{}" is the claim's words.
_REASONS = {
    "number": "no source gives the number {}",
    "money": "no source gives the amount {}",
    "percent": "no source gives {} of anything",
    "date": "no source gives the date or time “{}”",
    "person": "no source names {}",
    "organisation": "no source names {}",
    "place": "no source names {}",
    "product": "no source names the product {}",
    "other": "no source names {}",
    "address": "no source gives the address {}",
    "relationship": "no source records “{}”: no such call, meeting or tie is on file",
    "superlative": "no source makes the boast “{}”",
    "role": "no source gives anyone the role “{}”",
    "misattributed": (
        "the sources hold each part of “{}”, but never together: they say it of someone else"
    ),
}


@dataclass(frozen=True)
class Explained:
    """One unsupported claim for a reader: the part it is in ("body"), the claim with its
    offsets in that part, its sentence on one line (cut around the claim when long) as the
    words `before` it, the claim's own `words` and those `after`, and why it was held."""

    part: str
    claim: Claim
    before: str
    words: str
    after: str
    reason: str

    def marked(self, opening: str = MARK[0], closing: str = MARK[1]) -> str:
        """The sentence with the claim between `opening` and `closing`."""
        return f"{self.before}{opening}{self.words}{closing}{self.after}"

    @property
    def sentence(self) -> str:
        return self.marked()

    def line(self) -> str:
        """`percent in the body: Acme grew «40%» in 2024. (no source gives 40% of anything)`"""
        return f"{self.claim.kind} in the {self.part}: {self.sentence} ({self.reason})"

    def markdown(self) -> str:
        """The sentence for a Markdown table cell, inert, the claim in bold."""
        before, words, after = (_escape_markdown(p) for p in (self.before, self.words, self.after))
        return f"{before}**{words}**{after}"

    def to_json(self) -> dict:
        return (
            {"field": self.part}
            | self.claim.to_json()
            | {
                "sentence": self.sentence,
                "reason": self.reason,
            }
        )


def reason(claim: Claim, counted: str | None = None) -> str:
    """Why the gate holds `claim`, in words: "no source names Acme Corp"; for a number or
    an amount, what it counts if the gate read a noun after it (`counted`, " people": "no
    source gives 40 people", as the same figure counting something else does not support
    it)."""
    if claim.kind in ACTIONABLE_KINDS:  # refused whatever the sources say
        return why_refused(claim)
    words = _clip_middle(_flat(claim.text), CLAIM_CHARS)
    if counted and claim.kind in _COUNTS:
        return f"no source gives {words}{counted}"
    return _REASONS.get(claim.kind, "no source supports “{}”").format(words)


_NOUN_WINDOW = 80  # characters after a number where the gate looks for what it counts
_NEXT_WORD = re.compile(r"[ \t]*([^\W\d_]+)")


def _counted(text: str, end: int) -> str | None:
    """The noun after a number as the text writes it (" people", "x"), when the gate
    reads one there."""
    window = text[end : end + _NOUN_WINDOW]  # the noun is near: never lower the whole text
    if _noun_after(window.lower(), 0) is None:
        return None
    m = _NEXT_WORD.match(window)
    return (" " if m.group(1) != m.group() else "") + m.group(1) if m else None


def explain(text: str, claims: Iterable[Claim], *, part: str = "text") -> list[Explained]:
    """Each claim (found in `text`) in its sentence, and its reason. A claim whose offsets
    no longer point at its words in `text` (a stored claim on an edited draft) is looked
    for by its words; not found, it is quoted alone."""
    spans = sentences(text)
    starts = [start for start, _ in spans]
    found = []
    for claim in claims:
        start, end = _locate(text, claim)
        if start < 0:
            pieces = ("", _clip_middle(_flat(claim.text), CLAIM_CHARS), "")
        else:
            i = max(bisect_right(starts, start) - 1, 0)
            s, e = (min(spans[i][0], start), max(spans[i][1], end)) if spans else (start, end)
            pieces = _pieces(text, s, start, end, e)
        counted = _counted(text, end) if start >= 0 and claim.kind in _COUNTS else None
        found.append(Explained(part, claim, *pieces, reason(claim, counted)))
    return found


def explain_verdict(parts: Mapping[str, str], verdict: GateVerdict) -> list[Explained]:
    """`explain` for each claim of a verdict on the named parts of a text (`judge`)."""
    return _explain_parts(parts, verdict.claims)


def explain_stored(parts: Mapping[str, str], stored: str | None) -> list[Explained] | None:
    """`explain` for claims as a draft stores them (`GateVerdict.to_json`: `field`, `text`,
    `kind`, `start`, `end` each; a claim stored without offsets is looked for by its
    words); None if they cannot be read."""
    try:
        claims = [
            (
                str(c["field"]),
                Claim(str(c["text"]), c["kind"], int(c.get("start", -1)), int(c.get("end", -1))),
            )
            for c in json.loads(stored or "[]")
        ]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return _explain_parts(parts, claims)


def markdown_cell(text: str) -> str:
    """`text` on one line, inert in a Markdown table cell: its pipes, emphasis, code,
    links and HTML are escaped, so a draft's words cannot break or restyle the table."""
    return _escape_markdown(_flat(text))


def _explain_parts(
    parts: Mapping[str, str], claims: Iterable[tuple[str, Claim]]
) -> list[Explained]:
    """Each part's claims explained together (its sentences found once), in the given order."""
    by_part: dict[str, list[Claim]] = {}
    for part, claim in claims:
        by_part.setdefault(part, []).append(claim)
    return [
        found
        for part, claims_in_part in by_part.items()
        for found in explain(parts.get(part) or "", claims_in_part, part=part)
    ]


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#|!~&])")


def _escape_markdown(text: str) -> str:
    return _MARKDOWN.sub(r"\\\1", text)


def _locate(text: str, claim: Claim) -> tuple[int, int]:
    if 0 <= claim.start < claim.end <= len(text) and text[claim.start : claim.end] == claim.text:
        return claim.start, claim.end
    at = text.find(claim.text) if claim.text else -1
    return (at, at + len(claim.text)) if at >= 0 else (-1, -1)


def _pieces(text: str, s: int, start: int, end: int, e: int) -> tuple[str, str, str]:
    """text[s:e] on one line as (before, claim, after) around [start, end), cut to about
    `SENTENCE_CHARS` (a long claim in its middle, `CLAIM_CHARS`)."""
    words = _clip_middle(_flat(text[start:end]), CLAIM_CHARS)
    room = max(SENTENCE_CHARS - len(words), 0) // 2
    before = _SPACE.sub(" ", text[s:start]).lstrip()
    after = _SPACE.sub(" ", text[end:e]).rstrip()
    if len(before) > room:
        before = "…" + before[len(before) - room :].lstrip()
    if len(after) > room:
        after = after[:room].rstrip() + "…"
    return before, words, after


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half].rstrip()}…{text[len(text) - half :].lstrip()}"
