import json
import sqlite3

import pytest

from company_ai.core.outreach import count_growth, growth_frame, plain_table, to_markdown
from company_ai.core.outreach.growth import ALL, COLUMNS, week_starts
from company_ai.core.store import transaction
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.times import Day

TZ = "Europe/London"
# Monday 2026-06-29 05:30 local (British Summer Time, UTC+1): the tick of that day's run.
DAY = Day("2026-06-29", TZ, "2026-06-28T04:30:00Z", "2026-06-29T04:30:00Z")
WEEK, THIS_WEEK = "2026-06-22", "2026-06-29"


def send(outreach, angle, sent_at, opened=None, replied=None, bounce="none"):
    outreach.execute(
        "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at, opened_at,"
        " replied_at, bounce_status) VALUES (1, $1, 's', 'b', $2, $3, $4, $5, $6)",
        (f"t-{sent_at}", angle, sent_at, opened, replied, bounce),
    )


@pytest.fixture
def outreach(stores):
    with stores.connect("outreach") as conn, transaction(conn):
        send(conn, "cost", "2026-06-21T22:59:59Z", "2026-06-22T09:00:00Z")  # Sunday 23:59 local
        send(conn, "cost", "2026-06-21T23:00:00Z", "2026-06-22T09:00:00Z")  # Monday 00:00
        send(conn, "cost", "2026-06-23T10:00:00Z", "2026-06-23T11:00:00Z", "2026-06-24T08:00:00Z")
        send(conn, "cost", "2026-06-24T10:00:00Z", None, None, "hard")
        send(conn, "a | b", "2026-06-25T10:00:00Z", "2026-06-29T05:00:00Z")  # opened after tick
        send(conn, None, "2026-06-28T22:59:59Z", None, "2026-06-29T04:29:59Z", "soft")  # Sun 23:59
        send(conn, "cost", "2026-06-28T23:00:00Z", "2026-06-29T01:00:00Z")  # this Monday 00:00
        send(conn, "cost", "2026-06-29T04:30:00Z")  # at the tick: not yet
        send(conn, "old", "2026-05-03T10:00:00Z", None, "2026-05-04T10:00:00Z")  # 9 weeks back
    with stores.connect("outreach") as conn:
        yield conn


def by_week(growth):
    return {(r.week, r.angle): (r.sent, r.opened, r.replied, r.bounced) for r in growth.rows}


def test_the_weeks_are_local_mondays_up_to_the_tick_the_newest_in_progress(outreach):
    growth = count_growth(outreach, DAY)
    assert week_starts(DAY)[0].isoformat() == "2026-05-11" and len(week_starts(DAY)) == 8
    assert [r.week for r in growth.rows if r.angle == ALL] == [
        m.isoformat() for m in week_starts(DAY)
    ]
    assert {r.week: r.complete for r in growth.rows if r.angle == ALL}[WEEK]
    assert not {r.week: r.complete for r in growth.rows if r.angle == ALL}[THIS_WEEK]
    counts = by_week(growth)
    assert counts[(WEEK, ALL)] == (5, 2, 2, 2)
    assert counts[(WEEK, "cost")] == (3, 2, 1, 1)
    assert counts[(WEEK, "a | b")] == (1, 0, 0, 0)  # its open came after the tick
    assert counts[(WEEK, "(none)")] == (1, 0, 1, 1)  # a reply a second before the tick counts
    assert counts[(THIS_WEEK, ALL)] == (1, 1, 0, 0)  # the message sent at the tick is not
    assert counts[("2026-06-15", ALL)] == (1, 1, 0, 0)  # Sunday 23:59 local is last week
    assert not any(angle == "old" for _, angle in counts), "nine weeks back is outside"


def test_the_headline_is_last_complete_week_and_the_best_angle(outreach):
    head = count_growth(outreach, DAY).headline()
    assert (head.week, head.sent, head.replies, head.reply_rate) == (WEEK, 5, 2, 0.4)
    # cost: 1 reply of 5 sent over the weeks (20%); a | b: 0 of 1; (none) is no angle.
    assert (head.best_angle, head.best_angle_reply_rate, head.best_angle_sent) == ("cost", 0.2, 5)
    assert "best angle over 8 weeks: cost (20.0% of 5)" in head.line()
    assert "week of 2026-06-22: 5 sent, 2 replies (40.0%)" in head.line()


