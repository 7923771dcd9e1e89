"""The vector memory on a real Chroma server (`chroma run`, COMPANY_AI_CHROMA_URL): built,
searched and forgotten through its API; what a forget leaves in the server's own files, and
`vectors-scrub` clearing it; a server down or hung is a clear error in bounded time."""

import json
import re
import socket
import time

import numpy as np
import pytest

from company_ai.core.ops import forget
from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vectors import (
    EPISODES,
    Signals,
    VectorStoreError,
    open_existing,
    open_store,
    sync_episodes,
    vectors_dir,
)
from company_ai.core.vectors import server as server_module
from company_ai.core.vectors.similar import Filters, find_similar
from company_ai.core.vectors.store import _layout
from company_ai.sample_world.crm import load_sample
from company_ai.settings import Settings
from tests.chroma_server import ChromaServer, HangingProxy
from tests.conftest import AS_OF
from tests.fakes import WordEmbedder
from tests.pg_server import free_port
from tests.test_cli import run


def their_memories(stores, url, contact_id):
    """{vector id: (embedding, ref)} of one contact's memories, as the server holds them."""
    with open_existing(vectors_dir(stores.data_dir), url=url) as store:
        ids = list(store.metadata(EPISODES, {"contact_id": {"$eq": contact_id}}))
        return {v.id: (v.embedding, v.meta["ref"]) for v in store.vectors(EPISODES, ids)}


def traces(persist, memories, kept=()):
    """What of `memories` the server's files hold: ids and refs (byte search), embeddings
    (their exact float bytes in any file, or a row of an index file within 0.999 cosine),
    but not an embedding one of the `kept` vectors has too (the same text: the sample has
    notes repeated word for word, and a survivor's vector is rightly kept)."""
    found = set()
    files = [p for p in persist.rglob("*") if p.is_file()]
    raw = b"".join(p.read_bytes() for p in files)
    kept_units = np.array([unit(e) for e in kept]).reshape(len(kept), -1)
    own = {
        vid: unit(e)
        for vid, (e, _) in memories.items()
        if not len(kept) or not (kept_units @ unit(e) > 0.999).any()
    }
    for vid, (embedding, ref) in memories.items():
        for name in (vid, ref):
            if re.search(re.escape(name.encode()) + rb"(?!\d)", raw):
                found.add(name)
        if vid in own and embedding.astype("<f4").tobytes() in raw:
            found.add(f"{vid} embedding bytes")
    for segment in {p.parent for p in files if p.name == "header.bin"}:
        layout = _layout(segment)
        if layout is None or layout.count == 0:
            continue
        data = np.frombuffer((segment / "data_level0.bin").read_bytes(), dtype=np.uint8)
        rows = data[: layout.count * layout.size].reshape(layout.count, layout.size)
        stored = rows[:, layout.vector : layout.label].copy().view("<f4")
        for vid, vector in own.items():
            if (stored @ vector > 0.999).any():
                found.add(f"{vid} in the index")
    return found


def unit(vector):
    return np.asarray(vector, dtype=np.float32) / np.linalg.norm(vector)


def every_vector(stores, url):
    with open_existing(vectors_dir(stores.data_dir), url=url) as store:
        ids = list(store.metadata(EPISODES))
        return {v.id: v.embedding for v in store.vectors(EPISODES, ids)}


@pytest.fixture(scope="module")
def server_data(tmp_path_factory, minilm, chroma_server):
    data = tmp_path_factory.mktemp("chroma-data") / "data"
    stores = Stores(data, chroma_url=chroma_server.url)
    load_sample(stores, contacts=40, as_of=AS_OF)
    day = Day.of("2026-11-29", "UTC")
    path = vectors_dir(data)
    with open_store(path, minilm.name, minilm.dim, url=chroma_server.url) as (store, opened):
        sync_episodes(store, opened, stores, minilm, day, cap=10_000, signals=Signals())
    return stores


