from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import dagster as dg

from company_ai import days, ledger
from company_ai.constants import OPS, OWNER, REPLAY_META
from company_ai.core.ops import (
    BriefInput,
    StateExportError,
    build_brief,
    build_digest,
    export_state,
    snapshots,
)
from company_ai.core.times import Day, to_iso
from company_ai.core.timetable import TIMETABLE, ticks_around
from company_ai.refusals import refused_nothing, refused_nothing_spec
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

DIGEST_WINDOW = timedelta(hours=24)
DIGEST_MAX_WINDOW = timedelta(days=7)  # after a long outage, the digest covers up to a week
BRIEF_WINDOW = timedelta(hours=12)  # "overnight": since 18:00 for the 06:00 brief


class SnapshotConfig(dg.Config):
    # The stores shrank on purpose (a clean-up): take every readable store as its new last
    # good generation, and drop a store that is gone from the data directory.
    accept_shrink: bool = False


def _report(
    context: dg.AssetExecutionContext,
    setup: Setup,
    notifier: Notifier,
    key: str,
    day: str,
    text: str,
) -> dict:
    """Send a report once, and only from its own day's run: a backfill, catch-up or
    re-execution of a past day records the text and notifies no one."""
    asset = context.asset_key.to_user_string()
    if not days.is_current(setup, asset, day, days.clock(context, setup)()):
        return {"delivered": False, "not_sent": "a replay of a past day: only its own run sends"}
    result = notifier.send(key, text)
    return {"delivered": result.error is None, "alerts_pending": result.pending}


def _digest_since(
    instance: dg.DagsterInstance, setup: Setup, day: str, until: datetime
) -> datetime:
    """Where the digest's window starts: 24 hours back, or further (up to a week) when the
    last digest made before `until` is older, so an outage's days are not skipped."""
    since = until - DIGEST_WINDOW
    previous = ledger.last_done_before(
        instance, days.entry_of("daily_digest"), until, day, played=setup.settings.played_clock
    )
    if previous:
        since = min(since, days.scheduled_until(setup, "daily_digest", previous))
    return max(since, until - DIGEST_MAX_WINDOW)


