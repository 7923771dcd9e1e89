"""`company-ai forget` in core: what it removes, what it keeps (hashes only), a forget killed
midway, an unknown address, and the tombstone against import, sync, mail, vault and restore."""

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from company_ai.cli import main
from company_ai.core.crm import Tombstones, import_contacts_csv
from company_ai.core.crm.people import ContactRecord, upsert_contacts
from company_ai.core.crm.tombstones import TOMBSTONE_FILE
from company_ai.core.inbox import triage
from company_ai.core.memory import append_episodes, seal_day
from company_ai.core.ops import find_returned, forget, forgetting, take_snapshot
from company_ai.core.ops.forgetting import PROGRESS_FILE
from company_ai.core.store import MEMORY_V1, Stores, dialect, transaction
from company_ai.core.times import Day
from company_ai.core.timetable import current_partitions
from company_ai.core.vault import stage_vault
from company_ai.days import entry_of
from company_ai.resources.people import PeopleSource
from company_ai.resources.stores import StoresResource
from tests.conftest import fixed_clock
from tests.core.inbox.test_inbox import inbound, mail
from tests.hostile.canary import find_canary
from tests.setup import named

NOW = "2026-11-30T08:00:00Z"
AT = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def person(stores):
    """The sample contact with the most episodes and at least one message: (id, email, name)."""
    with stores.connect("outreach", readonly=True) as outreach:
        messaged = {r[0] for r in outreach.execute("SELECT DISTINCT contact_id FROM messages")}
    with stores.connect("memory", readonly=True) as memory:
        counts = memory.execute(
            "SELECT contact_id, count(*) FROM contact_episodes GROUP BY contact_id"
            " ORDER BY 2 DESC, 1"
        ).fetchall()
    cid = next(c for c, _ in counts if c in messaged)
    with stores.connect("crm", readonly=True) as crm:
        email, name = crm.execute(
            "SELECT email, name FROM contacts WHERE id = $1", (cid,)
        ).fetchone()
    return cid, email, name


def count(stores, domain, sql, *args):
    with stores.connect(domain, readonly=True) as conn:
        return conn.execute(sql, args).fetchone()[0]


def traces(stores, cid):
    """Rows anywhere in the stores keyed by the contact's id."""
    return {
        "crm": count(stores, "crm", "SELECT count(*) FROM contacts WHERE id = $1", cid),
        "addresses": count(
            stores, "crm", "SELECT count(*) FROM contact_emails WHERE contact_id = $1", cid
        ),
        "episodes": count(
            stores, "memory", "SELECT count(*) FROM contact_episodes WHERE contact_id = $1", cid
        ),
        "messages": count(
            stores, "outreach", "SELECT count(*) FROM messages WHERE contact_id = $1", cid
        ),
    }


def add_address(stores, cid, email):
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contact_emails (email, contact_id, added_at) VALUES ($1, $2, $3)",
            (email, cid, NOW),
        )


def files_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_forget_by_any_address_removes_the_person_and_keeps_only_keyed_hashes(data):
    stores = Stores(data)
    cid, email, name = person(stores)
    add_address(stores, cid, "second.address@elsewhere.example")
    assert all(traces(stores, cid).values())
    done = forget(stores, "Second.Address@elsewhere.example", now=NOW, log=lambda _: None)
    assert traces(stores, cid) == {"crm": 0, "addresses": 0, "episodes": 0, "messages": 0}
    assert done.removed["crm_people"] == 1 and done.removed["crm_addresses"] == 2
    assert done.removed["episodes"] > 0 and done.removed["outreach_rows"] > 0
    stones = Tombstones.load(data)
    assert stones.has_email(email) and stones.has_email("second.address@elsewhere.example")
    assert stones.forgets[0]["removed"] == done.removed
    for secret in (email, name, "second.address@elsewhere.example"):
        assert find_canary(secret, data / TOMBSTONE_FILE) == []
    assert not (data / PROGRESS_FILE).exists()
    # The sample's offline address book no longer holds them either.
    assert find_canary(email, data / "sample_people.json") == []


