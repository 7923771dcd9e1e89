"""`company-ai similar`: the nearest memories, filters, clear refusals, no dagster."""

import json

import pytest

from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vectors import (
    EPISODES,
    Signals,
    open_existing,
    open_store,
    sync_episodes,
    vectors_dir,
)
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF
from tests.test_cli import run
from tests.test_cli_recall import run_listing_imports


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


def test_similar_lists_the_nearest_memories_with_day_type_contact_and_row(vector_data):
    done = similar(vector_data, "we are budgeting, try again next quarter", "--limit", "3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6 and lines[0].startswith("1. ")
    assert "episode response" in lines[0] and "[memory.contact_episodes:" in lines[0]
    assert "Try again next quarter" in lines[1]  # the sample's "not now" reply
    hits = json.loads(similar(vector_data, "get back in touch", "--json", "--limit", "5").stdout)
    assert hits["model"].startswith("all-MiniLM") and len(hits["hits"]) == 5
    first = hits["hits"][0]
    assert {"day", "type", "score", "ref", "contact", "text", "importance"} <= set(first)
    assert [h["score"] for h in hits["hits"]] == sorted(
        (h["score"] for h in hits["hits"]), reverse=True
    )


def test_similar_filters_by_contact_type_and_days(vector_data):
    contact_id, email = a_contact(vector_data)
    mine = json.loads(similar(vector_data, "pricing", "--contact", email.upper(), "--json").stdout)
    assert mine["hits"] and {h["contact_id"] for h in mine["hits"]} == {contact_id}
    notes = json.loads(similar(vector_data, "pricing", "--type", "research", "--json").stdout)
    assert notes["hits"] and {h["type"] for h in notes["hits"]} == {"research"}
    window = ("--since", "2026-11-20", "--until", "2026-11-22", "--json", "--limit", "50")
    days = json.loads(similar(vector_data, "pricing", *window).stdout)
    assert days["hits"] and {h["day"] for h in days["hits"]} <= {
        "2026-11-20",
        "2026-11-21",
        "2026-11-22",
    }
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


def test_similar_reads_and_never_imports_dagster(vector_data):
    with open_existing(vectors_dir(vector_data)) as store:
        before = store.metadata(EPISODES)
    done, imported = run_listing_imports("--data-dir", str(vector_data), "similar", "pricing")
    assert done.returncode == 0 and "chromadb" in imported
    assert "dagster" not in imported
    with open_existing(vectors_dir(vector_data)) as store:
        assert store.metadata(EPISODES) == before
