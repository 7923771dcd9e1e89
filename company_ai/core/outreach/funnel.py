"""The outreach funnel: of a week's sent messages, how many were opened, replied, bounced.

A week is seven local days from its Monday (any start day works). One row for the week as
a whole (`angle` = "(all)") and one per angle, with counts and rates over the messages sent
that week. An open or a reply counts only when its time is at or before `cutoff_iso` (the
partition's own scheduled time), so re-computing a past week later gives the same numbers.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta

import pandas as pd

from company_ai.core.store import table_exists
from company_ai.core.times import canonical_utc, day_window

ALL = "(all)"
NO_ANGLE = "(none)"
COUNTS = ("sent", "opened", "replied", "bounced")
RATES = ("open_rate", "reply_rate", "bounce_rate")
COLUMNS = ("week", "angle", *COUNTS, *RATES)


def weekly_funnel(
    outreach: sqlite3.Connection, week_start: date, tz: str, cutoff_iso: str
) -> pd.DataFrame:
    """The week's funnel: one row for all angles, then one per angle (by name)."""
    if not isinstance(week_start, date):
        raise TypeError(f"week_start must be a date, not {week_start!r}")
    cutoff = canonical_utc(cutoff_iso)
    start, _ = day_window(week_start.isoformat(), tz)
    end, _ = day_window((week_start + timedelta(days=7)).isoformat(), tz)
    if cutoff < start:
        raise ValueError(f"cutoff {cutoff} is before the week of {week_start} begins ({start})")
    rows: list[tuple] = []
    if table_exists(outreach, "messages"):
        rows = outreach.execute(
            "SELECT angle, opened_at, replied_at, bounce_status FROM messages"
            " WHERE sent_at >= ? AND sent_at < ? ORDER BY id",
            (start, end),
        ).fetchall()
    sent = pd.DataFrame(
        [tuple(r) for r in rows], columns=["angle", "opened_at", "replied_at", "bounce_status"]
    )
    sent["angle"] = sent["angle"].fillna(NO_ANGLE)
    sent["opened"] = sent["opened_at"].notna() & (sent["opened_at"] <= cutoff)
    sent["replied"] = sent["replied_at"].notna() & (sent["replied_at"] <= cutoff)
    # `bounce_status` has no time: a bounce recorded after the cutoff still counts, so a
    # week recomputed after a late bounce can show one more than it did on the night.
    sent["bounced"] = sent["bounce_status"] != "none"
    sent["sent"] = True
    flags = sent[list(COUNTS)].astype(int)
    total = flags.sum().to_frame().T.assign(angle=ALL)
    by_angle = flags.assign(angle=sent["angle"]).groupby("angle", sort=True).sum().reset_index()
    table = pd.concat([total, by_angle], ignore_index=True)
    table["week"] = week_start.isoformat()
    for rate, count in zip(RATES, COUNTS[1:], strict=True):
        # No messages, no rate: NaN (None in `plain_table`) rather than a made-up 0.
        table[rate] = (table[count] / table["sent"]).where(table["sent"] > 0).round(4)
    return table[list(COLUMNS)].astype({c: "int64" for c in COUNTS}).reset_index(drop=True)


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
    if column in RATES:
        return f"{value:.1%}"
    if isinstance(value, float):
        return f"{value:g}"
    text = " ".join(str(value).split())
    return text.replace("\\", "\\\\").replace("|", "\\|")
