"""The distiller: one recall page per staged note, idempotent by title.

A page has one shape (`Page`): a type, tags, a recall paragraph written for a reader with
no context, tagged observations and typed relations. A model proposes it (the caller
passes `distill`, e.g. the LLM resource with `offline_page` as its offline answer); code
decides: the fabrication gate (`page_verdict`) runs on the rendered page against its
note, and a page that fails is kept unpublished with the claims it could not support.
Pages are written one transaction each, so a run that dies keeps what it finished; then
the entities (what recall reads) are brought in line with the published pages, touching
only those that differ, so deletions are honoured. A night's work is what changed: an
unchanged note is not read, distilled or re-checked again.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain, count
from operator import itemgetter
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from company_ai.core.bulk import cycle_collector_paused
from company_ai.core.gate import GateVerdict, judge
from company_ai.core.recall import PAGES_MARK, STALE_CATEGORIES, read_mark, set_mark
from company_ai.core.store import transaction
from company_ai.core.store.db import indexed_by
from company_ai.core.times import to_iso
from company_ai.core.vault.staging import (
    FrontMatterError,
    manifest_digest,
    read_manifest,
    read_staged,
    split_front_matter,
)

TYPES = ("person", "anchor", "thread", "context", "note")
CATEGORIES = ("context", "decision", "pattern", "constraint", "status", "goal")
RELATIONS = ("part_of", "depends_on", "relates_to", "maintains")
# Bumped when the offline extraction or the page shape changes: every page is redone.
DISTILLER_VERSION = "2"

RECALL_MAX = 3000
OBSERVATION_MAX = 1000
TARGET_MAX = 200
MAX_TAGS = 20
MAX_LINES = 60  # observations, and relations

PageType = Literal[TYPES]  # type: ignore[valid-type]
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
RelationType = Literal[RELATIONS]  # type: ignore[valid-type]


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else cut at a word and ended with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def _shortened(limit: int) -> BeforeValidator:
    """Over-long prose is published shortened, never refused: a note is not lost for it."""
    return BeforeValidator(lambda v: shorten(v, limit) if isinstance(v, str) else v)


class Observation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: Category
    text: Annotated[str, _shortened(OBSERVATION_MAX), Field(min_length=1, max_length=1000)]


class Relation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    relation: RelationType
    target: str = Field(min_length=1, max_length=TARGET_MAX)


class Page(BaseModel):
    """What the model writes for one note (the title, provenance and dates are code's)."""

    model_config = ConfigDict(extra="forbid")
    type: PageType
    tags: list[str] = Field(default_factory=list, max_length=MAX_TAGS)
    recall: Annotated[str, _shortened(RECALL_MAX), Field(min_length=1, max_length=RECALL_MAX)]
    observations: list[Observation] = Field(default_factory=list, max_length=MAX_LINES)
    relations: list[Relation] = Field(default_factory=list, max_length=MAX_LINES)


SYSTEM_PROMPT = """You distil one Markdown note into a recall page for assistants.
Write `recall` for a reader with no context: first what this is, then how to help usefully.
Observations: short facts from the note, each tagged context, decision, pattern, constraint,
status or goal. Relations: part_of, depends_on, relates_to or maintains, to titles the note
links with [[...]]. Type: person, anchor (a stable thing others hang off: a system, a client),
thread (ongoing work), context (background, a policy) or note.
Use only names and numbers that appear in the note; never add any."""

_FOLDER_TYPES = {
    "people": "person",
    "person": "person",
    "systems": "anchor",
    "clients": "anchor",
    "products": "anchor",
    "projects": "thread",
    "threads": "thread",
    "context": "context",
    "policies": "context",
}
_HEADING_CATEGORIES = {
    "status": "status",
    "goals": "goal",
    "goal": "goal",
    "decisions": "decision",
    "decision": "decision",
    "constraints": "constraint",
    "rules": "constraint",
    "patterns": "pattern",
    "habits": "pattern",
}
_CUES = (
    ("constraint", r"\b(must|never|only|at most|no more than|needs?|caps?|limit)\b"),
    ("decision", r"\b(decided|chose|agreed|dropped)\b"),
    ("goal", r"\b(goal|aim|target|by (the end of )?(january|february|march|april|q\d))\b"),
    ("status", r"\b(waiting|currently|in progress|negotiating|blocked|now)\b"),
    ("pattern", r"\b(usually|always|prefers?|likes?|often|mostly|every)\b"),
)
_RELATION_CUES = (
    ("maintains", r"\b(maintains?|owns?|looks after|runs)\b"),
    ("depends_on", r"\b(depends on|relies on|built on|runs on|on top of)\b"),
    ("part_of", r"\b(part of|belongs to|within)\b"),
)
_LINK = re.compile(r"\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_EXPLICIT_CATEGORY = re.compile(r"^\[(\w+)\]\s*(.+)$")
_EXPLICIT_RELATION = re.compile(r"^(\w+)\s+\[\[([^\]]+)\]\]\s*$")


def note_title(path: str, meta: dict, body: str) -> str:
    """The note's own title: front matter `title`, else its first `# ` heading, else its name."""
    if isinstance(meta.get("title"), str) and meta["title"].strip():
        return meta["title"].strip()
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return PurePosixPath(path).stem.replace("-", " ").replace("_", " ").strip().title()


def raw_title(path: str, text: str) -> str:
    """The title a note gives itself (before duplicates are told apart)."""
    try:
        meta, body = split_front_matter(text)
    except FrontMatterError:
        meta, body = {}, text
    return note_title(path, meta, body)


def assign_titles(
    raw: dict[str, str],
    log: Callable[[str], None] = lambda _: None,
    previous: dict[str, str] | None = None,
) -> dict[str, str]:
    """Vault path -> page title, unique (ignoring case) and stable, so no note silently
    overwrites or renames another's page. `raw`: path -> the note's own title
    (`raw_title`); `previous`: path -> the title its page has.

    A note keeps the title its page already has while its own title is unchanged (a
    newcomer never renames an existing page); a title no other note shares is used as
    written; a shared one is qualified with the folder (`Budget (finance)`), then the path
    (`Budget (finance/budget-2)`), then a number."""
    raw = dict(sorted(raw.items()))
    counts = Counter(title.lower() for title in raw.values())
    titles: dict[str, str] = {}
    taken: set[str] = set()

    def claim(path: str, title: str) -> None:
        titles[path] = title
        taken.add(title.lower())

    for path, title in raw.items():
        kept = (previous or {}).get(path)
        if kept and (kept == title or kept.startswith(f"{title} (")) and kept.lower() not in taken:
            claim(path, kept)
    for path, title in raw.items():
        if path not in titles and counts[title.lower()] == 1 and title.lower() not in taken:
            claim(path, title)
    for path, title in raw.items():
        if path in titles:
            continue
        folder = PurePosixPath(path).parent.as_posix()
        by_path = f"{title} ({PurePosixPath(path).with_suffix('').as_posix()})"
        options = chain(
            [f"{title} ({folder})"] if folder != "." else [],
            [by_path],
            (f"{by_path} {number}" for number in count(2)),
        )
        claim(path, next(option for option in options if option.lower() not in taken))
        log(f"duplicate title {title!r}: {path} is published as {titles[path]!r}")
    return titles


def offline_page(path: str, text: str) -> Page:
    """The deterministic distiller: the page read off the note's own structure."""
    meta, body = split_front_matter(text)
    kind = meta.get("type") if meta.get("type") in TYPES else None
    folders = [p.lower() for p in PurePosixPath(path).parts[:-1]]
    kind = kind or next((_FOLDER_TYPES[f] for f in folders if f in _FOLDER_TYPES), "note")
    tags = meta.get("tags") or []
    tags = [str(t) for t in (tags if isinstance(tags, list) else [tags])]

    paragraphs: list[str] = []
    observations: list[Observation] = []
    relations: list[Relation] = []
    heading, current = None, []
    for line in body.splitlines() + [""]:
        bullet = _BULLET.match(line)
        if line.startswith("#"):
            heading = line.lstrip("#").strip().lower()
        elif bullet:
            _read_bullet(bullet.group(1).strip(), heading, observations, relations)
        elif line.strip():
            current.append(line.strip())
            continue
        if current:
            paragraphs.append(" ".join(current))
            current = []
    related = {r.target for r in relations}  # an explicit relation wins over a prose link
    for paragraph in paragraphs:
        for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
            for target in (t.strip() for t in _LINK.findall(sentence)):
                if target not in related and _linkable(target):
                    related.add(target)
                    relation = _cue(sentence, _RELATION_CUES, "relates_to")
                    relations.append(Relation(relation=relation, target=target))
    observations, relations = observations[:MAX_LINES], relations[:MAX_LINES]
    first = _plain(paragraphs[0]) if paragraphs else _plain(f"{kind} note")
    hint = ""
    constraint = next((o.text for o in observations if o.category == "constraint"), None)
    goal = next((o.text for o in observations if o.category == "goal"), None)
    if constraint:
        hint += f" To help usefully, keep this in mind: {_lower_first(constraint)}"
    if goal:
        hint += f" The goal: {_lower_first(goal)}"
    if not constraint and not goal:
        hint += " To help usefully, read its observations below before acting on it."
    # A very long first paragraph is shortened, keeping the hint: the page is still published.
    recall = shorten(first, RECALL_MAX - len(hint)) + hint
    return Page(
        type=kind, tags=tags[:MAX_TAGS], recall=recall, observations=observations,
        relations=relations,
    )  # fmt: skip


def _linkable(target: str) -> bool:
    """Whether a [[link]] can be a relation: a page title is never empty or enormous."""
    return 0 < len(target) <= TARGET_MAX


def _read_bullet(text: str, heading: str | None, observations: list, relations: list) -> None:
    explicit = _EXPLICIT_RELATION.match(text)
    if explicit and explicit.group(1) in RELATIONS:
        if _linkable(target := explicit.group(2).strip()):
            relations.append(Relation(relation=explicit.group(1), target=target))
        return
    tagged = _EXPLICIT_CATEGORY.match(text)
    if tagged and tagged.group(1).lower() in CATEGORIES:
        category, text = tagged.group(1).lower(), tagged.group(2)
    else:
        category = _HEADING_CATEGORIES.get(heading or "") or _cue(text, _CUES, "context")
    observations.append(Observation(category=category, text=_plain(text)))


def _cue(text: str, cues: tuple, default: str) -> str:
    lowered = text.lower()
    return next((name for name, pattern in cues if re.search(pattern, lowered)), default)


def _plain(text: str) -> str:
    """Prose safe for Basic Memory: no wikilinks, no #tags, no trailing (context)."""
    text = _LINK.sub(lambda m: m.group(1).strip(), text)
    text = re.sub(r"#(?=\w)", "", text).strip()
    if text.endswith(")"):
        text += "."
    return text if text.endswith((".", "!", "?")) else text + "."


def _lower_first(text: str) -> str:
    word = text.split(" ", 1)[0]
    # Keep names and acronyms as written: only a plain capitalised word is lowered.
    return text[0].lower() + text[1:] if word.istitle() and len(word) > 1 else text


def render_markdown(
    title: str, page: Page, *, derived_from: str, distilled: str, note_hash: str, source: str
) -> str:
    """The page as Basic-Memory-compatible Markdown (front matter, observations, relations)."""
    permalink = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    front = {
        "title": title,
        "type": page.type,
        "permalink": permalink,
        "tags": page.tags,
        "derived_from": [derived_from],
        "distilled": distilled,
        "note_sha256": note_hash,
        "generated_by": source,
    }
    lines = ["---", *(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items())]
    lines += ["---", "", f"# {title}", "", page.recall, "", "## Observations"]
    lines += [f"- [{o.category}] {o.text}" for o in page.observations]
    lines += ["", "## Relations"]
    lines += [f"- {r.relation} [[{r.target}]]" for r in page.relations]
    return "\n".join(lines) + "\n"


_TEMPLATE_HEADINGS = {"## Observations", "## Relations"}
_OBSERVATION = re.compile(r"^- \[\w+\] ")


def claim_text(markdown: str) -> str:
    """What a page claims, for the fabrication gate: everything after its front matter,
    without its title (code's, from the note's title or path: `Budget (q3/budget-2)`), the
    template's own headings and observation tags (no claims of the note's); each
    observation is left as the plain sentence it is."""
    body = markdown.split("\n---\n", 1)[1] if markdown.startswith("---\n") else markdown
    lines = body.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].startswith("# "):
        del lines[first]
    return "\n".join(_OBSERVATION.sub("", line) for line in lines if line not in _TEMPLATE_HEADINGS)


def page_verdict(markdown: str, note: str) -> GateVerdict:
    """The fabrication gate's verdict on what a page claims (`claim_text`) against its note."""
    return judge({"page": claim_text(markdown)}, [note])


@dataclass
class DistillResult:
    distilled: list[str] = field(default_factory=list)
    unchanged: int = 0
    withheld: dict[str, list[str]] = field(default_factory=dict)  # title -> claims
    failed: dict[str, str] = field(default_factory=dict)  # title -> model error
    removed: list[str] = field(default_factory=list)
    deferred: int = 0
    entities: int = 0
    notes_read: int = 0  # staged notes read: only new, changed or never distilled ones
    entities_written: list[str] = field(default_factory=list)  # titles (re)written in recall
    retouched: int = 0  # entities whose note's touched date alone moved
    unsupported: list[str] = field(default_factory=list)  # published pages failing the check
    # title -> digest of a page the gate passed this run, against the note as staged now
    judged: dict[str, str] = field(default_factory=dict)


def distiller_version(source: str) -> str:
    """What a page's distiller is: the model and this code's version."""
    return f"{source}|{DISTILLER_VERSION}"


def distill_staging(
    conn: sqlite3.Connection,
    staging: str,
    *,
    day: str,
    distill: Callable[[str, str, str], Page],
    source: str,
    clock: Callable[[], datetime],
    max_pages: int = 0,
    log: Callable[[str], None] = lambda _: None,
    progress: Callable[[int, int], None] | None = None,
) -> DistillResult:
    """Bring `pages` in line with the staged notes, then the entities in line with the pages.

    The work is what changed: a note is distilled again only when its staged content, its
    path, its page title or the distiller (`distiller_version`) differs from what its page
    was written from, and only those notes are read. Nothing in a page comes from another
    note (a relation names a title; recall resolves it when read), so a page is never
    redone because a page it points at changed or went. `distill(title, path, text)`
    returns a Page (it may raise: that page is left as it was and reported); `max_pages`
    (0: no cap) bounds one run's model calls, the rest wait for the next run.
    `progress(done, total)` is told after each note sent to the model (`core.progress`).

    Every page written and every page removed is also appended to `page_log` in the same
    transaction, at `clock()` (the run's clock): what a replay of a past night reads, since
    `pages` itself is replaced in place.

    A night whose manifest and distiller are those of the last complete run (its mark in
    `sync_marks`) compares nothing at all: its cost is two counts.
    """
    result = DistillResult()
    version = distiller_version(source)
    # Read before the manifest: a manifest rewritten in between is newer than the mark
    # recorded below, so the next night compares again (never the other way round).
    mark = f"{manifest_digest(staging)}|{version}"
    if read_mark(conn, PAGES_MARK) == mark:  # nothing staged or distiller moved since
        result.unchanged = conn.execute("SELECT count(*) FROM pages").fetchone()[0]
        result.entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        return result
    with transaction(conn):
        set_mark(conn, PAGES_MARK, None)  # a run stopped midway leaves no mark behind
    with cycle_collector_paused():  # a pass over every note and page (BENCHMARKS.md)
        notes: dict[str, dict] = read_manifest(staging)["notes"]
        rows = sorted(  # by title (the first column: an index is faster than a name)
            conn.execute("SELECT title, note_path, note_hash, version, note_title FROM pages"),
            key=itemgetter(0),
        )
        by_path = {row["note_path"]: row for row in rows}
        texts: dict[str, str] = {}
        raw: dict[str, str] = {}
        for path, entry in notes.items():
            row = by_path.get(path)
            if row is not None and row["note_hash"] == entry["sha256"] and row["note_title"]:
                raw[path] = row["note_title"]  # the same note as when its page was written
            else:
                texts[path] = read_staged(staging, path)
                raw[path] = raw_title(path, texts[path])
        result.notes_read = len(texts)
        titles = assign_titles(raw, log, {row["note_path"]: row["title"] for row in rows})
    behind: list[str] = []  # published pages left older than their note (deferred, failed)
    night = _Night(conn, day, distill, source, version, result, log, clock)

    def current(path: str, entry: dict) -> bool:
        row = by_path.get(path)  # made from this title, note and distiller
        key = (titles[path], entry["sha256"], version)
        return row is not None and (row["title"], row["note_hash"], row["version"]) == key

    todo = sum(1 for path, entry in notes.items() if not current(path, entry))
    todo = min(todo, max_pages) if max_pages else todo
    for path, entry in sorted(notes.items()):
        title, row = titles[path], by_path.get(path)
        if current(path, entry):
            result.unchanged += 1
            continue
        if max_pages and len(result.distilled) + len(result.failed) >= max_pages:
            result.deferred += 1
            behind += [row["title"]] if row is not None else []
            continue
        if path not in texts:
            texts[path] = read_staged(staging, path)
            result.notes_read += 1
        if not night.page(title, path, entry["sha256"], texts[path], raw[path]):
            behind += [row["title"]] if row is not None else []
        if progress:
            progress(len(result.distilled) + len(result.failed), todo)

    gone = sorted({row["title"] for row in rows} - set(titles.values()))
    with transaction(conn):
        paths = {row["title"]: row["note_path"] for row in rows}
        at = to_iso(clock())
        conn.executemany(
            "INSERT INTO page_log (title, event, note_path, recorded_at)"
            " VALUES ($1, 'removed', $2, $3)",
            [(t, paths[t], at) for t in gone],
        )
        conn.executemany("DELETE FROM pages WHERE title = $1", [(t,) for t in gone])
        entries = {titles[path]: entry for path, entry in notes.items()}
        with cycle_collector_paused():
            result.entities_written, result.retouched = sync_entities(conn, entries)
        result.entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        # Deferred or failed pages are still to do: no mark, so the next night looks again.
        set_mark(conn, PAGES_MARK, None if result.deferred or result.failed else mark)
    result.removed = gone
    result.unsupported = unsupported_pages(
        conn, staging, [*result.entities_written, *behind], result.judged
    )
    return result


@dataclass(frozen=True)
class _Night:
    """What every page of one run is distilled with."""

    conn: sqlite3.Connection
    day: str
    distill: Callable[[str, str, str], Page]
    source: str
    version: str
    result: DistillResult
    log: Callable[[str], None]
    clock: Callable[[], datetime]

    def page(self, title: str, path: str, note_hash: str, text: str, own_title: str) -> bool:
        """Distil one note and store its page (one transaction: a checkpoint); False when
        the model failed (the page is left as it was)."""
        result = self.result
        try:
            page = self.distill(title, path, text)
        except Exception as exc:  # a model failure costs this page, not the night
            result.failed[title] = f"{type(exc).__name__}: {exc}"
            self.log(f"could not distil {path}: {result.failed[title]}")
            return False
        markdown = render_markdown(
            title, page, derived_from=path, distilled=self.day, note_hash=note_hash,
            source=self.source,
        )  # fmt: skip
        problems = page_verdict(markdown, text).labels()
        digest = _digest(markdown)
        if problems:
            result.withheld[title] = problems
            # Not the title or the claims: they can name people, and a log is kept for good.
            self.log(
                f"withheld a page: {len(problems)} unsupported claims (recall.db, published = 0)"
            )
        else:
            result.judged[title] = digest
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO pages (title, note_path, note_hash, distilled, generated_by, page,"
                " markdown, published, problems, version, note_title, digest)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
                " ON CONFLICT (title) DO UPDATE SET note_path = excluded.note_path,"
                " note_hash = excluded.note_hash, distilled = excluded.distilled,"
                " generated_by = excluded.generated_by, page = excluded.page,"
                " markdown = excluded.markdown, published = excluded.published,"
                " problems = excluded.problems, version = excluded.version,"
                " note_title = excluded.note_title, digest = excluded.digest",
                (title, path, note_hash, self.day, self.source, page.model_dump_json(),
                 markdown, int(not problems), json.dumps(problems), self.version, own_title,
                 digest),
            )  # fmt: skip
            self.conn.execute(
                "INSERT INTO page_log (title, event, note_path, digest, page, problems,"
                " recorded_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                (title, "withheld" if problems else "distilled", path, digest,
                 page.model_dump_json(), json.dumps(problems), to_iso(self.clock())),
            )  # fmt: skip
        result.distilled.append(title)
        return True


