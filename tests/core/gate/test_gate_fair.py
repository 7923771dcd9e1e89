"""Fair drafts in the product's own shape (`tools/gate_fair.py`): what a morning run gives
the gate. The check that ties claims together must not cost the owner these drafts."""

from __future__ import annotations

import functools

from company_ai.core.gate import context as gate_context
from company_ai.core.gate.extract import extract
from company_ai.core.outreach.drafting import judge_draft
from evals.gate_fair import SENDER, SHAPES, aside_shapes, fair_drafts


@functools.cache
def drafts():
    return tuple(fair_drafts(n_contacts=12))


def test_the_material_is_what_a_morning_run_gives_the_drafter():
    for d in drafts():
        crm, dossier, research = d.sources
        assert crm.startswith("CRM: ") and d.company in crm
        assert dossier.startswith("Dossier:") and research.startswith("Research today:\n")
        assert f"{d.company} was founded in" in research  # read from the page
    products = {d.sources[2].split("led by ", 1)[1].split(".")[0] for d in drafts()}
    assert any(p.split()[0] in d.company for p in products for d in drafts())
    assert any(" " not in p for p in products)  # a product named on its own ("Keystone")


def test_a_quarter_of_the_shapes_is_aside():
    aside = aside_shapes()
    assert len(aside) == round(len(SHAPES) / 4)
    assert {d.shape for d in drafts() if d.aside} == aside


def test_fair_drafts_pass_as_outreach_judges_them():
    """The rest of the shapes (the aside quarter is the benchmark's): most tie a name to a
    number or a date in one sentence, so the co-occurrence check looks at each of those."""
    known = tuple(sorted({d.company for d in drafts()}))
    rest = [d for d in drafts() if not d.aside]
    paired = 0
    for d in rest:
        verdict = judge_draft(d.subject, d.body, d.sources, allow=[SENDER], known=known)
        assert verdict.passed, (d.shape, d.body, d.sources, verdict.claims)
        sentence = d.body.split("\n")[2]
        mentions = extract(sentence)
        paired += bool(gate_context._pairable(mentions, [len(sentence)]))
    assert paired > len(rest) * 2 / 3
