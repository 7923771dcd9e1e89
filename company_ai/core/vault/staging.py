"""The vault gate: what of the owner's Markdown vault may be read by anything else.

`stage_vault` walks the vault once and copies each publishable note that is new or changed
into the staging folder; nothing downstream reads the vault, only `<staging>/notes/` and
`<staging>/manifest.json`. A manifest of content hashes makes a rerun stage nothing when
nothing changed; a note that disappeared is removed from staging and recorded as deleted.

Never staged:
- private folders (by name, at any depth, with everything under them; the name compared
  by `folder_key`, so `Journal `, `JOURNAL`, `Jour\u200bnal` or `Journal.` is `journal`):
  nothing in them is read except to hash it; hidden folders (`.trash/`, `.obsidian/`,
  `.git/`) unless asked for; dot-files;
- whatever was private at the last run under another name (`_Memory.formerly_private`):
  a renamed private folder (the same directory by device and inode, or a new folder
  holding most of the note names of a private folder gone since, or a new folder holding
  a note that was private) is refused whole; a note moved out of a private folder (its
  content or its path was private) is refused alone. They are named by folder only and
  treated as private from then on: later edits and renames do not publish them;
- a note with the same content as a private note (a shared template): that note only, and
  only while the private note exists;
- anything it cannot stage safely, each refused with a reason while the rest go on:
  symlinks out of the vault or into a private folder, named pipes and devices, binary or
  non-UTF-8 text or file names, enormous files, broken, deeply nested or aliased front
  matter. A note staged before keeps its last good copy.

Privacy: the manifest and the log name public notes only. Private notes are remembered by
hashes of their paths, names, contents and folders, never by name.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import orjson
import yaml

from company_ai.core.bulk import cycle_collector_paused
from company_ai.core.crm import Tombstones
from company_ai.core.files import write_atomic
from company_ai.core.intake import Bounds, name_key, not_regular, read_regular

MANIFEST = "manifest.json"
NOTES = "notes"
# Present while a staging run writes: a crash leaves it, and the next run then sweeps the
# whole staging tree for half-written copies (an unchanged night walks no staged file).
WRITING = ".writing"
DEFAULT_PRIVATE_FOLDERS = ("private", "journal")
DEFAULT_MAX_NOTE_BYTES = 1_000_000
NOTE_SUFFIX = ".md"
BOM = b"\xef\xbb\xbf"
MAX_FRONT_MATTER_DEPTH = 50
TOO_DEEP = f"front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels"
SAME_AS_PRIVATE = "the same content as a note in a private folder"
INTO_PRIVATE = "a symlink into a private folder"
BAD_NAME = "the file name is not valid UTF-8"


class FrontMatterError(ValueError):
    """A note's front matter does not parse as a plain YAML mapping."""


# libyaml's loader (C) when PyYAML was built with it: a tenth of the pure-Python one's time,
# which was 40% of distilling a 10,000-note vault cold.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_front_matter(source: str) -> object:
    """Safe YAML without aliases (a 500-byte alias bomb expands to gigabytes once read) and
    without deep nesting (5,000 levels exhaust the composer's recursion). Both are refused
    from the parser's events (a flat loop) before anything is composed."""
    depth = 0
    try:
        for event in yaml.parse(source, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent):
                raise FrontMatterError("front matter uses a YAML alias (*name); a note needs none")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_FRONT_MATTER_DEPTH:
                    raise FrontMatterError(TOO_DEEP)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        # libyaml stops at 1,000 levels itself, reading ahead of the events
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):
            raise FrontMatterError(TOO_DEEP) from None
        raise
    return yaml.load(source, Loader=_LOADER)


