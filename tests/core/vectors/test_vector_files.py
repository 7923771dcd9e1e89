"""What Chroma's index files keep: nothing past their elements in use, and nothing of a vector
`erase` removed, whether the collection's changes had reached the files or not."""

import pickle

import numpy as np
import pytest

from company_ai.core.vectors import (
    EPISODES,
    KNOWLEDGE,
    Vector,
    VectorStore,
    VectorStoreError,
    erase,
    open_existing,
    open_store,
)
from company_ai.core.vectors import store as vectors_module
from company_ai.core.vectors.store import ERASING, SYNC_THRESHOLD, _id_map, _layout, _segments

DIM = 16
CANARY = b"Zorblat Quindlewick <zq@canary.example>"


def build(path, count, seed=0):
    rng = np.random.default_rng(seed)
    vectors = {key(i): rng.standard_normal(DIM).astype(np.float32) for i in range(count)}
    with open_store(path, "test:random", DIM) as (store, _):
        store.upsert(EPISODES, [Vector(k, v, {"contact_id": 1}) for k, v in vectors.items()])
        store.upsert(KNOWLEDGE, [Vector("fact:1", vectors[key(0)], {"day": 1})])
    return vectors


def key(i):
    return f"episode:{i:05d}"  # no id inside another, so a byte search finds only its own


def index_bytes(path):
    return b"".join(p.read_bytes() for p in _segments(path)[EPISODES].iterdir() if p.is_file())


def stored_vectors(path):
    """Every vector in the index file, deleted ones too (as hnswlib stores them: unit length)."""
    segment = _segments(path)[EPISODES]
    layout = _layout(segment)
    if layout is None or layout.count == 0:
        return np.zeros((0, DIM), dtype=np.float32)
    data = np.frombuffer((segment / "data_level0.bin").read_bytes(), dtype=np.uint8)
    rows = data[: layout.count * layout.size].reshape(layout.count, layout.size)
    return rows[:, layout.vector : layout.label].copy().view(np.float32)


def unit(vector):
    return vector / np.linalg.norm(vector)


# 300: every change still in Chroma's log, the files empty; 1,500: the files written.
@pytest.mark.parametrize("count", [300, 1500])
def test_an_erased_vector_leaves_no_embedding_id_or_answer_behind(tmp_path, count):
    path = tmp_path / "vectors"
    vectors = build(path, count)
    doomed = [key(5), key(6), key(count - 1)]
    removed = erase(path, lambda store: {EPISODES: doomed, KNOWLEDGE: []})
    assert removed == {EPISODES: sorted(doomed)}
    held, stored = index_bytes(path), stored_vectors(path)
    assert len(stored) in (0, count)  # the files empty, or every element (deleted ones too)
    for vid in doomed:
        assert vid.encode() not in held
        assert not (stored @ unit(vectors[vid]) > 0.999).any()
    survivor = unit(vectors[key(4)])
    assert len(stored) == 0 or (stored @ survivor > 0.999).sum() == 1
    with open_existing(path) as store:
        assert store.count(EPISODES) == count - 3
        assert store.index_settings(EPISODES)["sync_threshold"] == SYNC_THRESHOLD
        for vid in doomed:
            assert vid not in [hit[0] for hit in store.query(EPISODES, vectors[vid], 3)]
        for vid in (key(4), key(7), key(count - 2)):  # the rest still found
            assert store.query(EPISODES, vectors[vid], 1)[0][0] == vid


@pytest.mark.parametrize("killed", ["before the deletion", "before the zeroing"])
def test_an_erase_cut_short_is_finished_by_the_next(tmp_path, monkeypatch, killed):
    path = tmp_path / "vectors"
    vectors = build(path, 1500)
    doomed = [key(5), key(6)]

    def cut(*args, **kwargs):
        raise KeyboardInterrupt  # the process killed there

    where = (
        (VectorStore, "delete")
        if killed == "before the deletion"
        else (vectors_module, "_zero_erased")
    )
    with monkeypatch.context() as patched:
        patched.setattr(*where, cut)
        with pytest.raises(KeyboardInterrupt):
            erase(path, lambda store: {EPISODES: doomed})
    assert (path / ERASING).exists()
    stored = stored_vectors(path)
    assert (stored @ unit(vectors[key(5)]) > 0.999).any()  # still in the file
    # A forget run again selects what is still there: none, once the deletion was made.
    left = [vid for vid in doomed if killed == "before the deletion"]
    assert erase(path, lambda store: {EPISODES: left}) == ({EPISODES: left} if left else {})
    stored = stored_vectors(path)
    for vid in doomed:
        assert not (stored @ unit(vectors[vid]) > 0.999).any()
    assert (stored @ unit(vectors[key(7)]) > 0.999).sum() == 1
    assert not (path / ERASING).exists()


@pytest.mark.parametrize("opener", ["reader", "writer"])
def test_bytes_past_the_elements_in_use_are_cleared_when_a_store_closes(tmp_path, opener):
    path = tmp_path / "vectors"
    vectors = build(path, 20)
    # Written to the files now (threshold 1): 20 elements (one deleted) in files made for 100.
    erase(path, lambda store: {EPISODES: [key(19)]})
    segment = _segments(path)[EPISODES]
    layout = _layout(segment)
    assert layout.count == 20
    end = 20 * layout.size
    # What hnswlib's uncleared buffers leave there: any string the process held.
    for name, start in (("data_level0.bin", end), ("length.bin", 20 * 4)):
        with (segment / name).open("r+b") as f:
            f.seek(start + 8)
            f.write(CANARY)
    opened = open_existing(path) if opener == "reader" else open_store(path, "test:random", DIM)
    with opened as store:
        store = store if opener == "reader" else store[0]
        assert store.query(EPISODES, vectors[key(3)], 1)[0][0] == key(3)
    assert CANARY not in index_bytes(path)
    data = (segment / "data_level0.bin").read_bytes()
    assert len(data) > end and not data[end:].strip(b"\0")
    with open_existing(path) as store:  # the index still reads as before
        assert store.count(EPISODES) == 19
        assert store.query(EPISODES, vectors[key(7)], 1)[0][0] == key(7)


def test_an_erase_cut_short_leaves_a_threshold_the_next_writer_puts_back(tmp_path):
    path = tmp_path / "vectors"
    build(path, 10)
    with open_existing(path, write=True) as store:
        store._configure(EPISODES, sync_threshold=1)
    with open_store(path, "test:random", DIM) as (store, _):
        assert store.index_settings(EPISODES)["sync_threshold"] == SYNC_THRESHOLD


def test_index_files_of_another_layout_or_an_id_map_with_objects_are_refused(tmp_path):
    path = tmp_path / "vectors"
    build(path, 10)
    erase(path, lambda store: {EPISODES: [key(9)]})
    segment = _segments(path)[EPISODES]
    header = bytearray((segment / "header.bin").read_bytes())
    header[0] = 2  # another persistence version
    (segment / "header.bin").write_bytes(bytes(header))
    with pytest.raises(VectorStoreError, match="not laid out as this version knows"):
        _layout(segment)
    (segment / "index_metadata.pickle").write_bytes(pickle.dumps({"id_to_label": Vector}))
    with pytest.raises(VectorStoreError, match="refused"):
        _id_map(segment)
