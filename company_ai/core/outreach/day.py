"""The morning outreach, one day at a time: research it, draft it, check it, send it.

Each step is a plain function over the stores and the small interfaces the resources
satisfy (`StructuredModel` in core/llm.py, `PageSource`, `Sender`/`Mailer` here), with the
clock passed in; each returns a plain result that the asset turns into metadata. The rules
live in research.py (who is picked, what the CRM may learn) and drafting.py beside it
(what a draft is given, its gate verdict, the send ledger); this module is their order.

Every write commits on its own, in an order that makes a crash anywhere resumable and a
re-run harmless: a pick is marked done after its episodes and CRM corrections (both
idempotent); a draft is stored with its verdict in one transaction; a send follows the
ledger in core/drafting.py. The daily caps hold in the store itself (core/schema.py).

A past outreach day (its morning has gone) is never worked again: its assets decline it as
not taken. Deciding which day is past reads Dagster and the clock, so that stays in the
asset layer (`company_ai/days.py`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from functools import partial
from typing import Protocol

from company_ai.core.crm import Contact, build_dossier, known_companies, load_contact
from company_ai.core.gate import Own
from company_ai.core.gate.report import explain_verdict, markdown_cell
from company_ai.core.intake import Refusal, Taken, record_refusals
from company_ai.core.llm import ModelError, StructuredModel
from company_ai.core.memory import Episode, EpisodeError, append_episodes, validate
from company_ai.core.outreach.drafting import (
    DRAFT_SYSTEM,
    BumpLimitError,
    Draft,
    already_contacted,
    compose,
    draft_prompt,
    insert_draft,
    judge_draft,
    mark_sending,
    next_thread,
    offline_draft,
    outreach_episodes,
    record_sent,
    source_material,
    stored_verdict,
    text_problem,
    thread_references,
)
from company_ai.core.outreach.research import (
    RECENT_DAYS,
    RESEARCH_SYSTEM,
    Findings,
    SourceError,
    apply_writeback,
    offline_research,
    pick_for_day,
    research_episodes,
    research_prompt,
    unsendable_reason,
)
from company_ai.core.outreach.send_rules import contact_timezone, next_working_moment
from company_ai.core.store import DRAFT_CAP, Store, Stores, column_names, transaction
from company_ai.core.times import Day, to_iso

Clock = Callable[[], datetime]
RESEARCH_INTAKE = "research"
Log = Callable[[str], None]


class PageSource(Protocol):
    """Where a company's page is read (`resources/research.py::ResearchSource`)."""

    def page(self, domain: str) -> str:
        """The readable text of `domain`'s page, or SourceError saying why not."""
        ...


class Sender(Protocol):
    """Who outreach email is from. The sender's own name is never a claim of the gate."""

    @property
    def sender_name(self) -> str: ...

    @property
    def sender_email(self) -> str: ...

    @property
    def company_domains(self) -> Sequence[str]:
        """The company's own domains: the only ones a draft may link to or write to."""
        ...

    @property
    def company_phones(self) -> Sequence[str]:
        """The company's own phone numbers: the only ones a draft may give."""
        ...


class Mailer(Sender, Protocol):
    """What sends outreach email (`resources/mailer.py::Mailer`)."""

    def send(self, message: EmailMessage) -> str:
        """Send one message; the provider's id for it."""
        ...

    def already_sent(self, rfc_message_id: str) -> bool:
        """Whether a message with this Message-ID already went out (a resumed send)."""
        ...


def allowed(sender: Sender) -> tuple[str, ...]:
    """The terms the gate never counts as claims: the sender's own name."""
    return (sender.sender_name,)


def own(sender: Sender) -> Own:
    """What a draft may give a reader to act on: the company's domains (with the sender's
    email domain) and phone numbers."""
    domains = [*sender.company_domains, sender.sender_email.rpartition("@")[2]]
    return Own.of(domains, sender.company_phones)


def _known(stores: Stores) -> tuple[str, ...]:
    """The CRM's companies, for the gate (`known_companies`); none before the CRM exists."""
    crm = stores.reader(Store.CRM)  # None: no CRM (on PostgreSQL: no schema) yet
    if crm is None:
        return ()
    try:
        return known_companies(crm)
    finally:
        crm.close()


