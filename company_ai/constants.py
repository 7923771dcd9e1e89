"""Names shared by the Dagster layer: groups, owners, partitions."""

from __future__ import annotations

import dagster as dg

from company_ai import settings

OWNER = "team:company-ai"

CRM = "crm"
OUTREACH = "outreach"
INBOX = "inbox"
MEMORY = "memory"
BRAIN = "brain"
VAULT = "vault"
OPS = "ops"

# Daily partitions in the configured timezone; the last one is the last complete day.
DAILY = dg.DailyPartitionsDefinition(start_date=settings.start_date(), timezone=settings.timezone())
