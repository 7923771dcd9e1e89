"""Nothing from a private vault folder reaches a vector, and a page that leaves recall leaves
the vector memory too (live or archived)."""

from company_ai.core.times import Day
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from company_ai.core.vectors import (
    KNOWLEDGE,
    Signals,
    Vector,
    open_store,
    sync_knowledge,
    vectors_dir,
)
from company_ai.core.vectors.store import ARCHIVE
from tests.conftest import PRIVATE_CANARY, fixed_clock
from tests.fakes import WordEmbedder
from tests.hostile.canary import find_canary

DAY1, DAY2 = "2026-11-28", "2026-11-29"
PUBLIC_CANARY = "zephyrquill"  # in a public note's title: the scan must see it


def night(vault, stores, staging, day, words):
    stage_vault(vault, staging, day=day)
    with stores.connect("recall") as conn:
        distill_staging(
            conn, str(staging), day=day, distill=lambda t, p, text: offline_page(p, text),
            source="model:offline", clock=fixed_clock(f"{day}T12:00:00Z"),
        )  # fmt: skip
    with open_store(vectors_dir(stores.data_dir), words.name, words.dim) as (store, opened):
        window = Day.of(day, "UTC")
        sync_knowledge(store, opened, stores, words, window, cap=1000, signals=Signals())
        return {name: store.metadata(name) for name in (KNOWLEDGE, ARCHIVE)}


def test_private_notes_never_reach_a_vector_and_a_note_made_private_leaves(vault, stores, tmp_path):
    words, staging = WordEmbedder(), tmp_path / "staging"
    public = vault / "notes" / "zephyrquill-plan.md"
    public.write_text(f"# Plan {PUBLIC_CANARY}\n\n- [goal] Ship the {PUBLIC_CANARY} plan.\n")
    found = night(vault, stores, staging, DAY1, words)
    page = f"page:Plan {PUBLIC_CANARY}"
    assert page in found[KNOWLEDGE] and len(found[KNOWLEDGE]) == 22
    vectors = vectors_dir(stores.data_dir)
    assert find_canary(PUBLIC_CANARY, vectors), "the scan reads the store's files"
    assert find_canary(PRIVATE_CANARY, vectors) == []
    # The owner moves the note into a private folder; its vector is archived meanwhile.
    with open_store(vectors, words.name, words.dim) as (store, _):
        [moved] = store.vectors(KNOWLEDGE, [page])
        store.upsert(ARCHIVE, [Vector(moved.id, moved.embedding, {**moved.meta, "x": 1})])
    public.rename(vault / "private" / public.name)
    found = night(vault, stores, staging, DAY2, words)
    assert page not in found[KNOWLEDGE] and page not in found[ARCHIVE]
    assert len(found[KNOWLEDGE]) == 21
    assert find_canary(PRIVATE_CANARY, vectors) == []
