"""Engagement signals: site visits, portal signups, social touches and email opens, dropped
as JSON files (webhook payloads) in a local folder, become `engagement` episodes.

A drop file is one JSON object `{"signals": [...]}`, a list of signals, or one signal:

    {"id": "visit-81", "kind": "site_visit", "email": "ada@acme.example",
     "at": "2026-11-30T10:02:00Z", "pages": ["pricing page", "case studies"]}

`kind` is `site_visit` (`pages`), `portal_signup` (`detail`), `social` (`network`,
`detail`) or `email_open` (`message`: the Message-ID of a message we sent; it also sets
that message's `opened_at` if not set). `id` is the sender's own id of the event and is
optional; the episode's natural key is it, or a hash of the signal. Writers should drop a
file under a temporary name and rename it to `*.json` when complete.

A file is read whole and checked whole before anything is written, each file alone
(`intake.take`): only a regular file is read (a symbolic link, FIFO, device or directory
named `*.json` is not opened for reading), its size checked first and the read capped at
`MAX_FILE_BYTES`, the JSON parsed inside `BOUNDS` (`intake.load_json`: no number past 30
digits, no NaN, no nesting past 32 levels, every string cleaned). One bad signal, bad JSON,
anything past a bound, or anything else that goes wrong with the file (an OSError, an
unexpected error while storing it) moves it whole to `rejected/`, with a log line and a
`<name>.why.txt` beside it, and the run goes on with the next file: never half-read, never
lost, never met again. A good file's episodes are appended in one transaction (idempotent
by natural key), then the file moves to `processed/`; a crash between the two re-reads it
harmlessly. Only a store that cannot be written (`sqlite3.OperationalError`: locked, full)
stops the run, leaving the file where it is for the next. A signal for an address no
contact has is counted and logged, not stored (there is no contact to attach it to).

A signal's `at` is what the sender claims: data, bounded by `intake.outside_time` against
the run's clock. One in the future or before 1990 is stored at the time the run took it,
flagged, and the claimed time is kept in the episode's text ("said it happened at ...").
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from company_ai.core.crm import normalize_email
from company_ai.core.intake import (
    Bounds,
    Refused,
    Taken,
    load_json,
    outside_time,
    read_regular,
    take,
)
from company_ai.core.memory import append_episodes
from company_ai.core.store import Store, Stores, transaction
from company_ai.core.times import parse_utc, to_iso

Log = Callable[[str], None]
INTAKE = "engagement"
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_SIGNALS = 10_000
# A signal is a dozen JSON values or so (50 pages at most are read); a file of the most
# signals allowed fits with room to spare.
BOUNDS = Bounds(max_bytes=MAX_FILE_BYTES, max_items=60 * MAX_SIGNALS)
KINDS = {"site_visit": "site", "portal_signup": "portal", "social": None, "email_open": "email"}
PROCESSED, REJECTED = "processed", "rejected"
FUTURE, EARLY = "in the future", "before 1990"  # outside_time's flags


class SignalError(Refused):
    """A drop file that cannot be used as it is; the message says where and why."""


@dataclass(frozen=True)
class Signal:
    kind: str
    email: str
    at: str  # the time kept: the claimed one, or the run's if that was not believable
    key: str
    content: str
    source: str
    message: str | None = None  # email_open: the Message-ID opened
    flag: str = ""  # why `at` is not the time the signal claimed ("" when it is)


@dataclass
class EngagementRun:
    files: int = 0
    processed: int = 0
    rejected: dict[str, str] = field(default_factory=dict)  # file -> why
    signals: int = 0
    episodes_written: int = 0
    unknown_contacts: int = 0
    opens_recorded: int = 0
    future_times: int = 0
    times_before_1990: int = 0
    not_moved: int = 0  # files that could not be moved out of the drop folder
    taken: Taken = field(default_factory=lambda: Taken(INTAKE))


def plural(n: int, word: str) -> str:
    """`1 page`, `2 pages`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _text(item: dict, name: str, where: str, *, required: bool = True) -> str | None:
    value = item.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 2000:
        raise SignalError(f"{where}: `{name}` must be a non-empty string (≤ 2,000 characters)")
    return " ".join(value.split())


