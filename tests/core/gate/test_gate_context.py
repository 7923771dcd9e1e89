"""The co-occurrence check (`core/gate_context.py`): claims one sentence ties together must
be held together by one source passage. Each rule: a fabricated draft beside a fair one."""

from __future__ import annotations

import dataclasses
import doctest
import functools

import pytest

from company_ai.core import gate
from company_ai.core.gate import context as gate_context
from company_ai.core.gate import judge
from company_ai.core.gate import names as gate_names
from company_ai.core.gate import presence as gate_presence
from company_ai.core.gate import values as gate_values
from company_ai.core.gate.context import check_together
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex

find_together = functools.partial(gate.find_unsupported_claims, together=True)

RIVALS = [
    "Initech cut costs by 41% in 2024. Globex grew 12% after opening in March 2023.",
    "Carl Mendes met Bob Ames at the fair. Ana Silva leads Hooli.",
    "Umbrella Corp sued Zapier. Globex bought Stripe.",
]


def misattributed(text: str, sources: list[str] = RIVALS, **kw) -> list[str]:
    found = find_together(text, sources, **kw)
    assert all(c.kind == "misattributed" for c in found), found  # nothing else is unsupported
    return [c.text for c in found]


@pytest.mark.parametrize(
    ("fabricated", "fair", "pair"),
    [
        # A number on another company's name.
        ("Globex cut costs by 41%.", "Initech cut costs by 41%.", "Globex cut costs by 41%"),
        # A person tied to a person the sources tie to someone else.
        ("Ana Silva met Bob Ames.", "Carl Mendes met Bob Ames.", "Ana Silva met Bob Ames"),
        # A company tied to another company's counterpart.
        ("Globex sued Zapier.", "Umbrella Corp sued Zapier.", "Globex sued Zapier"),
    ],
)
def test_claims_one_sentence_ties_together_need_one_passage(fabricated, fair, pair):
    assert misattributed(fabricated) == [pair or fabricated.rstrip(".")]
    assert misattributed(fair) == []
    # Each claim alone is supported: the presence gate passes both.
    assert gate.find_unsupported_claims(fabricated, RIVALS) == []


def test_a_date_is_checked_by_presence_alone():
    # Issue 28: on the dev parts a name-date pair caught 2 fabricated drafts and held back 6
    # fair ones, so a date beside another company's name is no misattribution.
    assert misattributed("Initech opened in March 2023.") == []
    # Its presence is still checked.
    claims = gate.find_unsupported_claims("Initech opened in May 2023.", RIVALS, together=True)
    assert [c.text for c in claims] == ["May 2023"]


def test_a_fact_pinned_on_no_one_may_be_anyone_s():
    # "It grew 41%": the gate cannot tell whom "it" means, so the 41% may be Acme's.
    unpinned = ["Acme Ltd now employs 120 people. Last year it grew 41%."]
    assert misattributed("Acme grew 41%.", unpinned) == []
    pinned = ["Acme Ltd now employs 120 people.", "Initech grew 41% in 2024."]
    assert misattributed("Acme grew 41%.", pinned) == ["Acme grew 41%"]
    # Pinned on another subject in one passage and on no one in another: not pinned.
    assert misattributed("Acme grew 41%.", [*pinned, *unpinned]) == []


def test_a_subject_s_own_products_are_no_other_subject():
    # "led by Redfern Dock": Redfern's product, not another company the 41% belongs to.
    sources = ["Redfern Clinics employs 120 people.", "Redfern Dock grew 41% last year."]
    assert misattributed("Redfern Clinics grew 41%.", sources) == []
    assert misattributed("Globex grew 41%.", [*sources, "Globex employs 9."]) == ["Globex grew 41%"]


