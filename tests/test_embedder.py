from pathlib import Path

import numpy as np
import pytest

import company_ai
from company_ai.core.embedding import (
    MINILM_DIM,
    MINILM_NAME,
    QUICK_TEXTS,
    EmbedderError,
    MiniLM,
    minilm_files,
)
from company_ai.resources.embedder import Embedder
from tests.fakes import FakeServer, Reply, ollama_embed


def test_the_offline_model_is_a_real_semantic_model(minilm):
    vectors = minilm.embed(
        ["Who writes the invoice code?", "the billing engineer", "a recipe for lentil soup"]
    )
    assert vectors.shape == (3, MINILM_DIM) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > unrelated + 0.2
    assert minilm.name == MINILM_NAME and minilm.dim == 384


def test_a_text_embeds_the_same_alone_and_in_a_padded_batch(minilm):
    alone = minilm.embed(["short"])[0]
    batched = minilm.embed(["a much longer sentence that forces padding of the short one", "short"])
    assert np.allclose(alone, batched[1], atol=1e-4)


def test_a_process_embedding_few_single_texts_opens_only_an_unoptimised_session():
    model = MiniLM(*minilm_files())
    assert model._sessions == {}  # nothing opened until there is a text
    first = model.embed(["Ada joined in March 2023"])[0]
    assert list(model._sessions) == [False]  # a query or one edited page: no optimising
    for _ in range(QUICK_TEXTS):
        later = model.embed(["Ada joined in March 2023"])[0]
    assert list(model._sessions) == [False, True]  # then it pays to optimise
    assert np.allclose(first, later, atol=1e-5)
    model.embed(["one", "two"])  # a batch: the same optimised session, on every core
    assert list(model._sessions) == [False, True]


def test_batches_run_side_by_side_and_each_vector_lands_at_its_text(minilm):
    texts = [f"note {i}: " + "the supplier review moved again " * (i % 7) for i in range(41)]
    assert minilm.workers >= 1 and len(texts) > 2 * minilm.batch_size
    together = minilm.embed(texts)
    alone = np.stack([minilm.embed([text])[0] for text in texts])
    assert np.allclose(together, alone, atol=1e-4)
    assert len({round(float(v[0]), 5) for v in together}) > 30  # not one vector repeated


def test_a_wrong_model_file_is_refused(tmp_path):
    _, tokenizer = minilm_files()
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    with pytest.raises(EmbedderError, match="not the pinned"):
        MiniLM(fake, tokenizer)


def test_a_tokenizer_other_than_the_shipped_one_is_refused(tmp_path):
    model, tokenizer = minilm_files()
    assert tokenizer.parent == Path(company_ai.__file__).parent / "minilm"
    edited = tmp_path / "tokenizer.json"  # still a valid tokenizer, one token renamed
    edited.write_text(tokenizer.read_text().replace('"[UNK]"', '"[UNKNOWN]"', 1))
    with pytest.raises(EmbedderError, match="tokenizer.json is not the pinned"):
        MiniLM(model, edited)


def test_the_english_model_is_the_minilm_backend(minilm):
    assert Embedder(backend="minilm").embedder is minilm
    assert Embedder().embedder is not minilm  # the default is multilingual


def test_ollama_bge_m3_is_asked_through_api_embed_and_normalised():
    with FakeServer() as server:
        server.script("/api/embed", Reply(ollama_embed([[3.0, 4.0] + [0.0] * 1022] * 2)))
        embedder = Embedder(backend="ollama", host=server.url).embedder
        vectors = embedder.embed(["eins", "zwei"])
        path, request = server.requests[0]
        assert path == "/api/embed" and request["model"] == "bge-m3"
        assert request["input"] == ["eins", "zwei"]
        assert vectors.shape == (2, 1024) and np.isclose(vectors[0][0], 0.6)
        assert embedder.name == "ollama:bge-m3" and embedder.dim == 1024


def test_ollama_vectors_of_the_wrong_size_or_an_error_are_clear_errors():
    with FakeServer() as server:
        server.script("/api/embed", Reply(ollama_embed([[1.0, 0.0]])))
        embedder = Embedder(backend="ollama", host=server.url).embedder
        with pytest.raises(EmbedderError, match=r"shape \(1, 2\), expected \(1, 1024\)"):
            embedder.embed(["x"])
        server.script("/api/embed", Reply({"error": "model not found"}, status=404))
        with pytest.raises(EmbedderError, match="model not found"):
            embedder.embed(["x"])
