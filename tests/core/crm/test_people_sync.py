"""The contact sync driven through the real Google client (`HttpMockSequence` and the
library's bundled People discovery document): pages, resumes, refused tokens, the time
budget, bad answers and bad cursor files."""

import dataclasses
import gc
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from googleapiclient.http import HttpMockSequence

from company_ai.core.crm import SyncError, sync_people
from company_ai.core.crm.people import person_record
from company_ai.core.crm.people_sync import Cursor, load_cursor, pass_state, save_cursor
from company_ai.resources.people import PeopleSource
from tests.fakes import Crash

NOW = "2026-11-30T07:30:00Z"
LATER = "2026-12-01T07:30:00Z"


def person(n: int, *emails: str, **fields) -> dict:
    found = {"resourceName": f"people/c{n}", "names": [{"displayName": f"Person {n}"}]}
    if emails:
        found["emailAddresses"] = [{"value": e} for e in emails]
    return found | fields


def page(people: list[dict], next_page: str | None = None, sync: str | None = None) -> tuple:
    body: dict = {"connections": people, "totalPeople": 999}
    if next_page:
        body["nextPageToken"] = next_page
    if sync:
        body["nextSyncToken"] = sync
    return ({"status": "200"}, json.dumps(body))


def book(pages: int, per_page: int = 3, sync: str = "s1") -> list[tuple]:
    """`pages` pages of `per_page` people each; page k's token is `p<k>`."""
    return [
        page(
            [
                person(k * per_page + i, f"p{k * per_page + i}@acme.example")
                for i in range(per_page)
            ],
            f"p{k + 1}" if k + 1 < pages else None,
            sync if k + 1 == pages else None,
        )
        for k in range(pages)
    ]


def error(status: int, reason: str = "Sync token is expired.") -> tuple:
    body = {"error": {"code": status, "message": reason, "status": "FAILED_PRECONDITION"}}
    return ({"status": str(status)}, json.dumps(body))


class Google:
    """The real People client over a scripted HTTP sequence; the queries it sent."""

    def __init__(self, responses: list[tuple]) -> None:
        self.http = HttpMockSequence(list(responses))  # it pops from the list it is given
        self.source = PeopleSource(backend="google")
        self.source._http = self.http

    def fetch(self):
        return self.source.fetcher()

    def queries(self) -> list[dict]:
        return [
            {k: v[0] for k, v in parse_qs(urlsplit(uri).query).items()}
            for uri, *_ in self.http.request_sequence
        ]


def run(fetch, crm, cursor, *, now=NOW, clock=lambda: 0.0, log=None, **caps):
    notes: list[str] = [] if log is None else log
    report = sync_people(
        fetch, crm, cursor, source="google_people", now=now, clock=clock, log=notes.append, **caps
    )
    return report, notes


@pytest.fixture
def crm(stores):
    with stores.connect("crm") as conn:
        yield conn


@pytest.fixture
def cursor(tmp_path):
    return tmp_path / "data" / "cursors" / "crm_contacts.json"


def at_rest(crm, sync_token: str, source: str = "google_people") -> Cursor:
    """The cursor a complete pass leaves: the sync token, in this store's generation."""
    state = pass_state(crm, source)
    return Cursor(sync_token=sync_token, generation=state.generation, serial=state.serial)


def contacts(crm) -> list[tuple]:
    return [tuple(r) for r in crm.execute("SELECT external_id, email FROM contacts ORDER BY id")]


def test_several_pages_are_stored_and_the_sync_token_is_saved_at_the_end(crm, cursor):
    google = Google(book(3))
    report, _ = run(google.fetch(), crm, cursor)
    assert (report.pages, report.people, report.counts.inserted) == (3, 9, 9)
    assert report.stopped == "complete"
    assert len(contacts(crm)) == 9 and contacts(crm)[0] == ("people/c0", "p0@acme.example")
    first, second, third = google.queries()
    assert first["pageSize"] == "1000" and first["requestSyncToken"] == "true"
    assert set(first["personFields"].split(",")) >= {"names", "emailAddresses", "organizations"}
    assert "pageToken" not in first and (second["pageToken"], third["pageToken"]) == ("p1", "p2")
    assert load_cursor(cursor, "google_people") == (at_rest(crm, "s1"), None)
    state = pass_state(crm, "google_people")
    assert state.serial == 3 and state.complete


