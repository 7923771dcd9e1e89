import warnings
from collections.abc import Iterator
from typing import Any

import dagster as dg

from company_ai import days
from company_ai.constants import OUTREACH
from company_ai.core import outreach
from company_ai.core.times import Day
from company_ai.refusals import refused_nothing, refused_nothing_spec
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

# Partitioned checks are a Dagster preview: without `partitions_def` the verdict would be
# stored as the asset's latest rather than against its day. The warning is known; hush it.


def _refused_pages(stores: StoresResource, day: str) -> dg.AssetCheckResult:
    """The day's refused pages as recorded (every run of the day lists them all)."""
    return refused_nothing("research_findings", outreach.research_refusals(stores.stores(), day))


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    @days.capture_asset(
        partitions_def=setup.workdays,
        group_name=OUTREACH,
        kinds={"sqlite"},
        pool="outreach_db",
        check_specs=[
            refused_nothing_spec(
                "research_findings",
                "No company page of the day was refused. WARN otherwise, listing each refused "
                "page's contact and reason (recorded in outreach.db's intake_refusals); the "
                "rest of the day's research stands.",
            )
        ],
    )
    def research_findings(
        context: dg.AssetExecutionContext,
        stores: StoresResource,
        llm: LLMResource,
        research_source: ResearchSource,
    ) -> Iterator[dg.MaterializeResult]:
        """The day's research: at most 20 contacts, their company page read and summarised.

        A capture: it reads the web as it is when it runs. Its partition is the weekday the
        work is done; a past day is declined, recorded as not taken, and never researched
        late. Source: the CRM row and the company's page (`ResearchSource`), summarised by
        the language model (`LLMResource`). Grain: one partition per local day; the day's
        picks (the selection rule is in `core/outreach/research.py`) are stored in
        `research_picks` in `outreach.db` the first time the day runs, so the cap of 20
        holds through re-runs and backfills. Each fact becomes a `research` or `company`
        episode in `memory.db`, sourced `web:<domain>` when the page says it verbatim
        (confidence 0.9) or to the model (0.6). The model may propose CRM corrections; only
        city, title and company are ever written to `crm.db`, every other proposal is
        rejected, logged and counted here. A page that cannot be read safely (a private or
        odd address on any hop, past the deadline or the size cap, not text) is refused for
        its contact with its reason: counted here (`items_refused`, `reasons`), recorded in
        `intake_refusals` in `outreach.db`, listed by `research_findings_refused_nothing`.
        Page addresses are logged and stored without their credentials.
        """
        day = days.capture_day(context, setup, "the web")
        if day is None:
            return
        done = outreach.research_day(
            stores.stores(),
            Day.of(day, setup.tz),
            model=llm,
            pages=research_source,
            clock=days.clock(context, setup),
            warn=context.log.warning,
        )
        yield dg.MaterializeResult(
            metadata={
                "dagster/row_count": done.picked,
                "picked": done.picked,
                "researched": done.researched,
                "skipped": done.skipped,
                "skip_reasons": done.skip_reasons,
                "episodes_written": done.episodes_written,
                "writeback_applied": done.writeback_applied,
                "writeback_rejected": sum(done.writeback_rejected.values()),
                "writeback_rejected_columns": done.writeback_rejected,
                **done.pages.metadata(),
                "reasons": done.pages.reasons(),
            },
            check_results=[_refused_pages(stores, day)],
        )

    @days.capture_asset(
        partitions_def=setup.workdays,
        group_name=OUTREACH,
        kinds={"sqlite"},
        pool="outreach_db",
        deps=[research_findings],
    )
    def outreach_drafts(
        context: dg.AssetExecutionContext, stores: StoresResource, llm: LLMResource, mailer: Mailer
    ) -> Iterator[dg.MaterializeResult]:
        """The day's email drafts: at most 10, each built from one contact's dossier.

        Source: the day's researched contacts (`research_picks`), each contact's dossier
        (`build_dossier`, memory.db) and research findings, written by the language model.
        Grain: one partition per local day, one draft per contact, in the `drafts` table of
        `outreach.db` with its subject, body, angle, the dossier and the exact source material
        the model was given, and the fabrication gate's verdict: a draft naming a number or a
        name its material does not support is quarantined with its unsupported claims and is
        never sent. Drafts with HTML or header-injection characters are skipped with a reason.
        A follow-up reuses the contact's open thread; a third bump is never drafted. A capture
        (drafts are written from the memory as it is that morning): a past day is declined
        and recorded as not taken, and nothing is drafted for it.
        """
        day = days.capture_day(context, setup, "drafts from the memory as it is")
        if day is None:
            return
        done = outreach.draft_day(
            stores.stores(),
            day,
            model=llm,
            sender=mailer,
            clock=days.clock(context, setup),
            warn=context.log.warning,
        )
        yield dg.MaterializeResult(
            metadata={
                "dagster/row_count": done.already_drafted + done.drafted,
                "drafted": done.drafted,
                "passed": done.stored["ready"],
                "quarantined": done.stored["quarantined"],
                "skipped": done.stored["skipped"],
                "already_drafted": done.already_drafted,
                "not_drafted": done.not_drafted,
            }
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)

        @dg.asset_check(asset=outreach_drafts, blocking=True, partitions_def=setup.workdays)
        def fabrication_gate(
            context: dg.AssetCheckExecutionContext, stores: StoresResource, mailer: Mailer
        ) -> dg.AssetCheckResult:
            """Every unquarantined draft of the day says only what its source material says.

            Reads the gate's verdict (`core.gate`, pure code, no model) on every stored draft of
            the day against the material stored with it: the stored verdict while its fingerprint
            matches the row, else the gate judges the draft again (counted as `rejudged`: an
            edited draft or verdict, a renamed sender, a newer gate). WARN if drafts were
            quarantined (the passing drafts still go out); ERROR, blocking every send in the
            run, if any draft that is not quarantined has an unsupported claim. The `drafts`
            table lists each held claim, the leaking drafts' first: the draft, its contact
            (name and email), the sentence with the claim in bold and why no source supports
            it; at most 25 rows, then how many more.
            """
            found = outreach.check_day(stores.stores(), context.partition_key, sender=mailer)
            metadata: dict[str, Any] = {
                "drafts_checked": found.checked,
                "quarantined": len(found.quarantined),
                "unquarantined_with_claims": len(found.leaking),
                "rejudged": found.rejudged,
                "drafts": dg.MetadataValue.md(found.table()),
            }
            if found.leaking:
                return dg.AssetCheckResult(
                    passed=False,
                    severity=dg.AssetCheckSeverity.ERROR,
                    metadata=metadata,
                    description=(
                        f"{len(found.leaking)} unquarantined draft(s) make unsupported claims"
                    ),
                )
            if found.quarantined:
                return dg.AssetCheckResult(
                    passed=False,
                    severity=dg.AssetCheckSeverity.WARN,
                    metadata=metadata,
                    description=(
                        f"{len(found.quarantined)} draft(s) quarantined; the rest may go out"
                    ),
                )
            return dg.AssetCheckResult(passed=True, metadata=metadata)

    @days.capture_asset(
        partitions_def=setup.workdays,
        group_name=OUTREACH,
        kinds={"sqlite", "email"},
        pool="outreach_db",
        deps=[outreach_drafts],
    )
    def outreach_messages(
        context: dg.AssetExecutionContext, stores: StoresResource, mailer: Mailer
    ) -> Iterator[dg.MaterializeResult]:
        """The day's sent email: every gated draft that passed, sent once through the mailer.

        Source: the day's `ready` drafts (and any left `sending` by a crash). Grain: one
        partition per local day; each send is one row in `messages` (`outreach.db`, linked to
        its draft) and one `outreach` episode (`memory.db`, natural key
        `outreach:message:<id>`). A send is a ledger (see `core/drafting.py`): the Message-ID
        is fixed before sending and the mailer is asked before any resend, and every run
        re-appends missing episodes, so a re-run or a crash never sends twice or loses an
        episode. Just before sending, a draft's gate verdict is re-read (judged again if it no
        longer holds for the draft: see `core/drafting.py`) and its contact re-checked (email,
        bounce, anything sent to them by any day: a thread's bump goes out once, and nobody
        gets two messages in the quiet period); anything doubtful is skipped with its reason,
        never sent. A draft whose contact is outside working hours (a weekday 09:00-17:00 in
        their city's timezone, else the owner's) is held with the moment they begin
        (`drafts.due_at`, counted as `held`); `held_sends_sensor` sends it then. Sending is a
        capture: a past day is declined and recorded as not taken, and sends nothing.
        """
        day = days.capture_day(context, setup, "sent mail")
        if day is None:
            return
        done = outreach.send_day(
            stores.stores(),
            day,
            tz=setup.tz,
            mailer=mailer,
            clock=days.clock(context, setup),
            warn=context.log.warning,
        )
        yield dg.MaterializeResult(
            metadata={
                "dagster/row_count": done.sent_in_total,
                "sent": done.sent,
                "resumed_after_crash": done.resumed_after_crash,
                "skipped": done.skipped,
                "held": done.held,
                "episodes_written": done.episodes_written,
                "mailer": mailer.backend,
            }
        )

    return [
        research_findings,
        outreach_drafts,
        fabrication_gate,
        outreach_messages,
    ]
