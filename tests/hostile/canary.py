"""The canary scan: plant a unique string, run the system, then find every file that holds it.

A privacy test plants a canary (a word nobody else would write) where nothing may copy it
(a private vault folder, a secret), runs the graph, and asks `find_canary` which files
under the given roots contain it. Files are read as raw bytes, so SQLite pages, WAL and
journal files, compute logs and JSON are all searched; the canary is looked for in the
encodings a leak could take on the way (UTF-8, UTF-16, URL-encoding, base64 at each of
its three alignments, JSON and HTML escaping, upper and lower case).
"""

from __future__ import annotations

import base64
import os
import urllib.parse
from pathlib import Path


def encodings(canary: str) -> set[bytes]:
    """Every byte pattern under which `canary` could be stored or logged."""
    forms = {canary, canary.lower(), canary.upper()}
    patterns: set[bytes] = set()
    for form in forms:
        raw = form.encode("utf-8")
        patterns |= {raw, form.encode("utf-16-le"), form.encode("utf-16-be")}
        patterns.add(urllib.parse.quote(form, safe="").encode())
        patterns.add(urllib.parse.quote_plus(form).encode())
        patterns.add(form.encode("unicode_escape"))
        for shift in range(3):
            # base64 of the canary inside a longer string: the stable middle of each alignment
            encoded = base64.b64encode(b"\0" * shift + raw)
            middle = encoded[4 : len(encoded) - 4]
            if len(middle) >= 8:
                patterns.add(middle)
    return {p for p in patterns if len(p) >= 6}


def find_canary(canary: str, *roots: str | Path) -> list[str]:
    """Paths of every file under `roots` (recursively; symlinks not followed) holding `canary`."""
    patterns = encodings(canary)
    found = []
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                if path.is_symlink() or not path.is_file():
                    continue
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                if any(p in data for p in patterns):
                    found.append(str(path))
    return sorted(found)
