from contextlib import nullcontext

import dagster as dg

from company_ai import days
from company_ai.constants import MEMORY, OWNER, REPLAY_META
from company_ai.core.episodes import DayAudit, audit_day, seal_day
from company_ai.core.schema import Store
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

EPISODE_CHECKS = {
    "episodes_are_unique": "No event is stored twice in the day under different natural keys.",
    "confidences_are_in_range": "Every episode's confidence is a number in [0, 1].",
    "episodes_fall_within_their_day": (
        "Every episode's created_at is well-formed ISO-8601 UTC and inside its day's window."
    ),
    "every_send_has_its_episode": (
        "Every message sent that day has its `outreach:message:<id>` episode in memory."
    ),
}


def _check_results(audit: DayAudit) -> list[dg.AssetCheckResult]:
    found = {
        "episodes_are_unique": [ids for ids in audit.duplicates],
        "confidences_are_in_range": audit.confidence_out_of_range,
        "episodes_fall_within_their_day": audit.outside_day,
        "every_send_has_its_episode": audit.sends_without_episode,
    }
    return [
        dg.AssetCheckResult(
            check_name=name,
            passed=not offenders,
            metadata={"offenders": len(offenders), "examples": str(offenders[:10])},
        )
        for name, offenders in found.items()
    ]


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    @dg.asset(
        partitions_def=setup.daily,
        group_name=MEMORY,
        kinds={"sqlite"},
        owners=[OWNER],
        pool="memory_db",
        metadata=REPLAY_META,
        check_specs=[
            dg.AssetCheckSpec(name, asset="contact_episodes", description=text)
            for name, text in EPISODE_CHECKS.items()
        ],
    )
    def contact_episodes(
        context: dg.AssetExecutionContext, stores: StoresResource
    ) -> dg.MaterializeResult:
        """The day's episodic memory: every dated receipt about a contact, sealed and audited.

        Source: the append-only `contact_episodes` table in `memory.db` (written by research,
        outreach, inbox, engagement and manual notes; every row carries `source` and
        `confidence`). Grain: one partition per local day; an episode belongs to the day it
        was recorded on. Materialising a day counts its episodes by type and source and
        records a seal (count, last id, sha256 digest) in `day_seals`, so later changes to a
        sealed day show up as a changed digest, and audits it (checks below), including that
        every message sent that day (`outreach.db`) has its episode. A replay: re-running a
        day only replaces its seal, and gives the same seal while the day's rows are unchanged.
        """
        day = days.one_day(context)
        sent = stores.stores().path(Store.OUTREACH).is_file()  # nothing was ever sent without it
        with (
            stores.connect(Store.MEMORY) as conn,
            stores.connect(Store.OUTREACH, readonly=True) if sent else nullcontext() as outreach,
        ):
            seal = seal_day(conn, day, now=setup.now())
            audit = audit_day(conn, day, setup.tz, outreach)
        if seal.changed:
            context.log.warning(f"day {day} changed since it was last sealed")
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": seal.episodes,
                "by_type": seal.by_type,
                "by_source": seal.by_source,
                "last_id": seal.last_id or 0,
                "digest": seal.digest,
                "changed_since_last_seal": seal.changed,
            },
            check_results=_check_results(audit),
        )

    return [contact_episodes]
