"""Engagement drop files: episodes once, opens recorded, bad files moved aside whole."""

import json
from datetime import UTC, datetime

import pytest

from company_ai.core.inbox import plural, take_signals
from company_ai.core.intake import Bounds
from company_ai.core.store import Stores, transaction

ADA = "ada@acme.example"
AT = "2026-11-30T10:02:00Z"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the run's clock


@pytest.fixture
def stores(tmp_path):
    stores = Stores(tmp_path / "data")
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES (1, $1, 'Ada', 10, 'sample', $2, $3)",
            (ADA, AT, AT),
        )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
            " rfc_message_id) VALUES (1, 1, 't-1', 'Hi', 'Body', '2026-11-29T09:00:00Z', '<m1@x>')"
        )
    return stores


def drop(folder, name, data):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def episodes(stores):
    with stores.connect("memory") as memory:
        return memory.execute(
            "SELECT episode_type, content, source, created_at FROM contact_episodes ORDER BY id"
        ).fetchall()


GOOD = {
    "signals": [
        {"id": "v1", "kind": "site_visit", "email": ADA, "at": AT, "pages": ["pricing page"]},
        {"id": "v2", "kind": "site_visit", "email": "ADA@acme.example", "at": AT,
         "pages": ["case studies", "pricing page"]},
        {"kind": "portal_signup", "email": ADA, "at": AT, "detail": "trial workspace"},
        {"id": "s1", "kind": "social", "email": ADA, "at": AT, "network": "LinkedIn",
         "detail": "liked our post on month-end close"},
        {"id": "o1", "kind": "email_open", "email": ADA, "at": AT, "message": "<m1@x>"},
        {"id": "u1", "kind": "site_visit", "email": "nobody@else.example", "at": AT,
         "pages": ["blog"]},
    ]
}  # fmt: skip


def test_signals_become_episodes_once_and_the_file_moves_to_processed(stores, tmp_path):
    folder = tmp_path / "drop"
    drop(folder, "a.json", GOOD)
    logs = []
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=logs.append)
    assert (done.processed, done.signals, done.episodes_written) == (1, 6, 5)
    assert done.unknown_contacts == 1 and "no contact" in logs[0]
    contents = [e["content"] for e in episodes(stores)]
    assert contents[:2] == [
        "Visited pricing page (1 page).",
        "Visited case studies, pricing page (2 pages).",
    ]
    assert contents[2] == "Signed up to the customer portal: trial workspace."
    assert [e["source"] for e in episodes(stores)] == [
        "site",
        "site",
        "portal",
        "linkedin",
        "email",
    ]
    assert (folder / "processed" / "a.json").is_file() and not (folder / "a.json").exists()
    with stores.connect("outreach") as outreach:
        assert outreach.execute("SELECT opened_at FROM messages").fetchone()[0] == AT
    # the same payload dropped again (a webhook retry): nothing new
    drop(folder, "a.json", GOOD)
    again = take_signals(stores, folder, tz="UTC", now=NOW, warn=logs.append)
    assert again.episodes_written == 0 and len(episodes(stores)) == 5
    assert (folder / "processed" / "a.1.json").is_file(), "the earlier file is kept too"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"signals": [{"kind": "site_visit"', "not JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        ({"signals": [{"kind": "site_visit", "email": ADA, "at": AT, "pages": ["x"]},
                      {"kind": "site_visit", "email": ADA, "at": AT}]}, "signal #1: a site_visit"),
        ({"kind": "teleport", "email": ADA, "at": AT}, "unknown kind"),
        ({"kind": "portal_signup", "email": "not-an-address", "at": AT}, "not an email"),
        ({"kind": "portal_signup", "email": ADA, "at": "yesterday"}, "not an ISO-8601"),
        ({"kind": "portal_signup", "email": ADA, "at": "2026-11-30T10:00:00"}, "no timezone"),
        ([1, 2], "must be a JSON object"),
    ],
)  # fmt: skip
def test_a_malformed_file_is_moved_aside_whole_with_its_reason(stores, tmp_path, content, why):
    folder = tmp_path / "drop"
    folder.mkdir()
    path = folder / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    original = path.read_bytes()
    logs = []
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=logs.append)
    assert done.processed == 0 and why in done.rejected["bad.json"]
    assert episodes(stores) == [], "never half-read: the good signal of a bad file is not stored"
    assert (folder / "rejected" / "bad.json").read_bytes() == original, "never lost"
    assert why in (folder / "rejected" / "bad.json.why.txt").read_text()
    assert "moved aside" in logs[0] and why in logs[0]


