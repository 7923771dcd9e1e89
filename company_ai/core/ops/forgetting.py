"""`company-ai forget EMAIL`: remove one person from every place the system put them.

A person is found by any of their addresses; the forget takes all of them and the name.
First a tombstone is written (`core/crm/tombstones.py`), so that from then on no sync, import,
mail or vault note brings them back; then each place in `PLACES` is cleared in its own
transaction, in order, and a progress record (`forget-progress.json`, the one file that
holds the person's addresses while a forget runs) says which are done, so a forget killed
midway (even by SIGKILL, at any step: tests/faults/test_kill.py) is finished by running
it again. Last, every SQLite file is vacuumed and its WAL truncated, so deleted bytes do
not linger in free pages, and the audit log in `forgotten.json` gets the counts (never the
personal data), once per forget however often it was resumed.

Episodes are append-only: a forget is the one sanctioned deletion. It lifts the refusal
inside its own transaction, deletes the person's episodes, re-seals each day it touched and
records a `redactions` row (day, count, new digest; no personal data), so the day's next
seal is unchanged and any other change to a sealed day still shows as one.

What is not touched: the vault (the owner's notes: the forget names the notes that mention
the person), snapshots already taken (backups; the next one no longer holds the person),
and episodes of other people that mention them in passing.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from company_ai.core.crm import Tombstones, normal_email
from company_ai.core.files import write_atomic
from company_ai.core.memory import reseal_in_transaction
from company_ai.core.store import (
    MEMORY_V1,
    Parameters,
    Store,
    Stores,
    dialect,
    table_exists,
    transaction,
)

PROGRESS_FILE = "forget-progress.json"
REDACTED = "[forgotten]"
# Files the forget keeps or writes itself, and folders it never scans as plain files.
_OWN_FILES = {"forgotten.json", PROGRESS_FILE, "install.json"}
_SKIPPED_FOLDERS = {"snapshots", "vectors", "vault_staging"}
_MAILDIR = {"new", "cur", "tmp"}


class ForgetError(ValueError):
    """The forget cannot start; nothing was changed."""


@dataclass
class Person:
    """Who is being forgotten: every address, the name(s) and the CRM ids."""

    emails: list[str]
    names: list[str]
    contact_ids: list[int]
    sources: list[str] = field(default_factory=list)  # their ids in a contact source

    @property
    def needles(self) -> list[str]:
        """The strings that identify them in free text, longest first."""
        return sorted({*self.emails, *self.names}, key=len, reverse=True)

    @property
    def nodes(self) -> list[str]:
        return [f"contact:{i}" for i in self.contact_ids]


@dataclass
class Forgotten:
    removed: dict[str, int] = field(default_factory=dict)
    vault_notes: list[str] = field(default_factory=list)  # the owner's notes naming them
    vector_ids: list[str] = field(default_factory=list)  # memories of rows removed by name
    resumed: bool = False
    already: bool = False  # forgotten before: nothing was left to remove

    def summary(self) -> str:
        parts = [f"{place.replace('_', ' ')}: {n}" for place, n in self.removed.items()]
        return "; ".join(parts)


# --- finding the person -------------------------------------------------------------------


def find_person(stores: Stores, email: str) -> Person | None:
    """The CRM person that has `email` among their addresses, with all of theirs."""
    if not stores.exists(Store.CRM):
        return None
    with stores.connect(Store.CRM, readonly=True) as crm:
        row = crm.execute(
            "SELECT contact_id FROM contact_emails WHERE email = $1"
            " UNION SELECT id FROM contacts WHERE email = $2",
            (normal_email(email), normal_email(email)),
        ).fetchone()
        if row is None:
            return None
        return _person_of(crm, [row[0]])


def _person_of(crm: sqlite3.Connection, ids: list[int]) -> Person:
    marks = _marks(ids)
    emails = {
        r[0]
        for r in crm.execute(
            f"SELECT email FROM contact_emails WHERE contact_id IN ({marks})"
            f" UNION SELECT email FROM contacts WHERE id IN ({marks}) AND email IS NOT NULL",
            ids,
        )
    }
    rows = crm.execute(
        f"SELECT name, external_id FROM contacts WHERE id IN ({marks})", ids
    ).fetchall()
    names = {r[0] for r in rows}
    sources = sorted({r[1] for r in rows if r[1]})
    return Person(sorted(emails), sorted(n for n in names if n.strip()), sorted(ids), sources)


def find_returned(stores: Stores, stones: Tombstones) -> list[str]:
    """Addresses of CRM contacts that were forgotten and are present again (a restored
    snapshot, a store copied back): one primary address each."""
    if not stones or not stores.exists(Store.CRM):
        return []
    found = []
    with stores.connect(Store.CRM, readonly=True) as crm:
        rows = crm.execute("SELECT id, email, external_id FROM contacts").fetchall()
        for cid, email, source_id in rows:
            emails = [r[0] for r in crm.execute(
                "SELECT email FROM contact_emails WHERE contact_id = $1", (cid,))]  # fmt: skip
            # By address or source id only: a namesake is someone else.
            if stones.has([*emails, *([email] if email else [])]) or stones.has_source(source_id):
                found.append(email or emails[0])
    return found


# --- the forget ---------------------------------------------------------------------------


def forget(
    stores: Stores, email: str, *, now: str, log: Callable[[str], None] = print
) -> Forgotten:
    """Forget the person with `email` (module docstring). An unfinished forget is finished
    first; an address forgotten before is done already. ForgetError: nobody has that
    address and it was never forgotten (nothing changed)."""
    data = stores.data_dir
    stones = Tombstones.load(data)
    progress = _read_progress(data)
    if progress is not None:
        person = Person(
            progress["emails"],
            progress["names"],
            progress["contact_ids"],
            progress.get("sources", []),
        )
        if normal_email(email) not in person.emails:
            log("finishing an earlier forget that was interrupted first")
            _run(stores, stones, person, progress, now, log)
            return forget(stores, email, now=now, log=log)
        result = _run(stores, stones, person, progress, now, log)
        result.resumed = True
        return result
    found = find_person(stores, email)
    if found is None:
        if stones.has_email(email):  # a forget run again: done, as asked
            return Forgotten(already=True)
        raise ForgetError(f"no contact has the address {email}; nothing was changed")
    progress = {**found.__dict__, "started_at": now, "done": {}}
    _write_progress(data, progress)
    return _run(stores, stones, found, progress, now, log)


def _run(
    stores: Stores,
    stones: Tombstones,
    person: Person,
    progress: dict,
    now: str,
    log: Callable[[str], None],
) -> Forgotten:
    data = stores.data_dir
    # First: nothing may bring them back.
    stones.bury(person.emails, person.names, now, sources=person.sources)
    result = Forgotten(vault_notes=progress.get("vault_notes", []),
                       vector_ids=progress.get("vector_ids", []))  # fmt: skip
    for place, step in PLACES:
        if place not in progress["done"]:
            progress["done"][place] = step(stores, person, result, now)
            progress |= {"vault_notes": result.vault_notes, "vector_ids": result.vector_ids}
            _write_progress(data, progress)
        result.removed.update(progress["done"][place])
    _compact(stores)
    entry = {
        "forgotten_at": now,
        "started_at": progress["started_at"],
        "person": stones.key(person.emails[0]) if person.emails else None,
        "removed": result.removed,
    }
    # A forget killed after its audit entry but before the progress file went is finished
    # again: the entry (this forget's person and start) is written once.
    if not any(
        (e.get("person"), e.get("started_at")) == (entry["person"], entry["started_at"])
        for e in stones.forgets
    ):
        stones.log(entry)
    # The progress file goes, and any temporary copy of it a kill inside its atomic write
    # left (`.forget-progress.json.*.tmp`: it holds the addresses as much as the file does).
    for path in [data / PROGRESS_FILE, *data.glob(f".{PROGRESS_FILE}.*.tmp")]:
        path.unlink(missing_ok=True)
    for note in result.vault_notes:
        log(f"the vault note {note} mentions them: it is yours to edit")
    return result


def _read_progress(data: Path) -> dict | None:
    try:
        return json.loads((data / PROGRESS_FILE).read_text())
    except FileNotFoundError:
        return None


def _write_progress(data: Path, progress: dict) -> None:
    write_atomic(data / PROGRESS_FILE, json.dumps(progress).encode())


def _marks(items: Sequence[Any]) -> str:
    """The placeholders of a statement whose only parameters are `items`."""
    return Parameters().marks(items)


def _mentions(
    conn: Any,
    table: str,
    columns: Iterable[str],
    needles: list[str],
    args: Parameters | None = None,
) -> tuple[str, Parameters]:
    """A WHERE clause: any of `columns` of `table` holds any needle, case-insensitively, as
    Python's casefold() folds (SQLite's lower() folds ASCII only: see `_open`). PostgreSQL
    folds by its locale, ASCII only under C: there the rows are read and matched here, and
    the clause names the matches by `ctid` (stable inside the caller's transaction)."""
    columns, args = list(columns), Parameters() if args is None else args
    if dialect(conn) == "postgres":
        folded = [n.casefold() for n in needles]
        matched = [
            row[0]
            for row in conn.execute(f"SELECT ctid::text, {', '.join(columns)} FROM {table}")
            if any(isinstance(v, str) and _holds_text(v, folded) for v in row[1:])
        ] if columns and needles else []  # fmt: skip
        return f"ctid = ANY({args.mark(matched)}::tid[])", args
    marks = [args.mark(n.casefold()) for n in needles]
    tests = [f"instr(casefold({c}), {m}) > 0" for c in columns for m in marks]
    return " OR ".join(tests) or "1 = 0", args


def _holds_text(value: str, folded: list[str]) -> bool:
    text = value.casefold()
    return any(n in text for n in folded)


@contextmanager
def _open(stores: Stores, domain: Store) -> Iterator[sqlite3.Connection]:
    """A store for writing, with `casefold()` for `_mentions`, in one transaction."""
    with stores.connect(domain) as conn, transaction(conn):
        if dialect(conn) == "sqlite":
            conn.create_function("casefold", 1, _casefold, deterministic=True)
        yield conn


def _casefold(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


# --- the places, in order -----------------------------------------------------------------


def _memory(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    if not stores.exists(Store.MEMORY) or not person.contact_ids:
        return {"episodes": 0}
    ids, marks = person.contact_ids, _marks(person.contact_ids)
    with stores.connect(Store.MEMORY) as conn, transaction(conn):
        gone = conn.execute(
            f"SELECT day, recorded_at FROM contact_episodes WHERE contact_id IN ({marks})"
            " ORDER BY recorded_at",
            ids,
        ).fetchall()
        if gone:
            with _append_only_lifted(conn):
                conn.execute(f"DELETE FROM contact_episodes WHERE contact_id IN ({marks})", ids)
        # A seal covers a window of recorded time (or, from before that, a `day`): each seal
        # that held a forgotten episode is sealed again, the rest are redactions of no seal.
        counts: dict[str, int] = {}
        unsealed: dict[str, int] = {}
        seals = conn.execute(
            "SELECT day, window_start, window_end FROM day_seals ORDER BY day"
        ).fetchall()
        for day, recorded in gone:
            key = next(
                (
                    k
                    for k, start, end in seals
                    if (start is not None and start <= recorded < end)
                    or (start is None and k == day)
                ),
                None,
            )
            if key is None:
                unsealed[day] = unsealed.get(day, 0) + 1
            else:
                counts[key] = counts.get(key, 0) + 1
        rows: list[tuple[str, int, str | None]] = [
            (k, n, reseal_in_transaction(conn, k, now).digest) for k, n in counts.items()
        ]
        rows += [(k, n, None) for k, n in unsealed.items()]
        for key, n, digest in sorted(rows, key=lambda r: r[0]):  # Postgres: no executemany
            conn.execute(
                "INSERT INTO redactions (day, redacted_at, episodes, digest)"
                " VALUES ($1, $2, $3, $4)",
                (key, now, n, digest),
            )
    return {"episodes": len(gone)}


_TRIGGERS = [s for s in MEMORY_V1 if "CREATE TRIGGER" in s]


class _append_only_lifted:
    """Inside the caller's transaction: the append-only refusal lifted, then put back."""

    def __init__(self, conn: Any):
        self.conn = conn

    def __enter__(self) -> None:
        if dialect(self.conn) == "postgres":
            self.conn.execute("ALTER TABLE contact_episodes DISABLE TRIGGER USER")
        else:
            for name in ("update", "delete"):
                self.conn.execute(f"DROP TRIGGER contact_episodes_append_only_{name}")

    def __exit__(self, *exc: object) -> None:
        if dialect(self.conn) == "postgres":
            self.conn.execute("ALTER TABLE contact_episodes ENABLE TRIGGER USER")
        else:
            for statement in _TRIGGERS:
                self.conn.execute(statement)


_OUTREACH = (
    ("inbound", "contact_id IN ({ids}) OR from_address IN ({emails})"),
    ("send_holds", "contact_id IN ({ids}) OR lower(address) IN ({emails})"),
    ("drafts", "contact_id IN ({ids})"),
    ("research_picks", "contact_id IN ({ids})"),
    ("messages", "contact_id IN ({ids})"),
)


def _outreach(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    removed = 0
    if stores.exists(Store.OUTREACH):
        ids, emails = person.contact_ids, person.emails
        with stores.connect(Store.OUTREACH) as conn, transaction(conn):
            for table, where in _OUTREACH:
                if table_exists(conn, table):
                    args = Parameters()
                    ids_in = args.marks(ids)
                    emails_in = args.marks(emails) if "{emails}" in where else ""
                    sql = where.format(ids=ids_in, emails=emails_in)
                    removed += conn.execute(f"DELETE FROM {table} WHERE {sql}", args).rowcount
    return {"outreach_rows": removed}


def _brain(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    removed = 0
    if stores.exists(Store.BRAIN):
        nodes, needles = person.nodes, person.needles
        with _open(stores, Store.BRAIN) as conn:
            for table, text in (("facts", "text"), ("decisions", "what")):
                args = Parameters()
                where = f"about IN ({args.marks(nodes)})"
                where += f" OR {_mentions(conn, table, [text, 'about'], needles, args)[0]}"
                gone = conn.execute(f"SELECT day, key FROM {table} WHERE {where}", args).fetchall()
                result.vector_ids += [f"{table[:-1]}:{day}/{key}" for day, key in gone]
                conn.execute(f"DELETE FROM {table} WHERE {where}", args)
                removed += len(gone)
            args = Parameters()
            marks = args.marks(nodes)
            named, _ = _mentions(conn, "edges", ["src", "dst"], needles, args)
            where = f"src IN ({marks}) OR dst IN ({marks}) OR {named}"
            removed += conn.execute(f"DELETE FROM edges WHERE {where}", args).rowcount
    return {"brain_rows": removed}


def _recall(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    from company_ai.core.recall import replace_docs

    titles: list[str] = []
    if stores.exists(Store.RECALL):
        with _open(stores, Store.RECALL) as conn:
            named, args = _mentions(conn, "pages", ["title", "markdown", "page"], person.needles)
            rows = conn.execute(f"SELECT title, note_path FROM pages WHERE {named}", args)
            found = rows.fetchall()
            titles = [t for t, _ in found]
            result.vault_notes += sorted({p for _, p in found})
            conn.executemany("DELETE FROM pages WHERE title = $1", [(t,) for t in titles])
            if table_exists(conn, "page_log"):  # the log of distillations names them too
                named, args = _mentions(
                    conn, "page_log", ["title", "page", "problems"], person.needles
                )
                logged = [
                    r[0] for r in conn.execute(f"SELECT title FROM page_log WHERE {named}", args)
                ]
                marks = [(t,) for t in sorted({*titles, *logged})]
                conn.executemany("DELETE FROM page_log WHERE title = $1", marks)
            named, args = _mentions(conn, "entities", ["title", "markdown"], person.needles)
            entities = [
                r[0] for r in conn.execute(f"SELECT title FROM entities WHERE {named}", args)
            ]
            conn.executemany("DELETE FROM entities WHERE title = $1", [(t,) for t in entities])
            named, args = _mentions(conn, "relations", ["target"], person.needles)
            conn.execute(f"DELETE FROM relations WHERE {named}", args)
            gone = sorted({*titles, *entities})
            named, args = _mentions(conn, "search_docs", ["title", "body"], person.needles)
            keys = [r[0] for r in conn.execute(f"SELECT key FROM search_docs WHERE {named}", args)]
            replace_docs(conn, [], remove=sorted({*gone, *keys}))
            # The vault night compares everything again (it would skip an unchanged one).
            conn.execute("DELETE FROM sync_marks")
            titles = gone
            result.vector_ids += [f"page:{t}" for t in gone]
        with stores.connect(Store.RECALL) as conn:
            # Merge the full-text index's segments: a deleted row's terms leave its pages
            # (SQLite's FTS5; on PostgreSQL a row's tsvector goes with it).
            if dialect(conn) == "sqlite":
                conn.execute("INSERT INTO search_fts (search_fts) VALUES ('optimize')")
    return {"recall_pages": len(titles)}


def _vault_staging(stores: Stores, person: Person, result: Forgotten, now: str) -> dict:
    """Staged copies of notes that name them; out of the manifest too, so the gate reads the
    note again next night and holds it back (it names a forgotten person)."""
    from company_ai.core.vault import NOTES, read_manifest, staging_dir, write_manifest

    staging = staging_dir(stores.data_dir)
    if not (staging / "manifest.json").is_file():
        return {"staged_notes": 0}
    manifest = read_manifest(staging)
    removed = []
    for rel in list(manifest["notes"]):
        path = staging / NOTES / rel
        try:
            if _holds(path.read_bytes(), person.needles):
                removed.append(rel)
        except OSError:
            continue
    for rel in removed:
        del manifest["notes"][rel]
    write_manifest(staging, manifest)
    for rel in removed:
        (staging / NOTES / rel).unlink(missing_ok=True)
    result.vault_notes = sorted({*result.vault_notes, *removed})
    return {"staged_notes": len(removed)}


def _vectors(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    from company_ai.core.vectors import COLLECTIONS, VectorStore, erase, vectors_dir

    path, url = vectors_dir(stores.data_dir), stores.chroma_url
    if not url and not (path / "chroma.sqlite3").is_file():
        return {"vectors": 0}
    where = {"contact_id": {"$in": person.contact_ids}} if person.contact_ids else None

    def theirs(store: VectorStore) -> dict[str, set[str]]:
        return {
            name: {*(store.metadata(name, where) if where else ()),
                   *store.metadata_of(name, result.vector_ids)}
            for name in COLLECTIONS
        }  # fmt: skip

    removed = erase(path, theirs, url=url)
    gone = {i for ids in removed.values() for i in ids}
    if not url:  # a server's log is its own: `company-ai vectors-scrub` on its host
        _purge_chroma_log(path / "chroma.sqlite3", sorted(gone | set(result.vector_ids)))
    return {"vectors": sum(map(len, removed.values()))}


def _purge_chroma_log(path: Path, ids: list[str]) -> None:
    """Chroma keeps each write in its own log table (`embeddings_queue`) after applying it;
    the entries of the removed vectors still hold their ids and metadata."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings_queue'").fetchone():
            with transaction(conn):
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    conn.execute(
                        # Chroma's own file, through plain sqlite3: its `?` parameters.
                        f"DELETE FROM embeddings_queue WHERE id IN ({','.join('?' * len(chunk))})",
                        chunk,
                    )
    finally:
        conn.close()


def _files(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    """Every other file under the data directory: mail to or from them and their export
    pages are deleted; JSON records naming them are dropped; other text is redacted."""
    data = stores.data_dir
    own_pages = tuple(f"-{i}.md" for i in person.contact_ids)
    deleted = redacted = 0
    for path in sorted(data.rglob("*")):
        rel = path.relative_to(data)
        if (
            not path.is_file()
            or path.is_symlink()
            or rel.parts[0] in _SKIPPED_FOLDERS
            or rel.name in _OWN_FILES
            or re.search(r"\.db(-wal|-shm|-journal)?$", rel.name)
        ):
            continue
        raw = path.read_bytes()
        if not _holds(raw, person.needles):
            continue
        mail = path.suffix == ".eml" or (len(rel.parts) > 1 and rel.parts[-2] in _MAILDIR)
        page = rel.parts[0] == "exports" and rel.name.endswith(own_pages)
        if page or (mail and _holds(raw, person.emails)):
            path.unlink()
            deleted += 1
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            if path.suffix == ".json":
                cleaned = json.dumps(_clean_json(json.loads(text), person), indent=1)
            elif path.suffix == ".jsonl":
                cleaned = "".join(
                    json.dumps(_clean_json(json.loads(line), person)) + "\n"
                    for line in text.splitlines()
                    if line.strip()
                )
            else:
                cleaned = _redact(text, person.needles)
        except ValueError:  # JSON that does not parse (a rejected drop file): as text
            cleaned = _redact(text, person.needles)
        write_atomic(path, cleaned.encode("utf-8"))
        redacted += 1
    return {"files_deleted": deleted, "files_redacted": redacted}


def _holds(raw: bytes, needles: list[str]) -> bool:
    """Whether the bytes hold a needle, in any case, as text or JSON-escaped."""
    text = raw.decode("utf-8", "replace").casefold()
    forms = {f for n in needles for f in (n.casefold(), json.dumps(n)[1:-1].casefold())}
    return any(f in text for f in forms)


def _redact(text: str, needles: list[str]) -> str:
    for needle in needles:
        text = re.sub(re.escape(needle), REDACTED, text, flags=re.IGNORECASE)
    return text


def _clean_json(value: Any, person: Person) -> Any:
    """Records (objects in a list) that name them are dropped; other text is redacted. A
    contact source's person record (one with a `resourceName`) is theirs only by its id or
    an address: one that shares only the name is someone else, and stays as it is."""
    needles = person.needles
    if isinstance(value, str):
        return _redact(value, needles)
    if isinstance(value, dict):
        if "resourceName" in value and not _theirs(value, person):
            return value
        return {k: _clean_json(v, person) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_json(v, person) for v in value if not _theirs(v, person)]
    return value


def _theirs(value: Any, person: Person) -> bool:
    """Whether a record in a list is theirs: a source's person record by id or address,
    any other record by any needle."""
    if not isinstance(value, dict):
        return False
    if "resourceName" in value:
        return value["resourceName"] in person.sources or _holds(
            json.dumps(value).encode(), person.emails
        )
    return _holds(json.dumps(value).encode(), person.needles)


def _rows(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    """Whatever text still names them in the stores (an alert's text, a draft of someone
    else's that mentions them), redacted in place."""
    redacted = 0
    for domain in (Store.OUTREACH, Store.BRAIN, Store.OPS):
        if not stores.exists(domain):
            continue
        with _open(stores, domain) as conn:
            # A row's own address: SQLite's rowid, PostgreSQL's ctid (in this transaction).
            row_id = "ctid" if dialect(conn) == "postgres" else "rowid"
            for table, columns in _text_columns(conn).items():
                named, args = _mentions(conn, table, columns, person.needles)
                for row in conn.execute(
                    f"SELECT {row_id}, {', '.join(columns)} FROM {table} WHERE {named}", args
                ).fetchall():
                    sets = {c: _redact(row[c], person.needles) for c in columns if row[c]}
                    values = Parameters()
                    assign = ", ".join(f"{c} = {values.mark(v)}" for c, v in sets.items())
                    if row_id == "ctid":
                        where = f"ctid = {values.mark(str(row[0]))}::tid"
                    else:
                        where = f"rowid = {values.mark(row[0])}"
                    conn.execute(f"UPDATE {table} SET {assign} WHERE {where}", values)
                    redacted += 1
    return {"rows_redacted": redacted}


def _text_columns(conn: Any) -> dict[str, list[str]]:
    """Each table of the store and its TEXT columns (the schema version table left out)."""
    tables: dict[str, list[str]] = {}
    if dialect(conn) == "postgres":
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND data_type = 'text'"
            " AND table_name != 'company_ai_schema' ORDER BY table_name, ordinal_position"
        ):
            tables.setdefault(table, []).append(column)
        return tables
    for (table,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall():
        tables[table] = [
            c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[2].upper() == "TEXT"
        ]
    return tables


def _crm(stores: Stores, person: Person, result: Forgotten, now: str) -> dict[str, int]:
    if not stores.exists(Store.CRM) or not person.contact_ids:
        return {"crm_people": 0, "crm_addresses": 0}
    ids, marks = person.contact_ids, _marks(person.contact_ids)
    with stores.connect(Store.CRM) as conn, transaction(conn):
        (addresses,) = conn.execute(
            f"SELECT count(*) FROM contact_emails WHERE contact_id IN ({marks})", ids
        ).fetchone()
        people = conn.execute(f"DELETE FROM contacts WHERE id IN ({marks})", ids).rowcount
    return {"crm_people": people, "crm_addresses": addresses}


# Each step clears one place in its own transaction and returns its counts; the CRM goes
# last, so a forget that dies midway can still be found by its address.
PLACES: list[tuple[str, Callable[[Stores, Person, Forgotten, str], dict[str, int]]]] = [
    ("memory", _memory),
    ("outreach", _outreach),
    ("brain", _brain),
    ("recall", _recall),
    ("vault_staging", _vault_staging),
    ("vectors", _vectors),
    ("files", _files),
    ("rows", _rows),
    ("crm", _crm),
]


def _compact(stores: Stores) -> None:
    """Deleted rows' bytes out of every store: each SQLite file vacuumed, then an empty WAL;
    each table of the stores on PostgreSQL rewritten (VACUUM FULL frees the pages that held
    dead rows; the server's WAL and backups are the operator's: docs/deploy.md)."""
    from company_ai.core.vectors import vectors_dir

    for domain in stores.urls:
        with stores.connect(domain) as conn:
            for table in _text_columns(conn):
                conn.execute(f"VACUUM FULL {table}")
    paths = [stores.path(d) for d in Store if d not in stores.urls and stores.exists(d)]
    chroma = vectors_dir(stores.data_dir) / "chroma.sqlite3"
    local = chroma.is_file() and not stores.chroma_url
    for path in [*paths, *([chroma] if local else [])]:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
