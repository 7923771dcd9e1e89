"""The CRM audit: how much of the CRM is there, how warm it is, and how much can be used.

The CRM is mutable (the sync, imports, warmth bumps, CRM writeback), so an audit is a
capture: it counts the CRM as it stands at the moment it is taken (`now`) and each
capture is stored as one row (`record_audit`); readers take the latest row recorded
before their own moment (`latest_audit`), so a replayed brief reads what its morning read.

The numbers, all over the contacts not deleted upstream (`deleted_at` empty):

  - `contacts`, and `deleted` (kept for their history, counted apart);
  - the warmth bands (`WARMTH_BANDS`, the one definition): cold 0-20, warm 21-60,
    hot 61-100, as counts and shares;
  - `with_email`: contacts with a valid primary address (`is_valid_email`);
  - `actionable`: contacts clean enough to act on (see `is_actionable`);
  - `engagement_rows`: episodes of type `engagement` in the memory (site, social and
    portal touches), all of them.

Stdlib only; connections in, counts out. The warmth bands are defined here and only here.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass
from typing import Any

from company_ai.core.crm import normalize_email
from company_ai.core.outreach import hold_reason, read_holds
from company_ai.core.store import Parameters, Store, Stores, dialect, table_exists
from company_ai.core.times import canonical_utc

# (band, lowest warmth, highest warmth), inclusive; together they cover 0..100 once. The
# sample CRM draws its contacts with the same cut points (sample_world/crm.py, `_band`).
WARMTH_BANDS: tuple[tuple[str, int, int], ...] = (
    ("cold", 0, 20),
    ("warm", 21, 60),
    ("hot", 61, 100),
)
BANDS = tuple(name for name, _, _ in WARMTH_BANDS)
BANDS_IN_WORDS = ", ".join(f"{name} {low}-{high}" for name, low, high in WARMTH_BANDS)

# A deliverable shape: one @, a local part, and a domain of dot-separated labels with a
# top-level label of letters (what a mailer can be given; not a proof the box exists).
_DOMAIN = re.compile(r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,}")


def band_of(warmth: int) -> str:
    """The warmth band of a warmth score 0-100."""
    for name, low, high in WARMTH_BANDS:
        if low <= warmth <= high:
            return name
    raise ValueError(f"warmth {warmth!r} is outside 0-100")


def is_valid_email(address: str | None) -> bool:
    """Whether `address` has a deliverable shape: `normalize_email` accepts it, and its
    domain is labels joined by dots ending in a letters-only top-level label."""
    if not address:
        return False
    try:
        cleaned = normalize_email(address)
    except ValueError:
        return False
    local, _, domain = cleaned.rpartition("@")
    return "@" not in local and len(cleaned) <= 254 and bool(_DOMAIN.fullmatch(domain))


def is_actionable(name: str | None, email: str | None, deleted_at: str | None, held: bool) -> bool:
    """A record clean enough to act on: it has a name (not blank), a valid email
    (`is_valid_email`), it is not deleted upstream, and no send hold stops mail to it at
    the audit's moment (a reply, an unsubscribe, a bounce of that address, a deferral or
    an out-of-office still running: core/outreach/send_rules.py)."""
    return bool(name and name.strip()) and is_valid_email(email) and not deleted_at and not held


@dataclass(frozen=True)
class Audit:
    contacts: int
    cold: int
    warm: int
    hot: int
    actionable: int
    with_email: int
    engagement_rows: int
    deleted: int

    def share(self, count: int) -> float | None:
        """`count` over the contacts, to 4 places; None for an empty CRM."""
        return round(count / self.contacts, 4) if self.contacts else None

    def numbers(self) -> dict[str, Any]:
        """Counts and shares under stable names (the metadata, the CLI's JSON, the state)."""
        counts = asdict(self)
        shares = {
            f"{name}_share": self.share(counts[name])
            for name in (*BANDS, "actionable", "with_email")
        }
        return counts | shares

    def lines(self) -> list[str]:
        """The audit in a few lines for a person (the brief, the CLI)."""

        def part(count: int) -> str:
            share = self.share(count)
            return f"{count} ({'-' if share is None else f'{share:.1%}'})"

        bands = ", ".join(f"{name} {part(getattr(self, name))}" for name in BANDS)
        return [
            f"{self.contacts} contacts ({self.deleted} deleted upstream, not counted)",
            f"warmth: {bands} [bands: {BANDS_IN_WORDS}]",
            f"actionable {part(self.actionable)}: a name, a valid email, not deleted, not held",
            f"with an email {part(self.with_email)}",
            f"engagement rows {self.engagement_rows}",
        ]


def audit_crm(
    crm: sqlite3.Connection | None,
    outreach: sqlite3.Connection | None,
    memory: Any | None,
    now: str,
) -> Audit:
    """The CRM as it stands at `now` (a stored UTC time); a store that does not exist yet
    (None) or lacks its table counts as empty."""
    # The send rules are the one definition of a hold: the audit asks them rather than
    # re-reading send_holds.
    now = canonical_utc(now)
    holds = (
        read_holds(outreach)
        if outreach is not None and table_exists(outreach, "send_holds")
        else {}
    )
    bands = dict.fromkeys(BANDS, 0)
    contacts = actionable = with_email = deleted = 0
    if crm is not None and table_exists(crm, "contacts"):
        column = "deleted_at" if _has_column(crm, "contacts", "deleted_at") else "NULL"
        for cid, name, email, warmth, deleted_at in crm.execute(
            f"SELECT id, name, email, warmth, {column} FROM contacts"
        ):
            if deleted_at:
                deleted += 1
                continue
            contacts += 1
            bands[band_of(warmth)] += 1
            valid = is_valid_email(email)
            with_email += valid
            held = hold_reason(holds.get(cid, ()), now, email) is not None
            actionable += is_actionable(name, email, deleted_at, held)
    engagement = 0
    if memory is not None and table_exists(memory, "contact_episodes"):
        engagement = memory.execute(
            "SELECT count(*) FROM contact_episodes WHERE episode_type = $1", ("engagement",)
        ).fetchone()[0]
    return Audit(
        contacts=contacts,
        cold=bands["cold"],
        warm=bands["warm"],
        hot=bands["hot"],
        actionable=actionable,
        with_email=with_email,
        engagement_rows=engagement,
        deleted=deleted,
    )


def _has_column(conn: Any, table: str, column: str) -> bool:
    """Whether `table` has `column` (a CRM store older than CRM_V2 has no `deleted_at`)."""
    if dialect(conn) == "postgres":
        return (
            conn.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = $1 AND column_name = $2",
                (table, column),
            ).fetchone()
            is not None
        )
    return any(r[1] == column for r in conn.execute(f"PRAGMA table_info({table})"))


