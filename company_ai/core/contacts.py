"""Contacts in the CRM store. Stdlib only: the CLI's read commands import this."""

from __future__ import annotations

import sqlite3
import unicodedata

from company_ai.core.terminal import shorten


class UnknownContactError(LookupError):
    """No contact has that email address."""


def normalize_email(email: str) -> str:
    """Trim, NFC-normalise and lower-case an address; reject what cannot be one."""
    cleaned = unicodedata.normalize("NFC", email.strip()).lower()
    local, at, domain = cleaned.rpartition("@")
    if not at or not local or not domain or any(c.isspace() or ord(c) < 32 for c in cleaned):
        raise ValueError(f"not an email address: {shorten(repr(email))}")
    return cleaned


def find_contact(crm: sqlite3.Connection, email: str) -> sqlite3.Row:
    """The contact with this email, or UnknownContactError saying so."""
    address = normalize_email(email)
    row = crm.execute("SELECT * FROM contacts WHERE email = ?", (address,)).fetchone()
    if row is None:
        raise UnknownContactError(f"no contact with email {shorten(repr(address))}")
    return row
