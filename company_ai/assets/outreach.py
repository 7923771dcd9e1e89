import json
import warnings
from datetime import timedelta

import dagster as dg

from company_ai import days, ledger, settings
from company_ai.constants import CAPTURE_META, OUTREACH, OWNER, WORKDAYS
from company_ai.core.db import transaction
from company_ai.core.dossier import build_dossier
from company_ai.core.drafting import (
    DRAFT_CAP,
    DRAFT_SYSTEM,
    BumpLimitError,
    Draft,
    already_contacted,
    compose,
    draft_prompt,
    gate_draft,
    insert_draft,
    mark_sending,
    next_thread,
    offline_draft,
    outreach_episodes,
    record_sent,
    source_material,
    text_problem,
)
from company_ai.core.episodes import EpisodeError, append_episodes, validate
from company_ai.core.research import (
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
from company_ai.core.times import to_iso, utc_now
from company_ai.resources.llm import LLMResource, ModelError
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource

CRM, MEMORY = "crm", "memory"


def _past_day(context: dg.AssetExecutionContext, day: str) -> bool:
    """A past outreach day is reported from what it stored; nothing new is done for it."""
    if days.is_current(context.asset_key.to_user_string(), day):
        return False
    context.log.info(f"{day} is a past outreach day: reporting what it stored, doing nothing new")
    return True


def _stored(stores: StoresResource, sql: str, day: str) -> dict[str, int]:
    if not stores.stores().path(OUTREACH).is_file():
        return {}
    with stores.connect(OUTREACH, readonly=True) as outreach:
        return dict(outreach.execute(sql, (day,)).fetchall())


@dg.asset(
    partitions_def=WORKDAYS,
    group_name=OUTREACH,
    kinds={"sqlite"},
    owners=[OWNER],
    pool="outreach_db",
    metadata=CAPTURE_META,
)
def research_findings(
    context: dg.AssetExecutionContext,
    stores: StoresResource,
    llm: LLMResource,
    research_source: ResearchSource,
) -> dg.MaterializeResult:
    """The day's research: at most 20 contacts, their company page read and summarised.

    A capture: it reads the web as it is when it runs. Its partition is the weekday the
    work is done; a past day is reported from its stored picks and never researched late.
    Source: the CRM row and the company's page (`ResearchSource`), summarised by the
    language model (`LLMResource`). Grain: one partition per local day; the day's picks
    (the selection rule is in `core/research.py`) are stored in `research_picks` in
    `outreach.db` the first time the day runs, so the cap of 20 holds through re-runs and
    backfills. Each fact becomes a `research` or `company` episode in `memory.db`, sourced
    `web:<domain>` when the page says it verbatim (confidence 0.9) or to the model (0.6).
    The model may propose CRM corrections; only city, title and company are ever written
    to `crm.db`, every other proposal is rejected, logged and counted here.
    """
    day, tz = days.one_day(context), settings.timezone()
    if _past_day(context, day):
        picks = _stored(stores, "SELECT status, count(*) FROM research_picks WHERE day = ? "
                        "GROUP BY status", day)  # fmt: skip
        return dg.MaterializeResult(
            metadata={"past_day": True, "picked": sum(picks.values()), **picks}
        )
    at = to_iso(utc_now())  # the episode's day is the day it is recorded
    done = skipped = episodes_written = 0
    reasons: dict[str, str] = {}
    applied: dict[str, int] = {}
    rejected: dict[str, int] = {}
    with (
        stores.connect(CRM) as crm,
        stores.connect(OUTREACH) as outreach,
        stores.connect(MEMORY) as memory,
    ):
        picks = pick_for_day(crm, outreach, day, tz)
        for pick in picks:
            if pick["status"] != "picked":
                done += pick["status"] == "done"
                skipped += pick["status"] == "skipped"
                continue
            contact = crm.execute(
                "SELECT * FROM contacts WHERE id = ?", (pick["contact_id"],)
            ).fetchone()
            reason = unsendable_reason(outreach, contact)
            findings = None
            if reason is None:
                domain = contact["email"].rpartition("@")[2]
                try:
                    page = research_source.page(domain)
                    findings = llm.structured(
                        system=RESEARCH_SYSTEM,
                        prompt=research_prompt(contact, page),
                        schema=Findings,
                        offline=lambda c=contact, p=page: offline_research(c, p),
                    )
                    # Validated whole before anything is written: a bad fact skips the pick.
                    episodes = validate(
                        research_episodes(
                            day=day,
                            contact_id=contact["id"],
                            domain=domain,
                            page=page,
                            findings=findings,
                            model_source=llm.source,
                            created_at=at,
                        )
                    )
                except (SourceError, ModelError, EpisodeError) as exc:
                    reason, findings = str(exc), None
            if findings is None:
                _finish_pick(outreach, day, pick["contact_id"], "skipped", reason=reason)
                reasons[str(pick["contact_id"])] = reason or "unknown"
                skipped += 1
                context.log.warning(f"research skipped contact {pick['contact_id']}: {reason}")
                continue
            written = append_episodes(memory, episodes, tz=tz)
            writeback = apply_writeback(crm, contact["id"], findings.corrections)
            for column in writeback.applied:
                applied[column] = applied.get(column, 0) + 1
            for column, value in writeback.rejected.items():
                rejected[column] = rejected.get(column, 0) + 1
                context.log.warning(
                    f"CRM writeback refused for contact {contact['id']}: {column}={value!r}"
                    " is not a correctable column"
                )
            _finish_pick(
                outreach,
                day,
                contact["id"],
                "done",
                findings=json.dumps([f.model_dump() for f in findings.facts]),
                writeback=writeback.to_json(),
            )
            episodes_written += written.inserted
            done += 1
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(picks),
            "picked": len(picks),
            "researched": done,
            "skipped": skipped,
            "skip_reasons": reasons,
            "episodes_written": episodes_written,
            "writeback_applied": applied,
            "writeback_rejected": sum(rejected.values()),
            "writeback_rejected_columns": rejected,
        }
    )


