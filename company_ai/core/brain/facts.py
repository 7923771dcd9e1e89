"""The night's own memory: one day's facts, decisions and graph edges (brain.db).

`synthesize_day` reads the stored inputs of one day D's window (`day.start`..`day.end`, the
23:30 tick before D's to D's) and returns a `BrainDay`. Every input is selected by when this
system recorded it, never by the time it describes, and read as it stood at the window's
end, so re-synthesising D at any later time gives the same rows, and a late arrival (a reply
dated last week, a signal stamped two days ago) belongs to the night it was recorded in:
  - the Dagster runs it is given (the Dagster layer reads them off the run history): each
    run's job, partition, duration, status and error, its check results, and the catch-up
    sensor's recoveries (runs whose `catchup_attempt` is set). A run is reported by its
    job's name alone, so a job that no longer exists is still reported;
  - the outreach recorded in the window (outreach.db, research picks and drafts by their
    `created_at`, which this system sets when it writes them): who was picked for research
    and why (the selection rule of core/outreach/research.py), who was skipped and why, the
    CRM corrections applied and refused, the drafts written, those quarantined with the
    claims the gate could not support, those skipped, and those sent. A pick's or draft's
    status is updated in place, so it is read as of the window's end: a pick's outcome
    only if its `updated_at` is before it, a draft as sent only if its message's `sent_at`
    (our own send moment) is, as skipped only if it was skipped before it;
  - the replies (`response` episodes) and engagement (`engagement` episodes) recorded in
    the window (memory.db, `contact_episodes.recorded_at`);
  - the vault changes recorded in the window: pages distilled or withheld and pages
    removed (their note deleted, made private or retitled), from recall.db's append-only
    `page_log` (never `pages`, which a later distillation replaces).
It is a pure function of those inputs: no clock is read and every query and list is
ordered, so the same stored rows give the same rows. One input is read as it is now: a
contact's name and company (crm.db keeps no history). A store or table that does not
exist yet (a fresh install) gives a partial day, and `BrainDay.missing` says what was not
there.

Edges (src, relation, dst):
  contact:<id>  works_at                 company:<name>   (the company as the CRM says now)
  contact:<id>  in_thread / replied_in   thread:<id>      (a draft of D / a reply on D)
  job:<name>    ran_for / failed_for / started_for / recovered   partition:<key>
  page:<title>  part_of / depends_on / relates_to / maintains     page:<title>

Importance (1-5) is the rule's, by kind (`rule_importance`):
  5  a run that failed or was cancelled; a failed check of severity ERROR
  4  a message sent; a reply received
  3  a draft quarantined by the fabrication gate; a CRM correction refused; a failed WARN
     check; a missed slot recovered by the catch-up sensor; a note's page removed from recall;
     a recall page withheld by the distiller's fabrication check
  2  a research pick; a pick or draft skipped; a draft written; a CRM correction applied;
     a contact's engagement; a recall page distilled; a run not finished yet
  1  a routine successful run; a check that passed
An edge takes the importance of the row that made it (a contact's company edge: the
contact's most important row); an edge made again, by a job run twice for one partition,
gathers the sources of both. A model may propose
another importance for a fact or decision; `bound_importance` lets the proposal move the
rule's value by one step at most and never outside 1-5: the model proposes, code bounds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, field, replace

from company_ai.core.brain.rows import (
    BrainDay,
    Decision,
    Edge,
    Fact,
    bound_importance,
    rule_importance,
)
from company_ai.core.gate import explain_stored
from company_ai.core.outreach import RECENT_DAYS, RESEARCH_COOLDOWN_DAYS, WRITEBACK_COLUMNS
from company_ai.core.runs import FAILED, RunInfo
from company_ai.core.store import Parameters, Store, Stores, table_exists
from company_ai.core.times import Day, day_key, parse_utc

_CHUNK = 500  # ids per `IN (...)` query


@dataclass
class _Day:
    """Collects a day's rows; keys are unique, and an edge seen twice merges its sources."""

    day: str
    facts: dict[str, Fact] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], Edge] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def fact(self, kind: str, key: str, text: str, sources: Iterable[str], about=None) -> None:
        self.facts.setdefault(
            key, Fact(key, kind, text, rule_importance(kind), _sorted(sources), about)
        )

    def decision(
        self, kind: str, key: str, what: str, rule: str, sources: Iterable[str], about=None
    ) -> None:
        self.decisions.setdefault(
            key, Decision(key, kind, what, rule, rule_importance(kind), _sorted(sources), about)
        )

    def edge(self, src: str, relation: str, dst: str, kind: str, sources: Iterable[str]) -> None:
        old = self.edges.get((src, relation, dst))
        importance = old.importance if old else rule_importance(kind)
        merged = _sorted([*(old.sources if old else ()), *sources])
        self.edges[(src, relation, dst)] = Edge(src, relation, dst, importance, merged)

    def result(self, proposals: Mapping[str, int]) -> BrainDay:
        def bounded(row):
            if row.key not in proposals:
                return row
            return replace(row, importance=bound_importance(row.importance, proposals[row.key]))

        return BrainDay(
            self.day,
            tuple(bounded(self.facts[k]) for k in sorted(self.facts)),
            tuple(bounded(self.decisions[k]) for k in sorted(self.decisions)),
            tuple(self.edges[k] for k in sorted(self.edges)),
            tuple(self.missing),
        )


