"""Runs as the core sees them: one Dagster run and the asset checks it evaluated, as plain
records that the Dagster layer reads off its run history (ledger.py) and the reports and
the brain are built from.
"""

from __future__ import annotations

from dataclasses import dataclass

FAILED = ("FAILURE", "CANCELED")


CHECK_SEVERITIES = ("WARN", "ERROR")


@dataclass(frozen=True)
class CheckInfo:
    """One asset check evaluated in a run: passed or not, and how bad a failure is."""

    asset: str
    name: str
    passed: bool
    severity: str  # AssetCheckSeverity value: WARN or ERROR

    def __post_init__(self) -> None:
        if self.severity not in CHECK_SEVERITIES:
            raise ValueError(
                f"check {self.asset}/{self.name}: severity {self.severity!r} is not one of "
                f"{', '.join(CHECK_SEVERITIES)}"
            )


@dataclass(frozen=True)
class RunInfo:
    """One Dagster run, as the reports need it."""

    run_id: str
    job: str
    partition: str | None
    status: str  # DagsterRunStatus value: SUCCESS, FAILURE, CANCELED, STARTED, QUEUED…
    catchup_attempt: int | None = None  # set on runs the catch-up sensor launched
    error: str | None = None
    started_at: str | None = None  # ISO-8601 UTC, as stored (core/times.py)
    ended_at: str | None = None
    checks: tuple[CheckInfo, ...] = ()
    # A capture run that declined its partition and did nothing: why (its run tag)
    not_taken: str | None = None

    def label(self) -> str:
        return f"{self.job} {self.partition or '-'} (run {self.run_id[:8]})"
