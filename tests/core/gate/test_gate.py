import doctest
import hashlib
import json

import pytest

from company_ai.core.gate import GateVerdict, find_unsupported_claims, judge
from company_ai.core.gate import verdict as gate_verdict
from company_ai.core.gate.claim import KINDS
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.presence import check
from company_ai.core.gate.verdict import GATE_VERSION
from evals.gate_eval import ALLOW, gate_scores, labelled_drafts

SOURCES = [
    "CRM: Grace Hopper <grace@bluewind.example>, CTO at Bluewind Logistics Inc., Leeds.",
    "Bluewind Logistics Inc. raised $1,200,000 in 2023. Revenue grew twenty percent last"
    " year. The team lists 805 people. It opened an office in Bristol on 3 March 2025."
    " Bluewind Harbor is its product.",
]


PLAIN = SOURCES[1:]  # no CRM line: the sources do not say who the reader is


def claims(text, sources=SOURCES, **kw):
    return [(c.text, c.kind) for c in find_unsupported_claims(text, sources, **kw)]


@pytest.mark.parametrize(
    "text",
    [
        "Bluewind raised $1.2M in 2023.",  # $1.2M = 1,200,000; Inc. dropped
        "Revenue grew 20% last year.",  # 20% = twenty percent
        "Acme Inc. is not mentioned, but Bluewind Logistics is.".replace("Acme Inc. is", "it is"),
        "Bluewind Logistics has about 800 people.",  # a hedged round number
        "Your Bristol office opened in March 2025, on March 3.",
        "Call me about the Bristol office (opened 03/03/2025).",
        "Are you free on Thursday for a call?",  # a proposed day is not a claim
        "Grace, as CTO you will know Bluewind Harbor.",
        "Hopper's team in Leeds must be busy.",
    ],
)
def test_fair_paraphrases_are_supported(text):
    assert claims(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bluewind raised $2.5M last year.", [("$2.5M", "money")]),
        ("Revenue grew 35% last year.", [("35%", "percent")]),
        ("The team lists 950 people.", [("950", "number")]),
        ("The team lists nine hundred people.", [("nine hundred", "number")]),
        ("Founded in 1999, it grew.", [("1999", "date")]),
        ("It opened on 4 March 2025.", [("4 March 2025", "date")]),
        ("It opened on 04/03/2025.", [("04/03/2025", "date")]),
        ("We met on Thursday.", [("We met", "relationship"), ("Thursday", "date")]),
        ("Ada Lovelace suggested I write.", [("Ada Lovelace", "person")]),
        ("We work with Globex Systems.", [("Globex Systems", "organisation")]),
        ("Your new office in Manchester looks great.", [("Manchester", "place")]),
        ('You will like "FlowDesk" for this.', [("FlowDesk", "product")]),
        ("As CFO, you own this.", [("CFO", "other")]),
    ],
)
def test_fabricated_numbers_and_names_are_caught_with_their_kind(text, expected):
    assert claims(text) == expected


def test_offsets_point_into_the_text():
    text = "Hi Grace,\n\nBluewind grew 35% and hired Ada Lovelace in Manchester.\n"
    found = find_unsupported_claims(text, SOURCES)
    assert [c.text for c in found] == ["35%", "Ada Lovelace", "Manchester"]
    assert all(text[c.start : c.end] == c.text for c in found)
    assert {c.kind for c in found} <= set(KINDS)
    assert found[0].to_json() == {"text": "35%", "kind": "percent", "start": 25, "end": 28}


def test_greetings_sign_offs_and_the_sender_are_not_claims():
    text = (
        "Dear Grace Hopper,\n\nI'm Sam from Company AI. Congratulations on Bluewind Harbor.\n"
        "Would a short call next week be useful?\n\nKind regards,\nSam Rivers\nCompany AI\n"
        "+44 20 7946 0018\n"
    )
    assert claims(text, allow=["Sam Rivers", "Company AI"]) == []
    assert claims("Hi Bob,\n\nThanks.\n\nBest,\nSam", ["CRM: Bob Ames"], allow=["Sam"]) == []
    # Sources saying who the reader is (a CRM line) must hold the name the greeting
    # addresses: "Hi Bob," to Grace Hopper is a claim. Sources that do not say leave the
    # reader unknown: the name a greeting addresses is the reader's, no claim.
    assert claims("Hi Bob,\n\nThanks.\n\nBest,\nSam", allow=["Sam"]) == [("Bob", "other")]
    assert claims("Hi Bob,\n\nThanks.\n\nBest,\nSam", PLAIN, allow=["Sam"]) == []
    assert claims("I'm Sam from Company AI.") == [("Sam", "other"), ("Company AI", "organisation")]


