"""The vector memory's collections: what goes in, what a day's run touches, bad stores."""

import json
import shutil

import numpy as np
import pytest

from company_ai.core.brain import BrainDay, Fact, write_day
from company_ai.core.memory import append_episodes
from company_ai.core.store import transaction
from company_ai.core.times import Day
from company_ai.core.vectors import (
    EPISODES,
    KNOWLEDGE,
    MAX_EMBED_CHARS,
    Signals,
    Vector,
    VectorStoreError,
    fill_rows,
    nearest,
    open_existing,
    open_store,
    sync_episodes,
    sync_knowledge,
    vectors_dir,
    where_filter,
)
from company_ai.core.vectors.memories import Memory, SyncResult, embed_into
from company_ai.core.vectors.store import ARCHIVE
from tests.conftest import episode
from tests.fakes import WordEmbedder

BIG_CAP = 10_000


def add_episodes(stores, *rows):
    with stores.connect("memory") as conn:
        # Recorded as they happened: a day's sync reads what its window recorded.
        batch = [episode(**r, recorded_at=r["created_at"]) for r in rows]
        append_episodes(conn, batch, now="2026-12-01T00:00:00Z")


def sync(stores, embedder, day, what=EPISODES, **kw):
    sync_day = sync_episodes if what == EPISODES else sync_knowledge
    with open_store(vectors_dir(stores.data_dir), embedder.name, embedder.dim, **kw) as (
        store,
        opened,
    ):
        window = Day.of(day, "UTC")
        result = sync_day(store, opened, stores, embedder, window, cap=BIG_CAP, signals=Signals())
        return result, opened, {n: store.metadata(n) for n in (EPISODES, KNOWLEDGE, ARCHIVE)}


@pytest.fixture
def memory(stores):
    reply = {"contact_id": 7, "episode_type": "response", "source": "gmail"}
    add_episodes(
        stores,
        reply | {"content": "Asked about invoice pricing", "created_at": "2026-11-28T09:00:00Z"},
        {"contact_id": 8, "content": "Met at the Leeds meetup", "created_at": "2026-11-29T09:00Z"},
        reply
        | {"content": "Wants a call about the warehouse rota", "created_at": "2026-11-29T15:00Z"},
    )
    return stores


def test_a_first_run_builds_then_a_day_upserts_that_day_only(memory):
    words = WordEmbedder()
    first, opened, found = sync(memory, words, "2026-11-28")
    assert first.full_build and opened.created == {EPISODES, KNOWLEDGE, ARCHIVE}
    assert "did not exist: built from memory.db" in first.notes[0]
    assert set(found[EPISODES]) == {"episode:1"}, "a build goes up to its own day, no further"
    meta = found[EPISODES]["episode:1"]
    assert meta["ref"] == "memory.contact_episodes:1" and meta["day"] == "2026-11-28"
    assert (meta["contact_id"], meta["type"], meta["importance"]) == (7, "response", 4)
    assert meta["day_num"] == 20261128 and meta["source"] == "gmail"
    second, opened, found = sync(memory, words, "2026-11-29")
    assert not second.full_build and opened.created == set()
    assert second.embedded == 2 and set(found[EPISODES]) == {"episode:1", "episode:2", "episode:3"}
    calls = words.calls
    again, _, _ = sync(memory, words, "2026-11-29")
    with open_existing(vectors_dir(memory.data_dir)) as store:
        expected = {"telemetry": False, "embedding_functions": dict.fromkeys(found, None)}
        assert store.settings() == expected, "no network: our embeddings only, no telemetry"
    assert (again.embedded, again.unchanged) == (0, 2) and words.calls == calls


def test_no_text_is_stored_in_chroma_only_pointers(memory):
    sync(memory, WordEmbedder(), "2026-11-29")
    raw = b"".join(p.read_bytes() for p in vectors_dir(memory.data_dir).rglob("*") if p.is_file())
    assert b"memory.contact_episodes:3" in raw
    assert b"warehouse rota" not in raw


def test_a_replay_leaves_archived_vectors_in_the_archive(memory):
    words = WordEmbedder()
    sync(memory, words, "2026-11-29")
    path = vectors_dir(memory.data_dir)
    with open_store(path, words.name, words.dim) as (store, _):
        [moved] = store.vectors(EPISODES, ["episode:2"])
        store.upsert(ARCHIVE, [Vector(moved.id, moved.embedding, {**moved.meta, "x": 1})])
        store.delete(EPISODES, ["episode:2"])
    result, _, found = sync(memory, words, "2026-11-29")
    assert result.archived == 1 and "episode:2" not in found[EPISODES]


