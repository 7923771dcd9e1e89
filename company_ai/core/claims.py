"""The recall pages' fabrication check: every number and name on a page is in its notes.

`unsupported_claims` is the one entry point the distiller uses. It is an adapter: at
merge it becomes a call to the project's fabrication gate,
`core.gate.find_unsupported_claims(page_text, source_texts)`, written on another branch.
Until then it runs the small containment check below.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’&-]*")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?;:])\s+|\n)\s*(?:[-*#>]+\s*)*(?:\[\w+\]\s*)?")


def unsupported_claims(page_text: str, source_texts: list[str]) -> list[str]:
    """The claims on the page that its sources do not support (empty: the page may publish)."""
    # TO BE REPLACED at merge by: return find_unsupported_claims(page_text, source_texts)
    return _containment_check(page_text, source_texts)


def _containment_check(page_text: str, source_texts: list[str]) -> list[str]:
    """Numbers and capitalised names (not sentence-initial) must occur in a source."""
    source = "\n".join(source_texts)
    numbers = set(_NUMBER.findall(source))
    words = set(_WORD.findall(source))
    starts = {m.end() for m in _SENTENCE_START.finditer(page_text)}
    found: list[str] = []
    for match in _NUMBER.finditer(page_text):
        if match.group() not in numbers:
            found.append(f"number {match.group()}")
    for match in _WORD.finditer(page_text):
        word = match.group()
        if word[0].isupper() and match.start() not in starts and word not in words:
            found.append(f"name {word}")
    return list(dict.fromkeys(found))
