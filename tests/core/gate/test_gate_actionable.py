"""What a reader could act on (`gate.actionable`): a link, an email address, a phone number
or an instruction to log in, verify or pay is refused unless it is the company's own, even
when the draft's own material says it (a hostile page is material too)."""

from __future__ import annotations

import pytest

from company_ai.core.gate import GateVerdict, Own, judge
from company_ai.core.gate.actionable import _link_problem, actionable_claims, why_refused
from company_ai.core.outreach.drafting import judge_draft, stored_verdict

OWN = Own.of(["company-ai.example", "mail.company-ai.example"], ["+44 20 7946 0958"])
SENDER = ["Sam Rivers"]


def refused(text: str, own: Own = OWN) -> list[tuple[str, str]]:
    return [(c.kind, c.text) for _, c in actionable_claims({"body": text}, own)]


def test_the_company_s_own_links_addresses_and_numbers_pass():
    body = (
        "See https://company-ai.example/pricing, www.company-ai.example or"
        " docs.company-ai.example/start; write to sam@company-ai.example or"
        " help@mail.company-ai.example, or call +44 20 7946 0958 (020 7946 0958 in the UK)."
    )
    assert refused(body) == []


@pytest.mark.parametrize(
    ("text", "kind", "found", "why"),
    [
        ("Go to https://evil.example/login now.", "link", "https://evil.example/login", "not"),
        ("See evil-login.com for more.", "link", "evil-login.com", "not one of"),
        ("Visit www.evil.example today.", "link", "www.evil.example", "not one of"),
        ("Open hxxps://evil.example/x", "link", "hxxps://evil.example/x", "in pieces"),
        ("Open evil[.]example/verify", "link", "evil[.]example/verify", "in pieces"),
        ("Open evil(dot)example now", "link", "evil(dot)example", "in pieces"),
        ("Open http[:]//evil.example", "link", "http[:]//evil.example", "in pieces"),
        ("Read https://bit.ly/3xYz.", "link", "https://bit.ly/3xYz", "shortened"),
        ("Read t.co/abc and more", "link", "t.co/abc", "shortened"),
        ("Read tinyurl.com/y2k", "link", "tinyurl.com/y2k", "shortened"),
        ("Log on to www.cоmpany-ai.example", "link", "www.cоmpany-ai.example", "script"),
        ("See xn--cmpany-ai-9hb.example", "link", "xn--cmpany-ai-9hb.example", "punycode"),
        (
            "See https://company-ai.example@evil.example/a",
            "link",
            "https://company-ai.example@evil.example/a",
            "goes to evil.example",
        ),
        (
            "See https://company-ai.example.evil.example/a",
            "link",
            "https://company-ai.example.evil.example/a",
            "not one of",
        ),
        ("Write to billing@evil.example.", "email", "billing@evil.example", "address"),
        ("Write to billing [at] evil.example", "email", "billing [at] evil.example", "address"),
        ("Call +1 415 555 0199 today.", "phone", "+1 415 555 0199", "phone number"),
        ("Call (415) 555-0199.", "phone", "(415) 555-0199", "phone number"),
        ("Ring us on 0800 123 4567", "phone", "0800 123 4567", "phone number"),
    ],
)
def test_anything_else_is_refused_with_its_reason(text, kind, found, why):
    [(got_kind, got)] = refused(text)
    assert (got_kind, got) == (kind, found)
    [(_, claim)] = actionable_claims({"body": text}, OWN)
    assert text[claim.start : claim.end] == found
    assert why in why_refused(claim)


def test_a_shortener_is_refused_even_when_listed_as_the_company_s():
    assert refused("https://bit.ly/ours", Own.of(["bit.ly"])) == [("link", "https://bit.ly/ours")]


def test_a_look_alike_of_the_company_s_domain_is_named_as_one():
    assert "imitates company-ai.example" in (_link_problem("www.cоmpany-ai.example", OWN) or "")
    cyrillic_a = "https://comp\u0430ny-ai.example/login"  # a Cyrillic а, not a Latin a
    assert refused(f"Log in at {cyrillic_a} now.") == [
        ("instruction", "Log in at"),
        ("link", cyrillic_a),
    ]
    assert "imitates company-ai.example" in (_link_problem(cyrillic_a, OWN) or "")
    assert "only begins with" in (_link_problem("company-ai.example.evil.example", OWN) or "")


@pytest.mark.parametrize(
    "text",
    [
        "Your account has been suspended.",
        "Your account is on hold.",
        "Please verify your account.",
        "Please confirm your billing details.",
        "Log in at the portal.",
        "Reset your password today.",
        "Update your card details.",
        "Wire the payment to our new bank account.",
        "Pay the invoice into the following account.",
        "Click the link below.",
    ],
)
def test_an_instruction_is_refused_without_a_company_link(text):
    assert [kind for kind, _ in refused(text)] and {k for k, _ in refused(text)} == {"instruction"}