def test_a_deleted_store_is_rebuilt_from_the_stores(memory):
    words = WordEmbedder()
    sync(memory, words, "2026-11-28")
    sync(memory, words, "2026-11-29")
    shutil.rmtree(vectors_dir(memory.data_dir))
    result, opened, found = sync(memory, words, "2026-11-29")
    assert result.full_build and EPISODES in opened.created
    assert set(found[EPISODES]) == {"episode:1", "episode:2", "episode:3"}


@pytest.mark.parametrize("damage", ["sqlite", "index"])
def test_a_corrupted_store_is_removed_rebuilt_and_reported(memory, damage):
    words = WordEmbedder()
    sync(memory, words, "2026-11-28")
    with open_store(vectors_dir(memory.data_dir), words.name, words.dim) as (store, _):
        # enough vectors for Chroma to write its index files
        store.upsert(
            EPISODES,
            [
                Vector(f"x{i}", words.embed([f"w{i}"])[0], {"day": "2026-11-01"})
                for i in range(1200)
            ],
        )
    path = vectors_dir(memory.data_dir)
    targets = (
        [path / "chroma.sqlite3"]
        if damage == "sqlite"
        else [p for p in path.rglob("*") if p.is_file() and p.name != "chroma.sqlite3"]
    )
    assert targets
    for target in targets:
        target.write_bytes(b"not what chroma wrote" * 50)
    refused = pytest.raises(VectorStoreError, match="cannot be read.*episode_vectors run rebuilds")
    with refused, open_existing(path):
        pass
    result, opened, found = sync(memory, words, "2026-11-29")
    assert "could not be read" in opened.rebuilt and result.full_build
    assert set(found[EPISODES]) == {"episode:1", "episode:2", "episode:3"}


def test_another_model_or_dimension_rebuilds_the_store_once_never_mixed(memory):
    before = WordEmbedder(dim=16)
    sync(memory, before, "2026-11-29")
    for other in (WordEmbedder(dim=8), WordEmbedder(dim=16, name="test:other")):
        result, opened, found = sync(memory, other, "2026-11-29")
        assert f"held {before.name} ({before.dim}-d)" in opened.rebuilt
        assert f"not {other.name} ({other.dim}-d)" in opened.rebuilt
        assert result.full_build and set(found[EPISODES]) == {"episode:1", "episode:2", "episode:3"}
        with open_existing(vectors_dir(memory.data_dir)) as store:
            assert store.model(EPISODES) == (other.name, other.dim)
            assert store.count(EPISODES) == 3  # the old model's vectors are gone, not mixed
        before = other
    _, opened, _ = sync(memory, WordEmbedder(dim=16, name="test:other"), "2026-11-29")
    assert opened.rebuilt == ""  # the same model again: nothing is rebuilt


def test_empty_and_enormous_texts(memory):
    words = WordEmbedder()
    sync(memory, words, "2026-11-29")
    big = "budget " * 100_000
    result = SyncResult()
    with open_store(vectors_dir(memory.data_dir), words.name, words.dim) as (store, _):
        meta = {"kind": "fact", "ref": "r", "day": "2026-11-29", "base": 2, "importance": 2}
        memories = [
            Memory("fact:blank", " \n\t", meta),
            Memory("fact:big", big[:MAX_EMBED_CHARS], meta),
        ]
        embed_into(store, KNOWLEDGE, memories, words, result)
        assert (result.empty, result.embedded) == (1, 1)
        assert set(store.metadata(KNOWLEDGE)) == {"fact:big"}
    add_episodes(memory, {"content": big[:50_000], "created_at": "2026-11-30T08:00:00Z"})
    sync(memory, words, "2026-11-30")
    with open_existing(vectors_dir(memory.data_dir)) as store:
        [hit] = nearest(store, words.embed(["budget"])[0], [EPISODES], 1)
        assert hit.id == "episode:4"