def split_front_matter(text: str) -> tuple[dict, str]:
    """`(front matter, body)`; a note without a `---` block has an empty front matter."""
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return {}, text
    lines = text.splitlines(keepends=True)
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            try:
                meta = _load_front_matter("".join(lines[1:end])) or {}
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
    # folder -> notes refused there as private at the last run (the notes are never named)
    formerly_private: dict[str, int] = field(default_factory=dict)
    withdrawn: int = 0  # of those, notes that had been staged and were taken out again
    private_skipped: int = 0  # notes under private folders (counted, never named)
    hidden_folders: int = 0  # hidden folders not read
    ignored: int = 0  # files that are not notes (attachments)
    held_forgotten: int = 0  # notes naming a forgotten person: held back, never named

    @property
    def published(self) -> int:
        return self.unchanged + len(self.staged)


@dataclass
class _Folder:
    rel: str  # "" for the vault's root
    identity: str  # a hash of (device, inode): survives a rename, not a copy
    private: bool
    notes: list[os.DirEntry]
    links: list[str]  # symlinked subfolders, not followed; named only if the folder may be


@dataclass(eq=False, slots=True)  # compared by identity
class _Note:
    rel: str
    path: str  # a str, not a Path: building 100,000 Path objects costs a staging its time
    name: str
    problem: str | None = None
    stat: os.stat_result | None = None
    data: bytes | None = None  # None: unchanged since staged, not read
    sha256: str | None = None


