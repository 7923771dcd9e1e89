from pathlib import Path

import dagster as dg

from company_ai import days
from company_ai.constants import CAPTURE_META, INBOX, OWNER
from company_ai.core.engagement import take_signals
from company_ai.core.inbox import next_cursor, read_cursor, triage, write_cursor
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.inbox import InboxSource
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup


def assets(setup: Setup) -> list:
    """This module's assets, built for `setup` (its partitions, clock, settings)."""

    @dg.asset(
        partitions_def=setup.daily,
        group_name=INBOX,
        kinds={"sqlite", "email"},
        owners=[OWNER],
        pool="outreach_db",
        metadata=CAPTURE_META,
    )
    def inbox_replies(
        context: dg.AssetExecutionContext, stores: StoresResource, inbox_source: InboxSource
    ) -> dg.MaterializeResult:
        """Replies, out-of-office notes and bounces to our outreach, matched to their threads.

        A capture: it reads the inbox as it is when it runs (mail since its cursor), so it
        runs for its current day only. Source: the Gmail API (read-only) or the local Maildir
        (`InboxSource`). Each message is matched to an outreach thread (In-Reply-To,
        References, then its sender) and acted on by the rules of `core/inbox.py`: the
        `inbound` row and the thread's hold (`send_holds`) in `outreach.db`, `replied_at` /
        `bounce_status` on the message, a `response` episode (text with quoted history and
        signature stripped) and, for a reply, the warmth rule's change in `crm.db` with a
        `scoring` episode saying why, in `memory.db`. Mail matching no thread is not stored;
        a reply whose From is not the thread's contact is not attributed. Grain: one run a
        day; every row is keyed by the provider's message id, so re-reading is harmless, and
        the cursor (`COMPANY_AI_INBOX_DIR/cursor.json`) moves, atomically, only when all was read.
        """
        days.require_current(context, setup, "the inbox")
        warn = context.log.warning
        cursor = Path(inbox_source.cursor)
        since = read_cursor(cursor, setup.now(), warn)
        fetched = inbox_source.fetch(since, warn)
        done = triage(
            stores.stores(),
            fetched.mails,
            source=inbox_source.source,
            tz=setup.tz,
            now=setup.now(),
            warn=warn,
        )
        after = next_cursor(fetched)
        if after is not None:
            write_cursor(cursor, after)
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": sum(done.matched.values()),
                "read": done.read,
                "matched": done.matched,
                "already_triaged": done.already_triaged,
                "unmatched_not_stored": done.unmatched,
                "forged_from_not_stored": done.forged,
                "unreadable": done.unreadable,
                "forgotten_dropped": done.forgotten,
                "read_failures": len(fetched.failures),
                "episodes_written": done.episodes_written,
                "warmth_changes": done.warmth_changes,
                "cursor_moved": after is not None,
                "inbox": inbox_source.backend,
            }
        )

    @dg.asset(
        partitions_def=setup.daily,
        group_name=INBOX,
        kinds={"sqlite", "json"},
        owners=[OWNER],
        pool="memory_db",
        metadata=CAPTURE_META,
    )
    def engagement_signals(
        context: dg.AssetExecutionContext, stores: StoresResource, engagement_drop: EngagementDrop
    ) -> dg.MaterializeResult:
        """Site visits, portal signups, social touches and email opens as `engagement` episodes.

        A capture: it takes the drop folder as it is when it runs, so it runs for its
        current day only. Source: JSON files (webhook payloads) dropped in
        `COMPANY_AI_ENGAGEMENT_DIR`; the format is in `core/engagement.py`. Each file is
        read alone and checked whole, inside bounds (size, digits, depth; regular files
        only): a good one becomes episodes in `memory.db` in one transaction (idempotent by
        the signal's id, or its hash) and moves to `processed/`; an email open also sets the
        message's `opened_at` in `outreach.db`. Any file that cannot be used moves whole to
        `rejected/` with its reason beside it (`<name>.why.txt`), counted here
        (`items_refused`, `reasons`) and listed by the WARN check
        `engagement_signals_refused_nothing`; the files behind it go on. A signal's time is
        the sender's claim: one in the future or before 1990 is kept as the run's time and
        flagged (`future_times`, `times_before_1990`), the claim kept in the episode's text.
        """
        days.require_current(context, setup, "the drop folder")
        done = take_signals(
            stores.stores(),
            Path(engagement_drop.folder),
            tz=setup.tz,
            now=setup.now(),
            warn=context.log.warning,
        )
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": done.episodes_written,
                "files": done.files,
                "processed": done.processed,
                "rejected": done.rejected,
                **done.taken.metadata(),
                "reasons": done.taken.reasons(),
                "future_times": done.future_times,
                "times_before_1990": done.times_before_1990,
                "not_moved": done.not_moved,
                "signals": done.signals,
                "episodes_written": done.episodes_written,
                "unknown_contacts": done.unknown_contacts,
                "opens_recorded": done.opens_recorded,
                "folder": dg.MetadataValue.path(engagement_drop.folder),
            }
        )

    @dg.asset_check(asset=engagement_signals, blocking=False)
    def engagement_signals_refused_nothing(
        context: dg.AssetCheckExecutionContext,
    ) -> dg.AssetCheckResult:
        """No drop file was refused in the latest run. WARN (never blocking) otherwise,
        listing each refused file and why; the files are in the drop folder's `rejected/`,
        each with its `<name>.why.txt`."""
        return refused_nothing(context, engagement_signals.key)

    return [inbox_replies, engagement_signals, engagement_signals_refused_nothing]


def refused_nothing(
    context: dg.AssetCheckExecutionContext, key: dg.AssetKey
) -> dg.AssetCheckResult:
    """The `<asset>_refused_nothing` verdict, from the asset's latest materialization's
    metadata (`items_refused`, `reasons`)."""
    event = context.instance.get_latest_materialization_event(key)
    meta = event.asset_materialization.metadata if event and event.asset_materialization else {}
    refused = meta["items_refused"].value if "items_refused" in meta else 0
    reasons = meta["reasons"].value if "reasons" in meta else {}
    return dg.AssetCheckResult(
        passed=not refused,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{refused} item(s) refused in the latest run" if refused else "none refused",
        metadata={"refused": refused, "reasons": reasons},
    )