def _quiet(_: str) -> None:
    pass


# --- research ------------------------------------------------------------------------------


@dataclass
class ResearchDay:
    picked: int = 0
    researched: int = 0  # picks done, by this run or an earlier one
    skipped: int = 0
    skip_reasons: dict[str, str] = field(default_factory=dict)  # contact id -> why
    episodes_written: int = 0
    writeback_applied: dict[str, int] = field(default_factory=dict)  # column -> contacts
    writeback_rejected: dict[str, int] = field(default_factory=dict)  # column -> contacts
    pages: Taken = field(default_factory=lambda: Taken(RESEARCH_INTAKE))  # pages read, refused


def research_day(
    stores: Stores,
    day: Day,
    *,
    model: StructuredModel,
    pages: PageSource,
    clock: Clock,
    warn: Log = _quiet,
) -> ResearchDay:
    """Research the day's picks (chosen and stored once: `pick_for_day`).

    For each pick still open: read its company's page, ask the model for facts and CRM
    corrections, and validate the facts' episodes whole; then append the episodes, apply
    the whitelisted corrections and mark the pick done. A pick that cannot be researched
    (no address, bounced, a bad page, a failed model, an invalid fact) is marked skipped
    with its reason and nothing of it is written. A page that cannot be read (anything its
    source raises) is also refused: counted in `pages` and recorded in outreach.db's
    `intake_refusals` (key `refusal_key`), in the transaction that marks the pick.
    """
    result = ResearchDay()
    at = to_iso(clock())  # an episode is dated when it is recorded, never back-dated
    with (
        stores.connect(Store.CRM) as crm,
        stores.connect(Store.OUTREACH) as outreach,
        stores.connect(Store.MEMORY) as memory,
    ):
        picks = pick_for_day(crm, outreach, day, clock())
        result.picked = len(picks)
        for pick in picks:
            if pick["status"] != "picked":
                result.researched += pick["status"] == "done"
                result.skipped += pick["status"] == "skipped"
                continue
            contact = load_contact(crm, pick["contact_id"])
            reason = unsendable_reason(outreach, contact, at)
            found = refusal = None
            if contact is not None and reason is None:
                result.pages.items += 1
                try:
                    page = pages.page(contact.domain)
                except Exception as exc:  # noqa: BLE001 (one bad page never stops the run)
                    why = str(exc) if isinstance(exc, SourceError) else _failure(exc)
                    refusal = result.pages.refuse(refusal_key(day.key, contact.id), why)
                    reason = refusal.reason
                else:
                    try:
                        found = _research(contact, day.key, at, model, page)
                    except (SourceError, ModelError, EpisodeError) as exc:
                        reason = str(exc)
            if contact is None or found is None:
                reason = reason or "unknown"
                _finish_pick(
                    outreach,
                    day.key,
                    pick["contact_id"],
                    clock(),
                    "skipped",
                    reason=reason,
                    refusal=refusal,
                )
                result.skip_reasons[str(pick["contact_id"])] = reason
                result.skipped += 1
                what = "page refused" if refusal else "skipped"
                warn(f"research {what} for contact {pick['contact_id']}: {reason}")
                continue
            findings, episodes = found
            written = append_episodes(memory, episodes, now=clock(), tz=day.tz)
            writeback = apply_writeback(crm, contact.id, findings.corrections, clock())
            for column in writeback.applied:
                result.writeback_applied[column] = result.writeback_applied.get(column, 0) + 1
            for column, value in writeback.rejected.items():
                result.writeback_rejected[column] = result.writeback_rejected.get(column, 0) + 1
                warn(
                    f"CRM writeback refused for contact {contact.id}: {column}={value!r}"
                    " is not a correctable column"
                )
            _finish_pick(
                outreach,
                day.key,
                contact.id,
                clock(),
                "done",
                findings=json.dumps([f.model_dump() for f in findings.facts]),
                writeback=writeback.to_json(),
            )
            result.episodes_written += written.inserted
            result.researched += 1
    return result


def refusal_key(day: str, contact_id: int) -> str:
    """The key of a day's refused page in `intake_refusals`: the day and the contact (the
    page's address may carry credentials; the reason names it without them)."""
    return f"{day}:contact:{contact_id}"


