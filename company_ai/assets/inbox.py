from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from company_ai import days
from company_ai.constants import INBOX
from company_ai.core.inbox import read_cursor, take_signals, taken_keys, triage, write_cursor
from company_ai.refusals import refused_nothing, refused_nothing_spec
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.inbox import InboxSource
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

# The kinds of matched mail that are a person's answer (core/inbox/replies.py sets
# `replied_at` for them); out-of-office notes and bounces are not replies.
ANSWERS = ("reply", "not_now", "unsubscribe")


def assets(setup: Setup) -> list:
    """This module's assets, built for `setup` (its partitions, clock, settings)."""

    @days.capture_asset(
        partitions_def=setup.daily,
        group_name=INBOX,
        kinds={"sqlite", "email"},
        pool="outreach_db",
        check_specs=[
            refused_nothing_spec(
                "inbox_replies",
                "No mail was refused in this triage. WARN otherwise, listing each refused "
                "mail's provider id and why (recorded in outreach.db's intake_refusals and not "
                "read again; the rest of the mail was triaged).",
            )
        ],
    )
    def inbox_replies(
        context: dg.AssetExecutionContext, stores: StoresResource, inbox_source: InboxSource
    ) -> Iterator[dg.MaterializeResult]:
        """Replies, out-of-office notes and bounces to our outreach, matched to their threads.

        A capture: it reads the inbox as it is when it runs, so it runs for its current day
        only; a past day is declined and recorded as not taken. Source: the Gmail API
        (read-only, by the History API from the checkpointed `historyId`) or the local
        Maildir (by its keys) (`InboxSource`): mail already stored, refused or seen is not
        read again; a mail's own time is data, never the cursor. Each message is matched to
        an outreach thread (In-Reply-To, References, then its sender, any address the
        contact owns) and acted on by the rules of `core/inbox/replies.py`: the `inbound`
        row (once per Message-ID) and the thread's hold (`send_holds`) in `outreach.db`,
        `replied_at` / `bounce_status` on the message, a `response` episode (text with
        quoted history and signature stripped) and, for a reply, the warmth rule's change in
        `crm.db` with a `scoring` episode saying why, in `memory.db`. A bounce is a
        delivery-status report for a message we sent, failing for the address we sent it to;
        a read receipt only marks the message opened. Mail matching no thread is not stored
        (its key only); a reply whose From is not the thread's contact is not attributed. A
        mail that cannot be read (too big, nested too deep, unparsable) is refused: recorded
        in `intake_refusals` with its reason, counted in `items_refused`, listed by
        `inbox_replies_refused_nothing`.
        """
        if days.capture_day(context, setup, "the inbox") is None:
            return
        warn = context.log.warning
        now = days.clock(context, setup)()
        cursor = Path(inbox_source.cursor)
        history_id = read_cursor(cursor, warn) if inbox_source.backend == "gmail" else None
        fetched = inbox_source.fetch(history_id, taken_keys(stores.stores()), now, warn)
        done = triage(
            stores.stores(),
            fetched.mails,
            source=inbox_source.source,
            tz=setup.tz,
            now=now,
            warn=warn,
        )
        moved = fetched.history_id is not None and fetched.history_id != history_id
        if moved and fetched.history_id is not None:
            write_cursor(cursor, fetched.history_id)
        yield dg.MaterializeResult(
            metadata={
                "dagster/row_count": sum(done.matched.values()),
                **done.metadata(),
                # People's answers (they set `replied_at`): the figure the UI plots.
                "replies": sum(done.matched.get(k, 0) for k in ANSWERS),
                "read_failures": len(fetched.failures),
                "cursor_moved": moved,
                "inbox": inbox_source.backend,
            },
            check_results=[
                refused_nothing("inbox_replies", done.taken.reasons(), refused=done.taken.refused)
            ],
        )

    @days.capture_asset(
        partitions_def=setup.daily,
        group_name=INBOX,
        kinds={"sqlite", "json"},
        pool="memory_db",
        check_specs=[
            refused_nothing_spec(
                "engagement_signals",
                "No drop file was refused in this run. WARN otherwise, listing each refused "
                "file and why; the files are in the drop folder's rejected/, each with its "
                "<name>.why.txt.",
            )
        ],
    )
    def engagement_signals(
        context: dg.AssetExecutionContext, stores: StoresResource, engagement_drop: EngagementDrop
    ) -> Iterator[dg.MaterializeResult]:
        """Site visits, portal signups, social touches and email opens as `engagement` episodes.

        A capture: it takes the drop folder as it is when it runs, so it runs for its
        current day only; a past day is declined and recorded as not taken. Source: JSON
        files (webhook payloads) dropped in `COMPANY_AI_ENGAGEMENT_DIR`; the format is in
        `core/inbox/engagement.py`. Each file is read alone and checked whole, inside bounds
        (size, digits, depth; regular files only): a good one becomes episodes in
        `memory.db` in one transaction (idempotent by the signal's id, or its hash) and
        moves to `processed/`; an email open also sets the message's `opened_at` in
        `outreach.db`. Any file that cannot be used moves whole to `rejected/` with its
        reason beside it (`<name>.why.txt`), counted here (`items_refused`, `reasons`) and
        listed by the WARN check `engagement_signals_refused_nothing`; the files behind it
        go on. A signal's time is the sender's claim: one in the future or before 1990 is
        kept as the run's time and flagged (`future_times`, `times_before_1990`), the claim
        kept in the episode's text.
        """
        if days.capture_day(context, setup, "the drop folder") is None:
            return
        done = take_signals(
            stores.stores(),
            Path(engagement_drop.folder),
            tz=setup.tz,
            now=days.clock(context, setup)(),
            warn=context.log.warning,
        )
        yield dg.MaterializeResult(
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
            },
            check_results=[
                refused_nothing(
                    "engagement_signals", done.taken.reasons(), refused=done.taken.refused
                )
            ],
        )

    return [inbox_replies, engagement_signals]