def test_a_fact_is_pinned_only_on_a_name_before_it_in_its_sentence():
    # "led by Keystone" says what drove the growth, not whose it was: the page's company's.
    led = ["Globex employs 9.", "Revenue grew 41% last year, led by Keystone."]
    assert misattributed("Globex grew 41%.", led) == []
    pinned = ["Globex employs 9.", "Keystone grew 41% last year."]
    assert misattributed("Globex grew 41%.", pinned) == ["Globex grew 41%"]
    # A name is tied to every other name of its passage, before it or after.
    for met in ("Carl Mendes met Bob Ames.", "Bob Ames met Carl Mendes."):
        sources = ["Ana Silva leads Hooli.", met]
        assert misattributed("Ana Silva met Bob Ames.", sources) == ["Ana Silva met Bob Ames"]


def test_a_place_is_where_not_who():
    sources = ["Globex employs 9.", "It opened an office in Lyon with 40 staff."]
    assert misattributed("Globex opened an office with 40 staff.", sources) == []
    assert misattributed("Globex opened in Lyon with 40 staff.", sources) == []
    rival = ["Globex employs 9.", "Initech opened an office in Lyon with 40 staff."]
    assert misattributed("Globex opened an office with 40 staff.", rival) != []


def test_the_window_lets_a_pair_span_neighbouring_sentences(monkeypatch):
    sources = ["Globex is based in Leeds. Hooli's revenue rose 12% last year."]
    assert misattributed("Globex grew 12%.", sources) == ["Globex grew 12%"]
    monkeypatch.setattr(gate_context, "WINDOW", 2)
    assert misattributed("Globex grew 12%.", sources) == []


@pytest.mark.parametrize(
    "draft",
    [
        "Globex, Initech and Zapier are all in the news.",  # a list ties nothing together
        "Globex grew in Leeds, not Initech.".replace(", not Initech", ""),  # a place pairs not
        'Globex said "Zapier" again.',  # a quoted word pairs with nothing
        "Hi Ana,\n\nAna runs Globex.\n",  # the reader, named in the greeting
        "Globex grew 12%, Sam Rivers heard.",  # the sender (allowed)
        "Globex grew 12%. Initech cut costs by 41%.",  # each sentence on its own
    ],
)
def test_what_pairs_with_nothing(draft):
    sources = [*RIVALS, "CRM: Ana Silva, CFO at Hooli, Leeds. Initech is in Leeds."]
    assert misattributed(draft, sources, allow=["Sam Rivers"]) == []


def test_the_reader_named_elsewhere_than_the_greeting_is_a_claim_like_any():
    sources = [*RIVALS, "CRM: Ana Silva, CFO at Hooli."]
    assert misattributed("Hi there,\n\nAna runs Globex.\n", sources) == ["Ana runs Globex"]


def test_the_pair_is_reported_at_its_place_in_the_original_text():
    text = "Hi Ana,\n\nGl\u200bobex cut costs by 4\u200b1%, I read.\n"
    found = find_together(text, RIVALS)
    assert [(c.kind, c.text) for c in found] == [
        ("misattributed", "Gl\u200bobex cut costs by 4\u200b1%")
    ]
    assert all(text[c.start : c.end] == c.text for c in found)


def test_presence_claims_come_first_and_the_check_adds_only_pairs():
    mentions = extract("Globex cut costs by 41% and hired Tim Cook.")
    index = SourceIndex(RIVALS)
    plain = gate_presence.check(mentions, index)
    together = check_together(mentions, index)
    assert [c.text for c in plain] == ["Tim Cook"]
    assert [c for c in together if c.kind != "misattributed"] == plain
    assert [c.text for c in together if c.kind == "misattributed"] == ["Globex cut costs by 41%"]


def test_outreach_drafts_are_judged_with_the_check_and_summaries_without():
    from company_ai.core.outreach.drafting import judge_draft
    from company_ai.core.vault.distill import page_verdict

    body = "Globex cut costs by 41%."
    draft = judge_draft("A note", body, RIVALS, allow=["Sam Rivers"])
    assert [(part, c.kind) for part, c in draft.claims] == [("body", "misattributed")]
    assert judge({"body": body}, RIVALS, together=True).claims == draft.claims
    # A summary joins what its source says in different sentences (SummEdits fell with the
    # check: BENCHMARKS.md), so a vault page, like the plain call, is judged by presence.
    assert not judge({"body": body}, RIVALS).claims
    assert page_verdict(f"# Globex\n\n{body}\n", "\n".join(RIVALS)).passed
    assert gate.find_unsupported_claims(body, RIVALS) == []