def _digest(markdown: str) -> str:
    return hashlib.sha256(markdown.encode()).hexdigest()


def sync_entities(conn: sqlite3.Connection, entries: dict[str, dict]) -> tuple[list[str], int]:
    """Bring entities, observations and relations in line with the published pages (inside
    the caller's transaction), touching only what differs: an entity whose page is gone or
    withheld is deleted, one whose page text or note path changed is rewritten, and one
    whose note was only touched gets its new date. `entries`: title -> the note's manifest
    entry. Returns (titles written or deleted, entities re-dated)."""
    orphans = conn.execute(
        "SELECT e.title FROM entities e LEFT JOIN pages p"
        " ON p.title = e.title AND p.published = 1 WHERE p.title IS NULL"
    ).fetchall()
    # The digest covers the whole page, its note's path and hash included.
    differ = conn.execute(
        "SELECT p.title FROM pages p LEFT JOIN entities e"
        f"{indexed_by(conn, 'idx_entities_sync')} ON e.title = p.title"
        " WHERE p.published = 1 AND (e.digest IS NULL OR e.digest != p.digest OR p.digest = '')"
    ).fetchall()
    changed = [
        conn.execute(
            "SELECT title, note_path, distilled, page, markdown, digest FROM pages"
            " WHERE title = $1",
            (row[0],),
        ).fetchone()
        for row in differ
    ]
    written = sorted({row[0] for row in orphans} | {row["title"] for row in changed})
    # Observations and relations go with their entity (ON DELETE CASCADE).
    conn.executemany("DELETE FROM entities WHERE title = $1", [(t,) for t in written])
    for row in changed:
        if row["title"] not in entries:
            continue
        page = Page.model_validate(
            {k: v for k, v in json.loads(row["page"]).items() if k[0] != "_"}
        )
        (entity_id,) = conn.execute(
            "INSERT INTO entities (title, type, tags, derived_from, note_touched, distilled,"
            " recall, markdown, digest, reviewable)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            " RETURNING id",
            (row["title"], page.type, json.dumps(page.tags), row["note_path"],
             entries[row["title"]]["touched"], row["distilled"], page.recall, row["markdown"],
             row["digest"] or _digest(row["markdown"]),
             int(any(o.category in STALE_CATEGORIES for o in page.observations))),
        ).fetchone()  # fmt: skip
        conn.executemany(
            "INSERT INTO observations (entity_id, position, category, text)"
            " VALUES ($1, $2, $3, $4)",
            [(entity_id, i, o.category, o.text) for i, o in enumerate(page.observations)],
        )
        conn.executemany(
            "INSERT INTO relations (entity_id, relation, target) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING",
            [(entity_id, r.relation, r.target) for r in page.relations],
        )
    redated = [
        (entries[title]["touched"], title)
        for title, touched in conn.execute("SELECT title, note_touched FROM entities")
        if title in entries and entries[title]["touched"] != touched
    ]
    conn.executemany("UPDATE entities SET note_touched = $1 WHERE title = $2", redated)
    return written, len(redated)


def unsupported_pages(
    conn: sqlite3.Connection,
    staging: str,
    titles: list[str],
    judged: dict[str, str] | None = None,
) -> list[str]:
    """The fabrication check again over the published pages among `titles`, against their
    notes as staged now: `distill_staging` passes those written this run and those whose
    note changed since they were written (a deferred or failed page keeps its old text).
    Every other page was judged against this very note when it was written, and the
    verdict is a function of the two texts (a new gate is a new `DISTILLER_VERSION`); so
    is a page in `judged` (title -> digest) whose published text is the one the gate
    passed this run, against the note as staged now."""
    notes = read_manifest(staging)["notes"] if titles else {}
    offenders = []
    for title in sorted(set(titles)):
        row = conn.execute(
            "SELECT derived_from, markdown, digest FROM entities WHERE title = $1", (title,)
        ).fetchone()
        if row is None:
            continue  # deleted or withheld: not published
        if (judged or {}).get(title) == row[2]:
            continue
        source = read_staged(staging, row[0]) if row[0] in notes else ""
        if not page_verdict(row[1], source).passed:
            offenders.append(title)
    return offenders
