"""The vault gate under a hostile owner: renamed and copied private folders, shared
templates, hidden folders and crash leftovers must never publish what was private."""

import shutil

import dagster as dg
import pytest

from company_ai.core.store import Stores
from company_ai.core.vault import distill_staging, offline_page, read_manifest, stage_vault
from company_ai.core.vault.staging import WRITING, staged_notes
from company_ai.resources.embedder import Embedder
from company_ai.resources.llm import LLMResource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from company_ai.settings import Settings
from tests.conftest import PRIVATE_CANARY, fixed_clock
from tests.hostile.canary import find_canary
from tests.setup import SETUP, named

VAULT_NIGHT = named("vault_staging")  # staging, pages and index: one multi-asset

DAY1, DAY2, DAY3 = "2026-11-28", "2026-11-29", "2026-11-30"
TEMPLATE = "# Meeting Template\n\n- [status] Who came:\n- [decision] What we decided:\n"


def stage(vault, staging, logs=None, day=DAY1, **kw):
    log = logs.append if logs is not None else (lambda _: None)
    return stage_vault(vault, staging, day=day, log=log, **kw)


def distill(stores, staging, day=DAY1):
    with stores.connect("recall") as conn:
        return distill_staging(
            conn, str(staging), day=day, distill=lambda t, p, text: offline_page(p, text),
            source="model:offline", clock=fixed_clock(),
        )  # fmt: skip


def titles(stores):
    with stores.connect("recall") as conn:
        return {r[0] for r in conn.execute("SELECT title FROM pages")}


def edit(path, extra="\nEdited after the move; links rewritten.\n"):
    path.write_text(path.read_text().replace("[[", "[[clients/") + extra)


def test_a_renamed_private_folder_with_an_edited_note_is_refused_and_stays_refused(vault, tmp_path):
    staging, logs = tmp_path / "staging", []
    stage(vault, staging)
    (vault / "clients" / "private").rename(vault / "clients" / "legal")
    edit(vault / "clients" / "legal" / "signalcrest-legal.md")
    (vault / "clients" / "legal" / "new-claim.md").write_text(f"{PRIVATE_CANARY} new claim\n")
    result = stage(vault, staging, logs, day=DAY2)
    assert result.formerly_private == {"clients/legal/": 2}
    assert result.staged == [] and result.rejected == {}
    assert not any(rel.startswith("clients/legal") for rel in staged_notes(staging))
    assert find_canary(PRIVATE_CANARY, staging) == []
    assert any(line.startswith("refused clients/legal/:") for line in logs)
    assert not any("signalcrest-legal" in line or "new-claim" in line for line in logs)
    # The next night, after another edit and another rename, it is still refused.
    (vault / "clients" / "legal").rename(vault / "clients" / "counsel")
    edit(vault / "clients" / "counsel" / "signalcrest-legal.md", "\nAnother edit.\n")
    again = stage(vault, staging, day=DAY3)
    assert again.formerly_private == {"clients/counsel/": 2} and again.staged == []
    assert find_canary(PRIVATE_CANARY, staging) == []


def test_a_renamed_private_folder_is_refused_by_its_identity_when_every_note_changed(
    vault, tmp_path
):
    staging = tmp_path / "staging"
    stage(vault, staging)
    (vault / "journal").rename(vault / "diary")
    for number, note in enumerate(sorted((vault / "diary").iterdir())):
        note.rename(vault / "diary" / f"entry-{number}.md")
        edit(vault / "diary" / f"entry-{number}.md")
    result = stage(vault, staging, day=DAY2)
    assert result.formerly_private == {"diary/": 2} and result.staged == []
    assert find_canary(PRIVATE_CANARY, staging) == []