def test_the_module_docstring_example_is_true():
    result = doctest.testmod(gate_context)
    assert result.attempted >= 1 and result.failed == 0


def test_sentences_split_at_ends_and_lines_only():
    text = "Acme Inc. grew 5%. Then it grew.\nNew line! And more? yes. 3 left"
    assert [text[a:b] for a, b in gate_context.sentences(text)] == [
        "Acme Inc. grew 5%.",
        "Then it grew.",
        "New line!",
        "And more? yes.",
        "3 left",
    ]


def test_passages_are_looked_for_only_where_a_claim_may_be_yet_all_are_found():
    """The hint (a name's first word, a value's passages) spares indexing passages that
    cannot hold a claim: the same passages as testing every one, on the gate's drafts."""
    from evals.gate_adversary import ALLOW as SENDER
    from evals.gate_adversary import adversarial_drafts
    from evals.gate_eval import ALLOW, labelled_drafts

    cases = [(c.text, c.sources, ALLOW) for c in labelled_drafts()[:80]]
    cases += [(c.body, c.sources, SENDER) for c in adversarial_drafts() if not c.aside][::4]
    cases += [("The European Union's Commission met O'Brien in 2024.", RIVALS, ())]
    cases += [("Globex hired two men in 2024.", ["Globex hired both men.", "In 2024."], ())]
    hinted = 0
    for text, sources, allow in cases:
        index = SourceIndex([*sources, "The EU Commission met O'Brien; Zürich grew 5%."], allow)
        passages = gate_context.Passages(index)
        for item in gate_context._items(extract(text), index, set()):
            every = {i for i in range(len(passages.spans)) if item.supported_by(passages.index(i))}
            assert passages.holding(item) == every, (text, item)
            hinted += item.hint is not None
    assert hinted > 100


def test_a_claim_held_only_across_passages_cannot_be_placed_and_pairs_with_nothing():
    # "Conor McGregor": "Conor" alone in one sentence, "McGregor" in another (the gate's
    # rule for a familiar given name); no one passage holds the name to pair it.
    sources = ["Conor won the bout. McGregor was paid 41% more.", "Globex grew 41%."]
    assert gate.find_unsupported_claims("Conor McGregor got 41%.", sources) == []
    assert misattributed("Conor McGregor got 41%.", sources) == []
    assert misattributed("McGregor got 41%.", sources) == []
    assert misattributed("Conor got 41%.", sources) == ["Conor got 41%"]


def test_the_benchmark_scores_the_check_only_when_asked():
    from evals.gate_eval import unsupported

    assert unsupported("Globex cut costs by 41%.", RIVALS) == []
    assert [c.kind for c in unsupported("Globex cut costs by 41%.", RIVALS, together=True)] == [
        "misattributed"
    ]


# --- the shortcuts: each gives the plain form's answer (the passage's own SourceIndex) ----

TRICKY_SOURCES = [
    "Globex's revenue grew 12%. The Globex Group hired Mr Smith. Globex.com is live.",
    "GLOBEX-owned Initech_2 grew. O'Brien joined AcmeCo-based Hooli in 2024.",
    "Zürich Ltd grew 5%. The U.S. office of Stark Industries opened. IBM hired Ana.",
    "globex grew 12%. Initech'x cut costs. 5Globex grew. Initech grew 41%.",
    "Ibm Research grew 5%. Sam Rivers of Wayne Enterprises met Ana.",
]
TRICKY_DRAFTS = [
    "Globex grew 12% and the Globex Group hired Mr Smith.",
    "Globex.com and Initech grew 41%; O'Brien joined Hooli in 2024.",
    "Zürich grew 5%; Stark Industries opened in the U.S. and IBM hired Ana.",
    "Initech cut costs; Globex Group grew 12%, and AcmeCo grew.",
    "IBM Research grew 5% and Wayne Enterprises met Sam Rivers.",
]


