"""The records the outside world brings into the CRM store, and the person upsert: a
People person or a CSV row made a `ContactRecord`, stored by identity.

Identity: a contact is found by the source's id (`external_id`, e.g. `people/c123`), else
by any of its addresses. A contact keeps every address it was ever given (one primary,
in `contacts.email`); an address belongs to one contact only, so an address another
contact already has is left with that contact and counted as a conflict. A person the
source deletes, or who is missing from a complete full pass, is marked (`deleted_at`),
never removed; if they come back the mark is lifted. Empty fields never overwrite known
ones.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from company_ai.core.crm.contacts import normalize_email
from company_ai.core.crm.tombstones import Tombstones
from company_ai.core.intake import (
    Bounds,
    Refused,
    clean_text,
)
from company_ai.core.store import Parameters, data_dir_of, transaction

BOUNDS = Bounds(max_chars=10_000)  # one text field of a person: a 1-MB name is no name
INTAKE = "people"
MAX_FIELD = 200  # characters kept of a name, company, title or city
MAX_EMAILS = 20  # addresses kept per person: more is not a person, it is a list
NO_NAME = "(no name)"
_SQL_CHUNK = 900  # parameters per IN (...) query, under SQLite's limit


# --- records -----------------------------------------------------------------------------


class ContactRecord(NamedTuple):
    """One person as a source gives it: addresses normalised, the primary first. (A named
    tuple: a sync builds 1,000 a page, and a frozen dataclass took twice as long.)"""

    name: str
    emails: tuple[str, ...] = ()
    company: str | None = None
    title: str | None = None
    city: str | None = None
    external_id: str | None = None
    deleted: bool = False


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    if len(value) > BOUNDS.max_chars:
        raise Refused(f"a text of {len(value):,} characters (at most {BOUNDS.max_chars:,})")
    text = " ".join(clean_text(value).split())[:MAX_FIELD]
    return text or None


def _chosen(items: object) -> Mapping[str, Any]:
    """The primary entry of a People field (a list of dicts), else its first; {} if none."""
    if not isinstance(items, list) or not items:
        return {}
    if len(items) == 1:  # most fields of most people: one entry
        return items[0] if isinstance(items[0], dict) else {}
    entries = [i for i in items if isinstance(i, dict)]
    for entry in entries:
        metadata = entry.get("metadata")
        if isinstance(metadata, dict) and metadata.get("primary") is True:
            return entry
    return entries[0] if entries else {}


def person_record(person: object) -> tuple[ContactRecord, list[str]]:
    """A People API person as a record, and the problems met (bad addresses dropped).

    Raises Refused (a ValueError) when the person cannot be a contact at all (no usable
    resourceName, a text past the bounds).
    """
    if not isinstance(person, dict):
        raise Refused(f"a person must be an object, not {type(person).__name__}")
    resource = source_id(person)
    if resource is None:
        raise Refused("a person without a usable resourceName")
    metadata = person.get("metadata")
    deleted = isinstance(metadata, dict) and metadata.get("deleted") is True
    problems: list[str] = []
    emails: list[str] = []
    entries = person.get("emailAddresses")
    if isinstance(entries, list) and entries:
        primary = _chosen(entries)
        if primary and primary is not entries[0]:  # the primary first, the rest in order
            entries = [primary, *(e for e in entries if e is not primary)]
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            value = entry.get("value")
            if not isinstance(value, str):
                problems.append(f"{resource}: an address that is not text was dropped")
                continue
            if len(value) > BOUNDS.max_chars:
                raise Refused(f"an address of {len(value):,} characters")
            try:
                if clean_text(value) != value:  # a lone surrogate, a control character
                    raise ValueError("not an address")
                address = normalize_email(value)
            except ValueError:
                problems.append(f"{resource}: an address that is not one was dropped")
                continue
            if address not in emails and len(emails) < MAX_EMAILS:
                emails.append(address)
    names = _chosen(person.get("names"))
    organization = _chosen(person.get("organizations"))
    company = _clean(organization.get("name"))
    name = (
        _clean(names.get("displayName"))
        or _clean(names.get("unstructuredName"))
        or _clean(
            " ".join(
                _clean(n) or ""
                for n in (names.get("givenName"), names.get("familyName"))
                if isinstance(n, str)
            )
        )
        or (emails[0] if emails else None)
        or company
        or NO_NAME
    )
    record = ContactRecord(
        name,
        tuple(emails),
        company,
        _clean(organization.get("title")),
        _clean(_chosen(person.get("addresses")).get("city")),
        resource,
        deleted,
    )
    return record, problems


def source_id(person: object) -> str | None:
    """A person's resourceName when it is a usable id (a short string that cleaning leaves
    as it is), else None."""
    if not isinstance(person, dict):
        return None
    resource = person.get("resourceName")
    if not isinstance(resource, str) or not 0 < len(resource.strip()) <= MAX_FIELD:
        return None
    resource = resource.strip()
    return resource if clean_text(resource) == resource and resource.isprintable() else None


# --- upserts -----------------------------------------------------------------------------


@dataclass
class UpsertCounts:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    marked_deleted: int = 0
    restored: int = 0  # marked deleted before, present again
    unknown_deleted: int = 0  # deletions of people never stored: nothing to mark
    conflicts: int = 0  # addresses left with the contact that already had them
    forgotten: int = 0  # people skipped: an address of theirs was forgotten (tombstones)

    def add(self, other: UpsertCounts) -> None:
        for name, value in other.__dict__.items():
            setattr(self, name, getattr(self, name) + value)


_COLUMNS = ("name", "email", "company", "title", "city", "external_id", "deleted_at")


def _rows_where(crm: sqlite3.Connection, sql: str, keys: Iterable[object]) -> list[sqlite3.Row]:
    keys = list(keys)
    rows: list[sqlite3.Row] = []
    for start in range(0, len(keys), _SQL_CHUNK):
        chunk = keys[start : start + _SQL_CHUNK]
        rows += crm.execute(sql.format(Parameters().marks(chunk)), chunk).fetchall()
    return rows


def _digest(record: ContactRecord) -> str:
    # The plain tuple's repr (no field names): the digests stored before the record became
    # a named tuple stay valid.
    return hashlib.blake2b(tuple.__repr__(record).encode(), digest_size=12).hexdigest()


def _unowned(external_id: str | None) -> bool:
    """No source's id: an imported or hand-made contact, which a synced person may adopt."""
    return external_id is None or external_id.startswith("csv:")


