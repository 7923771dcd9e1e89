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
# A capture run that declined its partition (a past day, or another run capturing it) is
# tagged with why (company_ai/days.py): the runs list shows it and the digest reads it.
NOT_TAKEN_TAG = "company_ai/not_taken"

# The assets that call the language model. Their jobs carry this run tag, which the
# production dagster.yaml (deploy/dagster.yaml) limits to one run at a time: each asset's
# one pool is its store's, so the model's limit is set on the runs that call it.
LLM_ASSETS = frozenset({"research_findings", "outreach_drafts", "recall_pages"})
LLM_TAG = "company_ai/llm"

# A run may be given its clock (the demo plays each past night at that night's moments):
# the tag holds the moment the run stands for (`days.clock`, `ledger`). Only an install
# that allows it (`COMPANY_AI_PLAYED_CLOCK`) honours the tag: anywhere else a capture
# would file today's world under a moment of its caller's choosing.
PLAYED_AT_TAG = "company_ai/played_at"