def _tricky_and_gate_cases():
    from evals.gate_adversary import ALLOW as SENDER
    from evals.gate_adversary import adversarial_drafts
    from evals.gate_eval import ALLOW, labelled_drafts

    cases = [(c.text, c.sources, ALLOW) for c in labelled_drafts()[:60]]
    cases += [(c.body, c.sources, SENDER) for c in adversarial_drafts() if not c.aside][::6]
    cases += [(d, TRICKY_SOURCES, allow) for d in TRICKY_DRAFTS for allow in ((), ("Sam Rivers",))]
    return cases


def test_a_passage_held_quickly_is_held_by_its_own_index():
    """`_quickly_held` (the passage's normalised text, no index) says yes only where the
    passage's own `SourceIndex` supports the claim; and says it often."""
    quick = names = texts = 0
    for text, sources, allow in _tricky_and_gate_cases():
        index = SourceIndex(sources, allow)
        passages = gate_context.Passages(index)
        for i in range(len(passages.spans)):
            joined, normalised = passages._text(i)
            own = passages.index(i)
            assert (joined, normalised) in {(own.joined, own.text), ("", "")}
            texts += bool(joined)
        for item in gate_context._items(extract(text), index, set()):
            for i in range(len(passages.spans)):
                plain = item.supported_by(passages.index(i))
                if passages._quickly_held(item, i):
                    assert plain, (text, item.memo, passages.joined[slice(*passages.spans[i])])
                    quick += 1
                names += plain and bool(item.key)
    assert quick > 0.6 * names  # the shortcut answers most names a passage holds
    assert texts > 1000


def test_a_word_written_as_its_own_run_is_what_the_index_capitalises():
    for text, word in [
        ("Globex grew.", "Globex"),
        ("Globex's revenue", "Globex"),
        ("see Globex.com now", "Globex"),
        ("a Globex-owned firm", "Globex"),
        ("(Globex)", "Globex"),
        ("5Globex grew", "Globex"),
        ("Globex_2 grew", "Globex"),
        ("Globex'x grew", "Globex"),
        ("the Globexes", "Globex"),
        ("an.Globex", "Globex"),
    ]:
        held = gate_names._norm(word) in SourceIndex([text]).capitalised
        assert gate_context._capitalised_word(text, word) <= held, (text, word)
    assert gate_context._capitalised_word("Globex grew.", "Globex")
    assert not gate_context._capitalised_word("5Globex grew", "Globex")


def test_a_pair_held_in_one_passage_is_found_first_with_the_same_verdicts(monkeypatch):
    """`held_together` (one passage holding both, tried first) changes no verdict: the same
    claims with it as with every passage of each claim found first."""
    cases = _tricky_and_gate_cases()
    cases += [(d, RIVALS, ()) for d in ("Globex cut costs by 41%.", "Ana Silva met Bob Ames.")]
    fast = [find_together(text, sources, allow=allow) for text, sources, allow in cases]
    monkeypatch.setattr(gate_context.Passages, "held_together", lambda self, *args: False)
    plain = [find_together(text, sources, allow=allow) for text, sources, allow in cases]
    assert fast == plain
    assert sum(1 for claims in plain for c in claims if c.kind == "misattributed") >= 2


