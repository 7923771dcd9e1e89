"""The morning outreach, one day at a time: who is researched and what is read
about them (a company's web page), the drafts and their gate verdicts, the send rules
that hold a contact back, the sending, and the growth of the trailing weeks (what was sent
and what came back, by week and angle)."""

from company_ai.core.outreach.day import (
    check_day,
    draft_day,
    due_drafts,
    research_day,
    research_refusals,
    send_day,
    send_due,
)
from company_ai.core.outreach.drafting import source_material
from company_ai.core.outreach.growth import (
    Growth,
    Headline,
    count_growth,
    growth_frame,
    plain_table,
    to_markdown,
)
from company_ai.core.outreach.research import (
    MAX_BUMPS,
    MAX_PAGE_BYTES,
    RECENT_DAYS,
    RESEARCH_COOLDOWN_DAYS,
    WRITEBACK_COLUMNS,
    offline_research,
    page_text,
    read_page,
    readable_text,
)
from company_ai.core.outreach.send_rules import (
    WORK_END_HOUR,
    WORK_START_HOUR,
    Hold,
    add_hold,
    contact_timezone,
    hold_reason,
    read_holds,
)
from company_ai.core.outreach.web import WebPages, check_domain

__all__ = [
    "Growth",
    "Headline",
    "Hold",
    "MAX_BUMPS",
    "MAX_PAGE_BYTES",
    "RECENT_DAYS",
    "RESEARCH_COOLDOWN_DAYS",
    "WORK_END_HOUR",
    "WORK_START_HOUR",
    "WRITEBACK_COLUMNS",
    "WebPages",
    "add_hold",
    "check_day",
    "check_domain",
    "contact_timezone",
    "count_growth",
    "draft_day",
    "due_drafts",
    "growth_frame",
    "hold_reason",
    "offline_research",
    "page_text",
    "plain_table",
    "read_page",
    "read_holds",
    "readable_text",
    "research_day",
    "research_refusals",
    "send_day",
    "send_due",
    "source_material",
    "to_markdown",
]
