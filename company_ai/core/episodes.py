"""contact_episodes: the append-only episodic memory, its seals and its audit.

Writers call `append_episodes`; it validates the whole batch before touching the store,
then inserts it in one transaction. A natural key makes every write idempotent: the
same event appended twice is stored once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from company_ai.core.db import transaction
from company_ai.core.models import Episode
from company_ai.core.times import ISO_GLOB, day_window, local_day, to_iso, utc_now


class EpisodeError(ValueError):
    """An episode in a batch is invalid; the message names it, and nothing was written."""


@dataclass(frozen=True)
class AppendResult:
    inserted: int
    duplicates: int  # already stored under the same natural key: skipped, not an error


def natural_key(
    contact_id: int, episode_type: str, source: str | None, created_at: str, content: str
) -> str:
    """The default natural key (unique per contact): the event's own fields, hashed."""
    raw = "\x1f".join((str(contact_id), episode_type, source or "", created_at, content))
    return "h:" + hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


_BATCH = TypeAdapter(list[Episode])


def validate(episodes: Iterable[Episode | Mapping[str, Any]]) -> list[Episode]:
    """Validate a batch; any bad episode raises EpisodeError naming its position."""
    try:
        return _BATCH.validate_python(list(episodes))
    except ValidationError as exc:
        first = exc.errors()[0]["loc"][0]
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or 'episode'}: {err['msg']}"
            for err in exc.errors()
            if err["loc"][0] == first
        )
        raise EpisodeError(f"episode #{first} is invalid: {problems}") from None


def append_episodes(
    conn: sqlite3.Connection, episodes: Iterable[Episode | Mapping[str, Any]], *, tz: str = "UTC"
) -> AppendResult:
    """Append a batch atomically; episodes already stored (same natural key) are skipped."""
    rows = [
        (
            ep.contact_id,
            ep.episode_type,
            ep.content,
            ep.source,
            ep.confidence,
            ep.created_at,
            ep.natural_key
            or natural_key(ep.contact_id, ep.episode_type, ep.source, ep.created_at, ep.content),
            ep.day or local_day(ep.created_at, tz),
        )
        for ep in validate(episodes)
    ]
    with transaction(conn):
        before = conn.total_changes
        conn.executemany(
            "INSERT INTO contact_episodes (contact_id, episode_type, content, source,"
            " confidence, created_at, natural_key, day) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (contact_id, natural_key) DO NOTHING",
            rows,
        )
        inserted = conn.total_changes - before
    return AppendResult(inserted=inserted, duplicates=len(rows) - inserted)


@dataclass(frozen=True)
class DaySeal:
    day: str
    episodes: int
    last_id: int | None
    digest: str
    by_type: dict[str, int]
    by_source: dict[str, int]
    changed: bool  # differs from the previous seal of this day (late arrivals)


def seal_day(conn: sqlite3.Connection, day: str) -> DaySeal:
    """Count and fingerprint one day's episodes and record the seal (replacing an old one)."""
    digest = hashlib.sha256()
    by_type: dict[str, int] = {}
    by_source: dict[str, int] = {}
    count, last_id = 0, None
    with transaction(conn):
        rows = conn.execute(
            "SELECT id, natural_key, episode_type, source FROM contact_episodes"
            " WHERE day = ? ORDER BY id",
            (day,),
        )
        for row_id, key, episode_type, source in rows:
            digest.update(f"{row_id}\x1f{key}\n".encode())
            by_type[episode_type] = by_type.get(episode_type, 0) + 1
            by_source[source or "(none)"] = by_source.get(source or "(none)", 0) + 1
            count, last_id = count + 1, row_id
        previous = conn.execute("SELECT digest FROM day_seals WHERE day = ?", (day,)).fetchone()
        seal = DaySeal(
            day,
            count,
            last_id,
            digest.hexdigest(),
            dict(sorted(by_type.items())),
            dict(sorted(by_source.items())),
            changed=previous is not None and previous[0] != digest.hexdigest(),
        )
        conn.execute(
            "INSERT INTO day_seals (day, episodes, last_id, digest, by_type, by_source,"
            " sealed_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day) DO UPDATE SET"
            " episodes = excluded.episodes, last_id = excluded.last_id,"
            " digest = excluded.digest, by_type = excluded.by_type,"
            " by_source = excluded.by_source, sealed_at = excluded.sealed_at",
            (
                day,
                count,
                last_id,
                seal.digest,
                json.dumps(seal.by_type),
                json.dumps(seal.by_source),
                to_iso(utc_now()),
            ),
        )
    return seal


@dataclass(frozen=True)
class DayAudit:
    """What is wrong with one day's episodes; each list holds episode ids."""

    duplicates: list[list[int]] = field(default_factory=list)  # one group per repeated event
    confidence_out_of_range: list[int] = field(default_factory=list)
    outside_day: list[int] = field(default_factory=list)
    sends_without_episode: list[int] = field(default_factory=list)  # outreach message ids


def audit_day(
    conn: sqlite3.Connection, day: str, tz: str, outreach: sqlite3.Connection | None = None
) -> DayAudit:
    """Audit one day's episodes.

    - duplicates: the same event (contact, type, source, time, content) stored under
      different natural keys, which the unique index cannot catch;
    - confidence outside [0, 1] (or missing), from writers that bypassed validation;
    - created_at malformed or outside the day's window in the partitions' timezone;
    - with the outreach store: messages sent that day without their `outreach` episode.
    """
    duplicates = [
        [int(i) for i in ids.split(",")]
        for (ids,) in conn.execute(
            "SELECT group_concat(id) FROM contact_episodes WHERE day = ?"
            " GROUP BY contact_id, episode_type, coalesce(source, ''), created_at, content"
            " HAVING count(*) > 1",
            (day,),
        )
    ]
    bad_confidence = [
        i
        for (i,) in conn.execute(
            "SELECT id FROM contact_episodes WHERE day = ? AND"
            " (confidence IS NULL OR typeof(confidence) NOT IN ('real', 'integer')"
            "  OR confidence < 0 OR confidence > 1) ORDER BY id",
            (day,),
        )
    ]
    start, end = day_window(day, tz)
    outside = [
        i
        for (i,) in conn.execute(
            "SELECT id FROM contact_episodes WHERE day = ? AND"
            " (created_at NOT GLOB ? OR created_at < ? OR created_at >= ?) ORDER BY id",
            (day, ISO_GLOB, start, end),
        )
    ]
    unrecorded = [] if outreach is None else _sends_without_episode(conn, outreach, start, end)
    return DayAudit(duplicates, bad_confidence, outside, unrecorded)


def _sends_without_episode(
    memory: sqlite3.Connection, outreach: sqlite3.Connection, start: str, end: str
) -> list[int]:
    """Messages sent in [start, end) that have no `outreach:message:<id>` episode."""
    sent = outreach.execute(
        "SELECT id, contact_id FROM messages WHERE sent_at >= ? AND sent_at < ? ORDER BY id",
        (start, end),
    ).fetchall()
    return [
        message_id
        for message_id, contact_id in sent
        if memory.execute(
            "SELECT 1 FROM contact_episodes WHERE contact_id = ? AND natural_key = ?",
            (contact_id, f"outreach:message:{message_id}"),
        ).fetchone()
        is None
    ]