def day_refusals(outreach: sqlite3.Connection, day: str) -> dict[str, str]:
    """The research pages refused on `day`, by key, with their reasons (read only)."""
    rows = outreach.execute(
        "SELECT item_key, reason FROM intake_refusals WHERE intake = $1 AND item_key LIKE $2"
        " ORDER BY item_key",
        (RESEARCH_INTAKE, f"{day}:%"),
    )
    return {key: reason for key, reason in rows}


def _failure(exc: Exception) -> str:
    """A failure's reason without its message (it might hold the page's address)."""
    return f"could not be read ({type(exc).__name__})"


def _research(
    contact: Contact, day: str, at: str, model: StructuredModel, page: str
) -> tuple[Findings, list[Episode]]:
    """One contact's findings and their episodes, validated whole before anything is
    written: one bad fact skips the pick."""
    findings = model.structured(
        system=RESEARCH_SYSTEM,
        prompt=research_prompt(contact, page),
        schema=Findings,
        offline=lambda: offline_research(contact, page),
    )
    episodes = research_episodes(
        day=day,
        contact_id=contact.id,
        domain=contact.domain,
        page=page,
        findings=findings,
        model_source=model.source,
        created_at=at,
    )
    return findings, validate(episodes)


def _finish_pick(
    outreach: sqlite3.Connection,
    day: str,
    contact_id: int,
    now: datetime,
    status: str,
    *,
    reason: str | None = None,
    findings: str | None = None,
    writeback: str | None = None,
    refusal: Refusal | None = None,
) -> None:
    with transaction(outreach):
        if refusal is not None:
            record_refusals(outreach, [refusal], to_iso(now))
        outreach.execute(
            "UPDATE research_picks SET status = $1, reason = $2, findings = $3, writeback = $4,"
            " updated_at = $5 WHERE day = $6 AND contact_id = $7",
            (status, reason, findings, writeback, to_iso(now), day, contact_id),
        )


# --- drafting ------------------------------------------------------------------------------


@dataclass
class DraftDay:
    already_drafted: int = 0  # by an earlier run of the day
    # This run's drafts by the status they were stored with.
    stored: dict[str, int] = field(
        default_factory=lambda: {"ready": 0, "quarantined": 0, "skipped": 0}
    )
    not_drafted: dict[str, str] = field(default_factory=dict)  # contact id -> why

    @property
    def drafted(self) -> int:
        return sum(self.stored.values())


def draft_day(
    stores: Stores,
    day: str,
    *,
    model: StructuredModel,
    sender: Sender,
    clock: Clock,
    warn: Log = _quiet,
) -> DraftDay:
    """Draft the day's researched picks, best first, up to `DRAFT_CAP` drafts a day.

    Each draft is built from its contact's CRM row, dossier and the day's findings, judged
    by the gate against exactly that material, and stored with it and the verdict in one
    transaction: `ready`, `quarantined` (unsupported claims) or `skipped` (HTML, header
    injection, too long). A contact no longer writable, or whose thread was already bumped
    twice, or whose model call failed, is not drafted, with its reason.
    """
    result = DraftDay()
    with (
        stores.connect(Store.CRM) as crm,
        stores.connect(Store.OUTREACH) as outreach,
        stores.connect(Store.MEMORY) as memory,
    ):
        known = known_companies(crm)
        (result.already_drafted,) = outreach.execute(
            "SELECT count(*) FROM drafts WHERE day = $1", (day,)
        ).fetchone()
        picks = outreach.execute(
            "SELECT p.* FROM research_picks p WHERE p.day = $1 AND p.status = 'done' AND NOT"
            " EXISTS (SELECT 1 FROM drafts d WHERE d.day = p.day AND d.contact_id = p.contact_id)"
            " ORDER BY p.rank",
            (day,),
        ).fetchall()
        for pick in picks:
            if result.already_drafted + result.drafted >= DRAFT_CAP:
                break
            contact = load_contact(crm, pick["contact_id"])
            reason = unsendable_reason(outreach, contact, to_iso(clock()))
            thread = None
            if contact is not None and reason is None:
                try:
                    thread = next_thread(outreach, contact.id, day)
                except BumpLimitError as exc:
                    reason = str(exc)
            if contact is None or thread is None:
                result.not_drafted[str(pick["contact_id"])] = reason or "unknown"
                continue
            facts = [f["text"] for f in json.loads(pick["findings"] or "[]")]
            dossier = build_dossier(memory, contact.id)
            material = source_material(contact, dossier, facts)
            try:
                draft = model.structured(
                    system=DRAFT_SYSTEM.format(sender=sender.sender_name),
                    prompt=draft_prompt(material, thread),
                    schema=Draft,
                    offline=partial(offline_draft, contact, facts, thread, sender.sender_name),
                )
            except ModelError as exc:
                result.not_drafted[str(contact.id)] = str(exc)
                warn(f"no draft for contact {contact.id}: {exc}")
                continue
            _, status = insert_draft(
                outreach,
                day=day,
                contact_id=contact.id,
                thread=thread,
                draft=draft,
                dossier=dossier,
                sources=material,
                model=model.source,
                verdict=judge_draft(
                    draft.subject, draft.body, material, allowed(sender), known, own(sender)
                ),
                problem=text_problem(draft.subject, draft.body),
                now=clock(),
            )
            result.stored[status] += 1
    return result