def test_a_bad_file_does_not_stop_the_good_ones(stores, tmp_path):
    folder = tmp_path / "drop"
    drop(folder, "1.json", "{nope")
    drop(folder, "2.json", GOOD)
    drop(folder, "3.tmp", "{half written")  # not *.json yet: left alone
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert (done.files, done.processed, list(done.rejected)) == (2, 1, ["1.json"])
    assert (folder / "3.tmp").exists()


def test_an_oversized_file_is_rejected_unread(stores, tmp_path, monkeypatch):
    monkeypatch.setattr("company_ai.core.inbox.engagement.BOUNDS", Bounds(max_bytes=100))
    folder = tmp_path / "drop"
    drop(folder, "big.json", GOOD)
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert "over the 100-byte limit" in done.rejected["big.json"]


def test_plurals():
    assert [plural(n, "page") for n in (0, 1, 2)] == ["0 pages", "1 page", "2 pages"]


def portal(**extra):
    return {"kind": "portal_signup", "email": ADA, "at": AT} | extra


def keys_and_contents(stores):
    with stores.connect("memory") as memory:
        query = "SELECT natural_key, content, created_at FROM contact_episodes ORDER BY id"
        return memory.execute(query).fetchall()


def test_a_signals_id_is_the_key_of_what_it_adds(stores, tmp_path):
    folder = tmp_path / "drop"
    drop(folder, "1.json", portal(id="evt-7", detail="first"))
    drop(folder, "2.json", portal(id="evt-7", detail="sent again, changed"))  # a retry
    drop(folder, "3.json", portal(id="evt-8", detail="first"))  # same content, another id
    take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    rows = keys_and_contents(stores)
    assert [r[0] for r in rows] == [
        "engagement:portal_signup:evt-7",
        "engagement:portal_signup:evt-8",
    ]
    assert rows[0][1] == "Signed up to the customer portal: first."


def test_a_signal_without_id_is_keyed_by_its_content_whatever_the_spacing(stores, tmp_path):
    folder = tmp_path / "drop"
    drop(folder, "1.json", json.dumps(portal(detail="trial")))
    drop(
        folder,
        "2.json",
        f'{{ "detail" :"trial",\n\t"at":"{AT}" , "email": "{ADA}","kind":"portal_signup"}}',
    )
    drop(folder, "3.json", json.dumps(portal(detail="trial 2")))
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert (done.processed, done.episodes_written) == (3, 2)
    first, other = (r[0] for r in keys_and_contents(stores))
    assert first.startswith("engagement:portal_signup:h") and first != other


@pytest.mark.parametrize(
    ("claimed", "flag", "counter"),
    [("2035-06-01T09:00:00Z", "in the future", "future_times"),
     ("1989-12-31T23:59:59Z", "before 1990", "times_before_1990")],
)  # fmt: skip
def test_a_time_from_outside_is_bounded_by_the_runs_clock(stores, tmp_path, claimed, flag, counter):
    folder = tmp_path / "drop"
    drop(folder, "a.json", {"signals": [
        portal(id="p1", at=claimed),
        {"id": "o1", "kind": "email_open", "email": ADA, "at": claimed, "message": "<m1@x>"},
        portal(id="p2"),
    ]})  # fmt: skip
    logs = []
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=logs.append)
    assert getattr(done, counter) == 2 and done.processed == 1
    rows = keys_and_contents(stores)
    assert [r[2] for r in rows] == ["2026-11-30T12:00:00Z", "2026-11-30T12:00:00Z", AT]
    assert f"(said it happened at {claimed}, {flag}; kept as received)" in rows[0][1]
    assert rows[2][1] == "Signed up to the customer portal."
    assert any(flag in line for line in logs)
    with stores.connect("outreach") as outreach:
        opened = outreach.execute("SELECT opened_at FROM messages").fetchone()[0]
    assert opened == "2026-11-30T12:00:00Z", "an open is never dated after the run"