@pytest.mark.parametrize(
    "greeting",
    [
        "Hi Dana,",
        "Dear Ms. Dana Reyes,",
        "Hello Dana and Sam —",
        "Bonjour Dana,",
        "Good morning Dana!",
        "Hallo Dana,",
        "Dear Dr. Dana de la Cruz,",
        "Hi Dana, Sam and Lee,",
    ],
)
def test_the_names_a_greeting_addresses_are_the_readers_never_claims(greeting):
    body = "Bluewind grew 20% last year."
    for together in (False, True):
        assert claims(f"{greeting}\n\n{body}", PLAIN, together=together) == []
        assert claims(f"{greeting} {body}", PLAIN, together=together) == []  # on one line
        # Named again, the reader is still the reader; anyone else is a claim.
        again = f"{greeting}\n\nDana, {body} Marco Ruiz told me."
        assert claims(again, PLAIN, together=together) == [("Marco Ruiz", "person")]


def test_only_the_readers_names_in_a_greeting_are_exempt():
    body = "\n\nBluewind grew 20% last year."
    assert claims("Hi Dana and the Globex team," + body, PLAIN) == [("Globex", "other")]
    assert claims("Hi Dana and Globex Capital," + body, PLAIN) == [
        ("Globex Capital", "organisation")
    ]
    assert claims("Hi Dana of Globex," + body, PLAIN) == [("Dana", "other"), ("Globex", "other")]
    everyone = "Dear Dana (and everyone at Globex)," + body
    assert claims(everyone, PLAIN) == [("Globex", "other")]
    assert claims("Good morning Dana, from a rainy Leeds!" + body, PLAIN) == [("Leeds", "place")]
    # A run that goes on into the sentence is no salutation's name.
    assert claims("Hi Dana Acme grew 20% last year.", PLAIN) == [("Dana Acme", "person")]
    # The reader's first name does not cover another's full name.
    assert claims("Hi Dana,\n\nDana Reyes grew Bluewind.", PLAIN) == [("Dana Reyes", "person")]
    assert claims("Hi team,\n\nDana grew Bluewind.", PLAIN) == [("Dana", "other")]
    # Only the first line greets: a greeting later is a sentence like any.
    assert claims("Bluewind grew.\nHi Dana,", PLAIN) == [("Dana", "other")]


def test_a_greeting_to_someone_else_than_the_reader_the_sources_name_is_a_claim():
    # The material names the reader (its CRM line: Grace Hopper): the greeting must be hers.
    body = "\n\nBluewind grew 20% last year."
    for together in (False, True):
        assert claims("Dear Grace," + body, together=together) == []
        assert claims("Bonjour Grace Hopper," + body, together=together) == []
        assert claims("Hello Dana Reyes," + body, together=together) == [("Dana Reyes", "person")]
        assert claims("Hi Grace,\n\nDana, grew." + body, together=together) == [("Dana", "other")]


def test_claims_hidden_after_a_sign_off_are_still_claims():
    text = "Hi Ada,\n\nHello.\n\nBest,\nSam Rivers We saved Globex 70% of their costs.\n"
    assert claims(text, allow=["Sam Rivers", "Ada"]) == [("Globex", "other"), ("70%", "percent")]
    text = "Hi Ada,\n\nHello.\n\nBest,\nSam\nCompany AI\nLondon\n\nPS: Globex loves us.\n"
    allow = ["Ada", "Sam", "Company AI"]
    assert claims(text, allow=allow) == [("London", "place"), ("Globex", "other")]


def test_claims_on_the_greeting_or_sign_off_line_are_still_claims():
    # Only the salutation is exempt, never the rest of its line.
    text = "Hi Ada, we saved Globex 70% of their costs. Best, Sam Rivers"
    assert claims(text, allow=["Sam Rivers", "Ada"]) == [("Globex", "other"), ("70%", "percent")]
    text = "Hi Ada,\n\nHello.\n\nThanks again for the 2024 order from Globex\nSam\n"
    assert [c for c, _ in claims(text, allow=["Ada"])] == ["2024", "Globex", "Sam"]


