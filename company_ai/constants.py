"""Names shared by the Dagster layer: groups, owners, the replay/capture tag."""

from __future__ import annotations

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
