import math
import sqlite3
from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest

from company_ai.core.memory import EpisodeError, append_episodes, audit_day, seal_day
from company_ai.core.store import EPISODE_TYPES, Parameters, Store, Stores, transaction
from company_ai.core.times import Day
from tests.conftest import episode

SEALED = datetime(2026, 11, 30, 23, 15, tzinfo=UTC)
RECORDED = "2026-11-29T12:00:00Z"  # the writers' clock, inside the 29th's window
NEXT_MORNING = "2026-11-30T08:00:00Z"
# The 23:15 memory job's windows (`days.window`): 23:15 the day before to 23:15 the day.
WINDOW = Day("2026-11-29", "UTC", "2026-11-28T23:15:00Z", "2026-11-29T23:15:00Z")
NEXT_WINDOW = Day("2026-11-30", "UTC", "2026-11-29T23:15:00Z", "2026-11-30T23:15:00Z")


def count(conn):
    return conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]


# Every test here runs on both kinds of memory store: a SQLite file and a PostgreSQL
# database (COMPANY_AI_DATABASE_URL), through the same calls.
@pytest.fixture(params=["sqlite", "postgres"])
def memory(request, tmp_path):
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else ""
    with Stores(tmp_path / "data", database_url=url).connect(Store.MEMORY) as conn:
        yield conn


# What the database itself raises when it refuses a statement, on either store.
REFUSED = (sqlite3.DatabaseError, psycopg.Error)


def test_a_batch_is_stored_once_however_often_it_is_appended(memory):
    batch = [episode(episode_type=t, content=f"{t} happened") for t in EPISODE_TYPES]
    assert append_episodes(memory, batch, now=RECORDED).inserted == 7
    again = append_episodes(memory, batch, now=RECORDED)
    assert (again.inserted, again.duplicates) == (0, 7)
    assert count(memory) == 7


def test_rows_keep_the_designed_shape_and_provenance(memory):
    append_episodes(memory, [episode(source="web:acme.example", confidence=0.7)], now=RECORDED)
    row = memory.execute("SELECT * FROM contact_episodes").fetchone()
    assert dict(row) | {"natural_key": None} == {
        "id": 1,
        "contact_id": 1,
        "episode_type": "note",
        "content": "Met at the Leeds meetup.",
        "source": "web:acme.example",
        "confidence": 0.7,
        "created_at": "2026-11-29T10:00:00Z",
        "natural_key": None,
        "day": "2026-11-29",
        "recorded_at": RECORDED,
    }


def test_a_writer_supplied_natural_key_makes_a_rewrite_idempotent(memory):
    append_episodes(
        memory, [episode(natural_key="outreach:message:7", content="Sent v1")], now=RECORDED
    )
    result = append_episodes(
        memory, [episode(natural_key="outreach:message:7", content="v2")], now=RECORDED
    )
    assert result.duplicates == 1
    assert memory.execute("SELECT content FROM contact_episodes").fetchone()[0] == "Sent v1"


DROP = object()  # an override that removes the field


def bad_episode(override):
    return {k: v for k, v in episode(**override).items() if v is not DROP}


# Each override makes the episode invalid, and the complaint says why. Shared with
# test_episode_paths.py, which runs it through the plain path and pydantic alike.
BAD_EPISODES = [
    ({"episode_type": "gossip"}, "episode_type"),
    ({"episode_type": "Note"}, "episode_type"),
    ({"episode_type": None}, "episode_type"),
    ({"content": DROP}, "content: Field required"),
    ({"content": None}, "content: Input should be a valid string"),
    ({"content": ["a list"]}, "content: Input should be a valid string"),
    ({"content": ""}, "must not be empty"),
    ({"content": "  \n\t "}, "must not be empty"),
    ({"content": "x" * 50_001}, "at most 50000"),
    ({"confidence": -0.01}, "greater than or equal to 0"),
    ({"confidence": 1.5}, "less than or equal to 1"),
    ({"confidence": math.nan}, "finite number"),
    ({"confidence": math.inf}, "finite number"),
    ({"confidence": "high"}, "confidence: Input should be a valid number"),
    ({"created_at": "yesterday"}, "not an ISO-8601 timestamp"),
    ({"created_at": "2026-11-29T10:00:00"}, "has no timezone"),
    ({"created_at": "2026-11-29T10:00:00+02:00"}, "is not UTC"),
    ({"created_at": 1764410400}, "ISO-8601 UTC string or datetime"),
    ({"created_at": "2026-02-30T10:00:00Z"}, "not an ISO-8601 timestamp"),
    ({"created_at": datetime(2026, 11, 29, 10)}, "must be a UTC datetime"),
    ({"created_at": datetime(2026, 11, 29, 10, tzinfo=timezone(timedelta(hours=1)))}, "UTC"),
    ({"created_at": DROP}, "created_at: Field required"),
    ({"contact_id": "12"}, "contact_id"),
    ({"contact_id": 0}, "greater than 0"),
    ({"contact_id": True}, "contact_id"),
    ({"contact_id": 1.0}, "contact_id: Input should be a valid integer"),
    ({"contact_id": -5}, "greater than 0"),
    ({"source": ""}, "source"),
    ({"source": 5}, "source: Input should be a valid string"),
    ({"source": "s" * 201}, "source: String should have at most 200 characters"),
    ({"natural_key": ""}, "natural_key: String should have at least 1 character"),
    ({"natural_key": "k" * 301}, "natural_key: String should have at most 300 characters"),
    ({"day": "29/11/2026"}, "day"),
    ({"day": "2026-11-29\n"}, "day"),
    ({"day": "٢٠٢٦-١١-٢٩"}, "day"),
    ({"warmth": 3}, "Extra inputs are not permitted"),
    ({"source": "model:qwen3:8b", "confidence": 1.0}, "must be below 1.0"),
    ({"source": "model:qwen3:8b", "confidence": 1}, "must be below 1.0"),
    ({"source": "model:warmth", "confidence": DROP}, "must be below 1.0"),
]