def test_an_unknown_address_is_a_clear_error_and_changes_nothing(data, capsys):
    before = files_digest(data)
    assert main(["--data-dir", str(data), "forget", "nobody@nowhere.example"]) == 1
    err = capsys.readouterr().err
    assert "no contact has the address nobody@nowhere.example; nothing was changed" in err
    assert files_digest(data) == before  # and no tombstone: a typo must not block anyone


def test_a_forget_killed_midway_is_finished_by_running_it_again(data, monkeypatch):
    stores = Stores(data)
    cid, email, _ = person(stores)
    places = list(forgetting.PLACES)

    def killed(*args):
        raise KeyboardInterrupt("killed")

    at = [p for p, _ in places].index("brain")
    monkeypatch.setattr(forgetting, "PLACES", places[:at] + [("brain", killed)] + places[at + 1 :])
    with pytest.raises(KeyboardInterrupt):
        forget(stores, email, now=NOW, log=lambda _: None)
    half = traces(stores, cid)
    assert half["episodes"] == 0 and half["messages"] == 0 and half["crm"] == 1
    assert (data / PROGRESS_FILE).exists()
    # Meanwhile the tombstone already stands: an import cannot bring them back.
    with stores.connect("crm") as crm:
        assert upsert_contacts(
            crm, [ContactRecord(name="X", emails=(email,))], source="csv", now=NOW
        ).forgotten == 1  # fmt: skip
    monkeypatch.setattr(forgetting, "PLACES", places)
    again = forget(stores, email, now=NOW, log=lambda _: None)
    assert again.resumed and again.removed["episodes"] > 0  # the first run's count is kept
    assert traces(stores, cid) == {"crm": 0, "addresses": 0, "episodes": 0, "messages": 0}
    assert not (data / PROGRESS_FILE).exists()
    # Run once more: done already, nothing to do, no second audit entry.
    assert forget(stores, email, now=NOW, log=lambda _: None).already
    assert len(Tombstones.load(data).forgets) == 1


def test_a_tombstoned_address_is_skipped_by_the_csv_import_and_the_sync(data, tmp_path, capsys):
    stores = Stores(data)
    _, email, name = person(stores)
    forget(stores, email, now=NOW, log=lambda _: None)
    csv = tmp_path / "back.csv"
    csv.write_text(f"name,email\n{name},{email.upper()}\nNew Person,new.person@x.example\n")
    assert main(["--data-dir", str(data), "import", str(csv)]) == 0
    assert "1 row of forgotten people skipped" in capsys.readouterr().out
    with stores.connect("crm") as crm:
        gone = crm.execute("SELECT count(*) FROM contact_emails WHERE email = $1", (email,))
        assert gone.fetchone()[0] == 0
        report = import_contacts_csv(crm, csv, NOW)
        synced = upsert_contacts(
            crm, [ContactRecord(name=name, emails=(email,), external_id="people/c1")],
            source="google_people", now=NOW, synced_from="google_people", seen_in=NOW,
        )  # fmt: skip
    assert report.counts.forgotten == 1 and synced.forgotten == 1 and synced.inserted == 0


def test_the_vault_gate_and_inbox_triage_hold_back_a_forgotten_person(data, vault, tmp_path):
    stores = Stores(data)
    _, email, name = person(stores)
    forget(stores, email, now=NOW, log=lambda _: None)
    stones = Tombstones.load(data)
    (vault / "notes" / "lunch.md").write_text(f"# Lunch\n\nWith {name.upper()} on Friday.\n")
    (vault / "notes" / "mail.md").write_text(f"# Mail\n\nWrite to <{email}>.\n")
    result = stage_vault(vault, tmp_path / "staging", day="2026-11-30", forgotten=stones)
    assert result.held_forgotten == 2 and len(result.staged) == 21
    assert find_canary(name, tmp_path / "staging") == []
    done = triage(
        stores, [inbound(mail(sender=f"{name} <{email}>"))], source="gmail", tz="UTC", now=AT
    )
    assert done.forgotten == 1 and done.episodes_written == 0


