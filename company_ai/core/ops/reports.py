"""The reports the system sends about itself: the daily digest and the morning brief.

Both are plain text built from plain records: `RunInfo` (core/runs.py, read off Dagster's
run history by the Dagster layer) and `Due` slots from the timetable. The morning brief is a list of
sections (`BRIEF_SECTIONS`); each section returns None when its store or table does not
exist yet, so a store added later joins the brief with one line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from company_ai.core.ops.audit import stored_audit
from company_ai.core.runs import FAILED, RunInfo
from company_ai.core.store import Parameters, Store, StoreError, Stores, table_exists
from company_ai.core.times import Day, to_iso
from company_ai.core.timetable import Due

DARK = "If this digest does not arrive one morning, the scheduler is dark: check dagster-daemon."


@dataclass
class Digest:
    since: datetime
    until: datetime
    ran: list[RunInfo] = field(default_factory=list)
    failed: list[RunInfo] = field(default_factory=list)
    missed: list[Due] = field(default_factory=list)
    not_taken: list[Due] = field(default_factory=list)
    declined: list[RunInfo] = field(default_factory=list)  # capture runs that did nothing
    recovered: list[RunInfo] = field(default_factory=list)
    warnings: dict[str, int] = field(default_factory=dict)  # failed WARN checks, counted
    # Failed ERROR checks, counted: each was alerted when it failed (sensors/alerts.py);
    # the digest lists them again so a morning's reading shows what is still wrong.
    check_errors: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        lines = [
            f"company_ai digest {to_iso(self.since)} .. {to_iso(self.until)}",
            f"ran {len(self.ran)} · failed {len(self.failed)} · missed {len(self.missed)}"
            f" · not taken {len(self.not_taken) + len(self.declined)}"
            f" · recovered {len(self.recovered)}"
            f" · warnings {sum(self.warnings.values())}",
        ]
        if self.failed:
            lines.append("ERROR: failed:")
            lines += [f"- {r.label()}: {r.error or r.status}" for r in self.failed]
        if self.check_errors:
            lines.append("ERROR: checks failed (each alerted when it failed):")
            lines += [f"- {name}: {count}" for name, count in sorted(self.check_errors.items())]
        if self.missed:
            lines.append("Missed (no run yet):")
            lines += [f"- {d.job} {d.partition} (due {to_iso(d.tick)})" for d in self.missed]
        if self.not_taken or self.declined:
            lines.append("Not taken (a capture records its own moment; it is never run late):")
            lines += [
                f"- {d.job} {d.partition} (due {to_iso(d.tick)}): not taken, its tick passed "
                "with no run"
                for d in self.not_taken
            ]
            lines += [f"- {r.label()}: not taken, {r.not_taken}" for r in self.declined]
        if self.recovered:
            lines.append("Recovered by catch-up:")
            lines += [f"- {r.label()}, attempt {r.catchup_attempt}" for r in self.recovered]
        if self.warnings:
            lines.append("WARN (counted here, not alerted one by one):")
            lines += [f"- {name}: {count}" for name, count in sorted(self.warnings.items())]
        if self.ran:
            lines.append("Ran:")
            lines += [f"- {r.label()}" for r in self.ran]
        lines.append(DARK)
        return "\n".join(lines)


def build_digest(
    runs: list[RunInfo],
    missed: list[Due],
    since: datetime,
    until: datetime,
    *,
    not_taken: Sequence[Due] = (),
) -> Digest:
    """What ran, failed, was missed (or not taken) and recovered; `runs` are the window's
    runs, with the status they had at `until`."""
    warnings: dict[str, int] = {}
    check_errors: dict[str, int] = {}
    for run in runs:
        for check in run.checks:
            if not check.passed:
                counted = warnings if check.severity == "WARN" else check_errors
                key = f"{check.asset} {check.name}"
                counted[key] = counted.get(key, 0) + 1
    return Digest(
        since,
        until,
        ran=[r for r in runs if r.status == "SUCCESS" and not r.not_taken],
        failed=[r for r in runs if r.status in FAILED],
        missed=sorted(missed),
        not_taken=sorted(not_taken),
        declined=[r for r in runs if r.status == "SUCCESS" and r.not_taken],
        recovered=[r for r in runs if r.status == "SUCCESS" and r.catchup_attempt],
        warnings=warnings,
        check_errors=check_errors,
    )


@dataclass(frozen=True)
class BriefInput:
    stores: Stores
    since: datetime
    until: datetime
    runs: list[RunInfo]
    stale_after_days: int = 90  # recall pages whose status/goal notes are older: review
    brain_day: str | None = None  # the day the night's brain synthesis covered
    growth_day: Day | None = None  # the growth analysis' last window before the brief


Section = Callable[[BriefInput], tuple[str, list[str]] | None]


def runs_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    ok = sum(r.status == "SUCCESS" for r in brief.runs)
    failed = [r for r in brief.runs if r.status in FAILED]
    other = len(brief.runs) - ok - len(failed)
    lines = [f"{ok} succeeded, {len(failed)} failed, {other} in flight or queued"]
    lines += [f"FAILED {r.label()}: {r.error or r.status}" for r in failed]
    return "Runs", lines


def query(stores: Stores, domain: Store, sql: str, values: dict) -> list[sqlite3.Row] | None:
    """Rows from a store, or None when the store, table or column does not exist (yet).
    `sql` names the values it uses as `{since}`; each becomes a parameter of its own."""
    try:
        conn = stores.reader(domain)
    except StoreError:
        return None
    if conn is None:
        return None
    try:
        args = Parameters()
        marks = {name: args.mark(v) for name, v in values.items() if f"{{{name}}}" in sql}
        return conn.execute(sql.format(**marks), args).fetchall()
    except conn.DatabaseError as exc:
        message = str(exc)
        # SQLite's words, and PostgreSQL's codes undefined_table and undefined_column.
        if "no such table" in message or "no such column" in message:
            return None
        if getattr(exc, "sqlstate", None) in ("42P01", "42703"):
            return None
        raise
    finally:
        conn.close()


def count_section(title: str, domain: Store, table: str, where: str = "1") -> Section:
    """A section that counts rows of `table` matching `where` (may use {since} / {until})."""

    def section(brief: BriefInput) -> tuple[str, list[str]] | None:
        rows = query(
            brief.stores,
            domain,
            f'SELECT count(*) FROM "{table}" WHERE {where}',
            {"since": to_iso(brief.since), "until": to_iso(brief.until)},
        )
        return None if rows is None else (title, [str(rows[0][0])])

    return section


def replies_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    rows = query(
        brief.stores,
        Store.OUTREACH,
        "SELECT subject, replied_at FROM messages WHERE replied_at >= {since}"
        " AND replied_at < {until} ORDER BY replied_at",
        {"since": to_iso(brief.since), "until": to_iso(brief.until)},
    )
    if rows is None:
        return None
    return "Replies", [f"{len(rows)} new"] + [f"{r[1]} re: {r[0]}" for r in rows[:10]]


BRAIN_ITEMS = 5


def brain_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    """The night's most important facts and decisions (brain.db, the day it covered)."""
    from company_ai.core.brain import top_items

    if brief.brain_day is None:
        return None
    conn = brief.stores.reader(Store.BRAIN)  # None: no store (on PostgreSQL: no schema) yet
    if conn is None:
        return None
    try:
        items = top_items(conn, brief.brain_day, BRAIN_ITEMS)
    finally:
        conn.close()
    title = f"The night's brain ({brief.brain_day}), most important first"
    if not items:
        return title, ["no facts: the brain job has not covered that day"]
    return title, [item.line() for item in items]