def test_sentences_that_cannot_pair_are_passed_without_the_sources(monkeypatch):
    """`_pairable` (a sentence may hold a name and another claim) is false only for the
    sentences where the plain loop finds fewer than two claims or no name; a text with none
    is passed at once."""
    cases = _tricky_and_gate_cases()
    cases += [(d, RIVALS, ()) for d in ("Globex cut costs by 41%.", "Acme Inc. Globex grew 5%.")]
    spared = passed = 0
    for text, sources, allow in cases:
        mentions, index = extract(text), SourceIndex(sources, allow)
        spans = gate_context.sentences(mentions.folded)
        pairable = gate_context._pairable(mentions, [end for _, end in spans])
        claims = gate_context._claims(mentions, index, set())
        for (a, b), may in zip(spans, pairable.may, strict=True):
            inside = [c for c in claims if a <= c.start < b]
            if not may:
                assert len(inside) < 2 or not any(c.key for c in inside), (text, inside)
                spared += bool(inside)
        passed += not pairable
    assert spared > 20 and passed > 5
    fast = [find_together(text, sources, allow=allow) for text, sources, allow in cases]

    def every(mentions, ends, implied=False):
        return gate_context._Pairable(
            [True] * len(ends), [True] * len(mentions.values), [True] * len(mentions.names)
        )

    monkeypatch.setattr(gate_context, "_pairable", every)
    plain = [find_together(text, sources, allow=allow) for text, sources, allow in cases]
    assert fast == plain


def test_a_name_run_may_pair_in_any_sentence_it_touches():
    # The name finder ends a run at a sentence's end; were a run to cross one, a name
    # trimmed at its start could sit in the next sentence: it counts in both.
    text = "Acme Inc. Globex grew 5%."
    ends = [end for _, end in gate_context.sentences(text)]
    across = dataclasses.replace(extract(text), names=[(0, 16, ["Acme", "Inc.", "Globex"], "")])
    pairable = gate_context._pairable(across, ends)
    assert len(ends) == 2 and pairable.may == [False, True]
    assert pairable.names == [True] and pairable.values == [True]
    assert not gate_context._pairable(across, [ends[0], ends[0] + 1])  # 5% is past them
    apart = extract("Acme grew. Globex grew 5% and Initech too.")
    pairable = gate_context._pairable(apart, [10, 42])
    assert pairable.names == [False, True, True] and pairable.values == [True]
    # Weekdays, times relative to the writer and dates (issue 28) pair with nothing.
    assert not gate_context._pairable(extract("Globex met on Monday."), [21])
    assert not gate_context._pairable(extract("Globex met on 3 May."), [20])
    assert gate_context._pairable(extract("Globex met 3 buyers."), [20])


def test_the_passages_with_a_value_are_where_the_sources_values_start():
    """`_valued` reads where the whole sources' values start from the parse the presence
    gate made (`SourceIndex.values.starts`): the same passages as parsing them again."""
    for _, sources, allow in _tricky_and_gate_cases():
        index = SourceIndex(sources, allow)
        passages = gate_context.Passages(index)
        starts = [s for s, _, _ in gate_values._numbers(index.joined, relative=False)]
        assert index.values.starts == starts
        again = {passages._at(s) for s in starts} | passages._containing("both")
        assert passages._valued == sorted(again)


CRM = "CRM: Hannah Okafor <hannah@ledgerline.io>, Head of Success at Ledgerline, Leeds."
PAGE = (
    "Research today:\nLedgerline grew to 310 companies in 2023.\n"
    "Its closest rival, Closewise, reported 600 customers at the end of 2023."
)


def test_a_name_after_a_possessive_belongs_to_the_subject_already_named():
    page = "Research today:\nLedgerline runs two offices.\nIts Leeds Hub handled 2,400 clients."
    assert misattributed("Ledgerline handled 2,400 clients.", [CRM, page]) == []
    rival = page.replace("Its Leeds Hub", "Closewise")
    assert misattributed("Ledgerline handled 2,400 clients.", [CRM, rival]) != []


def test_an_abstract_noun_opening_a_sentence_is_no_subject():
    sources = ["Globex employs 9.", "Occupancy reached 84% in 2023."]
    assert misattributed("Globex reached 84% occupancy.", sources) == []
    rival = ["Globex employs 9.", "Initech reached 84% in 2023."]
    assert misattributed("Globex reached 84% occupancy.", rival) == ["Globex reached 84%"]