def _finish_pick(outreach, day: str, contact_id: int, status: str, **fields) -> None:
    with transaction(outreach):
        outreach.execute(
            "UPDATE research_picks SET status = ?, reason = ?, findings = ?, writeback = ?,"
            " updated_at = ? WHERE day = ? AND contact_id = ?",
            (
                status,
                fields.get("reason"),
                fields.get("findings"),
                fields.get("writeback"),
                to_iso(utc_now()),
                day,
                contact_id,
            ),
        )


@dg.asset(
    partitions_def=WORKDAYS,
    group_name=OUTREACH,
    kinds={"sqlite"},
    owners=[OWNER],
    pool="outreach_db",
    deps=[research_findings],
    metadata=CAPTURE_META,
)
def outreach_drafts(
    context: dg.AssetExecutionContext, stores: StoresResource, llm: LLMResource, mailer: Mailer
) -> dg.MaterializeResult:
    """The day's email drafts: at most 10, each built from one contact's dossier.

    Source: the day's researched contacts (`research_picks`), each contact's dossier
    (`build_dossier`, memory.db) and research findings, written by the language model.
    Grain: one partition per local day, one draft per contact, in the `drafts` table of
    `outreach.db` with its subject, body, angle, the dossier and the exact source material
    the model was given, and the fabrication gate's verdict: a draft naming a number or a
    name its material does not support is quarantined with its unsupported claims and is
    never sent. Drafts with HTML or header-injection characters are skipped with a reason.
    A follow-up reuses the contact's open thread; a third bump is never drafted. A capture
    (drafts are written from the memory as it is that morning): a past day is reported
    from its stored drafts, and nothing new is drafted for it.
    """
    day = days.one_day(context)
    if _past_day(context, day):
        stored = _stored(
            stores, "SELECT status, count(*) FROM drafts WHERE day = ? GROUP BY status", day
        )
        return dg.MaterializeResult(
            metadata={"past_day": True, "drafted": sum(stored.values()), **stored}
        )
    allow = [mailer.sender_name]  # the sender's own name is never a claim
    counts = {"ready": 0, "quarantined": 0, "skipped": 0}
    not_drafted: dict[str, str] = {}
    with (
        stores.connect(CRM) as crm,
        stores.connect(OUTREACH) as outreach,
        stores.connect(MEMORY) as memory,
    ):
        (existing,) = outreach.execute(
            "SELECT count(*) FROM drafts WHERE day = ?", (day,)
        ).fetchone()
        picks = outreach.execute(
            "SELECT p.* FROM research_picks p WHERE p.day = ? AND p.status = 'done' AND NOT"
            " EXISTS (SELECT 1 FROM drafts d WHERE d.day = p.day AND d.contact_id = p.contact_id)"
            " ORDER BY p.rank",
            (day,),
        ).fetchall()
        for pick in picks:
            if existing + sum(counts.values()) >= DRAFT_CAP:
                break
            contact = crm.execute(
                "SELECT * FROM contacts WHERE id = ?", (pick["contact_id"],)
            ).fetchone()
            reason = unsendable_reason(outreach, contact)
            try:
                thread = None if reason else next_thread(outreach, contact["id"], day)
            except BumpLimitError as exc:
                reason = str(exc)
            if reason:
                not_drafted[str(pick["contact_id"])] = reason
                continue
            facts = [f["text"] for f in json.loads(pick["findings"] or "[]")]
            dossier = build_dossier(memory, contact["id"])
            material = source_material(contact, dossier, facts)
            try:
                draft = llm.structured(
                    system=DRAFT_SYSTEM.format(sender=mailer.sender_name),
                    prompt=draft_prompt(material, thread),
                    schema=Draft,
                    offline=lambda c=contact, f=facts, t=thread: offline_draft(
                        c, f, t, mailer.sender_name
                    ),
                )
            except ModelError as exc:
                not_drafted[str(contact["id"])] = str(exc)
                context.log.warning(f"no draft for contact {contact['id']}: {exc}")
                continue
            unsupported = gate_draft(draft.subject, draft.body, material, allow)
            _, status = insert_draft(
                outreach,
                day=day,
                contact_id=contact["id"],
                thread=thread,
                draft=draft,
                dossier=dossier,
                sources=material,
                model=llm.source,
                unsupported=unsupported,
                problem=text_problem(draft.subject, draft.body),
            )
            counts[status] += 1
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": existing + sum(counts.values()),
            "drafted": sum(counts.values()),
            "passed": counts["ready"],
            "quarantined": counts["quarantined"],
            "skipped": counts["skipped"],
            "already_drafted": existing,
            "not_drafted": not_drafted,
        }
    )