def test_a_known_first_name_with_a_known_surname_is_not_a_known_person():
    sources = ["John Doe met Jane Smith."]
    assert [c for c, _ in claims("John Smith called.", sources)] == ["John"]
    assert claims("Smith called John.", sources) == []


def test_a_hedge_opening_a_sentence_is_no_name():
    # Issue 28: "Almost" opening a sentence was a false alarm on the dev drafts.
    assert claims("Almost 810 people work there now.") == []
    assert claims("Nearly 900 people work there now.") == [("900", "number")]  # 805 is not


def test_a_verb_opening_a_sentence_before_its_object_is_no_name():
    # Issue 28: "Verify" before "the numbers" was read as a name no source gives. One word
    # alone opening a sentence, right before a determiner or an object pronoun, is a verb.
    assert claims("Verify the numbers with me sometime.") == []
    assert claims("Verify the numbers with me sometime.", together=True) == []  # as outreach
    assert claims("Bluewind did well. Shoot me a note. Forward this to Grace.") == []
    # A made-up company in the same place, before its verb, is still a name no source gives.
    assert claims("Zentrix verified the numbers with me.") == [("Zentrix", "other")]
    assert claims("Bluewind did well. Zentrix uses the numbers.") == [("Zentrix", "other")]


@pytest.mark.parametrize(
    "text",
    [
        "Zentrix this year grew.",  # a determiner opening a time: "this year" is no object
        "Zentrix a decade ago had no office.",
        "Zentrix the following year grew.",
        "Zentrix, the numbers say, grew.",  # a comma: no object after a verb
        "Zentrix's the numbers team.",  # no word of letters alone
        "Zentrix the company grew. We help Zentrix.",  # the text names it mid-sentence
    ],
)
def test_a_name_before_a_determiner_that_opens_no_object_is_still_a_name(text):
    first = find_unsupported_claims(text, SOURCES)[0]
    assert (first.start, first.text.removesuffix("'s")) == (0, "Zentrix")


def test_an_acronym_needs_its_capitals_in_the_sources():
    assert claims("As IT Manager, you own it.", ["it is done. Product Manager"]) == [
        ("IT", "other")
    ]


def test_the_gate_meets_its_targets_on_the_labelled_set():
    cases = labelled_drafts()
    assert len(cases) >= 200
    assert 0.35 < sum(c.fabricated for c in cases) / len(cases) < 0.65
    scores = gate_scores(cases)
    assert scores.recall >= 0.95 and scores.precision >= 0.90, scores.line()


def test_the_module_docstring_example_is_true():
    result = doctest.testmod(gate_verdict)
    assert result.attempted >= 1 and result.failed == 0


def test_extraction_needs_no_sources_and_one_extraction_checks_against_any():
    text = "Bluewind grew 35% and hired Ada Lovelace in Manchester."
    mentions = extract(text)
    assert [text[s:e] for s, e, *_ in mentions.values] == ["35%"]
    assert [words for _, _, words, _ in mentions.names] == [
        ["Bluewind"],
        ["Ada", "Lovelace"],
        ["Manchester"],
    ]
    assert [c.text for c in check(mentions, SourceIndex(SOURCES))] == [
        "35%",
        "Ada Lovelace",
        "Manchester",
    ]
    supporting = SourceIndex(["Bluewind grew 35%. Ada Lovelace joined in Manchester."])
    assert check(mentions, supporting) == []


def test_a_verdict_names_each_part_and_round_trips_through_its_json():
    parts = {"subject": "Ada, about Globex", "body": "Hi Ada,\n\nBluewind grew 35%.\n"}
    verdict = judge(parts, SOURCES, ["Sam Rivers"])
    assert not verdict.passed
    assert verdict.to_json() == [
        {"field": "subject", "text": "Ada", "kind": "other", "start": 0, "end": 3},
        {"field": "subject", "text": "Globex", "kind": "other", "start": 11, "end": 17},
        {"field": "body", "text": "Ada", "kind": "other", "start": 3, "end": 6},
        {"field": "body", "text": "35%", "kind": "percent", "start": 23, "end": 26},
    ]
    assert verdict.labels() == ["other Ada", "other Globex", "other Ada", "percent 35%"]
    stored = GateVerdict.from_json(json.dumps(verdict.to_json()), verdict.judged)
    assert stored == verdict and stored.holds_for(parts, SOURCES, ["Sam Rivers"])
    assert judge({"body": "Bluewind grew twenty percent."}, SOURCES).passed