def _sorted(sources: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(sources)))


# --- synthesis ---------------------------------------------------------------------------


def synthesize_day(
    stores: Stores,
    day: Day,
    runs: list[RunInfo],
    proposals: Mapping[str, int] | None = None,
) -> BrainDay:
    """Day D's facts, decisions and edges from its stored inputs (see the module docstring).

    `runs` are D's Dagster runs as the Dagster layer read them; `proposals` are a model's
    importance proposals by fact or decision key, bounded by `bound_importance` (keys
    that are not the day's are ignored).
    """
    day_key(day.key)
    brain = _Day(day.key)
    _add_runs(brain, runs)
    window = (day.start, day.end)
    with _reader(stores, Store.MEMORY, brain.missing) as memory:
        episodes = _rows(
            memory,
            "contact_episodes",
            brain.missing,
            "SELECT id, contact_id, episode_type, content, created_at FROM contact_episodes"
            " WHERE recorded_at >= $1 AND recorded_at < $2"
            " AND episode_type IN ('response', 'engagement') ORDER BY id",
            window,
        )
    with _reader(stores, Store.OUTREACH, brain.missing) as outreach:
        picks = [
            _pick_as_of(p, day.end)
            for p in _rows(
                outreach,
                "research_picks",
                brain.missing,
                "SELECT * FROM research_picks WHERE created_at >= $1 AND created_at < $2"
                " ORDER BY day, rank, contact_id",
                window,
            )
        ]
        written = _rows(
            outreach,
            "drafts",
            brain.missing,
            "SELECT * FROM drafts WHERE created_at >= $1 AND created_at < $2 ORDER BY id",
            window,
        )
        sent = _sent_by(outreach, written, day.end)
        drafts = [_draft_as_of(d, sent, day.end) for d in written]
        last_written = _last_written(outreach, picks)
        threads = _reply_threads(outreach, episodes, day)
    contact_ids = {r["contact_id"] for rows in (picks, drafts, episodes) for r in rows}
    with _reader(stores, Store.CRM, brain.missing) as crm:
        contacts = _contacts(crm, contact_ids, brain.missing)
    _add_picks(brain, picks, contacts, last_written)
    _add_drafts(brain, drafts, contacts)
    _add_episodes(brain, episodes, contacts, threads)
    _add_companies(brain, contacts)
    with _reader(stores, Store.RECALL, brain.missing) as recall:
        # The last event of each title in the window: a page distilled twice in one night is
        # reported as it was left.
        logged = _rows(
            recall,
            "page_log",
            brain.missing,
            "SELECT l.title, l.event, l.note_path, l.problems, l.page FROM page_log l"
            " WHERE l.id = (SELECT max(id) FROM page_log m WHERE m.title = l.title"
            "  AND m.recorded_at >= $1 AND m.recorded_at < $2) ORDER BY l.title",
            window,
        )
    _add_pages(brain, [p for p in logged if p["event"] != "removed"])
    _add_removed_pages(brain, [p for p in logged if p["event"] == "removed"])
    return brain.result(proposals or {})


