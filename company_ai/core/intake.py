"""The intake discipline: how every capture takes in what the world sends.

Every capture (contact sync, inbox triage, engagement drops, web research, the vault) reads
items from outside: a mail, a drop file, a People page, a web page, a note. The world is
hostile, so each capture uses the same few rules, all in this module:

- **Each item alone, inside bounds.** An item is read, parsed and checked by itself
  (`take`), inside `Bounds` (bytes, nesting depth, digits of a number, items, characters).
  One that fails is set aside as a `Refusal` with its reason: counted in the run's
  metadata, listed by the capture's WARN check, and recorded (`record_refusals`) so the
  next run does not meet it again. No exception from one item fails the run.
  A file is read by `read_regular`: a regular file only (no link followed, no FIFO or
  device read), its size checked before reading, the read capped.
- **Times from outside are data.** A Date header, a file's mtime or a signal's `at` is
  bounded by `outside_time`: kept as the time the item *describes*, flagged when it lies
  in the future or before 1990, and never used as a cursor (cursors follow what this
  system recorded: keys taken, `historyId`, a generation of our own).
- **Once, by identity.** `content_key` names an item that brings no id of its own.
- **A word means what it says.** `clean_text` makes outside text safe to store: Unicode
  NFC, lone surrogates replaced, control and bidirectional-override characters removed.
  `html_text` reads HTML with a real HTML5 parser (selectolax's Lexbor: it parses hostile
  markup the way a browser does, drops script and style, and runs at C speed).
  `same_name` compares names (a folder, a label) after NFKC, case folding and trimming.
  `safe_url` takes the credentials out of a URL before it is logged or stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote_plus, urlsplit, urlunsplit

T = TypeVar("T")
R = TypeVar("R")

EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)  # before this, a time from outside is a lie
MAX_REASON = 300  # characters of a refusal's reason that are kept


class Refused(ValueError):
    """An item that cannot be used as it is; the message says where and why."""


@dataclass(frozen=True)
class Bounds:
    """What one item may be. Each capture sets its own; the defaults suit a JSON payload."""

    max_bytes: int = 5 * 1024 * 1024
    max_depth: int = 32  # of nested JSON arrays and objects
    max_digits: int = 30  # of one JSON number
    max_items: int = 100_000  # JSON values in one item
    max_chars: int = 100_000  # of one text field


DEFAULT_BOUNDS = Bounds()


@dataclass(frozen=True)
class Refusal:
    """One item set aside: which intake, the item's own key, and why."""

    intake: str  # inbox | engagement | people | research | vault | import
    key: str  # the item's identity in its source (provider id, file name, URL, path)
    reason: str


@dataclass
class Taken:
    """What a capture took in one run: how many items, and the refusals."""

    intake: str
    items: int = 0
    refusals: list[Refusal] = field(default_factory=list)

    def refuse(self, key: str, reason: str) -> Refusal:
        refusal = Refusal(self.intake, clean_text(key)[:500], clean_text(reason)[:MAX_REASON])
        self.refusals.append(refusal)
        return refusal

    @property
    def refused(self) -> int:
        return len(self.refusals)

    def metadata(self) -> dict[str, Any]:
        """The run's numbers for an asset's metadata (the refusals themselves: `reasons`)."""
        return {"items_read": self.items, "items_refused": self.refused}

    def reasons(self, limit: int = 50) -> dict[str, str]:
        return {r.key: r.reason for r in self.refusals[:limit]}


def take(
    taken: Taken,
    items: Iterable[T],
    key: Callable[[T], str],
    handle: Callable[[T], R],
    warn: Callable[[str], None] | None = None,
) -> Iterator[R]:
    """`handle(item)` for each item, each alone: an item whose handling raises anything is
    refused with its reason (a `Refused` says its own; any other error is named by type)
    and the rest go on. Yields what each good item's handling returned."""
    for item in items:
        taken.items += 1
        try:
            yield handle(item)
        except Refused as exc:
            refusal = taken.refuse(key(item), str(exc))
        except Exception as exc:  # noqa: BLE001 (one item never stops the run)
            refusal = taken.refuse(key(item), f"could not be read ({type(exc).__name__})")
        else:
            continue
        if warn is not None:
            warn(f"{taken.intake}: {refusal.key} set aside: {refusal.reason}")


