"""The house's care of itself: the daily digest and morning brief, the alert queue,
key state as flat JSON, the daily audit of the CRM (counts, warmth bands, what is clean
enough to act on), snapshots and the restore drill, and forgetting one person
everywhere the system put them."""

from company_ai.core.ops.alerts import Report, latest_report
from company_ai.core.ops.audit import (
    BANDS_IN_WORDS,
    WARMTH_BANDS,
    Audit,
    AuditReport,
    StoredAudit,
    audit_crm,
    audit_report,
    audit_stores,
    band_of,
    is_actionable,
    is_valid_email,
    latest_audit,
    record_audit,
    stored_audit,
)
from company_ai.core.ops.forgetting import find_returned, forget
from company_ai.core.ops.reports import BriefInput, build_brief, build_digest
from company_ai.core.ops.snapshots import MANIFEST, restore_drill, take_snapshot
from company_ai.core.ops.state import StateExportError, export_state

__all__ = [
    "BANDS_IN_WORDS",
    "WARMTH_BANDS",
    "Audit",
    "AuditReport",
    "StoredAudit",
    "audit_crm",
    "audit_report",
    "audit_stores",
    "band_of",
    "is_actionable",
    "is_valid_email",
    "latest_audit",
    "record_audit",
    "stored_audit",
    "BriefInput",
    "Report",
    "latest_report",
    "MANIFEST",
    "StateExportError",
    "build_brief",
    "build_digest",
    "export_state",
    "find_returned",
    "forget",
    "restore_drill",
    "take_snapshot",
]
