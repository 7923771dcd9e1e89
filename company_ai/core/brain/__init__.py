"""The night's own memory: one day's facts, decisions and graph edges (`brain.db`),
and their export as plain Markdown with the timelines they touched."""

from company_ai.core.brain.export import ExportError, export_day, export_growth
from company_ai.core.brain.facts import synthesize_day
from company_ai.core.brain.rows import (
    RULE_IMPORTANCE,
    BrainDay,
    Fact,
    clamp_importance,
    top_items,
    write_day,
)

__all__ = [
    "BrainDay",
    "Fact",
    "ExportError",
    "RULE_IMPORTANCE",
    "clamp_importance",
    "export_day",
    "export_growth",
    "synthesize_day",
    "top_items",
    "write_day",
]