# --- text ----------------------------------------------------------------------------------

# C0 and C1 controls but tab, newline and carriage return; bidirectional overrides and
# isolates (they can make a stored name read differently from what it is); zero-width
# joiners are kept (some scripts need them).
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Unicode's default-ignorable code points (zero-width space, joiners, soft hyphen, word
# joiner, variation selectors, tags...): invisible, so never part of a name as compared.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)


def clean_text(text: str) -> str:
    """`text` safe to store in SQLite or JSON and to show: lone surrogates become U+FFFD,
    control and bidirectional-override characters go, and the result is Unicode NFC."""
    if text.isascii():
        return _UNSAFE.sub("", text) if not text.isprintable() else text
    text = _SURROGATE.sub("\ufffd", text)
    return unicodedata.normalize("NFC", _UNSAFE.sub("", text))


def name_key(name: str) -> str:
    """A name as compared, never as shown: NFKC, case-folded, invisible (default-ignorable)
    characters dropped, inner spaces squeezed and trimmed, so `Journal `, `JOURNAL`,
    `Ｊｏｕｒｎａｌ`, `Journal\u00a0` and `Jour\u200bnal` are one name."""
    folded = unicodedata.normalize("NFKC", _IGNORABLE.sub("", clean_text(name))).casefold()
    return " ".join(folded.split())


def same_name(a: str, b: str) -> bool:
    return name_key(a) == name_key(b)


def content_key(raw: bytes) -> str:
    """The identity of an item that brings none of its own: a hash of its bytes."""
    return "h:" + hashlib.blake2b(raw, digest_size=16).hexdigest()


# --- JSON ----------------------------------------------------------------------------------