def growth_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    """The growth analysis' headline as its last tick before the brief saw it: last complete
    week's sent, replies and reply rate, and the best angle of the trailing weeks."""
    from company_ai.core.outreach import count_growth

    if brief.growth_day is None or not brief.stores.exists(Store.OUTREACH):
        return None
    with brief.stores.connect(Store.OUTREACH, readonly=True) as conn:
        growth = count_growth(conn, brief.growth_day)
    return f"Outreach growth (as of {growth.as_of})", [growth.headline().line()]


def audit_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    """The latest CRM audit recorded before the brief's tick (`crm_audit`, ops.db)."""
    stored = stored_audit(brief.stores, before=to_iso(brief.until))
    if stored is None:
        return "CRM audit", ["none recorded before this brief (crm_audit runs at 05:45)"]
    return f"CRM audit (as of {stored.recorded_at})", stored.audit.lines()


def stale_pages_section(brief: BriefInput) -> tuple[str, list[str]] | None:
    """Recall pages to review: status or goal lines from notes untouched too long."""
    from company_ai.core.recall import count_stale, stale_pages

    conn = brief.stores.reader(Store.RECALL)  # None: no store (on PostgreSQL: no schema) yet
    if conn is None:
        return None
    try:
        if not table_exists(conn, "entities"):
            return None
        # Counted by index, and only the ten oldest read: not every stale page's lines.
        count = count_stale(conn, brief.until, brief.stale_after_days)
        pages = stale_pages(conn, brief.until, brief.stale_after_days, limit=10)
    finally:
        conn.close()
    return "Stale recall pages to review", [f"{count}"] + [
        f"{p.title} ({p.derived_from}, untouched {p.age_days} days)" for p in pages
    ]


BRIEF_SECTIONS: list[Section] = [
    runs_section,
    brain_section,
    replies_section,
    count_section(
        "Drafts waiting to be sent",
        Store.OUTREACH,
        "drafts",
        "created_at <= {until} AND status IN ('ready', 'sending', 'sent') AND NOT EXISTS"
        " (SELECT 1 FROM messages m WHERE m.id = drafts.message_id AND m.sent_at <= {until})",
    ),
    count_section(
        "Drafts quarantined by the fabrication gate",
        Store.OUTREACH,
        "drafts",
        "status = 'quarantined' AND created_at > {since} AND created_at <= {until}",
    ),
    stale_pages_section,
    growth_section,
    audit_section,
]


def build_brief(brief: BriefInput, sections: list[Section] | None = None) -> str:
    lines = [f"company_ai morning brief {to_iso(brief.since)} .. {to_iso(brief.until)}"]
    for section in sections if sections is not None else BRIEF_SECTIONS:
        found = section(brief)
        if found is not None:
            title, body = found
            lines.append(f"{title}:")
            lines += [f"  {line}" for line in body]
    return "\n".join(lines)