def test_a_replay_after_later_opens_and_replies_gives_the_same_numbers(outreach):
    first = count_growth(outreach, DAY)
    with transaction(outreach):
        outreach.execute("UPDATE messages SET replied_at = '2026-07-02T10:00:00Z'")
        outreach.execute(
            "UPDATE messages SET opened_at = '2026-07-01T10:00:00Z' WHERE opened_at IS NULL"
        )
        send(outreach, "cost", "2026-06-30T10:00:00Z")  # sent after the tick
    again = count_growth(outreach, DAY)
    assert [(r.week, r.angle, r.opened) for r in again.rows] == [
        (r.week, r.angle, r.opened) for r in first.rows
    ]
    assert sum(r.replied for r in again.rows) == 0
    assert sum(r.sent for r in again.rows) == sum(r.sent for r in first.rows)
    later = Day("2026-07-03", TZ, "2026-07-02T04:30:00Z", "2026-07-03T04:30:00Z")
    assert by_week(count_growth(outreach, later))[(WEEK, ALL)][2] == 5


def test_no_messages_or_no_table_gives_zero_weeks_and_no_rates(stores):
    with stores.connect("outreach") as conn:
        empty = count_growth(conn, DAY)
    for growth in (
        empty,
        count_growth(sqlite3.connect(factory=StoreConnection, database=":memory:"), DAY),
        count_growth(None, DAY),
    ):
        assert [(r.angle, r.sent, r.reply_rate) for r in growth.rows] == [(ALL, 0, None)] * 8
        head = growth.headline()
        assert (head.week, head.sent, head.reply_rate, head.best_angle) == (WEEK, 0, None, None)
        assert head.line() == (
            "week of 2026-06-22: 0 sent, 0 replies (no rate); "
            "no angle has been sent in the last 8 weeks"
        )


def test_the_table_is_typed_and_serialisable(outreach):
    df = growth_frame(count_growth(outreach, DAY))
    assert tuple(df.columns) == COLUMNS
    table = plain_table(df)
    assert dict(table.columns) == {
        "week": "string",
        "complete": "bool",
        "angle": "string",
        "sent": "int",
        "opened": "int",
        "replied": "int",
        "bounced": "int",
        "open_rate": "float",
        "reply_rate": "float",
        "bounce_rate": "float",
    }
    rows = [r for r in table.rows if r["week"] == WEEK]
    assert all(type(r["sent"]) is int and type(r["open_rate"]) is float for r in rows)
    assert rows[0]["angle"] == ALL and rows[0]["open_rate"] == 0.4
    assert next(r for r in rows if r["angle"] == "cost")["reply_rate"] == 0.3333
    json.dumps(table.rows)


def test_the_markdown_table_escapes_cells_and_shows_rates_as_percentages(outreach):
    lines = to_markdown(growth_frame(count_growth(outreach, DAY))).splitlines()
    assert lines[0] == (
        "| week | complete | angle | sent | opened | replied | bounced | open_rate"
        " | reply_rate | bounce_rate |"
    )
    assert lines[1] == "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
    assert "| 2026-06-22 | yes | (all) | 5 | 2 | 2 | 2 | 40.0% | 40.0% | 40.0% |" in lines
    assert "| 2026-06-22 | yes | a \\| b | 1 | 0 | 0 | 0 | 0.0% | 0.0% | 0.0% |" in lines
    assert "| 2026-06-29 | no | (all) | 1 | 1 | 0 | 0 | 100.0% | 0.0% | 0.0% |" in lines
    assert "| 2026-06-08 | yes | (all) | 0 | 0 | 0 | 0 | – | – | – |" in lines


def test_the_growth_of_the_sample_adds_up(sample_stores):
    day = Day("2026-11-30", "UTC", "2026-11-29T05:30:00Z", "2026-11-30T05:30:00Z")
    with sample_stores.connect("outreach", readonly=True) as conn:
        growth = count_growth(conn, day)
        (sent,) = conn.execute(
            "SELECT count(*) FROM messages WHERE sent_at >= '2026-11-23' AND sent_at < '2026-11-30'"
        ).fetchone()
    rows = [r for r in growth.rows if r.week == "2026-11-23"]
    assert (
        sent > 0 and rows[0].angle == ALL and rows[0].sent == sent == sum(r.sent for r in rows[1:])
    )
    for column in ("opened", "replied", "bounced"):
        total = getattr(rows[0], column)
        assert total == sum(getattr(r, column) for r in rows[1:]) <= sent


@pytest.mark.parametrize(
    ("end", "message"),
    [
        ("2026-06-29T05:30:00", "has no timezone"),
        ("2026-06-29T05:30:00+01:00", "is not UTC"),
        ("next monday", "not an ISO-8601 timestamp"),
    ],
)
def test_a_bad_tick_is_refused(outreach, end, message):
    with pytest.raises(ValueError, match=message):
        count_growth(outreach, Day("2026-06-29", TZ, DAY.start, end))
