"""The hand-written rival drafts (`tools/gate_rivals.py`): the set's integrity only.

The gate is not run here: the set is measured once, by the lead, outside the tests.
"""

import hashlib
import re
from collections import Counter

import pytest

from company_ai.tools.gate_rivals import load

RIVALS = load()
CRM = re.compile(r"CRM: [^<>\n]+ <[^<>\s]+@[^<>\s]+>, [^\n]+ at [^\n]+, [^\n]+\.")


def test_enough_drafts_with_unique_ids_and_both_labels():
    assert len(RIVALS) >= 160
    ids = [r.id for r in RIVALS]
    assert len(set(ids)) == len(ids)
    labels = Counter(r.label for r in RIVALS)
    assert set(labels) == {"fabricated", "fair"}
    assert min(labels.values()) >= 0.4 * len(RIVALS)


def test_aside_is_the_lower_half_of_the_ids_by_sha256():
    ranked = sorted(RIVALS, key=lambda r: hashlib.sha256(r.id.encode()).hexdigest())
    half = len(ranked) // 2
    assert [r.aside for r in ranked] == [True] * half + [False] * (len(ranked) - half)
    for aside in (True, False):
        assert {r.label for r in RIVALS if r.aside is aside} == {"fabricated", "fair"}


@pytest.mark.parametrize("rival", RIVALS, ids=lambda r: r.id)
def test_sources_have_the_material_shape(rival):
    crm, dossier, research = rival.sources
    assert CRM.fullmatch(crm), crm
    assert dossier.startswith("Dossier:\n") and dossier.strip() != "Dossier:"
    assert research.startswith("Research today:\n")
    assert len(research.splitlines()) >= 6  # several page sentences, naming other companies
    company = crm.rsplit(" at ", 1)[1].rsplit(", ", 1)[0]
    assert company in rival.known  # the CRM's company names, as the CRM writes them
    assert rival.allow and rival.subject and rival.body
    assert rival.note and "\n" not in rival.note


@pytest.mark.parametrize("rival", [r for r in RIVALS if r.fabricated], ids=lambda r: r.id)
def test_a_fabricated_drafts_numbers_are_all_in_its_sources(rival):
    """The wrong tie is the only fault: no digit run the sources lack."""
    material = "\n".join(rival.sources)
    missing = [d for d in re.findall(r"\d+", f"{rival.subject}\n{rival.body}") if d not in material]
    assert not missing