@pytest.mark.sqlite_only("it restores crm.db and memory.db from a snapshot's files")
def test_a_restored_snapshot_brings_them_back_and_the_check_and_reapply_see_it(
    data, tmp_path, clock
):
    stores = Stores(data)
    cid, email, _ = person(stores)
    take_snapshot(stores, tmp_path / "snaps", "2026-11-29", keep=3, now=AT)
    forget(stores, email, now=NOW, log=lambda _: None)
    assert find_returned(stores, Tombstones.load(data)) == []
    for store in ("crm", "memory"):  # the owner restores two stores from the backup
        for suffix in ("-wal", "-shm"):
            (data / f"{store}.db{suffix}").unlink(missing_ok=True)
        shutil.copy(tmp_path / "snaps" / "2026-11-29" / f"{store}.db", data / f"{store}.db")
    assert find_returned(stores, Tombstones.load(data)) == [email]
    crm_contacts = named("crm_contacts")
    clock(AT)
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [crm_contacts], instance=instance,
            partition_key=current_partitions(entry_of("crm_contacts").slot, AT, "UTC")[0],
            resources={"stores": StoresResource(data_dir=str(data)),
                       "people": PeopleSource(sample_file=str(data / "sample_people.json"))},
            raise_on_error=False,
        )  # fmt: skip
    [check] = [
        c for c in result.get_asset_check_evaluations()
        if c.check_name == "forgotten_people_stay_forgotten"
    ]  # fmt: skip
    assert not check.passed and check.metadata["returned"].value == 1
    assert email not in str(check.metadata)
    assert main(["--data-dir", str(data), "forget", "--reapply"]) == 0
    assert find_returned(stores, Tombstones.load(data)) == []
    assert traces(stores, cid)["episodes"] == 0


def tamper(stores, episode_id):
    """Delete an episode behind the store's back (the triggers dropped and put back)."""
    with stores.connect("memory") as conn, transaction(conn):
        if dialect(conn) == "postgres":
            conn.execute(
                "ALTER TABLE contact_episodes DISABLE TRIGGER contact_episodes_append_only"
            )
            conn.execute("DELETE FROM contact_episodes WHERE id = $1", (episode_id,))
            conn.execute("ALTER TABLE contact_episodes ENABLE TRIGGER contact_episodes_append_only")
            return
        conn.execute("DROP TRIGGER contact_episodes_append_only_delete")
        conn.execute("DELETE FROM contact_episodes WHERE id = $1", (episode_id,))
        conn.execute([s for s in MEMORY_V1 if "append_only_delete" in s][0])


def test_a_forget_makes_the_next_vault_night_compare_everything(data, vault, tmp_path, minilm):
    from company_ai.core.recall import index_entities
    from company_ai.core.vault import distill_staging, offline_page

    stores = Stores(data)
    _, email, _ = person(stores)
    stage_vault(vault, tmp_path / "staging", day="2026-11-30")
    with stores.connect("recall") as conn:
        distill_staging(
            conn, str(tmp_path / "staging"), day="2026-11-30", source="model:offline",
            distill=lambda title, path, text: offline_page(path, text), clock=fixed_clock(),
        )  # fmt: skip
        index_entities(conn, minilm)
    marks = "SELECT count(*) FROM sync_marks"
    assert count(stores, "recall", marks) == 2
    forget(stores, email, now=NOW, log=lambda _: None)
    # It took rows out of recall that a night with matching marks would never look at.
    assert count(stores, "recall", marks) == 0


