"""Gate versions 3, 4 and 5 (issue 14, on public data): weaknesses EntFA and SummEdits showed that
are weaknesses in an outreach draft too. One test per behaviour, fabricated beside fair."""

from __future__ import annotations

import hashlib
import json

import pytest

from company_ai.core.gate import find_unsupported_claims
from evals.gate_eval import PARTS, in_part, is_aside, summedits_pairs

RESEARCH = (
    "Research today:\nRedfern Clinics now employs 1,200 people across 35 clinics. Its founder"
    " Priya Okonkwo opened the first clinic in Leeds in 2015. Its shares rose after the"
    " results. The Welsh team grew. Patients wait for weeks. Priya said the year was hard."
)
SOURCES = ["CRM: Tom Baker <tom@redfern.example>, CFO at Redfern Clinics Ltd, Leeds.", RESEARCH]


def flagged(text: str, sources: list[str] = SOURCES) -> list[str]:
    return [c.text for c in find_unsupported_claims(text, sources)]


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Redfern opens in York next month.", "Happy to talk next month."),
        ("Its price rises later this week.", "Could we speak later this week?"),
        ("Redfern will list by the end of the year.", "I'll follow up next week."),
        ("Redfern Dock launches tomorrow.", "Are you free tomorrow?"),
    ],
)
def test_a_future_time_is_a_claim_unless_the_sentence_offers_it(fabricated, fair):
    assert flagged(fabricated)
    assert flagged(fair) == []
    assert flagged(fabricated, [*SOURCES, fabricated]) == []  # said by a source


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Redfern has grown for more than a decade.", "Patients wait for more than a week."),
        ("Redfern opened within a month.", "Patients wait for about a week."),
        ("Redfern has served Leeds for decades.", "Redfern has 1,200 people."),
    ],
)
def test_a_duration_in_words_needs_its_unit_counted_in_a_source(fabricated, fair):
    assert flagged(fabricated)
    assert flagged(fair) == []
    # A unit the sources name without counting in it ("the year") supports no duration.
    assert flagged("Priya has led it for a year.") == ["a year"]


def test_a_time_counted_in_a_unit_needs_that_unit_not_a_bare_number():
    sources = ["Redfern has 3 sites and won 3 awards. It hired 3."]
    assert flagged("Redfern has grown for three years.", sources) == ["three"]
    assert flagged("Redfern hired three.", sources) == []


@pytest.mark.parametrize(
    ("fabricated", "fair"),
    [
        ("Redfern was the first clinic to try it.", "The first step is a short call."),
        ("It is their second office.", "Redfern opened its first clinic in Leeds."),
    ],
)
def test_a_rank_in_lower_case_is_a_claim(fabricated, fair):
    sources = [SOURCES[0], RESEARCH.replace("the first clinic", "a clinic")]
    assert flagged(fabricated, sources)
    assert flagged(fair, sources if "step" in fair else SOURCES) == []


def test_a_hedged_vague_count_widens_it_the_hedged_way():
    sources = ["Redfern runs 14 clinics."]
    assert flagged("Redfern runs more than a dozen clinics.", sources) == []
    assert flagged("Redfern runs a dozen clinics.", sources) == ["a dozen"]
    assert flagged("Redfern runs fewer than a dozen clinics.", sources) == ["a dozen"]


def test_a_sentence_opening_word_the_sources_write_in_lower_case_is_no_name():
    assert flagged("Shares in Redfern rose.") == []
    assert flagged("Stocks in Redfern rose.") == ["Stocks"]  # never written by the sources
    assert flagged("Former CFO Tom Baker agreed.") == ["Former"]


def test_a_country_under_another_of_its_names_and_dotted_acronyms():
    sources = ["The US and the UK signed it. The United Nations agreed."]
    assert flagged("The United States signed it, as did Britain and the UN.", sources) == []
    assert flagged("The U.S. and the U.K. signed it.", sources) == []
    assert flagged("The U.S. and France signed it.", ["The UK signed it."]) == ["U.S", "France"]
    # A short form counts only in capitals: "us" is a pronoun.
    assert flagged("The United States signed it.", ["Write to us."]) == ["United States"]