def mask(selector: str) -> dict:
    """A `fields=` selector (`a,b/c,d(e,f)`) as a tree: {"a": {}, "b": {"c": {}}, ...}."""
    tree: dict = {}
    depth, start = 0, 0
    for i, char in enumerate(selector + ","):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            part, node = selector[start:i], tree
            start = i + 1
            head, _, inner = part.partition("(")
            *path, leaf = head.split("/")
            for key in path:
                node = node.setdefault(key, {})
            node.setdefault(leaf, {}).update(mask(inner[:-1]) if inner else {})
    return tree


def trimmed(value, tree: dict):
    """`value` as Google's partial response gives it under `tree`."""
    if not tree:
        return value
    if isinstance(value, list):
        return [trimmed(v, tree) for v in value]
    return {k: trimmed(v, tree[k]) for k, v in value.items() if k in tree}


def test_the_partial_response_keeps_every_field_a_record_is_made_of(crm, cursor):
    google = Google(book(1))
    run(google.fetch(), crm, cursor)
    tree = mask(google.queries()[0]["fields"])
    assert {"nextPageToken", "nextSyncToken", "connections"} <= set(tree)
    full = {
        "resourceName": "people/c9",
        "etag": "%EgUBAi43PRoEAQIFByIMVzNrQ2c=",
        "metadata": {"sources": [{"type": "CONTACT", "id": "9"}], "deleted": True},
        "names": [
            {"unstructuredName": "Ada L", "givenName": "Ada", "familyName": "Lovelace"},
            {"displayName": "Ada Lovelace", "metadata": {"primary": True, "source": {}}},
        ],
        "emailAddresses": [
            {"value": "ada@home.example", "type": "home"},
            {"value": "ADA@acme.example", "metadata": {"primary": True}, "formattedType": "Work"},
        ],
        "organizations": [
            {"name": "Old Co", "title": "Intern"},
            {"name": "Acme", "title": "CTO", "metadata": {"primary": True}, "department": "R&D"},
        ],
        "addresses": [{"city": "Oslo", "countryCode": "NO", "metadata": {"primary": True}}],
        "phoneNumbers": [{"value": "+47 1234"}],
    }
    kept = trimmed(full, tree["connections"])
    assert "etag" not in kept and "phoneNumbers" not in kept  # less to send and parse
    assert person_record(kept) == person_record(full)
    assert person_record(kept)[0].deleted and person_record(kept)[0].name == "Ada Lovelace"
    no_display = trimmed({**full, "names": full["names"][:1]}, tree["connections"])
    assert person_record(no_display)[0].name == "Ada L"


def test_an_answer_that_is_not_utf8_is_malformed_and_the_collector_is_back_on(crm, cursor):
    google = Google([book(2)[0], ({"status": "200"}, b'{"connections": [], "x": "\xff"}')])
    report, _ = run(google.fetch(), crm, cursor)
    assert report.stopped == "page refused" and "not a JSON object" in report.refusals[0].reason
    assert gc.isenabled()  # paused for each page only, whatever happens in it
    assert len(contacts(crm)) == 3
    assert load_cursor(cursor, "google_people")[0].page_token == "p1"


def test_a_collector_the_caller_turned_off_stays_off(crm, cursor):
    gc.disable()
    try:
        run(Google(book(1)).fetch(), crm, cursor)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_next_pass_asks_for_changes_with_the_sync_token(crm, cursor):
    run(Google(book(1)).fetch(), crm, cursor)
    changed = person(0, "new@acme.example", "p0@acme.example")
    google = Google([page([changed], sync="s2")])
    report, _ = run(google.fetch(), crm, cursor, now=LATER)
    assert google.queries()[0]["syncToken"] == "s1"
    assert report.counts.updated == 1 and contacts(crm)[0] == ("people/c0", "new@acme.example")
    assert load_cursor(cursor, "google_people")[0].sync_token == "s2"


