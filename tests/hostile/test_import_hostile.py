"""`company-ai import` under hostile input: a path that is not a regular file is refused in
one sentence without waiting on it, and each hostile row is refused alone with its line
and reason while the good rows are imported (the corpus: tests/hostile/import_csv/)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from company_ai.core.crm.contacts_csv import MAX_CSV_BYTES
from company_ai.core.store import Stores

CORPUS = Path(__file__).parent / "import_csv"


def run_import(data: Path, path: Path | str) -> subprocess.CompletedProcess:
    """The CLI in its own process; the timeout is a guard against a hang, not a speed test."""
    return subprocess.run(
        [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data), "import", str(path)],
        capture_output=True, text=True, timeout=60,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )  # fmt: skip


def make_fifo(tmp_path):
    os.mkfifo(tmp_path / "contacts.csv")
    return tmp_path / "contacts.csv"


def make_device_link(tmp_path):
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    return tmp_path / "zero.csv"


def make_sparse(tmp_path):
    with open(tmp_path / "huge.csv", "wb") as huge:
        huge.write(b"name,email\n")
        huge.truncate(200 * 1024 * 1024)  # 200 MB, sparse: nothing of it is written
    return tmp_path / "huge.csv"


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda tmp: Path("/dev/zero"), "is not a regular file (a device)"),
        (make_fifo, "is not a regular file (a named pipe)"),
        (lambda tmp: tmp, "is not a regular file (a folder)"),
        (make_device_link, "is not a regular file (a device)"),
        (make_sparse, f"209,715,200 bytes, over the {MAX_CSV_BYTES:,}-byte limit"),
    ],
    ids=["dev-zero", "fifo", "folder", "symlink-to-device", "sparse-200mb"],
)
def test_a_path_that_is_not_a_small_regular_file_is_refused_in_one_sentence(tmp_path, make, said):
    path = make(tmp_path)
    done = run_import(tmp_path / "data", path)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("company-ai: error: ") and said in line, line
    assert "nothing was imported" in line
    assert done.stdout == ""


def test_each_hostile_row_is_refused_with_its_line_and_the_good_rows_are_imported(tmp_path):
    path = tmp_path / "contacts.csv"
    big = "B" * (10 * 1024 * 1024)  # a 10 MB field: past the csv module's own field limit
    path.write_bytes((CORPUS / "hostile_rows.csv").read_bytes() + f"Big,{big},Acme,Ops\n".encode())
    with open(path, "ab") as out:
        out.write(b"Last Row,last@acme.example,Acme,Ops\n")  # 10: after the big one
    done = run_import(tmp_path / "data", path)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if ": line " in line]
    assert [e.split(": line ", 1)[1] for e in errors] == [
        "3: company is not UTF-8 text (save the file as UTF-8)",
        "4: company is not UTF-8 text (save the file as UTF-8)",
        "5: company contains a control character",
        "9: email is longer than 200 characters",
    ]
    assert "5 new, 0 updated, 0 unchanged contacts; 4 bad rows not imported" in done.stdout
    with Stores(tmp_path / "data").connect("crm") as crm:
        rows = dict(crm.execute("SELECT name, company FROM contacts").fetchall())
        titles = {r[0] for r in crm.execute("SELECT title FROM contacts")}
    assert set(rows) == {
        "Ada Lovelace", '=HYPERLINK("http://evil.example","x")', "Rtl Name", "Grace Hopper",
        "Last Row",
    }  # fmt: skip
    assert rows["Rtl Name"] == "Acme" and "+SUM(A1)" in titles  # formulas are kept as text