def test_a_private_folder_renamed_by_a_sync_tool_with_new_inodes_is_refused(vault, tmp_path):
    staging = tmp_path / "staging"
    stage(vault, staging)
    # A sync tool replays a rename as copy + delete: new inodes for the folder and notes.
    shutil.copytree(vault / "journal", vault / "diary")
    shutil.rmtree(vault / "journal")
    for note in (vault / "diary").iterdir():
        edit(note)
    result = stage(vault, staging, day=DAY2)
    assert result.formerly_private == {"diary/": 2} and result.staged == []
    assert find_canary(PRIVATE_CANARY, staging) == []


def test_a_private_note_moved_over_a_published_note_is_withdrawn_from_staging_and_recall(
    vault, tmp_path, stores
):
    staging = tmp_path / "staging"
    stage(vault, staging)
    distill(stores, staging)
    assert "Offsite Ideas" in titles(stores)
    (vault / "private" / "salary-review.md").replace(vault / "notes" / "offsite-ideas.md")
    result = stage(vault, staging, day=DAY2)
    assert result.formerly_private == {"notes/": 1} and result.withdrawn == 1
    assert not (staging / "notes" / "notes").exists()  # its staged copy is gone too
    assert "notes/offsite-ideas.md" not in read_manifest(staging)["deleted"]  # never named
    distill(stores, staging, day=DAY2)
    assert "Offsite Ideas" not in titles(stores) and "Salary Review" not in titles(stores)
    assert find_canary(PRIVATE_CANARY, staging, stores.data_dir) == []
    # Edited in place the next night, the note is still refused by its path.
    note = vault / "notes" / "offsite-ideas.md"
    note.write_text(note.read_text() + "\nA later edit.\n")
    assert stage(vault, staging, day=DAY3).formerly_private == {"notes/": 1}
    assert find_canary(PRIVATE_CANARY, staging) == []


def test_a_public_copy_of_a_private_template_refuses_only_itself_and_recovers(vault, tmp_path):
    staging = tmp_path / "staging"
    (vault / "private" / "meeting-template.md").write_text(TEMPLATE)
    (vault / "projects" / "meeting-template.md").write_text(TEMPLATE)
    first = stage(vault, staging)
    assert first.rejected == {
        "projects/meeting-template.md": "the same content as a note in a private folder"
    }
    assert len(first.staged) == 21 and first.formerly_private == {}
    assert stage(vault, staging).rejected == first.rejected  # stable while the cause stays
    (vault / "private" / "meeting-template.md").unlink()
    recovered = stage(vault, staging, day=DAY2)
    assert recovered.staged == ["projects/meeting-template.md"] and recovered.rejected == {}


def test_a_published_note_copied_into_a_private_folder_leaves_staging_and_recall(
    vault, tmp_path, stores
):
    staging = tmp_path / "staging"
    stage(vault, staging)
    distill(stores, staging)
    shutil.copy(vault / "projects" / "soc2-audit.md", vault / "private" / "soc2-audit.md")
    result = stage(vault, staging, day=DAY2)
    assert result.rejected == {
        "projects/soc2-audit.md": "the same content as a note in a private folder"
    }
    assert result.deleted == ["projects/soc2-audit.md"]
    assert not (staging / "notes" / "projects" / "soc2-audit.md").exists()
    assert distill(stores, staging, day=DAY2).removed == ["SOC 2 Audit"]
    assert len(titles(stores)) == 20
    # The private copy gone, the public note (never re-read: unchanged) publishes again.
    (vault / "private" / "soc2-audit.md").unlink()
    recovered = stage(vault, staging, day=DAY3)
    assert recovered.staged == ["projects/soc2-audit.md"] and recovered.rejected == {}


def test_hidden_folders_are_ignored_unless_asked_for(vault, tmp_path):
    (vault / ".trash").mkdir()
    (vault / ".trash" / "deleted-note.md").write_text("# Deleted\n\nThrown away on purpose.\n")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "workspace.md").write_text("# Workspace\n\nEditor state.\n")
    (vault / "notes" / ".git").mkdir()
    (vault / "notes" / ".git" / "readme.md").write_text("# Git\n\nRepository internals.\n")
    result = stage(vault, tmp_path / "staging")
    assert len(result.staged) == 21 and result.hidden_folders == 3
    assert not any("/." in f"/{rel}" for rel in staged_notes(tmp_path / "staging"))
    included = stage(vault, tmp_path / "staging-hidden", include_hidden_folders=True)
    assert {".trash/deleted-note.md", ".obsidian/workspace.md", "notes/.git/readme.md"} <= set(
        included.staged
    )


