"""Growth: what the outreach of the trailing weeks brought back, by week and by angle.

The growth analysis runs daily (05:30) over the last `WEEKS` Monday-to-Sunday weeks in
local time up to its own tick, the newest being the week in progress (`complete` False
until its Sunday has passed). For each week, one row for the week as a whole (`angle` =
"(all)") and one per angle, with counts and rates over the messages sent that week before
the tick. An open or a reply counts only when its time is before the tick (`day.end`), so
re-computing a past day later gives the same numbers (a bounce has no time: see below).

The weeks are calendar weeks placed relative to the tick; the only moment read from the
run is `day.end`. Counting is plain Python (the brief and the state export read the
headline without loading pandas); `growth_frame` makes the pandas table the asset shows.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

from company_ai.core.store import column_names, table_exists
from company_ai.core.times import Day, canonical_utc, day_window, local_day

if TYPE_CHECKING:
    import pandas as pd

WEEKS = 8  # the trailing weeks of the analysis, the one in progress included
ALL = "(all)"
NO_ANGLE = "(none)"
COUNTS = ("sent", "opened", "replied", "bounced")
RATES = ("open_rate", "reply_rate", "bounce_rate")
COLUMNS = ("week", "complete", "angle", *COUNTS, *RATES)


@dataclass(frozen=True)
class GrowthRow:
    """One week and angle: counts over the messages sent that week before the tick."""

    week: str  # the week's Monday, YYYY-MM-DD
    complete: bool  # the week ended at or before the tick
    angle: str
    sent: int = 0
    opened: int = 0
    replied: int = 0
    bounced: int = 0

    def rate(self, count: str) -> float | None:
        """`count` over sent, to 4 places; None without messages (never a made-up 0)."""
        return round(getattr(self, count) / self.sent, 4) if self.sent else None

    @property
    def reply_rate(self) -> float | None:
        return self.rate("replied")


@dataclass(frozen=True)
class Headline:
    """Last complete week's figures and the best angle of the trailing weeks."""

    week: str | None  # the Monday of the last complete week (None: no week is complete)
    sent: int
    replies: int
    reply_rate: float | None
    best_angle: str | None  # the highest reply rate over all the weeks (ties: more sent, name)
    best_angle_reply_rate: float | None
    best_angle_sent: int
    weeks: int

    def line(self) -> str:
        if self.week is None:
            last = "no complete week yet"
        else:
            last = f"week of {self.week}: {self.sent} sent, {self.replies} replies"
            last += f" ({_percent(self.reply_rate)})"
        if self.best_angle is None:
            return f"{last}; no angle has been sent in the last {self.weeks} weeks"
        return (
            f"{last}; best angle over {self.weeks} weeks: {self.best_angle}"
            f" ({_percent(self.best_angle_reply_rate)} of {self.best_angle_sent})"
        )

    def as_dict(self) -> dict:
        return {
            "week": self.week,
            "sent": self.sent,
            "replies": self.replies,
            "reply_rate": self.reply_rate,
            "best_angle": self.best_angle,
            "best_angle_reply_rate": self.best_angle_reply_rate,
            "best_angle_sent": self.best_angle_sent,
            "weeks": self.weeks,
        }


@dataclass(frozen=True)
class Growth:
    as_of: str  # the tick: opens and replies before it are counted
    rows: tuple[GrowthRow, ...]  # by week (oldest first), then (all), then angles by name
    weeks: int

    def headline(self) -> Headline:
        complete = [r for r in self.rows if r.complete and r.angle == ALL]
        last = complete[-1] if complete else None
        totals: dict[str, list[int]] = {}
        for row in self.rows:
            if row.angle not in (ALL, NO_ANGLE) and row.sent:
                sent, replied = totals.setdefault(row.angle, [0, 0])
                totals[row.angle] = [sent + row.sent, replied + row.replied]
        best = min(
            totals.items(), key=lambda kv: (-kv[1][1] / kv[1][0], -kv[1][0], kv[0]), default=None
        )
        return Headline(
            week=last.week if last else None,
            sent=last.sent if last else 0,
            replies=last.replied if last else 0,
            reply_rate=last.reply_rate if last else None,
            best_angle=best[0] if best else None,
            best_angle_reply_rate=round(best[1][1] / best[1][0], 4) if best else None,
            best_angle_sent=best[1][0] if best else 0,
            weeks=self.weeks,
        )


def _percent(rate: float | None) -> str:
    return "no rate" if rate is None else f"{rate:.1%}"


def week_starts(day: Day, weeks: int = WEEKS) -> list[date]:
    """The Mondays of the `weeks` local weeks up to the tick `day.end`, oldest first."""
    if weeks < 1:
        raise ValueError(f"weeks must be at least 1, not {weeks}")
    tick_day = date.fromisoformat(local_day(canonical_utc(day.end), day.tz))
    monday = tick_day - timedelta(days=tick_day.weekday())
    return [monday - timedelta(weeks=n) for n in range(weeks - 1, -1, -1)]