def test_a_crash_between_pages_resumes_with_nothing_lost_or_duplicated(crm, cursor):
    responses = book(4)
    fetch, calls = Google(responses).fetch(), []

    def dies_before_page_three(page_token, sync_token):
        calls.append(page_token)
        if len(calls) == 3:
            raise Crash("killed between pages 2 and 3")
        return fetch(page_token, sync_token)

    with pytest.raises(Crash):
        run(dies_before_page_three, crm, cursor)
    assert len(contacts(crm)) == 6
    assert load_cursor(cursor, "google_people")[0].page_token == "p2"
    google = Google(responses[2:])
    report, _ = run(google.fetch(), crm, cursor)
    assert google.queries()[0]["pageToken"] == "p2" and report.resumed_at_page == 3
    assert [e for e, _ in contacts(crm)] == [f"people/c{n}" for n in range(12)]


def test_a_crash_after_a_page_is_stored_but_before_its_cursor_is_saved_redoes_it_harmlessly(
    crm, cursor, monkeypatch
):
    import company_ai.core.crm.people_sync as people

    saved = []

    def dies_on_the_second_save(path, source, at):
        if saved:
            raise Crash("killed before the cursor of page 2 was saved")
        saved.append(at)
        people.write_atomic(
            path, json.dumps({"version": 2, "source": source} | at.__dict__).encode()
        )

    monkeypatch.setattr(people, "save_cursor", dies_on_the_second_save)
    with pytest.raises(Crash):
        run(Google(book(3)).fetch(), crm, cursor)
    monkeypatch.undo()
    assert len(contacts(crm)) == 6  # page 2 was committed; the cursor still says page 2
    google = Google(book(3)[1:])
    report, _ = run(google.fetch(), crm, cursor)
    assert google.queries()[0]["pageToken"] == "p1"
    assert (report.counts.unchanged, report.counts.inserted) == (3, 3)
    assert len(contacts(crm)) == 9 and len({e for e, _ in contacts(crm)}) == 9


def test_fifteen_pages_a_run_then_the_next_run_finishes(crm, cursor):
    google = Google(book(17, per_page=1))
    report, _ = run(google.fetch(), crm, cursor)
    assert (report.pages, report.stopped) == (15, "page cap")
    assert load_cursor(cursor, "google_people")[0].page_token == "p15"
    report, _ = run(google.fetch(), crm, cursor)
    assert (report.pages, report.stopped, report.resumed_at_page) == (2, "complete", 16)
    assert len(contacts(crm)) == 17


def test_the_time_budget_stops_a_run_before_a_page_that_would_overrun_it(crm, cursor):
    now = [1000.0]
    fetch = Google(book(8)).fetch()

    def slow(page_token, sync_token):
        now[0] += 100.0  # each page takes 100 s on the injected clock
        return fetch(page_token, sync_token)

    report, _ = run(slow, crm, cursor, clock=lambda: now[0], budget_s=520)
    # Pages start at 0, 100, 200, 300 and 400 s; a sixth would start at 500 s and end past 520.
    assert (report.pages, report.stopped) == (5, "time budget")
    generation = pass_state(crm, "google_people").generation
    assert load_cursor(cursor, "google_people")[0] == Cursor("p5", None, generation, 5, 5)
    report, _ = run(slow, crm, cursor, clock=lambda: now[0], budget_s=520)
    assert (report.pages, report.stopped) == (3, "complete") and len(contacts(crm)) == 24


@pytest.mark.parametrize("status", [410, 400])
def test_an_expired_sync_token_clears_the_cursor_and_restarts_from_page_one(crm, cursor, status):
    run(Google(book(2)).fetch(), crm, cursor)
    google = Google([error(status), *book(2, sync="s9")])
    report, notes = run(google.fetch(), crm, cursor, now=LATER)
    assert [q.get("syncToken") for q in google.queries()] == ["s1", None, None]
    assert "pageToken" not in google.queries()[1]
    assert "sync token" in report.restarted and "restarts from page one" in report.restarted
    assert report.restarted in notes and report.metadata()["restarted"] == report.restarted
    assert (report.stopped, report.counts.unchanged, len(contacts(crm))) == ("complete", 6, 6)
    assert load_cursor(cursor, "google_people")[0] == at_rest(crm, "s9")