@cycle_collector_paused()  # a walk makes a few small objects per note
def stage_vault(
    vault: str | Path,
    staging: str | Path,
    *,
    private_folders: tuple[str, ...] = DEFAULT_PRIVATE_FOLDERS,
    max_note_bytes: int = DEFAULT_MAX_NOTE_BYTES,
    include_hidden_folders: bool = False,
    day: str | None = None,
    log: Callable[[str], None] = lambda _: None,
    forgotten: Tombstones | None = None,
) -> StageResult:
    """Stage the vault's publishable notes that changed since the last run (see module)."""
    vault, staging = Path(vault), Path(staging)
    if not vault.is_dir():
        raise FileNotFoundError(f"no vault at {vault}: set COMPANY_AI_VAULT_DIR to your vault")
    root = vault.resolve()
    private = {key for key in map(folder_key, private_folders) if key}
    day = day or datetime.now(UTC).date().isoformat()
    leftovers = _remove_temporary_files(staging)
    writing = staging / WRITING
    manifest = read_manifest(staging)
    old_notes: dict[str, dict] = manifest["notes"]
    result = StageResult()
    folders, unreadable = _walk(vault, private, include_hidden_folders, result, log)

    memory = _Memory(manifest)
    for folder in folders:
        if folder.private:
            memory.remember_folder(folder)
            for entry in folder.notes:
                result.private_skipped += 1
                memory.remember_note(_join(folder.rel, entry.name), Path(entry.path),
                                     max_note_bytes)  # fmt: skip

    candidates: list[_Note] = []
    for folder in (f for f in folders if not f.private):
        folder_notes = [
            _read_note(folder.rel, entry, root, private, max_note_bytes, old_notes)
            for entry in folder.notes
        ]
        formerly = set(memory.formerly_private(folder, folder_notes))
        for note in formerly:
            memory.remember_refused(note)
            if note.rel in old_notes:
                (staging / NOTES / note.rel).unlink(missing_ok=True)
                result.withdrawn += 1
        if formerly:
            shown = _shown(f"{folder.rel}/" if folder.rel else "(vault root)")
            result.formerly_private[shown] = len(formerly)
            log(
                f"refused {shown}: {len(formerly)} notes that were private (a renamed or moved "
                "private folder?); add its name to COMPANY_AI_VAULT_PRIVATE_FOLDERS"
            )
        if not memory.is_private(folder):
            for link in folder.links:
                log(f"ignored symlinked folder {_shown(link)}/")
        candidates += [note for note in folder_notes if note not in formerly]

    target = staging / NOTES
    notes: dict[str, dict] = {}
    private_now = memory.present
    for note in candidates:
        rel, old = note.rel, old_notes.get(note.rel)
        if note.problem is None and note.sha256 in private_now:
            note.problem = SAME_AS_PRIVATE
        if note.problem:
            result.rejected[_shown(rel)] = note.problem
            continue
        if note.data is None:  # same size and mtime as staged: unchanged, not even read
            assert old is not None
            notes[rel] = old
            result.unchanged += 1
            continue
        try:
            text = _decode(note.data)
            meta, _ = split_front_matter(text)
        except ValueError as exc:
            result.rejected[rel] = str(exc)
            continue
        if forgotten and forgotten.names_in(text):
            result.held_forgotten += 1  # and, if it was staged, it leaves like a deleted note
            continue
        assert note.stat is not None
        notes[rel] = {
            "sha256": note.sha256,
            "size": note.stat.st_size,
            "mtime_ns": note.stat.st_mtime_ns,
            "touched": touched_day(meta, note.stat.st_mtime),
            "staged_on": old["staged_on"] if old and old["sha256"] == note.sha256 else day,
        }
        if old and old["sha256"] == note.sha256 and (target / rel).is_file():
            result.unchanged += 1  # touched but not changed
            continue
        _mark(writing)
        write_atomic(target / rel, text.encode("utf-8"), durable=False)
        result.staged.append(rel)

    refused: dict[str, dict] = {}
    # Only a refused note needs its hash here: one with a problem, or one read and found bad.
    shas = {_shown(n.rel): n.sha256 for n in candidates if n.problem or n.data is not None}
    for rel, reason in sorted(result.rejected.items()):
        # Keep the last good copy: an unreadable edit must not erase a published note.
        if rel in old_notes and rel not in notes and reason not in (SAME_AS_PRIVATE, INTO_PRIVATE):
            notes[rel] = old_notes[rel]
            reason += "; kept the last staged version"
        refused[rel] = {"reason": reason, "sha256": shas.get(rel)}
        log(f"rejected {rel}: {reason}")

    deleted = manifest["deleted"]
    kept = tuple(f"{folder}/" for folder in unreadable)
    for rel in sorted(set(old_notes) - set(notes) - memory.refused_paths):
        if rel.startswith(kept):  # a folder that could not be read is not a deleted one
            notes[rel] = old_notes[rel]
            continue
        (target / rel).unlink(missing_ok=True)
        deleted[rel] = {"deleted_on": day, "sha256": old_notes[rel]["sha256"]}
        result.deleted.append(rel)
    for rel in notes:
        deleted.pop(rel, None)
    if result.deleted or result.withdrawn or leftovers:
        _prune_empty_dirs(target)
    updated = memory.manifest() | {"notes": notes, "deleted": deleted, "refused": refused}
    if updated != manifest:  # an unchanged rerun writes nothing at all
        _mark(writing)
        write_manifest(staging, updated)
    writing.unlink(missing_ok=True)
    return result  # its counts are the asset's metadata: a log line each night would repeat them


