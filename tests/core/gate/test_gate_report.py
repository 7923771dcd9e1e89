"""Verdicts a person reads (core/gate/report.py): each claim in its sentence, marked, with a
reason, its offsets kept."""

import doctest
import json

import pytest

from company_ai.core.gate import (
    Claim,
    explain,
    explain_stored,
    explain_verdict,
    find_unsupported_claims,
    judge,
)
from company_ai.core.gate import report as gate_report
from company_ai.core.gate.report import SENTENCE_CHARS, markdown_cell, reason

SOURCES = [
    "CRM: Dana Reyes <dana@bluewind.example>, CTO at Bluewind Logistics.",
    "Initech cut costs by 41%. Bluewind grew 12% in 2024. The team lists 805 people.",
]


def explained(text, sources=SOURCES):
    return explain(text, find_unsupported_claims(text, sources, together=True))


def test_the_docstring_example_holds():
    assert doctest.testmod(gate_report).failed == 0


def test_each_claim_is_quoted_in_its_own_sentence_marked_with_a_reason():
    text = (
        "Hi Dana,\n\nBluewind grew 40% in 2024.\nAcme Corp called us, as we discussed.\n"
        "Bluewind cut costs by 41%. You have 900 people. Best in class!\n\nBest,\nSam"
    )
    found = {e.claim.text: e for e in explained(text)}
    assert set(found) == {"40%", "Acme Corp", "as we discussed", "Bluewind cut costs by 41%",
                          "900", "Best in class", "Sam"}  # fmt: skip
    assert found["40%"].sentence == "Bluewind grew «40%» in 2024."
    assert found["40%"].reason == "no source gives 40% of anything"
    assert found["Acme Corp"].sentence == "«Acme Corp» called us, as we discussed."
    assert found["Acme Corp"].reason == "no source names Acme Corp"
    assert found["as we discussed"].reason.startswith("no source records “as we discussed”")
    assert found["900"].reason == "no source gives 900 people"
    assert found["Best in class"].reason == "no source makes the boast “Best in class”"
    assert found["Sam"].sentence == "«Sam»"  # the sender, not --allow'ed here
    assert "say it of someone else" in found["Bluewind cut costs by 41%"].reason
    # The offsets are the claim's own, in the text as given.
    for e in found.values():
        assert text[e.claim.start : e.claim.end] == e.claim.text
        assert e.to_json() | {"sentence": e.sentence} == {
            "field": "text",
            "text": e.claim.text,
            "kind": e.claim.kind,
            "start": e.claim.start,
            "end": e.claim.end,
            "sentence": e.sentence,
            "reason": e.reason,
        }
    assert found["40%"].line() == (
        "percent in the text: Bluewind grew «40%» in 2024. (no source gives 40% of anything)"
    )


@pytest.mark.parametrize(
    ("kind", "words", "said"),
    [
        ("number", "40", "no source gives the number 40"),
        ("money", "$5M", "no source gives the amount $5M"),
        ("percent", "40%", "no source gives 40% of anything"),
        ("date", "last year", "no source gives the date or time “last year”"),
        ("person", "Marco Ruiz", "no source names Marco Ruiz"),
        ("organisation", "Acme Corp", "no source names Acme Corp"),
        ("product", "FlowDesk", "no source names the product FlowDesk"),
        ("superlative", "award-winning", "no source makes the boast “award-winning”"),
        ("role", "CFO", "no source gives anyone the role “CFO”"),
        ("address", "x@y.example", "no source gives the address x@y.example"),
    ],
)
def test_every_kind_has_a_reason_in_words(kind, words, said):
    assert reason(Claim(words, kind, 0, len(words))) == said


def test_a_verdicts_claims_are_explained_part_by_part_and_stored_ones_too():
    parts = {"subject": "Acme, a question", "body": "Hi Dana,\n\nBluewind grew 40%.\n"}
    verdict = judge(parts, SOURCES)
    found = explain_verdict(parts, verdict)
    assert [(e.part, e.sentence) for e in found] == [
        ("subject", "«Acme», a question"),
        ("body", "Bluewind grew «40%»."),
    ]
    stored = json.dumps(verdict.to_json())
    assert explain_stored(parts, stored) == found
    assert explain_stored(parts, "not json") is None
    assert explain_stored(parts, '[{"text": "x"}]') is None
    # A stored claim on an edited draft: found by its words, else quoted alone.
    edited = {"subject": "Acme, a question", "body": "Hello.\nBluewind grew 40% at last."}
    assert [e.sentence for e in explain_stored(edited, stored)] == [
        "«Acme», a question",
        "Bluewind grew «40%» at last.",
    ]
    assert [e.sentence for e in explain_stored({}, stored)] == ["«Acme»", "«40%»"]


def test_a_long_sentence_is_cut_around_its_claim_and_a_long_claim_in_its_middle():
    filler = "very " * 400
    text = f"Bluewind is {filler}proud of 40% growth and {filler}more."
    [e] = explain(text, [Claim("40%", "percent", text.index("40%"), text.index("40%") + 3)])
    assert len(e.sentence) <= SENTENCE_CHARS + 4 and "«40%»" in e.sentence
    assert e.sentence.startswith("…") and e.sentence.endswith("…")
    long_claim = "Bluewind " + "and Bluewind " * 50 + "cut costs by 41%"
    [e] = explain(long_claim, [Claim(long_claim, "misattributed", 0, len(long_claim))])
    assert len(e.words) <= 120 and e.words.startswith("Bluewind") and e.words.endswith("41%")
    assert "…" in e.reason and len(e.reason) < 240


def test_the_markdown_form_is_inert_in_a_table_cell():
    text = "We | *saved* <b>Acme</b> [x](http://evil.example) `40%`\n| new row"
    start = text.index("40%")
    [e] = explain(text, [Claim("40%", "percent", start, start + 3)])
    cell = e.markdown()
    assert "\n" not in cell and "|" not in cell.replace("\\|", "")
    assert "\\<b\\>" in cell and "\\[x\\]\\(http://evil.example\\)" in cell
    assert "\\`**40%**\\`" in cell
    assert markdown_cell("Ana <ana@x.example>\n| x") == "Ana \\<ana@x.example\\> \\| x"


def test_a_huge_text_with_many_claims_is_explained_claim_by_claim_bounded():
    text = "Globex grew 41% in 2024 and hired 90 people. " * 5_000 + "x" * 1_000_000
    claims = find_unsupported_claims(text, ["Acme."])
    found = explain(text, claims)
    assert len(found) == len(claims) == 20_000
    assert {e.sentence for e in found} >= {"Globex grew 41% in 2024 and hired «90» people."}
    assert max(len(e.sentence) for e in found) <= SENTENCE_CHARS + 4
    assert found[-1].reason == "no source gives 90 people"
