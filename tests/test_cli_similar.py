"""`company-ai similar`: the nearest lines, grouped; filters, clear refusals, no dagster
and no chromadb."""

import json

import numpy as np
import pytest

from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vectors import (
    EPISODES,
    Signals,
    erase,
    open_existing,
    open_store,
    sync_episodes,
    vectors_dir,
)
from company_ai.core.vectors import similar as similar_module
from company_ai.core.vectors.reader import Snapshot, UnreadableStore
from company_ai.core.vectors.similar import Filters, VectorModelMismatch, find_similar, line_key
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF
from tests.fakes import WordEmbedder
from tests.test_cli import run
from tests.test_cli_recall import HEAVY, run_listing_imports


@pytest.fixture(scope="module")
def vector_data(tmp_path_factory, minilm):
    data = tmp_path_factory.mktemp("cli-similar") / "data"
    stores = Stores(data)
    load_sample(stores, contacts=40, as_of=AS_OF)
    with open_store(vectors_dir(data), minilm.name, minilm.dim) as (store, opened):
        day = Day.of("2026-11-29", "UTC")
        sync_episodes(store, opened, stores, minilm, day, cap=10_000, signals=Signals())
    return data


def similar(data, *args):
    return run("--data-dir", str(data), "similar", *args)


def a_contact(data):
    with Stores(data).connect("crm", readonly=True) as crm:
        row = crm.execute(
            "SELECT id, email FROM contacts WHERE email IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
        return row["id"], row["email"]


def members(result):
    return [m for g in result["groups"] for m in g["members"]]


def test_similar_lists_the_nearest_lines_with_day_type_contact_and_row(vector_data):
    done = similar(vector_data, "we are budgeting, try again next quarter", "--limit", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6 and lines[0].startswith("1. ")
    assert "episode response" in lines[0] and "[memory.contact_episodes:" in lines[0]
    assert "Try again next quarter" in lines[1]  # the sample's "not now" reply
    found = json.loads(similar(vector_data, "get back in touch", "--json", "--limit", "5").stdout)
    assert found["model"].startswith("all-MiniLM") and len(found["groups"]) == 5
    first = found["groups"][0]
    assert {"text", "score", "count", "first_day", "last_day", "contacts"} <= set(first)
    assert {"collection", "id", "day", "contact", "type", "score", "ref", "text"} <= set(
        first["members"][0]
    )
    scores = [g["score"] for g in found["groups"]]
    assert scores == sorted(scores, reverse=True)


def test_a_repeated_line_is_shown_once_with_its_count_and_days(vector_data):
    found = json.loads(similar(vector_data, "not now, try again next quarter", "--json").stdout)
    groups = found["groups"]
    assert len(groups) == 10  # --limit counts lines, not memories
    keys = [line_key(g["text"]) for g in groups]
    repeated = [g for g in groups if g["count"] > 1]
    assert repeated, "the sample repeats its replies: some line must hold several memories"
    for g in groups:
        assert g["count"] == len(g["members"]) and g["text"] == g["members"][0]["text"]
        days = sorted({m["day"] for m in g["members"]})
        assert (g["first_day"], g["last_day"]) == (days[0], days[-1])
        assert [m["score"] for m in g["members"]] == sorted(
            (m["score"] for m in g["members"]), reverse=True
        )
    # No two groups hold the same line, and every member is on its group's line.
    by_member = {line_key(m["text"], m["contact"].split(" <")[0]) for m in members(found)}
    assert len(set(keys)) == len(groups)
    assert len(by_member) <= len(groups)
    top = repeated[0]
    done = similar(vector_data, "not now, try again next quarter")
    lines = done.stdout.splitlines()
    shown = [line for line in lines[1::2] if " ".join(top["text"].split())[:60] in line]
    assert len(shown) == 1  # the line once, with its count on the line above it
    header = lines[lines.index(shown[0]) - 1]
    assert f"{top['count']} times" in header


def test_similar_filters_by_contact_type_and_days(vector_data):
    contact_id, email = a_contact(vector_data)
    mine = json.loads(similar(vector_data, "pricing", "--contact", email.upper(), "--json").stdout)
    assert mine["groups"] and {m["contact_id"] for m in members(mine)} == {contact_id}
    notes = json.loads(similar(vector_data, "pricing", "--type", "research", "--json").stdout)
    assert notes["groups"] and {m["type"] for m in members(notes)} == {"research"}
    window = ("--since", "2026-11-20", "--until", "2026-11-22", "--json", "--limit", "50")
    days = json.loads(similar(vector_data, "pricing", *window).stdout)
    assert days["groups"] and {m["day"] for m in members(days)} <= {
        "2026-11-20",
        "2026-11-21",
        "2026-11-22",
    }
    both = ("--type", "engagement", "--since", "2026-11-20", "--json", "--limit", "3")
    engaged = json.loads(similar(vector_data, "pricing page", *both).stdout)
    assert len(engaged["groups"]) == 3
    assert {m["type"] for m in members(engaged)} == {"engagement"}
    assert min(m["day"] for m in members(engaged)) >= "2026-11-20"
    knowledge = similar(vector_data, "pricing", "--in", "knowledge")
    assert knowledge.returncode == 0 and knowledge.stdout.startswith("nothing similar")


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (("--contact", "ghost@example.com"), 1, "no contact with email 'ghost@example.com'"),
        (("--type", "gossip"), 1, "unknown type 'gossip'; the types are research,"),
        (("--since", "2026-11-29", "--until", "2026-11-01"), 1, "is after --until"),
        (("--since", "29/11/2026"), 2, "a day must be a day written YYYY-MM-DD"),
        (("--in", "archive"), 2, "invalid choice: 'archive'"),
    ],
)
def test_bad_filters_are_refused_clearly(vector_data, args, status, message):
    done = similar(vector_data, "pricing", *args)
    assert done.returncode == status and message in done.stderr and done.stdout == ""


