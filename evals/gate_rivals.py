"""Hand-written outreach drafts that try to beat the gate's "claims that belong together" check.

`evals/data/gate_rivals.json` holds 172 drafts (87 `fabricated`, 85 `fair`) written by
hand by an independent helper playing the adversary (session of the `rivals` branch). The
helper read only the README's section on the fabrication gate and the shape of the material
a drafter gets (`core/outreach/drafting.py::source_material`); it did not read the check
(`core/gate.py`, `gate_context.py`, `gate_words.py`), its tests, or the other labelled sets
(`tools/gate_adversary.py`, `tools/gate_fair.py`), and it never ran the gate on these drafts.

Each of 40 invented companies has a CRM line, a dossier and "research today": sentences as a
real company page or news item writes them, naming other companies on purpose (customers
with their results, partners and their offices, acquisitions, investors and their other
portfolio companies, rivals with their own figures, award lists, team pages with former
employers). Against that material:

- a `fabricated` draft uses only numbers, names and dates the sources hold, but ties one
  fact to the wrong subject: a rival's figure, award or contract on the contact's company,
  a customer's result told as the company's own or as another customer's, a partner's
  office or count as the company's, a person on the wrong company, an acquisition turned
  round, another company's founding or deal date, sometimes only in the subject line;
- a `fair` draft ties every fact to its owner, in shapes a mechanical check may trip on:
  facts joined from several page sentences (the page says "It"), the company's own product
  named, customers named with their own results, a rival's figure beside the company's own
  in one sentence, lists of award winners or customers, places and dates, the contact's
  colleagues and their former employers, the CRM giving the company as a domain.

`note` says in one line what a draft does (its kind before the colon). `aside` marks half
the ids, those whose sha256 is lowest, to be kept out of any tuning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DATA = Path(__file__).resolve().parent / "data" / "gate_rivals.json"


@dataclass(frozen=True)
class Rival:
    id: str
    label: Literal["fabricated", "fair"]
    subject: str
    body: str
    sources: list[str]  # CRM line, dossier, research today: `source_material`'s shape
    allow: list[str]  # the sender's name
    known: list[str]  # the CRM's company names
    note: str
    aside: bool

    @property
    def fabricated(self) -> bool:
        return self.label == "fabricated"


def load(path: Path = DATA) -> list[Rival]:
    """Every draft of the set, in file order."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [Rival(**row) for row in rows]
