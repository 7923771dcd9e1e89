"""The fabrication gate against drafts written to fool it (issue 14): one test per hole."""

from __future__ import annotations

import pytest

from company_ai.core.gate import find_unsupported_claims, judge

CRM = "CRM: Priya Okonkwo <priya@redfern.example>, CFO at Redfern Clinics Ltd, Leeds."
RESEARCH = (
    "Research today:\nRedfern Clinics now employs 1,200 people across 35 clinics. Revenue grew"
    " 41% last year. Support replies within 45 minutes. In 2023 it raised $1.2M from"
    " investors. Orders doubled in 2025. Redfern Dock launched in Q3 2025. It opened an"
    " office in York on 8 October 2025."
)
QUIET = "Dossier:\n2026-10-14: engagement (from site): Viewed the pricing page (2 pages)."
CALLED = "Dossier:\n2026-10-14: call (from phone): Spoke with Priya about month-end close."
SOURCES = [CRM, QUIET, RESEARCH]
KNOWN = ("Globex", "Initech Corp", "Redfern Clinics", "Redfern Dock", "Kinetic")


def flagged(text: str, sources: list[str] = SOURCES) -> list[str]:
    return [c.text for c in find_unsupported_claims(text, sources, known=KNOWN)]


def passes(text: str, sources: list[str] = SOURCES) -> bool:
    return flagged(text, sources) == []


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Revenue grew more than 45% last year.", "Revenue grew more than 40% last year."),
        ("Revenue grew over 44% last year.", "Revenue grew over 40% last year."),
        ("You now have nearly 1,300 people.", "You now have nearly 1,250 people."),
        ("You run under 32 clinics.", "You run under 40 clinics."),
        ("About 1,400 people work there.", "About 1,150 people work there."),
    ],
)
def test_a_hedge_widens_a_number_one_way_only(fabricated, fair):
    assert not passes(fabricated)
    assert passes(fair)


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Revenue grew 4% last year.", "Revenue grew 41% last year."),  # a 4 is elsewhere
        ("You run 1,200 clinics.", "You have 1,200 staff."),  # people, not clinics
        ("Revenue grew 41x last year.", "Revenue grew 41 percent last year."),
        ("You grew 35% in clinics.", "You have 35 clinics."),  # 35 clinics is not 35 %
        ("Support replies within 45 seconds.", "Support replies within 45 mins."),
        ("Support replies within 45 hours.", "Support replies within forty-five minutes."),
    ],
)
def test_a_number_is_supported_only_with_its_own_unit_or_noun(fabricated, fair):
    assert not passes(fabricated)
    assert passes(fair)


def test_money_needs_its_currency_and_scale_words_are_values():
    assert not passes("You raised £1.2M in 2023.")
    assert not passes("You raised ¥1.2M in 2023.")
    assert passes("You raised $1.2 million in 2023.")
    assert passes("You raised USD 1,200,000 in 2023.")
    assert not passes("You raised $12 million in 2023.")


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Thousands of clinics rely on you.", "Dozens of clinics rely on you."),
        ("Orders tripled in 2025.", "Orders doubled in 2025."),
        ("Revenue halved in 2025.", "Orders grew twofold in 2025."),
        ("A dozen clinics opened.", "Revenue grew 41% last year."),
    ],
)
def test_vague_counts_and_multiples_are_checked(fabricated, fair):
    assert not passes(fabricated)
    assert passes(fair)


def test_claims_hide_nowhere_subject_salutation_signature_address():
    body = "Hi Priya,\n\nRevenue grew 41% last year.\n\nBest,\nSam Rivers\nCompany AI\n"
    allow = ["Sam Rivers", "Company AI", "sam@companyai.example"]
    assert judge({"subject": "Hello from Company AI", "body": body}, SOURCES, allow).passed
    hidden = {
        "subject": "Hello from Globex Capital Ltd",
        "body": body.replace("Hi Priya,", "Hi Priya and the Globex team,"),
    }
    verdict = judge(hidden, SOURCES, allow)
    assert [(part, c.text) for part, c in verdict.claims] == [
        ("subject", "Globex Capital"),
        ("body", "Globex"),
    ]
    signed = body + "Trusted by 500 teams\n#1 in finance software\n"
    assert [c.text for _, c in judge({"body": signed}, SOURCES, allow).claims] == ["500", "#1"]
    phone = body + "+44 20 7946 0018\nsam@companyai.example\n"
    assert judge({"body": phone}, SOURCES, allow).passed
    assert flagged("Write to top10@redfern.example any time.") == ["top10@redfern.example"]
    assert flagged("See companyai.example/award-winning-close.", SOURCES + ["companyai.example"])
    assert passes("Write to priya@redfern.example any time.")


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("You now have l,500 people.", "You now have l,200 people."),  # l for 1
        ("Revenue grew 4\u2075% last year.", "Revenue grew 4\u00b9\u200b% last year."),
        ("You have 1\u200b500 staff.", "You have 1\u200b200 staff."),  # zero-width space
        ("We work with Glоbex.", "We work with Rеdfern Clinics."),  # Cyrillic о, е
        # A narrow or no-break space grouping thousands (issue 28): "1 200" is 1,200.
        ("You have 1\u202f500 staff.", "You have 1\u202f200 staff."),
        ("You have 1\u00a0500 staff.", "You have 1\u00a0200 staff."),
    ],
)
def test_look_alike_characters_are_read_as_what_they_imitate(fabricated, fair):
    assert not passes(fabricated, [*SOURCES, "Redfern serves 41 cities."])
    assert passes(fair, [*SOURCES, "Redfern serves 41 cities."])


