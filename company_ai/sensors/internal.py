"""The only private Dagster imports in company_ai, isolated here.

Dagster 1.13 has no public asset-check-failure sensor, no public freshness state enum and
no public view of a schedule's on/off state; the UI itself reads these (see
../shared/notes/dagster-1.13.md §5). If an upgrade moves them, this is the one file to
change.
"""

from dagster._core.definitions.freshness import FreshnessState
from dagster._core.scheduler.instigation import InstigatorStatus, InstigatorType
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

__all__ = [
    "AssetCheckExecutionRecordStatus",
    "FreshnessState",
    "InstigatorStatus",
    "InstigatorType",
]
