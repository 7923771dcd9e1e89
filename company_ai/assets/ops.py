from datetime import timedelta

import dagster as dg

from company_ai import ledger, settings
from company_ai.constants import DAILY, OPS, OWNER
from company_ai.core import snapshots
from company_ai.core.reports import BriefInput, build_brief, build_digest
from company_ai.core.state import StateExportError, export_state
from company_ai.core.times import to_iso
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from company_ai.resources.stores import StoresResource
from company_ai.schedules import TIMETABLE

DIGEST_WINDOW = timedelta(hours=24)
BRIEF_WINDOW = timedelta(hours=12)  # "overnight": since 18:00 for the 06:00 brief


def _delivery(result) -> dict:
    return {"delivered": result.error is None, "alerts_pending": result.pending}


@dg.asset(partitions_def=DAILY, group_name=OPS, kinds={"python"}, owners=[OWNER], pool="ops_db")
def daily_digest(context: dg.AssetExecutionContext, notifier: Notifier) -> dg.MaterializeResult:
    """What ran, what failed, what was missed and what was recovered in the last 24 hours.

    Source: Dagster's own run records (the ledger) set against the expected timetable
    (`schedules.TIMETABLE`), so a slot that never ran shows up although it left no record.
    Grain: one digest per day at 09:05, sent through the notifier and kept as metadata.
    Absence of the digest means the scheduler is dark: nothing else will say so.
    """
    until = ledger.now()
    since = until - DIGEST_WINDOW
    runs = ledger.runs_since(context.instance, since, exclude=context.run.run_id)
    digest = build_digest(
        runs, ledger.missed(context.instance, TIMETABLE, since, until), since, until
    )
    text = digest.render()
    sent = notifier.send(f"digest:{context.partition_key}", text)
    return dg.MaterializeResult(
        metadata={
            "digest": dg.MetadataValue.md(f"```\n{text}\n```"),
            "ran": len(digest.ran),
            "failed": len(digest.failed),
            "missed": len(digest.missed),
            "recovered": len(digest.recovered),
            **_delivery(sent),
        }
    )


@dg.asset(partitions_def=DAILY, group_name=OPS, kinds={"python"}, owners=[OWNER], pool="ops_db")
def morning_brief(
    context: dg.AssetExecutionContext, stores: StoresResource, notifier: Notifier
) -> dg.MaterializeResult:
    """What happened overnight, in one message at 06:00, sent through the notifier.

    Source: Dagster's run records of the last 12 hours (runs and failures) and whichever
    stores exist so far (replies in `outreach.db`, brain facts, drafts, stale recall
    pages): each section comes from `core.reports.BRIEF_SECTIONS` and is left out while
    its table does not exist. Grain: one brief per day, kept as metadata.
    """
    until = ledger.now()
    since = until - BRIEF_WINDOW
    runs = ledger.runs_since(context.instance, since, exclude=context.run.run_id)
    text = build_brief(
        BriefInput(stores.stores(), since, until, runs, settings.recall_stale_days())
    )
    sent = notifier.send(f"brief:{context.partition_key}", text)
    return dg.MaterializeResult(
        metadata={"brief": dg.MetadataValue.md(f"```\n{text}\n```"), **_delivery(sent)}
    )


@dg.asset(partitions_def=DAILY, group_name=OPS, kinds={"json"}, owners=[OWNER])
def state_export(
    context: dg.AssetExecutionContext, stores: StoresResource, ops_folders: OpsFolders
) -> dg.MaterializeResult:
    """Key state as flat JSON files for any reader: row counts per store and table, episodes
    by type and the last sealed day, messages and replies, pending alerts, the latest snapshot.

    Source: the domain stores (read-only) and the snapshot folder. Grain: the files are
    rewritten each morning at 06:15 in `COMPANY_AI_STATE_DIR`, each atomically (a temporary
    file, then `os.replace`), so a reader never sees a half-written file.
    """
    try:
        state = export_state(
            stores.stores(), ops_folders.state_dir, ops_folders.snapshot_dir, to_iso(ledger.now())
        )
    except StateExportError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    return dg.MaterializeResult(
        metadata={
            "folder": dg.MetadataValue.path(ops_folders.state_dir),
            "files": sorted(state),
        }
    )


@dg.asset(partitions_def=DAILY, group_name=OPS, kinds={"sqlite"}, owners=[OWNER])
def db_snapshots(
    context: dg.AssetExecutionContext, stores: StoresResource, ops_folders: OpsFolders
) -> dg.MaterializeResult:
    """Daily snapshots of every domain store, made with SQLite's online backup API.

    Source: the `*.db` files under the data directory, copied while writers keep writing.
    Grain: one folder per day, `COMPANY_AI_SNAPSHOT_DIR/<day>/`, holding the copies and
    `manifest.json` (file, size, sha256, row counts per table), published whole by a
    rename; the newest `COMPANY_AI_SNAPSHOT_RETENTION` folders are kept. The monthly
    `restore_drill` check restores the latest one and proves it.
    """
    try:
        manifest = snapshots.take_snapshot(
            stores.stores(),
            ops_folders.snapshot_dir,
            context.partition_key,
            keep=ops_folders.snapshot_retention,
        )
    except snapshots.SnapshotError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    return dg.MaterializeResult(
        metadata={
            "folder": dg.MetadataValue.path(str(manifest.folder)),
            "files": len(manifest.files),
            "bytes": manifest.bytes,
            "rows": {f["file"]: sum(f["tables"].values()) for f in manifest.files},
        }
    )


@dg.asset_check(asset=db_snapshots, blocking=False)
def restore_drill(ops_folders: OpsFolders) -> dg.AssetCheckResult:
    """Restores the latest snapshot into a temporary folder: checksums, integrity_check and
    row counts against the manifest. Monthly (restore_drill_job); a failure is alerted."""
    report = snapshots.restore_drill(ops_folders.snapshot_dir)
    if not report.passed:
        dg.get_dagster_logger().error(
            f"RESTORE DRILL FAILED for snapshot {report.snapshot}: {'; '.join(report.problems)}"
        )
    return dg.AssetCheckResult(
        passed=report.passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(report.problems) or f"snapshot {report.snapshot} restores cleanly",
        metadata={"snapshot": report.snapshot or "-", "restored": report.restored},
    )