@pytest.mark.parametrize("status", [400, 410])
def test_an_invalid_page_token_restarts_the_pass_from_page_one(crm, cursor, status):
    run(Google(book(3)).fetch(), crm, cursor, max_pages=1)  # a pass stops at page 2
    stopped = load_cursor(cursor, "google_people")[0]
    save_cursor(cursor, "google_people", dataclasses.replace(stopped, page_token="stale"))
    google = Google([error(status, "Page token is invalid."), *book(2)])
    report, notes = run(google.fetch(), crm, cursor)
    assert google.queries()[0]["pageToken"] == "stale" and "pageToken" not in google.queries()[1]
    assert "page token" in report.restarted and notes == [report.restarted]
    assert report.resumed_at_page == 0 and report.stopped == "complete"


def test_a_refusal_of_page_one_itself_is_an_error_not_a_loop(crm, cursor):
    google = Google([error(400, "Invalid personFields mask path")])
    with pytest.raises(SyncError, match="refused a request from page one"):
        run(google.fetch(), crm, cursor)
    assert len(google.http.request_sequence) == 1


def test_a_malformed_answer_stops_the_run_and_keeps_what_came_before(crm, cursor):
    pages = book(3)
    broken = [pages[0], ({"status": "200"}, '{"connections": [{"resourceName": "people/c')]
    report, notes = run(Google(broken).fetch(), crm, cursor)
    assert report.stopped == "page refused" and report.metadata()["items_refused"] == 1
    assert "not a JSON object" in report.reasons()["page 2 of pass " + report.refusals[0].key[15:]]
    assert "the next run asks for it again" in notes[-1]
    assert len(contacts(crm)) == 3
    assert load_cursor(cursor, "google_people")[0].page_token == "p1"  # the next run retries it
    not_a_list = [({"status": "200"}, json.dumps({"connections": {"a": 1}}))]
    report, _ = run(Google(not_a_list).fetch(), crm, cursor)
    assert report.reasons() == {report.refusals[0].key: "connections is not a list"}
    report, notes = run(Google(pages[1:]).fetch(), crm, cursor)
    assert report.stopped == "complete" and len(contacts(crm)) == 9
    assert report.swept == 0 and "a page of this pass" in notes[-1]  # not complete: no sweep
    # The same page twice is one item.
    assert crm.execute("SELECT count(*) FROM intake_refusals").fetchone()[0] == 1


def test_two_new_people_sharing_an_address_on_one_page_are_both_stored(crm, cursor):
    # Duplicates in an address book are common; this page used to stop every sync for good.
    shared = [
        person(1, "team@acme.example"),
        person(2, "team@acme.example", "bo@acme.example"),
        person(3, "cy@acme.example", "team@acme.example"),
    ]
    report, _ = run(Google([page(shared, sync="s1")]).fetch(), crm, cursor)
    assert report.stopped == "complete" and report.counts.inserted == 3
    assert report.counts.conflicts == 2  # the shared address stays with the first
    assert contacts(crm) == [
        ("people/c1", "team@acme.example"),
        ("people/c2", "bo@acme.example"),
        ("people/c3", "cy@acme.example"),
    ]
    owners = dict(crm.execute("SELECT email, contact_id FROM contact_emails"))
    assert len(owners) == 3 and owners["team@acme.example"] == 1
    again, _ = run(Google([page(shared, sync="s2")]).fetch(), crm, cursor)  # no change
    assert again.counts.inserted == again.counts.updated == 0 and len(contacts(crm)) == 3


