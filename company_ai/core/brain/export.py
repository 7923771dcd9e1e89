"""The memory export: one day of the brain and the timelines it touched, as plain Markdown.

One folder per day, so that exporting an older day never touches a newer day's files:
    <folder>/<day>/index.md            what ran, failed and was recovered; the decisions
                                       and facts of brain.db; links to the contacts touched
    <folder>/<day>/contacts/<slug>.md  one per contact touched in the day's window (an
                                       episode recorded in it, or a message sent in it):
                                       their whole timeline as known at the window's end,
                                       message bodies included, with a link back to the day
    <folder>/growth/<day>.md           the day's growth analysis (`export_growth`)

A day's files are a pure function of the stores: nothing reads the clock and every list
is sorted, so re-exporting a day at any later time gives byte-identical files. Everything is
selected by when this system recorded it: what was not yet recorded at the window's end is
left out (episodes recorded later, whatever time they describe; messages sent later; replies
stored later). A message's `opened_at` and `bounce_status` are updated in place with no
recorded time, so they are left out of the timelines (an open or a bounce that was recorded
shows as its own episode) rather than let later news change an old day's file. An episode
recorded on another day than the one it describes says so: "(recorded <day>)".
Files are written atomically and only when their bytes change; files of the day that should
no longer exist are removed. File names are safe slugs on every common filesystem.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from company_ai.core.brain.facts import id_chunks
from company_ai.core.brain.rows import FAILURE_KINDS, RUN_KINDS, BrainDay, read_day
from company_ai.core.files import write_atomic
from company_ai.core.store import Parameters, Store, Stores, table_exists
from company_ai.core.times import Day, day_key, local_day

INDEX = "index.md"
CONTACTS = "contacts"
GROWTH = "growth"
MAX_SLUG_BYTES = 80  # well under the 255-byte name limit, with room for "-<id>.md"
# Letters that Unicode does not decompose into an ASCII base and a mark.
_TRANSLIT = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "TH",
        "ı": "i",
    }
)
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{n}" for n in "0123456789¹²³"}
    | {f"lpt{n}" for n in "0123456789¹²³"}
)
# Control, format and bidirectional characters: never let a name reorder or split a line.
_INVISIBLE = [
    *range(0x20),
    *range(0x7F, 0xA0),
    0x061C,
    *range(0x200B, 0x2010),
    *range(0x2028, 0x202F),
    *range(0x2060, 0x2070),
    0xFEFF,
]
# One table for one line of text: invisibles become spaces, markup characters are escaped.
_MARKUP = "\\`*_[]<>|#&~!"
_INLINE = str.maketrans({**dict.fromkeys(_INVISIBLE, " "), **{c: "\\" + c for c in _MARKUP}})
_NEEDS_INLINE = re.compile("[" + re.escape("".join(map(chr, _INVISIBLE)) + _MARKUP) + "]")
_BODY_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e]")


class ExportError(Exception):
    """The export could not be written; the message says what and where. Nothing is lost:
    every file already exported is either its old version or its new one."""


# --- names and text ----------------------------------------------------------------------


def slug(text: str, fallback: str = "contact") -> str:
    """A file-name-safe form of `text`: lower-case letters and digits joined by hyphens.

    Latin accents are dropped (Zoë -> zoe, Łukasz -> lukasz); other scripts keep their
    letters (李 stays 李). No separators, dots, controls or spaces survive; the result is
    at most MAX_SLUG_BYTES of UTF-8, never empty (`fallback`) and never a Windows device
    name (CON, NUL, COM1, LPT1...).
    """
    kept: list[str] = []
    for ch in unicodedata.normalize("NFKD", str(text).translate(_TRANSLIT)):
        category = unicodedata.category(ch)
        if category.startswith("M"):
            if kept and not kept[-1].isascii():
                kept.append(ch)  # a mark of a non-Latin letter is part of the letter
        elif category[0] in "LN":
            kept.append(ch.lower())
        else:
            kept.append("-")
    name = re.sub(r"-+", "-", unicodedata.normalize("NFC", "".join(kept))).strip("-")
    while len(name.encode("utf-8")) > MAX_SLUG_BYTES:
        name = name[:-1]
    name = name.strip("-") or fallback
    return f"{name}-" if name in WINDOWS_RESERVED else name


def contact_file(name: str | None, contact_id: int) -> str:
    """A contact's file name: the slug of the name and the id, unique and stable."""
    return f"{slug(name or '').rstrip('-')}-{contact_id}.md"  # with an id, CON-7 is safe