def load_json(raw: bytes, bounds: Bounds = DEFAULT_BOUNDS) -> Any:
    """Parse one JSON item inside `bounds`, or `Refused` saying why. Numbers longer than
    `max_digits`, NaN and Infinity, nesting past `max_depth` and more than `max_items`
    values are refused; every string (keys too) comes back through `clean_text`."""
    if len(raw) > bounds.max_bytes:
        raise Refused(f"{len(raw):,} bytes, over the {bounds.max_bytes:,}-byte limit")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Refused("not UTF-8") from None

    def number(kind: type) -> Callable[[str], Any]:
        def parse(digits: str) -> Any:
            if len(digits) > bounds.max_digits:  # cheap first: a sign or a point is short
                count = sum(ch.isdigit() for ch in digits)
                if count > bounds.max_digits:
                    raise Refused(f"a number of {count:,} digits (at most {bounds.max_digits})")
            value = kind(digits)
            if kind is float and not math.isfinite(value):  # 1e999 would be infinity
                raise Refused(f"{digits} is too large for a number")
            return value

        return parse

    def constant(name: str) -> Any:
        raise Refused(f"{name} is not a number JSON allows")

    try:
        data = json.loads(
            text, parse_int=number(int), parse_float=number(float), parse_constant=constant
        )
    except json.JSONDecodeError as exc:
        raise Refused(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise Refused(f"nested deeper than {bounds.max_depth} levels") from None
    except ValueError as exc:  # a Refused from a hook, or the interpreter's own digit limit
        raise Refused(str(exc) if isinstance(exc, Refused) else "a number too long") from None
    return _cleaned(data, bounds)


def _cleaned(data: Any, bounds: Bounds) -> Any:
    """`data` with its strings cleaned; Refused past the depth or item bounds. Iterative,
    so no input can exhaust the stack."""
    count = 0
    root: list[Any] = [data]
    stack: list[tuple[Any, Any, int]] = [(root, 0, 0)]  # (container, index or key, depth)
    while stack:
        parent, slot, depth = stack.pop()
        value = parent[slot]
        count += 1
        if count > bounds.max_items:
            raise Refused(f"more than {bounds.max_items:,} values")
        if depth > bounds.max_depth:
            raise Refused(f"nested deeper than {bounds.max_depth} levels")
        if isinstance(value, str):
            if len(value) > bounds.max_chars:
                raise Refused(f"a text of {len(value):,} characters (at most {bounds.max_chars:,})")
            parent[slot] = clean_text(value)
        elif isinstance(value, (list, dict)):
            # Everything on the stack is counted when popped: refuse before making the
            # work of a container that cannot fit (a 5 MB array of numbers costs no more
            # than its parse).
            if count + len(stack) + len(value) > bounds.max_items:
                raise Refused(f"more than {bounds.max_items:,} values")
            if isinstance(value, list):
                stack.extend((value, i, depth + 1) for i in range(len(value)))
                continue
            cleaned = {clean_text(k): v for k, v in value.items()}
            parent[slot] = cleaned
            stack.extend((cleaned, k, depth + 1) for k in cleaned)
    return root[0]


# --- files ---------------------------------------------------------------------------------


def not_regular(info: os.stat_result) -> str | None:
    """Why a file of this stat cannot be read as an item (`not a regular file (a named
    pipe)`), or None for a regular file."""
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        kind = "a folder"
    elif stat.S_ISFIFO(mode):
        kind = "a named pipe"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    else:
        kind = "a socket" if stat.S_ISSOCK(mode) else "not a file"
    return f"not a regular file ({kind})"


def read_regular(
    path: str | Path, bounds: Bounds = DEFAULT_BOUNDS, *, follow_links: bool = False
) -> bytes:
    """The bytes of the regular file at `path`, at most `bounds.max_bytes` of them, or
    `Refused`. Checked before it is opened (a device or a FIFO is never opened) and again
    on the open file, opened without blocking (nothing swapped in between is waited on);
    the size is checked before reading and the read is capped, so a file that grows while
    read is refused too. A symbolic link is refused unless `follow_links` (for a path the
    caller has already judged). Other errors (missing, permissions, I/O) are the OSError's."""
    if not follow_links and os.path.islink(path):
        raise Refused("a symbolic link, not a file (links are never followed)")
    why = not_regular(os.stat(path))
    if why:
        raise Refused(why)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):  # made a link since it was checked
            raise Refused("a symbolic link, not a file (links are never followed)") from None
        raise exc
    try:
        info = os.fstat(fd)
        why = not_regular(info)
        if why:
            raise Refused(why)
        if info.st_size > bounds.max_bytes:
            raise Refused(f"{info.st_size:,} bytes, over the {bounds.max_bytes:,}-byte limit")
        chunks, left = [], bounds.max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > bounds.max_bytes:
        raise Refused(f"over the {bounds.max_bytes:,}-byte limit once read (it grew)")
    return raw


# --- times from outside --------------------------------------------------------------------


@dataclass(frozen=True)
class OutsideTime:
    """A time an item claims, bounded: `at` is what is kept (never after `now`, never
    before 1990), `claimed` what the item said, `flag` why they differ ("" if they don't)."""

    at: datetime
    claimed: datetime | None
    flag: str = ""


def outside_time(claimed: datetime | None, now: datetime) -> OutsideTime:
    """A time from outside as data: one in the future is kept as `now` and flagged, one
    before 1990 (or missing) is kept as `now` and flagged too. Never a cursor."""
    if claimed is None:
        return OutsideTime(now, None, "no time given")
    if claimed.tzinfo is None:
        claimed = claimed.replace(tzinfo=UTC)
    if claimed > now:
        return OutsideTime(now, claimed, "in the future")
    if claimed < EARLIEST:
        return OutsideTime(now, claimed, "before 1990")
    return OutsideTime(claimed, claimed)


# --- HTML ----------------------------------------------------------------------------------

_NOT_TEXT = ("script", "style", "noscript", "template", "iframe", "object", "svg", "head")


