"""Names shared by the Dagster layer: groups, owners, partitions, the replay/capture tag."""

from __future__ import annotations

import dagster as dg

from company_ai import settings
from company_ai.core.timetable import TIMETABLE, TODAY

OWNER = "team:company-ai"

CRM = "crm"
OUTREACH = "outreach"
INBOX = "inbox"
MEMORY = "memory"
BRAIN = "brain"
VAULT = "vault"
OPS = "ops"

# Every asset says whether it is a replay or a capture (core/timetable.py), in its
# docstring and in this metadata key; a definitions test fails an asset without it.
DAY_KIND = "company_ai/day_kind"
REPLAY_META = {DAY_KIND: "replay"}
CAPTURE_META = {DAY_KIND: "capture"}

_START, _TZ = settings.start_date(), settings.timezone()

# Daily partitions in the configured timezone; the last one is the last complete day.
DAILY = dg.DailyPartitionsDefinition(start_date=_START, timezone=_TZ)

# Outreach works on weekdays, and its partition is named by the day the work is done:
# one window per weekday tick (Friday's runs to Monday's), the current one included, so
# no partition exists that no schedule will fill.
_OUTREACH = next(e.slot for e in TIMETABLE if e.grain == TODAY)
WORKDAYS = dg.TimeWindowPartitionsDefinition(
    cron_schedule=_OUTREACH.cron,
    start=_START,
    fmt="%Y-%m-%d",
    timezone=_TZ,
    end_offset=1,
)

# Monday-to-Sunday weeks, named by their Monday; the last one is the last complete week.
WEEKLY = dg.WeeklyPartitionsDefinition(start_date=_START, day_offset=1, timezone=_TZ)