def _pick_as_of(pick: sqlite3.Row, end: str) -> dict:
    """A research pick as it stood at `end`: its outcome (status, reason, findings, CRM
    corrections) only if it was recorded before then, else picked and not yet researched."""
    row = dict(pick)
    if row["updated_at"] >= end:
        row.update(status="picked", reason=None, findings=None, writeback=None)
    return row


def _sent_by(outreach, drafts: list[sqlite3.Row], end: str) -> dict[int, int]:
    """Draft id -> the id of its message, for the drafts whose message was sent before `end`."""
    found: dict[int, int] = {}
    if outreach is None or not drafts or not table_exists(outreach, "messages"):
        return found
    for chunk in id_chunks(d["id"] for d in drafts):
        for draft_id, message_id in outreach.execute(
            "SELECT draft_id, id FROM messages WHERE sent_at < $1"
            f" AND draft_id IN ({_in(chunk, first=2)})",
            [end, *chunk],
        ):
            found[draft_id] = message_id
    return found


def _draft_as_of(draft: sqlite3.Row, sent: Mapping[int, int], end: str) -> dict:
    """A draft as it stood at the window's end: sent if its message went before then (our
    own send time), skipped if it was skipped before then (`updated_at`: a skip is the last
    change a draft sees), quarantined as written (the gate's verdict is never changed),
    else written and not yet sent."""
    row = dict(draft)
    if draft["id"] in sent:
        row.update(status="sent", message_id=sent[draft["id"]])
    elif row["status"] == "quarantined" or row["status"] == "skipped" and row["updated_at"] < end:
        pass
    else:
        row.update(status="ready", message_id=None, reason=None)
    return row


@contextmanager
def _reader(
    stores: Stores, domain: Store, missing: list[str]
) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection, or None (and a note) when the store does not exist yet."""
    conn = stores.reader(domain)
    if conn is None:
        missing.append(f"no {domain} store yet ({stores.path(domain)})")
    with closing(conn) if conn else nullcontext() as opened:
        yield opened


def _rows(
    conn: sqlite3.Connection | None, table: str, missing: list[str], sql: str, params: tuple
) -> list[sqlite3.Row]:
    if conn is None:
        return []
    if not table_exists(conn, table):
        missing.append(f"no {table} table yet")
        return []
    return conn.execute(sql, params).fetchall()


def id_chunks(ids: Iterable[int]) -> Iterator[list[int]]:
    """Sorted distinct ids in lists short enough for one `IN (...)` query each."""
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


def _in(ids: list[int], first: int = 1) -> str:
    """The placeholders of `ids`, numbered from `first` (the parameters before them)."""
    return Parameters([None] * (first - 1)).marks(ids)


def _contacts(crm, ids: set[int], missing: list[str]) -> dict[int, sqlite3.Row]:
    if crm is None or not ids:
        return {}
    if not table_exists(crm, "contacts"):
        missing.append("no contacts table yet")
        return {}
    found = {}
    for chunk in id_chunks(ids):
        for row in crm.execute(
            f"SELECT id, name, company, warmth FROM contacts WHERE id IN ({_in(chunk)})", chunk
        ):
            found[row["id"]] = row
    return found


def _last_written(outreach, picks: list[dict]) -> dict[int, str]:
    """When each picked contact was last written to before the pick was made."""
    if outreach is None or not picks or not table_exists(outreach, "messages"):
        return {}
    found = {}
    for pick in picks:
        (last,) = outreach.execute(
            "SELECT max(sent_at) FROM messages WHERE contact_id = $1 AND sent_at < $2",
            (pick["contact_id"], pick["created_at"]),
        ).fetchone()
        if last:
            found[pick["contact_id"]] = last
    return found


def _reply_threads(outreach, episodes: list[sqlite3.Row], day: Day) -> dict[int, str]:
    """Reply episode id -> the thread of the contact's last message sent before the reply."""
    replies = [e for e in episodes if e["episode_type"] == "response"]
    if outreach is None or not replies or not table_exists(outreach, "messages"):
        return {}
    sent: dict[int, list[tuple[str, str]]] = {}
    for chunk in id_chunks(e["contact_id"] for e in replies):
        for contact_id, thread_id, sent_at in outreach.execute(
            "SELECT contact_id, thread_id, sent_at FROM messages WHERE sent_at < $1"
            f" AND contact_id IN ({_in(chunk, first=2)}) ORDER BY contact_id, sent_at, id",
            [day.end, *chunk],
        ):
            sent.setdefault(contact_id, []).append((sent_at, thread_id))
    threads = {}
    for reply in replies:
        before = [t for at, t in sent.get(reply["contact_id"], []) if at <= reply["created_at"]]
        if before:
            threads[reply["id"]] = before[-1]
    return threads