@pytest.mark.parametrize(("override", "complaint"), BAD_EPISODES)
def test_bad_episodes_are_refused_and_the_whole_batch_is_not_written(memory, override, complaint):
    batch = [episode(content="first"), bad_episode(override), episode(content="third")]
    with pytest.raises(EpisodeError, match="episode #1 is invalid") as caught:
        append_episodes(memory, batch, now=RECORDED)
    assert complaint in str(caught.value)
    assert count(memory) == 0


def test_sql_metacharacters_and_unicode_are_stored_verbatim(memory):
    nasty = [
        "Robert'); DROP TABLE contact_episodes;--",
        "Zoë — 東京 🚀 \u202e reversed",
        '100% of "quotes" and `ticks` \\ backslash; %s ?',
    ]
    append_episodes(memory, [episode(content=c, source=c[:20]) for c in nasty], now=RECORDED)
    stored = [r[0] for r in memory.execute("SELECT content FROM contact_episodes ORDER BY id")]
    assert stored == nasty


def test_episodes_cannot_be_updated_or_deleted(memory):
    append_episodes(memory, [episode()], now=RECORDED)
    with pytest.raises(REFUSED, match="append-only: episodes are never updated"):
        memory.execute("UPDATE contact_episodes SET content = 'rewritten'")
    with pytest.raises(REFUSED, match="append-only: episodes are never deleted"):
        memory.execute("DELETE FROM contact_episodes")
    assert (
        memory.execute("SELECT content FROM contact_episodes").fetchone()[0]
        == "Met at the Leeds meetup."
    )


def test_the_schema_refuses_an_unknown_type_even_without_pydantic(memory):
    with pytest.raises(REFUSED, match="(?i)check"):
        memory.execute(
            "INSERT INTO contact_episodes (contact_id, episode_type, content, created_at,"
            " natural_key, day, recorded_at) VALUES (1, 'gossip', 'x', '2026-11-29T10:00:00Z', 'k',"
            " '2026-11-29', '2026-11-29T10:00:00Z')"
        )


def test_day_defaults_to_the_local_date_in_the_partitions_timezone(memory):
    append_episodes(
        memory, [episode(created_at="2026-07-01T23:30:00Z")], tz="Europe/London", now=RECORDED
    )
    assert memory.execute("SELECT day FROM contact_episodes").fetchone()[0] == "2026-07-02"


def test_a_seal_covers_what_was_recorded_in_its_window_and_a_late_arrival_is_the_next(memory):
    append_episodes(
        memory,
        [episode(content=f"n{i}") for i in range(3)]
        + [episode(episode_type="research", source="web:x", confidence=0.6)],
        now=RECORDED,
    )
    first = seal_day(memory, WINDOW, now=SEALED)
    assert (first.episodes, first.by_type, first.changed) == (4, {"note": 3, "research": 1}, False)
    assert first.by_source == {"manual": 3, "web:x": 1}
    # Dated inside the 29th, recorded the next morning: the 29th's seal does not move.
    append_episodes(memory, [episode(content="late arrival")], now=NEXT_MORNING)
    again = seal_day(memory, WINDOW, now=SEALED + timedelta(days=3))
    assert (again.digest, again.episodes, again.changed) == (first.digest, 4, False)
    late = seal_day(memory, NEXT_WINDOW, now=SEALED)
    assert (late.episodes, late.day) == (1, "2026-11-30")
    stored = memory.execute(
        "SELECT window_start, window_end FROM day_seals WHERE day = '2026-11-29'"
    ).fetchone()
    assert tuple(stored) == (WINDOW.start, WINDOW.end)
    # A row slipped into the window behind the writers' back (a tamper) changes the digest.
    _raw_insert(memory, natural_key="tamper", content="t")
    assert seal_day(memory, WINDOW, now=SEALED).changed


