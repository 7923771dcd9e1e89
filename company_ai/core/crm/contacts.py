"""Contacts in the CRM store. Stdlib only: the CLI's read commands import this."""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from company_ai.core.store import table_exists
from company_ai.core.terminal import shorten


@dataclass(frozen=True)
class Contact:
    """A contact as the CRM row says it, read once: what outreach researches and writes to."""

    id: int
    name: str
    email: str | None
    company: str | None
    title: str | None
    city: str | None
    warmth: int = 0

    @classmethod
    def from_row(cls, row: sqlite3.Row | Mapping[str, Any]) -> Contact:
        return cls(
            id=row["id"],
            name=row["name"],
            email=row["email"],
            company=row["company"],
            title=row["title"],
            city=row["city"],
            warmth=row["warmth"],
        )

    @property
    def domain(self) -> str:
        """The domain of the contact's address ("" without one): where its company page is."""
        return (self.email or "").rpartition("@")[2]


def load_contact(crm: sqlite3.Connection, contact_id: int) -> Contact | None:
    """The contact with this id, or None when the CRM no longer has it."""
    row = crm.execute(
        "SELECT id, name, email, company, title, city, warmth FROM contacts WHERE id = $1",
        (contact_id,),
    ).fetchone()
    return None if row is None else Contact.from_row(row)


def known_companies(crm: sqlite3.Connection) -> tuple[str, ...]:
    """Every company the CRM names, sorted: the gate treats them as names in any case, so a
    draft cannot slip one past it in lower case ("we work with globex")."""
    rows = crm.execute(
        "SELECT DISTINCT company FROM contacts WHERE company IS NOT NULL AND trim(company) != ''"
    )
    # Sorted here: code point order on either database, whatever PostgreSQL's collation.
    return tuple(sorted(company for (company,) in rows))


_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")  # (\s: any Unicode space, as str.isspace)


class UnknownContactError(LookupError):
    """No contact has that email address."""


def normalize_email(email: str) -> str:
    """Trim, NFC-normalise and lower-case an address; reject what cannot be one."""
    cleaned = unicodedata.normalize("NFC", email.strip()).lower()
    local, at, domain = cleaned.rpartition("@")
    if not at or not local or not domain or _SPACE_OR_CONTROL.search(cleaned):
        raise ValueError(f"not an email address: {shorten(repr(email))}")
    return cleaned


def find_contact(crm: sqlite3.Connection, email: str) -> sqlite3.Row:
    """The contact with this email (primary or not), or UnknownContactError saying so."""
    address = normalize_email(email)
    row = crm.execute("SELECT * FROM contacts WHERE email = $1", (address,)).fetchone()
    if row is None and table_exists(crm, "contact_emails"):  # a store from before v2 has none
        row = crm.execute(
            "SELECT c.* FROM contacts c JOIN contact_emails e ON e.contact_id = c.id"
            " WHERE e.email = $1",
            (address,),
        ).fetchone()
    if row is None:
        raise UnknownContactError(f"no contact with email {shorten(repr(address))}")
    return row
