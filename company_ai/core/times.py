"""Timestamps: every stored time is ISO-8601 UTC with a `Z`, to the second.

The fixed width makes stored strings sort in time order, so SQL can compare them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# What a well-formed stored timestamp looks like, for SQLite's GLOB.
ISO_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"
ISO_REGEX = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"  # the same, in Postgres
_DAY_KEY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def to_iso(moment: datetime) -> str:
    """A timezone-aware datetime as stored: `2026-11-30T07:51:14Z`."""
    if moment.tzinfo is None:
        raise ValueError("a stored time must be timezone-aware")
    return moment.astimezone(UTC).strftime(ISO_FORMAT)


def parse_utc(text: str) -> datetime:
    """Parse an ISO-8601 timestamp that is explicitly UTC (`Z` or `+00:00`)."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not an ISO-8601 timestamp: {text!r}") from exc
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no timezone; write it in UTC with a Z")
    if moment.utcoffset() != timedelta(0):
        raise ValueError(f"timestamp {text!r} is not UTC; convert it and write it with a Z")
    return moment.astimezone(UTC)


def day_window(day: str, tz: str) -> tuple[str, str]:
    """The stored-time bounds [start, end) of local calendar `day` in timezone `tz`."""
    zone = ZoneInfo(tz)
    start_date = date.fromisoformat(day)
    start = datetime.combine(start_date, time(0), zone)
    end = datetime.combine(start_date + timedelta(days=1), time(0), zone)
    return to_iso(start), to_iso(end)


@dataclass(frozen=True)
class Day:
    """One local calendar day: its partition key, its timezone and its stored-time window
    [start, end). Made once where a run begins (`Day.of`) and passed down, so every
    function of the run reads the same window."""

    key: str  # YYYY-MM-DD
    tz: str
    start: str  # stored UTC time of the day's local midnight
    end: str  # stored UTC time of the next day's local midnight

    @classmethod
    def of(cls, key: str, tz: str) -> Day:
        """Day `key` (YYYY-MM-DD) in timezone `tz`, or a ValueError saying it is not a day."""
        start, end = day_window(day_key(key), tz)
        return cls(key, tz, start, end)


def day_key(key: str) -> str:
    """`key` if it is a calendar day written YYYY-MM-DD, else a ValueError saying so."""
    try:
        valid = bool(_DAY_KEY.fullmatch(key)) and bool(date.fromisoformat(key))
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise ValueError(f"not a day: {key!r} (expected YYYY-MM-DD, e.g. 2026-11-30)")
    return key


def canonical_utc(value: str | datetime) -> str:
    """Any explicitly-UTC timestamp, as stored (`2026-11-30T07:51:14Z`)."""
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() != timedelta(0):
            raise ValueError("must be a UTC datetime (timezone-aware, offset zero)")
        return to_iso(value)
    if len(value) == 20 and value[10] == "T" and value[19] == "Z":
        # Already canonical, the common case: only the calendar needs checking.
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from None
        return value
    return to_iso(parse_utc(value))


def local_day(stored: str, tz: str) -> str:
    """The calendar day (YYYY-MM-DD) a stored timestamp falls on in timezone `tz`."""
    if tz == "UTC":
        return stored[:10]
    return parse_utc(stored).astimezone(ZoneInfo(tz)).date().isoformat()
