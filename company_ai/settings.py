"""Where the non-secret configuration comes from: environment variables with defaults.

Read at load time, stdlib only (the CLI imports it). Secrets never come through here:
they are bound as `dg.EnvVar(...)` in definitions.py so they never show in the UI.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULTS = {
    "COMPANY_AI_DATA_DIR": "data",
    "COMPANY_AI_TIMEZONE": "UTC",
    "COMPANY_AI_START_DATE": "2025-01-01",
    "COMPANY_AI_LLM_BACKEND": "offline",
    "COMPANY_AI_OLLAMA_HOST": "http://127.0.0.1:11434",
    "COMPANY_AI_LLM_MODEL": "qwen3:8b",
    "COMPANY_AI_MAILER": "outbox",
    "COMPANY_AI_SENDER_NAME": "Sam Rivers",
    "COMPANY_AI_SENDER_EMAIL": "sam@company-ai.example",
}


def _get(name: str) -> str:
    return os.environ.get(name) or DEFAULTS[name]


def data_dir() -> Path:
    """The directory holding one SQLite file per domain (relative paths: from the cwd)."""
    return Path(_get("COMPANY_AI_DATA_DIR")).expanduser().resolve()


def timezone() -> str:
    """The IANA timezone of the daily partitions and the timetable."""
    return _get("COMPANY_AI_TIMEZONE")


def start_date() -> str:
    """The first daily partition."""
    return _get("COMPANY_AI_START_DATE")


def llm_backend() -> str:
    """`offline` (deterministic, in core) or `ollama`."""
    return _get("COMPANY_AI_LLM_BACKEND")


def ollama_host() -> str:
    return _get("COMPANY_AI_OLLAMA_HOST")


def llm_model() -> str:
    return _get("COMPANY_AI_LLM_MODEL")


def mailer() -> str:
    """`outbox` (.eml files under the data directory) or `gmail`."""
    return _get("COMPANY_AI_MAILER")


def sender_name() -> str:
    """Who outreach email is from; the gate never counts this name as a claim."""
    return _get("COMPANY_AI_SENDER_NAME")


def sender_email() -> str:
    return _get("COMPANY_AI_SENDER_EMAIL")