def test_the_hidden_folders_setting_is_true_or_false():
    def hidden(value: str | None) -> bool:
        env = {"COMPANY_AI_START_DATE": "2025-01-01"}
        env |= {"COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS": value} if value is not None else {}
        return Settings.from_env(env).vault_include_hidden_folders

    assert hidden(" True ") is True
    assert hidden(None) is False
    with pytest.raises(ValueError, match="must be true or false, not 'yes please'"):
        hidden("yes please")


def test_staging_removes_its_own_temporary_files_left_by_a_crash(vault, tmp_path):
    staging = tmp_path / "staging"
    stage(vault, staging)
    # A crash between writing and renaming leaves `.<name>.<random>.tmp` beside the target.
    leftovers = [
        staging / "notes" / "clients" / ".signalcrest.md.k2j3h4.tmp",
        staging / ".manifest.json.x9y8z7.tmp",
    ]
    for path in leftovers:
        path.write_text(f"{PRIVATE_CANARY} half-written copy\n")
    (staging / WRITING).touch()  # what the crashed run left: it was writing
    result = stage(vault, staging, day=DAY2)
    assert not any(path.exists() for path in leftovers)
    assert result.staged == [] and find_canary(PRIVATE_CANARY, staging) == []
    assert not (staging / WRITING).exists()


def test_a_staging_run_killed_while_writing_is_swept_by_the_next(vault, tmp_path, monkeypatch):
    from company_ai.core.vault import staging as core_vault

    staging = tmp_path / "staging"
    stage(vault, staging)
    (vault / "clients" / "signalcrest.md").write_text(f"# Signalcrest\n\n{PRIVATE_CANARY}\n")
    half = staging / "notes" / "clients" / ".signalcrest.md.k2j3h4.tmp"

    def killed(path, data, durable=True):
        half.write_bytes(data)  # written, never renamed
        raise KeyboardInterrupt

    monkeypatch.setattr(core_vault, "write_atomic", killed)
    with pytest.raises(KeyboardInterrupt):
        stage(vault, staging, day=DAY2)
    monkeypatch.undo()
    assert (staging / WRITING).exists() and half.exists()
    (vault / "clients" / "signalcrest.md").write_text("# Signalcrest\n\nno longer\n")
    stage(vault, staging, day=DAY2)
    assert not half.exists() and not (staging / WRITING).exists()
    assert find_canary(PRIVATE_CANARY, staging) == []


def test_names_in_a_renamed_private_folder_never_reach_the_log_even_when_refused(vault, tmp_path):
    staging, logs = tmp_path / "staging", []
    stage(vault, staging)
    (vault / "journal").rename(vault / "diary-2026")
    (vault / "diary-2026" / "therapy-notes.md").write_text("x" * 2_000)  # over the limit
    (vault / "diary-2026" / "therapy-out.md").symlink_to(tmp_path / "missing.md")
    (vault / "diary-2026" / "therapy-folder").symlink_to(tmp_path)  # a folder: not followed
    (vault / "diary-2026" / "2026-11-01.md").write_bytes(b"\xff\xfe binary edit")
    result = stage(vault, staging, logs, day=DAY2, max_note_bytes=1_000)
    assert result.formerly_private == {"diary-2026/": 4} and result.rejected == {}
    assert any(line.startswith("refused diary-2026/:") for line in logs)
    for name in ("therapy", "2026-11-01", "health"):
        assert not any(name in line for line in logs), name
    assert "therapy" not in (staging / "manifest.json").read_text()