def test_a_forget_reseals_its_days_so_only_a_real_tamper_changes_a_seal(stores):
    with stores.connect("crm") as crm, transaction(crm):
        for cid, email in ((1, "ada@x.example"), (2, "ben@x.example")):
            crm.execute(
                "INSERT INTO contacts (id, email, name, source, created_at, updated_at)"
                " VALUES ($1, $2, $3, 'sample', $4, $5)",
                (cid, email, f"Person {cid}", NOW, NOW),
            )
            crm.execute(
                "INSERT INTO contact_emails (email, contact_id, is_primary, added_at)"
                " VALUES ($1, $2, 1, $3)",
                (email, cid, NOW),
            )
    with stores.connect("memory") as memory:
        append_episodes(memory, [
            {"contact_id": c, "episode_type": "note", "content": f"n{c}-{i}", "source": "manual",
             "created_at": f"2026-11-29T1{i}:00:00Z"}
            for c in (1, 2) for i in range(3)
        ], now="2026-11-29T15:00:00Z")  # fmt: skip
        seal_day(memory, Day.of("2026-11-29", "UTC"), now=AT)
    forget(stores, "ada@x.example", now=NOW, log=lambda _: None)
    with stores.connect("memory") as memory:
        assert not seal_day(memory, Day.of("2026-11-29", "UTC"), now=AT).changed
        redactions = memory.execute("SELECT day, episodes FROM redactions").fetchall()
        assert [tuple(r) for r in redactions] == [("2026-11-29", 3)]
        survivor = memory.execute("SELECT min(id) FROM contact_episodes").fetchone()[0]
        with pytest.raises(Exception, match="append-only"):
            memory.execute("DELETE FROM contact_episodes WHERE id = $1", (survivor,))
    tamper(stores, survivor)
    with stores.connect("memory") as memory:
        assert seal_day(memory, Day.of("2026-11-29", "UTC"), now=AT).changed


def test_a_forget_removes_episodes_from_a_postgres_memory_store(tmp_path, pg_url):
    stores = Stores(tmp_path / "data", database_url=pg_url)
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, source, created_at, updated_at)"
            " VALUES (5, 'pg@x.example', 'Pat Gee', 'sample', $1, $2)",
            (NOW, NOW),
        )
    with stores.connect("memory") as memory:
        append_episodes(memory, [
            {"contact_id": c, "episode_type": "note", "content": f"about {c}", "source": "manual",
             "created_at": "2026-11-29T10:00:00Z"} for c in (5, 6)
        ], now="2026-11-29T15:00:00Z")  # fmt: skip
        seal_day(memory, Day.of("2026-11-29", "UTC"), now=AT)
    done = forget(stores, "pg@x.example", now=NOW, log=lambda _: None)
    assert done.removed["episodes"] == 1
    with stores.connect("memory") as memory:
        assert [r[0] for r in memory.execute("SELECT contact_id FROM contact_episodes")] == [6]
        assert not seal_day(memory, Day.of("2026-11-29", "UTC"), now=AT).changed
        with pytest.raises(Exception, match="append-only"), transaction(memory):
            memory.execute("DELETE FROM contact_episodes")


def test_text_naming_them_is_found_in_any_case_beyond_ascii(stores):
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, source, created_at, updated_at)"
            " VALUES (7, 'zofia@x.example', 'Żofia Ąnder', 'sample', $1, $2)",
            (NOW, NOW),
        )
    with stores.connect("brain") as brain, transaction(brain):
        for key, about in (("a", "page:ŻOFIA ĄNDER"), ("b", "page:Someone Else")):
            brain.execute(
                "INSERT INTO facts (day, key, kind, about, text, importance, sources)"
                " VALUES ('2026-11-29', $1, 'page', $2, 'A page changed.', 2, '[]')",
                (key, about),
            )
    done = forget(stores, "zofia@x.example", now=NOW, log=lambda _: None)
    assert done.removed["brain_rows"] == 1
    with stores.connect("brain") as brain:
        assert [r[0] for r in brain.execute("SELECT key FROM facts")] == ["b"]


