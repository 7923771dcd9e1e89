"""The People sync: contacts from the outside world into the CRM store, in passes that
survive being killed (the records and their upsert: `people.py`).

The sync (`sync_people`) reads pages of people from a source (the Google People API's
`people.connections.list`, or the sample CRM offline) through one function,
`fetch(page_token, sync_token) -> page`. After every page it commits that page's upserts,
then saves the next page token to a cursor file (atomically); after the last page it
saves the sync token, so the next pass asks only for what changed. A run stops politely
at `MAX_PAGES` pages or when the next page would overrun its time budget, and the next
run resumes from the cursor. A crash between the commit and the cursor save re-reads one
page, which changes nothing: every upsert is idempotent.

Passes belong to this store. Each full pass has a generation minted by the CRM store
itself (`sync_state`: a counter and a random id) and a serial, the pages it has committed;
each page's serial is written in the same transaction as its upserts, and the cursor file
carries both. A cursor whose generation or serial is not the store's (a restored backup of
either, a copied file) is set aside with a warning and a new full pass starts. Contacts
missing from a pass are marked deleted only at the end of a full pass that went through
every page of its own generation with no page refused, and only when that is not more
than `max_deleted_share` of the source's contacts (more is held, see `_sweep`).

Each person of a page is read alone (`intake.take`): one that cannot be read is refused
(`intake_refusals`, keyed by resourceName, with its reason) and the rest are stored; every
text goes through `clean_text`. A page that cannot be read at all is one refused item; the
run stops at it (the next run asks for it again) or, when its next page token is readable,
goes on, but that pass then marks nobody deleted.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from company_ai.core.bulk import cycle_collector_paused
from company_ai.core.crm.people import (
    INTAKE,
    ContactRecord,
    UpsertCounts,
    mark_unseen_deleted,
    person_record,
    source_id,
    upsert_contacts,
)
from company_ai.core.files import write_atomic
from company_ai.core.intake import (
    Refusal,
    Taken,
    clean_text,
    record_refusals,
    take,
)
from company_ai.core.store import transaction

PERSON_FIELDS = "names,emailAddresses,organizations,addresses,metadata"
# A partial response: only what `person_record` reads, so there is less to send and parse.
PAGE_FIELDS = (
    "nextPageToken,nextSyncToken,connections(resourceName,metadata/deleted,"
    "names(displayName,unstructuredName,givenName,familyName,metadata/primary),"
    "emailAddresses(value,metadata/primary),organizations(name,title,metadata/primary),"
    "addresses(city,metadata/primary))"
)
PAGE_SIZE = 1000
MAX_PAGES = 15
# 520 s of work under the job's 600-s dagster/max_runtime: the 80 s left cover the last
# page's slowest request (the client's timeout is 60 s) and the run's own start and end.
BUDGET_S = 520.0
CURSOR_VERSION = 2  # 2: the cursor carries the store's generation and serial
MAX_CONNECTIONS = 2 * PAGE_SIZE  # more people than asked for on one page: not a page
# A complete pass that would mark more than this share of the source's contacts deleted
# (and more than SWEEP_FLOOR of them) marks nobody: see `_sweep`.
MAX_DELETED_SHARE = 0.25
SWEEP_FLOOR = 10


class TokenRejected(Exception):
    """The source refused a page or sync token (HTTP 400 or 410): expired or invalid."""

    def __init__(self, status: int, reason: str = "") -> None:
        super().__init__(f"HTTP {status}{': ' + reason if reason else ''}")
        self.status = status


class MalformedPage(ValueError):
    """A page of the source's answer is not what the API promises; nothing of it was stored."""


