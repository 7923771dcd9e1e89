"""The install date: the first day this data directory has partitions for.

Dagster shows every partition from its start date as missing until it is materialised,
so partitions begin when the system was installed, not at an arbitrary past day. It is
`COMPANY_AI_START_DATE` when set; otherwise the day before the code location first ran
against this data directory (its first tick processes that day), recorded once in
`<data dir>/install.json` by the first run, with the moment it was installed: the
reports do not count slots that fell due before then as missed. Stdlib only (settings
reads it at load).
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from company_ai.core.files import write_atomic
from company_ai.core.times import parse_utc, to_iso

INSTALL_FILE = "install.json"


def check_day(value: str, name: str = "COMPANY_AI_START_DATE") -> str:
    """`value` if it is a calendar day written YYYY-MM-DD, else a clear ValueError."""
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    raise ValueError(f"{name} must be a day written YYYY-MM-DD, not {value[:40]!r}")


def _read(data_dir: Path) -> dict | None:
    path = Path(data_dir) / INSTALL_FILE
    try:
        record = json.loads(path.read_text())
        check_day(record["first_day"], str(path))
        parse_utc(record["installed_at"])
        return record
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is unreadable ({exc}); delete it or set the start date") from None


def first_day(data_dir: Path, tz: str, now: datetime | None = None) -> str:
    """The recorded first day of `data_dir`, or yesterday (in `tz`) if none is recorded."""
    record = _read(data_dir)
    if record:
        return record["first_day"]
    today = (now or datetime.now(ZoneInfo(tz))).astimezone(ZoneInfo(tz)).date()
    return (today - timedelta(days=1)).isoformat()


def installed_at(data_dir: Path) -> datetime | None:
    """When `data_dir` was installed, if that was recorded."""
    record = _read(data_dir)
    return parse_utc(record["installed_at"]) if record else None


def record_first_day(data_dir: Path, day: str, at: datetime) -> bool:
    """Record `day` as the first day of `data_dir`, installed `at`, unless one is recorded;
    True if written."""
    path = Path(data_dir) / INSTALL_FILE
    if path.exists():
        return False
    record = {"first_day": check_day(day), "installed_at": to_iso(at)}
    write_atomic(path, json.dumps(record).encode())
    return True