def test_without_a_vector_store_it_says_what_builds_one(tmp_path):
    done = similar(tmp_path, "anything")
    assert done.returncode == 1
    assert "no vector store at" in done.stderr and "memory job" in done.stderr
    assert not (tmp_path / "vectors").exists()


def test_non_english_text_is_answered_with_a_note_about_the_model(vector_data):
    done = similar(vector_data, "会議の予定を確認したい", "--limit", "1")
    assert done.returncode == 0 and "is an English model" in done.stderr
    assert "is an English model" not in similar(vector_data, "a meeting", "--limit", "1").stderr


def test_similar_reads_and_never_imports_the_heavy_libraries(vector_data):
    with open_existing(vectors_dir(vector_data)) as store:
        before = store.metadata(EPISODES)
    files = {p: p.read_bytes() for p in vectors_dir(vector_data).rglob("*") if p.is_file()}
    filters = ("--type", "engagement", "--since", "2026-11-01")
    done, imported = run_listing_imports(
        "--data-dir", str(vector_data), "similar", "pricing", *filters
    )
    assert done.returncode == 0 and done.stdout.startswith("1. ")
    assert "company_ai" in imported and not HEAVY & imported
    assert {p: p.read_bytes() for p in files} == files  # not a byte written
    with open_existing(vectors_dir(vector_data)) as store:
        assert store.metadata(EPISODES) == before


def test_find_similar_in_process_gives_what_chromas_index_gives(vector_data, minilm, monkeypatch):
    stores = Stores(vector_data)
    text = "not now, try again next quarter"
    exact = find_similar(stores, text, limit=8, embedder=minilm)
    warm = find_similar(stores, text, limit=8, embedder=minilm)  # read from the kept vectors
    monkeypatch.setattr(similar_module, "SCAN_MAX", 0)  # every collection: Chroma's index
    indexed = find_similar(stores, text, limit=8, embedder=minilm)
    assert exact.exact and not indexed.exact and warm == exact

    def lines(result):
        return [(g.text, g.count, {m.id for m in g.members}) for g in result.groups]

    assert len(exact.groups) == 8 and lines(indexed) == lines(exact)
    scores = [m.score for g in exact.groups for m in g.members]
    assert np.allclose(sorted(scores), sorted(m.score for g in indexed.groups for m in g.members))
    contact_id, _ = a_contact(vector_data)
    mine = Filters(contact_id=contact_id, since="2026-11-01")
    monkeypatch.setattr(similar_module, "SCAN_MAX", 200_000)
    one = find_similar(stores, "pricing", filters=mine, embedder=minilm)
    assert one.groups and all(
        m.contact_id == contact_id and m.day >= "2026-11-01" for g in one.groups for m in g.members
    )


def test_files_it_cannot_read_are_left_to_chroma(vector_data, minilm, monkeypatch):
    stores = Stores(vector_data)
    exact = find_similar(stores, "budget", limit=5, embedder=minilm)

    def unreadable(*_):
        raise UnreadableStore("laid out otherwise")

    monkeypatch.setattr(Snapshot, "load", unreadable)
    asked = find_similar(stores, "budget", limit=5, embedder=minilm)
    assert not asked.exact and [g.text for g in asked.groups] == [g.text for g in exact.groups]


def test_a_query_from_another_model_is_refused_never_compared(vector_data):
    with pytest.raises(VectorModelMismatch, match="holds all-MiniLM.*cannot be compared"):
        find_similar(Stores(vector_data), "pricing", embedder=WordEmbedder(384))


def test_a_huge_query_and_an_empty_collection(vector_data, minilm, tmp_path):
    long = similar(vector_data, "budget " * 16_000, "--limit", "2")  # near the argv limit
    assert long.returncode == 0 and long.stdout.startswith("1. ")
    huge = find_similar(Stores(vector_data), "budget " * 150_000, limit=2, embedder=minilm)
    assert len(huge.groups) == 2  # ~1 MB: the model reads its first 8,000 characters
    empty = tmp_path / "data"
    with open_store(vectors_dir(empty), minilm.name, minilm.dim):
        pass  # the collections exist, with no vector in them
    done = similar(empty, "pricing")
    assert done.returncode == 0 and done.stdout.startswith("nothing similar")


def test_a_warm_caller_sees_a_forget_at_once(tmp_path):
    stores = Stores(tmp_path / "data")
    load_sample(stores, contacts=20, as_of=AS_OF)
    words = WordEmbedder(16)
    with open_store(vectors_dir(stores.data_dir), words.name, words.dim) as (store, opened):
        day = Day.of("2026-11-29", "UTC")
        sync_episodes(store, opened, stores, words, day, cap=10_000, signals=Signals())
    first = find_similar(stores, "try again next quarter", embedder=words)
    assert find_similar(stores, "try again next quarter", embedder=words) == first  # warm
    gone = {m.id for m in first.groups[0].members}
    erase(vectors_dir(stores.data_dir), lambda store: {EPISODES: gone})
    after = find_similar(stores, "try again next quarter", embedder=words)
    assert not gone & {m.id for g in after.groups for m in g.members}