class SyncError(RuntimeError):
    """The sync cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class Page:
    records: list[ContactRecord]
    problems: list[str]
    next_page_token: str | None
    next_sync_token: str | None
    refusals: list[Refusal] = field(default_factory=list)
    refused_ids: list[str] = field(default_factory=list)  # refused, but whose id is known


def _token(page: Mapping[str, Any], key: str) -> str | None:
    value = page.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 4096:
        raise MalformedPage(f"{key} is not a token")
    return value


def parse_page(page: object) -> Page:
    """One `connections.list` answer, checked. Each person alone (`intake.take`): one that
    cannot be read is refused, keyed by its resourceName (else its place on the page), and
    named in `problems`; an answer that is not a page at all raises MalformedPage."""
    if not isinstance(page, dict):
        raise MalformedPage(f"the answer is {type(page).__name__}, not a JSON object")
    people = page.get("connections", [])
    if not isinstance(people, list):
        raise MalformedPage("connections is not a list")
    if len(people) > MAX_CONNECTIONS:
        raise MalformedPage(f"{len(people):,} people on a page of at most {PAGE_SIZE:,}")
    records: list[ContactRecord] = []
    problems: list[str] = []
    taken = Taken(INTAKE)
    places = {id(p): n for n, p in enumerate(people, start=1)}

    def key(person: object) -> str:
        return source_id(person) or f"person {places[id(person)]} of a page"

    for record, dropped in take(taken, people, key, person_record):
        records.append(record)
        problems += dropped
    problems += [f"{r.key} skipped: {r.reason}" for r in taken.refusals]
    refused_ids = [r.key for r in taken.refusals if not r.key.startswith("person ")]
    return Page(
        records,
        problems,
        _token(page, "nextPageToken"),
        _token(page, "nextSyncToken"),
        taken.refusals,
        refused_ids,
    )


# --- the cursor --------------------------------------------------------------------------


@dataclass(frozen=True)
class Cursor:
    """Where a sync stands. A pass sends (page_token, sync_token) as they are here: no page
    token starts a pass; no sync token makes it a full pass. `generation` is the full pass
    (minted by the CRM store, see `PassState`) this cursor belongs to, `serial` how many
    pages the store had committed in it when the cursor was saved."""

    page_token: str | None = None
    sync_token: str | None = None
    generation: str | None = None
    pages_done: int = 0  # pages of the current pass (a sync-token pass counts from 0)
    serial: int = 0

    @property
    def fresh(self) -> bool:
        return self.page_token is None and self.sync_token is None


def load_cursor(path: Path, source: str) -> tuple[Cursor, str | None]:
    """The saved cursor, or a fresh one and why when the file cannot be trusted."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Cursor(), None
    except OSError as exc:
        return Cursor(), (
            f"the sync cursor {path} cannot be read ({exc.strerror}): restarting from page one"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("version") != CURSOR_VERSION:
            raise ValueError(f"not a version-{CURSOR_VERSION} cursor")
        if data.get("source") != source:
            return Cursor(), (
                f"the sync cursor {path} belongs to source {str(data.get('source'))[:40]!r}, "
                f"not {source!r}: restarting from page one"
            )
        cursor = Cursor(
            page_token=data["page_token"],
            sync_token=data["sync_token"],
            generation=data["generation"],
            pages_done=data["pages_done"],
            serial=data["serial"],
        )
        tokens = (cursor.page_token, cursor.sync_token, cursor.generation)
        if not all(t is None or (isinstance(t, str) and t) for t in tokens):
            raise ValueError("a token is not a string")
        for count in (cursor.pages_done, cursor.serial):
            if type(count) is not int or count < 0:
                raise ValueError("pages_done or serial is not a count")
        if not cursor.fresh and not cursor.generation:
            raise ValueError("a pass without its generation")
    except (UnicodeDecodeError, ValueError, KeyError) as exc:
        return Cursor(), f"the sync cursor {path} is corrupt ({exc}): restarting from page one"
    return cursor, None


def save_cursor(path: Path, source: str, cursor: Cursor) -> None:
    data = {"version": CURSOR_VERSION, "source": source} | cursor.__dict__
    write_atomic(path, json.dumps(data, sort_keys=True).encode("utf-8"))


# --- the store's own passes ----------------------------------------------------------------


@dataclass(frozen=True)
class PassState:
    """The CRM store's record of a source's current full pass (table `sync_state`)."""

    generation: str
    serial: int  # pages committed in this generation (its full pass and the changes after)
    complete: bool  # its full pass went through its last page
    spoiled: int  # pages of its full pass refused whole: its end marks nobody deleted


def pass_state(crm: sqlite3.Connection, source: str) -> PassState | None:
    row = crm.execute(
        "SELECT generation, serial, complete_at, refused_pages FROM sync_state WHERE source = $1",
        (source,),
    ).fetchone()
    return PassState(row[0], row[1], row[2] is not None, row[3]) if row else None


def _mint(crm: sqlite3.Connection, source: str, now: str) -> PassState:
    """A new full pass of `source`, named by this store: its counter and a random id (two
    stores, or a store and its backup, never mint the same name)."""
    with transaction(crm):
        (number,) = crm.execute(
            "SELECT coalesce(max(number), 0) + 1 FROM sync_state WHERE source = $1", (source,)
        ).fetchone()
        generation = f"{number}.{secrets.token_hex(8)}"
        crm.execute(
            "INSERT INTO sync_state (source, number, generation, serial, started_at,"
            " complete_at, refused_pages) VALUES ($1, $2, $3, 0, $4, NULL, 0)"
            " ON CONFLICT (source) DO UPDATE SET number = excluded.number,"
            " generation = excluded.generation, serial = 0, started_at = excluded.started_at,"
            " complete_at = NULL, refused_pages = 0",
            (source, number, generation, now),
        )
    return PassState(generation, 0, False, 0)


def _trusted(cursor: Cursor, state: PassState | None) -> bool:
    """Whether a saved cursor continues this store's own current pass: the same generation,
    and the serial the store has (or one less: a page committed whose cursor was not saved,
    read again harmlessly); a sync token only after that generation's full pass ended."""
    if cursor.fresh:
        return True
    return (
        state is not None
        and cursor.generation == state.generation
        and state.serial - 1 <= cursor.serial <= state.serial
        and (cursor.page_token is not None or state.complete)
    )


# --- the sync ----------------------------------------------------------------------------

Fetch = Callable[[str | None, str | None], object]


class ContactSource(Protocol):
    """Where contacts come from (`resources/people.py::PeopleSource`): pages as the People
    API's `people.connections.list` answers them."""

    @property
    def source_name(self) -> str:
        """What synced rows are marked with (`contacts.synced_from`)."""
        ...

    def fetcher(self) -> Fetch:
        """`fetch(page_token, sync_token) -> page`; a refused token raises TokenRejected."""
        ...


@dataclass
class SyncReport:
    source: str
    pages: int = 0
    people: int = 0
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    swept: int = 0  # marked deleted after a full pass that no longer returned them
    skipped: int = 0  # people or addresses that could not be read (see the log)
    stopped: str = ""  # complete | page cap | time budget
    resumed_at_page: int = 0  # 0: this run started a pass at page one
    restarted: str = ""  # why the cursor was thrown away and the pass started again
    held: int = 0  # contacts a complete pass did not return, too many to mark (see _sweep)
    refusals: list[Refusal] = field(default_factory=list)  # people and pages set aside

    def metadata(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "pages": self.pages,
            "people": self.people,
            **self.counts.__dict__,
            "marked_deleted_absent": self.swept,
            "skipped": self.skipped,
            "stopped": self.stopped,
            "resumed_at_page": self.resumed_at_page,
            "restarted": self.restarted or "no",
            "deletions_held": self.held,
            "items_read": self.people + len(self.refusals),
            "items_refused": len(self.refusals),
        }

    def reasons(self, limit: int = 50) -> dict[str, str]:
        return {r.key: r.reason for r in self.refusals[:limit]}


def sync_people(
    fetch: Fetch,
    crm: sqlite3.Connection,
    cursor_path: Path,
    *,
    source: str,
    now: str,
    clock: Callable[[], float],
    max_pages: int = MAX_PAGES,
    budget_s: float = BUDGET_S,
    max_deleted_share: float = MAX_DELETED_SHARE,
    log: Callable[[str], None] = lambda _: None,
) -> SyncReport:
    """Sync pages from `fetch` into the CRM from where the cursor stands (module docstring).

    `clock` is a monotonic clock in seconds (injected: tests drive it). The run stops
    before a page when the time used plus the slowest page so far would pass `budget_s`.
    """
    report = SyncReport(source)
    cursor, problem = load_cursor(cursor_path, source)
    state = pass_state(crm, source)
    if problem is None and not _trusted(cursor, state):
        problem = (
            f"the sync cursor {cursor_path} belongs to pass {cursor.generation} (serial "
            f"{cursor.serial}), not to this CRM store's pass "
            f"{state.generation + f' (serial {state.serial})' if state else '(none)'}: a "
            "restored backup or a copied file; it is set aside and a full pass starts from "
            "page one (nobody is marked deleted from it)"
        )
        cursor = Cursor()
    if problem:
        log(problem)
        report.restarted = problem
    report.resumed_at_page = cursor.pages_done + 1 if cursor.page_token else 0
    started, slowest = clock(), 0.0
    while report.pages < max_pages:
        if report.pages and clock() - started + slowest > budget_s:
            report.stopped = "time budget"
            break
        began = clock()
        try:
            with cycle_collector_paused():
                page = parse_page(fetch(cursor.page_token, cursor.sync_token))
        except TokenRejected as exc:
            if cursor.fresh:
                raise SyncError(
                    f"the {source} source refused a request from page one ({exc}): check the "
                    "credentials and the requested fields"
                ) from exc
            which = "page token" if cursor.page_token else "sync token"
            note = (
                f"the {source} source rejected the saved {which} ({exc}): it expired or is "
                "invalid; the cursor was cleared and the sync restarts from page one"
            )
            log(note)
            report.restarted = note
            cursor_path.unlink(missing_ok=True)
            cursor = Cursor()
            report.resumed_at_page = 0
            continue
        except MalformedPage as exc:
            # One refused item; the cursor stays at it, so the next run asks for it again,
            # and the pass cannot end with this page unread.
            refusal = Refusal(INTAKE, _page_key(cursor), clean_text(str(exc))[:300])
            with transaction(crm):
                record_refusals(crm, [refusal], now)
                crm.execute(
                    "UPDATE sync_state SET refused_pages = refused_pages + 1"
                    " WHERE source = $1 AND generation = $2",
                    (source, cursor.generation),
                )
            report.refusals.append(refusal)
            log(f"{refusal.key} set aside: {refusal.reason}; the next run asks for it again")
            report.stopped = "page refused"
            break
        if cursor.fresh:
            # A full pass begins: this store names it (a pass restarted in the same run
            # gets a new name, so what only the abandoned attempt saw does not count).
            state = _mint(crm, source, now)
            cursor = Cursor(generation=state.generation)
        for text in page.problems:
            log(text)
        report.skipped += len(page.problems)
        refusals = [_placed(r, cursor) for r in page.refusals]
        report.refusals += refusals
        generation, serial = cursor.generation, cursor.serial + 1
        full = cursor.sync_token is None

        with cycle_collector_paused():
            report.counts.add(
                upsert_contacts(
                    crm,
                    page.records,
                    source=source,
                    now=now,
                    synced_from=source,
                    seen_in=generation if full else None,
                    also=_page_written(
                        source, generation, serial, refusals, page.refused_ids if full else [], now
                    ),
                )
            )
        report.pages += 1
        report.people += len(page.records)
        slowest = max(slowest, clock() - began)
        if page.next_page_token:
            cursor = Cursor(
                page.next_page_token,
                cursor.sync_token,
                generation,
                cursor.pages_done + 1,
                serial,
            )
            save_cursor(cursor_path, source, cursor)
            continue
        following = Cursor(sync_token=page.next_sync_token, generation=generation, serial=serial)
        if full and generation:
            report.swept, report.held = _sweep(crm, source, generation, now, max_deleted_share, log)
            if report.held:
                following = Cursor()  # the next run makes a full pass again, and checks
        save_cursor(cursor_path, source, following if following.sync_token else Cursor())
        report.stopped = "complete"
        break
    else:
        report.stopped = "page cap"
    return report


def _page_written(
    source: str,
    generation: str | None,
    serial: int,
    refusals: list[Refusal],
    refused_ids: list[str],
    now: str,
) -> Callable[[sqlite3.Connection], None]:
    """What a page writes beside its upserts, in their transaction: the store's serial of
    the pass, the refusals, and the refused people's ids as seen (refused is not gone)."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE sync_state SET serial = $1 WHERE source = $2 AND generation = $3",
            (serial, source, generation),
        )
        if refusals:
            record_refusals(conn, refusals, now)
        if refused_ids:
            conn.executemany(
                "UPDATE contacts SET seen_in = $1 WHERE synced_from = $2 AND external_id = $3",
                [(generation, source, i) for i in refused_ids],
            )

    return write


def _page_key(cursor: Cursor) -> str:
    return f"page {cursor.pages_done + 1} of pass {cursor.generation or '(new)'}"


def _placed(refusal: Refusal, cursor: Cursor) -> Refusal:
    """A refused person known only by their place, keyed by the page too."""
    if refusal.key.startswith("person "):
        return Refusal(refusal.intake, f"{_page_key(cursor)}: {refusal.key}", refusal.reason)
    return refusal


def _sweep(
    crm: sqlite3.Connection,
    source: str,
    generation: str,
    now: str,
    max_share: float,
    log: Callable[[str], None],
) -> tuple[int, int]:
    """At the end of a full pass of `generation`: mark the source's contacts it did not
    return (swept, held). Nobody is marked when a page of the pass was refused whole, when
    it returned nobody (more likely a fault than an empty address book), or when it would
    mark more than `max_share` of the source's contacts (and more than SWEEP_FLOOR): a
    pass that saw far fewer people than exist is a fault until shown otherwise. Held
    deletions are logged and counted; the cursor is left for a new full pass, so each run
    checks again, and an owner who knows the address book shrank raises `max_deleted_share`
    for one run. The pass is recorded as complete either way."""
    state = pass_state(crm, source)
    if state is None or state.generation != generation:
        return 0, 0
    seen, live = crm.execute(
        "SELECT count(*) FILTER (WHERE seen_in = $1), count(*) FILTER (WHERE deleted_at IS NULL)"
        " FROM contacts WHERE synced_from = $2",
        (generation, source),
    ).fetchone()
    (unseen,) = crm.execute(
        "SELECT count(*) FROM contacts WHERE synced_from = $1 AND deleted_at IS NULL"
        " AND (seen_in IS NULL OR seen_in != $2)",
        (source, generation),
    ).fetchone()
    with transaction(crm):
        crm.execute(
            "UPDATE sync_state SET complete_at = $1 WHERE source = $2 AND generation = $3",
            (now, source, generation),
        )
    if state.spoiled:
        log(f"a page of this pass of {source} was refused: no contact is marked deleted")
        return 0, 0
    if not seen:
        log(f"the full pass of {source} returned nobody: no contact is marked deleted")
        return 0, 0
    if unseen > SWEEP_FLOOR and unseen > max_share * live:
        log(
            f"the full pass of {source} did not return {unseen:,} of {live:,} contacts, more "
            f"than {max_share:.0%}: none is marked deleted (held), and the next run makes a "
            "full pass again; raise max_deleted_share for one run if they really are gone"
        )
        return 0, unseen
    swept = mark_unseen_deleted(crm, source, generation, now)
    if swept:
        log(f"{swept} contacts no longer returned by {source} were marked deleted (kept)")
    return swept, 0