def test_a_pair_is_tied_within_one_clause_and_a_semicolon_ends_a_passage():
    # ", and" or "while" starts another statement: the 41% is not said of Globex.
    assert misattributed("Globex grew 12%, and costs were cut by 41%.") == []
    assert misattributed("Globex grew 12% while costs were cut by 41%.") == []
    assert misattributed("Globex grew 12% as costs were cut by 41%.") == [
        "Globex grew 12% as costs were cut by 41%"
    ]
    assert misattributed("Globex cut costs by 41%, and it grew 12%.") == ["Globex cut costs by 41%"]
    # "; Globex was shortlisted with Hooli": Hooli is no subject of the award's clause.
    sources = [
        "Cera Care won the HSJ Award; Globex was shortlisted with Hooli.",
        "Globex closed a Series B.",
    ]
    draft = "The HSJ Award went to Cera Care as Globex closed its Series B."
    assert misattributed(draft, sources) == []
    assert misattributed(draft, [sources[0].replace("; ", ", as "), sources[1]]) != []


def test_a_comparison_sets_another_subject_beside_the_sentence_s_own():
    sources = ["Globex grew 41% last year.", "Initech grew 12% last year."]
    assert misattributed("Globex grew 41%, against 12% for the sector.", sources) == []
    assert misattributed("Globex grew 41% and 12% in the sector.", sources) != []


def test_a_relative_clause_is_about_the_claim_just_before_it():
    text = "Globex uses Mews, which serves Accor, for 11 hotels."
    items = gate_context._claims(extract(text), SourceIndex([text]), set())
    at = {text[item.start : item.end]: k for k, item in enumerate(items)}
    relatives = gate_context._relatives(text, 0, len(text))

    def tied(a: str, b: str) -> bool:
        k = at[a]
        return gate_context._one_clause(items[k], items[at[b]], items[k + 1].start, relatives)

    assert tied("Mews", "Accor") and tied("Mews", "11") and tied("Globex", "11")
    assert not tied("Globex", "Accor")  # the clause is about Mews, the claim before it
    assert not tied("Accor", "11")  # nor is what follows the clause about Accor
    # The antecedent is tied to what the clause says of it.
    rival = ["Globex employs 9.", "Initech grew 41% last year."]
    assert misattributed("Globex, which grew 41%, is hiring.", rival) == ["Globex, which grew 41%"]


def test_one_passage_holding_both_ties_a_name_to_a_value_only_if_it_pins_it_on_no_other():
    case = ["Mercadona fitted 120 stores with Lumen panels, cutting their bills by 30%."]
    assert misattributed("Lumen cut its own bills by 30%.", case) == [
        "Lumen cut its own bills by 30%"
    ]
    assert misattributed("Mercadona cut its bills by 30% with Lumen.", case) == []
    # Where the passage says the value: the 120 is Mercadona's, before Lumen is named.
    assert misattributed("Mercadona's 120 stores", case) == []
    # A name in a relative clause is not whom the sentence's figure belongs to.
    diageo = ["Diageo, which owns Talisker, reported sales of £17 billion in 2023."]
    assert misattributed("Diageo reported £17 billion of sales.", diageo) == []


def test_the_reader_and_their_company_are_present_in_every_sentence():
    crm = "CRM: Ali Karimi <ali@fathom.example>, CEO at Fathom, Southampton."
    job = "BP used Fathom drones to inspect 400 km of pipeline in 2023."
    assert misattributed("BP's 400 km of pipeline", [crm, job]) == []
    # BP opens the source's clause: the 400 km are BP's whoever else it names.
    assert misattributed("BP's 400 km of pipeline", [job]) == []
    flown = "Fathom drones inspected 400 km of pipeline for BP in 2023."
    assert misattributed("BP's 400 km of pipeline", [flown]) == ["BP's 400"]  # Fathom's
    # A name after the figure is not given it: the reader's award stays the reader's.
    award = "Fathom won the 2024 Ocean Award from the Marine Institute."
    assert misattributed("Congratulations on the 2024 Ocean Award.", [crm, award]) == []
    # The reader's own figure given to someone else is still another subject's.
    own = "Fathom employs 70 people in Southampton."
    assert misattributed("Initech employs 70 people.", [crm, own, "Initech is a client."]) == [
        "Initech employs 70"
    ]