def _shown(moment: datetime) -> str:
    """A claimed time as written back, whatever its year (strftime drops a year's zeros)."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def signal_key(kind: str, ident: str | None, item: dict) -> str:
    """A signal's natural key: its sender's id, or a hash of the signal as parsed (so the
    same signal written with its keys in another order, or other spacing, is the same)."""
    if ident:
        return f"engagement:{kind}:{ident[:200]}"
    canonical = json.dumps(item, sort_keys=True, ensure_ascii=False)
    digest = hashlib.blake2b(canonical.encode(), digest_size=12).hexdigest()
    return f"engagement:{kind}:h{digest}"


def parse_signal(item: Any, where: str, now: datetime) -> Signal:
    """One signal (as `load_json` returns it), checked; SignalError naming the field
    otherwise. Its `at` is bounded by `now` (`intake.outside_time`)."""
    if not isinstance(item, dict):
        raise SignalError(f"{where}: a signal must be a JSON object")
    kind = _text(item, "kind", where)
    if kind not in KINDS:
        raise SignalError(f"{where}: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    try:
        email = normalize_email(_text(item, "email", where) or "")
        claimed = parse_utc(_text(item, "at", where) or "")
    except ValueError as exc:
        raise SignalError(f"{where}: {exc}") from None
    when = outside_time(claimed, now)
    key = signal_key(kind, _text(item, "id", where, required=False), item)
    message = None
    if kind == "site_visit":
        pages = item.get("pages")
        if not isinstance(pages, list) or not pages or not all(isinstance(p, str) for p in pages):
            raise SignalError(f"{where}: a site_visit needs `pages`, a non-empty list of strings")
        names = [" ".join(p.split())[:200] for p in pages[:50]]
        content = f"Visited {', '.join(dict.fromkeys(names))} ({plural(len(pages), 'page')})."
        source = "site"
    elif kind == "portal_signup":
        detail = _text(item, "detail", where, required=False)
        content = "Signed up to the customer portal" + (f": {detail}." if detail else ".")
        source = "portal"
    elif kind == "social":
        network = (_text(item, "network", where) or "").lower()
        content = f"On {network}: {_text(item, 'detail', where)}"
        source = network[:50]
    else:
        message = _text(item, "message", where)
        content = f"Opened our message {message}."
        source = "email"
    if when.flag:
        content += f" (said it happened at {_shown(claimed)}, {when.flag}; kept as received)"
    return Signal(kind, email, to_iso(when.at), key, content, source, message, when.flag)


def parse_drop(raw: bytes, now: datetime) -> list[Signal]:
    """Every signal of one drop file's bytes, all checked; Refused if any part is unusable."""
    data = load_json(raw, BOUNDS)
    items = data.get("signals") if isinstance(data, dict) and "signals" in data else data
    items = items if isinstance(items, list) else [items]
    if len(items) > MAX_SIGNALS:
        raise SignalError(f"{len(items):,} signals, over the limit of {MAX_SIGNALS:,} a file")
    return [parse_signal(item, f"signal #{n}", now) for n, item in enumerate(items)]


def read_drop_file(path: Path, now: datetime) -> list[Signal]:
    """Every signal of one drop file (a regular file, read inside `BOUNDS`), all checked."""
    return parse_drop(read_regular(path, BOUNDS), now)


def _move(path: Path, folder: str) -> Path:
    target_dir = path.parent / folder
    target_dir.mkdir(exist_ok=True)
    target = target_dir / path.name
    n = 1
    while os.path.lexists(target):  # never overwrite an earlier file (or link) of that name
        target, n = target_dir / f"{path.stem}.{n}{path.suffix}", n + 1
    os.replace(path, target)
    return target


def _drop_files(drop: Path) -> list[Path]:
    """The `*.json` entries of the drop folder, whatever they are, oldest name first."""
    with os.scandir(drop) as entries:
        return sorted(Path(e.path) for e in entries if Path(e.name).suffix == ".json")


