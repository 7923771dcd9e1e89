"""The second rivals set's integrity: hand-written drafts, held out, read by the rivals loader.

Only the data is checked here (its size, ids, labels, the material's shape); nothing of the
gate is imported, so the set stays a test of the gate rather than a copy of it.
"""

from __future__ import annotations

import re

from company_ai.tools.gate_rivals import DATA, load

SET2 = DATA.with_name("gate_rivals2.json")
ROWS = load(SET2)
CRM = re.compile(
    r"CRM: (?P<name>[^<]+) <[^@\s>]+@[^>\s]+>, (?P<title>.+) at (?P<company>.+), [^,]+\."
)


def test_set_is_large_enough_with_unique_ids_and_both_labels():
    assert len(ROWS) >= 160
    assert len({r.id for r in ROWS}) == len(ROWS)
    labels = [r.label for r in ROWS]
    assert set(labels) == {"fabricated", "fair"}
    # about half of each
    assert 0.4 < labels.count("fabricated") / len(ROWS) < 0.6


def test_every_row_is_held_out_and_signed_by_the_sender():
    for r in ROWS:
        assert r.aside is True, r.id
        assert r.allow == ["Sam Rivers"], r.id
        assert r.body.rstrip().endswith("Sam Rivers"), r.id
        assert r.body.startswith("Hi "), r.id
        assert r.subject.strip() and r.note.strip(), r.id


def test_sources_have_the_drafting_material_shape():
    for r in ROWS:
        assert len(r.sources) == 3, r.id
        crm, dossier, research = r.sources
        assert CRM.fullmatch(crm), (r.id, crm)
        assert dossier.startswith("Dossier:\n"), r.id
        history = dossier.removeprefix("Dossier:\n")
        assert history == "No prior research or interaction history." or all(
            re.match(r"\d{4}-\d{2}-\d{2}: \w+ \(", line) for line in history.splitlines()
        ), r.id
        assert research.startswith("Research today:\n"), r.id
        assert len(research.splitlines()) >= 6, r.id  # a page of several sentences


def test_known_holds_the_crm_company():
    for r in ROWS:
        match = CRM.fullmatch(r.sources[0])
        assert match is not None, r.id
        assert r.known == [match["company"]], r.id
        greeted = r.body.splitlines()[0].removeprefix("Hi ").rstrip(",")
        assert greeted == match["name"].split()[0], r.id


def test_every_fabricated_drafts_digits_are_in_its_sources():
    # A fabricated draft misattributes a sourced fact: it invents no number of its own.
    fabricated = [r for r in ROWS if r.fabricated]
    assert fabricated
    for r in fabricated:
        held = set(re.findall(r"\d+", " ".join(r.sources)))
        for run in re.findall(r"\d+", r.subject + "\n" + r.body):
            assert run in held, (r.id, run)


def test_the_set_spans_many_companies():
    companies = {r.known[0] for r in ROWS}
    assert len(companies) >= 40