def _label(contacts: Mapping[int, sqlite3.Row], contact_id: int) -> str:
    contact = contacts.get(contact_id)
    if contact is None:
        return f"contact {contact_id} (not in the CRM)"
    return f"{' '.join(contact['name'].split())} (contact {contact_id})"


def _duration(run: RunInfo) -> str:
    if not (run.started_at and run.ended_at):
        return ""
    try:
        seconds = (parse_utc(run.ended_at) - parse_utc(run.started_at)).total_seconds()
    except ValueError as exc:
        raise ValueError(f"run {run.run_id} of {run.job}: {exc}") from None
    minutes, secs = divmod(round(seconds), 60)
    return f" in {minutes} min {secs} s" if minutes else f" in {seconds:.1f} s"


def _add_runs(brain: _Day, runs: list[RunInfo]) -> None:
    for run in runs:  # every row is keyed by its run id: the order given does not matter
        source = f"dagster.run:{run.run_id}"
        job, partition = f"job:{run.job}", run.partition or "-"
        if run.status == "SUCCESS":
            kind, relation = "run_ok", "ran_for"
        elif run.status in FAILED:
            kind, relation = "run_failed", "failed_for"
        else:
            kind, relation = "run_unfinished", "started_for"
        text = f"{run.job} {partition}: {run.status}{_duration(run)} (run {run.run_id[:8]})"
        if run.error:
            text += f": {' '.join(run.error.split())}"
        brain.fact(kind, f"run:{run.run_id}", text, [source], about=job)
        if run.partition:
            brain.edge(job, relation, f"partition:{run.partition}", kind, [source])
        if run.catchup_attempt:
            brain.decision(
                "recovered",
                f"catchup:{run.run_id}",
                f"Ran {run.job} for {partition} late, as catch-up attempt {run.catchup_attempt}"
                f" ({run.status})",
                "a scheduled slot that fell due and has no successful run is launched by the"
                " catch-up sensor (Dagster does not run missed ticks); a slot that failed"
                " three times is given up",
                [source],
                about=job,
            )
            if run.partition:
                brain.edge(job, "recovered", f"partition:{run.partition}", "recovered", [source])
        for check in sorted(run.checks, key=lambda c: (c.asset, c.name)):
            if check.passed:
                check_kind, verdict = "check_passed", "passed"
            elif check.severity == "ERROR":
                check_kind, verdict = "check_error", "failed (ERROR)"
            else:
                check_kind, verdict = "check_warn", "failed (WARN)"
            brain.fact(
                check_kind,
                f"check:{run.run_id}:{check.asset}:{check.name}",
                f"Check {check.asset}/{check.name} {verdict} in {run.job} {partition}"
                f" (run {run.run_id[:8]})",
                [source],
                about=job,
            )