def test_a_figure_in_a_sentence_naming_no_one_is_said_of_the_reader_s_company():
    crm = "CRM: Hannah Okafor <hannah@ledgerline.io>, Head of Success at Ledgerline, Leeds."
    page = (
        "Research today:\nLedgerline grew to 310 companies in 2023.\n"
        "Its closest rival, Closewise, reported 600 customers at the end of 2023."
    )
    said = misattributed("Congratulations on reaching 600 customers.", [crm, page])
    assert said == ["Congratulations on reaching 600"]
    assert misattributed("Congratulations on reaching 310 companies.", [crm, page]) == []
    assert misattributed("We also reached 600 customers.", [crm, page]) == []  # the sender's
    assert misattributed("Congratulations on reaching 600 customers.", [page]) == []  # no CRM


def test_a_figure_no_other_subject_may_hold_is_passed_before_any_passage_is_indexed(monkeypatch):
    """`Passages.foreign` (a text test for a subject beside the reader's) changes no
    verdict: the same claims as when every figure naming no one is paired."""
    from evals.gate_fair import SENDER, fair_drafts
    from evals.gate_rivals import load

    cases = [(d.body, d.sources, (SENDER,)) for d in fair_drafts(n_contacts=6)]
    cases += [(r.body, r.sources, tuple(r.allow)) for r in load()]
    fast = [find_together(text, sources, allow=allow) for text, sources, allow in cases]
    monkeypatch.setattr(gate_context.Passages, "foreign", lambda self, present: True)
    plain = [find_together(text, sources, allow=allow) for text, sources, allow in cases]
    assert fast == plain
    assert sum(1 for claims in plain for c in claims if c.kind == "misattributed") > 20


def test_a_word_opening_before_a_name_an_indefinite_name_and_your_are_no_other_subject():
    crm = "CRM: Kofi Mensah <kofi@kobo.example>, CTO at Kobo Rails, Accra."
    # "Grocery chain Bukka Fresh": the name is the subject, not "Grocery".
    story = "Grocery chain Bukka Fresh cut failed checkouts by 26% with Kobo Rails."
    assert misattributed("Bukka Fresh cut failed checkouts by 26%.", [crm, story]) == []
    assert misattributed("Hooli cut failed checkouts by 26%.", [crm, story, "Hooli is big."]) != []
    # "a Fukuoka office" is what was opened, not who hires.
    office = "Kobo Rails opened a Fukuoka office in 2024 and is hiring 25 engineers there."
    assert misattributed("Are the 25 engineering roles new?", [crm, office]) == []
    # "your $75 million": the sentence gives the round to the reader's company.
    round_ = "Kobo Rails raised $75 million in a Series C, led by Puget Partners."
    assert misattributed("Puget Partners led your $75 million Series C.", [crm, round_]) == []
    assert misattributed("Puget Partners led a $75 million Series C.", [crm, round_]) != []


def test_the_crm_line_is_read_as_source_material_writes_it():
    from company_ai.core.crm import Contact
    from company_ai.core.outreach import source_material

    contact = Contact(1, "Ana Silva", "ana@globex.example", "Globex, Ltd", "Head at HQ", "Leeds")
    crm = gate_context._crm("\n".join(source_material(contact, "", [])))
    assert crm.company == ("Globex,", "Ltd")
    assert crm.names == {
        gate_names._name_key(["Ana", "Silva"]),
        gate_names._name_key(["Globex,", "Ltd"]),
    }
    nameless = dataclasses.replace(contact, company=None)
    assert gate_context._crm("\n".join(source_material(nameless, "", []))).company is None


# --- issue 28: who-did-what read by clause and subject ------------------------------------


