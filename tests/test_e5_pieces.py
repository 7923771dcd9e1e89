"""The e5 tokenizer of short texts (pure Python, for the read path) gives the very ids of
the `tokenizers` Unigram model it stands in for; its vocabulary cache is never trusted
when damaged or stale."""

import random
from pathlib import Path

import pytest

from company_ai.core import e5
from company_ai.core.embedding import e5_file

HOSTILE = [
    "",
    " ",
    "   \t\n  ",
    "a",
    "Hello, world! Follow up on pricing next week.",
    "Bonjour, pouvez-vous m'envoyer le devis avant vendredi ?",
    "Grüße aus München – Straße, Maß, Öl",
    "Привет, как дела? Отправьте счёт, пожалуйста.",
    "こんにちは、来週の会議について確認させてください。",
    "你好，请把价格表发给我。",
    "مرحبا، هل يمكنك إرسال الفاتورة؟",
    "שלום, מה שלומך?",
    "नमस्ते, कृपया चालान भेजें।",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "paypal раураl ΡayΡal",  # Latin, Cyrillic and Greek look-alikes
    "e\u0301 é \u00e9 ﬁ ﬂ Å Å",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "tabs\tand\u00a0nbsp\u2003em\u3000ideographic",
    "emoji 👍🏽 👨‍👩‍👧 🇫🇷",
    "\U0001d54f\U0001d550 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U000e0041 \uffff \ue000",
    "<unk> <s> </s> ▁▁ ▁x",
    "a" * 600,
    "word " * 800,
    "nul\0after the nul",
]


@pytest.fixture(scope="module")
def model():
    return e5.E5Model(e5_file().read_bytes(), cache_key=None)


def rust_ids(model, texts, query=False):
    saved = e5.SHORT_TEXT
    e5.SHORT_TEXT = -1  # every text through the `tokenizers` model
    try:
        return model.token_ids(texts, query=query)
    finally:
        e5.SHORT_TEXT = saved


def random_texts(n):
    rng = random.Random(30)
    alphabet = [chr(c) for c in range(32, 0x250)] + list("ßøπжשثह日本語한글😀 \t\n\u00a0")
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(n)]


@pytest.mark.parametrize("query", [False, True])
def test_short_texts_get_the_rust_models_ids(model, query):
    texts = HOSTILE + random_texts(300)
    assert model.token_ids(texts, query=query) == rust_ids(model, texts, query=query)


def test_the_sample_lines_get_the_same_ids(model):
    import company_ai

    root = Path(company_ai.__file__).parent / "sample_vault"
    lines = [
        line
        for path in sorted(root.rglob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ][:2000]
    assert lines
    assert model.token_ids(lines) == rust_ids(model, lines)


def test_long_texts_go_through_tokenizers(model):
    text = "pricing " * 1000  # over SHORT_TEXT
    ids = model.token_ids([text])[0]
    assert model._rust is not None
    assert ids == rust_ids(model, [text])[0]


def test_the_cache_is_used_and_a_bad_one_rebuilt(tmp_path, monkeypatch, model):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    data = e5_file().read_bytes()
    key = "ab" * 32
    texts = HOSTILE[:12]
    want = model.token_ids(texts)
    first = e5.E5Model(data, cache_key=key)
    (cache,) = (tmp_path / "company_ai").glob("e5-*-pieces-v1.bin")
    assert first.token_ids(texts) == want
    assert e5.E5Model(data, cache_key=key).token_ids(texts) == want  # read back
    good = cache.read_bytes()
    for bad in (
        good[:1000],  # cut
        good[:5000] + bytes([good[5000] ^ 1]) + good[5001:],  # one bit flipped
        b"\0" * 32 + good[32:],  # another tokenizer's digest: stale
        b"",
    ):
        cache.write_bytes(bad)
        assert e5.E5Model(data, cache_key=key).token_ids(texts) == want
        assert cache.read_bytes() == good  # rebuilt