def a_contact_with_memories(stores, url):
    with stores.connect("crm", readonly=True) as crm:
        rows = crm.execute("SELECT id, email FROM contacts WHERE email IS NOT NULL ORDER BY id")
        for row in rows.fetchall():
            if len(their_memories(stores, url, row["id"])) >= 2:
                return row["id"], row["email"]
    raise AssertionError("the sample has nobody with two memories")


def test_on_a_server_vectors_are_searched_forgotten_and_scrubbed_from_its_files(
    server_data, minilm, chroma_server
):
    stores, url, persist = server_data, chroma_server.url, chroma_server.path
    assert not (vectors_dir(stores.data_dir) / "chroma.sqlite3").exists(), "nothing local"
    with open_existing(vectors_dir(stores.data_dir), url=url) as store:
        total = store.count(EPISODES)
    assert total > 0
    contact_id, email = a_contact_with_memories(stores, url)
    theirs = their_memories(stores, url, contact_id)
    kept = [e for i, e in every_vector(stores, url).items() if i not in theirs]
    assert len(kept) == total - len(theirs)

    found = find_similar(stores, "next quarter budget", embedder=minilm, limit=3)
    assert found.groups and not found.exact, "the server answered, not the local files"
    mine = find_similar(stores, "hello", embedder=minilm, filters=Filters(contact_id=contact_id))
    assert {m.id for g in mine.groups for m in g.members} == set(theirs)

    with stores.connect("memory", readonly=True) as memory:
        texts = [
            r[0]
            for r in memory.execute(
                "SELECT content FROM contact_episodes WHERE contact_id = $1", (contact_id,)
            )
        ]
    assert texts
    result = forget(stores, email, now="2026-11-30T08:00:00Z", log=lambda _: None)
    assert result.removed["vectors"] == len(theirs)
    assert their_memories(stores, url, contact_id) == {}
    with open_existing(vectors_dir(stores.data_dir), url=url) as store:
        assert store.count(EPISODES) == total - len(theirs)
        for embedding, _ in theirs.values():
            assert not set(theirs) & {h[0] for h in store.query(EPISODES, embedding, 5)}

    # What the API cannot reach: the server's files still hold them (its log, SQLite's
    # free pages), so the server's host needs the scrub, with the server stopped.
    assert traces(persist, theirs, kept), "the byte search finds what a server-side delete leaves"
    raw = b"".join(p.read_bytes() for p in persist.rglob("*") if p.is_file())
    assert not [t for t in texts if t.encode() in raw], "no text is ever sent to Chroma"
    chroma_server.stop()
    try:
        done = run("vectors-scrub", str(persist))
        assert done.returncode == 0, done.stderr
        assert "vacuumed" in done.stdout
        assert traces(persist, theirs, kept) == set()
    finally:
        chroma_server.start()
    with open_existing(vectors_dir(stores.data_dir), url=url) as store:
        assert store.count(EPISODES) == total - len(theirs), "the others are all kept"
    again = find_similar(stores, "next quarter budget", embedder=minilm, limit=3)
    assert [g.text for g in again.groups] and contact_id not in {
        m.contact_id for g in again.groups for m in g.members
    }
    assert traces(persist, theirs, kept) == set(), "a restarted server does not bring them back"


def test_the_cli_searches_the_server_in_company_ai_chroma_url(server_data, chroma_server):
    env = {"COMPANY_AI_CHROMA_URL": chroma_server.url}
    done = run_env(env, "--data-dir", str(server_data.data_dir), "similar", "budget", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["groups"] and answer["exact"] is False, "the server answered"


def run_env(env, *args):
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "company_ai.cli", *args],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()} | env,
    )