def test_a_claim_in_look_alikes_is_reported_at_its_place_in_the_original():
    text = "Yes: w\u200be w\u200bork with Gl\u043ebex."
    (claim,) = find_unsupported_claims(text, SOURCES, known=KNOWN)
    assert text[claim.start : claim.end] == claim.text == "Gl\u043ebex"


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("We work with globex.", "Everyone at redfern clinics must be proud."),
        ("INITECH CORP is a customer.", "REDFERN CLINICS is clearly growing."),
        ("Calendly shows your team is busy.", "Impressive growth at Redfern Clinics."),
        ("Initech cut its close time.", "Huge news about Redfern Dock."),
        ("Clearly Globex is growing.", "Clearly Redfern Clinics is growing."),
        # A name the company knows is a name even where it reads as English.
        ("Kinetic shows your team is busy.", "Energetic growth at Redfern Clinics."),
    ],
)
def test_names_in_any_case_use_what_the_company_knows(fabricated, fair):
    assert not passes(fabricated)
    assert passes(fair)


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Opening in york in november was bold.", "Opening in york in october was bold."),
        ("Redfern Dock launching in q4 caught my eye.", "Redfern Dock launching in q3 did too."),
        ("We saw it earlier this year.", "Revenue grew 41% last year."),
        ("Did the launch on Tuesday go well?", "Would Tuesday or Wednesday suit you?"),
    ],
)
def test_dates_in_any_case_and_form(fabricated, fair):
    assert not passes(fabricated, [CRM, RESEARCH])
    assert passes(fair, [CRM, RESEARCH])


@pytest.mark.parametrize(
    "claim",
    [
        "As we discussed on our call, month-end is hard.",
        "Following our introduction, I wanted to write.",
        "As a long-time customer, you know us.",
        "Per my proposal, here is the plan.",
        "Thanks for your reply about pricing.",
    ],
)
def test_a_relationship_needs_the_contacts_own_history(claim):
    assert not passes(claim, [CRM, QUIET, RESEARCH])
    evidence = {
        "call": CALLED,
        "introduction": "Dossier:\n2026-10-01: note: Introduced by Ada Lovelace.",
        "customer": "Dossier:\n2024-01-01: crm: Customer since 2019; renewed in 2025.",
        "proposal": "Dossier:\n2026-11-20: outreach: Sent Priya our proposal for Q1.",
        "reply": "Dossier:\n2026-11-21: reply (from email): Priya replied about pricing.",
    }
    kind = next(k for k in evidence if k in claim.lower()) if "reply" not in claim else "reply"
    assert passes(claim, [CRM, evidence[kind], RESEARCH])
    # The research (about the company) is not the contact's history.
    assert not passes(claim, [CRM, QUIET, RESEARCH + " " + evidence[kind].split(": ", 2)[-1]])


@pytest.mark.parametrize(
    "boast",
    [
        "Our award-winning platform fits Redfern Clinics.",
        "We are the industry-leading tool for clinics.",
        "We are the fastest way to close the month.",
        "We are #1 for clinics.",
        "We are the largest provider in Leeds.",
    ],
)
def test_superlatives_and_awards_must_be_in_a_source(boast):
    assert not passes(boast)
    said = boast.replace("We are", "Redfern is").replace("Our", "Its")
    assert passes(boast, [*SOURCES, said])


def test_a_domain_in_an_address_is_no_ordinary_word():
    # "ana@zentrix.example" does not make "Zentrix" an ordinary word opening a sentence
    # (Zentrix is no name the company knows: only the sources can say what it is).
    crm = ["CRM: Ana Silva <ana@zentrix.example>, CFO at Initech, Leeds."]
    assert not passes("Zentrix grew fast.", crm)
    assert passes("Zentrix grew fast.", [*crm, "Zentrix grew fast."])
    assert not passes("Zentrix grew fast.", ["Orders at https://shop.example/zentrix rose."])
    assert not passes("Zentrix grew fast.", ["Orders at zentrix.example rose."])
    assert passes("Shares grew fast.", ["Shares in Initech rose."])  # an ordinary word


def test_in_a_year_when_is_a_time_and_the_awards_are_an_award():
    sources = ["Redfern won an award in 2023."]
    assert passes("Redfern won in a year when clinics struggled.", sources)
    assert not passes("Redfern grew in a year.", sources)  # a span: the sources count no year
    assert not passes("Redfern has led for more than a decade when it counts.", sources)
    assert passes("Congratulations on the 2023 awards.", sources)
    assert not passes("Congratulations on the 2023 awards.", ["Redfern grew in 2023."])


def test_a_name_ending_in_est_is_no_superlative():
    # "Design's Northcrest" reads like "Design's biggest"; the sources write it as a name.
    sources = ["Northcrest Design Inc. was founded in 2006.", "Revenue grew, led by Northcrest."]
    assert passes("Northcrest Design's Northcrest looks neat.", sources)
    assert not passes("Northcrest Design's biggest client is in Leeds.", sources)
    assert not passes("Northcrest Design's Biggest Client is in Leeds.", sources)


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("As cfo, you own the close.", None),
        ("As ceo, you own the close.", "As chief financial officer, you own the close."),
        ("As the vice president of sales, you see it all.", "As the cfo, you see it all."),
        ("As founder, you see it all.", "As CFO, you see it all."),
    ],
)
def test_roles_in_lower_case_are_checked(fabricated, fair):
    if fair is None:
        assert passes(fabricated)  # the CRM says CFO
        return
    assert not passes(fabricated)
    assert passes(fair)