class _Memory:
    """What was private at the last run, and what is private now: hashes only.

    `private`: path hash -> content hash, size and mtime of each note private at the last
    run (in a private folder, or refused as formerly private); `ever_private`: the hash of
    every path that was ever private; `private_folders`: folder path hash -> the folder's
    identity (device and inode) and the hashes of its notes' names."""

    def __init__(self, manifest: dict):
        self.old: dict[str, dict] = manifest["private"]
        self.old_folders: dict[str, dict] = manifest["private_folders"]
        self.ever: set[str] = set(manifest["ever_private"]) | set(self.old)
        self.notes: dict[str, dict] = {}
        self.folders: dict[str, dict] = {}
        self.known = {rel: e["sha256"] for rel, e in manifest["refused"].items()} | {
            rel: e["sha256"] for rel, e in manifest["notes"].items()
        }
        self.old_ids = {folder["id"] for folder in self.old_folders.values()}
        self.refused_paths: set[str] = set()
        self._gone: set[str] | None = None

    def remember_folder(self, folder: _Folder) -> None:
        self.folders[_key(folder.rel)] = {
            "id": folder.identity,
            "names": sorted(_key(entry.name) for entry in folder.notes),
        }

    def remember_note(self, rel: str, path: Path, max_bytes: int) -> None:
        """Hash a private note so its content is recognised elsewhere; keep no path."""
        key = _key(rel)
        self.ever.add(key)
        try:
            info = path.stat()
        except OSError:
            return
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= max_bytes:
            return  # an empty note holds nothing private, and would match every empty note
        prev = self.old.get(key)
        if prev and (prev["size"], prev["mtime_ns"]) == (info.st_size, info.st_mtime_ns):
            self.notes[key] = prev
            return
        try:
            digest = hashlib.sha256(
                read_regular(path, Bounds(max_bytes=max_bytes), follow_links=True)
            ).hexdigest()
        except (OSError, ValueError):
            return
        self.notes[key] = {"sha256": digest, "size": info.st_size, "mtime_ns": info.st_mtime_ns}

    @property
    def present(self) -> set[str]:
        """The contents private now (call once every folder is remembered)."""
        return {entry["sha256"] for entry in self.notes.values()}

    def formerly_private(self, folder: _Folder, notes: list[_Note]) -> list[_Note]:
        """The notes of a public folder that were private at the last run: all of them when
        the folder is a private one renamed, else those whose path was private or whose
        content was private and is not what this path held at the last run."""
        if self._gone is None:
            self._gone = {e["sha256"] for e in self.old.values()} - self.present
        moved = [
            note
            for note in notes
            if (note.rel not in self.known and _key(note.rel) in self.ever)
            or (note.sha256 in self._gone and self.known.get(note.rel) != note.sha256)
        ]
        is_new = notes and not any(note.rel in self.known for note in notes)
        if folder.identity in self.old_ids or (
            is_new and (moved or self._holds_names_of_a_gone_folder(notes))
        ):
            self.folders[_key(folder.rel)] = {
                "id": folder.identity,
                "names": sorted(_key(note.name) for note in notes),
            }
            return notes
        return moved

    def is_private(self, folder: _Folder) -> bool:
        """Whether the folder is private now (named so, or refused as a renamed one)."""
        return _key(folder.rel) in self.folders

    def _holds_names_of_a_gone_folder(self, notes: list[_Note]) -> bool:
        """Most of the notes of a private folder gone since the last run, under the same
        names (a rename replayed by a sync tool as copy and delete: new inodes)."""
        names = {_key(note.name) for note in notes}
        for key, folder in self.old_folders.items():
            if key in self.folders:
                continue  # still there: this is not it
            shared = len(names & set(folder["names"]))
            if shared and 2 * shared >= len(folder["names"]) and 2 * shared >= len(names):
                return True
        return False

    def remember_refused(self, note: _Note) -> None:
        key = _key(note.rel)
        self.ever.add(key)
        self.refused_paths.add(note.rel)
        if note.sha256 and note.stat:
            self.notes[key] = {
                "sha256": note.sha256,
                "size": note.stat.st_size,
                "mtime_ns": note.stat.st_mtime_ns,
            }

    def manifest(self) -> dict:
        return {
            "private": self.notes,
            "ever_private": sorted(self.ever),
            "private_folders": self.folders,
        }


