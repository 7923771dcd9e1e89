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
    "COMPANY_AI_VAULT_DIR": str(Path(__file__).parent / "sample_vault"),
    "COMPANY_AI_VAULT_PRIVATE_FOLDERS": "private,journal",
    "COMPANY_AI_RECALL_STALE_DAYS": "90",
    "COMPANY_AI_OLLAMA_HOST": "http://127.0.0.1:11434",
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


def vault_dir() -> Path:
    """The owner's Markdown vault (default: the sample vault shipped for the demo)."""
    return Path(_get("COMPANY_AI_VAULT_DIR")).expanduser().resolve()


def vault_private_folders() -> tuple[str, ...]:
    """Folder names never staged, at any depth, with everything under them."""
    return tuple(
        n.strip() for n in _get("COMPANY_AI_VAULT_PRIVATE_FOLDERS").split(",") if n.strip()
    )


def recall_stale_days() -> int:
    """A page's status/goal lines are stale when their note is untouched this many days."""
    return int(_get("COMPANY_AI_RECALL_STALE_DAYS"))


def ollama_host() -> str:
    """Where an Ollama server answers, for the `ollama` backends."""
    return _get("COMPANY_AI_OLLAMA_HOST")