def take_signals(stores: Stores, drop: Path, *, tz: str, now: datetime, warn: Log) -> EngagementRun:
    """Every `*.json` file in `drop`, oldest name first, by the rules in the module docstring;
    `now` is the run's clock, bounding the signals' times."""
    result = EngagementRun()
    if not drop.is_dir():
        return result
    taken = result.taken
    with stores.connect(Store.CRM) as crm, stores.connect(Store.MEMORY) as memory:
        outreach = stores.open(Store.OUTREACH)
        try:
            for path in _drop_files(drop):
                result.files += 1
                refused = taken.refused
                read = take(
                    taken, [path], key=lambda p: p.name, handle=lambda p: read_drop_file(p, now)
                )
                for signals in read:
                    try:
                        _store(crm, memory, outreach, signals, tz, now, result, warn, path.name)
                    except sqlite3.OperationalError:
                        raise  # the store, not the file: stop, and leave the file for the next run
                    except Exception as exc:  # noqa: BLE001 (one file never stops the run)
                        taken.refuse(
                            path.name, f"could not be stored ({type(exc).__name__}: {exc})"
                        )
                        continue
                    result.processed += 1
                    _settle(path, PROCESSED, None, result, warn)
                if taken.refused > refused:
                    refusal = taken.refusals[-1]
                    result.rejected[refusal.key] = refusal.reason
                    warn(f"engagement: {refusal.key} moved aside to {REJECTED}/: {refusal.reason}")
                    _settle(path, REJECTED, refusal.reason, result, warn)
        finally:
            outreach.close()
    return result


def _settle(path: Path, folder: str, why: str | None, result: EngagementRun, warn: Log) -> None:
    """Move a file out of the drop folder (with its reason beside it when rejected). If that
    fails it stays, logged and counted: the next run reads it again, harmlessly."""
    try:
        target = _move(path, folder)
        if why is not None:
            target.with_name(target.name + ".why.txt").write_text(why + "\n", encoding="utf-8")
    except OSError as exc:
        result.not_moved += 1
        warn(f"engagement: {path.name!r} could not be moved to {folder}/: {exc}")


def _store(
    crm: sqlite3.Connection,
    memory: sqlite3.Connection,
    outreach: sqlite3.Connection,
    signals: list[Signal],
    tz: str,
    now: datetime,
    result: EngagementRun,
    warn: Log,
    name: str,
) -> None:
    episodes = []
    opens = []
    recorded = to_iso(now)  # when this system learnt of an open: what a replay counts by
    for signal in signals:
        result.signals += 1
        if signal.flag:
            result.future_times += signal.flag == FUTURE
            result.times_before_1990 += signal.flag == EARLY
            warn(f"engagement: {name}: a {signal.kind} said it happened {signal.flag}; kept as now")
        row = crm.execute("SELECT id FROM contacts WHERE email = $1", (signal.email,)).fetchone()
        if row is None:
            result.unknown_contacts += 1
            warn(f"engagement: {name}: {signal.kind} for an address no contact has; not stored")
            continue
        episodes.append(
            {
                "contact_id": row[0],
                "episode_type": "engagement",
                "content": signal.content,
                "source": signal.source,
                "confidence": 1.0,
                "created_at": signal.at,
                "natural_key": signal.key,
            }
        )
        if signal.message:
            opens.append((signal.at, signal.at, recorded, signal.message, row[0], signal.at))
    result.episodes_written += append_episodes(memory, episodes, now=now, tz=tz).inserted
    if opens:
        with transaction(outreach):
            # The earlier of the two opens, spelt so both databases read it (SQLite's
            # two-argument min() is PostgreSQL's least()); each row's count is its own.
            for values in opens:
                result.opens_recorded += outreach.execute(
                    "UPDATE messages SET opened_at = CASE WHEN opened_at IS NOT NULL"
                    " AND opened_at <= $1 THEN opened_at ELSE $2 END,"
                    " opened_recorded_at = coalesce(opened_recorded_at,"
                    " CASE WHEN opened_at IS NULL THEN $3 END)"
                    " WHERE rfc_message_id = $4 AND contact_id = $5 AND sent_at <= $6",
                    values,
                ).rowcount
