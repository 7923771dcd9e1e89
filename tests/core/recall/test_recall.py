from datetime import UTC, datetime

import pytest

from company_ai.core.recall import (
    Searcher,
    evaluate_recall,
    index_entities,
    page_markdown,
    recall,
    render_answer,
    stale_pages,
)
from company_ai.core.recall.retrieval_eval import sample_questions
from company_ai.core.vault import distill_staging, offline_page, stage_vault

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def recall_data(tmp_path_factory, minilm):
    """The data directory of the sample vault staged, distilled offline and indexed once
    for this module."""
    from company_ai.core.store import Stores
    from tests.conftest import SAMPLE_VAULT, fixed_clock

    root = tmp_path_factory.mktemp("recall")
    stage_vault(SAMPLE_VAULT, root / "staging", day="2026-11-29")
    with Stores(root / "data").connect("recall") as conn:
        distill_staging(
            conn, str(root / "staging"), day="2026-11-29",
            distill=lambda t, p, x: offline_page(p, x), source="model:offline",
            clock=fixed_clock(),
        )  # fmt: skip
        index_entities(conn, minilm)
    return root / "data"


@pytest.fixture(scope="module")
def recall_conn(recall_data):
    from company_ai.core.store import Stores

    with Stores(recall_data).connect("recall") as conn:
        yield conn


def ask(conn, minilm, question, **kw):
    return recall(conn, Searcher(conn, minilm), question, now=NOW, max_age_days=90, **kw)


def test_recall_answers_with_pages_provenance_dates_and_the_neighbourhood(recall_conn, minilm):
    answer = ask(recall_conn, minilm, "Who is the main contact at Signalcrest?", limit=3)
    assert answer.hits[0].title == "Elena Voss"
    assert answer.hits[0].derived_from == "people/elena-voss.md"
    assert ("part_of", "out", "Signalcrest", True) in answer.neighbourhood
    text = render_answer(answer)
    assert text.count("as of 2026-11-29") == 3
    assert "derived from: people/elena-voss.md" in text
    assert "Elena Voss part_of Signalcrest" in text


def test_the_neighbourhood_walks_relations_both_ways(recall_conn, minilm):
    answer = ask(recall_conn, minilm, "Billing Platform invoices ledger", limit=1)
    assert answer.hits[0].title == "Billing Platform"
    around = {(r, d, t) for r, d, t, _ in answer.neighbourhood}
    assert ("depends_on", "out", "Data Warehouse") in around
    assert ("maintains", "in", "Ada Okafor") in around
    assert ("part_of", "in", "Invoice Migration") in around


def test_stale_pages_are_listed_and_marked(recall_conn, minilm):
    stale = stale_pages(recall_conn, NOW, 90)
    assert [p.title for p in stale] == ["Warehouse Cost Cut", "Q1 Outreach Campaign",
                                        "Harbor Logistics"]  # fmt: skip
    assert stale[0].note_touched == "2025-08-14" and stale[0].age_days == 473
    assert {c for p in stale for c, _ in p.observations} == {"status", "goal"}
    assert stale_pages(recall_conn, NOW, 1000) == []
    answer = ask(recall_conn, minilm, "How are we reducing the warehouse bill?", limit=3)
    marks = {hit.title: hit.stale for hit in answer.hits}
    assert marks["Warehouse Cost Cut"] is True and marks["Data Warehouse"] is False
    assert "[STALE: review]" in render_answer(answer)


def test_a_page_is_printed_by_title_case_insensitively(recall_conn):
    assert page_markdown(recall_conn, "ben harlow").startswith('---\ntitle: "Ben Harlow"')
    with pytest.raises(LookupError, match="no recall page titled 'Nobody'"):
        page_markdown(recall_conn, "Nobody")


def test_hybrid_beats_keyword_on_the_sample_vault_questions(recall_conn, minilm):
    queries, qrels = sample_questions()
    assert len(queries) >= 40
    titles = {r[0] for r in recall_conn.execute("SELECT title FROM entities")}
    assert {t for answer in qrels.values() for t in answer} <= titles
    results = evaluate_recall(recall_conn, minilm)
    assert results["hybrid"]["ndcg@10"] > results["keyword"]["ndcg@10"]


def test_the_morning_brief_lists_the_stale_pages_for_review(recall_conn, recall_data):
    from datetime import timedelta

    from company_ai.core.ops import BriefInput, build_brief
    from company_ai.core.store import Stores

    data = recall_data
    stale = stale_pages(recall_conn, NOW, 90)
    assert stale, "the sample vault has status lines older than 90 days"
    brief = build_brief(BriefInput(Stores(data), NOW - timedelta(days=1), NOW, [], 90))
    assert f"Stale recall pages to review:\n  {len(stale)}" in brief
    assert f"{stale[0].title} ({stale[0].derived_from}" in brief
    fresh = build_brief(BriefInput(Stores(data), NOW - timedelta(days=1), NOW, [], 100_000))
    assert "Stale recall pages to review:\n  0" in fresh