def test_people_that_cannot_be_read_are_skipped_and_named_the_rest_stored(crm, cursor):
    odd = [
        "not a person",
        {"names": [{"displayName": "No resource name"}]},
        {"resourceName": "people/c1"},  # every other field missing
        person(2, "not-an-address", "ok@acme.example"),
        {"resourceName": "people/c3", "names": "Ada", "emailAddresses": [{"value": None}]},
    ]
    report, notes = run(Google([page(odd)]).fetch(), crm, cursor)
    assert report.people == 3 and report.skipped == 4 and len(notes) == 4
    assert "person 1 of a page skipped" in notes[-2] and "resourceName" in notes[-1]
    refused = crm.execute("SELECT item_key, reason FROM intake_refusals ORDER BY item_key")
    assert [(k.split(": ")[-1], r) for k, r in refused] == [
        ("person 1 of a page", "a person must be an object, not str"),
        ("person 2 of a page", "a person without a usable resourceName"),
    ]
    assert report.metadata()["items_refused"] == 2
    rows = crm.execute("SELECT external_id, name, email, company FROM contacts ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("people/c1", "(no name)", None, None),
        ("people/c2", "Person 2", "ok@acme.example", None),
        ("people/c3", "(no name)", None, None),
    ]


def test_a_person_with_five_addresses_keeps_all_one_primary_and_one_with_none_is_kept(crm, cursor):
    five = [f"ada{n}@acme.example" for n in range(5)]
    entries = [{"value": e} for e in five]
    entries[3]["metadata"] = {"primary": True}
    people = [person(1) | {"emailAddresses": entries}, person(2)]
    run(Google([page(people)]).fetch(), crm, cursor)
    emails = crm.execute(
        "SELECT email, is_primary FROM contact_emails WHERE contact_id = 1 ORDER BY email"
    ).fetchall()
    assert [tuple(e) for e in emails] == [(e, int(e == five[3])) for e in five]
    assert contacts(crm) == [("people/c1", five[3]), ("people/c2", None)]
    assert (
        crm.execute("SELECT count(*) FROM contact_emails WHERE contact_id = 2").fetchone()[0] == 0
    )


@pytest.mark.parametrize(
    "damage",
    [
        b"",  # truncated to nothing
        b'{"version": 1, "source": "google_people", "page_tok',  # truncated mid-write
        b"\xff\xfe garbage",
        b'{"version": 1, "source": "google_people", "page_token": 7, "sync_token": null,'
        b' "generation": null, "pages_done": 1}',
        b'["a list"]',
    ],
    ids=["empty", "truncated", "not-utf8", "wrong-types", "not-an-object"],
)
def test_a_corrupt_or_truncated_cursor_restarts_from_page_one_and_says_so(crm, cursor, damage):
    cursor.parent.mkdir(parents=True)
    cursor.write_bytes(damage)
    google = Google(book(2))
    report, notes = run(google.fetch(), crm, cursor)
    assert "pageToken" not in google.queries()[0] and "syncToken" not in google.queries()[0]
    assert "corrupt" in report.restarted and "restarting from page one" in report.restarted
    assert notes[0] == report.restarted and report.stopped == "complete"
    assert load_cursor(cursor, "google_people") == (at_rest(crm, "s1"), None)


def test_a_cursor_of_another_source_is_not_used(crm, cursor):
    save_cursor(cursor, "sample", Cursor("2000", None, NOW, 2))
    google = Google(book(1))
    report, _ = run(google.fetch(), crm, cursor)
    assert (
        "pageToken" not in google.queries()[0] and "belongs to source 'sample'" in report.restarted
    )


def test_deleted_upstream_is_marked_never_removed_and_comes_back(crm, cursor):
    run(Google(book(1)).fetch(), crm, cursor)
    gone = {"resourceName": "people/c1", "metadata": {"deleted": True}}
    report, _ = run(Google([page([gone], sync="s2")]).fetch(), crm, cursor, now=LATER)
    assert report.counts.marked_deleted == 1
    row = crm.execute("SELECT deleted_at, email, name FROM contacts WHERE id = 2").fetchone()
    assert tuple(row) == (LATER, "p1@acme.example", "Person 1")  # marked, nothing lost
    report, _ = run(Google([page([person(1, "p1@acme.example")])]).fetch(), crm, cursor)
    assert report.counts.restored == 1
    assert crm.execute("SELECT deleted_at FROM contacts WHERE id = 2").fetchone()[0] is None


