"""Integrity of the third rivals set (`benchmarks/data/gate_rivals3.json`).

Only the data's shape is checked here, never what the gate makes of it: the set was written
by hand, without reading the gate, to be measured against it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from company_ai.tools.gate_rivals import load

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gate_rivals3.json"


@pytest.fixture(scope="module")
def rows():
    return load(DATA)


def test_size_ids_and_labels(rows) -> None:
    assert len(rows) >= 120
    ids = [row.id for row in rows]
    assert len(set(ids)) == len(ids)
    labels = {row.label for row in rows}
    assert labels == {"fabricated", "fair"}
    fabricated = sum(row.fabricated for row in rows)
    assert 0.4 <= fabricated / len(rows) <= 0.6


def test_material_has_source_materials_shape(rows) -> None:
    for row in rows:
        assert len(row.sources) == 3, row.id
        crm, dossier, research = row.sources
        assert re.fullmatch(r"CRM: [^<]+ <[^@>\s]+@[^>\s]+>, .+ at .+, .+\.", crm), row.id
        assert dossier.startswith("Dossier:\n"), row.id
        assert research.startswith("Research today:\n"), row.id
        findings = research.split("\n")[1:]
        assert 6 <= len(findings) <= 8, row.id
        assert row.allow == ["Sam Rivers"], row.id
        assert row.aside is True, row.id
        assert row.note.startswith(row.label + "/"), row.id
        assert row.subject.strip() and row.body.strip(), row.id


def test_known_holds_the_crm_company(rows) -> None:
    for row in rows:
        assert len(row.known) == 1, row.id
        assert f" at {row.known[0]}, " in row.sources[0], row.id


def test_fabricated_drafts_invent_no_number(rows) -> None:
    """A fabricated draft misplaces a fact; every digit run it uses is in its sources."""
    for row in rows:
        if not row.fabricated:
            continue
        material = "\n".join(row.sources)
        for digits in re.findall(r"\d+", row.subject + "\n" + row.body):
            assert digits in material, (row.id, digits)