def inline(text: object) -> str:
    """Text for one line of Markdown: controls become spaces, markup characters escaped."""
    text = str(text)
    if _NEEDS_INLINE.search(text):  # most text needs nothing: skip the slower translate
        text = text.translate(_INLINE)
    return " ".join(text.split())


def fenced(body: str) -> str:
    """A block shown verbatim: a code fence longer than any run of backticks inside it."""
    text = _BODY_INVISIBLE.sub("", body.replace("\r\n", "\n").replace("\r", "\n")).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


# --- reading -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Contact:
    id: int
    name: str | None
    email: str | None

    @cached_property
    def file(self) -> str:
        return contact_file(self.name, self.id)

    @property
    def title(self) -> str:
        if self.name is None:
            return f"Contact {self.id} (not in the CRM)"
        return inline(self.name) or f"Contact {self.id}"


def _select(conn, table: str, sql: str, ids: Iterable[int], *params) -> list[sqlite3.Row]:
    """Rows of `sql` (with `{ids}` for an IN list) for every chunk of ids, in chunk order."""
    if conn is None or not table_exists(conn, table):
        return []
    rows: list[sqlite3.Row] = []
    for chunk in id_chunks(ids):
        # `sql`'s own parameters are $1…; the chunk's ids are numbered after them.
        args = Parameters(params)
        rows += conn.execute(sql.format(ids=args.marks(chunk)), args)
    return rows


def render_day(stores: Stores, day: Day) -> dict[str, bytes]:
    """The day's files, by path relative to `<folder>/<day>`: the export without writing."""
    day_key(day.key)
    conns = {d: stores.reader(d) for d in (Store.BRAIN, Store.MEMORY, Store.OUTREACH, Store.CRM)}
    try:
        brain_conn = conns[Store.BRAIN]
        brain = read_day(brain_conn, day.key) if brain_conn else BrainDay(day.key)
        touched = _touched(conns[Store.MEMORY], conns[Store.OUTREACH], day)
        found = {
            r["id"]: r
            for r in _select(
                conns[Store.CRM],
                "contacts",
                "SELECT id, name, email FROM contacts WHERE id IN ({ids})",
                touched,
            )
        }
        timelines = _timelines(conns[Store.MEMORY], conns[Store.OUTREACH], touched, day)
    finally:
        for conn in conns.values():
            if conn is not None:
                conn.close()
    contacts = {
        cid: _Contact(cid, found[cid]["name"], found[cid]["email"])
        if cid in found
        else _Contact(cid, None, None)
        for cid in touched
    }
    files = {INDEX: _index(day.key, day.tz, brain, contacts)}
    for cid, contact in contacts.items():
        page = _contact_page(day.key, day.tz, contact, timelines[cid])
        files[f"{CONTACTS}/{contact.file}"] = page
    return {path: text.encode("utf-8") for path, text in sorted(files.items())}


def _touched(memory, outreach, day: Day) -> set[int]:
    """Contacts with an episode recorded in the window or a message sent in it."""
    touched: set[int] = set()
    if memory is not None and table_exists(memory, "contact_episodes"):
        touched |= {
            r[0]
            for r in memory.execute(
                "SELECT DISTINCT contact_id FROM contact_episodes"
                " WHERE recorded_at >= $1 AND recorded_at < $2",
                (day.start, day.end),
            )
        }
    if outreach is not None and table_exists(outreach, "messages"):
        touched |= {
            r[0]
            for r in outreach.execute(
                "SELECT DISTINCT contact_id FROM messages WHERE sent_at >= $1 AND sent_at < $2",
                (day.start, day.end),
            )
        }
    return touched


