"""The alert queue in `ops.db`: record first, deliver after, retry what is pending.

`enqueue` is idempotent by key (one alert per failure, however often a sensor sees it);
`flush` hands every pending alert, oldest first, to a `deliver` function and stops at
the first one that fails, so a notifier that is down loses nothing and keeps the order.
Nothing here raises because delivery failed: the caller's job must not fail with it.
Alert text and delivery errors are scrubbed of `secrets` (`core.secrets.scrub`) before
they are stored or returned: a service's error often echoes the token it was called with.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from company_ai.core.secrets import scrub
from company_ai.core.store import table_exists, transaction
from company_ai.core.times import to_iso


@dataclass(frozen=True)
class FlushResult:
    sent: int
    pending: int
    error: str | None = None  # the delivery error that stopped the flush, if any


ERROR_CHARS = 500


class AlertChannel(Protocol):
    """Where an alert is delivered (`resources/notifier.py::Notifier` chooses one)."""

    def deliver(self, text: str) -> None:
        """Deliver one alert, or raise: `flush` keeps it pending and records why."""
        ...


def enqueue(
    conn: sqlite3.Connection,
    key: str,
    text: str,
    secrets: Iterable[str] = (),
    *,
    now: datetime,
) -> bool:
    """Record an alert (scrubbed of `secrets`) at `now`; False when its key was already
    recorded."""
    text = scrub(text, secrets)
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO alerts (key, text, created_at) VALUES ($1, $2, $3)"
            " ON CONFLICT (key) DO NOTHING",
            (key, text, to_iso(now)),
        )
        return cursor.rowcount == 1


def flush(
    conn: sqlite3.Connection,
    deliver: Callable[[str], None],
    secrets: Iterable[str] = (),
    *,
    clock: Callable[[], datetime],
) -> FlushResult:
    """Deliver pending alerts oldest first; the first failure stops and is recorded,
    scrubbed of `secrets` (whole, before it is shortened: a cut secret escapes a scrub)."""
    secrets = tuple(secrets)
    pending = conn.execute(
        "SELECT id, text FROM alerts WHERE sent_at IS NULL ORDER BY id"
    ).fetchall()
    sent = 0
    for alert_id, text in pending:
        try:
            deliver(text)
        except Exception as exc:  # any delivery failure: keep it pending, try later
            error = scrub(f"{type(exc).__name__}: {exc}", secrets)[:ERROR_CHARS]
            with transaction(conn):
                conn.execute(
                    "UPDATE alerts SET attempts = attempts + 1, last_error = $1 WHERE id = $2",
                    (error, alert_id),
                )
            return FlushResult(sent, len(pending) - sent, error)
        with transaction(conn):
            conn.execute(
                "UPDATE alerts SET attempts = attempts + 1, sent_at = $1, last_error = NULL"
                " WHERE id = $2",
                (to_iso(clock()), alert_id),
            )
        sent += 1
    return FlushResult(sent, 0)


def pending_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM alerts WHERE sent_at IS NULL").fetchone()[0]


@dataclass(frozen=True)
class Report:
    """One stored report (the morning brief is `brief:<day>`), as it was queued."""

    key: str
    text: str
    created_at: str
    sent_at: str | None


def latest_report(conn: sqlite3.Connection | None, prefix: str) -> Report | None:
    """The newest report whose key starts with `prefix` (e.g. "brief:"), or None."""
    if conn is None or not table_exists(conn, "alerts"):
        return None
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    row = conn.execute(
        "SELECT key, text, created_at, sent_at FROM alerts WHERE key LIKE $1 ESCAPE '\\'"
        " ORDER BY created_at DESC, id DESC LIMIT 1",
        (pattern,),
    ).fetchone()
    return None if row is None else Report(row[0], row[1], row[2], row[3])
