"""What the gate reports: a `Claim` (its words, its `Kind`, its offsets in the text)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal, get_args

Kind = Literal[
    "number",
    "money",
    "percent",
    "date",
    "person",
    "organisation",
    "place",
    "product",
    "other",
    "address",
    "relationship",
    "superlative",
    "role",
    "misattributed",  # two supported claims no source passage holds together (gate_context)
    # What a reader could act on that is not the company's own (actionable)
    "link",
    "email",
    "phone",
    "instruction",
]
KINDS: tuple[str, ...] = get_args(Kind)


@dataclass(frozen=True)
class Claim:
    """One checkable claim in a text: its words, kind and [start, end) character offsets."""

    text: str
    kind: Kind
    start: int
    end: int

    def to_json(self) -> dict:
        return asdict(self)
