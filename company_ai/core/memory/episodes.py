"""contact_episodes: the append-only episodic memory, its seals and its audit.

Writers call `append_episodes`; it checks every episode of a batch by the rules of
`models.Episode` and inserts the batch in one transaction, all of it or, if any episode is
bad, none. A natural key makes every write idempotent: the same event appended twice is
stored once. Every row carries `recorded_at`, the moment this system recorded it, from
the writer's clock (`now`; core never reads the clock itself), beside `created_at`, the
time it describes: replays (seals, audits, the brain, the export) select by `recorded_at`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import chain
from typing import Any, cast

from pydantic import TypeAdapter, ValidationError

from company_ai.core.memory.models import (
    MAX_CONTENT_CHARS,
    MAX_KEY_CHARS,
    MAX_SOURCE_CHARS,
    Episode,
    is_day,
    overconfident_guess,
)
from company_ai.core.store import (
    EPISODE_TYPES,
    Positional,
    dialect,
    max_parameters,
    numbered,
    transaction,
)
from company_ai.core.times import ISO_GLOB, ISO_REGEX, Day, canonical_utc, local_day, to_iso


class EpisodeError(ValueError):
    """An episode in a batch is invalid; the message names it, and nothing was written."""


# A recorded time is the writer's clock: later than it by more than this (clocks of two
# processes drift) or before 1990 is a bug in the writer, refused, never stored.
RECORDED_SLACK = timedelta(minutes=5)
EARLIEST_RECORDED = "1990-01-01T00:00:00Z"


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
_FIELDS = frozenset(Episode.model_fields)
_TYPES = frozenset(EPISODE_TYPES)
# Rows per INSERT statement (fewer where SQLite allows fewer parameters in one statement).
# Its parameters are numbered and bound by position (`Positional`): bound by name, SQLite
# looks each one up along a list, and appends fell from 175,000 a second to 9,000.
CHUNK_ROWS = 500
_INSERT = (
    "INSERT INTO contact_episodes (contact_id, episode_type, content, source,"
    " confidence, created_at, natural_key, day, recorded_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    " ON CONFLICT (contact_id, natural_key) DO NOTHING"
)
_PER_ROW = _INSERT.count("$")  # parameters

# A stored row: contact_id, episode_type, content, source, confidence, created_at,
# natural_key, day, recorded_at (the columns of _INSERT, in order).
Row = tuple[int, str, str, str | None, float, str, str, str, str]


def validate(episodes: Iterable[Episode | Mapping[str, Any]]) -> list[Episode]:
    """Validate a batch; any bad episode raises EpisodeError naming its position."""
    return _validated(list(episodes))


def _validated(items: list[Any], positions: list[int] | None = None) -> list[Episode]:
    """pydantic's verdict on `items`; `positions` are their places in the caller's batch."""
    try:
        return _BATCH.validate_python(items)
    except ValidationError as exc:
        first = exc.errors()[0]["loc"][0]
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or 'episode'}: {err['msg']}"
            for err in exc.errors()
            if err["loc"][0] == first
        )
        where = first if positions is None else positions[int(first)]
        raise EpisodeError(f"episode #{where} is invalid: {problems}") from None


def episode_rows(
    episodes: Iterable[Episode | Mapping[str, Any]],
    tz: str = "UTC",
    *,
    now: datetime | str,
    first: int = 0,
) -> list[Row]:
    """The stored row of every episode, each checked by the rules of `models.Episode`,
    recorded at `now` (the writer's clock) unless it says when it was recorded, which must
    be no later than `now` (give or take `RECORDED_SLACK`) and not before 1990.

    Plain dicts of built-in types (what the writers make) are checked in plain Python,
    about three times faster than pydantic; anything else, and anything the plain check does not
    accept, goes to pydantic, which then accepts or refuses it: a refusal always reads the
    same, naming the first bad episode by its position (counted from `first`).
    """
    recorded = canonical_utc(now)
    items = list(episodes)
    rows = [_plain_row(item, tz, recorded) for item in items]
    unusual = [i for i, row in enumerate(rows) if row is None]
    if unusual:
        checked = _validated([items[i] for i in unusual], [first + i for i in unusual])
        for i, episode in zip(unusual, checked, strict=True):
            rows[i] = _model_row(episode, tz, recorded)
    done = cast(list[Row], rows)  # no None is left
    _check_recorded(done, recorded, first)
    return done


def _check_recorded(rows: list[Row], now: str, first: int) -> None:
    """Refuse a batch with a recorded time after the clock or before 1990, naming the row."""
    latest = to_iso(datetime.fromisoformat(now) + RECORDED_SLACK)
    if now < EARLIEST_RECORDED:
        raise EpisodeError(f"the writer's clock says {now}, before 1990: nothing was written")
    for i, row in enumerate(rows):
        recorded = row[8]
        if recorded == now:  # the common case: the writer's own clock
            continue
        if recorded > latest or recorded < EARLIEST_RECORDED:
            when = "after the writer's clock" if recorded > latest else "before 1990"
            raise EpisodeError(
                f"episode #{first + i} (contact {row[0]}, natural key {row[6]!r}) says it was"
                f" recorded at {recorded}, {when} ({now}): nothing was written"
            )


def _plain_row(item: Any, tz: str, now: str) -> Row | None:
    """The row of a dict that keeps every rule of `Episode` with exact built-in types, else None.

    None is never a verdict: it sends the episode to pydantic. So this may only accept
    what pydantic accepts, storing what pydantic would store (test_episode_paths.py).
    """
    if type(item) is Episode:
        return _model_row(item, tz, now)
    if type(item) is not dict or not item.keys() <= _FIELDS:
        return None
    get = item.get
    contact_id, kind, content = get("contact_id"), get("episode_type"), get("content")
    source, confidence, created_at = get("source"), get("confidence", 1.0), get("created_at")
    key, day, recorded = get("natural_key"), get("day"), get("recorded_at")
    if not (
        type(contact_id) is int
        and contact_id > 0
        and type(kind) is str
        and kind in _TYPES
        and type(content) is str
        and len(content) <= MAX_CONTENT_CHARS
        and content.strip()
        and (source is None or (type(source) is str and 0 < len(source) <= MAX_SOURCE_CHARS))
        and type(confidence) is float
        and 0.0 <= confidence <= 1.0
        and not overconfident_guess(source, confidence)
        and (key is None or (type(key) is str and 0 < len(key) <= MAX_KEY_CHARS))
        and (day is None or (type(day) is str and is_day(day)))
        and type(created_at) is str
        and (recorded is None or type(recorded) is str)
    ):
        return None
    try:
        created_at = canonical_utc(created_at)
        recorded = now if recorded is None else canonical_utc(recorded)
    except ValueError:
        return None
    return (
        contact_id,
        kind,
        content,
        source,
        confidence,
        created_at,
        key or natural_key(contact_id, kind, source, created_at, content),
        day or local_day(created_at, tz),
        recorded,
    )


def _model_row(ep: Episode, tz: str, now: str) -> Row:
    return (
        ep.contact_id,
        ep.episode_type,
        ep.content,
        ep.source,
        ep.confidence,
        ep.created_at,
        ep.natural_key
        or natural_key(ep.contact_id, ep.episode_type, ep.source, ep.created_at, ep.content),
        ep.day or local_day(ep.created_at, tz),
        ep.recorded_at or now,
    )


def append_episodes(
    conn: sqlite3.Connection,
    episodes: Iterable[Episode | Mapping[str, Any]],
    *,
    now: datetime | str,
    tz: str = "UTC",
) -> AppendResult:
    """Append a batch atomically, recorded at `now` (the writer's clock); episodes already
    stored (same natural key) are skipped, and keep the time they were first recorded.

    Every episode is checked (`episode_rows`); the first bad one refuses the whole batch
    and nothing of it is written. A large batch is stored a chunk at a time, one INSERT
    each, in one transaction, while a worker thread checks the next chunk (SQLite releases
    the GIL while it writes, so on a second core checking costs no time); a bad episode
    found there rolls back the chunks already inserted.
    """
    items = list(episodes)
    size = max(1, min(CHUNK_ROWS, max_parameters(conn) // _PER_ROW))
    starts = range(0, len(items), size)
    if len(starts) <= 2:  # not worth a thread: check it all before taking the write lock
        chunks = [_parameters(items[i : i + size], tz, now, i) for i in starts]
        return _store(conn, chunks, len(items))
    with ThreadPoolExecutor(1, thread_name_prefix="episode-check") as pool:
        return _store(conn, _checked_ahead(items, tz, now, starts, size, pool), len(items))


def _parameters(items: list[Any], tz: str, now: datetime | str, first: int) -> list[Any]:
    """The parameters of one INSERT of these episodes' rows: the rows, one after another."""
    return list(chain.from_iterable(episode_rows(items, tz, now=now, first=first)))


def _checked_ahead(
    items: list[Any],
    tz: str,
    now: datetime | str,
    starts: range,
    size: int,
    pool: ThreadPoolExecutor,
) -> Iterator[list[Any]]:
    """Each chunk's parameters, made in `pool` one chunk ahead of the caller storing them."""
    ahead: deque[Future[list[Any]]] = deque()
    for i in starts:
        ahead.append(pool.submit(_parameters, items[i : i + size], tz, now, i))
        if len(ahead) == 2:
            yield ahead.popleft().result()
    yield ahead.popleft().result()


def _store(conn: sqlite3.Connection, chunks: Iterable[list[Any]], count: int) -> AppendResult:
    inserted = 0
    with transaction(conn):
        for parameters in chunks:
            # The rows this INSERT stored: those skipped ON CONFLICT are not counted.
            statement = _insert_rows(len(parameters) // _PER_ROW, numbered(conn, 1)[0])
            inserted += conn.execute(statement, Positional(parameters)).rowcount
    return AppendResult(inserted=inserted, duplicates=count - inserted)


@lru_cache(maxsize=16)
def _insert_rows(count: int, mark: str) -> str:
    """One INSERT of `count` rows, its parameters numbered after `mark` (`$` or `?`, the
    driver's own). SQLite then sets up the AUTOINCREMENT counter and the conflict handling
    once, not once a row: a quarter less CPU a row, measured."""
    head, values = _INSERT.split(" VALUES ")
    _, conflict = values.split(" ON CONFLICT ")
    numbers = range(1, _PER_ROW + 1)
    rows = [
        f"({', '.join(f'{mark}{row * _PER_ROW + n}' for n in numbers)})" for row in range(count)
    ]
    return f"{head} VALUES {', '.join(rows)} ON CONFLICT {conflict}"


@dataclass(frozen=True)
class DaySeal:
    day: str
    episodes: int
    last_id: int | None
    digest: str
    by_type: dict[str, int]
    by_source: dict[str, int]
    changed: bool  # differs from the previous seal of this day (a forget, or a tamper)


def seal_day(conn: sqlite3.Connection, day: Day, *, now: datetime) -> DaySeal:
    """Count and fingerprint the episodes recorded in `day`'s window and record the seal
    under its key (replacing an old one), sealed at `now`. What was recorded later (a late
    reply, a retried webhook) belongs to a later window, so the seal of a past day stays."""
    with transaction(conn):
        return seal_in_transaction(conn, day, to_iso(now))


def seal_in_transaction(conn: sqlite3.Connection, day: Day, now: str) -> DaySeal:
    """`seal_day` inside the caller's transaction."""
    return _seal(conn, day.key, (day.start, day.end), now)


def reseal_in_transaction(conn: sqlite3.Connection, key: str, now: str) -> DaySeal:
    """Seal `key` again over the window it was sealed with (a forget re-seals what it
    redacted); a seal from before recorded time (no window) covers `day = key`."""
    row = conn.execute(
        "SELECT window_start, window_end FROM day_seals WHERE day = $1", (key,)
    ).fetchone()
    window = (row[0], row[1]) if row is not None and row[0] is not None else None
    return _seal(conn, key, window, now)


def _seal(conn: sqlite3.Connection, key: str, window: tuple[str, str] | None, now: str) -> DaySeal:
    digest = hashlib.sha256()
    by_type: dict[str, int] = {}
    by_source: dict[str, int] = {}
    count, last_id = 0, None
    params: tuple[str, ...] = (key,) if window is None else window
    where = "day = $1" if window is None else "recorded_at >= $1 AND recorded_at < $2"
    rows = conn.execute(
        f"SELECT id, natural_key, episode_type, source FROM contact_episodes"
        f" WHERE {where} ORDER BY id",
        params,
    )
    for row_id, natural, episode_type, source in rows:
        digest.update(f"{row_id}\x1f{natural}\n".encode())
        by_type[episode_type] = by_type.get(episode_type, 0) + 1
        by_source[source or "(none)"] = by_source.get(source or "(none)", 0) + 1
        count, last_id = count + 1, row_id
    previous = conn.execute("SELECT digest FROM day_seals WHERE day = $1", (key,)).fetchone()
    seal = DaySeal(
        key,
        count,
        last_id,
        digest.hexdigest(),
        dict(sorted(by_type.items())),
        dict(sorted(by_source.items())),
        changed=previous is not None and previous[0] != digest.hexdigest(),
    )
    start, end = window or (None, None)
    conn.execute(
        "INSERT INTO day_seals (day, episodes, last_id, digest, by_type, by_source,"
        " sealed_at, window_start, window_end) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        " ON CONFLICT (day) DO UPDATE SET"
        " episodes = excluded.episodes, last_id = excluded.last_id,"
        " digest = excluded.digest, by_type = excluded.by_type,"
        " by_source = excluded.by_source, sealed_at = excluded.sealed_at,"
        " window_start = excluded.window_start, window_end = excluded.window_end",
        (
            key,
            count,
            last_id,
            seal.digest,
            json.dumps(seal.by_type),
            json.dumps(seal.by_source),
            now,
            start,
            end,
        ),
    )
    return seal


@dataclass(frozen=True)
class DayAudit:
    """What is wrong with one day's episodes; each list holds episode ids."""

    duplicates: list[list[int]] = field(default_factory=list)  # one group per repeated event
    confidence_out_of_range: list[int] = field(default_factory=list)
    unsound_times: list[int] = field(default_factory=list)
    sends_without_episode: list[int] = field(default_factory=list)  # outreach message ids


def audit_day(
    conn: sqlite3.Connection, day: Day, outreach: sqlite3.Connection | None = None
) -> DayAudit:
    """Audit the episodes recorded in `day`'s window.

    - duplicates: the same event (contact, type, source, time, content) stored under
      different natural keys, which the unique index cannot catch;
    - confidence outside [0, 1] (or missing), from writers that bypassed validation;
    - unsound times: created_at malformed, or later than when the row was recorded (by more
      than `RECORDED_SLACK`): nothing is known before it happens. A time long before its
      recording (a late reply) is sound: it belongs to the night it was recorded in;
    - with the outreach store: messages sent in the window without their `outreach` episode.
    """
    words = _AUDIT_WORDS[dialect(conn)]
    window = "recorded_at >= $1 AND recorded_at < $2"
    bounds = (day.start, day.end)
    duplicates = [
        sorted(int(i) for i in ids.split(","))
        for (ids,) in conn.execute(
            f"SELECT {words['ids']} FROM contact_episodes WHERE {window}"
            " GROUP BY contact_id, episode_type, coalesce(source, ''), created_at, content"
            " HAVING count(*) > 1",
            bounds,
        )
    ]
    bad_confidence = [
        i
        for (i,) in conn.execute(
            f"SELECT id FROM contact_episodes WHERE {window} AND"
            f" (confidence IS NULL OR {words['not_number']}"
            "  OR confidence < 0 OR confidence > 1) ORDER BY id",
            bounds,
        )
    ]
    slack = int(RECORDED_SLACK.total_seconds())
    unsound = [
        i
        for (i, created, recorded) in conn.execute(
            f"SELECT id, created_at, recorded_at FROM contact_episodes WHERE {window}"
            f" AND (NOT ({words['iso']}) OR created_at > recorded_at) ORDER BY id",
            bounds,
        )
        if not _iso(created) or _seconds(created) - _seconds(recorded) > slack
    ]
    unrecorded = (
        [] if outreach is None else _sends_without_episode(conn, outreach, day.start, day.end)
    )
    return DayAudit(duplicates, bad_confidence, unsound, unrecorded)


def _iso(text: Any) -> bool:
    try:
        return isinstance(text, str) and canonical_utc(text) == text
    except ValueError:
        return False


def _seconds(stored: str) -> float:
    return datetime.fromisoformat(stored).timestamp()


# What audit_day says differently on each store: Postgres' column is typed (a float or NULL,
# nothing else; NaN sorts above 1) and it matches patterns with regular expressions.
_AUDIT_WORDS = {
    "sqlite": {
        "ids": "group_concat(id)",
        "not_number": "typeof(confidence) NOT IN ('real', 'integer')",
        "iso": f"created_at GLOB '{ISO_GLOB}'",
    },
    "postgres": {
        "ids": "string_agg(id::text, ',')",
        "not_number": "FALSE",
        "iso": f"created_at ~ '{ISO_REGEX}'",
    },
}


def _sends_without_episode(
    memory: sqlite3.Connection, outreach: sqlite3.Connection, start: str, end: str
) -> list[int]:
    """Messages sent in [start, end) that have no `outreach:message:<id>` episode."""
    sent = outreach.execute(
        "SELECT id, contact_id FROM messages WHERE sent_at >= $1 AND sent_at < $2 ORDER BY id",
        (start, end),
    ).fetchall()
    return [
        message_id
        for message_id, contact_id in sent
        if memory.execute(
            "SELECT 1 FROM contact_episodes WHERE contact_id = $1 AND natural_key = $2",
            (contact_id, f"outreach:message:{message_id}"),
        ).fetchone()
        is None
    ]