def test_a_renamed_private_folder_leaves_no_trace_in_any_store_log_or_run(tmp_path, vault):
    """The canary is in a private note's name and text; the folder is renamed and the note
    edited; the whole vault graph runs twice; no file under the data directory or
    DAGSTER_HOME holds it, and the refusal shows as a warning check."""
    canary = "vexillumbrae"
    (vault / "clients" / "private" / f"{canary}-settlement.md").write_text(
        f"# Settlement\n\n{canary}: we settle at 9,000 pounds.\n"
    )
    home, data = tmp_path / "dagster_home", tmp_path / "data"
    home.mkdir()
    res = {
        "stores": StoresResource(data_dir=str(data)),
        "vault": VaultResource(path=str(vault)),
        "llm": LLMResource(),
        "embedder": Embedder(),
    }
    day = SETUP.daily.get_last_partition_key()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        first = dg.materialize([VAULT_NIGHT], selection=["vault_staging"], partition_key=day,
                               resources=res, instance=instance)  # fmt: skip
        assert first.success
        (vault / "clients" / "private").rename(vault / "clients" / "legal")
        edit(vault / "clients" / "legal" / f"{canary}-settlement.md")
        second = dg.materialize(
            [VAULT_NIGHT], partition_key=day, resources=res,
            instance=instance,
        )  # fmt: skip
        assert second.success
        checks = {c.check_name: c for c in second.get_asset_check_evaluations()}
        refused = checks["vault_staging_refused_nothing"]
        assert not refused.passed and refused.severity == dg.AssetCheckSeverity.WARN
        meta = {k: v.value for k, v in refused.metadata.items()}
        assert meta["formerly_private_notes"] == 2 and "clients/legal/" in meta["folders"]
        events = instance.all_logs(second.run_id)
        assert not any(canary in str(e) or "settlement" in str(e) for e in events)
    assert find_canary(canary, data, home) == []
    assert find_canary(PRIVATE_CANARY, data, home) == []
    with Stores(data).connect("recall") as conn:
        assert conn.execute("SELECT count(*) FROM entities").fetchone()[0] == 21


def test_no_spelling_of_a_private_folder_publishes_anything(tmp_path, vault):
    """Every spelling of tests/hostile/vault_names/names.json (trailing space, NBSP,
    full-width, accents, zero-width characters, a trailing dot, nested, linked) is private:
    the whole vault night runs and no file under the data directory or DAGSTER_HOME holds
    any of their text; the public notes all publish, and only the two links are refused."""
    from tests.hostile.vault_names import recipe

    baseline = stage_vault(vault, tmp_path / "baseline", day=DAY1).private_skipped
    cases = recipe.build(vault)
    home, data = tmp_path / "dagster_home", tmp_path / "data"
    home.mkdir()
    res = {
        "stores": StoresResource(data_dir=str(data)),
        "vault": VaultResource(path=str(vault)),
        "llm": LLMResource(),
        "embedder": Embedder(),
    }
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        result = dg.materialize([VAULT_NIGHT], partition_key=SETUP.daily.get_last_partition_key(),
                                resources=res, instance=instance)  # fmt: skip
        assert result.success
        events = " ".join(str(e) for e in instance.all_logs(result.run_id))
    staging = result.asset_materializations_for_node("vault_night")[0]
    meta = {k: v.value for k, v in staging.metadata.items()}
    leaked = [c.path for c in cases if find_canary(c.token, data, home)]
    assert leaked == [], leaked
    assert find_canary(recipe.CANARY, data, home) == []
    assert recipe.CANARY not in events and not any(c.token in events for c in cases)
    assert meta["private_skipped"] == baseline + len(cases)
    assert meta["refused_notes"] == {
        "notes/linked-secret.md": "a symlink into a private folder",
        "notes/hard-linked.md": "the same content as a note in a private folder",
    }
    assert meta["published_notes"] == 21
    with Stores(data).connect("recall") as conn:
        assert conn.execute("SELECT count(*) FROM entities").fetchone()[0] == 21
        assert conn.execute("SELECT count(*) FROM search_docs").fetchone()[0] == 21
