"""The episodic memory: `contact_episodes`, append-only, validated at the boundary
(`Episode`, pydantic), sealed each day and audited against its seals."""

from company_ai.core.memory.episodes import (
    RECORDED_SLACK,
    DayAudit,
    EpisodeError,
    append_episodes,
    audit_day,
    episode_rows,
    reseal_in_transaction,
    seal_day,
    seal_in_transaction,
    validate,
)
from company_ai.core.memory.models import Episode

__all__ = [
    "RECORDED_SLACK",
    "DayAudit",
    "Episode",
    "EpisodeError",
    "append_episodes",
    "audit_day",
    "episode_rows",
    "reseal_in_transaction",
    "seal_day",
    "seal_in_transaction",
    "validate",
]