# --- the blocking check --------------------------------------------------------------------


# At most this many claims are listed in the check's table, the leaking drafts' first: the
# UI shows a readable page, whatever a day held back.
TABLE_ROWS = 25


@dataclass
class DraftCheck:
    checked: int = 0
    rejudged: int = 0  # stored verdicts that no longer held: judged again
    # One entry per draft: its table rows (one a claim), each opening "| <draft id> |".
    quarantined: list[str] = field(default_factory=list)
    leaking: list[str] = field(default_factory=list)  # not quarantined, with claims

    TABLE_HEAD = (
        "| draft | contact | status | claim | where it is said | why it is held |\n"
        "|---|---|---|---|---|---|\n"
    )

    def table(self, limit: int = TABLE_ROWS) -> str:
        """The offending drafts' claims as a Markdown table, the leaking drafts first: each
        claim's kind, its sentence with the claim in bold and the reason, at most `limit`
        rows, then how many more."""
        rows = [row for draft in self.leaking + self.quarantined for row in draft.split("\n")]
        shown = "\n".join(rows[:limit])
        more = f"\n\n… and {len(rows) - limit} more" if len(rows) > limit else ""
        return self.TABLE_HEAD + shown + more


def check_day(stores: Stores, day: str, *, sender: Sender) -> DraftCheck:
    """The gate's verdict on every stored draft of the day, against the material stored
    with it: quarantined drafts are listed; a draft with unsupported claims that is not
    quarantined (nor skipped) is leaking, which must block every send of the run. Each
    verdict is the stored one while it holds for the row (`stored_verdict`). Each listed
    claim names the draft's contact and quotes its sentence with the reason (`explain`)."""
    result = DraftCheck()
    known = _known(stores)
    with stores.connect(Store.OUTREACH, readonly=True) as outreach:
        held = []
        for d in outreach.execute("SELECT * FROM drafts WHERE day = $1 ORDER BY id", (day,)):
            result.checked += 1
            verdict, rejudged = stored_verdict(d, allowed(sender), known, own(sender))
            result.rejudged += rejudged
            if d["status"] == "quarantined" or (not verdict.passed and d["status"] != "skipped"):
                held.append((d, verdict))
    contacts = _contact_labels(stores, {d["contact_id"] for d, _ in held})
    for d, verdict in held:
        who = contacts.get(d["contact_id"]) or f"contact {d['contact_id']} (not in the CRM)"
        parts = {"subject": d["subject"], "body": d["body"]}
        rows = [
            f"| {d['id']} | {markdown_cell(who)} | {d['status']} | {e.claim.kind} in the"
            f" {e.part} | {e.markdown()} | {markdown_cell(e.reason)} |"
            for e in explain_verdict(parts, verdict)
        ] or [f"| {d['id']} | {markdown_cell(who)} | {d['status']} | | | |"]
        (result.quarantined if d["status"] == "quarantined" else result.leaking).append(
            "\n".join(rows)
        )
    return result


def _contact_labels(stores: Stores, ids: set[int]) -> dict[int, str]:
    """Contact id -> "Name <email>", for the contacts the CRM still has."""
    crm = stores.reader(Store.CRM) if ids else None  # None: no CRM yet
    if crm is None:
        return {}
    try:
        found = (load_contact(crm, contact_id) for contact_id in sorted(ids))
        return {
            c.id: f"{c.name} <{c.email}>" if c.email else c.name for c in found if c is not None
        }
    finally:
        crm.close()