def _add_picks(brain: _Day, picks, contacts, last_written: Mapping[int, str]) -> None:
    for pick in picks:
        cid = pick["contact_id"]
        who, about = _label(contacts, cid), f"contact:{cid}"
        source = f"outreach.research_picks:{pick['day']}:{cid}"
        if pick["status"] == "skipped":
            brain.decision(
                "pick_skipped",
                f"pick:{cid}",
                f"Skipped the research of {who} (rank {pick['rank']})",
                f"a pick that cannot be researched safely is skipped: {pick['reason'] or '?'}",
                [source],
                about=about,
            )
            continue
        done = "Researched" if pick["status"] == "done" else "Picked, not yet researched,"
        brain.decision(
            "picked",
            f"pick:{cid}",
            f"{done} {who} at rank {pick['rank']}",
            "research selection (core/research.py): an address, no hard bounce, nothing sent"
            f" in {RECENT_DAYS} days, no reply, no thread bumped twice, not researched in"
            # No warmth figure: the CRM keeps only today's, and a replay must say what the
            # night said.
            f" {RESEARCH_COOLDOWN_DAYS} days; then warmest first,"
            f" longest since last written ({last_written.get(cid, 'never written')}),"
            " lowest id",
            [source],
            about=about,
        )
        _add_writeback(brain, pick, who, about, source)


def _add_writeback(brain: _Day, pick, who: str, about: str, source: str) -> None:
    try:
        writeback = json.loads(pick["writeback"] or "{}")
    except ValueError:
        brain.missing.append(f"research_picks {pick['day']}/{pick['contact_id']}: writeback")
        return
    applied = writeback.get("applied") or {}
    rejected = writeback.get("rejected") or {}
    cid = pick["contact_id"]
    if applied:
        brain.decision(
            "writeback_applied",
            f"writeback:{cid}",
            f"Corrected {who} in the CRM: {_pairs(applied)}",
            "a model's correction of a correctable column"
            f" ({', '.join(sorted(WRITEBACK_COLUMNS))}) is written to the CRM",
            [source],
            about=about,
        )
    if rejected:
        brain.decision(
            "writeback_refused",
            f"writeback-refused:{cid}",
            f"Refused the model's CRM corrections for {who}: {_pairs(rejected)}",
            f"a model may correct only {', '.join(sorted(WRITEBACK_COLUMNS))}; every other"
            " column it proposes is refused",
            [source],
            about=about,
        )


