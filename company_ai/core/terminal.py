"""Text bound for a terminal: stored text made inert, typed input shortened for messages.

Stdlib only (CLI read path). A note, a page or a contact's name can hold anything, and
the terminal obeys some of it: ESC starts sequences that move the cursor, recolour, clear
the screen or retitle the window; C1 codes (U+0080-U+009F) do the same on some terminals;
bidi overrides (U+202E) reverse what follows, so the text shown is not the text stored.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

# Every C0 control but tab and newline, DEL, every C1 control, and the bidi controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """`text` with each unsafe character written out (`\\x1b`, `\\u202e`): visible, not obeyed."""
    return _UNSAFE.sub(lambda m: _escaped(m.group()), text)


def escape_json(text: str) -> str:
    """JSON (from `json.dumps`) with each unsafe character as a `\\uXXXX` escape: the same
    JSON to any parser, inert on a terminal. (`json.dumps` escapes C0 itself, but not DEL,
    C1 or bidi controls when `ensure_ascii=False`.) They can only occur inside strings."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shorten(text: str, limit: int = 100) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def progress(label: str, unit: str = "contacts") -> Callable[[int, int], None]:
    """A `report(done, total)` that redraws `label: 1,200/2,000 contacts` on stderr."""

    def report(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\r{label}: {done:,}/{total:,} {unit}", end=end, file=sys.stderr, flush=True)

    return report
