"""The read side of the vault: hybrid retrieval (full text and dense vectors, fused)
over `recall.db`, the answers, pages and stale pages it gives, and its evaluation."""

from company_ai.core.recall.answers import (
    PAGES_MARK,
    STALE_CATEGORIES,
    EmptyIndexError,
    answer_json,
    ask,
    count_stale,
    index_entities,
    open_searcher,
    page_markdown,
    read_mark,
    recall,
    render_answer,
    set_mark,
    stale_pages,
)
from company_ai.core.recall.retrieval import Searcher, WarmIndex, index_model, replace_docs
from company_ai.core.recall.retrieval_eval import evaluate_beir, evaluate_recall, render

__all__ = [
    "PAGES_MARK",
    "STALE_CATEGORIES",
    "EmptyIndexError",
    "Searcher",
    "WarmIndex",
    "answer_json",
    "ask",
    "count_stale",
    "evaluate_beir",
    "evaluate_recall",
    "index_entities",
    "index_model",
    "open_searcher",
    "page_markdown",
    "read_mark",
    "recall",
    "render",
    "render_answer",
    "replace_docs",
    "set_mark",
    "stale_pages",
]