def test_the_real_model_takes_enormous_and_non_english_text(memory, minilm):
    texts = [
        ("2026-11-30T08:00:00Z", "Kunde möchte die Rechnung für März noch einmal erhalten."),
        ("2026-11-30T08:01:00Z", "顧客は来週の会議で価格について話したいと言っています。"),
        ("2026-11-30T08:02:00Z", "The shipment left the depot. " * 1600),
    ]
    add_episodes(memory, *({"content": t, "created_at": at} for at, t in texts))
    sync(memory, minilm, "2026-11-30")
    with open_existing(vectors_dir(memory.data_dir)) as store:
        assert store.model(EPISODES) == (minilm.name, minilm.dim)
        for n, (_, text) in enumerate(texts, 4):
            [hit] = nearest(store, minilm.embed([text[:MAX_EMBED_CHARS]])[0], [EPISODES], 1)
            assert hit.id == f"episode:{n}" and hit.score > 0.99


def knowledge_day(stores, day, facts):
    brain = BrainDay(
        day=day, facts=[Fact(k, "sent", text, 4, ("x",), about) for k, text, about in facts]
    )
    with stores.connect("brain") as conn:
        write_day(conn, day, brain)


def test_knowledge_holds_the_days_facts_and_a_resynthesis_drops_the_ones_gone(stores):
    words = WordEmbedder()
    knowledge_day(stores, "2026-11-28", [("a", "Sent the pricing note", "contact:7")])
    knowledge_day(
        stores, "2026-11-29", [("b", "Sent the rota", "contact:7"), ("c", "Sent a map", None)]
    )
    _, _, found = sync(stores, words, "2026-11-29", KNOWLEDGE)
    assert set(found[KNOWLEDGE]) == {"fact:2026-11-28/a", "fact:2026-11-29/b", "fact:2026-11-29/c"}
    meta = found[KNOWLEDGE]["fact:2026-11-29/b"]
    assert (meta["ref"], meta["contact_id"], meta["importance"]) == (
        "brain.facts:2026-11-29/b", 7, 4
    )  # fmt: skip
    assert "contact_id" not in found[KNOWLEDGE]["fact:2026-11-29/c"]
    knowledge_day(stores, "2026-11-29", [("b", "Sent the rota again", "contact:7")])
    result, _, found = sync(stores, words, "2026-11-29", KNOWLEDGE)
    assert result.removed == 1 and result.embedded == 1
    assert set(found[KNOWLEDGE]) == {"fact:2026-11-28/a", "fact:2026-11-29/b"}


def test_similar_filters_and_reads_text_from_the_rows(memory):
    words = WordEmbedder()
    sync(memory, words, "2026-11-29")
    with memory.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, source, created_at, updated_at)"
            " VALUES (7, 'ada@example.com', 'Ada', 'test', 'x', 'x')"
        )
    query = words.embed(["warehouse rota call"])[0]
    with open_existing(vectors_dir(memory.data_dir)) as store:
        everything = nearest(store, query, [EPISODES, KNOWLEDGE], 10)
        assert [h.id for h in everything][0] == "episode:3" and len(everything) == 3
        assert everything[0].score >= everything[1].score >= everything[2].score
        by_contact = nearest(store, query, [EPISODES], 10, where_filter(contact_id=8))
        assert [h.id for h in by_contact] == ["episode:2"]
        by_type = nearest(store, query, [EPISODES], 10, where_filter(type_="note"))
        assert [h.id for h in by_type] == ["episode:2"]
        window = where_filter(since="2026-11-29", until="2026-11-29", type_="response")
        assert [h.id for h in nearest(store, query, [EPISODES], 10, window)] == ["episode:3"]
        assert nearest(store, query, [EPISODES], 10, where_filter(until="2026-11-27")) == []
    fill_rows(memory, everything)
    assert everything[0].text == "Wants a call about the warehouse rota"
    assert everything[0].contact == "Ada <ada@example.com>"
    with pytest.raises(ValueError, match="unknown type 'gossip'"):
        where_filter(type_="gossip")
    assert json.dumps(where_filter()) == "null"


def test_a_reader_waits_for_a_writer_then_says_so(memory, monkeypatch):
    import company_ai.core.vectors.store as vectors

    words = WordEmbedder()
    sync(memory, words, "2026-11-29")
    monkeypatch.setattr(vectors, "READ_WAIT_S", 0.3)
    path = vectors_dir(memory.data_dir)
    refused = pytest.raises(VectorStoreError, match="is being written.*try again")
    with open_store(path, words.name, words.dim), refused, open_existing(path):
        pass
    with open_existing(path) as store, open_existing(path) as again:  # readers share
        assert store.count(EPISODES) == again.count(EPISODES) == 3