def test_a_server_that_is_down_is_a_clear_error_that_names_it(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    path = vectors_dir(tmp_path / "data")
    with (
        pytest.raises(VectorStoreError, match=re.escape(f"Chroma server at {url}")) as caught,
        open_store(path, "test:words-16", 16, url=url),
    ):
        pass
    assert "chroma run" in str(caught.value) and "nothing was written" in str(caught.value).lower()
    assert not (path / "chroma.sqlite3").exists()
    stores = Stores(tmp_path / "data", chroma_url=url)
    load_sample(stores, contacts=5, as_of=AS_OF)
    with pytest.raises(VectorStoreError, match=re.escape(url)):
        find_similar(stores, "budget")
    done = run_env({"COMPANY_AI_CHROMA_URL": url}, "--data-dir", str(stores.data_dir),
                   "similar", "budget")  # fmt: skip
    assert done.returncode == 1 and f"Chroma server at {url}" in done.stderr
    assert "Traceback" not in done.stderr
    with stores.connect("crm", readonly=True) as crm:
        email = crm.execute("SELECT email FROM contacts WHERE email IS NOT NULL").fetchone()[0]
    with pytest.raises(VectorStoreError, match=re.escape(url)):
        forget(stores, email, now="2026-11-30T08:00:00Z", log=lambda _: None)
    progress = json.loads((stores.data_dir / "forget-progress.json").read_text())
    assert "vectors" not in progress["done"], "the vectors are left for the rerun to finish"


def test_a_server_that_never_answers_times_out_in_bounded_time(tmp_path):
    with socket.socket() as hung:  # accepts connections (the kernel does), answers nothing
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        url = f"http://127.0.0.1:{hung.getsockname()[1]}"
        started = time.monotonic()
        with (
            pytest.raises(VectorStoreError, match="did not answer within"),
            open_store(vectors_dir(tmp_path / "data"), "test:words-16", 16, url=url),
        ):
            pass
        took = time.monotonic() - started
    assert server_module.CONNECT_TIMEOUT_S <= took < server_module.CONNECT_TIMEOUT_S + 10


def test_a_chroma_url_with_credentials_or_a_path_is_refused_without_showing_them():
    env = {"COMPANY_AI_START_DATE": "2026-11-01"}
    for url in ("http://admin:s3cret@chroma.internal:8000", "ftp://chroma:8000", "chroma:8000"):
        with pytest.raises(ValueError, match="COMPANY_AI_CHROMA_URL") as caught:
            Settings.from_env(env | {"COMPANY_AI_CHROMA_URL": url})
        assert "s3cret" not in str(caught.value) and "admin" not in str(caught.value)
    ok = Settings.from_env(env | {"COMPANY_AI_CHROMA_URL": "https://chroma.internal:8443"})
    assert ok.chroma_url == "https://chroma.internal:8443"
    assert Settings.from_env(env).chroma_url == "", "the default: local files"


def test_a_server_that_stops_answering_mid_run_leaves_a_build_the_next_run_finishes(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(server_module, "REQUEST_TIMEOUT_S", 2.0)  # not two minutes a test
    words = WordEmbedder()
    server = ChromaServer(tmp_path / "persist").start()  # its own: another model's vectors
    proxy = HangingProxy(server.port)
    try:
        stores = Stores(tmp_path / "data", chroma_url=proxy.url)
        load_sample(stores, contacts=10, as_of=AS_OF)
        day, path = Day.of("2026-11-29", "UTC"), vectors_dir(stores.data_dir)
        started = time.monotonic()
        with (
            pytest.raises(VectorStoreError, match="did not answer in 2 s"),
            open_store(path, words.name, words.dim, url=proxy.url) as (store, opened),
        ):
            proxy.hang = True
            sync_episodes(store, opened, stores, words, day, cap=10_000, signals=Signals())
        assert time.monotonic() - started < 30
        proxy.hang = False
        with open_existing(path, url=proxy.url) as store:
            assert not store.built(EPISODES), "cut short: marked partial, not complete"
        with open_store(path, words.name, words.dim, url=proxy.url) as (store, opened):
            done = sync_episodes(store, opened, stores, words, day, cap=10_000, signals=Signals())
            assert done.full_build and store.built(EPISODES)
            on_server = store.metadata(EPISODES)
        local = Stores(tmp_path / "data")  # the same stores, the vectors in local files
        with open_store(vectors_dir(local.data_dir), words.name, words.dim) as (store, opened):
            sync_episodes(store, opened, local, words, day, cap=10_000, signals=Signals())
            assert on_server == store.metadata(EPISODES) != {}, "as a build never cut short"
    finally:
        proxy.close()
        server.stop()