def _walk(
    vault: Path,
    private: set[str],
    include_hidden: bool,
    result: StageResult,
    log: Callable[[str], None],
) -> tuple[list[_Folder], list[str]]:
    """Every folder of the vault with its note entries, in path order, and the public
    folders that could not be read. Symlinked folders are never followed (they may lead
    out of the vault) and not yet named (their folder may turn out to be private). No
    recursion: a vault nested 5,000 folders deep is walked like any other."""
    folders, unreadable = [], []
    pending = [(vault, "", False)]
    while pending:
        path, rel, is_private = pending.pop()
        try:
            identity = _key(f"inode:{(info := os.stat(path)).st_dev}:{info.st_ino}")
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if not rel:
                raise
            if not is_private:
                result.rejected[_shown(f"{rel}/")] = f"unreadable folder ({exc.strerror})"
                unreadable.append(rel)
            continue
        notes, links = [], []
        for entry in entries:
            child = _join(rel, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") and not include_hidden:
                    result.hidden_folders += not is_private
                else:
                    pending.append(
                        (Path(entry.path), child, is_private or folder_key(entry.name) in private)
                    )
            elif entry.is_symlink() and entry.is_dir():
                links.append(child)
            elif entry.name.startswith(".") or not entry.name.lower().endswith(NOTE_SUFFIX):
                result.ignored += not is_private
            else:
                notes.append(entry)
        folders.append(_Folder(rel, identity, is_private, notes, links))
    return sorted(folders, key=lambda f: f.rel), unreadable


def _read_note(
    folder: str, entry: os.DirEntry, root: Path, private: set[str], max_bytes: int,
    staged: dict[str, dict],
) -> _Note:  # fmt: skip
    """The note with its content hash (read only when size or mtime changed), or the
    reason it cannot be staged."""
    note = _Note(_join(folder, entry.name), entry.path, entry.name)
    note.problem, note.stat = _check(note.path, entry, root, private, max_bytes)
    if note.problem:
        return note
    assert note.stat is not None  # _check gives a stat whenever it finds no problem
    old = staged.get(note.rel)
    if old and (old["size"], old["mtime_ns"]) == (note.stat.st_size, note.stat.st_mtime_ns):
        note.sha256 = old["sha256"]
    else:
        try:
            note.data = read_regular(note.path, Bounds(max_bytes=max_bytes), follow_links=True)
        except OSError as exc:
            note.problem = f"unreadable ({exc.strerror})"
            return note
        except ValueError as exc:
            note.problem = str(exc)
            return note
        note.sha256 = hashlib.sha256(note.data).hexdigest()
    if not note.rel.isascii() and _shown(note.rel) != note.rel:
        note.problem = BAD_NAME  # after hashing: a private note renamed so is still known
    return note


def _check(
    path: str, entry: os.DirEntry, root: Path, private: set[str], max_bytes: int
) -> tuple[str | None, os.stat_result | None]:
    """(problem, stat); symlinks are resolved and re-gated."""
    if entry.is_symlink():
        real = Path(path).resolve()
        if not real.is_relative_to(root):
            return "a symlink to a file outside the vault", None
        if any(folder_key(part) in private for part in real.relative_to(root).parts[:-1]):
            return INTO_PRIVATE, None
    try:
        info = os.stat(path) if entry.is_symlink() else entry.stat(follow_symlinks=False)
    except OSError as exc:
        return f"unreadable ({exc.strerror})", None
    if why := not_regular(info):
        return why, None
    if info.st_size > max_bytes:
        return f"{info.st_size:,} bytes, over the {max_bytes:,}-byte limit for a note", None
    return None, info


def _decode(data: bytes) -> str:
    if b"\0" in data:
        raise ValueError("binary content (NUL bytes) in a .md file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None


@functools.lru_cache(maxsize=4096)  # once per folder name, not once per note
def folder_key(name: str) -> str:
    """A folder's name as the privacy rule compares it: `intake.name_key` (NFKC, case
    folded, invisible characters dropped, spaces trimmed), then accents dropped and
    trailing dots trimmed, so `Journal `, `JOURNAL`, `Ｊｏｕｒｎａｌ`, `Jour\u200bnal`,
    `Joúrnal` and `Journal.` (the same folder on Windows) are all the folder `journal`.
    Dropping accents may make a public folder private (`Privé`), never the reverse."""
    key = unicodedata.normalize("NFKD", name_key(name))
    key = "".join(c for c in key if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", key).rstrip(". ")


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _key(text: str) -> str:
    """The hash that stands for a private path, name or folder: the name never is kept."""
    return hashlib.sha256(os.fsencode(text)).hexdigest()


def _shown(text: str) -> str:
    """A path safe to log and store: bytes that are not UTF-8 shown as `\\xe9`."""
    return os.fsencode(text).decode("utf-8", "backslashreplace")


def _mark(writing: Path) -> None:
    if not writing.exists():
        writing.parent.mkdir(parents=True, exist_ok=True)
        writing.touch()


def _remove_temporary_files(staging: Path) -> int:
    """Delete what a crash between writing and renaming left (`.<name>.<random>.tmp`, see
    `write_atomic`): a stale copy may hold a note that has since gone private. The whole
    tree only after a run that did not finish writing (or on the first run); the staging
    folder itself always (a manifest written by another command, e.g. `forget`)."""
    tops: list[tuple[str, list[str], list[str]]]
    if not (staging / WRITING).exists() and (staging / MANIFEST).exists():
        tops = [(str(staging), [], os.listdir(staging))]
    else:
        tops = list(os.walk(staging))
    removed = 0
    for folder, _, files in tops:
        for name in files:
            if name.startswith(".") and name.endswith(".tmp"):
                Path(folder, name).unlink(missing_ok=True)
                removed += 1
    return removed


def manifest_digest(staging: str | Path) -> str:
    """The sha256 of the manifest as written ("" when there is none): any change to what is
    staged, by a night or by `forget`, changes it."""
    path = Path(staging) / MANIFEST
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def read_manifest(staging: str | Path) -> dict:
    path = Path(staging) / MANIFEST
    # orjson: a third of json's time on a big vault's manifest (read every night).
    manifest = orjson.loads(path.read_bytes()) if path.is_file() else {}
    for key in ("notes", "deleted", "private", "private_folders", "refused"):
        manifest.setdefault(key, {})
    manifest.setdefault("ever_private", [])
    return manifest


def write_manifest(staging: str | Path, manifest: dict) -> None:
    # orjson: a tenth of json's time, on every night that stages a change.
    raw = orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS)
    write_atomic(Path(staging) / MANIFEST, raw, durable=False)


def read_staged(staging: str | Path, rel: str) -> str:
    """The text of one staged note."""
    return (Path(staging) / NOTES / rel).read_text(encoding="utf-8")


def published_note(staging: str | Path, rel: str) -> str:
    """The staged copy of vault note `rel`, only while the gate lets it through: listed in
    the manifest's notes now, a regular file inside `<staging>/notes/` (no symlink, no
    `..`), its bytes those the manifest recorded. A note that is private, was made private
    since, was deleted or is being rewritten is a LookupError that names no content."""
    staging = Path(staging)
    entry = read_manifest(staging)["notes"].get(rel)
    top = (staging / NOTES).resolve()
    path = top / rel
    # No `..`, no absolute path, no symlinked folder: the file is exactly top/rel.
    if entry is None or ".." in Path(rel).parts or path.resolve() != path:
        raise LookupError(f"no published note {_shown(rel)!r}: it is not staged by the vault gate")
    try:
        data = read_regular(path, Bounds(max_bytes=DEFAULT_MAX_NOTE_BYTES * 2))
    except (OSError, ValueError):
        raise LookupError(f"the staged copy of {_shown(rel)!r} cannot be read") from None
    # The manifest hashes the note as read from the vault; staging drops a UTF-8 BOM.
    if entry["sha256"] not in {hashlib.sha256(b + data).hexdigest() for b in (b"", BOM)}:
        raise LookupError(
            f"the staged copy of {_shown(rel)!r} is being restaged: ask again after the vault job"
        )
    return data.decode("utf-8")


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
