"""The night's own memory: one day's facts, decisions and graph edges (`brain.db`),
and their export as plain Markdown with the timelines they touched.

The names load on first use (PEP 562): a reader that needs only `RULE_IMPORTANCE` (the
vector memory's `similar`) does not pay for the synthesis and the export, which import the
outreach and gate code."""

from typing import TYPE_CHECKING

from company_ai.core.lazy import lazy_names

if TYPE_CHECKING:  # the type checker sees the names as plain imports
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

_HOMES = {
    "ExportError": "export",
    "export_day": "export",
    "export_growth": "export",
    "synthesize_day": "facts",
    "RULE_IMPORTANCE": "rows",
    "BrainDay": "rows",
    "Fact": "rows",
    "clamp_importance": "rows",
    "top_items": "rows",
    "write_day": "rows",
}

__all__ = [
    "BrainDay",
    "ExportError",
    "Fact",
    "RULE_IMPORTANCE",
    "clamp_importance",
    "export_day",
    "export_growth",
    "synthesize_day",
    "top_items",
    "write_day",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