def test_a_complete_full_pass_marks_the_contacts_it_no_longer_returned(crm, cursor):
    run(Google(book(2)).fetch(), crm, cursor)
    cursor.unlink()  # e.g. the sync token expired: the next pass is a full one
    pages = book(2)
    pages[1] = page([person(3, "p3@acme.example")], sync="s2")  # 4 and 5 are gone
    report, notes = run(Google(pages).fetch(), crm, cursor, now=LATER)
    assert report.swept == 2 and "2 contacts no longer returned" in notes[-1]
    deleted = crm.execute("SELECT external_id FROM contacts WHERE deleted_at IS NOT NULL")
    assert [r[0] for r in deleted] == ["people/c4", "people/c5"]
    assert len(contacts(crm)) == 6


def test_a_full_pass_that_returns_nobody_marks_nobody(crm, cursor):
    run(Google(book(1)).fetch(), crm, cursor)
    cursor.unlink()
    report, notes = run(Google([page([], sync="s2")]).fetch(), crm, cursor, now=LATER)
    assert report.swept == 0 and "returned nobody" in notes[-1]
    assert crm.execute("SELECT count(*) FROM contacts WHERE deleted_at IS NULL").fetchone()[0] == 3


def test_names_fall_back_in_order_and_the_primary_entry_is_chosen():

    def name_of(**fields):
        return person_record({"resourceName": "people/c1", **fields})[0].name

    assert name_of(names=[{"givenName": "Ada", "familyName": "Lovelace"}]) == "Ada Lovelace"
    assert name_of(names=[{"unstructuredName": "  Ada  L. "}]) == "Ada L."
    assert name_of(emailAddresses=[{"value": "Ada@Acme.example"}]) == "ada@acme.example"
    assert name_of(organizations=[{"name": "Acme"}]) == "Acme"
    record, _ = person_record(
        {
            "resourceName": "people/c1",
            "names": [
                {"displayName": "Old"},
                {"displayName": "New", "metadata": {"primary": True}},
            ],
            "organizations": [{"name": "Acme", "title": "CTO"}],
            "addresses": [{"city": "Leeds"}, {"city": "Oslo", "metadata": {"primary": True}}],
        }
    )
    assert (record.name, record.company, record.title, record.city) == (
        "New",
        "Acme",
        "CTO",
        "Oslo",
    )


def test_the_google_source_refuses_clearly_without_a_token_and_never_echoes_a_bad_one():
    with pytest.raises(ValueError, match="needs COMPANY_AI_GOOGLE_PEOPLE_TOKEN"):
        PeopleSource(backend="google").fetcher()
    canary = "ya29.secret-canary-token"
    with pytest.raises(ValueError, match="not authorized-user JSON") as refused:
        PeopleSource(backend="google", google_token=f'{{"token": "{canary}"}}').fetcher()
    assert canary not in str(refused.value) and canary not in repr(refused.value.__cause__ or "")


def test_a_pass_restarted_in_the_same_run_does_not_count_what_the_abandoned_one_saw(crm, cursor):
    run(Google(book(2)).fetch(), crm, cursor)  # people c0..c5
    cursor.unlink()  # the next run makes a full pass
    responses = [
        book(2)[0],  # c0, c1, c2, then the page token p1 ...
        error(400, "Page token is invalid."),  # ... is refused: the pass starts again
        page([person(n, f"p{n}@acme.example") for n in (0, 1, 3, 4, 5)], sync="s2"),  # no c2
    ]
    report, _ = run(Google(responses).fetch(), crm, cursor, now=LATER)
    assert report.restarted and report.stopped == "complete"
    deleted = crm.execute("SELECT external_id FROM contacts WHERE deleted_at IS NOT NULL")
    assert [r[0] for r in deleted] == ["people/c2"]


def test_digests_stored_before_records_were_named_tuples_still_match():
    """A store synced by the earlier code keeps its unchanged contacts unchanged: the digest
    is still that of the record's fields as a plain tuple."""
    import hashlib

    from company_ai.core.crm.people import _digest

    record, _ = person_record(person(7, "a@acme.example", "b@acme.example", organizations=[
        {"name": "Acme", "title": "CTO"}]))  # fmt: skip
    fields = ("Person 7", ("a@acme.example", "b@acme.example"), "Acme", "CTO", None,
              "people/c7", False)  # fmt: skip
    earlier = hashlib.blake2b(repr(fields).encode(), digest_size=12).hexdigest()
    assert _digest(record) == earlier