def test_a_people_is_of_its_place_and_a_place_is_not_shown_by_its_people():
    assert flagged("The Welsh team grew.") == []
    assert flagged("The team in Wales grew.") == ["Wales"]  # Welsh singers live anywhere
    assert flagged("The Scottish team grew.", [*SOURCES, "It opened in Scotland."]) == []
    # A place the gate knows, with a people's ending: Kenya-n, Brazil-ian, Israel-i, Mexi-can.
    for people, place in [("Kenyan", "Kenya"), ("Brazilians", "Brazil"), ("Mexican", "Mexico")]:
        assert flagged(f"{people} firms grew.", [f"Firms in {place} grew."]) == []
    assert flagged("South African firms grew.", ["Firms in South Africa grew."]) == []
    assert flagged("She is British-Iranian.", ["Her British daughter lives in Iran."]) == []
    # Not a place's people: a given name ("Christ"), a short form ("us"), another "United".
    assert flagged("Christian agreed.", ["Christ agreed."]) == ["Christian"]
    assert flagged("American firms grew.", ["Write to us."]) == ["American"]
    assert flagged("British firms grew.", ["Manchester United grew."]) == ["British"]
    assert flagged("British firms grew.", ["The United Kingdom grew."]) == []
    assert flagged("Kenyan firms grew.", ["The kenya fund grew."]) == ["Kenyan"]  # a name


def test_a_given_name_the_sources_use_alone_for_the_same_person():
    # "Priya" alone and "Okonkwo" alone: one person, named familiarly.
    familiar = ["Okonkwo founded Redfern. Tom Baker runs finance. Priya said it was hard."]
    assert flagged("Priya Okonkwo founded Redfern.", familiar) == []
    assert flagged("Priya Okonkwo founded Redfern.", [familiar[0].replace("Priya", "She")])
    # The sources write "Priya" only before another surname: two people, not one.
    sources = ["Priya Okonkwo founded it. Tom Baker runs finance. Baker said so."]
    assert flagged("Priya Baker runs finance.", sources) == ["Priya"]
    # A middle name between is the same person; another surname elsewhere is not.
    middle = ["Priya Jane Adams joined. Priya said so."]
    assert flagged("Priya Adams joined.", middle) == []
    assert flagged("Priya Adams joined.", [*middle, "Priya Okonkwo founded it."]) == ["Priya"]
    # "Priya" alone, but also before another surname: still two people.
    sources.append("Priya said the year was hard.")
    assert flagged("Priya Baker runs finance.", sources) == ["Priya"]


def test_the_public_sets_split_a_quarter_aside_by_a_stable_id():
    ids = [f"document {i}" for i in range(4000)]
    aside = [i for i in ids if is_aside(i)]
    assert 0.22 < len(aside) / len(ids) < 0.28
    assert all(is_aside(i) == (hashlib.sha256(i.encode()).digest()[0] < 64) for i in ids[:50])
    for i in ids[:200]:  # each id in exactly one part, and in the whole
        assert in_part(i, "aside") != in_part(i, "tuning")
        assert in_part(i, "whole")


def test_summedits_pairs_keep_a_documents_pairs_in_one_part(tmp_path):
    items = [
        {"doc": f"document {d}", "summary": "s", "label": label, "edit_types": edits}
        for d in range(40)
        for label, edits in ((1, None), (0, ["entity_modification"]), (0, ["antonym_swap"]))
    ]
    (tmp_path / "summedits_news.json").write_text(json.dumps(items))
    parts = {part: summedits_pairs(tmp_path, "news", part) for part in PARTS}
    assert len(parts["whole"]) == 80  # the antonym swaps are beyond a presence check
    aside_docs = {i["doc"] for i in parts["aside"]}
    tuning_docs = {i["doc"] for i in parts["tuning"]}
    assert aside_docs and tuning_docs and not aside_docs & tuning_docs
    assert len(parts["aside"]) == 2 * len(aside_docs)  # both kept pairs of each document
    assert len(parts["aside"]) + len(parts["tuning"]) == 80


# --- gate version 4 (session 20) -----------------------------------------------------------


def test_a_rank_needs_a_rank_in_the_sources_not_a_count():
    assert flagged("Redfern opened its fourth clinic.", ["Redfern opened four clinics."]) == [
        "fourth"
    ]
    assert flagged("Redfern opened its fourth clinic.", ["Redfern opened its 4th clinic."]) == []
    assert flagged("Redfern opened its 4th clinic.", ["Redfern opened four clinics."]) == ["4th"]
    # A rank still tells the count: "the fifth clinic" means five of them.
    assert flagged("Redfern runs five clinics.", ["Redfern opened its fifth clinic."]) == []


def test_treble_multiplies_by_three_like_triple():
    assert flagged("Orders trebled last year.", ["Orders rose last year."]) == ["trebled"]
    assert flagged("Orders trebled last year.", ["Orders tripled last year."]) == []
    assert flagged("Orders trebled last year.", ["Orders rose 200% last year."]) == []


