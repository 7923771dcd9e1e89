import os

from company_ai.core.vault import read_manifest, stage_vault
from company_ai.core.vault.distill import assign_titles, raw_title
from company_ai.core.vault.staging import folder_key, split_front_matter, staged_notes
from tests.conftest import PRIVATE_CANARY


def stage(vault, staging, logs=None, **kw):
    log = logs.append if logs is not None else (lambda _: None)
    return stage_vault(vault, staging, day="2026-11-29", log=log, **kw)


def all_text(folder):
    return "".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_the_sample_vault_stages_21_then_0_then_1_after_an_edit(vault, tmp_path):
    staging = tmp_path / "staging"
    assert len(stage(vault, staging).staged) == 21
    again = stage(vault, staging)
    assert again.staged == [] and again.unchanged == 21
    note = vault / "people" / "ben-harlow.md"
    note.write_text(note.read_text() + "- [status] Back from leave.\n")
    assert stage(vault, staging).staged == ["people/ben-harlow.md"]
    assert "Back from leave" in (staging / "notes" / "people" / "ben-harlow.md").read_text()


def test_a_touched_but_unchanged_note_is_not_restaged(vault, tmp_path):
    staging = tmp_path / "staging"
    stage(vault, staging)
    os.utime(vault / "notes" / "offsite-ideas.md", (1, 1))
    result = stage(vault, staging)
    assert result.staged == [] and result.unchanged == 21


def test_a_deleted_note_leaves_staging_and_is_recorded(vault, tmp_path):
    staging = tmp_path / "staging"
    stage(vault, staging)
    (vault / "notes" / "offsite-ideas.md").unlink()
    result = stage(vault, staging)
    assert result.deleted == ["notes/offsite-ideas.md"]
    assert not (staging / "notes" / "notes").exists()
    assert read_manifest(staging)["deleted"]["notes/offsite-ideas.md"]["deleted_on"] == "2026-11-29"
    assert stage(vault, staging).deleted == []


def test_private_folders_at_any_depth_are_never_staged_named_or_logged(vault, tmp_path):
    staging, logs = tmp_path / "staging", []
    result = stage(vault, staging, logs)
    assert result.private_skipped == 4
    assert PRIVATE_CANARY not in all_text(staging)
    assert not any("private" in rel or "journal" in rel for rel in staged_notes(staging))
    manifest = (staging / "manifest.json").read_text()
    assert "salary" not in manifest and "journal/" not in manifest and "legal" not in manifest
    assert not any("salary" in line or "legal" in line for line in logs)


def test_private_folder_names_are_configurable(vault, tmp_path):
    result = stage(vault, tmp_path / "staging", private_folders=("people",))
    assert result.private_skipped == 6
    assert not any(rel.startswith("people/") for rel in staged_notes(tmp_path / "staging"))
    assert any(rel.startswith("journal/") for rel in staged_notes(tmp_path / "staging"))


def test_broken_front_matter_is_refused_and_the_last_good_copy_kept(vault, tmp_path):
    staging, logs = tmp_path / "staging", []
    stage(vault, staging)
    note = vault / "people" / "dev-patel.md"
    note.write_text("---\ntitle: [Dev Patel\n---\nbroken\n")
    (vault / "notes" / "unclosed.md").write_text("---\ntitle: Never closed\nbody\n")
    result = stage(vault, staging, logs)
    assert "not valid YAML" in result.rejected["people/dev-patel.md"]
    assert "never closed" in result.rejected["notes/unclosed.md"]
    assert "Dev Patel runs customer support" in staged_notes(staging)["people/dev-patel.md"][1]
    assert any("rejected people/dev-patel.md" in line and "kept" in line for line in logs)