def test_an_instruction_split_across_sentences_is_still_caught():
    body = "Your account is on hold. Please confirm your details at the link below."
    assert refused(body) == [
        ("instruction", "Your account is on hold"),
        ("instruction", "confirm your details"),
        ("instruction", "link below"),
    ]
    # Split across the subject and the body, too.
    parts = {"subject": "Your account is on hold", "body": "Confirm at the link below."}
    assert {p for p, _ in actionable_claims(parts, OWN)} == {"subject", "body"}


def test_an_instruction_with_the_company_s_own_link_passes_and_with_another_does_not():
    assert refused("Log in at https://app.company-ai.example to see the report.") == []
    mixed = "Log in at https://app.company-ai.example, or verify your account at evil.example."
    assert [k for k, _ in refused(mixed)] == ["instruction", "instruction", "link"]


@pytest.mark.parametrize(
    "text",
    [
        "Acme grew 20% in 2024 and 12 000 000 units shipped between 2019-2024.",
        "We met on 2024-11-27 and again on 27.11.2024; the growth.It was 1.5x, e.g. twice.",
        "No need to log in to five tools; we help teams transfer to the cloud.",
        "Could you confirm the details of our call? Revenue reached $1,200,000.",
        "Hi Dana, happy to talk next week. Best, Sam Rivers",
    ],
)
def test_fair_sales_prose_names_nothing_to_act_on(text):
    assert refused(text, Own()) == []


def test_a_draft_repeating_its_material_s_link_is_quarantined():
    page = "Acme customers: verify your account at https://acme-login.example/verify."
    body = f"Hi Dana,\n\n{page}\n\nBest,\nSam Rivers"
    sources = ["CRM: Dana Reyes <dana@acme.example>, CFO at Acme, Leeds.", page]
    # Every claim is in the material, so the presence rules alone pass it: the danger.
    assert judge({"body": body}, sources, SENDER).passed
    verdict = judge_draft("A note", body, sources, SENDER, own=OWN)
    assert [(c.kind, c.text) for _, c in verdict.claims] == [
        ("instruction", "verify your account"),
        ("link", "https://acme-login.example/verify"),
    ]


def test_a_stored_verdict_holds_only_for_the_company_it_was_judged_for():
    body = "Hi Dana,\n\nSee https://company-ai.example/x.\n\nBest,\nSam Rivers"
    verdict = judge_draft("Hello", body, ["Dana: https://company-ai.example/x"], SENDER, own=OWN)
    assert verdict.passed, verdict.claims
    row = {
        "subject": "Hello",
        "body": body,
        "sources": '["Dana: https://company-ai.example/x"]',
        "unsupported": "[]",
        "judged": verdict.judged,
    }
    assert stored_verdict(row, SENDER, own=OWN) == (verdict, False)  # type: ignore[arg-type]
    again, rejudged = stored_verdict(row, SENDER, own=Own.of(["other.example"]))  # type: ignore[arg-type]
    assert rejudged and not again.passed
    assert GateVerdict.from_json("[]", verdict.judged) == verdict


FIVE_MB = 5 * 1024 * 1024
# Pieces of links, addresses, numbers and instructions that a careless pattern rescans.
PIECES = [
    "a.",
    "a",
    "1 ",
    "1-",
    "+1",
    "[.]a",
    "a(dot)",
    "http://",
    "hxxps://a",
    "x@",
    "a@b.",
    "verify your ",
    "your account is ",
    "www.",
    "cоmpany-ai.",
    "\u200b.",
]


def assert_a_verdict(text: str) -> None:
    found = actionable_claims({"body": text}, OWN)
    assert all(0 <= c.start < c.end <= len(text) for _, c in found)


@pytest.mark.parametrize("unit", PIECES)
def test_a_megabyte_of_one_piece_on_one_line_gets_a_verdict(unit):
    assert_a_verdict(unit * (2**20 // len(unit)))


def test_five_megabytes_of_every_piece_on_one_line_get_a_verdict():
    line = "".join(unit * 300 for unit in PIECES)
    assert_a_verdict(line * (FIVE_MB // len(line)))
    assert_a_verdict("Verify your account at hxxps://evil[.]example. " * (FIVE_MB // 48))


def test_the_reader_s_own_address_may_be_said_back_but_vouches_for_nothing():
    sources = ["CRM: Dana Reyes <dana@acme.example>, CFO at Acme, Leeds.", "Dossier:\n"]
    said = "Hi Dana,\n\nI have dana@acme.example on file.\n\nBest,\nSam Rivers"
    assert not [c for _, c in judge_draft("Hello", said, sources, SENDER, own=OWN).claims]
    other = said.replace("dana@acme.example", "ops@acme.example")
    verdict = judge_draft("Hello", other, sources, SENDER, own=OWN)
    assert [(c.kind, c.text) for _, c in verdict.claims] == [("email", "ops@acme.example")]
    ask = "Hi Dana,\n\nPlease verify your account from dana@acme.example.\n\nBest,\nSam Rivers"
    verdict = judge_draft("Hello", ask, sources, SENDER, own=OWN)
    assert [c.kind for _, c in verdict.claims] == ["instruction"]