def _recorded_events(outreach: sqlite3.Connection) -> str:
    """Each message's sent time, angle and open, answer and bounce times, each by when this
    system recorded it, so a mail dated last week that arrives tonight counts from tonight
    on: an answer or a bounce by its `inbound` row, a first open by `opened_recorded_at`
    (set by the signal or the answer that proved it). An event with no such record (the
    sample's history, a store not migrated yet) counts by its own time."""
    columns = column_names(outreach, "messages")
    if "opened_recorded_at" not in columns or not table_exists(outreach, "inbound"):
        return (
            "SELECT sent_at, angle, opened_at, replied_at,"
            " CASE WHEN bounce_status != 'none' THEN sent_at END FROM messages"
            " WHERE sent_at >= $1 AND sent_at < $2 ORDER BY id"
        )
    return (
        "SELECT m.sent_at, m.angle, coalesce(m.opened_recorded_at, m.opened_at),"
        " coalesce(a.at, m.replied_at),"
        " coalesce(b.at, CASE WHEN m.bounce_status != 'none' THEN m.sent_at END)"
        " FROM messages m"
        " LEFT JOIN (SELECT message_id, min(created_at) AS at FROM inbound"
        "  WHERE kind IN ('reply', 'not_now', 'unsubscribe') GROUP BY message_id) a"
        "  ON a.message_id = m.id"
        " LEFT JOIN (SELECT message_id, min(created_at) AS at FROM inbound"
        "  WHERE kind = 'bounce' GROUP BY message_id) b ON b.message_id = m.id"
        " WHERE m.sent_at >= $1 AND m.sent_at < $2 ORDER BY m.id"
    )


def count_growth(outreach: sqlite3.Connection | None, day: Day, weeks: int = WEEKS) -> Growth:
    """The trailing weeks' counts as of the tick `day.end` (no store or table: zeros)."""
    cutoff = canonical_utc(day.end)
    mondays = week_starts(day, weeks)
    bounds = [day_window(m.isoformat(), day.tz)[0] for m in mondays]
    bounds.append(day_window((mondays[-1] + timedelta(days=7)).isoformat(), day.tz)[0])
    messages: list[tuple] = []
    if outreach is not None and table_exists(outreach, "messages"):
        messages = outreach.execute(_recorded_events(outreach), (bounds[0], cutoff)).fetchall()
    counts: dict[tuple[int, str], list[int]] = {}
    for sent_at, angle, opened_at, replied_at, bounce in messages:
        week = max(i for i, start in enumerate(bounds[:-1]) if start <= sent_at)
        flags = (
            1,
            opened_at is not None and opened_at < cutoff,
            replied_at is not None and replied_at < cutoff,
            bounce is not None and bounce < cutoff,
        )
        for key in ((week, ALL), (week, angle or NO_ANGLE)):
            total = counts.setdefault(key, [0, 0, 0, 0])
            for i, flag in enumerate(flags):
                total[i] += int(flag)
    rows: list[GrowthRow] = []
    for i, monday in enumerate(mondays):
        complete = bounds[i + 1] <= cutoff
        angles = sorted(a for w, a in counts if w == i and a != ALL)
        for angle in [ALL, *angles]:
            c = counts.get((i, angle), [0, 0, 0, 0])
            rows.append(GrowthRow(monday.isoformat(), complete, angle, *c))
    return Growth(cutoff, tuple(rows), weeks)


def growth_frame(growth: Growth) -> pd.DataFrame:
    """The rows as a pandas table with `COLUMNS` (rates NaN without messages)."""
    import pandas as pd  # here, not at import: the brief and the CLI never need it

    records = [
        {
            "week": r.week,
            "complete": r.complete,
            "angle": r.angle,
            **{c: getattr(r, c) for c in COUNTS},
            **{rate: r.rate(c) for rate, c in zip(RATES, COUNTS[1:], strict=True)},
        }
        for r in growth.rows
    ]
    table = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    table = table.astype({c: "int64" for c in COUNTS} | {"complete": "bool"})
    return table.astype({rate: "float64" for rate in RATES})


@dataclass(frozen=True)
class PlainTable:
    """A table as plain values: what Dagster's table metadata is built from."""

    columns: tuple[tuple[str, str], ...]  # (name, type): type is string, int or float
    rows: tuple[dict, ...]


def plain_table(df: pd.DataFrame) -> PlainTable:
    """The frame's columns (name and type) and rows as plain Python values (NaN -> None)."""
    columns = tuple((str(name), _type(df[name])) for name in df.columns)
    rows = tuple(
        {name: _plain(value) for name, value in zip(df.columns, record, strict=True)}
        for record in df.itertuples(index=False, name=None)
    )
    return PlainTable(columns, rows)


def _type(series: pd.Series) -> str:
    import pandas as pd

    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series) or series.name in RATES:
        return "float"
    return "string"


def _plain(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    return value


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of the frame (no third-party formatter needed)."""
    table = plain_table(df)
    numeric = {name for name, kind in table.columns if kind in ("int", "float")}
    header = [name for name, _ in table.columns]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if name in numeric else "---" for name in header) + "|",
    ]
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(name, row[name]) for name in header) + " |")
    return "\n".join(lines) + "\n"


def _cell(column: str, value) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column in RATES:
        return f"{value:.1%}"
    if isinstance(value, float):
        return f"{value:g}"
    text = " ".join(str(value).split())
    return text.replace("\\", "\\\\").replace("|", "\\|")
