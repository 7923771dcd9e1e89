"""Tombstones: the people `company-ai forget` removed, kept so that nothing brings them back.

`<data dir>/forgotten.json` holds a per-install salt, one tombstone per forgotten person
(keyed hashes of their normalised addresses, their name and their ids in the contact
source, e.g. a People resourceName, never the text) and the audit log of
every forget (when, and how many rows or files each place lost). It is not a domain store,
so restoring a snapshot of the stores leaves it in place: the contact sync and the CSV
import skip a tombstoned address, inbox triage drops mail from one, the vault gate holds
back notes that name one, and `find_returned` finds a forgotten person a restore brought
back. Stdlib only: the sync, the import and the gate read it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from company_ai.core.files import write_atomic

TOMBSTONE_FILE = "forgotten.json"
_EMAIL = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")


def normal_email(email: str) -> str:
    return email.strip().lower()


def normal_name(name: str) -> str:
    """Words only, case-folded: `Zed  O'Quux` and `zed o'quux` are one name."""
    return " ".join(_WORD.findall(name.casefold()))


@dataclass
class Tombstones:
    """The tombstone file of one data directory (empty when nothing was ever forgotten)."""

    path: Path
    salt: bytes = b""
    people: list[dict[str, Any]] = field(default_factory=list)
    forgets: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, data_dir: str | Path) -> Tombstones:
        path = Path(data_dir) / TOMBSTONE_FILE
        try:
            record = json.loads(path.read_text())
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            # Failing open here would let a forgotten person back in: refuse to go on.
            raise ValueError(f"{path} is unreadable ({exc}); restore it from a backup") from None
        return cls(path, bytes.fromhex(record["salt"]), record["people"], record["forgets"])

    def key(self, text: str) -> str:
        if not self.salt:
            self.salt = secrets.token_bytes(32)
        return hmac.new(self.salt, text.encode(), hashlib.sha256).hexdigest()

    # Derived once, not per question: the sync asks once per contact (`bury` clears them).
    @functools.cached_property
    def _emails(self) -> set[str]:
        return {e for p in self.people for e in p["emails"]}

    @functools.cached_property
    def _sources(self) -> set[str]:
        return {s for p in self.people for s in p.get("sources", ())}

    @functools.cached_property
    def _names(self) -> set[str]:
        return {n for p in self.people for n in p["names"]}

    @functools.cached_property
    def _name_sizes(self) -> set[int]:
        return {int(n) for p in self.people for n in p["words"]}

    def __bool__(self) -> bool:
        return bool(self.people)

    def has_email(self, email: str | None) -> bool:
        return bool(self.people and email) and self.key(normal_email(email or "")) in self._emails

    def has_source(self, source_id: str | None) -> bool:
        """Whether the contact source's record `source_id` (a resourceName) was forgotten:
        the same record comes back with a new address and stays forgotten."""
        return bool(self.people and source_id) and self.key(source_id or "") in self._sources

    def has(self, emails: Iterable[str], name: str | None = None) -> bool:
        """Whether a person with these addresses (or this exact name) was forgotten."""
        if not self.people:
            return False
        if any(self.has_email(e) for e in emails):
            return True
        return bool(name) and self.key(normal_name(name or "")) in self._names

    def names_in(self, text: str) -> bool:
        """Whether `text` holds a forgotten person's address, or their name as words."""
        if not self.people:
            return False
        if any(self.has_email(e) for e in _EMAIL.findall(text)):
            return True
        words = _WORD.findall(text.casefold())
        names = self._names
        for size in self._name_sizes:
            for start in range(len(words) - size + 1):
                if self.key(" ".join(words[start : start + size])) in names:
                    return True
        return False

    def bury(
        self, emails: Iterable[str], names: Iterable[str], at: str, sources: Iterable[str] = ()
    ) -> None:
        """Add a tombstone for one person (idempotent) and write the file."""
        names = [normal_name(n) for n in names if normal_name(n)]
        ids = sorted({self.key(s) for s in sources if s})
        stone = {
            "emails": sorted({self.key(normal_email(e)) for e in emails}),
            "names": sorted({self.key(n) for n in names}),
            "words": sorted({len(n.split()) for n in names}),
            "sources": ids,
        }
        same = [p for p in self.people if p["emails"] == stone["emails"]]
        if same and set(ids) <= set(same[0].get("sources", [])):
            return
        if same:  # a tombstone written before ids were kept: the ids added
            same[0]["sources"] = sorted({*same[0].get("sources", []), *ids})
        else:
            self.people.append(stone | {"since": at})
        for derived in ("_emails", "_names", "_name_sizes", "_sources"):
            self.__dict__.pop(derived, None)
        self.save()

    def log(self, entry: Mapping[str, Any]) -> None:
        self.forgets.append(dict(entry))
        self.save()

    def save(self) -> None:
        record = {"salt": self.salt.hex(), "people": self.people, "forgets": self.forgets}
        write_atomic(self.path, json.dumps(record, indent=1).encode())