@pytest.mark.parametrize(
    "change",
    ["claims", "body", "sources", "allow", "version"],
)
def test_a_stored_verdict_holds_only_for_exactly_what_it_judged(change, monkeypatch):
    parts = {"subject": "Hello", "body": "Hi Grace,\n\nBluewind grew 35%.\n"}
    allow = ["Sam Rivers"]
    verdict = judge(parts, SOURCES, allow)
    claims = verdict.to_json()
    sources = list(SOURCES)
    if change == "claims":  # the stored verdict was edited to pass
        claims = []
    elif change == "body":
        parts = parts | {"body": parts["body"] + "We saved Globex 70%."}
    elif change == "sources":
        sources = sources[:1]
    elif change == "allow":
        allow = ["Someone Else"]
    else:
        monkeypatch.setattr(gate_verdict, "GATE_VERSION", GATE_VERSION + 1)
    stored = GateVerdict.from_json(json.dumps(claims), verdict.judged)
    assert not stored.holds_for(parts, sources, allow)


@pytest.mark.parametrize("claims", ["not json", '[{"text": "x"}]', "[1]"])
def test_an_unreadable_stored_verdict_is_no_verdict(claims):
    assert GateVerdict.from_json(claims, "abc") is None
    assert GateVerdict.from_json("[]", None) is None


# What GATE_VERSION stands for: a digest of the gate's verdicts on the labelled drafts.
VERDICTS_OF_VERSION = {
    1: "39693d2f7504c6451fe16e3ab5b504400fa04e3fed3de07c56dfb29cb527dfbb",
    2: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # Version 3 moved verdicts on public data (EntFA, SummEdits), none on the labelled drafts.
    3: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # So did version 4 (ranks, rounding, "both", peoples in the plural…): none here either.
    4: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # Version 5 judges outreach drafts with the co-occurrence check (`together`) and reads
    # "the first time in…" as a rank (session 22): no labelled draft pins a fact on another
    # subject or says such a rank, so the same verdicts, alone or together.
    5: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # Version 6 reads the names a greeting addresses as the reader's, never claims ("Hi
    # Dana,", "Bonjour Dana,"): every labelled draft's reader is in its sources already; it
    # refuses what a reader could act on (links, numbers, instructions) that is not the
    # company's own, when `judge` is given `own` (drafts are), judged without it, the same;
    # it pairs no date with a name in the co-occurrence check and reads a hedge opening a
    # sentence ("Almost 400…") as no name (issue 28): no labelled draft does either.
    6: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # Version 7 reads who-did-what by clause and subject in the co-occurrence check (issue
    # 28: a new subject starts a clause, a figure is its clause's subject's, two
    # prepositions' objects are not tied): no labelled draft is judged otherwise.
    7: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
    # Version 8 reads a word alone opening a sentence before a determiner or an object
    # pronoun ("Verify the numbers", "Send me…") as a verb, not a name (issue 28): no
    # labelled draft opens a sentence so.
    8: "e93da2ca08d5b1954e5191f7d17016c97ed14ca00e435f80acc2c3753a88f75b",
}


@pytest.mark.parametrize("together", [False, True], ids=["presence", "as outreach judges"])
def test_verdicts_change_only_with_the_gate_version(together):
    verdicts = [
        judge({"draft": c.text}, c.sources, ALLOW, together=together).to_json()
        for c in labelled_drafts()
    ]
    digest = hashlib.sha256(json.dumps(verdicts).encode()).hexdigest()
    assert VERDICTS_OF_VERSION.get(GATE_VERSION) == digest, (
        "the gate's verdicts changed: bump gate_verdict.GATE_VERSION (drafts' stored verdicts are"
        f" then judged again) and record {digest} for it here"
    )
