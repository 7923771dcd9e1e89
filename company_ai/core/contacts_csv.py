"""`company-ai import contacts.csv`: contacts for an owner without Google.

The file is UTF-8 CSV with a header row. Columns (any order, any case): `name` (required),
`email`, `other_emails` (more addresses, separated by `;`), `company`, `title`, `city`.
An unknown column is refused rather than silently dropped. Each row is checked on its
own: a bad row is reported with its line number and why, and is not imported; the good
rows are. Importing is idempotent: a row is the contact that has any of its addresses,
or (without an address) the contact imported before under the same name and company, so
running the import again, or again after fixing the bad rows, duplicates nothing. Empty
cells never overwrite what the CRM knows.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from company_ai.core.contacts import normalize_email
from company_ai.core.people import (
    MAX_EMAILS,
    MAX_FIELD,
    ContactRecord,
    UpsertCounts,
    upsert_contacts,
)

COLUMNS = ("name", "email", "other_emails", "company", "title", "city")
BATCH = 1000  # rows per transaction: a killed import keeps whole batches, and a re-run is safe


class CsvFileError(ValueError):
    """The file as a whole cannot be read as a contacts CSV; nothing was imported."""


@dataclass(frozen=True)
class RowError:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class ImportReport:
    rows: int = 0
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    errors: list[RowError] = field(default_factory=list)


def read_contacts_csv(path: Path) -> tuple[list[tuple[int, ContactRecord]], list[RowError]]:
    """(line, record) for each good row, and a RowError for each bad one."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CsvFileError(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise CsvFileError(
            f"{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None
    except OSError as exc:
        raise CsvFileError(f"cannot read {path}: {exc.strerror}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise CsvFileError(f"{path} is empty: it needs a header row with a name column") from None
    except csv.Error as exc:
        raise CsvFileError(f"{path} is not CSV ({exc})") from None
    unknown = [h for h in header if h not in COLUMNS]
    if unknown or "name" not in header or len(set(header)) != len(header):
        raise CsvFileError(
            f"{path}: the header must name distinct columns among {', '.join(COLUMNS)} "
            f"(name required); found {', '.join(repr(h[:30]) for h in header)}"
        )
    good: list[tuple[int, ContactRecord]] = []
    errors: list[RowError] = []
    first_line: dict[str, int] = {}  # an address or a name key -> the line that had it
    for line, cells in _rows(reader, errors):
        if not any(c.strip() for c in cells):
            continue  # a blank line
        if len(cells) != len(header):
            errors.append(RowError(line, f"{len(cells)} cells for {len(header)} columns"))
            continue
        try:
            record = _record(dict(zip(header, cells, strict=True)))
        except ValueError as exc:
            errors.append(RowError(line, str(exc)))
            continue
        keys = list(record.emails) or [record.external_id or ""]
        repeated = next((k for k in keys if k in first_line), None)
        if repeated is not None:
            errors.append(RowError(line, f"the same contact as line {first_line[repeated]}"))
            continue
        first_line |= {k: line for k in keys}
        good.append((line, record))
    return good, errors


def _rows(reader, errors: list[RowError]) -> Iterator[tuple[int, list[str]]]:
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            errors.append(RowError(reader.line_num, f"not CSV ({exc})"))
            return  # the reader cannot go on past a broken quote: the rest is reported
        yield reader.line_num, cells


def _record(row: dict[str, str]) -> ContactRecord:
    for column, value in row.items():
        if any(ord(c) < 32 and c not in "\t\n\r" for c in value):
            raise ValueError(f"{column} contains a control character")
        if len(value.strip()) > MAX_FIELD:
            raise ValueError(f"{column} is longer than {MAX_FIELD} characters")
    name = " ".join(row["name"].split())
    if not name:
        raise ValueError("name is empty")
    raw = [row.get("email", "")] + row.get("other_emails", "").split(";")
    emails: list[str] = []
    for value in (v for v in raw if v.strip()):
        address = normalize_email(value)  # ValueError names the bad address
        if address not in emails:
            emails.append(address)
    if len(emails) > MAX_EMAILS:
        raise ValueError(f"more than {MAX_EMAILS} addresses")

    def cell(column: str) -> str | None:
        return " ".join(row.get(column, "").split()) or None

    company = cell("company")
    return ContactRecord(
        name=name,
        emails=tuple(emails),
        company=company,
        title=cell("title"),
        city=cell("city"),
        # Without an address, a row is known by its name and company, so a re-run finds it.
        external_id=None if emails else f"csv:{name.lower()}|{(company or '').lower()}",
    )


def import_contacts_csv(crm: sqlite3.Connection, path: Path, now: str) -> ImportReport:
    """Import the good rows of `path` (module docstring); the report names the bad ones."""
    good, errors = read_contacts_csv(path)
    report = ImportReport(rows=len(good) + len(errors), errors=errors)
    for start in range(0, len(good), BATCH):
        records = [record for _, record in good[start : start + BATCH]]
        report.counts.add(upsert_contacts(crm, records, source="csv", now=now))
    return report