def test_a_file_that_cannot_be_read_or_stored_moves_aside_and_the_rest_go_on(
    stores, tmp_path, monkeypatch
):
    from company_ai.core.inbox import engagement

    folder = tmp_path / "drop"
    for name, detail in (("1.json", "unreadable"), ("2.json", "unstorable"), ("3.json", "fine")):
        drop(folder, name, portal(id=name, detail=detail))
    read = engagement.read_regular
    append = engagement.append_episodes

    def failing_read(path, bounds):
        if path.name == "1.json":
            raise PermissionError(13, "Permission denied")
        return read(path, bounds)

    def failing_append(conn, episodes, *, now, tz):
        if "unstorable" in episodes[0]["content"]:
            raise RuntimeError("something nobody expected")
        return append(conn, episodes, now=now, tz=tz)

    monkeypatch.setattr(engagement, "read_regular", failing_read)
    monkeypatch.setattr(engagement, "append_episodes", failing_append)
    done = take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert done.rejected == {
        "1.json": "could not be read (PermissionError)",
        "2.json": "could not be stored (RuntimeError: something nobody expected)",
    }
    assert done.taken.metadata() == {"items_read": 3, "items_refused": 2}
    assert sorted(p.name for p in (folder / "rejected").iterdir()) == [
        "1.json", "1.json.why.txt", "2.json", "2.json.why.txt"
    ]  # fmt: skip
    assert (folder / "processed" / "3.json").is_file()


def test_a_store_that_cannot_be_written_stops_the_run_and_keeps_the_file(
    stores, tmp_path, monkeypatch
):
    import sqlite3

    from company_ai.core.inbox import engagement

    def locked(conn, episodes, *, now, tz):
        raise sqlite3.OperationalError("database is locked")

    folder = tmp_path / "drop"
    drop(folder, "1.json", portal(id="x"))
    monkeypatch.setattr(engagement, "append_episodes", locked)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert (folder / "1.json").is_file() and not (folder / "rejected").exists()


def test_a_fifo_named_json_never_hangs_the_run(stores, tmp_path):
    import os
    import threading

    folder = tmp_path / "drop"
    folder.mkdir()
    os.mkfifo(folder / "pipe.json")
    drop(folder, "z.json", portal(id="after-the-pipe"))
    done = []
    worker = threading.Thread(
        target=lambda: done.append(
            take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=20)
    if worker.is_alive():  # blocked opening the FIFO: give it a writer so the test ends
        os.close(os.open(folder / "pipe.json", os.O_WRONLY | os.O_NONBLOCK))
        worker.join(timeout=20)
        pytest.fail("reading a FIFO blocked the run")
    assert done[0].rejected == {"pipe.json": "not a regular file (a named pipe)"}
    assert (folder / "processed" / "z.json").is_file()


def test_a_rejected_file_never_overwrites_what_is_already_aside(stores, tmp_path):
    folder = tmp_path / "drop"
    (folder / "rejected").mkdir(parents=True)
    (folder / "rejected" / "x.json").symlink_to(tmp_path / "gone")  # dangling, still there
    drop(folder, "x.json", "{bad")
    take_signals(stores, folder, tz="UTC", now=NOW, warn=lambda _: None)
    assert (folder / "rejected" / "x.json").is_symlink()
    assert (folder / "rejected" / "x.1.json").read_text() == "{bad"
