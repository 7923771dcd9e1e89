"""The hand-written rival drafts (`tools/gate_rivals.py`, three sets by three hands): each
set's integrity only. The gate is not imported: each set is measured by
`benchmarks/bench_gate.py`, never tuned on here."""

from __future__ import annotations

import hashlib
import re

import pytest

from evals.gate_rivals import DATA, Rival, load

# Each set, with the least it holds: rows and companies. The first is half aside (then tuned
# on); the second and third are all held out, greeting and labelling each row the same way.
SETS = {
    "gate_rivals.json": (160, 40),
    "gate_rivals2.json": (160, 40),
    "gate_rivals3.json": (120, 30),
}
HELD_OUT = ("gate_rivals2.json", "gate_rivals3.json")
CRM = re.compile(
    r"CRM: (?P<name>[^<]+) <[^@\s>]+@[^>\s]+>, (?P<title>.+) at (?P<company>.+), [^,]+\."
)
NO_HISTORY = "No prior research or interaction history."


def rows(name: str) -> list[Rival]:
    return load(DATA.with_name(name))


@pytest.mark.parametrize("name", SETS)
def test_each_set_is_large_with_unique_ids_both_labels_and_many_companies(name):
    found, (least, companies) = rows(name), SETS[name]
    assert len(found) >= least
    assert len({r.id for r in found}) == len(found)
    assert {r.label for r in found} == {"fabricated", "fair"}
    assert 0.4 <= sum(r.fabricated for r in found) / len(found) <= 0.6
    assert len({r.known[0] for r in found}) >= companies


@pytest.mark.parametrize("name", SETS)
def test_sources_have_the_material_shape_and_known_holds_the_crm_company(name):
    for r in rows(name):
        crm, dossier, research = r.sources
        match = CRM.fullmatch(crm)
        assert match, (r.id, crm)
        assert r.known[0] == match["company"], r.id  # as the CRM writes it
        assert dossier.startswith("Dossier:\n"), r.id
        history = dossier.removeprefix("Dossier:\n")
        assert history.strip() and (
            history == NO_HISTORY
            or all(re.match(r"\d{4}-\d{2}-\d{2}: \w+ \(", line) for line in history.splitlines())
        ), r.id
        assert research.startswith("Research today:\n"), r.id
        assert 6 <= len(research.split("\n")[1:]) <= 8, r.id  # a page naming other companies
        assert r.allow == ["Sam Rivers"] and r.body.rstrip().endswith("Sam Rivers"), r.id
        assert r.subject.strip() and r.note.strip() and "\n" not in r.note, r.id


@pytest.mark.parametrize("name", SETS)
def test_a_fabricated_drafts_numbers_are_all_in_its_sources(name):
    """The wrong tie is the only fault: no digit run the sources lack."""
    for r in (r for r in rows(name) if r.fabricated):
        material = "\n".join(r.sources)
        missing = [d for d in re.findall(r"\d+", f"{r.subject}\n{r.body}") if d not in material]
        assert not missing, (r.id, missing)


def test_the_first_set_s_aside_is_the_lower_half_of_its_ids_by_sha256():
    ranked = sorted(
        rows("gate_rivals.json"), key=lambda r: hashlib.sha256(r.id.encode()).hexdigest()
    )
    half = len(ranked) // 2
    assert [r.aside for r in ranked] == [True] * half + [False] * (len(ranked) - half)
    for aside in (True, False):
        assert {r.label for r in ranked if r.aside is aside} == {"fabricated", "fair"}


@pytest.mark.parametrize("name", HELD_OUT)
def test_held_out_sets_are_all_aside_greet_the_contact_and_label_each_note(name):
    for r in rows(name):
        assert r.aside is True, r.id
        assert r.known == [CRM.fullmatch(r.sources[0])["company"]], r.id
        greeted = r.body.splitlines()[0].removeprefix("Hi ").rstrip(",")
        assert greeted == CRM.fullmatch(r.sources[0])["name"].split()[0], r.id
        assert r.note.startswith(r.label + "/"), r.id
