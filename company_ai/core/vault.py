"""The vault gate: what of the owner's Markdown vault may be read by anything else.

`stage_vault` walks the vault once, drops every private folder (by name, at any depth,
with everything under it) before a single byte of it is read, refuses anything it cannot
stage safely (symlinks leaving the vault, binary or non-UTF-8 files, enormous files,
broken front matter, content last seen in a private folder), and copies each publishable
note that is new or changed into the staging folder. A manifest of content hashes makes
a rerun stage nothing when nothing changed; a note that disappeared is removed from the
staging folder and recorded as deleted. Nothing downstream reads the vault: only
`<staging>/notes/` and `<staging>/manifest.json`.

Privacy: the manifest and the log name public notes only. A private note is never
opened except to hash it (so that its content is recognised if it shows up under a
public name later); the hash is kept under a hash of its path, never the path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

import yaml

from company_ai.core.files import write_atomic

MANIFEST = "manifest.json"
NOTES = "notes"
DEFAULT_PRIVATE_FOLDERS = ("private", "journal")
DEFAULT_MAX_NOTE_BYTES = 1_000_000
NOTE_SUFFIX = ".md"
TAINTED = "in a folder holding notes last seen in a private folder"


class FrontMatterError(ValueError):
    """A note's front matter does not parse as a YAML mapping."""


def split_front_matter(text: str) -> tuple[dict, str]:
    """`(front matter, body)`; a note without a `---` block has an empty front matter."""
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return {}, text
    lines = text.splitlines(keepends=True)
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            try:
                meta = yaml.safe_load("".join(lines[1:end])) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark else ""
                raise FrontMatterError(f"front matter is not valid YAML{where}") from None
            if not isinstance(meta, dict):
                raise FrontMatterError("front matter is not a mapping of key: value")
            return meta, "".join(lines[end + 1 :])
    raise FrontMatterError("front matter opened with --- is never closed")


def touched_day(meta: dict, mtime: float) -> str:
    """When the note was last touched: its `updated:` front matter, else its file time."""
    value = meta.get("updated")
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip()[:10]).isoformat()
        except ValueError:
            pass
    return datetime.fromtimestamp(mtime, UTC).date().isoformat()


@dataclass
class StageResult:
    staged: list[str] = field(default_factory=list)  # new or changed, by vault path
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    rejected: dict[str, str] = field(default_factory=dict)  # public path -> reason
    private_skipped: int = 0  # notes under private folders (counted, never named)
    ignored: int = 0  # files that are not notes (attachments)

    @property
    def published(self) -> int:
        return self.unchanged + len(self.staged)