# --- sending -------------------------------------------------------------------------------


@dataclass
class SendDay:
    sent: int = 0
    resumed_after_crash: int = 0
    skipped: dict[str, str] = field(default_factory=dict)  # draft id -> why not sent
    held: dict[str, str] = field(default_factory=dict)  # draft id -> when it is due (UTC)
    episodes_written: int = 0
    sent_in_total: int = 0  # the day's drafts sent, by any run


def send_day(
    stores: Stores, day: str, *, tz: str, mailer: Mailer, clock: Clock, warn: Log = _quiet
) -> SendDay:
    """Send the day's ready drafts once each, by the ledger in core/drafting.py.

    A draft left `sending` by a crash is first looked up at the mailer: if it went out,
    it is only recorded. Every other draft is re-checked just before it leaves: the
    contact (address, bounce), anything already sent to them by any day (its thread's
    bump, the quiet period), the text, and its gate verdict; anything doubtful is marked
    skipped with its reason, never sent. A draft whose contact is outside working hours
    (core/send_rules.py, in the contact's timezone, else `tz`, the owner's) is held with
    the moment they begin (`due_at`) and sent then by `send_due`. Last, the `outreach`
    episode of every message the day sent is appended (idempotent), so a crash never
    leaves one out.
    """
    result = SendDay()
    with (
        stores.connect(Store.CRM) as crm,
        stores.connect(Store.OUTREACH) as outreach,
        stores.connect(Store.MEMORY) as memory,
    ):
        drafts = outreach.execute(
            "SELECT * FROM drafts WHERE day = $1 AND status IN ('ready', 'sending') ORDER BY id",
            (day,),
        ).fetchall()
        _send_drafts(crm, outreach, drafts, result, tz=tz, mailer=mailer, clock=clock, warn=warn)
        written = append_episodes(memory, outreach_episodes(outreach, day), now=clock(), tz=tz)
        result.episodes_written = written.inserted
        (result.sent_in_total,) = outreach.execute(
            "SELECT count(*) FROM drafts WHERE day = $1 AND status = 'sent'", (day,)
        ).fetchone()
    return result


# A held draft not sent within a day of its due time (the machine was off) is not sent
# late: it was written for that morning, and the next outreach day can write again.
HELD_SEND_GRACE = timedelta(days=1)


def send_due(
    stores: Stores, *, tz: str, mailer: Mailer, clock: Clock, warn: Log = _quiet
) -> SendDay:
    """Send every held draft whose contact's working hours have begun (`due_at` passed),
    whatever day drafted it, by the same checks and ledger as `send_day`; one left
    `sending` by a crash is looked up at the mailer first. Run as often as you like: a
    draft goes out once (its status, the ledger and the one-message-per-thread-bump index
    see to it). One more than `HELD_SEND_GRACE` past its due time is skipped, not sent."""
    result = SendDay()
    now = clock()
    if not stores.exists(Store.OUTREACH):
        return result
    with (
        stores.connect(Store.CRM) as crm,
        stores.connect(Store.OUTREACH) as outreach,
        stores.connect(Store.MEMORY) as memory,
    ):
        drafts = outreach.execute(
            "SELECT * FROM drafts WHERE due_at IS NOT NULL AND due_at <= $1"
            " AND status IN ('ready', 'sending') ORDER BY due_at, id",
            (to_iso(now),),
        ).fetchall()
        stale = to_iso(now - HELD_SEND_GRACE)
        for draft in drafts:
            if draft["status"] == "ready" and draft["due_at"] < stale:
                reason = f"held until {draft['due_at']} and not sent within a day of it"
                _skip_draft(outreach, draft["id"], reason, now)
                result.skipped[str(draft["id"])] = reason
                warn(f"draft {draft['id']} not sent: {reason}")
        fresh = [d for d in drafts if str(d["id"]) not in result.skipped]
        _send_drafts(crm, outreach, fresh, result, tz=tz, mailer=mailer, clock=clock, warn=warn)
        for day in sorted({d["day"] for d in fresh}):
            written = append_episodes(memory, outreach_episodes(outreach, day), now=clock(), tz=tz)
            result.episodes_written += written.inserted
    result.sent_in_total = result.sent + result.resumed_after_crash
    return result