def audit_stores(stores: Stores, now: str) -> Audit:
    """`audit_crm` over the stores as they are (read-only; a missing store counts as empty)."""
    crm, outreach, memory = readers = [
        stores.reader(domain) for domain in (Store.CRM, Store.OUTREACH, Store.MEMORY)
    ]
    try:
        return audit_crm(crm, outreach, memory, now)
    finally:
        for reader in readers:
            if reader is not None:
                reader.close()


# --- the stored captures (ops.db, `crm_audits`) --------------------------------------------

_FIELDS = tuple(Audit.__dataclass_fields__)


@dataclass(frozen=True)
class StoredAudit:
    day: str  # the partition that took it
    recorded_at: str  # when it was taken: the CRM as it stood then
    audit: Audit


def record_audit(ops: sqlite3.Connection, day: str, recorded_at: str, audit: Audit) -> None:
    """Store one capture (inside the caller's transaction). Each capture is a row of its
    own: a re-run of the day adds its moment and keeps the earlier one, so a brief replayed
    later still reads what it read; the same moment twice is one row."""
    values = [getattr(audit, f) for f in _FIELDS]
    ops.execute(
        f"INSERT INTO crm_audits (day, recorded_at, {', '.join(_FIELDS)})"
        f" VALUES ($1, $2, {Parameters([day, recorded_at]).marks(_FIELDS)}) ON CONFLICT DO NOTHING",
        (day, canonical_utc(recorded_at), *values),
    )


def latest_audit(ops: sqlite3.Connection | None, before: str | None = None) -> StoredAudit | None:
    """The latest capture recorded before `before` (a stored UTC time; None: the latest of
    all), or None when there is none (no store, an older schema, no row yet)."""
    if ops is None or not table_exists(ops, "crm_audits"):
        return None
    where, args = ("WHERE recorded_at < $1", (canonical_utc(before),)) if before else ("", ())
    row = ops.execute(
        f"SELECT day, recorded_at, {', '.join(_FIELDS)} FROM crm_audits {where}"
        " ORDER BY recorded_at DESC LIMIT 1",
        args,
    ).fetchone()
    if row is None:
        return None
    return StoredAudit(row[0], row[1], Audit(*row[2:]))


def stored_audit(stores: Stores, before: str | None = None) -> StoredAudit | None:
    """`latest_audit` from the ops store, or None when it does not exist yet."""
    ops = stores.reader(Store.OPS)
    try:
        return latest_audit(ops, before)
    finally:
        if ops is not None:
            ops.close()


@dataclass(frozen=True)
class AuditReport:
    """What `company-ai audit` and the MCP `audit` tool show: the latest stored capture, or
    the same numbers computed now when none is stored yet (`source` says which)."""

    source: str  # "stored" or "computed now"
    day: str | None  # the partition that took a stored capture
    as_of: str
    audit: Audit

    def heading(self) -> str:
        if self.source == "stored":
            return f"CRM audit stored by crm_audit for {self.day}, as of {self.as_of}"
        return f"CRM audit computed now (no audit stored yet), as of {self.as_of}"

    def to_json(self) -> dict:
        bands = {name: [low, high] for name, low, high in WARMTH_BANDS}
        head = {"source": self.source, "day": self.day, "as_of": self.as_of}
        return head | {"warmth_bands": bands} | self.audit.numbers()


def audit_report(stores: Stores, now: str) -> AuditReport:
    """The latest stored CRM audit, else one computed at `now` (read-only either way)."""
    stored = stored_audit(stores)
    if stored is not None:
        return AuditReport("stored", stored.day, stored.recorded_at, stored.audit)
    return AuditReport("computed now", None, now, audit_stores(stores, now))