def stage_vault(
    vault: str | Path,
    staging: str | Path,
    *,
    private_folders: tuple[str, ...] = DEFAULT_PRIVATE_FOLDERS,
    max_note_bytes: int = DEFAULT_MAX_NOTE_BYTES,
    day: str | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> StageResult:
    """Stage the vault's publishable notes that changed since the last run (see module)."""
    vault, staging = Path(vault), Path(staging)
    if not vault.is_dir():
        raise FileNotFoundError(f"no vault at {vault}: set COMPANY_AI_VAULT_DIR to your vault")
    root = vault.resolve()
    private = {name.strip().lower() for name in private_folders if name.strip()}
    day = day or datetime.now(UTC).date().isoformat()
    manifest = read_manifest(staging)
    old_notes: dict[str, dict] = manifest["notes"]
    old_private: dict[str, dict] = manifest["private"]
    result = StageResult()
    notes: dict[str, dict] = {}
    # Private content is remembered after it moves or goes: a renamed private folder
    # must still be recognised (by hash; no path is kept).
    new_private: dict[str, dict] = dict(old_private)
    candidates: list[tuple[str, Path, os.DirEntry]] = []

    for rel_dir, entry in _scan(vault, PurePosixPath(), log):
        is_private = any(part.lower() in private for part in rel_dir.parts)
        rel = (rel_dir / entry.name).as_posix()
        if not entry.name.lower().endswith(NOTE_SUFFIX) or entry.name.startswith("."):
            result.ignored += not is_private
        elif is_private:
            result.private_skipped += 1
            _remember_private(Path(entry.path), rel, old_private, new_private)
        else:
            candidates.append((rel, Path(entry.path), entry))

    private_hashes = {entry["sha256"] for entry in new_private.values()}
    if result.private_skipped:
        log(f"skipped {result.private_skipped} notes in private folders (not named here)")
    tainted: set[str] = set()
    loaded: list[tuple[str, Path, os.stat_result, bytes | None]] = []
    for rel, path, dir_entry in candidates:
        problem, stat, data = _check(path, dir_entry, root, private, max_note_bytes)
        if problem:
            result.rejected[rel] = problem
            continue
        old = old_notes.get(rel)
        if (
            data is None
            and old
            and (old["size"], old["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns)
        ):
            if old["sha256"] in private_hashes:
                tainted.add(_folder_of(rel))
            loaded.append((rel, path, stat, None))
            continue
        try:
            data = data if data is not None else path.read_bytes()
        except OSError as exc:
            result.rejected[rel] = f"unreadable ({exc.strerror})"
            continue
        if hashlib.sha256(data).hexdigest() in private_hashes:
            tainted.add(_folder_of(rel))
        loaded.append((rel, path, stat, data))

    for folder in sorted(tainted):
        log(
            f"refused {folder}: it holds notes last seen in a private folder (renamed?); "
            "add its name to COMPANY_AI_VAULT_PRIVATE_FOLDERS or move the notes out"
        )
    target = staging / NOTES
    for rel, _path, stat, data in loaded:
        if rel in tainted or any(
            rel.startswith(folder) for folder in tainted if folder.endswith("/")
        ):
            result.rejected[rel] = TAINTED
            continue
        old = old_notes.get(rel)
        if data is None:  # same size and mtime as staged: unchanged, not even read
            notes[rel] = old
            result.unchanged += 1
            continue
        digest = hashlib.sha256(data).hexdigest()
        try:
            text = _decode(data)
            meta, _ = split_front_matter(text)
        except ValueError as exc:
            result.rejected[rel] = str(exc)
            continue
        entry = {
            "sha256": digest,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "touched": touched_day(meta, stat.st_mtime),
            "staged_on": old["staged_on"] if old and old["sha256"] == digest else day,
        }
        notes[rel] = entry
        if old and old["sha256"] == digest and (target / rel).is_file():
            result.unchanged += 1  # touched but not changed
            continue
        write_atomic(target / rel, text.encode("utf-8"), durable=False)
        result.staged.append(rel)

    for rel, reason in sorted(result.rejected.items()):
        if rel in old_notes and rel not in notes:
            # Keep the last good copy: an unreadable edit must not erase a published note.
            if "private" not in reason:
                notes[rel] = old_notes[rel]
                reason += "; kept the last staged version"
            else:
                (target / rel).unlink(missing_ok=True)
        if reason != TAINTED:  # those are named by folder only: their names were private
            log(f"rejected {rel}: {reason}")

    deleted = manifest["deleted"]
    for rel in sorted(set(old_notes) - set(notes)):
        (target / rel).unlink(missing_ok=True)
        deleted[rel] = {"deleted_on": day, "sha256": old_notes[rel]["sha256"]}
        result.deleted.append(rel)
    for rel in notes:
        deleted.pop(rel, None)
    _prune_empty_dirs(target)
    updated = {"notes": notes, "deleted": deleted, "private": new_private}
    if updated != manifest:  # an unchanged rerun writes nothing at all
        write_manifest(staging, updated)
    log(
        f"staged {len(result.staged)}, unchanged {result.unchanged}, deleted "
        f"{len(result.deleted)}, rejected {len(result.rejected)}, ignored {result.ignored}"
    )
    return result


def _folder_of(rel: str) -> str:
    """The folder to refuse when `rel` holds private content: its own, or itself at the root."""
    parent = str(PurePosixPath(rel).parent)
    return rel if parent == "." else parent + "/"


def _scan(
    top: Path, rel: PurePosixPath, log: Callable[[str], None]
) -> Iterator[tuple[PurePosixPath, os.DirEntry]]:
    """Every file under `top` in name order, as (folder relative to the vault, entry).
    Symlinked folders are never followed: they may lead out of the vault."""
    with os.scandir(top) as entries:
        ordered = sorted(entries, key=lambda e: e.name)
    for entry in ordered:
        if entry.is_dir(follow_symlinks=False):
            yield from _scan(Path(entry.path), rel / entry.name, log)
        elif entry.is_symlink() and Path(entry.path).is_dir():
            log(f"ignored symlinked folder {(rel / entry.name).as_posix()}/")
        else:
            yield rel, entry


def _check(
    path: Path, entry: os.DirEntry, root: Path, private: set[str], max_bytes: int
) -> tuple[str | None, os.stat_result | None, bytes | None]:
    """(problem, stat, bytes if they had to be read); symlinks are resolved and re-gated."""
    if entry.is_symlink():
        real = path.resolve()
        if not real.is_relative_to(root):
            return "a symlink to a file outside the vault", None, None
        if any(part.lower() in private for part in real.relative_to(root).parts[:-1]):
            return "a symlink into a private folder", None, None
    try:
        stat = path.stat() if entry.is_symlink() else entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"unreadable ({exc.strerror})", None, None
    if stat.st_size > max_bytes:
        return f"{stat.st_size:,} bytes, over the {max_bytes:,}-byte limit for a note", None, None
    return None, stat, None


def _decode(data: bytes) -> str:
    if b"\0" in data:
        raise ValueError("binary content (NUL bytes) in a .md file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


def _remember_private(path: Path, rel: str, old: dict, new: dict) -> None:
    """Hash a private note so its content is recognised elsewhere; store no path."""
    key = hashlib.sha256(rel.encode()).hexdigest()
    try:
        stat = path.stat()
    except OSError:
        return
    if stat.st_size == 0:
        return  # an empty note holds nothing private, and would match every empty note
    prev = old.get(key)
    if prev and (prev["size"], prev["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns):
        new[key] = prev
        return
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return
    new[key] = {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def read_manifest(staging: str | Path) -> dict:
    path = Path(staging) / MANIFEST
    if not path.is_file():
        return {"notes": {}, "deleted": {}, "private": {}}
    manifest = json.loads(path.read_text())
    for key in ("notes", "deleted", "private"):
        manifest.setdefault(key, {})
    return manifest


def write_manifest(staging: str | Path, manifest: dict) -> None:
    write_atomic(
        Path(staging) / MANIFEST, json.dumps(manifest, sort_keys=True).encode(), durable=False
    )


def staged_notes(staging: str | Path) -> dict[str, tuple[dict, str]]:
    """Every currently staged note: vault path -> (manifest entry, text)."""
    staging = Path(staging)
    notes = read_manifest(staging)["notes"]
    return {
        rel: (entry, (staging / NOTES / rel).read_text(encoding="utf-8"))
        for rel, entry in sorted(notes.items())
    }


def _prune_empty_dirs(top: Path) -> None:
    if not top.is_dir():
        return
    for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
        if Path(dirpath) != top and not any(Path(dirpath).iterdir()):
            shutil.rmtree(dirpath)


def staging_dir(data_dir: str | Path) -> Path:
    """Where the gate stages notes: beside the domain stores, never inside the vault."""
    return Path(data_dir) / "vault_staging"
