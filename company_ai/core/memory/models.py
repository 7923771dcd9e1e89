"""The boundary models: what may enter a store, validated by pydantic.

`episodes.append_episodes` also checks plain episode dicts by these same rules in plain
Python, as the fast path of a large batch; the limits below are shared by both, and
tests/core/memory/test_episode_paths.py proves the two paths agree.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from company_ai.core.store import EpisodeType
from company_ai.core.times import canonical_utc

MAX_CONTENT_CHARS = 50_000
MAX_SOURCE_CHARS = 200
MAX_KEY_CHARS = 300
# Sources that name a model ("model:qwen3:8b") mark a guess; a guess is never certain.
MODEL_SOURCE_PREFIX = "model:"
# ASCII digits only: `\d` also matches other scripts' digits ("٢٠٢٦-…"), and a day written
# so would never be found by the day it names.
_DAY = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
# Python's `$` also matches before a final newline, pydantic's does not: test with fullmatch.
is_day = re.compile(_DAY).fullmatch


def _utc_timestamp(value: Any) -> str:
    if isinstance(value, (str, datetime)):  # noqa: UP038 (a tuple is faster on this hot path)
        return canonical_utc(value)
    raise ValueError(f"must be an ISO-8601 UTC string or datetime, not {type(value).__name__}")


def _content(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


# Stored form: ISO-8601 UTC to the second with a Z; accepts any explicitly-UTC input.
UtcTimestamp = Annotated[str, BeforeValidator(_utc_timestamp)]


class Episode(BaseModel):
    """One dated receipt about a contact, with where it came from and how sure we are."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    contact_id: Annotated[int, Field(gt=0, strict=True)]
    episode_type: EpisodeType
    content: Annotated[str, BeforeValidator(_content), Field(max_length=MAX_CONTENT_CHARS)]
    source: Annotated[str, Field(min_length=1, max_length=MAX_SOURCE_CHARS)] | None = None
    confidence: Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)] = 1.0
    created_at: UtcTimestamp
    # Unique per event; defaults to a hash of the event's own fields (see episodes.py).
    natural_key: Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS)] | None = None
    # The local date it describes: created_at's date in the partitions' timezone.
    day: Annotated[str, Field(pattern=f"^{_DAY}$")] | None = None
    # When this system recorded it; None: the writer's clock (`append_episodes(now=...)`).
    # Only a loader of history that pretends it was recorded as it happened sets it.
    recorded_at: UtcTimestamp | None = None

    @model_validator(mode="after")
    def _model_guesses_are_uncertain(self) -> Episode:
        if overconfident_guess(self.source, self.confidence):
            raise ValueError(f"source {self.source!r} is a model: its confidence must be below 1.0")
        return self


def overconfident_guess(source: str | None, confidence: float) -> bool:
    """A model's output stated as certain, which it never may be."""
    return source is not None and source.startswith(MODEL_SOURCE_PREFIX) and confidence >= 1