def test_a_vague_count_is_counted_like_a_number_and_never_by_a_year():
    barred = ["Figures showed 13 of 34 staff were barred."]  # 13 counts no named noun
    assert flagged("More than a dozen teachers were barred.", barred) == []
    assert flagged("Dozens of teachers were barred.", barred) == ["Dozens"]
    # A year said alone counts nothing: "thousands of agents" needs thousands of something.
    year = ["Redfern grew in 2025. It serves 504 travel agents."]
    assert flagged("Thousands of travel agents rely on Redfern.", year) == ["Thousands"]
    assert flagged("Hundreds of travel agents rely on Redfern.", year) == []


def test_both_counts_two_of_the_noun_after_it():
    held = ["A man was arrested, and another man was held. Both men remain in custody."]
    assert flagged("Two men were arrested.", held) == []
    assert flagged("Two women were arrested.", held) == ["Two"]
    assert flagged("The men were held in cell 2.", held) == ["2"]  # a two counting nothing


def test_the_end_of_a_time_falls_within_it():
    sources = ["The embargo should be lifted next week, and the price rises this month."]
    assert flagged("The embargo is lifted by the end of next week.", sources) == []
    assert flagged("The price rises at the end of this month.", sources) == []
    assert flagged("The embargo is lifted by the end of next month.", sources) == [
        "the end of next month"
    ]


def test_a_people_in_the_singular_is_the_people_in_the_plural():
    assert flagged("Indian nurses returned home.", ["About 10,000 Indians work there."]) == []
    assert flagged("Indians returned home.", ["An Indian nurse returned."]) == []
    assert flagged("Welsh nurses returned.", ["About 10,000 Indians work there."]) == ["Welsh"]
    assert flagged("Evan agreed.", ["Evans agreed."]) == ["Evan"]  # only a people's name


def test_a_large_round_figure_may_round_its_source():
    spent = ["She used £11,072 of NHS cash. Redfern raised $1,234,000 and has 805 staff."]
    assert flagged("She used £11,000 of NHS money.", spent) == []
    assert flagged("Redfern raised $1.2M.", spent) == []
    assert [c.strip() for c in flagged("She used £12,000 of NHS money.", spent)] == ["£12,000"]
    # Not a count a reader takes as exact, nor a figure of one significant digit.
    assert flagged("Redfern has 810 staff.", spent) == ["810"]
    assert flagged("Redfern raised $1M.", spent) == ["$1M"]


# --- gate version 5 (session 22) -----------------------------------------------------------


def test_the_first_time_in_a_while_is_a_rank():
    # "the first time I saw it" sets out a moment; "the first time in a decade" claims a rank.
    sources = ["Etna erupted in 2010. It is one of the most active volcanoes."]
    assert flagged("Etna erupted for the first time in years.", sources) == ["first"]
    assert flagged("Etna erupted for the first time since 2010.", sources) == ["first"]
    assert flagged("The first time I saw Etna, it erupted.", sources) == []
    assert flagged("The first time we saw Etna, it erupted.", sources) == []
    assert flagged("Etna erupted for the first time in years.", [*sources, "the first"]) == []


def test_one_after_a_name_is_part_of_the_name():
    sources = ["Oxford United play in the Football League Trophy. One of their players left."]
    assert flagged("He joined the League One club.", sources)
    assert flagged("He raced in Formula One.", ["He raced in Formula Two."]) == ["One"]
    assert flagged("He raced in Formula One.", ["Formula One is fast."]) == []
    # At a sentence's start, or after a word that is no name, "One" is still a pronoun.
    assert flagged("One of their players left.", sources) == []
    assert flagged("He joined Oxford United. One player left.", sources) == []


def test_a_compound_of_names_claims_only_the_part_no_source_holds():
    sources = ["Her fully British daughter was born in Leeds."]
    assert flagged("She is a British-Iranian citizen.", sources) == ["Iranian"]
    assert flagged("She is a British-Iranian citizen.", [*sources, "A British-Iranian."]) == []
    # Known apart and never together, the compound is the claim; an unknown one likewise.
    assert flagged("She is a British-Leeds citizen.", sources) == ["British-Leeds"]
    assert flagged("She is a Franco-Iranian citizen.", sources) == ["Franco-Iranian"]
    assert flagged("Her follow-up was in Leeds.", sources) == []


def test_a_rank_of_a_time_needs_that_time_ranked():
    placed = ["Redfern finished second and third in the awards."]
    assert flagged("Redfern won for the second year in a row.", placed) == ["second"]
    assert flagged("It is Redfern's third season.", placed) == ["third"]
    assert flagged("Redfern won for the second time.", placed) == []  # no unit of time
    ranked = ["Redfern won for a second successive year, in its 3rd season."]
    assert flagged("Redfern won for the second year in a row.", ranked) == []
    assert flagged("It is Redfern's third season.", ranked) == []