# Partitioned checks are a Dagster preview: without `partitions_def` the verdict would be
# stored as the asset's latest rather than against its day. The warning is known; hush it.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)

    @dg.asset_check(asset=outreach_drafts, blocking=True, partitions_def=WORKDAYS)
    def fabrication_gate(
        context: dg.AssetCheckExecutionContext, stores: StoresResource, mailer: Mailer
    ) -> dg.AssetCheckResult:
        """Every unquarantined draft of the day says only what its source material says.

        Re-runs the gate (`core.gate`, pure code, no model) on every stored draft of the day
        against the material stored with it. WARN if drafts were quarantined (they are listed
        with what they said; the passing drafts still go out); ERROR, blocking every send in
        the run, if any draft that is not quarantined has an unsupported claim.
        """
        day = context.partition_key
        allow = [mailer.sender_name]  # the sender's own name is never a claim
        quarantined: list[str] = []
        leaking: list[str] = []
        checked = 0
        with stores.connect(OUTREACH, readonly=True) as outreach:
            for d in outreach.execute("SELECT * FROM drafts WHERE day = ? ORDER BY id", (day,)):
                checked += 1
                claims = gate_draft(d["subject"], d["body"], json.loads(d["sources"]), allow)
                said = "; ".join(f"{c['kind']} {c['text']!r}" for c in claims)
                line = f"| {d['id']} | {d['contact_id']} | {d['status']} | {said} |"
                if d["status"] == "quarantined":
                    quarantined.append(line)
                elif claims and d["status"] != "skipped":
                    leaking.append(line)
        table = "| draft | contact | status | unsupported claims |\n|---|---|---|---|\n"
        metadata = {
            "drafts_checked": checked,
            "quarantined": len(quarantined),
            "unquarantined_with_claims": len(leaking),
            "drafts": dg.MetadataValue.md(table + "\n".join(leaking + quarantined)),
        }
        if leaking:
            return dg.AssetCheckResult(
                passed=False,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata=metadata,
                description=f"{len(leaking)} unquarantined draft(s) make unsupported claims",
            )
        if quarantined:
            return dg.AssetCheckResult(
                passed=False,
                severity=dg.AssetCheckSeverity.WARN,
                metadata=metadata,
                description=f"{len(quarantined)} draft(s) quarantined; the rest may go out",
            )
        return dg.AssetCheckResult(passed=True, metadata=metadata)


