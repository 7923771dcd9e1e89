"""A vault night does the work of what changed (issue 15): each case counts the notes read,
the pages distilled and the pages embedded, and checks recall and the index stay right."""

import os
import shutil

import pytest

from company_ai.core.recall import answers as recall_module
from company_ai.core.recall import index_entities
from company_ai.core.recall.answers import neighbourhood
from company_ai.core.recall.retrieval import keyword_search
from company_ai.core.store.db import dialect
from company_ai.core.vault import distill as distill_module
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from tests.conftest import PRIVATE_CANARY, fixed_clock
from tests.core.recall.test_retrieval import Counting
from tests.hostile.canary import find_canary

ADA = "people/ada-okafor.md"


class Night:
    """Runs staging, the distiller and the index as the vault job does, counting work."""

    def __init__(self, stores, vault, tmp_path, minilm):
        self.stores, self.vault, self.staging = stores, vault, tmp_path / "staging"
        self.embedder = Counting(minilm)
        self.day = 0

    def run(self, embedder=None):
        self.day += 1
        day = f"2026-11-{self.day:02d}"
        calls = []

        def distil(title, path, text):
            calls.append(title)
            return offline_page(path, text)

        embedder = embedder or self.embedder
        before = len(embedder.texts)
        stage_vault(self.vault, self.staging, day=day)
        with self.stores.connect("recall") as conn:
            pages = distill_staging(
                conn,
                str(self.staging),
                day=day,
                distill=distil,
                source="model:offline",
                clock=fixed_clock(),
            )
            logs = []
            index = index_entities(conn, embedder, log=logs.append)
            check_full_text(conn)
        assert sorted(calls) == sorted(pages.distilled)
        index["logs"] = logs
        return pages, index, len(embedder.texts) - before


def check_full_text(conn):
    """The full-text index agrees with its documents."""
    if dialect(conn) == "sqlite":  # 1: FTS5 checks against the content table too
        conn.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)")
        return
    (wrong,) = conn.execute(
        "SELECT count(*) FROM search_docs WHERE tsv IS DISTINCT FROM"
        " setweight(to_tsvector('recall.recall_text', title), 'A')"
        " || setweight(to_tsvector('recall.recall_text', body), 'D')"
        " OR doc_len != (SELECT coalesce(sum(array_length(positions, 1)), 0) FROM unnest(tsv))"
    ).fetchone()
    assert wrong == 0


@pytest.fixture
def night(stores, vault, tmp_path, minilm):
    first = Night(stores, vault, tmp_path, minilm)
    pages, index, embedded = first.run()
    assert len(pages.distilled) == 21 and embedded == 21 == index["documents"]
    return first


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_an_unchanged_night_reads_distils_and_embeds_nothing(night):
    pages, index, embedded = night.run()
    assert (pages.notes_read, pages.distilled, pages.entities_written) == (0, [], [])
    assert pages.unchanged == 21 and pages.entities == 21
    assert (index["rewritten"], index["removed"], embedded) == (0, 0, 0)


def test_an_unchanged_night_compares_nothing_once_both_steps_are_in_line(night, monkeypatch):
    # The marks match: the manifest is not even parsed and no document is built.
    def refuse(*args, **kwargs):
        raise AssertionError("an unchanged night compared what exists")

    monkeypatch.setattr(distill_module, "read_manifest", refuse)
    monkeypatch.setattr(recall_module, "entity_docs", refuse)
    pages, index, embedded = night.run()
    assert (pages.unchanged, pages.entities, index["documents"], embedded) == (21, 21, 21, 0)
    assert pages.notes_read == 0 and index["rewritten"] == 0


def test_each_page_written_is_judged_by_the_gate_once(stores, vault, tmp_path, minilm, monkeypatch):
    judged = []

    def counting(markdown, note):
        judged.append(markdown.split("\n# ", 1)[-1].split("\n", 1)[0])
        return distill_module.judge({"page": distill_module.claim_text(markdown)}, [note])

    monkeypatch.setattr(distill_module, "page_verdict", counting)
    pages, _, _ = Night(stores, vault, tmp_path, minilm).run()
    assert len(pages.entities_written) == 21
    assert sorted(judged) == sorted(pages.distilled)  # not again for the blocking check


def test_one_edit_redoes_one_page_and_one_vector(night, stores):
    edit(night.vault / ADA, "weekly architecture review", "fortnightly zephyrine review")
    pages, index, embedded = night.run()
    assert pages.notes_read == 1 and pages.distilled == ["Ada Okafor"]
    assert pages.entities_written == ["Ada Okafor"]
    assert (index["rewritten"], index["text_changed"], embedded) == (1, 1, 1)
    assert night.embedder.texts[-1].startswith("Ada Okafor\n")
    with stores.connect("recall") as conn:
        assert keyword_search(conn, "zephyrine") == ["Ada Okafor"]
        assert keyword_search(conn, "weekly architecture") != ["Ada Okafor"]
        assert conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0] == 21


def test_an_edit_of_front_matter_only_redistils_that_page_and_embeds_nothing(night, stores):
    edit(night.vault / ADA, "updated: 2026-11-20", "updated: 2026-11-28")
    pages, index, embedded = night.run()
    assert pages.distilled == ["Ada Okafor"] and pages.notes_read == 1
    # The page records the note's new hash, so its entity and document row are rewritten,
    # but the text a question is matched against did not change: no vector is made.
    assert (index["rewritten"], index["text_changed"], embedded) == (1, 0, 0)
    with stores.connect("recall") as conn:
        touched = conn.execute(
            "SELECT note_touched FROM entities WHERE title = 'Ada Okafor'"
        ).fetchone()[0]
    assert touched == "2026-11-28"