def test_an_empty_day_seals_to_zero(memory):
    seal = seal_day(memory, WINDOW, now=SEALED)
    assert (seal.episodes, seal.last_id) == (0, None)


def test_every_row_carries_when_it_was_recorded_and_keeps_its_first_recording(memory):
    append_episodes(memory, [episode(created_at="2026-11-17T09:00:00Z")], now=NEXT_MORNING)
    append_episodes(memory, [episode(created_at="2026-11-17T09:00:00Z")], now=SEALED)
    rows = memory.execute("SELECT created_at, recorded_at FROM contact_episodes").fetchall()
    assert [tuple(r) for r in rows] == [("2026-11-17T09:00:00Z", "2026-11-30T08:00:00Z")]


@pytest.mark.parametrize(
    ("recorded", "why"),
    [
        ("2026-11-29T12:06:00Z", "after the writer's clock"),  # 6 minutes ahead of it
        ("1989-12-31T23:59:59Z", "before 1990"),
    ],
)
def test_a_recorded_time_in_the_future_or_before_1990_is_refused_naming_the_row(
    memory, recorded, why
):
    batch = [episode(content="fine"), episode(content="odd", recorded_at=recorded)]
    with pytest.raises(EpisodeError, match=rf"episode #1 \(contact 1, .*{why}"):
        append_episodes(memory, batch, now=RECORDED)
    assert count(memory) == 0
    # Within the few minutes two clocks may drift apart, it is taken as said.
    late = [episode(content="odd", recorded_at="2026-11-29T12:04:00Z")]
    assert append_episodes(memory, late, now=RECORDED).inserted == 1


def test_a_writers_clock_before_1990_is_refused(memory):
    with pytest.raises(EpisodeError, match="before 1990"):
        append_episodes(memory, [episode()], now="1970-01-01T00:00:00Z")
    assert count(memory) == 0


def _raw_insert(conn, **cols):
    row = {
        "contact_id": 1,
        "episode_type": "note",
        "content": "x",
        "source": "manual",
        "confidence": 1.0,
        "created_at": "2026-11-29T10:00:00Z",
        "day": "2026-11-29",
        "recorded_at": RECORDED,
    } | cols
    names = ", ".join(row)
    conn.execute(
        f"INSERT INTO contact_episodes ({names}) VALUES ({Parameters().marks(row)})",
        list(row.values()),
    )


def test_the_audit_passes_a_clean_day_and_names_each_fault(memory):
    append_episodes(memory, [episode(content=f"n{i}") for i in range(3)], now=RECORDED)
    clean = audit_day(memory, WINDOW)
    assert (clean.duplicates, clean.confidence_out_of_range, clean.unsound_times) == ([], [], [])

    # Writers that bypassed validation, as an old script or a hand edit would.
    _raw_insert(memory, content="n0", created_at="2026-11-29T10:00:00Z", natural_key="dup")
    _raw_insert(memory, confidence=1.7, natural_key="conf", content="c1")
    _raw_insert(memory, confidence=None, natural_key="conf-null", content="c2")
    # Describes a time after it was recorded: nothing is known before it happens.
    _raw_insert(memory, created_at="2026-11-29T13:00:00Z", natural_key="ahead", content="l")
    _raw_insert(memory, created_at="29/11/2026 10:00", natural_key="bad-ts", content="b")
    # Not the canonical form: only the pattern sees it.
    _raw_insert(memory, created_at="2026-11-29T10:00:00+01:00", natural_key="tz", content="t")
    # A week old, recorded tonight: a late arrival is sound, and is tonight's.
    _raw_insert(memory, created_at="2026-11-22T10:00:00Z", natural_key="old", content="o")
    # Recorded the next day: another window's, not audited here.
    _raw_insert(memory, created_at="bad", recorded_at=NEXT_MORNING, natural_key="nx", content="n")
    audit = audit_day(memory, WINDOW)
    assert audit.duplicates == [[1, 4]]
    assert audit.confidence_out_of_range == [5, 6]
    assert audit.unsound_times == [7, 8, 9]


def test_an_append_inside_another_transaction_is_refused_not_committed_early(memory):
    # On Postgres a nested BEGIN only warns, and the append's COMMIT would end the outer
    # transaction: both stores refuse it instead.
    with pytest.raises(Exception, match="within a transaction"), transaction(memory):
        append_episodes(memory, [episode()], now=RECORDED)
    assert count(memory) == 0
