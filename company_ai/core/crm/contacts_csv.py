"""`company-ai import contacts.csv`: contacts for an owner without Google.

The file is UTF-8 CSV with a header row. Columns (any order, any case): `name` (required),
`email`, `other_emails` (more addresses, separated by `;`), `company`, `title`, `city`.
An unknown column is refused rather than silently dropped. Each row is checked on its
own: a bad row is reported with its line number and why, and is not imported; the good
rows are. Importing is idempotent: a row is the contact that has any of its addresses,
or (without an address) the contact imported before under the same name and company, so
running the import again, or again after fixing the bad rows, duplicates nothing. Empty
cells never overwrite what the CRM knows.

Only a regular file of at most `MAX_CSV_BYTES` is read: a folder, a named pipe, a device
(`/dev/zero`) or a bigger file is refused in one sentence before a byte is read, so the
import never waits on a pipe or reads forever. Each row goes through `intake.take` alone:
a cell that is not UTF-8, holds a control character (NUL included) or is too long refuses
its row; the rest of the file is read. Cells are stored as `intake.clean_text` makes them
(a formula such as `=HYPERLINK(...)` is stored as the text it is; nothing exports
contacts to CSV).
"""

from __future__ import annotations

import csv
import io
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from company_ai.core.crm.contacts import normalize_email
from company_ai.core.crm.people import (
    MAX_EMAILS,
    MAX_FIELD,
    ContactRecord,
    UpsertCounts,
    upsert_contacts,
)
from company_ai.core.intake import Bounds, Refused, Taken, clean_text, read_regular, take

COLUMNS = ("name", "email", "other_emails", "company", "title", "city")
# The biggest contacts file read: 100,000 contacts of six columns are about 10 MB.
MAX_CSV_BYTES = 50 * 1024 * 1024
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
    text = _read_file(path).decode("utf-8-sig", errors="surrogateescape")
    limit = csv.field_size_limit(MAX_CSV_BYTES)  # a long field is refused by its row
    try:
        return _read_rows(path, csv.reader(io.StringIO(text, newline="")))
    finally:
        csv.field_size_limit(limit)


def _read_file(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_CSV_BYTES (`intake.read_regular`: never
    a device or a named pipe, never blocking), or CsvFileError in one sentence."""
    try:
        return read_regular(path, Bounds(max_bytes=MAX_CSV_BYTES), follow_links=True)
    except FileNotFoundError:
        raise CsvFileError(f"no such file: {path}") from None
    except OSError as exc:
        raise CsvFileError(f"cannot read {path}: {exc.strerror}; nothing was imported") from None
    except Refused as exc:
        raise CsvFileError(
            f"{path} is {exc}: give a CSV file of at most {MAX_CSV_BYTES:,} bytes (split a "
            "bigger one); nothing was imported"
        ) from None


def _read_rows(path: Path, reader) -> tuple[list[tuple[int, ContactRecord]], list[RowError]]:
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise CsvFileError(f"{path} is empty: it needs a header row with a name column") from None
    except csv.Error as exc:
        raise CsvFileError(f"{path} is not CSV ({exc})") from None
    unknown = [h for h in header if h not in COLUMNS]
    if unknown or "name" not in header or len(set(header)) != len(header):
        shown = ", ".join(repr(clean_text(h[:30])) for h in header)
        raise CsvFileError(
            f"{path}: the header must name distinct columns among {', '.join(COLUMNS)} "
            f"(name required); found {shown}"
        )
    taken = Taken("import")
    first_line: dict[str, int] = {}  # an address or a name key -> the line that had it

    def row(item: tuple[int, list[str]]) -> tuple[int, ContactRecord] | None:
        line, cells = item
        if not any(c.strip() for c in cells):
            return None  # a blank line
        if len(cells) != len(header):
            raise Refused(f"{len(cells)} cells for {len(header)} columns")
        try:
            record = _record(dict(zip(header, cells, strict=True)))
        except ValueError as exc:
            raise Refused(str(exc)) from None
        keys = list(record.emails) or [record.external_id or ""]
        repeated = next((k for k in keys if k in first_line), None)
        if repeated is not None:
            raise Refused(f"the same contact as line {first_line[repeated]}")
        first_line.update((k, line) for k in keys)
        return line, record

    rows = take(taken, _rows(reader, taken), key=lambda item: str(item[0]), handle=row)
    good = [kept for kept in rows if kept is not None]
    return good, [RowError(int(r.key), r.reason) for r in taken.refusals]


def _rows(reader, taken: Taken) -> Iterator[tuple[int, list[str]]]:
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            # The reader cannot go on past a broken quote: the rest is reported.
            taken.refuse(str(reader.line_num), f"not CSV ({exc})")
            return
        yield reader.line_num, cells


def _record(cells: dict[str, str]) -> ContactRecord:
    row: dict[str, str] = {}
    for column, value in cells.items():
        if len(value.strip()) > MAX_FIELD:
            raise ValueError(f"{column} is longer than {MAX_FIELD} characters")
        if any("\udc80" <= c <= "\udcff" for c in value):  # undecodable bytes, escaped
            raise ValueError(f"{column} is not UTF-8 text (save the file as UTF-8)")
        if any(ord(c) < 32 and c not in "\t\n\r" for c in value):
            raise ValueError(f"{column} contains a control character")
        row[column] = clean_text(value)
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