def test_a_note_touched_but_unchanged_is_only_redated(night, stores):
    path = night.vault / "people" / "dev-patel.md"
    edit(path, "updated:", "updated_was:")  # the note's date now comes from its file time
    night.run()
    os.utime(path, (1_767_225_600, 1_767_225_600))  # 2026-01-01, content unchanged
    pages, index, embedded = night.run()
    assert (pages.distilled, pages.entities_written, pages.retouched) == ([], [], 1)
    assert (index["rewritten"], embedded) == (0, 0)
    with stores.connect("recall") as conn:
        touched = conn.execute(
            "SELECT note_touched FROM entities WHERE derived_from = 'people/dev-patel.md'"
        ).fetchone()[0]
    assert touched == "2026-01-01"


def test_a_rename_without_a_content_change_redistils_one_page_and_embeds_nothing(night, stores):
    (night.vault / ADA).rename(night.vault / "people" / "ada.md")
    pages, index, embedded = night.run()
    # The path is the model's input and the page's provenance: that page is redone.
    assert pages.distilled == ["Ada Okafor"] and pages.removed == []
    assert (index["rewritten"], index["removed"], embedded) == (1, 0, 0)
    with stores.connect("recall") as conn:
        row = conn.execute("SELECT derived_from FROM entities WHERE title = 'Ada Okafor'")
        assert row.fetchone()[0] == "people/ada.md"


def test_a_rename_that_changes_the_title_replaces_the_page_and_its_vector(night, stores):
    (night.vault / "notes" / "untitled-plan.md").write_text("A plan for the quarry site.\n")
    night.run()
    (night.vault / "notes" / "untitled-plan.md").rename(night.vault / "notes" / "quarry.md")
    pages, index, embedded = night.run()
    assert pages.distilled == ["Quarry"] and pages.removed == ["Untitled Plan"]
    assert (index["rewritten"], index["removed"], embedded) == (1, 1, 1)
    with stores.connect("recall") as conn:
        assert keyword_search(conn, "quarry") == ["Quarry"]
        assert conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0] == 22


def test_a_note_deleted_then_recreated_under_its_title(night, stores):
    text = (night.vault / ADA).read_text()
    (night.vault / ADA).unlink()
    pages, index, embedded = night.run()
    assert pages.removed == ["Ada Okafor"] and pages.distilled == []
    assert pages.entities_written == ["Ada Okafor"]  # deleted
    # Pages that point at Ada are not redone: nothing in them came from her note, and
    # recall resolves a relation when it is read.
    assert (index["removed"], index["rewritten"], embedded) == (1, 0, 0)
    with stores.connect("recall") as conn:
        assert ("depends_on", "out", "Ada Okafor", False) in neighbourhood(conn, "Ben Harlow")
        assert keyword_search(conn, "architecture review") == []
        assert conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0] == 20

    (night.vault / ADA).write_text(text)
    pages, index, embedded = night.run()
    assert pages.distilled == ["Ada Okafor"] and (index["rewritten"], embedded) == (1, 1)
    with stores.connect("recall") as conn:
        assert ("depends_on", "out", "Ada Okafor", True) in neighbourhood(conn, "Ben Harlow")

    # Deleted and written again between two nights (an editor's save by replace): the
    # staged content is the same, so nothing is redone.
    (night.vault / ADA).unlink()
    (night.vault / ADA).write_text(text)
    pages, index, embedded = night.run()
    assert (pages.distilled, index["rewritten"], embedded) == ([], 0, 0)


def test_a_new_distiller_version_redistils_every_page_once(night, monkeypatch):
    monkeypatch.setattr(distill_module, "DISTILLER_VERSION", "test-next")
    pages, index, embedded = night.run()
    assert len(pages.distilled) == 21 and pages.notes_read == 21
    # The same offline extraction gives the same texts: the vectors are kept.
    assert embedded == 0 and index["text_changed"] == 0
    pages, index, embedded = night.run()
    assert (pages.distilled, embedded) == ([], 0)


def test_an_index_of_another_models_vectors_is_embedded_again_and_says_so(night, minilm):
    other = Counting(minilm, name="another-model")
    pages, index, embedded = night.run(embedder=other)
    assert pages.distilled == [] and embedded == 21
    assert index["reembedded_from"] == "all-MiniLM-L6-v2-onnx-int8"
    assert "every document is embedded again with another-model" in index["logs"][0]
    pages, index, embedded = night.run(embedder=other)
    assert embedded == 0 and "reembedded_from" not in index


def test_private_notes_stay_out_while_nights_go_incremental(night, tmp_path):
    shutil.copy(night.vault / "private" / "salary-review.md", night.vault / "private" / "b.md")
    edit(night.vault / ADA, "weekly", "monthly")
    night.run()
    assert find_canary(PRIVATE_CANARY, night.staging, tmp_path / "data") == []


def test_a_page_left_behind_its_changed_note_is_checked_again(night, stores):
    night.run()
    edit(night.vault / ADA, "She joined in March 2023 and", "She")

    def failing(title, path, text):
        raise RuntimeError("model down")

    stage_vault(night.vault, night.staging, day="2026-11-20")
    with stores.connect("recall") as conn:
        pages = distill_staging(
            conn,
            str(night.staging),
            day="2026-11-20",
            distill=failing,
            source="model:offline",
            clock=fixed_clock(),
        )
    # The old page stays published, and the check finds it now claims what its note no
    # longer says.
    assert list(pages.failed) == ["Ada Okafor"] and pages.entities_written == []
    assert pages.unsupported == ["Ada Okafor"]
    # A night with a page still to do leaves no mark: the next one, with nothing newly
    # staged, distils it.
    pages, _, embedded = night.run()
    assert pages.distilled == ["Ada Okafor"] and embedded == 1