def due_drafts(stores: Stores, now: datetime) -> int:
    """How many held drafts are due at `now` (read only): the sensor asks before a run."""
    outreach = stores.reader(Store.OUTREACH)
    if outreach is None:
        return 0
    with closing(outreach):
        columns = column_names(outreach, "drafts")
        if "due_at" not in columns:  # a store no run has migrated yet holds nothing
            return 0
        return outreach.execute(
            "SELECT count(*) FROM drafts WHERE due_at IS NOT NULL AND due_at <= $1"
            " AND status IN ('ready', 'sending')",
            (to_iso(now),),
        ).fetchone()[0]


def _send_drafts(
    crm: sqlite3.Connection,
    outreach: sqlite3.Connection,
    drafts: list[sqlite3.Row],
    result: SendDay,
    *,
    tz: str,
    mailer: Mailer,
    clock: Clock,
    warn: Log,
) -> None:
    """Each draft through the pre-send checks, the working hours and the send ledger."""
    domain = mailer.sender_email.rpartition("@")[2] or "company-ai.example"
    known = known_companies(crm)
    for draft in drafts:
        contact = load_contact(crm, draft["contact_id"])
        if draft["status"] == "sending" and mailer.already_sent(draft["rfc_message_id"]):
            record_sent(outreach, draft, clock())  # a crash after the send
            result.resumed_after_crash += 1
            continue
        now = clock()
        quiet_since = to_iso(now - timedelta(days=RECENT_DAYS))
        reason = (
            unsendable_reason(outreach, contact, to_iso(now))
            or already_contacted(outreach, draft, quiet_since)
            or text_problem(draft["subject"], draft["body"])
        )
        if (
            reason is None
            and not stored_verdict(draft, allowed(mailer), known, own(mailer))[0].passed
        ):
            reason = "the fabrication gate does not pass this draft"
        if contact is not None and reason is None and draft["status"] == "ready":
            due = next_working_moment(now, contact_timezone(contact.city, tz))
            if due > now:
                result.held[str(draft["id"])] = _hold_draft(outreach, draft["id"], due, now)
                continue
        message = None
        if contact is not None and reason is None:
            mark_sending(outreach, draft["id"], domain, now)
            draft = outreach.execute(
                "SELECT * FROM drafts WHERE id = $1", (draft["id"],)
            ).fetchone()
            try:
                message = compose(
                    draft,
                    to=f"{contact.name} <{contact.email}>",
                    sender=mailer.sender_name,
                    sender_email=mailer.sender_email,
                    now=now,
                    references=thread_references(outreach, draft["thread_id"], draft["bump"]),
                )
            except ValueError as exc:
                reason = f"cannot compose the message: {exc}"
        if message is None:
            reason = reason or "unknown"
            _skip_draft(outreach, draft["id"], reason, clock())
            result.skipped[str(draft["id"])] = reason
            warn(f"draft {draft['id']} not sent: {reason}")
            continue
        mailer.send(message)
        record_sent(outreach, draft, clock())
        result.sent += 1


def _hold_draft(outreach: sqlite3.Connection, draft_id: int, due: datetime, now: datetime) -> str:
    """Keep a ready draft until `due` (the contact's working hours); returns `due` stored."""
    with transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET due_at = $1, updated_at = $2 WHERE id = $3 AND status = 'ready'"
            " AND (due_at IS NULL OR due_at != $4)",
            (to_iso(due), to_iso(now), draft_id, to_iso(due)),
        )
    return to_iso(due)


def _skip_draft(outreach: sqlite3.Connection, draft_id: int, reason: str, now: datetime) -> None:
    with transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET status = 'skipped', reason = $1, updated_at = $2 WHERE id = $3",
            (reason, to_iso(now), draft_id),
        )


def research_refusals(stores: Stores, day: str) -> dict[str, str]:
    """The day's refused research pages, by key, with their reasons (read only)."""
    outreach = stores.reader(Store.OUTREACH)
    if outreach is None:
        return {}
    with closing(outreach):
        return day_refusals(outreach, day)
