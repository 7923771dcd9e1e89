"""The store read from its own files (`vectors.reader`) gives what Chroma's query gives:
vectors still in the log, vectors in the index files, later changes, deletions, erasures."""

import numpy as np
import pytest

from company_ai.core.vectors import EPISODES, Vector, erase, open_existing, open_store
from company_ai.core.vectors.reader import StoreReader, UnreadableStore, best
from company_ai.core.vectors.store import SYNC_THRESHOLD

DIM = 16


def vectors(rng, ids, contact=lambda i: i % 5):
    return [
        Vector(
            f"episode:{i}",
            rng.normal(size=DIM).astype(np.float32),
            {"kind": "episode", "ref": f"memory.contact_episodes:{i}", "day": "2026-11-01",
             "day_num": 20261101 + i % 20, "type": "note", "importance": 2,
             "contact_id": contact(i)},
        )
        for i in ids
    ]  # fmt: skip


def write(path, **change):
    with open_store(path, "test-model", DIM) as (store, _):
        if "upsert" in change:
            store.upsert(EPISODES, change["upsert"])
        if "delete" in change:
            store.delete(EPISODES, change["delete"])


def agree(path, rng, queries=15, limit=10, where=None, parts=()):
    """Chroma's answer and the reader's for random queries: the same ids, the same scores."""
    with StoreReader(path).reading() as snapshot:
        loaded = snapshot.load(EPISODES)
        mask = snapshot.allowed(loaded, list(parts))
    with open_existing(path) as store:
        assert store.count(EPISODES) == len(loaded.ids)
        for _ in range(queries):
            query = rng.normal(size=DIM).astype(np.float32)
            theirs = store.query(EPISODES, query, limit, where)
            mine = best(loaded, query, limit, mask)
            assert [i for i, *_ in theirs] == [i for i, _ in mine]
            assert np.allclose([s for _, s, _ in theirs], [s for _, s in mine], atol=1e-5)
    return loaded


def test_vectors_only_in_the_log_are_read(tmp_path):
    rng = np.random.default_rng(1)
    write(tmp_path / "v", upsert=vectors(rng, range(60)))
    loaded = agree(tmp_path / "v", rng)
    assert len(loaded.ids) == 60


def test_index_files_then_later_upserts_updates_and_deletes_in_the_log(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "v"
    write(path, upsert=vectors(rng, range(SYNC_THRESHOLD + 200)))  # reaches the files
    agree(path, rng)
    # Fewer than the sync threshold: these stay in the log, over the files' vectors.
    write(path, upsert=vectors(rng, [*range(40), *range(5000, 5030)]))
    write(path, delete=[f"episode:{i}" for i in range(40, 70)])
    write(path, upsert=vectors(rng, range(45, 50)))  # deleted, then back
    loaded = agree(path, rng)
    assert len(loaded.ids) == SYNC_THRESHOLD + 200 + 30 - 30 + 5
    assert "episode:42" not in set(loaded.ids) and "episode:47" in set(loaded.ids)


def test_filters_select_the_same_vectors_as_chromas_where(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "v"
    write(path, upsert=vectors(rng, range(1500)))
    write(path, upsert=vectors(rng, range(1500, 1600)))
    both = [("contact_id", "=", 2), ("day_num", ">=", 20261105)]
    where = {"$and": [{"contact_id": 2}, {"day_num": {"$gte": 20261105}}]}
    agree(path, rng, where=where, parts=both)
    agree(path, rng, where={"day_num": {"$lte": 20261103}}, parts=[("day_num", "<=", 20261103)])


def test_erased_vectors_are_gone_from_the_reader_too(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "v"
    write(path, upsert=vectors(rng, range(1200)))
    gone = {f"episode:{i}" for i in range(1200) if i % 5 == 3}
    erase(path, lambda store: {EPISODES: gone})
    loaded = agree(path, rng)
    assert not gone & set(loaded.ids) and len(loaded.ids) == 1200 - len(gone)


def test_a_kept_collection_is_read_again_only_after_a_write(tmp_path):
    rng = np.random.default_rng(5)
    path = tmp_path / "v"
    write(path, upsert=vectors(rng, range(30)))
    reader = StoreReader(path)
    with reader.reading() as snapshot:
        first = snapshot.load(EPISODES)
    with reader.reading() as snapshot:
        assert snapshot.load(EPISODES) is first
    write(path, upsert=vectors(rng, [3]))
    with reader.reading() as snapshot:
        again = snapshot.load(EPISODES)
    assert again is not first and not np.array_equal(again.matrix, first.matrix)


def test_files_it_does_not_know_are_refused_not_guessed(tmp_path):
    rng = np.random.default_rng(6)
    path = tmp_path / "v"
    write(path, upsert=vectors(rng, range(1100)))
    [segment] = [p for p in path.iterdir() if (p / "header.bin").is_file()]
    (segment / "index_metadata.pickle").write_bytes(b"cos\nsystem\n(S'true'\ntR.")
    with StoreReader(path).reading() as snapshot, pytest.raises(UnreadableStore, match="refused"):
        snapshot.load(EPISODES)
