"""The held-out split of issue 28: every labelled set the gate is measured on, cut once into
a dev part (about 70 %) and an aside part (about 30 %), by a sha256 of a stable id.

The cut is salted (`SALT`) so that it is independent of the older tuning/aside quarter
(`gate_eval.is_aside`), which had been looked at and tuned on. Each set is cut by the unit
whose wording or material must stay unseen together:

- EntFA: the source article (a summary's entities stay on one side);
- SummEdits: the document (its consistent and edited summaries stay together);
- drafts written to fool the gate (`gate_adversary`): the perturbation class and variant,
  so an aside variant is a wording never looked at while choosing rules;
- fair drafts in the product's shape (`gate_fair`): the sentence shape;
- the hand-written rival sets (`evals/data/gate_rivals*.json`): the company, so its
  material and every draft against it stay together;
- labelled drafts (`gate_eval.labelled_drafts`): the draft's text.

The dev part is the only one looked at while rules are chosen; the aside part is scored
once, at the end (`python -m evals.gate_heldout --aside`).
"""

from __future__ import annotations

import hashlib
from typing import Literal

SALT = "issue28:"
ASIDE_SHARE = 0.30

Split = Literal["dev", "aside"]


def split_of(stable_id: str) -> Split:
    """The part the example with this id belongs to: "aside" for about 30 % of ids."""
    digest = hashlib.sha256((SALT + stable_id).encode()).digest()
    return "aside" if int.from_bytes(digest[:4], "big") < ASIDE_SHARE * 2**32 else "dev"


def rival_company(rival_id: str) -> str:
    """The company a hand-written rival draft is written against: its id less the count
    ("ledgerline-1" is "ledgerline")."""
    head, _, tail = rival_id.rpartition("-")
    return head if head and tail.isdigit() else rival_id
