import numpy as np
import pytest

from company_ai.core.recall import Searcher
from company_ai.core.recall.retrieval import (
    Doc,
    IndexModelMismatch,
    rebuild_docs,
    rrf,
    update_vectors,
)
from company_ai.core.store import transaction

DOCS = [
    Doc("1", "Billing Platform", "issues every invoice and collects card payments"),
    Doc("2", "Support Rota", "who answers client tickets out of hours"),
    Doc("3", "Pricing Policy", "monthly and annual plans, discounts need the founders"),
]


class Counting:
    """Wraps an embedder and counts the texts it was asked to embed."""

    def __init__(self, inner, name=None):
        self.inner, self.texts = inner, []
        self.name, self.dim = name or inner.name, inner.dim

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)


@pytest.fixture
def build(stores, request):
    """`build(embedder)`: the recall store of `DOCS` with their vectors, closed after."""

    def built(embedder, docs=DOCS):
        conn = stores.open("recall")
        request.addfinalizer(conn.close)
        with transaction(conn):
            rebuild_docs(conn, docs)
        update_vectors(conn, embedder)
        return conn

    return built


def test_rrf_sums_reciprocal_ranks_with_k_60():
    fused = rrf([["a", "b", "c"], ["c", "a"]])
    assert fused == ["a", "c", "b"]
    assert rrf([["x"]], k=60) == ["x"]


def test_keyword_dense_and_hybrid_find_the_right_document(build, minilm):
    conn = build(minilm)
    searcher = Searcher(conn, minilm)
    assert searcher.keyword("invoices")[0] == "1"  # porter stemming
    assert searcher.dense_only("who is on call at night?")[0] == "2"
    assert searcher.hybrid("how much can we discount the annual plan")[0] == "3"
    assert searcher.keyword("") == [] and searcher.keyword('"; DROP TABLE') == []


def test_unchanged_documents_are_never_embedded_twice(build, stores, minilm):
    counting = Counting(minilm)
    conn = build(counting)
    assert len(counting.texts) == 3
    changed = [*DOCS[:2], Doc("3", "Pricing Policy", "prices rise every April")]
    with transaction(conn):
        rebuild_docs(conn, changed)
    assert update_vectors(conn, counting) == 1
    assert counting.texts[-1].endswith("prices rise every April")
    assert conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0] == 3


def test_two_models_are_never_mixed_in_one_index(build, stores, minilm):
    conn = build(minilm)
    other = Counting(minilm, name="another-model")
    with pytest.raises(IndexModelMismatch, match="use the same model"):
        Searcher(conn, other)
    logs = []
    # Another model's index is embedded again whole, and says so; then nothing more.
    assert update_vectors(conn, other, log=logs.append) == 3 and len(other.texts) == 3
    assert logs == [
        "the index holds all-MiniLM-L6-v2-onnx-int8 (384-d) vectors, not another-model "
        "(384-d): every document is embedded again with another-model"
    ]
    assert conn.execute("SELECT value FROM search_meta WHERE key = 'model'").fetchone()[0] == (
        "another-model"
    )
    assert conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0] == 3
    assert update_vectors(conn, other) == 0
    Searcher(conn, other)  # the index is now wholly the other model's


def test_dense_search_is_exact_cosine(build, stores, minilm):
    conn = build(minilm)
    searcher = Searcher(conn, minilm)
    query = minilm.embed(["card payments for invoices"])[0]
    expected = np.argsort(-(searcher.dense.matrix @ query))
    assert searcher.dense.search(query) == [searcher.dense.keys[i] for i in expected]