def test_a_tombstone_answers_at_once_for_a_person_buried_after_a_question(tmp_path):
    stones = Tombstones.load(tmp_path)
    stones.bury(["amy@quux.example"], ["Amy Quux"], at="2026-11-30T11:00:00Z")
    assert not stones.has(["zed@quux.example"], "Zed Quux")  # asked before Zed was buried
    assert not stones.names_in("met zed quux at the fair")
    stones.bury(["Zed@Quux.example"], ["Zed  Quux"], at="2026-11-30T12:00:00Z")
    assert stones.has_email("zed@quux.example")
    assert stones.names_in("met zed quux at the fair")
    assert Tombstones.load(tmp_path).has(["other@x.example"], "zed quux")


def test_a_namesake_stays_and_the_forgotten_source_record_stays_forgotten(stores):
    """A person is theirs by source id or address, never by name: forgetting one Ada Quux
    leaves the other in the People source file; the forgotten record coming back from the
    source with a new address is skipped, and the tombstone holds only keyed hashes."""
    from company_ai.sample_world.people import SAMPLE_PEOPLE_FILE

    data = stores.data_dir
    records = [
        ContactRecord("Ada Quux", ("ada@one.example",), external_id="people/c1"),
        ContactRecord("Ada Quux", ("ada@two.example",), external_id="people/c2"),
    ]
    with stores.connect("crm") as crm:
        upsert_contacts(crm, records, source="google_people", now=NOW,
                        synced_from="google_people", seen_in="g")  # fmt: skip
    book = {"connections": [
        {"resourceName": f"people/c{n}", "names": [{"displayName": "Ada Quux"}],
         "emailAddresses": [{"value": f"ada@{w}.example"}]}
        for n, w in ((1, "one"), (2, "two"))
    ]}  # fmt: skip
    data.mkdir(parents=True, exist_ok=True)  # a server's stores make no data directory
    (data / SAMPLE_PEOPLE_FILE).write_text(json.dumps(book))
    forget(stores, "ada@one.example", now=NOW, log=lambda _: None)
    left = json.loads((data / SAMPLE_PEOPLE_FILE).read_text())["connections"]
    assert [p["resourceName"] for p in left] == ["people/c2"]  # the namesake is kept whole
    assert left[0]["names"] == [{"displayName": "Ada Quux"}]
    with stores.connect("crm") as crm:
        back = upsert_contacts(
            crm, [ContactRecord("Ada Q.", ("ada@new.example",), external_id="people/c1")],
            source="google_people", now=NOW, synced_from="google_people", seen_in="g",
        )  # fmt: skip
        assert (back.forgotten, back.inserted) == (1, 0)
        assert [r[0] for r in crm.execute("SELECT external_id FROM contacts")] == ["people/c2"]
    for secret in ("people/c1", "ada@one.example", "Ada Quux"):
        assert find_canary(secret, data / TOMBSTONE_FILE) == []


def test_an_alert_naming_them_is_redacted_in_the_ops_store(stores):
    from company_ai.core.ops.alerts import enqueue

    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, source, created_at, updated_at)"
            " VALUES (7, 'zofia@x.example', 'Żofia Ąnder', 'sample', $1, $2)",
            (NOW, NOW),
        )
    with stores.connect("ops") as ops:
        enqueue(ops, "reply:1", "ŻOFIA ĄNDER replied (zofia@x.example)", now=AT)
        enqueue(ops, "reply:2", "Someone Else replied", now=AT)
    done = forget(stores, "zofia@x.example", now=NOW, log=lambda _: None)
    assert done.removed["rows_redacted"] == 1
    with stores.connect("ops") as ops:
        texts = [r[0] for r in ops.execute("SELECT text FROM alerts ORDER BY id")]
    assert texts == ["[forgotten] replied ([forgotten])", "Someone Else replied"]