def contact_store(path, rng):
    """A store of 60 random vectors over three contacts (20 each, types alternating)."""
    vectors = rng.standard_normal((60, 8)).astype(np.float32)
    rows = [
        Vector(
            f"episode:{i}",
            vectors[i],
            {"kind": "episode", "ref": f"memory.contact_episodes:{i}", "day": "2026-11-29"}
            | {"day_num": 20261129, "type": ("note", "response")[i % 2], "importance": 3}
            | {"contact_id": 1 + i % 3},
        )
        for i in range(60)
    ]
    with open_store(path, "test:random-8", 8) as (store, _):
        store.upsert(EPISODES, rows)
    return vectors


def exact_top(vectors, query, chosen, limit):
    scores = {
        i: float(vectors[i] @ query / np.linalg.norm(vectors[i]) / np.linalg.norm(query))
        for i in chosen
    }
    return sorted(scores.items(), key=lambda kv: -kv[1])[:limit]


def test_a_contact_filter_is_answered_exactly_from_that_contacts_vectors(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    path = tmp_path / "vectors"
    vectors = contact_store(path, rng)
    query = rng.standard_normal(8).astype(np.float32)
    with open_existing(path) as store:

        def no_index(*args, **kwargs):
            raise AssertionError("a contact filter must not search the index")

        monkeypatch.setattr(store, "query", no_index)
        hits = nearest(store, query, [EPISODES], 5, where_filter(contact_id=2))
        want = exact_top(vectors, query, range(1, 60, 3), 5)
        assert [h.id for h in hits] == [f"episode:{i}" for i, _ in want]
        assert [h.score for h in hits] == pytest.approx([s for _, s in want], abs=1e-5)
        assert all(h.contact_id == 2 for h in hits)
        both = nearest(store, query, [EPISODES], 50, where_filter(contact_id=2, type_="note"))
        assert sorted(h.id for h in both) == sorted(f"episode:{i}" for i in range(4, 60, 6))
        assert nearest(store, query, [EPISODES], 5, where_filter(contact_id=99)) == []


def test_a_filter_matching_more_than_the_exact_limit_uses_the_index(tmp_path, monkeypatch):
    import company_ai.core.vectors.store as vectors_module

    rng = np.random.default_rng(4)
    path = tmp_path / "vectors"
    vectors = contact_store(path, rng)
    query = rng.standard_normal(8).astype(np.float32)
    monkeypatch.setattr(vectors_module, "EXACT_MAX", 19)  # each contact has 20
    with open_existing(path) as store:
        assert store.nearest_exact(EPISODES, query, 5, {"contact_id": 1}) is None
        hits = nearest(store, query, [EPISODES], 5, where_filter(contact_id=1))
    want = exact_top(vectors, query, range(0, 60, 3), 5)
    assert [h.id for h in hits] == [f"episode:{i}" for i, _ in want]


def test_index_settings_new_collections_and_a_collection_built_with_older_ones(tmp_path):
    from company_ai.core.vectors.store import HNSW, _client, _forget_clients

    path = tmp_path / "vectors"
    with open_store(path, "test:random-8", 8) as (store, _):
        assert {k: store.index_settings(EPISODES)[k] for k in HNSW} == HNSW
    older = tmp_path / "older"
    _forget_clients()
    client = _client(older)
    built_before = {"space": "cosine", "ef_construction": 200, "ef_search": 100}
    collection = client.create_collection(
        EPISODES,
        embedding_function=None,
        metadata={"model": "test:random-8", "dim": 8, "build": "complete"},
        configuration={"hnsw": built_before | {"max_neighbors": 16}},
    )
    collection.upsert(ids=["episode:1"], embeddings=np.ones((1, 8), dtype=np.float32))
    _forget_clients()
    with open_store(older, "test:random-8", 8) as (store, opened):
        assert not opened.rebuilt and EPISODES not in opened.created
        assert store.count(EPISODES) == 1 and store.built(EPISODES)
        settings = store.index_settings(EPISODES)
        assert settings["ef_construction"] == 200  # fixed at creation: kept
        assert settings["ef_search"] == HNSW["ef_search"]  # a query setting: brought up
    with open_existing(older) as store:
        assert store.index_settings(EPISODES)["ef_search"] == HNSW["ef_search"]
