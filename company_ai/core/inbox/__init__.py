"""What comes back: mail that answers our outreach, read from Gmail or a Maildir,
parsed, matched to its thread and acted on by rule, and the engagement signals (visits,
signups, opens) dropped as files, both become episodes."""

from company_ai.core.inbox.engagement import plural, take_signals
from company_ai.core.inbox.mail import (
    LOOKBACK_DAYS,
    Fetched,
    InboundMail,
    Log,
    named_date,
    read_cursor,
    read_maildir,
    taken_keys,
    write_cursor,
)
from company_ai.core.inbox.replies import WARMTH_RULE, inbound_episodes, triage

__all__ = [
    "Fetched",
    "InboundMail",
    "LOOKBACK_DAYS",
    "Log",
    "WARMTH_RULE",
    "inbound_episodes",
    "named_date",
    "plural",
    "read_cursor",
    "read_maildir",
    "take_signals",
    "taken_keys",
    "triage",
    "write_cursor",
]