def _tombstones_of(crm: sqlite3.Connection) -> Tombstones | None:
    """The tombstones of the data directory the CRM file is in (none for a memory store)."""
    data_dir = data_dir_of(crm)
    return Tombstones.load(data_dir) if data_dir else None


def upsert_contacts(
    crm: sqlite3.Connection,
    records: Sequence[ContactRecord],
    *,
    source: str,
    now: str,
    synced_from: str | None = None,
    seen_in: str | None = None,
    also: Callable[[sqlite3.Connection], None] | None = None,
) -> UpsertCounts:
    """Insert or update `records` in one transaction; the same records again change nothing.

    `synced_from` names the sync source that keeps these rows in step (None for an
    import); `seen_in` is the full pass they were seen in (see `mark_unseen_deleted`);
    `also` writes more in the same transaction (the sync's serial and refusals).
    """
    counts = UpsertCounts()
    stones = _tombstones_of(crm)
    if stones:
        allowed = [
            r for r in records if not stones.has(r.emails) and not stones.has_source(r.external_id)
        ]
        counts.forgotten, records = len(records) - len(allowed), allowed
    latest: dict[str, ContactRecord] = {}
    for record in records:  # a person twice in one batch: the later one wins
        key = record.external_id or (record.emails[0] if record.emails else record.name)
        latest.pop(key, None)
        latest[key] = record
    with transaction(crm):
        by_external = {
            r["external_id"]: r
            for r in _rows_where(crm, "SELECT * FROM contacts WHERE external_id IN ({})", latest)
        }
        seen: list[tuple] = []
        pending: list[tuple[ContactRecord, str | None]] = []
        for record in latest.values():
            digest = _digest(record) if synced_from else None
            row = by_external.get(record.external_id) if record.external_id else None
            if (
                row is not None
                and synced_from is not None
                and row["synced_from"] == synced_from
                and row["synced_digest"] == digest
                and bool(row["deleted_at"]) == record.deleted
            ):  # the source says what it said last time: the row (and local edits) stay
                counts.unchanged += 1
                if seen_in is not None:
                    seen.append((seen_in, row["id"]))
            else:
                pending.append((record, digest))
        addresses = {e for r, _ in pending for e in r.emails}
        stored_owner: dict[str, int] = {
            e: c
            for e, c in _rows_where(
                crm, "SELECT email, contact_id FROM contact_emails WHERE email IN ({})", addresses
            )
        }
        owner = dict(stored_owner)  # and, as the batch goes, the addresses it claims
        by_id = {
            r["id"]: r
            for r in _rows_where(
                crm, "SELECT * FROM contacts WHERE id IN ({})", set(stored_owner.values())
            )
        } | {r["id"]: r for r in by_external.values()}
        next_id = crm.execute("SELECT coalesce(max(id), 0) + 1 FROM contacts").fetchone()[0]
        inserts: list[tuple] = []
        updates: list[tuple] = []
        secondaries: list[tuple] = []
        for record, digest in pending:
            row = by_external.get(record.external_id) if record.external_id else None
            if row is None and stored_owner:  # found by a stored contact's address
                row = next(
                    (
                        by_id[stored_owner[e]]
                        for e in record.emails
                        if e in stored_owner
                        and (
                            _unowned(record.external_id)
                            or _unowned(by_id[stored_owner[e]]["external_id"])
                        )
                    ),
                    None,
                )
            if row is None and record.deleted:
                counts.unknown_deleted += 1
                continue
            contact_id = row["id"] if row is not None else next_id
            kept = [e for e in record.emails if owner.get(e, contact_id) == contact_id]
            counts.conflicts += len(record.emails) - len(kept)
            for address in kept:
                owner[address] = contact_id  # claimed: later records in the batch see it
            secondaries += [(e, contact_id, now) for e in kept[1:]]
            if row is None:
                next_id += 1
                inserts.append(
                    (contact_id, kept[0] if kept else None, record.name, record.company,
                     record.title, record.city, source, record.external_id, now, now,
                     synced_from, seen_in, digest)
                )  # fmt: skip
                counts.inserted += 1
                continue
            old = {c: row[c] for c in _COLUMNS}
            new = {
                "name": record.name if record.name != NO_NAME else old["name"],
                "email": kept[0] if kept else old["email"],
                "company": record.company or old["company"],
                "title": record.title or old["title"],
                "city": record.city or old["city"],
                "external_id": record.external_id
                if _unowned(old["external_id"]) and record.external_id is not None
                else old["external_id"],
                "deleted_at": (old["deleted_at"] or now) if record.deleted else None,
            }
            if record.deleted and not old["deleted_at"]:
                counts.marked_deleted += 1
            elif not record.deleted and old["deleted_at"]:
                counts.restored += 1
            if new == old:
                counts.unchanged += 1
                if not synced_from:
                    continue
            else:
                counts.updated += 1
            if synced_from:
                synced = (synced_from, seen_in or row["seen_in"], digest)
            else:
                synced = (row["synced_from"], row["seen_in"], row["synced_digest"])
            updated_at = now if new != old else row["updated_at"]
            updates.append((*new.values(), *synced, updated_at, contact_id))
        crm.executemany(
            "INSERT INTO contacts (id, email, name, company, title, city, source, external_id,"
            " created_at, updated_at, synced_from, seen_in, synced_digest)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)",
            inserts,
        )
        crm.executemany(
            "UPDATE contacts SET name = $1, email = $2, company = $3, title = $4, city = $5,"
            " external_id = $6, deleted_at = $7, synced_from = $8, seen_in = $9,"
            " synced_digest = $10, updated_at = $11 WHERE id = $12",
            updates,
        )
        crm.executemany("UPDATE contacts SET seen_in = $1 WHERE id = $2", seen)
        # A new contact's primary address is written here, a changed one by the trigger on
        # contacts.email (schema.CRM_V2); the other addresses here too.
        crm.executemany(
            "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
            " VALUES ($1, $2, 1, $3)",
            [(row[1], row[0], now) for row in inserts if row[1]],
        )
        crm.executemany(
            "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
            " VALUES ($1, $2, 0, $3) ON CONFLICT (email) DO NOTHING",
            secondaries,
        )
        if also is not None:
            also(crm)
    return counts


def mark_unseen_deleted(
    crm: sqlite3.Connection, synced_from: str, generation: str, now: str
) -> int:
    """After a complete full pass: mark the source's contacts it no longer returned."""
    with transaction(crm):
        return crm.execute(
            "UPDATE contacts SET deleted_at = $1, updated_at = $2 WHERE synced_from = $3"
            " AND deleted_at IS NULL AND (seen_in IS NULL OR seen_in != $4)",
            (now, now, synced_from, generation),
        ).rowcount


def contact_emails(crm: sqlite3.Connection, contact_id: int) -> list[tuple[str, bool]]:
    """Every address of a contact, the primary first."""
    return [
        (e, bool(p))
        for e, p in crm.execute(
            "SELECT email, is_primary FROM contact_emails WHERE contact_id = $1"
            " ORDER BY is_primary DESC, email",
            (contact_id,),
        )
    ]