def _pairs(values: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={' '.join(str(v).split())!r}" for k, v in sorted(values.items()))


def _add_drafts(brain: _Day, drafts, contacts) -> None:
    for d in drafts:
        cid, draft_id = d["contact_id"], d["id"]
        who, about = _label(contacts, cid), f"contact:{cid}"
        source = f"outreach.drafts:{draft_id}"
        bump = f", follow-up {d['bump']}" if d["bump"] else ""
        brain.fact(
            "drafted",
            f"draft:{draft_id}",
            f"Drafted {d['subject']!r} for {who} (angle {d['angle']!r}{bump})",
            [source],
            about=about,
        )
        thread_kind = "drafted"
        if d["status"] == "quarantined":
            thread_kind = "quarantined"
            brain.decision(
                "quarantined",
                f"quarantine:{draft_id}",
                f"Quarantined draft {draft_id} for {who}; it is never sent",
                "the fabrication gate holds back a draft that states what its source material"
                f" does not support: {_claims(d)}",
                [source],
                about=about,
            )
        elif d["status"] == "skipped":
            brain.decision(
                "draft_skipped",
                f"skip:{draft_id}",
                f"Did not send draft {draft_id} for {who}",
                f"a draft that is unsafe to send is skipped: {d['reason'] or '?'}",
                [source],
                about=about,
            )
        elif d["status"] == "sent" and d["message_id"] is not None:
            thread_kind = "sent"
            brain.decision(
                "sent",
                f"sent:{draft_id}",
                f"Sent draft {draft_id} to {who} as message {d['message_id']}",
                "a draft that passed the fabrication gate, to a contact with an address and"
                " no hard bounce, is sent once (the send ledger, core/drafting.py)",
                [source, f"outreach.messages:{d['message_id']}"],
                about=about,
            )
        brain.edge(about, "in_thread", f"thread:{d['thread_id']}", thread_kind, [source])


def _claims(draft: Mapping) -> str:
    """A quarantined draft's stored claims as a person reads them: each with its part, its
    sentence (the claim marked) and why no source supports it (`gate.explain_stored`)."""
    parts = {"subject": draft["subject"] or "", "body": draft["body"] or ""}
    found = explain_stored(parts, draft["unsupported"])
    if found is None:
        return "(the stored claims are unreadable)"
    said = []
    for e in found:
        quoted = "" if not (e.before or e.after) else f"“{e.sentence}”: "
        said.append(f"{e.claim.kind} {e.claim.text!r} in the {e.part} ({quoted}{e.reason})")
    return "; ".join(said) or "(no claims recorded)"


def _add_episodes(brain: _Day, episodes, contacts, threads: Mapping[int, str]) -> None:
    engaged: dict[int, list[sqlite3.Row]] = {}
    for e in episodes:
        cid = e["contact_id"]
        if e["episode_type"] == "engagement":
            engaged.setdefault(cid, []).append(e)
            continue
        source = f"memory.contact_episodes:{e['id']}"
        brain.fact(
            "reply",
            f"reply:{e['id']}",
            f"Reply from {_label(contacts, cid)}: {' '.join(e['content'].split())}",
            [source],
            about=f"contact:{cid}",
        )
        if e["id"] in threads:
            brain.edge(
                f"contact:{cid}", "replied_in", f"thread:{threads[e['id']]}", "reply", [source]
            )
    for cid, touches in sorted(engaged.items()):
        said = [" ".join(t["content"].split()) for t in touches]
        more = f"; and {len(said) - 5} more" if len(said) > 5 else ""
        brain.fact(
            "engagement",
            f"engagement:{cid}",
            f"{_label(contacts, cid)} engaged {_times(len(said))}: {'; '.join(said[:5])}{more}",
            [f"memory.contact_episodes:{t['id']}" for t in touches],
            about=f"contact:{cid}",
        )


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _add_companies(brain: _Day, contacts) -> None:
    """contact -works_at-> company for everyone the day touched, as the CRM says now."""
    by_contact: dict[str, list[str]] = {}
    rows: list[Fact | Decision] = [*brain.facts.values(), *brain.decisions.values()]
    for row in rows:
        if row.about and row.about.startswith("contact:"):
            by_contact.setdefault(row.about, []).append(row.key)
    for about in sorted(by_contact):
        contact = contacts.get(int(about.partition(":")[2]))
        if contact is None or not (contact["company"] or "").strip():
            continue
        rows = [brain.facts.get(k) or brain.decisions[k] for k in by_contact[about]]
        top = max(rows, key=lambda r: r.importance)
        company = f"company:{' '.join(contact['company'].split())}"
        brain.edge(about, "works_at", company, top.kind, [f"crm.contacts:{contact['id']}"])


def _add_pages(brain: _Day, pages) -> None:
    for p in pages:
        title, about = p["title"], f"page:{p['title']}"
        source = f"recall.pages:{title}"
        if p["event"] == "distilled":
            kind, text = "page_distilled", f"Recall page {title!r} distilled from {p['note_path']}"
        else:
            problems = ", ".join(json.loads(p["problems"] or "[]")[:5]) or "?"
            kind = "page_withheld"
            text = f"Recall page {title!r} from {p['note_path']} withheld: unsupported {problems}"
        brain.fact(kind, f"page:{title}", text, [source], about=about)
        try:
            relations = json.loads(p["page"]).get("relations") or []
        except (ValueError, AttributeError):
            relations = []
        for r in relations:
            if isinstance(r, dict) and r.get("relation") and r.get("target"):
                brain.edge(about, r["relation"], f"page:{r['target']}", kind, [source])


def _add_removed_pages(brain: _Day, removed) -> None:
    for p in removed:
        path = p["note_path"]
        brain.fact(
            "note_deleted",
            f"deleted:{path}",
            f"Recall page {p['title']!r} was removed: its note {path} was deleted from the"
            " vault, made private or given another title",
            [f"recall.page_log:{p['title']}"],
        )
