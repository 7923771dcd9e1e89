"""What a brain day is and where it is kept: the facts, decisions and graph edges of one
day, each with its importance by the rule of its kind (`rule_importance`; a model's
proposal moves it one step at most, `bound_importance`), and their tables in brain.db
(`write_day` replaces a day in one transaction; `read_day` and `top_items` read it). The
synthesis that makes them is `facts.py`."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from company_ai.core.store import table_exists, transaction
from company_ai.core.times import day_key

MIN_IMPORTANCE, MAX_IMPORTANCE = 1, 5
RULE_IMPORTANCE = {
    "run_failed": 5,
    "check_error": 5,
    "sent": 4,
    "reply": 4,
    "quarantined": 3,
    "writeback_refused": 3,
    "check_warn": 3,
    "recovered": 3,
    "note_deleted": 3,
    "page_withheld": 3,
    "picked": 2,
    "pick_skipped": 2,
    "draft_skipped": 2,
    "drafted": 2,
    "writeback_applied": 2,
    "engagement": 2,
    "page_distilled": 2,
    "run_unfinished": 2,
    "run_ok": 1,
    "check_passed": 1,
}
# Kinds of the runs and checks, which the export lists as "what ran" and "what failed".
RUN_KINDS = ("run_ok", "run_unfinished", "run_failed")
FAILURE_KINDS = ("run_failed", "check_error", "check_warn")


def rule_importance(kind: str) -> int:
    """The importance the rule in this module's docstring gives a kind of fact or decision."""
    try:
        return RULE_IMPORTANCE[kind]
    except KeyError:
        raise ValueError(f"no importance rule for a {kind!r}") from None


def bound_importance(rule_value: int, proposed: int | None) -> int:
    """The rule's importance moved by at most one step towards `proposed`, kept in 1-5."""
    for name, value in (("rule_value", rule_value), ("proposed", proposed)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"importance {name} must be a whole number, not {value!r}")
    if not MIN_IMPORTANCE <= rule_value <= MAX_IMPORTANCE:
        raise ValueError(f"the rule's importance {rule_value} is outside 1-5")
    if proposed is None:
        return rule_value
    step = max(-1, min(1, proposed - rule_value))
    return clamp_importance(rule_value + step)


def clamp_importance(value: int) -> int:
    """`value` kept on the importance scale (1-5)."""
    return max(MIN_IMPORTANCE, min(MAX_IMPORTANCE, value))


# --- the rows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    key: str  # unique within the day, stable across re-runs: run:<id>, reply:<episode id>…
    kind: str
    text: str
    importance: int
    sources: tuple[str, ...]
    about: str | None = None  # the node it is about: contact:7, job:vault_job, page:<title>


@dataclass(frozen=True)
class Decision:
    key: str
    kind: str
    what: str  # what the system chose
    rule: str  # the rule that chose it, in words
    importance: int
    sources: tuple[str, ...]
    about: str | None = None


@dataclass(frozen=True)
class Edge:
    src: str
    relation: str
    dst: str
    importance: int
    sources: tuple[str, ...]


@dataclass(frozen=True)
class BrainDay:
    day: str
    facts: tuple[Fact, ...] = ()
    decisions: tuple[Decision, ...] = ()
    edges: tuple[Edge, ...] = ()
    missing: tuple[str, ...] = ()  # inputs that were not there (a fresh install), in words

    def counts(self) -> dict[str, int]:
        return {
            "facts": len(self.facts),
            "decisions": len(self.decisions),
            "edges": len(self.edges),
        }


# --- brain.db ----------------------------------------------------------------------------


def write_day(conn: sqlite3.Connection, day: str, brain_day: BrainDay) -> dict[str, int]:
    """Replace day D's rows in brain.db with `brain_day`'s, in one transaction."""
    day_key(day)
    if brain_day.day != day:
        raise ValueError(f"the synthesis is of {brain_day.day}, not of {day}; nothing written")
    with transaction(conn):
        for table in ("facts", "decisions", "edges"):
            conn.execute(f"DELETE FROM {table} WHERE day = $1", (day,))
        conn.executemany(
            "INSERT INTO facts (day, key, kind, about, text, importance, sources)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
                (day, f.key, f.kind, f.about, f.text, f.importance, _json(f.sources))
                for f in brain_day.facts
            ],
        )
        conn.executemany(
            "INSERT INTO decisions (day, key, kind, about, what, rule, importance, sources)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                (day, d.key, d.kind, d.about, d.what, d.rule, d.importance, _json(d.sources))
                for d in brain_day.decisions
            ],
        )
        conn.executemany(
            "INSERT INTO edges (day, src, relation, dst, importance, sources)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            [
                (day, e.src, e.relation, e.dst, e.importance, _json(e.sources))
                for e in brain_day.edges
            ],
        )
    return brain_day.counts()


def _json(sources: tuple[str, ...]) -> str:
    return json.dumps(list(sources), ensure_ascii=False)


def read_day(conn: sqlite3.Connection, day: str) -> BrainDay:
    """Day D's rows as stored (an empty day when brain.db has no tables yet)."""
    day_key(day)
    if not table_exists(conn, "facts"):
        return BrainDay(day, missing=("no facts table yet",))

    def rows(sql: str) -> list[sqlite3.Row]:
        return conn.execute(sql, (day,)).fetchall()

    return BrainDay(
        day,
        tuple(
            Fact(r["key"], r["kind"], r["text"], r["importance"], _tuple(r), r["about"])
            for r in rows("SELECT * FROM facts WHERE day = $1 ORDER BY key")
        ),
        tuple(
            Decision(
                r["key"], r["kind"], r["what"], r["rule"], r["importance"], _tuple(r), r["about"]
            )
            for r in rows("SELECT * FROM decisions WHERE day = $1 ORDER BY key")
        ),
        tuple(
            Edge(r["src"], r["relation"], r["dst"], r["importance"], _tuple(r))
            for r in rows("SELECT * FROM edges WHERE day = $1 ORDER BY src, relation, dst")
        ),
    )


def _tuple(row: sqlite3.Row) -> tuple[str, ...]:
    return tuple(json.loads(row["sources"]))


@dataclass(frozen=True)
class TopItem:
    """One of a day's most important facts or decisions, for the morning brief."""

    type: str  # "decision" or "fact"
    key: str
    kind: str
    importance: int
    text: str  # a fact's text, or what a decision chose
    rule: str | None  # a decision's rule; None for a fact
    sources: tuple[str, ...]

    def line(self) -> str:
        because = f" (because {self.rule})" if self.rule else ""
        return f"[{self.importance}] {self.text}{because}"


def top_items(conn: sqlite3.Connection, day: str, limit: int = 10) -> list[TopItem]:
    """Day D's facts and decisions, most important first (decisions before facts on a tie)."""
    day_key(day)
    if limit < 1 or not table_exists(conn, "facts"):
        return []
    rows = conn.execute(
        "SELECT 'decision' AS type, key, kind, importance, what AS text, rule, sources"
        " FROM decisions WHERE day = $1 UNION ALL"
        " SELECT 'fact', key, kind, importance, text, NULL, sources FROM facts WHERE day = $2"
        " ORDER BY importance DESC, type, key LIMIT $3",
        (day, day, limit),
    ).fetchall()
    return [
        TopItem(r["type"], r["key"], r["kind"], r["importance"], r["text"], r["rule"], _tuple(r))
        for r in rows
    ]
