import json
import sqlite3
from datetime import date

import pytest

from company_ai.core.outreach import plain_table, to_markdown, weekly_funnel
from company_ai.core.outreach.funnel import ALL, COLUMNS
from company_ai.core.store import transaction

WEEK = date(2026, 6, 22)  # a Monday in British Summer Time (UTC+1)
TZ = "Europe/London"
CUTOFF = "2026-06-29T04:30:00Z"  # Monday 05:30 local, after the week


def send(outreach, angle, sent_at, opened=None, replied=None, bounce="none"):
    outreach.execute(
        "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at, opened_at,"
        " replied_at, bounce_status) VALUES (1, ?, 's', 'b', ?, ?, ?, ?, ?)",
        (f"t-{sent_at}", angle, sent_at, opened, replied, bounce),
    )


@pytest.fixture
def outreach(stores):
    with stores.connect("outreach") as conn, transaction(conn):
        send(conn, "cost", "2026-06-21T22:59:59Z", "2026-06-22T09:00:00Z")  # Sunday 23:59 local
        send(conn, "cost", "2026-06-21T23:00:00Z", "2026-06-22T09:00:00Z")  # Monday 00:00
        send(conn, "cost", "2026-06-23T10:00:00Z", "2026-06-23T11:00:00Z", "2026-06-24T08:00:00Z")
        send(conn, "cost", "2026-06-24T10:00:00Z", None, None, "hard")
        send(conn, "a | b", "2026-06-25T10:00:00Z", "2026-06-29T05:00:00Z")  # opened after cutoff
        send(conn, None, "2026-06-28T22:59:59Z", None, "2026-06-29T04:30:00Z", "soft")  # Sun 23:59
        send(conn, "cost", "2026-06-28T23:00:00Z", "2026-06-29T01:00:00Z")  # next Monday
    with stores.connect("outreach") as conn:
        yield conn


def rows(df):
    return {r["angle"]: r for r in plain_table(df).rows}


def test_the_week_is_counted_in_local_time_with_opens_and_replies_up_to_the_cutoff(outreach):
    df = weekly_funnel(outreach, WEEK, TZ, CUTOFF)
    assert tuple(df.columns) == COLUMNS
    assert list(df["angle"]) == [ALL, "(none)", "a | b", "cost"]
    by = rows(df)
    assert {k: (r["sent"], r["opened"], r["replied"], r["bounced"]) for k, r in by.items()} == {
        ALL: (5, 2, 2, 2),
        "cost": (3, 2, 1, 1),
        "a | b": (1, 0, 0, 0),  # its open came after the cutoff
        "(none)": (1, 0, 1, 1),  # a reply exactly at the cutoff counts
    }
    assert by[ALL]["open_rate"] == 0.4 and by["cost"]["reply_rate"] == 0.3333
    assert set(df["week"]) == {"2026-06-22"}


def test_a_replay_after_later_opens_and_replies_gives_the_same_numbers(outreach):
    first = weekly_funnel(outreach, WEEK, TZ, CUTOFF)
    with transaction(outreach):
        outreach.execute("UPDATE messages SET replied_at = '2026-07-02T10:00:00Z'")
        outreach.execute(
            "UPDATE messages SET opened_at = '2026-07-01T10:00:00Z' WHERE opened_at IS NULL"
        )
    assert weekly_funnel(outreach, WEEK, TZ, CUTOFF)[["opened"]].equals(first[["opened"]])
    assert list(weekly_funnel(outreach, WEEK, TZ, CUTOFF)["replied"]) == [0, 0, 0, 0]
    assert weekly_funnel(outreach, WEEK, TZ, "2026-07-03T00:00:00Z")["replied"].iloc[0] == 5


def test_a_week_without_messages_or_without_the_table_has_counts_of_zero_and_no_rates(stores):
    with stores.connect("outreach") as conn:
        empty = weekly_funnel(conn, WEEK, TZ, CUTOFF)
    no_table = weekly_funnel(sqlite3.connect(":memory:"), WEEK, TZ, CUTOFF)
    for df in (empty, no_table):
        (only,) = plain_table(df).rows
        assert only == {
            "week": "2026-06-22",
            "angle": ALL,
            "sent": 0,
            "opened": 0,
            "replied": 0,
            "bounced": 0,
            "open_rate": None,
            "reply_rate": None,
            "bounce_rate": None,
        }


def test_the_plain_table_is_typed_and_serialisable(outreach):
    table = plain_table(weekly_funnel(outreach, WEEK, TZ, CUTOFF))
    assert dict(table.columns) == {
        "week": "string",
        "angle": "string",
        "sent": "int",
        "opened": "int",
        "replied": "int",
        "bounced": "int",
        "open_rate": "float",
        "reply_rate": "float",
        "bounce_rate": "float",
    }
    assert all(type(r["sent"]) is int and type(r["open_rate"]) is float for r in table.rows)
    json.dumps(table.rows)


def test_the_markdown_table_escapes_cells_and_shows_rates_as_percentages(outreach):
    text = to_markdown(weekly_funnel(outreach, WEEK, TZ, CUTOFF))
    lines = text.splitlines()
    assert lines[0] == (
        "| week | angle | sent | opened | replied | bounced | open_rate | reply_rate"
        " | bounce_rate |"
    )
    assert lines[1] == "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    assert lines[2] == "| 2026-06-22 | (all) | 5 | 2 | 2 | 2 | 40.0% | 40.0% | 40.0% |"
    assert "| 2026-06-22 | a \\| b | 1 | 0 | 0 | 0 | 0.0% | 0.0% | 0.0% |" in lines
    assert len(lines) == 6
    empty = to_markdown(weekly_funnel(sqlite3.connect(":memory:"), WEEK, TZ, CUTOFF))
    assert empty.splitlines()[2].endswith("| 0 | 0 | 0 | 0 | – | – | – |")


def test_the_funnel_of_the_sample_adds_up(sample_stores):
    with sample_stores.connect("outreach", readonly=True) as conn:
        df = weekly_funnel(conn, date(2026, 11, 16), "UTC", "2026-11-30T05:30:00Z")
        (sent,) = conn.execute(
            "SELECT count(*) FROM messages WHERE sent_at >= '2026-11-16' AND sent_at < '2026-11-23'"
        ).fetchone()
    assert sent > 0 and df["sent"].iloc[0] == sent == df["sent"].iloc[1:].sum()
    for column in ("opened", "replied", "bounced"):
        assert df[column].iloc[0] == df[column].iloc[1:].sum() <= sent


@pytest.mark.parametrize(
    ("cutoff", "message"),
    [
        ("2026-06-29T05:30:00", "has no timezone"),
        ("2026-06-29T05:30:00+01:00", "is not UTC"),
        ("next monday", "not an ISO-8601 timestamp"),
        ("2026-06-01T00:00:00Z", "before the week of 2026-06-22 begins"),
    ],
)
def test_a_bad_cutoff_is_refused(outreach, cutoff, message):
    with pytest.raises(ValueError, match=message):
        weekly_funnel(outreach, WEEK, TZ, cutoff)
