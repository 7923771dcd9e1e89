"""Secrets out of error text: every encoding of every secret, masked before anything is
stored or logged.

A service that fails often echoes the request back: Telegram's error for a bad bot URL
holds the token, URL-encoded; a proxy's HTML page may hold it as entities, a JSON body
as `\\u` escapes, a debug dump as base64. `scrub` masks each of these forms, in any
letter case: the plain secret, percent-encoding of any of its characters (upper- or
lower-case hex, even encoded twice), `+` for a space, JSON and HTML escapes, and base64
(standard and URL-safe) at each of the three alignments it can sit at in a longer text.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

MASK = "<secret>"
# Settings whose values are secrets: COMPANY_AI_TELEGRAM_TOKEN, COMPANY_AI_GMAIL_TOKEN, …
_SECRET_SETTING = re.compile(r"^COMPANY_AI_\w*(TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIALS)\w*$")
# Inside a JSON secret (an OAuth token file), a string this long may be a credential.
_MIN_JSON_SECRET = 8


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every encoding of every (non-empty) secret replaced by `MASK`."""
    for secret in secrets:
        if secret:
            pattern, base64_forms = _forms(secret)
            text = pattern.sub(MASK, text)
            for form in base64_forms:
                text = text.replace(form, MASK)
    return text


def secrets_from_env(environ: Mapping[str, str]) -> set[str]:
    """The values of the secret settings (`COMPANY_AI_…TOKEN`, `…SECRET`, `…PASSWORD`,
    `…KEY`), and the longer strings inside any that is JSON (a refresh token)."""
    found: set[str] = set()
    for name, value in environ.items():
        if not value or not _SECRET_SETTING.match(name):
            continue
        found.add(value)
        try:
            inner = json.loads(value)
        except ValueError:
            continue
        if isinstance(inner, dict):
            found |= {
                v for v in inner.values() if isinstance(v, str) and len(v) >= _MIN_JSON_SECRET
            }
    return found


@lru_cache(maxsize=64)
def _forms(secret: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A pattern for the character-wise encodings of `secret`, and its base64 forms."""
    pattern = re.compile("".join(_char(c) for c in secret), re.IGNORECASE)
    raw = secret.encode("utf-8")
    forms = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        # Only characters that depend on the secret alone: skip those mixing in the bytes
        # before it (2 for one byte, 3 for two) and after it (the partial last group).
        end = (shift + len(raw)) // 3 * 4 + (shift + len(raw)) % 3
        middle = encoded[(0, 2, 3)[shift] : end]
        if len(middle) >= 4:
            forms |= {middle, middle.translate(str.maketrans("+/", "-_"))}
    return pattern, tuple(sorted(forms, key=len, reverse=True))


def _char(c: str) -> str:
    """Every way one character of a secret may be written in error text."""
    ways = [re.escape(c)]
    ways.append("".join(f"%(?:25)?{b:02x}" for b in c.encode("utf-8")))  # URL, even twice
    ways.append(f"\\\\u{ord(c):04x}")  # JSON
    ways.append(f"&#0*{ord(c)};|&#x0*{ord(c):x};")  # HTML
    ways += {" ": ["\\+"], "/": ["\\\\/"], "&": ["&amp;"], "<": ["&lt;"], ">": ["&gt;"],
             '"': ["&quot;", '\\\\"'], "'": ["&#x27;"]}.get(c, [])  # fmt: skip
    return f"(?:{'|'.join(ways)})"