def _timelines(memory, outreach, touched: set[int], day: Day) -> dict[int, list]:
    """Each contact's episodes and messages recorded before the window's end, oldest first
    by the time they describe, as (time, kind, id, local day, row)."""
    entries: dict[int, list[tuple]] = {cid: [] for cid in touched}
    for e in _select(
        memory,
        "contact_episodes",
        "SELECT id, contact_id, episode_type, source, confidence, created_at, recorded_at,"
        " content FROM contact_episodes WHERE contact_id IN ({ids}) AND recorded_at < $1",
        touched,
        day.end,
    ):
        described = local_day(e["created_at"], day.tz)
        row = dict(e) | {"recorded_day": local_day(e["recorded_at"], day.tz)}
        entries[e["contact_id"]].append((e["created_at"], "episode", e["id"], described, row))
    replied = {
        r["message_id"]: r["replied"]
        for r in _select(
            outreach,
            "inbound",
            "SELECT message_id, min(received_at) AS replied FROM inbound"
            " WHERE contact_id IN ({ids}) AND created_at < $1"
            " AND kind IN ('reply', 'not_now', 'unsubscribe') GROUP BY message_id",
            touched,
            day.end,
        )
    }
    for m in _select(
        outreach,
        "messages",
        "SELECT id, contact_id, thread_id, subject, body, angle, sent_at, bump_count"
        " FROM messages WHERE contact_id IN ({ids}) AND sent_at < $1",
        touched,
        day.end,
    ):
        sent_day = local_day(m["sent_at"], day.tz)
        row = dict(m) | {"replied_at": replied.get(m["id"])}
        entries[m["contact_id"]].append((m["sent_at"], "message", m["id"], sent_day, row))
    for timeline in entries.values():
        timeline.sort(key=lambda e: e[:3])
    return entries


# --- Markdown ----------------------------------------------------------------------------


def _index(day: str, tz: str, brain: BrainDay, contacts: Mapping[int, _Contact]) -> str:
    links = {f"contact:{cid}": f"{CONTACTS}/{c.file}" for cid, c in contacts.items()}
    counts = brain.counts()
    lines = [
        f"# {day}",
        "",
        f"The night's memory of {day} ({inline(tz)}): {counts['facts']} facts,"
        f" {counts['decisions']} decisions, {counts['edges']} graph edges, {len(contacts)}"
        " contacts touched.",
    ]
    if not any(counts.values()):
        lines += ["", f"No brain rows for {day}: brain_facts has not run for this day yet."]

    def by_importance(rows):
        return sorted(rows, key=lambda r: (-r.importance, r.key))

    def fact_line(f) -> str:
        return f"- [{f.importance}] {inline(f.text)}{_trail(f, links)}"

    ran = [f for f in brain.facts if f.kind in RUN_KINDS]
    failed = [f for f in brain.facts if f.kind in FAILURE_KINDS]
    recovered = [d for d in brain.decisions if d.kind == "recovered"]
    decisions = [d for d in brain.decisions if d.kind != "recovered"]
    facts = [f for f in brain.facts if f.kind not in RUN_KINDS + FAILURE_KINDS]
    sections = [
        ("What ran", [fact_line(f) for f in sorted(ran, key=lambda f: f.key)], "No runs."),
        ("What failed", [fact_line(f) for f in by_importance(failed)], "Nothing failed."),
        (
            "What was recovered",
            [f"- {inline(d.what)}{_trail(d, links)}" for d in by_importance(recovered)],
            "Nothing needed recovering.",
        ),
        (
            "Decisions",
            [
                f"- [{d.importance}] {inline(d.what)}. Rule: {inline(d.rule)}.{_trail(d, links)}"
                for d in by_importance(decisions)
            ],
            "No decisions.",
        ),
        ("Facts", [fact_line(f) for f in by_importance(facts)], "No other facts."),
        (
            "Contacts touched",
            [
                f"- [{c.title}]({CONTACTS}/{c.file}), contact {c.id}"
                for c in sorted(contacts.values(), key=lambda c: c.file)
            ],
            "No contact was touched.",
        ),
    ]
    for title, body, empty in sections:
        lines += ["", f"## {title}", ""] + (body or [empty])
    return "\n".join(lines) + "\n"


def _trail(row, links: Mapping[str, str]) -> str:
    link = f" [timeline]({links[row.about]})" if row.about in links else ""
    return f"{link} (sources: {inline(', '.join(row.sources))})"