def _growth_before(setup: Setup, moment: datetime) -> Day:
    """The window of the growth analysis' last tick at or before `moment`: the brief and the
    state export show the figures that tick gave (05:30, before their own)."""
    slot = days.entry_of("outreach_growth").slot
    tick = ticks_around(slot, moment, setup.tz)[0]
    return days.window(setup, "outreach_growth", slot.partition(tick, setup.tz))


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    @dg.asset(
        partitions_def=setup.daily,
        group_name=OPS,
        kinds={"python"},
        owners=[OWNER],
        pool="ops_db",
        metadata=REPLAY_META,
    )
    def daily_digest(context: dg.AssetExecutionContext, notifier: Notifier) -> dg.MaterializeResult:
        """What ran, what failed, what was missed or not taken and what was recovered: a replay.

        Source: Dagster's own run records (the ledger) set against the expected timetable
        (`core.timetable.TIMETABLE`), so a slot that never ran shows up although it left no
        record. Grain: one digest per day; its window ends at that day's 09:05 tick (not at
        now) and starts 24 hours before, or at the previous digest after an outage, so
        re-materialising a day gives what that morning gave. Only the day's own run sends it
        through the notifier; a backfill never does. Recurring warnings (quarantined drafts)
        are counted here rather than alerted each day. Absence of the digest means the
        scheduler is dark: nothing else will say so.
        """
        day = days.one_day(context)
        until = days.scheduled_until(setup, "daily_digest", day)
        since = _digest_since(context.instance, setup, day, until)
        runs = ledger.runs_between(
            context.instance, since, until, context.run.run_id, played=setup.settings.played_clock
        )
        missed = ledger.missed_between(context.instance, TIMETABLE, since, until, setup.settings)
        late = ledger.late_captures(TIMETABLE, missed, until, setup.tz)
        digest = build_digest(
            runs,
            [m for m in missed if (m.job, m.partition) not in late],
            since,
            until,
            not_taken=[m for m in missed if (m.job, m.partition) in late],
        )
        text = digest.render()
        return dg.MaterializeResult(
            metadata={
                "digest": dg.MetadataValue.md(f"```\n{text}\n```"),
                "ran": len(digest.ran),
                "failed": len(digest.failed),
                "missed": len(digest.missed),
                "not_taken": len(digest.not_taken) + len(digest.declined),
                "recovered": len(digest.recovered),
                "warnings": sum(digest.warnings.values()),
                **_report(context, setup, notifier, f"digest:{day}", day, text),
            }
        )

    @dg.asset(
        partitions_def=setup.daily,
        group_name=OPS,
        kinds={"python"},
        owners=[OWNER],
        pool="ops_db",
        metadata=REPLAY_META,
    )
    def morning_brief(
        context: dg.AssetExecutionContext, stores: StoresResource, notifier: Notifier
    ) -> dg.MaterializeResult:
        """What happened overnight, in one message at 06:00: a replay.

        Source: Dagster's run records of the 12 hours before that day's 06:00 tick (runs and
        failures) and the stores as of that moment (replies, drafts waiting or quarantined,
        the night's most important brain facts, stale recall pages, the growth analysis'
        headline as its 05:30 tick gave it, the latest CRM audit recorded before 06:00): each
        section comes from `core.reports.BRIEF_SECTIONS` and is left out while its table does
        not exist. Grain: one brief per day, kept as metadata; only the day's own run sends it.
        """
        day = days.one_day(context)
        until = days.scheduled_until(setup, "morning_brief", day)
        since = until - BRIEF_WINDOW
        runs = ledger.runs_between(
            context.instance, since, until, context.run.run_id, played=setup.settings.played_clock
        )
        brain_day = days.last_partition_before(setup, "brain_facts", until)
        text = build_brief(
            BriefInput(
                stores.stores(),
                since,
                until,
                runs,
                setup.settings.recall_stale_days,
                brain_day,
                _growth_before(setup, until),
            )
        )
        return dg.MaterializeResult(
            metadata={
                # The brief names people: it goes to the notifier, never into Dagster's
                # event log, which cannot forget anyone (`company-ai forget`).
                "brief_lines": len(text.splitlines()),
                **_report(context, setup, notifier, f"brief:{day}", day, text),
            }
        )

    @days.capture_asset(partitions_def=setup.daily, group_name=OPS, kinds={"json"})
    def state_export(
        context: dg.AssetExecutionContext, stores: StoresResource, ops_folders: OpsFolders
    ) -> Iterator[dg.MaterializeResult]:
        """Key state as flat JSON files for any reader: row counts per store and table, episodes
        by type and the last sealed day, messages and replies, the growth analysis' headline,
        the latest CRM audit, pending alerts, the latest snapshot.

        A capture: it records the stores as they are when it runs, so it runs for its
        current day only; a past day is declined and recorded as not taken. Source: the
        domain stores (read-only) and the snapshot folder. Grain: the files are rewritten
        each morning at 06:15 in `COMPANY_AI_STATE_DIR`, each atomically (a temporary file,
        then `os.replace`), so a reader never sees a half-written file.
        """
        if days.capture_day(context, setup, "the stores' state") is None:
            return
        now = days.clock(context, setup)()
        try:
            state = export_state(
                stores.stores(),
                Path(ops_folders.state_dir),
                Path(ops_folders.snapshot_dir),
                to_iso(now),
                _growth_before(setup, now),
            )
        except StateExportError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        yield dg.MaterializeResult(
            metadata={
                "folder": dg.MetadataValue.path(ops_folders.state_dir),
                "files": sorted(state),
            }
        )

    @days.capture_asset(
        partitions_def=setup.daily,
        group_name=OPS,
        kinds={"sqlite"},
        check_specs=[
            refused_nothing_spec(
                "db_snapshots",
                "Fails (ERROR) when a store was set aside instead of snapshotted: "
                "a table vanished, its rows fell sharply, or the file is gone or unreadable. "
                "Names the store, the table and why; the store's last good generation is kept.",
            )
        ],
    )
    def db_snapshots(
        context: dg.AssetExecutionContext,
        config: SnapshotConfig,
        stores: StoresResource,
        ops_folders: OpsFolders,
    ) -> Iterator[dg.MaterializeResult]:
        """Daily snapshots of every domain store, made with SQLite's online backup API (a
        store in PostgreSQL: a logical dump of its schema, `pg_dump --format=custom`).

        A capture: it copies the stores as they are when it runs, so it runs for its current
        day only; a past day is declined and recorded as not taken (a missed snapshot is
        reported, never faked).
        Source: the `*.db` files under the data directory, copied while writers keep writing,
        and the stores' schemas in `COMPANY_AI_DATABASE_URL`, dumped in one consistent view.
        Grain: one folder per day, `COMPANY_AI_SNAPSHOT_DIR/<day>/`, holding the copies and
        `manifest.json` (file, size, sha256, row counts per table, and each store's last good
        day), published whole by a rename. Each store is judged alone against its last good
        generation: one whose table vanished, whose rows (a table's or the store's) fell
        under half, or whose file is gone or unreadable is set aside (its copy under
        `<day>/suspect/`), keeps its last good generation and fails the check
        `db_snapshots_refused_nothing`; the other stores are taken. A shrink on purpose is
        taken with the run config `accept_shrink: true`. The newest
        `COMPANY_AI_SNAPSHOT_RETENTION` days are kept, and always each store's last good
        one. The monthly `restore_drill` check restores each store's last good generation.
        """
        day = days.capture_day(context, setup, "every store's content")
        if day is None:
            return
        try:
            manifest = snapshots.take_snapshot(
                stores.stores(),
                Path(ops_folders.snapshot_dir),
                day,
                keep=ops_folders.snapshot_retention,
                now=days.clock(context, setup)(),
                allow_shrink=config.accept_shrink,
            )
        except snapshots.SnapshotError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        refused = manifest.refused
        if refused:
            context.log.error(f"stores set aside, their last good generation kept: {refused}")
        yield dg.MaterializeResult(
            metadata={
                "folder": dg.MetadataValue.path(str(manifest.folder)),
                "files": len(manifest.files),
                "bytes": manifest.bytes,
                "rows": {f["file"]: sum(f["tables"].values()) for f in manifest.files},
                "items_refused": len(refused),
                "reasons": refused,
                "last_good": manifest.last_good,
            },
            check_results=[
                refused_nothing(
                    "db_snapshots",
                    refused,
                    # ERROR: a store without a fresh backup is alerted at once (sensors/
                    # alerts.py) and counted in the digest; non-blocking, the others are taken.
                    severity=dg.AssetCheckSeverity.ERROR,
                )
            ],
        )

    @dg.asset_check(asset=db_snapshots, blocking=False)
    def restore_drill(ops_folders: OpsFolders, stores: StoresResource) -> dg.AssetCheckResult:
        """Restores each store's last good generation (as the latest manifest names it) into a
        temporary folder: checksums, integrity_check and row counts against the manifest; a
        store's PostgreSQL dump into a scratch database on the server (row counts, the
        append-only guards refusing), dropped afterwards.
        Monthly (restore_drill_job); a failure is alerted."""
        report = snapshots.restore_drill(
            Path(ops_folders.snapshot_dir), stores.stores().database_url
        )
        if not report.passed:
            dg.get_dagster_logger().error(
                f"RESTORE DRILL FAILED for snapshot {report.snapshot}: {'; '.join(report.problems)}"
            )
        return dg.AssetCheckResult(
            passed=report.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description="; ".join(report.problems)
            or f"snapshot {report.snapshot} restores cleanly",
            metadata={"snapshot": report.snapshot or "-", "restored": report.restored},
        )

    return [daily_digest, morning_brief, state_export, db_snapshots, restore_drill]
