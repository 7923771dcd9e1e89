"""One odd note must not stop the night: each is refused with a reason (or published,
shortened) and every other note goes through."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.recall import page_markdown
from company_ai.core.recall.answers import neighbourhood
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from company_ai.core.vault.distill import RECALL_MAX
from company_ai.core.vault.staging import (
    MAX_FRONT_MATTER_DEPTH,
    FrontMatterError,
    split_front_matter,
    staged_notes,
)
from company_ai.resources.embedder import Embedder
from company_ai.resources.llm import LLMResource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from tests.conftest import SAMPLE_VAULT, fixed_clock
from tests.setup import SETUP, named

VAULT_NIGHT = named("vault_staging")  # staging, pages and index: one multi-asset

DAY = "2026-11-29"
ALIAS_BOMB = (
    "---\n"
    + "\n".join(
        ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        + [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
        + ["tags: *a8"]
    )
    + "\n---\n# Bomb\n\nNine levels of nine aliases.\n"
)
DEEP = "---\ntitle: Deep\nx: " + "[" * 5_000 + "]" * 5_000 + "\n---\n# Deep\n\nToo deep.\n"


def run(stores, vault, staging, day=DAY, logs=None):
    log = logs.append if logs is not None else (lambda _: None)
    staged = stage_vault(vault, staging, day=day, log=log)
    with stores.connect("recall") as conn:
        distilled = distill_staging(
            conn, str(staging), day=day, distill=lambda t, p, text: offline_page(p, text),
            source="model:offline", log=log, clock=fixed_clock(),
        )  # fmt: skip
    return staged, distilled


def test_notes_sharing_a_title_in_one_folder_or_with_a_qualified_name_all_get_pages(
    stores, vault, tmp_path
):
    (vault / "projects" / "budget.md").write_text("# Budget\n\nThe project budget.\n")
    (vault / "projects" / "budget-2.md").write_text("# Budget\n\nThe second project budget.\n")
    (vault / "context" / "budget.md").write_text("# Budget\n\nThe company budget.\n")
    (vault / "notes" / "odd.md").write_text("# Budget (projects)\n\nLike a qualified title.\n")
    _, result = run(stores, vault, tmp_path / "staging")
    with stores.connect("recall") as conn:
        pages = dict(conn.execute("SELECT note_path, title FROM pages").fetchall())
    assert result.entities == 25 and len(set(pages.values())) == 25
    budgets = {pages[p] for p in ("projects/budget.md", "projects/budget-2.md",
                                  "context/budget.md", "notes/odd.md")}  # fmt: skip
    # A title the owner wrote wins over a made-up qualified one; the rest qualify further.
    assert pages["notes/odd.md"] == "Budget (projects)"
    assert pages["context/budget.md"] == "Budget (context)"
    assert budgets == {"Budget (projects)", "Budget (context)", "Budget (projects/budget)",
                       "Budget (projects/budget-2)"}  # fmt: skip


def test_a_second_note_with_an_existing_title_never_renames_the_first_page(stores, vault, tmp_path):
    staging = tmp_path / "staging"
    run(stores, vault, staging)
    (vault / "notes" / "signalcrest-call.md").write_text("# Signalcrest\n\nCall notes.\n")
    _, result = run(stores, vault, staging, day="2026-11-30")
    assert result.distilled == ["Signalcrest (notes)"] and result.removed == []
    with stores.connect("recall") as conn:
        assert 'derived_from: ["clients/signalcrest.md"]' in page_markdown(conn, "Signalcrest")
        around = neighbourhood(conn, "Chloe Marsh")
    assert any(other == "Signalcrest" and exists for _, _, other, exists in around)
    _, again = run(stores, vault, staging, day="2026-12-01")  # and it stays that way
    assert again.distilled == [] and again.removed == []


def test_a_file_name_that_is_not_utf8_is_refused_and_the_night_goes_on(stores, vault, tmp_path):
    bad = os.fsdecode(b"caf\xe9-notes.md")
    (vault / "notes" / bad).write_text("# Cafe\n\nA note with a Latin-1 name.\n")
    (vault / "private" / bad).write_text("A private note with a Latin-1 name.\n")
    staged, distilled = run(stores, vault, tmp_path / "staging")
    assert staged.rejected == {"notes/caf\\xe9-notes.md": "the file name is not valid UTF-8"}
    assert distilled.entities == 21


def test_front_matter_nested_5000_deep_or_an_alias_bomb_is_refused(vault, tmp_path):
    (vault / "notes" / "deep.md").write_text(DEEP)
    (vault / "notes" / "bomb.md").write_text(ALIAS_BOMB)
    assert len(ALIAS_BOMB.encode()) < 600
    result = stage_vault(vault, tmp_path / "staging", day=DAY)
    assert "nests deeper than" in result.rejected["notes/deep.md"]
    assert "YAML alias" in result.rejected["notes/bomb.md"]
    assert len(result.staged) == 21


def test_front_matter_nesting_is_held_to_its_limit_in_any_form():
    def nested(levels, block):
        if block:  # a: / b: / c: ... one mapping inside the next
            return "".join(f"{'  ' * i}k{i}:\n" for i in range(levels)) + "  " * levels + "x"
        return "x: " + "[" * (levels - 1) + "]" * (levels - 1)

    for block in (True, False):
        meta, _ = split_front_matter(f"---\n{nested(MAX_FRONT_MATTER_DEPTH, block)}\n---\nok")
        assert meta
        with pytest.raises(FrontMatterError, match="nests deeper"):
            split_front_matter(f"---\n{nested(MAX_FRONT_MATTER_DEPTH + 1, block)}\n---\nno")


def test_a_named_pipe_is_refused_without_blocking_the_run(vault, tmp_path):
    os.mkfifo(vault / "notes" / "pipe.md")
    os.mkfifo(vault / "private" / "pipe.md")
    outcome = {}
    worker = threading.Thread(
        target=lambda: outcome.update(result=stage_vault(vault, tmp_path / "staging", day=DAY)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=120)  # a guard against hanging the suite, not a speed assertion
    if worker.is_alive():  # unblock the reader so the thread can end, then fail
        for fifo in (vault / "notes" / "pipe.md", vault / "private" / "pipe.md"):
            with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
    assert "result" in outcome, "staging blocked on a named pipe"
    result = outcome["result"]
    assert result.rejected == {"notes/pipe.md": "not a regular file (a named pipe)"}
    assert len(result.staged) == 21


def test_a_note_with_a_very_long_first_paragraph_is_published_shortened(stores, vault, tmp_path):
    sentence = "The freight ledger reconciles every depot in the north every morning. "
    long_bullet = "- [status] " + "waiting on the depot audit " * 60 + "\n"
    many = "".join(f"- [context] Fact number {i}.\n" for i in range(80))
    links = "- relates_to [[ ]]\n- depends_on [[" + "Depot " * 50 + "]]\n"
    (vault / "notes" / "long.md").write_text(
        "# Long Note\n\n" + sentence * 80 + "\n\n" + long_bullet + links + many
    )
    _, result = run(stores, vault, tmp_path / "staging")
    assert result.failed == {} and "Long Note" in result.distilled and not result.withheld
    with stores.connect("recall") as conn:
        recall = conn.execute("SELECT recall FROM entities WHERE title = 'Long Note'").fetchone()[0]
        texts = [r[0] for r in conn.execute(
            "SELECT o.text FROM observations o JOIN entities e ON e.id = o.entity_id"
            " WHERE e.title = 'Long Note'"
        )]  # fmt: skip
    assert len(recall) <= RECALL_MAX and recall.startswith(sentence.strip())
    assert "…" in recall and "To help usefully" in recall
    assert texts and all(len(t) <= 1000 for t in texts) and len(texts) == 60


def test_every_odd_note_is_refused_with_a_reason_in_the_metadata_and_the_run_succeeds(
    tmp_path, vault
):
    os.mkfifo(vault / "notes" / "pipe.md")
    (vault / "notes" / "deep.md").write_text(DEEP)
    (vault / "notes" / "bomb.md").write_text(ALIAS_BOMB)
    (vault / "notes" / os.fsdecode(b"caf\xe9.md")).write_text("# Cafe\n\nLatin-1 name.\n")
    (vault / "projects" / "same.md").write_text("# Budget\n\nOne.\n")
    (vault / "projects" / "same-too.md").write_text("# Budget\n\nTwo.\n")
    (vault / "notes" / "latin1.md").write_bytes(
        "# Caf\xe9\n\nSaved as Latin-1.\n".encode("latin-1")
    )
    (vault / "notes" / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with open(vault / "notes" / "huge.md", "wb") as huge:  # 50 MB, sparse: never read
        huge.truncate(50 * 1024 * 1024)
    res = {
        "stores": StoresResource(data_dir=str(tmp_path / "data")),
        "vault": VaultResource(path=str(vault)),
        "llm": LLMResource(),
        "embedder": Embedder(),
    }
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [VAULT_NIGHT], resources=res, instance=instance,
            partition_key=SETUP.daily.get_last_partition_key(),
        )  # fmt: skip
    assert result.success
    staging, pages = result.asset_materializations_for_node("vault_night")[:2]
    assert staging.asset_key.to_user_string() == "vault_staging"
    meta = {k: v.value for k, v in staging.metadata.items()}
    assert meta["rejected"] == meta["items_refused"] == 7 and meta["published_notes"] == 23
    reasons = meta["refused_notes"]
    assert "not a regular file" in reasons["notes/pipe.md"]
    assert "YAML alias" in reasons["notes/bomb.md"]
    assert "nests deeper" in reasons["notes/deep.md"]
    assert "not valid UTF-8" in reasons["notes/caf\\xe9.md"]
    assert reasons["notes/latin1.md"] == "not UTF-8 text (invalid byte at offset 5)"
    assert reasons["notes/image.md"] == "binary content (NUL bytes) in a .md file"
    assert reasons["notes/huge.md"] == (
        "52,428,800 bytes, over the 1,000,000-byte limit for a note"
    )
    [check] = [c for c in result.get_asset_check_evaluations()
               if c.check_name == "vault_staging_refused_nothing"]  # fmt: skip
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    check_meta = {k: v.value for k, v in check.metadata.items()}
    assert check_meta["refused"] == 7 and check_meta["reasons"] == reasons
    assert pages.asset_key.to_user_string() == "recall_pages"
    assert pages.metadata["entities"].value == 23
    assert staged_notes(tmp_path / "data" / "vault_staging")


def test_an_unreadable_folder_or_note_is_refused_and_keeps_what_was_staged(tmp_path):
    """Root reads everything, so the run drops to an unprivileged user (as CI runs as root)."""
    top = Path(tempfile.mkdtemp(prefix="company-ai-vault-"))  # outside pytest's 0700 tmp
    top.chmod(0o777)
    vault = Path(shutil.copytree(SAMPLE_VAULT, top / "vault"))
    staging = top / "staging"
    stage_vault(vault, staging, day=DAY)
    subprocess.run(["chmod", "-R", "a+rwX", str(top)], check=True)
    (vault / "people").chmod(0o000)
    (vault / "systems" / "billing-platform.md").chmod(0o000)
    os.utime(vault / "systems" / "billing-platform.md", (1, 1))  # looks changed: must be read
    script = textwrap.dedent(f"""
        import json, os
        from company_ai.core.vault.staging import stage_vault
        os.setgid(65534); os.setuid(65534)
        result = stage_vault({str(vault)!r}, {str(staging)!r}, day="2026-11-30")
        print(json.dumps([result.rejected, result.deleted, len(result.staged)]))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )  # fmt: skip
    (vault / "people").chmod(0o755)
    rejected, deleted, staged = json.loads(done.stdout or "null") or (None, None, None)
    shutil.rmtree(top)
    assert done.returncode == 0, done.stderr
    assert rejected == {
        "people/": "unreadable folder (Permission denied)",
        "systems/billing-platform.md": "unreadable (Permission denied)",
    }
    assert deleted == [] and staged == 0  # the six people and the platform stay staged
