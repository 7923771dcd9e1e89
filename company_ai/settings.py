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
