import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from company_ai import days
from company_ai.constants import CRM
from company_ai.core.crm import (
    BUDGET_S,
    MAX_PAGES,
    SyncError,
    Tombstones,
    sync_people,
)
from company_ai.core.ops import BANDS_IN_WORDS, audit_stores, find_returned, record_audit
from company_ai.core.store import Store, transaction
from company_ai.core.times import to_iso
from company_ai.refusals import refused_nothing, refused_nothing_spec
from company_ai.resources.people import PeopleSource
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

CURSOR = Path("cursors") / "crm_contacts.json"  # in the data directory


def assets(setup: Setup) -> list:
    """This module's assets, built for `setup` (its partitions, clock, settings)."""

    @days.capture_asset(
        partitions_def=setup.daily,
        group_name=CRM,
        kinds={"google", "sqlite"},
        pool="crm_db",
        check_specs=[
            dg.AssetCheckSpec(
                "forgotten_people_stay_forgotten",
                asset="crm_contacts",
                description="No person removed by `company-ai forget` is in the CRM again "
                "(a restored snapshot brings them back; the sync itself skips them).",
            ),
            refused_nothing_spec(
                "crm_contacts",
                "The latest sync refused no person and no page of the address book (a refused "
                "one is in crm.db's intake_refusals with its reason; the rest were synced).",
            ),
        ],
    )
    def crm_contacts(
        context: dg.AssetExecutionContext, stores: StoresResource, people: PeopleSource
    ) -> Iterator[dg.MaterializeResult]:
        """Contacts synced from the address book (Google People API, or the sample CRM offline)
        into `crm.db`, resuming from a cursor.

        A capture: it records the address book as it is when it runs, so it runs for its current day
        only; a past day is declined and recorded as not taken. Source: `people.connections.list`
        through `PeopleSource`, 1,000 people a page. Grain: each run stops itself after 15 pages or
        520 seconds of work (under the job's 600-second max runtime) and saves, after every page,
        the next page token to `<data dir>/cursors/crm_contacts.json` (atomically; at the end of a
        pass the sync token, so the next pass asks only for changes); the next run resumes there. An
        expired or invalid token (HTTP 400/410) clears the cursor and restarts from page one, as
        does an unreadable cursor file, and the metadata says so. Upserts are idempotent; every
        address is kept (one primary, in `contact_emails`); contacts deleted upstream are marked
        (`deleted_at`), never removed. People removed by `company-ai forget` are skipped
        (`forgotten` counts them), and the check fails if one is in the CRM again: `company-ai
        forget --reapply` removes them once more.

        Each pass belongs to crm.db: a cursor file from another pass (a restored backup, a
        copied file) is set aside and a full pass starts. Contacts are marked deleted for
        being absent only at the end of a full pass that read every page of its own, and
        never more than `max_deleted_share` of them at once (`deletions_held` counts the
        rest). Each person is read alone: one that cannot be read (hostile text, wrong
        types, no resourceName) is refused and recorded in `intake_refusals`, the rest are
        synced; a page that cannot be read is refused whole, and the next run asks again.
        `items_refused` counts them; the WARN check lists them.
        """
        if days.capture_day(context, setup, "the address book") is None:
            return
        with stores.connect(Store.CRM) as crm:
            try:
                report = sync_people(
                    people.fetcher(),
                    crm,
                    Path(stores.data_dir) / CURSOR,
                    source=people.source_name,
                    now=to_iso(days.clock(context, setup)()),
                    clock=time.monotonic,
                    max_pages=MAX_PAGES,
                    budget_s=BUDGET_S,
                    max_deleted_share=people.max_deleted_share,
                    log=context.log.warning,
                )
            except SyncError as exc:
                raise dg.Failure(
                    description=f"{exc}. Pages stored before it are kept; the cursor still "
                    "points at the page that failed, so the next run tries it again.",
                    allow_retries=False,
                ) from exc
        returned = find_returned(stores.stores(), Tombstones.load(stores.data_dir))
        yield dg.MaterializeResult(
            metadata=report.metadata(),
            check_results=[
                dg.AssetCheckResult(
                    check_name="forgotten_people_stay_forgotten",
                    passed=not returned,
                    # A count only: who they are must not reach Dagster's event log.
                    metadata={
                        "returned": len(returned),
                        "fix": "run `company-ai forget --reapply`" if returned else "none",
                    },
                ),
                refused_nothing("crm_contacts", report.reasons(), refused=len(report.refusals)),
            ],
        )

    # ops.db, not crm.db: the audit is a report about the CRM built from three stores
    # (crm, outreach's send holds, memory's episodes), not CRM data. crm.db keeps its
    # writers (the sync, imports, warmth rules); ops.db already holds what the system
    # says about itself, and these rows are counts that name no one, so `forget` and
    # the snapshot's shrink check of crm.db never have to know about them.
    @days.capture_asset(partitions_def=setup.daily, group_name=CRM, kinds={"sqlite"}, pool="ops_db")
    def crm_audit(
        context: dg.AssetExecutionContext, stores: StoresResource
    ) -> Iterator[dg.MaterializeResult]:
        """The CRM audit: contacts, the share cold / warm / hot, records clean enough to act
        on, the share with an email and the engagement rows, as they stand at 05:45.

        A capture: the CRM changes all day (the sync, imports, warmth bumps), so it counts the
        CRM as it is when it runs, for its current day only (a past day is declined as not
        taken). Source:
        `crm.db` (contacts not deleted upstream), the send holds in `outreach.db` and the
        `engagement` episodes in the memory (`core/ops/audit.py`). Warmth bands: cold 0-20,
        warm 21-60, hot 61-100. Actionable: a name, a valid email, not deleted, not held from
        sending. Grain: one row per run in `ops.db`'s `crm_audits` with its `recorded_at`
        (a re-run adds its moment); the morning brief, the state export and
        `company-ai audit` read the latest row recorded before their own moment.
        """
        day = days.capture_day(context, setup, "the CRM as it stands")
        if day is None:
            return
        now = to_iso(days.clock(context, setup)())
        audit = audit_stores(stores.stores(), now)
        with stores.connect(Store.OPS) as ops, transaction(ops):
            record_audit(ops, day, now, audit)
        yield dg.MaterializeResult(
            metadata={**audit.numbers(), "recorded_at": now, "warmth_bands": BANDS_IN_WORDS}
        )

    return [crm_contacts, crm_audit]
