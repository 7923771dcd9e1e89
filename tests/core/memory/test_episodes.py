import math
import sqlite3
from datetime import UTC, datetime, timedelta, timezone

import psycopg2
import pytest

from company_ai.core.memory import EpisodeError, append_episodes, audit_day, seal_day
from company_ai.core.store import EPISODE_TYPES, Store, Stores, transaction
from company_ai.core.times import Day
from tests.conftest import episode

SEALED = datetime(2026, 11, 30, 23, 15, tzinfo=UTC)


def count(conn):
    return conn.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]


# Every test here runs on both kinds of memory store: a SQLite file and a PostgreSQL
# database (COMPANY_AI_MEMORY_URL), through the same calls.
@pytest.fixture(params=["sqlite", "postgres"])
def memory(request, tmp_path):
    urls = {}
    if request.param == "postgres":
        urls = {Store.MEMORY: request.getfixturevalue("pg_url")}
    with Stores(tmp_path / "data", urls=urls).connect(Store.MEMORY) as conn:
        yield conn


# What the database itself raises when it refuses a statement, on either store.
REFUSED = (sqlite3.DatabaseError, psycopg2.Error)


def test_a_batch_is_stored_once_however_often_it_is_appended(memory):
    batch = [episode(episode_type=t, content=f"{t} happened") for t in EPISODE_TYPES]
    assert append_episodes(memory, batch).inserted == 7
    again = append_episodes(memory, batch)
    assert (again.inserted, again.duplicates) == (0, 7)
    assert count(memory) == 7


def test_rows_keep_the_designed_shape_and_provenance(memory):
    append_episodes(memory, [episode(source="web:acme.example", confidence=0.7)])
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
    }


def test_a_writer_supplied_natural_key_makes_a_rewrite_idempotent(memory):
    append_episodes(memory, [episode(natural_key="outreach:message:7", content="Sent v1")])
    result = append_episodes(memory, [episode(natural_key="outreach:message:7", content="v2")])
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
        append_episodes(memory, batch)
    assert complaint in str(caught.value)
    assert count(memory) == 0


def test_sql_metacharacters_and_unicode_are_stored_verbatim(memory):
    nasty = [
        "Robert'); DROP TABLE contact_episodes;--",
        "Zoë — 東京 🚀 \u202e reversed",
        '100% of "quotes" and `ticks` \\ backslash; %s ?',
    ]
    append_episodes(memory, [episode(content=c, source=c[:20]) for c in nasty])
    stored = [r[0] for r in memory.execute("SELECT content FROM contact_episodes ORDER BY id")]
    assert stored == nasty


def test_episodes_cannot_be_updated_or_deleted(memory):
    append_episodes(memory, [episode()])
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
            " natural_key, day) VALUES (1, 'gossip', 'x', '2026-11-29T10:00:00Z', 'k', "
            "'2026-11-29')"
        )


def test_day_defaults_to_the_local_date_in_the_partitions_timezone(memory):
    append_episodes(memory, [episode(created_at="2026-07-01T23:30:00Z")], tz="Europe/London")
    assert memory.execute("SELECT day FROM contact_episodes").fetchone()[0] == "2026-07-02"


def test_a_seal_is_stable_until_the_day_changes(memory):
    append_episodes(
        memory,
        [episode(content=f"n{i}") for i in range(3)]
        + [episode(episode_type="research", source="web:x", confidence=0.6)],
    )
    first = seal_day(memory, "2026-11-29", now=SEALED)
    assert (first.episodes, first.by_type, first.changed) == (4, {"note": 3, "research": 1}, False)
    assert first.by_source == {"manual": 3, "web:x": 1}
    assert seal_day(memory, "2026-11-29", now=SEALED).digest == first.digest
    append_episodes(memory, [episode(content="late arrival")])
    later = seal_day(memory, "2026-11-29", now=SEALED)
    assert later.changed and later.episodes == 5
    assert memory.execute("SELECT count(*) FROM day_seals").fetchone()[0] == 1


def test_an_empty_day_seals_to_zero(memory):
    seal = seal_day(memory, "2026-01-01", now=SEALED)
    assert (seal.episodes, seal.last_id) == (0, None)


def _raw_insert(conn, **cols):
    row = {
        "contact_id": 1,
        "episode_type": "note",
        "content": "x",
        "source": "manual",
        "confidence": 1.0,
        "created_at": "2026-11-29T10:00:00Z",
        "day": "2026-11-29",
    } | cols
    names = ", ".join(row)
    conn.execute(
        f"INSERT INTO contact_episodes ({names}) VALUES ({', '.join('?' * len(row))})",
        list(row.values()),
    )


def test_the_audit_passes_a_clean_day_and_names_each_fault(memory):
    append_episodes(memory, [episode(content=f"n{i}") for i in range(3)])
    clean = audit_day(memory, Day.of("2026-11-29", "UTC"))
    assert (clean.duplicates, clean.confidence_out_of_range, clean.outside_day) == ([], [], [])

    # Writers that bypassed validation, as an old script or a hand edit would.
    _raw_insert(memory, content="n0", created_at="2026-11-29T10:00:00Z", natural_key="dup")
    _raw_insert(memory, confidence=1.7, natural_key="conf", content="c1")
    _raw_insert(memory, confidence=None, natural_key="conf-null", content="c2")
    _raw_insert(memory, created_at="2026-11-30T00:00:00Z", natural_key="late", content="l")
    _raw_insert(memory, created_at="29/11/2026 10:00", natural_key="bad-ts", content="b")
    # Inside the day's window as text, but not the canonical form: only the pattern sees it.
    _raw_insert(memory, created_at="2026-11-29T10:00:00+01:00", natural_key="tz", content="t")
    audit = audit_day(memory, Day.of("2026-11-29", "UTC"))
    assert audit.duplicates == [[1, 4]]
    assert audit.confidence_out_of_range == [5, 6]
    assert audit.outside_day == [7, 8, 9]


def test_the_day_window_follows_the_partitions_timezone(memory):
    # 23:30 UTC in July is 00:30 the next day in London: outside a London "29th".
    _raw_insert(memory, created_at="2026-07-29T23:30:00Z", day="2026-07-29", natural_key="a")
    _raw_insert(memory, created_at="2026-07-28T23:30:00Z", day="2026-07-29", natural_key="b")
    assert audit_day(memory, Day.of("2026-07-29", "Europe/London")).outside_day == [1]
    assert audit_day(memory, Day.of("2026-07-29", "UTC")).outside_day == [2]


def test_an_append_inside_another_transaction_is_refused_not_committed_early(memory):
    # On Postgres a nested BEGIN only warns, and the append's COMMIT would end the outer
    # transaction: both stores refuse it instead.
    with pytest.raises(Exception, match="within a transaction"), transaction(memory):
        append_episodes(memory, [episode()])
    assert count(memory) == 0