def test_a_new_subject_starts_another_clause():
    case = [
        "Portfolio companies include Octavia Carbon, which raised $5 million in 2024.",
        "Heatpulse installs 600 heat pumps a month.",
        "Featherstone led Heatpulse's Series A.",
        "Fiona previously ran clinics at Fenland Animal Care. Yarrowby has 410 staff.",
    ]
    # Across clauses, each with its own subject: a fair paraphrase.
    assert misattributed("Octavia raised $5 million in 2024 and Heatpulse grew.", case) == []
    assert misattributed("Heatpulse installs 600 a month after Featherstone led.", case) == []
    fenland = "Having run clinics at Fenland Animal Care, you will know what matters to 410 staff."
    assert misattributed(fenland, case) == []
    # Within one clause the swap is still caught.
    assert misattributed("Octavia Carbon installs 600 heat pumps a month.", case) == [
        "Octavia Carbon installs 600"
    ]
    assert misattributed("Fenland Animal Care has 410 staff.", case) == [
        "Fenland Animal Care has 410"
    ]
    # A list of names sharing one verb is no new clause: "Topshop and ASOS gave…".
    shops = ["Saltmarsh sells through Topshop.", "Kelp Co sells through ASOS. Saltmarsh grew 40%."]
    assert misattributed("Selling through ASOS and Topshop grew Saltmarsh 40%.", shops) != []


def test_a_figure_is_its_source_clauses_subjects_whoever_else_it_names():
    ranked = ["Accountancy Age ranked Marlowe & Co 48th among UK firms."]
    assert misattributed("Marlowe & Co came 48th among UK firms.", ranked) == []
    # In a relative clause the figure is the name's before it, not the clause's subject's.
    partner = [
        "Quillstone announced a partnership with Docuverse, whose product is used by 9,000 firms."
    ]
    assert misattributed("Docuverse is used by 9,000 firms.", partner) == []
    assert misattributed("Quillstone is used by 9,000 firms.", partner) == [
        "Quillstone is used by 9,000"
    ]
    # A preposition's object is not who the figure after it belongs to.
    kpmg = ["James Marlowe previously worked at KPMG for 12 years.", "KPMG employs 3,000."]
    assert misattributed("KPMG kept staff for 12 years.", kpmg) == ["KPMG kept staff for 12"]


def test_a_figure_before_a_name_as_the_source_writes_it_is_tied():
    shares = ["Ofcom put its share at 9%, against 38% for BT and 21% for Virgin Media."]
    assert misattributed("Against 38% for BT, there is room to grow.", shares) == []
    assert misattributed("BT holds 21% of the market.", shares) == ["BT holds 21%"]


def test_two_prepositions_objects_are_not_tied_to_each_other():
    case = [
        "Basalto is building a warehouse for Hanil Energy in Saltillo.",
        "Basalto's steel comes from Aceros del Norte.",
        "Grupo Cimarron buys steel from Hanil Energy.",
    ]
    fair = "Basalto is building a warehouse for Hanil Energy with steel from Aceros del Norte."
    assert misattributed(fair, case) == []
    assert misattributed("From Hanil Energy to Aceros del Norte.", case) == []
    # A subject and its object still are: the source ties Aceros to Basalto.
    assert misattributed("Hanil Energy buys steel from Aceros del Norte.", case) != []
    # A possessor is no preposition's object: "on Sundara's factory in Erode" ties them.
    erode = ["Sundara has a factory in Tiruppur.", "Kaveri Knits opened a factory in Erode."]
    assert misattributed("Congratulations on Sundara's factory in Erode.", erode) != []


def test_a_name_after_a_preposition_or_an_ing_verb_is_no_figures_subject():
    crm = "CRM: Karen Doyle <karen@ridgeway.example>, COO at Ridgeway Hotels, Galway."
    case = [crm, "Ridgeway Hotels owns 11 hotels.", "Ridgeway uses booking software from Mews."]
    assert misattributed("Using Mews for 11 hotels gives you a base.", case) == []
    assert misattributed("Mews runs 11 hotels.", case) == ["Mews runs 11"]
