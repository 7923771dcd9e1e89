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

A file is read whole and checked whole before anything is written: one bad signal, bad
JSON, or a file over `MAX_FILE_BYTES` moves it aside to `rejected/` (with a log line and a
`<name>.why.txt` beside it), never half-read and never lost. A good file's episodes are
appended in one transaction (idempotent by natural key), then the file moves to
`processed/`; a crash between the two re-reads it harmlessly. A signal for an address no
contact has is counted and logged, not stored (there is no contact to attach it to).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from company_ai.core.contacts import normalize_email
from company_ai.core.db import Stores, transaction
from company_ai.core.episodes import append_episodes
from company_ai.core.schema import Store
from company_ai.core.times import canonical_utc

Log = Callable[[str], None]
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_SIGNALS = 10_000
KINDS = {"site_visit": "site", "portal_signup": "portal", "social": None, "email_open": "email"}
PROCESSED, REJECTED = "processed", "rejected"


class SignalError(ValueError):
    """A drop file that cannot be used as it is; the message says where and why."""


@dataclass(frozen=True)
class Signal:
    kind: str
    email: str
    at: str
    key: str
    content: str
    source: str
    message: str | None = None  # email_open: the Message-ID opened


@dataclass
class EngagementRun:
    files: int = 0
    processed: int = 0
    rejected: dict[str, str] = field(default_factory=dict)  # file -> why
    signals: int = 0
    episodes_written: int = 0
    unknown_contacts: int = 0
    opens_recorded: int = 0


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


def parse_signal(item: Any, where: str) -> Signal:
    """One signal, checked; SignalError naming the field otherwise."""
    if not isinstance(item, dict):
        raise SignalError(f"{where}: a signal must be a JSON object")
    kind = _text(item, "kind", where)
    if kind not in KINDS:
        raise SignalError(f"{where}: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    try:
        email = normalize_email(_text(item, "email", where) or "")
        at = canonical_utc(_text(item, "at", where) or "")
    except ValueError as exc:
        raise SignalError(f"{where}: {exc}") from None
    ident = _text(item, "id", where, required=False)
    digest = hashlib.blake2b(
        json.dumps(item, sort_keys=True, ensure_ascii=False).encode(), digest_size=12
    ).hexdigest()
    key = f"engagement:{kind}:{ident[:200] if ident else 'h' + digest}"
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
    return Signal(kind, email, at, key, content, source, message)


def read_drop_file(path: Path) -> list[Signal]:
    """Every signal of one drop file, all checked; SignalError if any part is unusable."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise SignalError(f"{size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise SignalError("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise SignalError(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    items = data.get("signals") if isinstance(data, dict) and "signals" in data else data
    items = items if isinstance(items, list) else [items]
    if len(items) > MAX_SIGNALS:
        raise SignalError(f"{len(items):,} signals, over the limit of {MAX_SIGNALS:,} a file")
    return [parse_signal(item, f"signal #{n}") for n, item in enumerate(items)]


def _move(path: Path, folder: str) -> Path:
    target_dir = path.parent / folder
    target_dir.mkdir(exist_ok=True)
    target = target_dir / path.name
    n = 1
    while target.exists():  # never overwrite an earlier file of the same name
        target, n = target_dir / f"{path.stem}.{n}{path.suffix}", n + 1
    os.replace(path, target)
    return target


def take_signals(stores: Stores, drop: Path, *, tz: str, warn: Log) -> EngagementRun:
    """Every `*.json` file in `drop`, oldest name first, by the rules in the module docstring."""
    result = EngagementRun()
    if not drop.is_dir():
        return result
    files = sorted(p for p in drop.iterdir() if p.suffix == ".json" and p.is_file())
    with stores.connect(Store.CRM) as crm, stores.connect(Store.MEMORY) as memory:
        outreach = stores.open(Store.OUTREACH)
        try:
            for path in files:
                result.files += 1
                try:
                    signals = read_drop_file(path)
                except (SignalError, OSError) as exc:
                    why = str(exc)
                    target = _move(path, REJECTED)
                    target.with_name(target.name + ".why.txt").write_text(why + "\n")
                    result.rejected[path.name] = why
                    warn(f"engagement: {path.name} moved aside to {REJECTED}/: {why}")
                    continue
                _store(crm, memory, outreach, signals, tz, result, warn, path.name)
                _move(path, PROCESSED)
                result.processed += 1
        finally:
            outreach.close()
    return result


def _store(
    crm: sqlite3.Connection,
    memory: sqlite3.Connection,
    outreach: sqlite3.Connection,
    signals: list[Signal],
    tz: str,
    result: EngagementRun,
    warn: Log,
    name: str,
) -> None:
    episodes = []
    opens = []
    for signal in signals:
        result.signals += 1
        row = crm.execute("SELECT id FROM contacts WHERE email = ?", (signal.email,)).fetchone()
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
            opens.append((signal.at, signal.at, signal.message, row[0], signal.at))
    result.episodes_written += append_episodes(memory, episodes, tz=tz).inserted
    if opens:
        with transaction(outreach):
            before = outreach.total_changes
            outreach.executemany(
                "UPDATE messages SET opened_at = min(coalesce(opened_at, ?), ?)"
                " WHERE rfc_message_id = ? AND contact_id = ? AND sent_at <= ?",
                opens,
            )
            result.opens_recorded += outreach.total_changes - before