@dg.asset(
    partitions_def=WORKDAYS,
    group_name=OUTREACH,
    kinds={"sqlite", "email"},
    owners=[OWNER],
    pool="outreach_db",
    deps=[outreach_drafts],
    metadata=CAPTURE_META,
)
def outreach_messages(
    context: dg.AssetExecutionContext, stores: StoresResource, mailer: Mailer
) -> dg.MaterializeResult:
    """The day's sent email: every gated draft that passed, sent once through the mailer.

    Source: the day's `ready` drafts (and any left `sending` by a crash). Grain: one
    partition per local day; each send is one row in `messages` (`outreach.db`, linked to
    its draft) and one `outreach` episode (`memory.db`, natural key
    `outreach:message:<id>`). A send is a ledger (see `core/drafting.py`): the Message-ID
    is fixed before sending and the mailer is asked before any resend, and every run
    re-appends missing episodes, so a re-run or a crash never sends twice or loses an
    episode. A draft is re-gated and its contact re-checked (email, bounce, anything sent
    to them by any day: a thread's bump goes out once, and nobody gets two messages in the
    quiet period) just before sending; anything doubtful is skipped with its reason, never
    sent. Sending is a capture: a past day is re-gated and reported, and sends nothing.
    """
    day, tz = days.one_day(context), settings.timezone()
    if _past_day(context, day):
        return _regate_past_day(stores, mailer, day)
    allow = [mailer.sender_name]  # the sender's own name is never a claim
    sent = resumed = 0
    skipped: dict[str, str] = {}
    domain = mailer.sender_email.rpartition("@")[2] or "company-ai.example"
    with (
        stores.connect(CRM) as crm,
        stores.connect(OUTREACH) as outreach,
        stores.connect(MEMORY) as memory,
    ):
        drafts = outreach.execute(
            "SELECT * FROM drafts WHERE day = ? AND status IN ('ready', 'sending') ORDER BY id",
            (day,),
        ).fetchall()
        for draft in drafts:
            contact = crm.execute(
                "SELECT * FROM contacts WHERE id = ?", (draft["contact_id"],)
            ).fetchone()
            if draft["status"] == "sending" and mailer.already_sent(draft["rfc_message_id"]):
                record_sent(outreach, draft, to_iso(utc_now()))  # a crash after the send
                resumed += 1
                continue
            quiet_since = to_iso(ledger.now() - timedelta(days=RECENT_DAYS))
            reason = (
                unsendable_reason(outreach, contact)
                or already_contacted(outreach, draft, quiet_since)
                or text_problem(draft["subject"], draft["body"])
            )
            if reason is None and gate_draft(
                draft["subject"], draft["body"], json.loads(draft["sources"]), allow
            ):
                reason = "the fabrication gate does not pass this draft"
            message = None
            if reason is None:
                mark_sending(outreach, draft["id"], domain)
                draft = outreach.execute(
                    "SELECT * FROM drafts WHERE id = ?", (draft["id"],)
                ).fetchone()
                try:
                    message = compose(
                        draft,
                        to=f"{contact['name']} <{contact['email']}>",
                        sender=mailer.sender_name,
                        sender_email=mailer.sender_email,
                    )
                except ValueError as exc:
                    reason = f"cannot compose the message: {exc}"
            if message is None:
                _skip_draft(outreach, draft["id"], reason or "unknown")
                skipped[str(draft["id"])] = reason or "unknown"
                context.log.warning(f"draft {draft['id']} not sent: {reason}")
                continue
            mailer.send(message)
            record_sent(outreach, draft, to_iso(utc_now()))
            sent += 1
        written = append_episodes(memory, outreach_episodes(outreach, day), tz=tz)
        total = outreach.execute(
            "SELECT count(*) FROM drafts WHERE day = ? AND status = 'sent'", (day,)
        ).fetchone()[0]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "sent": sent,
            "resumed_after_crash": resumed,
            "skipped": skipped,
            "episodes_written": written.inserted,
            "mailer": mailer.backend,
        }
    )


def _regate_past_day(stores: StoresResource, mailer: Mailer, day: str) -> dg.MaterializeResult:
    """A past day's sends, re-gated and reported; nothing is sent or changed."""
    allow = [mailer.sender_name]
    counts = {"sent": 0, "unsent": 0, "failing_gate_now": 0}
    if stores.stores().path(OUTREACH).is_file():
        with stores.connect(OUTREACH, readonly=True) as outreach:
            for d in outreach.execute("SELECT * FROM drafts WHERE day = ? ORDER BY id", (day,)):
                counts["sent" if d["status"] == "sent" else "unsent"] += 1
                sources = json.loads(d["sources"])
                counts["failing_gate_now"] += bool(
                    gate_draft(d["subject"], d["body"], sources, allow)
                )
    return dg.MaterializeResult(
        metadata={"past_day": True, "dagster/row_count": counts["sent"], **counts}
    )


def _skip_draft(outreach, draft_id: int, reason: str) -> None:
    with transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET status = 'skipped', reason = ?, updated_at = ? WHERE id = ?",
            (reason, to_iso(utc_now()), draft_id),
        )