# Elements that end a line of text, as a browser lays them out.
_BLOCKS = (
    "address, article, aside, blockquote, br, dd, div, dl, dt, figcaption, figure, footer,"
    " form, h1, h2, h3, h4, h5, h6, header, hr, li, main, nav, ol, p, pre, section, table,"
    " td, th, tr, ul"
)


def html_text(html: str, max_chars: int = DEFAULT_BOUNDS.max_chars, *, lines: bool = False) -> str:
    """The readable text of an HTML document or fragment: parsed as a browser would
    (Lexbor), script, style and other non-text elements dropped, whitespace squeezed.
    With `lines`, each block (a paragraph, a list item, a heading...) is its own line."""
    from selectolax.lexbor import LexborHTMLParser  # the read-only CLI never pays for it

    tree = LexborHTMLParser(html)
    root = tree.body or tree.root
    if root is None:
        return ""
    for node in root.css(", ".join(_NOT_TEXT)):
        node.decompose()
    if not lines:
        text = root.text(separator=" ", strip=True)
        return clean_text(" ".join(text.split()))[:max_chars]
    for node in root.css(_BLOCKS):
        node.insert_after("\n")
    squeezed = (" ".join(line.split()) for line in root.text(separator="").splitlines())
    return clean_text("\n".join(line for line in squeezed if line))[:max_chars]


# --- URLs ----------------------------------------------------------------------------------

# Query parameters whose values are credentials: never logged or stored.
_CREDENTIAL_PARAM = re.compile(
    r"(^|[_-])(api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|secret"
    r"|password|passwd|pwd|sig|signature|session|sessionid|sid|code|credential)s?$",
    re.I,
)
REDACTED = "REDACTED"


def safe_url(url: str) -> str:
    """`url` fit to log or store: user and password taken out, credential parameters'
    values replaced by `REDACTED`, the fragment dropped. Unparsable: `<unreadable url>`."""
    try:
        parts = urlsplit(clean_text(url).strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unreadable url>"
    return urlunsplit((parts.scheme, host + port, parts.path, _safe_query(parts.query), ""))


def _safe_query(query: str) -> str:
    """A query with every credential parameter's value redacted. Split on `&`, `;` and a
    stray `?` alike, and decoded first, so `?=?api_key=X` or `a=%26token%3DX` hides nothing."""
    pairs = []
    for piece in re.split(r"[&;?]", unquote_plus(query)):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        secret = _CREDENTIAL_PARAM.search(name)
        pairs.append(f"{quote(name, safe='')}={REDACTED if secret else quote(value, safe='')}")
    return "&".join(pairs)


def has_credentials(url: str) -> bool:
    """Whether `url` carries a user, a password or a credential parameter (`safe_url`)."""
    try:
        userinfo = "@" in urlsplit(url).netloc
    except ValueError:
        return True
    return userinfo or f"={REDACTED}" in safe_url(url)


# --- refusals recorded ---------------------------------------------------------------------

# Each store that holds a capture's rows has this table (core/schema.py): a refused item is
# recorded once, so the next run knows it and does not meet it again.
REFUSALS_TABLE = """
    CREATE TABLE intake_refusals (
        intake      TEXT NOT NULL,
        item_key    TEXT NOT NULL,
        reason      TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (intake, item_key)
    )
"""


def record_refusals(conn: sqlite3.Connection, refusals: Iterable[Refusal], at: str) -> int:
    """Record refusals (inside the caller's transaction); one already recorded stays as it
    was. Returns how many were new."""
    # One statement a refusal (they are few), its rowcount read: the same on PostgreSQL,
    # which has no `total_changes`.
    return sum(
        conn.execute(
            "INSERT INTO intake_refusals (intake, item_key, reason, recorded_at)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (intake, item_key) DO NOTHING",
            (r.intake, r.key, r.reason, at),
        ).rowcount
        for r in refusals
    )


def refused_keys(conn: sqlite3.Connection, intake: str) -> set[str]:
    """The keys of the items this intake has refused before."""
    rows = conn.execute("SELECT item_key FROM intake_refusals WHERE intake = $1", (intake,))
    return {row[0] for row in rows}
