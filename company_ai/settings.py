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
    "COMPANY_AI_START_DATE": "",  # empty: the install date
    "COMPANY_AI_SNAPSHOT_DIR": "",  # empty: <data dir>/snapshots
    "COMPANY_AI_SNAPSHOT_RETENTION": "14",
    "COMPANY_AI_STATE_DIR": "",  # empty: <data dir>/state
    "COMPANY_AI_EXPORT_DIR": "",  # empty: <data dir>/exports
    "COMPANY_AI_NOTIFIER": "outbox",
    "COMPANY_AI_OUTBOX": "",  # empty: <data dir>/outbox.jsonl
    "COMPANY_AI_TELEGRAM_CHAT_ID": "",
    "COMPANY_AI_TELEGRAM_BASE_URL": "https://api.telegram.org",
    "COMPANY_AI_LLM_BACKEND": "offline",
    "COMPANY_AI_OLLAMA_HOST": "http://127.0.0.1:11434",
    "COMPANY_AI_LLM_MODEL": "qwen3:8b",
    "COMPANY_AI_MAILER": "outbox",
    "COMPANY_AI_SENDER_NAME": "Sam Rivers",
    "COMPANY_AI_SENDER_EMAIL": "sam@company-ai.example",
    "COMPANY_AI_VAULT_DIR": str(Path(__file__).parent / "sample_vault"),
    "COMPANY_AI_VAULT_PRIVATE_FOLDERS": "private,journal",
    "COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS": "false",
    "COMPANY_AI_RECALL_STALE_DAYS": "90",
    "COMPANY_AI_EMBEDDER_BACKEND": "offline",
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
    """The first partition: COMPANY_AI_START_DATE, else the install date (core/install.py)."""
    from company_ai.core.install import check_day, first_day

    value = _get("COMPANY_AI_START_DATE")
    return check_day(value) if value else first_day(data_dir(), timezone())


def _path_or(name: str, default: Path) -> Path:
    value = _get(name)
    return Path(value).expanduser().resolve() if value else default


def snapshot_dir() -> Path:
    """Where `db_snapshots` keeps one dated folder per day."""
    return _path_or("COMPANY_AI_SNAPSHOT_DIR", data_dir() / "snapshots")


def snapshot_retention() -> int:
    """How many dated snapshot folders to keep (the newest)."""
    value = _get("COMPANY_AI_SNAPSHOT_RETENTION")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"COMPANY_AI_SNAPSHOT_RETENTION must be a whole number ≥ 1, not {value!r}")
    return int(value)


def state_dir() -> Path:
    """Where `state_export` writes its flat JSON files."""
    return _path_or("COMPANY_AI_STATE_DIR", data_dir() / "state")


def export_dir() -> Path:
    """Where `memory_export` and `outreach_funnel` write their Markdown files."""
    return _path_or("COMPANY_AI_EXPORT_DIR", data_dir() / "exports")


def notifier() -> str:
    """`outbox` (a file plus the log) or `telegram` (needs COMPANY_AI_TELEGRAM_TOKEN)."""
    value = _get("COMPANY_AI_NOTIFIER")
    if value not in ("outbox", "telegram"):
        raise ValueError(f"COMPANY_AI_NOTIFIER must be outbox or telegram, not {value!r}")
    return value


def outbox() -> Path:
    """The outbox notifier's file: one JSON line per message."""
    return _path_or("COMPANY_AI_OUTBOX", data_dir() / "outbox.jsonl")


def telegram_chat_id() -> str:
    return _get("COMPANY_AI_TELEGRAM_CHAT_ID")


def telegram_base_url() -> str:
    return _get("COMPANY_AI_TELEGRAM_BASE_URL")


def llm_backend() -> str:
    """`offline` (deterministic, in core) or `ollama`."""
    return _get("COMPANY_AI_LLM_BACKEND")


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


def vault_dir() -> Path:
    """The owner's Markdown vault (default: the sample vault shipped for the demo)."""
    return Path(_get("COMPANY_AI_VAULT_DIR")).expanduser().resolve()


def vault_private_folders() -> tuple[str, ...]:
    """Folder names never staged, at any depth, with everything under them."""
    return tuple(
        n.strip() for n in _get("COMPANY_AI_VAULT_PRIVATE_FOLDERS").split(",") if n.strip()
    )


def vault_include_hidden_folders() -> bool:
    """Whether hidden folders (`.trash/`, `.obsidian/`, `.git/`) are staged like any other."""
    value = _get("COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS").strip().lower()
    if value not in ("true", "false"):
        raise ValueError(
            f"COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS must be true or false, not {value!r}"
        )
    return value == "true"


def recall_stale_days() -> int:
    """A page's status/goal lines are stale when their note is untouched this many days."""
    return int(_get("COMPANY_AI_RECALL_STALE_DAYS"))


def ollama_host() -> str:
    """Where an Ollama server answers, for the `ollama` backends."""
    return _get("COMPANY_AI_OLLAMA_HOST")


def embedder_backend() -> str:
    """`offline` (all-MiniLM-L6-v2, int8 ONNX, shipped) or `ollama` (bge-m3)."""
    return _get("COMPANY_AI_EMBEDDER_BACKEND")
