"""Hostile People pages (tests/hostile/people/, each file named by the defect it guards)
through the real `crm_contacts` asset and the real Google client: every good person is
synced, a bad one is refused (recorded in intake_refusals, counted, listed by the WARN
check) or stored with its text cleaned, and no exception escapes."""

import json
import unicodedata
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.store import Stores
from tests.assets.test_crm import MORNING, deleted, google, google_book, sync_google  # noqa: F401

CORPUS = sorted((Path(__file__).parent / "people").glob("*.json"))
UNSAFE = {c for c in map(chr, range(0x20)) if c not in "\t\n\r"} | set(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def stored(stores):
    with stores.connect("crm", readonly=True) as crm:
        rows = crm.execute("SELECT external_id, name, email, company FROM contacts").fetchall()
        refusals = dict(crm.execute("SELECT item_key, reason FROM intake_refusals").fetchall())
    return {r[0]: tuple(r[1:]) for r in rows}, refusals


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_a_hostile_page_refuses_the_bad_person_and_syncs_the_rest(
    path,
    stores,
    clock,
    google,  # noqa: F811 (the fixture imported above)
    monkeypatch,
):
    stores.create_all()
    google([({"status": "200"}, path.read_bytes())])
    with dg.instance_for_test() as instance:
        found = sync_google(stores.data_dir, clock, MORNING, instance)
    contacts, refusals = stored(stores)
    assert contacts["people/g1"][1] == "good1@ok.example"
    assert contacts["people/g2"][1] == "good2@ok.example"
    assert found["items_refused"] == len(refusals) and found["stopped"] == "complete"
    for name, email, company in contacts.values():
        for text in (name, email or "", company or ""):
            assert not set(text) & UNSAFE and "\ud800" not in text and "\udc00" not in text
            assert unicodedata.is_normalized("NFC", text) and len(text) <= 200
    assert all(len(k) <= 500 and len(r) <= 300 for k, r in refusals.items())


def test_the_corpus_refuses_what_it_should(stores, clock, google, monkeypatch):  # noqa: F811
    """Which file's bad person is refused (and why), which is kept cleaned."""
    expected = {
        "name-of-one-megabyte": {"people/h2": "a text of 1,048,576 characters"},
        "number-of-5000-digits": {"person 2 of a page": "usable resourceName"},
        "missing-fields": {"person 2 of a page": "usable", "person 4 of a page": "usable"},
    }
    for path in CORPUS:
        data = stores.data_dir.parent / path.stem
        these = Stores(data)
        these.create_all()
        google([({"status": "200"}, path.read_bytes())])
        with dg.instance_for_test() as instance:
            sync_google(data, clock, MORNING, instance)
        contacts, refusals = stored(these)
        want = expected.get(path.stem, {})
        got = {k.split(": ")[-1]: r for k, r in refusals.items()}
        assert set(got) >= set(want), path.stem
        assert all(want[k] in got[k] for k in want), (path.stem, got)
    # Cleaned, not refused: the stored names say what they say, without the tricks.
    assert stored(Stores(stores.data_dir.parent / "bidi-overrides"))[0]["people/h4"][0] == (
        "evil Namex"
    )
    assert stored(Stores(stores.data_dir.parent / "control-characters"))[0]["people/h3"][:3] == (
        "Ctrl[31mName",
        None,
        "EvilCo",
    )
    assert stored(Stores(stores.data_dir.parent / "lone-surrogate-address"))[0]["people/h1"][
        :2
    ] == ("Lone \ufffd Surrogate", None)


def test_a_page_of_a_million_people_is_one_refused_item_and_deletes_nobody(
    stores,
    clock,
    google,  # noqa: F811 (the fixture imported above)
    monkeypatch,
):
    stores.create_all()
    with dg.instance_for_test() as instance:
        google(google_book(30))
        sync_google(stores.data_dir, clock, MORNING, instance)
        (stores.data_dir / "cursors" / "crm_contacts.json").unlink()  # a full pass again
        huge = {"connections": [{}] * 1_000_000, "nextSyncToken": "s2"}
        google([google_book(30)[0], ({"status": "200"}, json.dumps(huge))])
        found = sync_google(stores.data_dir, clock, MORNING, instance)
    assert found["items_refused"] == 1 and found["stopped"] == "page refused"
    assert found["marked_deleted_absent"] == 0 and deleted(stores) == 0