def test_binary_non_utf8_and_enormous_notes_are_refused_with_a_reason(vault, tmp_path):
    (vault / "notes" / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (vault / "notes" / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))
    (vault / "notes" / "huge.md").write_text("x" * 2_000)
    (vault / "notes" / "photo.png").write_bytes(b"\x89PNG")
    logs = []
    result = stage(vault, tmp_path / "staging", logs, max_note_bytes=1_000)
    assert "binary" in result.rejected["notes/binary.md"]
    assert "not UTF-8" in result.rejected["notes/latin1.md"]
    assert "over the 1,000-byte limit" in result.rejected["notes/huge.md"]
    assert result.ignored == 1 and len(result.staged) == 21
    assert sum(line.startswith("rejected ") for line in logs) == 3


def test_symlinks_out_of_the_vault_or_into_a_private_folder_are_refused(vault, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret from elsewhere")
    (vault / "notes" / "escape.md").symlink_to(outside)
    (vault / "notes" / "peek.md").symlink_to(vault / "private" / "salary-review.md")
    (vault / "linked").symlink_to(tmp_path, target_is_directory=True)
    (vault / "notes" / "dangling.md").symlink_to(vault / "notes" / "missing.md")
    result = stage(vault, tmp_path / "staging")
    assert result.rejected["notes/dangling.md"] == "unreadable (No such file or directory)"
    assert len(result.staged) == 21
    assert "outside the vault" in result.rejected["notes/escape.md"]
    assert "private folder" in result.rejected["notes/peek.md"]
    assert PRIVATE_CANARY not in all_text(tmp_path / "staging")
    assert "secret from elsewhere" not in all_text(tmp_path / "staging")


def test_a_private_folder_renamed_to_a_public_name_is_not_staged(vault, tmp_path):
    staging, logs = tmp_path / "staging", []
    stage(vault, staging)
    (vault / "journal").rename(vault / "diary-2026")
    (vault / "diary-2026" / "new-entry.md").write_text("quartzheron today was fine\n")
    result = stage(vault, staging, logs)
    assert result.staged == [] and result.rejected == {}
    assert result.formerly_private == {"diary-2026/": 3}
    assert PRIVATE_CANARY not in all_text(staging)
    assert any("refused diary-2026/" in line for line in logs)
    assert not any("health" in line or "new-entry" in line for line in logs)


def test_duplicate_titles_in_different_folders_both_survive(vault, tmp_path):
    (vault / "projects" / "budget.md").write_text("# Budget\n\nThe project budget.\n")
    (vault / "context" / "budget.md").write_text("# Budget\n\nThe company budget.\n")
    stage(vault, tmp_path / "staging")
    logs = []
    notes = {p: raw_title(p, t) for p, (_, t) in staged_notes(tmp_path / "staging").items()}
    titles = assign_titles(notes, logs.append)
    assert titles["projects/budget.md"] == "Budget (projects)"
    assert titles["context/budget.md"] == "Budget (context)"
    assert len(set(titles.values())) == len(titles) == 23
    assert len(logs) == 2


def test_front_matter_is_split_from_the_body():
    meta, body = split_front_matter("---\ntitle: A\ntags: [x]\n---\n# A\n")
    assert meta == {"title": "A", "tags": ["x"]} and body == "# A\n"
    assert split_front_matter("# No front matter\n") == ({}, "# No front matter\n")


def test_the_private_folders_setting_is_compared_as_the_folders_are(vault, tmp_path):
    """The setting spelt oddly names the same folders: `ＰＲＩＶＡＴＥ.` is `private`."""
    plain = stage_vault(vault, tmp_path / "plain", day="2026-11-28")
    odd = stage_vault(
        vault, tmp_path / "odd", private_folders=(" ＰＲＩＶＡＴＥ. ", "Jour\u200bnal\u00a0"),
        day="2026-11-28",
    )  # fmt: skip
    assert odd.staged == plain.staged and odd.private_skipped == plain.private_skipped > 0
    assert folder_key("Jou\u0301rnal. ") == folder_key("JOURNAL") == "journal"
