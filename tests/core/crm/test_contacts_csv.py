"""`company-ai import contacts.csv` and the contact identity rules it shares with the sync."""

import pytest

from company_ai.cli import main
from company_ai.core.crm import import_contacts_csv
from company_ai.core.crm.contacts_csv import CsvFileError, read_contacts_csv
from company_ai.core.crm.people import ContactRecord, upsert_contacts

NOW = "2026-11-30T09:00:00Z"
GOOD = (
    "Name,Email,Other_Emails,Company,Title,City\n"
    "Ada Lovelace,ada@acme.example,ada.l@acme.example; ADA@home.example,Acme Ltd,CTO,Leeds\n"
    "Grace Hopper,,,Navy,Admiral,Arlington\n"
    "Alan Turing,alan@bletchley.example,,,,\n"
)


@pytest.fixture
def crm(stores):
    with stores.connect("crm") as conn:
        yield conn


def write(tmp_path, text: str | bytes, name="contacts.csv"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def rows(crm) -> list[tuple]:
    return [
        tuple(r)
        for r in crm.execute(
            "SELECT name, email, company, title, city, source FROM contacts ORDER BY id"
        )
    ]


def test_an_import_stores_every_row_and_every_address_and_a_second_run_changes_nothing(
    crm, tmp_path
):
    path = write(tmp_path, GOOD)
    report = import_contacts_csv(crm, path, NOW)
    assert (report.rows, report.counts.inserted, report.errors) == (3, 3, [])
    assert rows(crm) == [
        ("Ada Lovelace", "ada@acme.example", "Acme Ltd", "CTO", "Leeds", "csv"),
        ("Grace Hopper", None, "Navy", "Admiral", "Arlington", "csv"),
        ("Alan Turing", "alan@bletchley.example", None, None, None, "csv"),
    ]
    ada = crm.execute(
        "SELECT email, is_primary FROM contact_emails WHERE contact_id = 1 ORDER BY email"
    )
    assert [tuple(r) for r in ada] == [
        ("ada.l@acme.example", 0),
        ("ada@acme.example", 1),
        ("ada@home.example", 0),
    ]
    before = crm.execute("SELECT * FROM contacts").fetchall()
    again = import_contacts_csv(crm, path, "2026-12-01T09:00:00Z")
    assert (again.counts.inserted, again.counts.updated, again.counts.unchanged) == (0, 0, 3)
    assert crm.execute("SELECT * FROM contacts").fetchall() == before
    assert crm.execute("SELECT count(*) FROM contact_emails").fetchone()[0] == 4


def test_a_row_is_found_by_any_of_its_addresses_and_empty_cells_overwrite_nothing(crm, tmp_path):
    import_contacts_csv(crm, write(tmp_path, GOOD), NOW)
    update = "name,email,title\nAda King,ADA@home.example,Countess\n"
    report = import_contacts_csv(crm, write(tmp_path, update, "update.csv"), NOW)
    assert report.counts.updated == 1 and report.counts.inserted == 0
    assert rows(crm)[0] == (
        "Ada King",
        "ada@home.example",
        "Acme Ltd",
        "Countess",
        "Leeds",
        "csv",
    )  # the row's address is now the primary; the others are kept


def test_each_bad_row_is_named_with_its_line_and_the_good_rows_are_imported(crm, tmp_path):
    text = (
        "name,email,company\n"
        "Ada Lovelace,ada@acme.example,Acme\n"
        ",nobody@acme.example,Acme\n"  # 3: no name
        "Bob,not an address,Acme\n"  # 4
        "Carol,carol@acme.example\n"  # 5: a cell short
        "Dan,ADA@acme.example,Acme\n"  # 6: line 2's address again
        "Eve,eve@acme.example,Ev\x01il\n"  # 7: a control character
        f"{'F' * 300},f@acme.example,Acme\n"  # 8: too long
        "\n"
        "Grace,grace@acme.example,Navy\n"  # 10: fine
    )
    report = import_contacts_csv(crm, write(tmp_path, text), NOW)
    assert [(e.line, e.reason.split(" (")[0]) for e in report.errors] == [
        (3, "name is empty"),
        (4, "not an email address: 'not an address'"),
        (5, "2 cells for 3 columns"),
        (6, "the same contact as line 2"),
        (7, "company contains a control character"),
        (8, "name is longer than 200 characters"),
    ]
    assert [r[0] for r in rows(crm)] == ["Ada Lovelace", "Grace"]
    assert report.rows == 8


@pytest.mark.parametrize(
    "text, message",
    [
        (b"", "is empty"),
        (b"name,phone\nAda,123\n", "'phone'"),
        (b"email\nada@acme.example\n", "name required"),
        (b"name,name\nA,B\n", "distinct"),
        (b"nam\xe9,email\nJose,jose@acme.example\n", "'nam\ufffd'"),  # rows: one by one
    ],
    ids=["empty", "unknown-column", "no-name-column", "twice", "latin-1-header"],
)
def test_a_file_that_is_not_a_contacts_csv_is_refused_whole(tmp_path, text, message):
    with pytest.raises(CsvFileError, match=message):
        read_contacts_csv(write(tmp_path, text))


def test_a_byte_order_mark_and_quoted_cells_are_read(tmp_path):
    text = '\ufeffname,company\n"Lovelace, Ada","Acme, Ltd"\n'
    [(line, record)], errors = read_contacts_csv(write(tmp_path, text))
    assert errors == [] and (line, record.name, record.company) == (2, "Lovelace, Ada", "Acme, Ltd")


def test_the_command_reports_bad_rows_on_stderr_and_exits_1(tmp_path, capsys):
    data = tmp_path / "data"
    path = write(tmp_path, GOOD + "Bob,not an address,,,,\n")
    assert main(["--data-dir", str(data), "import", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "3 new, 0 updated, 0 unchanged contacts; 1 bad row not imported" in out
    assert "line 5: not an email address" in err and "not duplicated" in err
    assert main(["--data-dir", str(data), "import", str(write(tmp_path, GOOD))]) == 0
    assert "0 new, 0 updated, 3 unchanged contacts; 0 bad rows" in capsys.readouterr().out
    assert main(["--data-dir", str(data), "import", str(tmp_path / "missing.csv")]) == 1
    assert "no such file" in capsys.readouterr().err


# --- identity: what the sync and the import share -----------------------------------------


def test_an_address_belongs_to_one_contact_and_the_store_refuses_a_second_owner(crm):
    upsert_contacts(crm, [ContactRecord("Ada", ("ada@acme.example",))], source="csv", now=NOW)
    synced = ContactRecord(
        "Imposter", ("ada@acme.example", "imp@acme.example"), external_id="people/c9"
    )
    # A synced person matches an imported contact by address and adopts it.
    counts = upsert_contacts(crm, [synced], source="google_people", now=NOW, synced_from="g")
    assert (counts.inserted, counts.updated) == (0, 1)
    other = ContactRecord("Other", ("ada@acme.example", "o@acme.example"), external_id="people/c7")
    counts = upsert_contacts(crm, [other], source="google_people", now=NOW, synced_from="g")
    assert (counts.inserted, counts.conflicts) == (1, 1)  # c9 keeps the address
    owners = crm.execute("SELECT email, contact_id FROM contact_emails ORDER BY email")
    assert [tuple(r) for r in owners] == [
        ("ada@acme.example", 1),
        ("imp@acme.example", 1),
        ("o@acme.example", 2),
    ]
    with pytest.raises(crm.IntegrityError, match="another contact"):
        crm.execute("UPDATE contacts SET email = 'imp@acme.example' WHERE id = 2")


def test_a_local_correction_survives_a_sync_that_brings_nothing_new(crm):
    record = ContactRecord("Ada", ("ada@acme.example",), title="CTO", external_id="people/c1")
    upsert_contacts(crm, [record], source="g", now=NOW, synced_from="g")
    crm.execute("UPDATE contacts SET title = 'CEO' WHERE id = 1")  # research's writeback
    counts = upsert_contacts(crm, [record], source="g", now=NOW, synced_from="g")
    assert counts.unchanged == 1
    assert crm.execute("SELECT title FROM contacts").fetchone()[0] == "CEO"
    changed = ContactRecord("Ada", ("ada@acme.example",), title="CFO", external_id="people/c1")
    upsert_contacts(crm, [changed], source="g", now=NOW, synced_from="g")
    assert crm.execute("SELECT title FROM contacts").fetchone()[0] == "CFO"


def test_a_contact_is_found_by_any_address_and_one_deleted_upstream_is_not_researched(stores):
    from company_ai.core.crm import find_contact
    from company_ai.core.outreach.research import select_candidates
    from company_ai.core.times import Day

    ada = ContactRecord("Ada", ("ada@acme.example", "a2@acme.example"), external_id="people/c1")
    bob = ContactRecord("Bob", ("bob@acme.example",), external_id="people/c2")
    with stores.connect("crm") as crm, stores.connect("outreach") as outreach:
        upsert_contacts(crm, [ada, bob], source="g", now=NOW, synced_from="g")
        assert find_contact(crm, " A2@acme.example")["name"] == "Ada"
        assert [
            c.contact_id for c in select_candidates(crm, outreach, Day.of("2026-11-30", "UTC"))
        ] == [
            1,
            2,
        ]
        gone = ContactRecord("Bob", external_id="people/c2", deleted=True)
        upsert_contacts(crm, [gone], source="g", now=NOW, synced_from="g")
        assert [
            c.contact_id for c in select_candidates(crm, outreach, Day.of("2026-11-30", "UTC"))
        ] == [1]


def test_connect_google_writes_the_token_for_its_owner_only_and_never_prints_it(
    tmp_path, capsys, monkeypatch
):
    from google_auth_oauthlib.flow import InstalledAppFlow

    secret = "1//refresh-token-canary"

    class Flow:
        def run_local_server(self, **_):
            return type("Creds", (), {"to_json": lambda self: f'{{"refresh_token": "{secret}"}}'})()

    asked = []
    monkeypatch.setattr(
        InstalledAppFlow,
        "from_client_secrets_file",
        classmethod(lambda cls, path, scopes: asked.append(scopes) or Flow()),
    )
    client = write(tmp_path, "{}", "client_secret.json")
    out = tmp_path / "token.json"
    assert main(["connect-google", str(client), "--out", str(out)]) == 0
    assert asked == [["https://www.googleapis.com/auth/contacts.readonly"]]
    assert secret in out.read_text() and out.stat().st_mode & 0o777 == 0o600
    assert secret not in "".join(capsys.readouterr())
    assert main(["connect-google", str(tmp_path / "missing.json")]) == 1


def test_every_sample_contact_with_an_address_has_it_as_its_primary(sample_stores):
    with sample_stores.connect("crm", readonly=True) as crm:
        missing = crm.execute(
            "SELECT count(*) FROM contacts c WHERE c.email IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM contact_emails e WHERE e.email = c.email AND e.contact_id = c.id"
            " AND e.is_primary = 1)"
        ).fetchone()[0]
        with_email = crm.execute("SELECT count(*) FROM contacts WHERE email IS NOT NULL")
        assert missing == 0 and with_email.fetchone()[0] > 100