def _contact_page(day: str, tz: str, contact: _Contact, timeline: list[tuple]) -> str:
    episodes = sum(1 for e in timeline if e[1] == "episode")
    lines = [
        f"# {contact.title}",
        "",
        f"Contact {contact.id}"
        + (f", {inline(contact.email)}" if contact.email else "")
        + f". Touched on [{day}](../{INDEX}).",
        "",
        f"Everything recorded by the end of the night of {day} ({inline(tz)}):"
        f" {_count(episodes, 'episode')}, {_count(len(timeline) - episodes, 'message')}.",
    ]
    shown_day = None
    for at, kind, _id, local, row in timeline:
        if local != shown_day:
            lines += ["", f"## {local}", ""]
            shown_day = local
        if kind == "episode":
            confidence = (
                "" if row["confidence"] is None else f", confidence {row['confidence']:.2f}"
            )
            late = "" if row["recorded_day"] == local else f" (recorded {row['recorded_day']})"
            lines.append(
                f"- {at}{late} {inline(row['episode_type'])} (episode {row['id']}, source"
                f" {inline(row['source'] or '-')}{confidence}): {inline(row['content'])}"
            )
            continue
        known = [f"sent {row['sent_at']}"]
        if row["replied_at"]:  # a reply stored before the window's end
            known.append(f"replied {row['replied_at']}")
        bump = f", follow-up {row['bump_count']}" if row["bump_count"] else ""
        lines += [
            f"- {at} message {row['id']}: {inline(row['subject'])}",
            f"  (thread {inline(row['thread_id'])}, angle {inline(row['angle'] or '-')}{bump};"
            f" {', '.join(known)})",
            "",
            *("  " + line if line else "" for line in fenced(row["body"]).split("\n")),
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# --- writing -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    day: str
    folder: Path  # <folder>/<day>
    files: int  # the day's files
    contacts: int
    written: tuple[str, ...]  # relative paths whose bytes changed (new files included)
    removed: tuple[str, ...]  # files of the day that should no longer exist

    @property
    def unchanged(self) -> int:
        return self.files - len(self.written)


def export_day(stores: Stores, day: Day, folder: str | Path) -> ExportResult:
    """Write day D's Markdown under `<folder>/<day>/` (see the module docstring)."""
    files = render_day(stores, day)
    target = Path(folder) / day.key
    written, removed = _sync(target, files, f"the export of {day.key}")
    contacts = sum(1 for path in files if path.startswith(f"{CONTACTS}/"))
    return ExportResult(day.key, target, len(files), contacts, written, removed)


def export_growth(folder: str | Path, day: str, title: str, table_markdown: str) -> bool:
    """Write a day's growth table to `<folder>/growth/<day>.md`; True if changed."""
    text = f"# {title}\n\n{table_markdown.rstrip()}\n"
    target = Path(folder) / GROWTH
    written, _ = _sync(target, {f"{day}.md": text.encode("utf-8")}, "the growth analysis", False)
    return bool(written)


def _sync(
    target: Path, files: Mapping[str, bytes], what: str, prune: bool = True
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Make `target` hold exactly `files` (only rewriting changed bytes); ExportError if not."""
    written: list[str] = []
    removed: list[str] = []
    where = target
    try:
        for folder in sorted({(target / path).parent for path in files} | {target}):
            where = folder
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob(".*.tmp"):  # left by a crash inside write_atomic
                stale.unlink()
        for path, data in files.items():
            where = target / path
            if where.is_file() and where.stat().st_size == len(data) and where.read_bytes() == data:
                continue
            write_atomic(where, data, durable=False)  # rebuilt from the stores at will
            written.append(path)
        if prune:
            old = {p.relative_to(target).as_posix() for p in target.glob("*.md")}
            old |= {p.relative_to(target).as_posix() for p in target.glob(f"{CONTACTS}/*.md")}
            for path in sorted(old - files.keys()):
                where = target / path
                where.unlink()
                removed.append(path)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ExportError(
            f"cannot write {what} at {where}: {reason}. Nothing was lost: each exported file"
            " is whole, old or new; make the folder writable and run the day again"
        ) from exc
    return tuple(written), tuple(removed)
