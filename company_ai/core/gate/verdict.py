"""The gate's answers: `find_unsupported_claims` for one text, `judge` for the named parts
of a draft or a page (a `GateVerdict`, the one shape every caller stores and reads).

    >>> find_unsupported_claims(
    ...     "Acme grew 20% in 2024.", ["Acme Inc. grew twenty percent in 2023."]
    ... )
    [Claim(text='2024', kind='date', start=17, end=21)]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from company_ai.core.gate.actionable import Own, actionable_claims
from company_ai.core.gate.claim import Claim
from company_ai.core.gate.context import check_together
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.presence import check

# Bump whenever a change (here or in any module of the gate, its word lists too) alters any
# verdict: a stored verdict is trusted only by the version that gave it (`GateVerdict`);
# others are judged again.
GATE_VERSION = 8


@dataclass(frozen=True)
class GateVerdict:
    """The gate's verdict on the named parts of a text (a draft's subject and body, a page)
    against the sources it was given: the unsupported claims, part by part.

    `judged` is a sha256 over everything the verdict depends on and the verdict itself:
    `GATE_VERSION`, the parts, the sources, the allowed terms and the claims. Stored beside
    the claims (`to_json`), it lets a later reader trust the stored verdict (`holds_for`)
    without judging again; any change to the parts, the sources, the allowed terms, the
    gate or the stored claims breaks the match, and that reader must `judge` afresh.
    """

    claims: tuple[tuple[str, Claim], ...]  # (part, claim): parts in order, then text order
    judged: str

    @property
    def passed(self) -> bool:
        return not self.claims

    def to_json(self) -> list[dict]:
        """The claims as stored: `{"field": part, "text", "kind", "start", "end"}` each."""
        return [{"field": part} | claim.to_json() for part, claim in self.claims]

    def labels(self) -> list[str]:
        """The claims for a reader: `"percent 45%"`, `"person Tim Cook"`."""
        return [f"{claim.kind} {claim.text}" for _, claim in self.claims]

    @classmethod
    def from_json(cls, claims: str | None, judged: str | None) -> GateVerdict | None:
        """A stored verdict, not yet trusted (`holds_for`); None if it cannot be read."""
        try:
            parsed = tuple(
                (c["field"], Claim(c["text"], c["kind"], c["start"], c["end"]))
                for c in json.loads(claims or "[]")
            )
        except (ValueError, TypeError, KeyError):
            return None
        return cls(parsed, judged) if judged else None

    def holds_for(
        self,
        parts: Mapping[str, str],
        sources: Sequence[str],
        allow: Iterable[str] = (),
        *,
        known: Iterable[str] = (),
        own: Own | None = None,
    ) -> bool:
        """Whether this verdict is the gate's, today, on exactly these inputs."""
        return self.judged == _fingerprint(parts, sources, tuple(allow), self.claims, known, own)


def judge(
    parts: Mapping[str, str],
    sources: Sequence[str],
    allow: Iterable[str] = (),
    *,
    known: Iterable[str] = (),
    together: bool = False,
    own: Own | None = None,
) -> GateVerdict:
    """The verdict on each named part (`{"subject": …, "body": …}`) against `sources`.

    `allow` lists terms that are never claims (the sender's own name and company); `known`
    the names the company knows (CRM companies, people, catalogue products), which are
    claims in any case ("we work with globex"). `together` adds the co-occurrence check
    (`context`: a true fact pinned on another subject), as outreach drafts are judged;
    a summary (a vault page) is judged without it, since a summary joins what its source
    says in different sentences. `own` (the company's domains and numbers) adds the check
    of what a reader could act on (`actionable`): a link, address, number or instruction
    not the company's own is a claim whatever the sources say.
    """
    checker = check_together if together else check
    allow, known = tuple(allow), tuple(known)
    index = SourceIndex(sources, allow, known=known)
    claims = tuple(
        (part, claim) for part, text in parts.items() for claim in checker(extract(text), index)
    )
    if own is not None:
        claims = _merged(claims, actionable_claims(parts, own), list(parts))
    return GateVerdict(claims, _fingerprint(parts, sources, allow, claims, known, own))


def _merged(
    claims: tuple[tuple[str, Claim], ...], more: list[tuple[str, Claim]], order: list[str]
) -> tuple[tuple[str, Claim], ...]:
    """Both lists of claims in part order, then text order; a span found by both once, as
    `more` names it (an `email` says more than an unsupported `address`)."""
    spans = {(part, c.start, c.end) for part, c in more}
    kept = [(part, c) for part, c in claims if (part, c.start, c.end) not in spans]
    return tuple(
        sorted((*kept, *more), key=lambda pc: (order.index(pc[0]), pc[1].start, pc[1].end))
    )


def _fingerprint(
    parts: Mapping[str, str],
    sources: Sequence[str],
    allow: tuple[str, ...],
    claims: tuple[tuple[str, Claim], ...],
    known: Iterable[str] = (),
    own: Own | None = None,
) -> str:
    judged = [
        GATE_VERSION,
        list(parts.items()),
        list(sources),
        list(allow),
        [[part, c.text, c.kind, c.start, c.end] for part, c in claims],
    ]
    if known := sorted(set(known)):
        judged.append(known)
    if own is not None:
        judged.append(["own", *own.to_json()])
    return hashlib.sha256(json.dumps(judged, ensure_ascii=False).encode()).hexdigest()


def find_unsupported_claims(
    text: str,
    sources: Sequence[str],
    *,
    allow: Iterable[str] = (),
    known: Iterable[str] = (),
    together: bool = False,
) -> list[Claim]:
    """Every claim in `text` that `sources` do not support, in text order.

    `allow` lists terms that are never claims (the sender's own name and company); `known`
    names that are claims in any case (see `judge`). `together` adds the co-occurrence
    check, as outreach drafts are judged (`company-ai gate` judges so); without it, each
    claim need only be present somewhere in the sources.
    """
    checker = check_together if together else check
    return checker(extract(text), SourceIndex(sources, allow, known=known))
