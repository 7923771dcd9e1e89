"""The non-secret configuration: environment variables with defaults, read once.

`Settings.from_env()` reads every variable once, checks it and returns a frozen value that
the code location (`definitions.py`), the CLI and the demo pass on; nothing reads the
environment at import. Defaults live only in `DEFAULTS`. Stdlib only (the CLI imports
it). Secrets never come through here: they are bound as `dg.EnvVar(...)` in
definitions.py so they never show in the UI. Two exceptions, both kept out of `repr`:
the database URL (it may hold a password) and the MCP server's token, which no
Dagster code ever sees.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from company_ai.core.install import check_day, first_day
from company_ai.core.intake import safe_url
from company_ai.core.store import pg

DEFAULTS = {
    "COMPANY_AI_DATA_DIR": "data",
    # Empty: every store a SQLite file in the data dir; else postgresql://…, every store in
    # that one database, a schema per domain.
    "COMPANY_AI_DATABASE_URL": "",
    # Empty: the vector memory is Chroma's local files in <data dir>/vectors/; else the
    # http(s)://host:port of a Chroma server (`chroma run`) that holds it.
    "COMPANY_AI_CHROMA_URL": "",
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
    # The company's own domains and phone numbers (comma-separated): with the sender's email
    # domain, the only links, addresses and numbers a draft may give a reader.
    "COMPANY_AI_COMPANY_DOMAINS": "",
    "COMPANY_AI_COMPANY_PHONES": "",
    "COMPANY_AI_VAULT_DIR": str(Path(__file__).parent / "sample_vault"),
    "COMPANY_AI_VAULT_PRIVATE_FOLDERS": "private,journal",
    "COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS": "false",
    "COMPANY_AI_RECALL_STALE_DAYS": "90",
    "COMPANY_AI_EMBEDDER_BACKEND": "offline",
    "COMPANY_AI_CONTACTS": "sample",
    "COMPANY_AI_RESEARCH": "local",
    "COMPANY_AI_RESEARCH_URL": "https://{domain}/",
    "COMPANY_AI_INBOX": "maildir",
    "COMPANY_AI_INBOX_DIR": "",  # empty: <data dir>/inbox (maildir/ and cursor.json)
    "COMPANY_AI_ENGAGEMENT_DIR": "",  # empty: <data dir>/engagement (the drop folder)
    # The vector memory's hard caps (live vectors per collection) and the archive's TTL.
    "COMPANY_AI_VECTOR_CAP_EPISODES": "1000000",
    "COMPANY_AI_VECTOR_CAP_KNOWLEDGE": "250000",
    "COMPANY_AI_VECTOR_ARCHIVE_TTL_DAYS": "180",
    # Whether a run may be given its clock by its tag (days.PLAYED_AT_TAG): the demo plays
    # its past nights at their own moments. Off everywhere else.
    "COMPANY_AI_PLAYED_CLOCK": "false",
    # The bearer token `company-ai mcp --http` requires (a secret: never shown or logged);
    # empty: HTTP mode refuses to start.
    "COMPANY_AI_MCP_TOKEN": "",
}

# The secrets that never pass through Settings: definitions.py binds each as dg.EnvVar, so
# its value never shows in the UI. deploy/ puts these, DAGSTER_PG_PASSWORD and the
# secret-valued settings below in a Secret, every other setting in a ConfigMap.
SECRETS = ("COMPANY_AI_TELEGRAM_TOKEN", "COMPANY_AI_GOOGLE_PEOPLE_TOKEN", "COMPANY_AI_GMAIL_TOKEN")
# Settings with a default whose value may still be a secret (a password in a URL, a token).
SECRET_SETTINGS = ("COMPANY_AI_DATABASE_URL", "COMPANY_AI_RESEARCH_URL", "COMPANY_AI_MCP_TOKEN")


@dataclass(frozen=True)
class Settings:
    """Every non-secret setting, checked. See the README's configuration table."""

    data_dir: Path
    # A PostgreSQL URL for every store, or "". It may hold a password: never shown
    # (repr), and bound as dg.EnvVar in definitions.py, so never in the UI either.
    database_url: str = field(repr=False)
    chroma_url: str  # a Chroma server's http(s)://host:port, or "": local files
    timezone: str  # IANA timezone of the partitions and the timetable
    start_date: str  # the first partition: the install date unless set
    snapshot_dir: Path
    snapshot_retention: int
    state_dir: Path
    export_dir: Path
    notifier: Literal["outbox", "telegram"]
    outbox: Path
    telegram_chat_id: str
    telegram_base_url: str
    llm_backend: Literal["offline", "ollama"]
    llm_model: str
    ollama_host: str
    embedder_backend: Literal["offline", "minilm", "e5", "use", "ollama"]
    mailer: Literal["outbox", "gmail"]
    sender_name: str
    sender_email: str
    company_domains: tuple[str, ...]  # the company's own domains (a subdomain counts)
    company_phones: tuple[str, ...]  # the company's own phone numbers
    vault_dir: Path
    vault_private_folders: tuple[str, ...]
    vault_include_hidden_folders: bool
    recall_stale_days: int
    contacts: Literal["sample", "google"]  # where crm_contacts syncs from
    research: Literal["local", "http"]  # where research reads company pages
    research_url: str  # the http research's page address, `{domain}` filled in
    inbox: Literal["maildir", "gmail"]
    inbox_dir: Path  # the Maildir (maildir/) and the triage cursor (cursor.json)
    engagement_dir: Path  # the engagement drop folder
    vector_cap_episodes: int
    vector_cap_knowledge: int
    vector_archive_ttl_days: int
    played_clock: bool = False  # a run's clock may come from its tag (the demo)
    # The MCP server's HTTP bearer token, or "": a secret, never shown (repr) or logged.
    mcp_token: str = field(default="", repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings from `env` (default: the process environment), read once."""
        source = os.environ if env is None else env

        def get(name: str) -> str:
            return source.get(name) or DEFAULTS[name]

        def path_or(name: str, default: Path) -> Path:
            value = get(name)
            return Path(value).expanduser().resolve() if value else default

        data = Path(get("COMPANY_AI_DATA_DIR")).expanduser().resolve()
        tz = get("COMPANY_AI_TIMEZONE")
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"COMPANY_AI_TIMEZONE must be an IANA timezone, not {tz!r}") from None
        start = get("COMPANY_AI_START_DATE")
        if source.get("COMPANY_AI_MEMORY_URL"):
            raise ValueError(
                "COMPANY_AI_MEMORY_URL is gone: set COMPANY_AI_DATABASE_URL, which puts every "
                "store in that database (docs/deploy.md says how to move a memory store)"
            )
        database_url = get("COMPANY_AI_DATABASE_URL").strip()
        if database_url:
            try:
                pg.check_url(database_url)
            except pg.PgStoreError as exc:
                raise ValueError(f"COMPANY_AI_DATABASE_URL: {exc}") from None
        chroma_url = get("COMPANY_AI_CHROMA_URL").strip()
        if chroma_url:
            from company_ai.core.vectors.server import check_url

            try:
                check_url(chroma_url)
            except ValueError as exc:
                raise ValueError(f"COMPANY_AI_CHROMA_URL: {exc}") from None
        return cls(
            data_dir=data,
            database_url=database_url,
            chroma_url=chroma_url,
            timezone=tz,
            start_date=check_day(start) if start else first_day(data, tz),
            snapshot_dir=path_or("COMPANY_AI_SNAPSHOT_DIR", data / "snapshots"),
            snapshot_retention=_whole("COMPANY_AI_SNAPSHOT_RETENTION", get, minimum=1),
            state_dir=path_or("COMPANY_AI_STATE_DIR", data / "state"),
            export_dir=path_or("COMPANY_AI_EXPORT_DIR", data / "exports"),
            notifier=_one_of("COMPANY_AI_NOTIFIER", get, ("outbox", "telegram")),
            outbox=path_or("COMPANY_AI_OUTBOX", data / "outbox.jsonl"),
            telegram_chat_id=get("COMPANY_AI_TELEGRAM_CHAT_ID"),
            telegram_base_url=get("COMPANY_AI_TELEGRAM_BASE_URL"),
            llm_backend=_one_of("COMPANY_AI_LLM_BACKEND", get, ("offline", "ollama")),
            llm_model=get("COMPANY_AI_LLM_MODEL"),
            ollama_host=get("COMPANY_AI_OLLAMA_HOST"),
            embedder_backend=_one_of(
                "COMPANY_AI_EMBEDDER_BACKEND", get, ("offline", "minilm", "e5", "use", "ollama")
            ),
            mailer=_one_of("COMPANY_AI_MAILER", get, ("outbox", "gmail")),
            sender_name=get("COMPANY_AI_SENDER_NAME"),
            sender_email=get("COMPANY_AI_SENDER_EMAIL"),
            company_domains=_domains(get("COMPANY_AI_COMPANY_DOMAINS")),
            company_phones=_phones(get("COMPANY_AI_COMPANY_PHONES")),
            vault_dir=Path(get("COMPANY_AI_VAULT_DIR")).expanduser().resolve(),
            vault_private_folders=tuple(
                n.strip() for n in get("COMPANY_AI_VAULT_PRIVATE_FOLDERS").split(",") if n.strip()
            ),
            vault_include_hidden_folders=_one_of(
                "COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS", get, ("true", "false")
            )
            == "true",
            recall_stale_days=_whole("COMPANY_AI_RECALL_STALE_DAYS", get, minimum=1),
            contacts=_one_of("COMPANY_AI_CONTACTS", get, ("sample", "google")),
            research=_one_of("COMPANY_AI_RESEARCH", get, ("local", "http")),
            research_url=_research_url(get("COMPANY_AI_RESEARCH_URL")),
            inbox=_one_of("COMPANY_AI_INBOX", get, ("maildir", "gmail")),
            inbox_dir=path_or("COMPANY_AI_INBOX_DIR", data / "inbox"),
            engagement_dir=path_or("COMPANY_AI_ENGAGEMENT_DIR", data / "engagement"),
            vector_cap_episodes=_whole("COMPANY_AI_VECTOR_CAP_EPISODES", get, minimum=1),
            vector_cap_knowledge=_whole("COMPANY_AI_VECTOR_CAP_KNOWLEDGE", get, minimum=1),
            vector_archive_ttl_days=_whole("COMPANY_AI_VECTOR_ARCHIVE_TTL_DAYS", get, minimum=1),
            played_clock=_one_of("COMPANY_AI_PLAYED_CLOCK", get, ("true", "false")) == "true",
            mcp_token=get("COMPANY_AI_MCP_TOKEN").strip(),
        )

    def with_(self, **changes) -> Settings:
        """A copy with some settings changed (tests, the demo)."""
        return replace(self, **changes)


def _whole(name: str, get, *, minimum: int) -> int:
    value = get(name).strip()
    if not value.isdigit() or int(value) < minimum:
        raise ValueError(f"{name} must be a whole number ≥ {minimum}, not {value[:40]!r}")
    return int(value)


_DOMAIN_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+")


def _domains(value: str) -> tuple[str, ...]:
    """COMPANY_AI_COMPANY_DOMAINS: plain ASCII domain names (`company.com`), no scheme."""
    names = tuple(n.strip().lower().rstrip(".") for n in value.split(",") if n.strip())
    for name in names:
        if not _DOMAIN_NAME.fullmatch(name):
            raise ValueError(
                "COMPANY_AI_COMPANY_DOMAINS must list domain names like company.com, "
                f"not {name[:60]!r}"
            )
    return names


def _phones(value: str) -> tuple[str, ...]:
    """COMPANY_AI_COMPANY_PHONES: numbers of 7 to 15 digits (`+44 20 7946 0958`)."""
    numbers = tuple(n.strip() for n in value.split(",") if n.strip())
    for number in numbers:
        digits = sum(c.isdigit() for c in number)
        if not 7 <= digits <= 15 or not re.fullmatch(r"\+?[\d ().-]+", number):
            raise ValueError(
                f"COMPANY_AI_COMPANY_PHONES must list phone numbers, not {number[:40]!r}"
            )
    return numbers


def _research_url(value: str) -> str:
    if not value.startswith(("http://", "https://")) or value.count("{domain}") != 1:
        raise ValueError(
            "COMPANY_AI_RESEARCH_URL must be an http(s) address with one {domain} in it, "
            f"not {safe_url(value)[:60]!r}"
        )
    return value


def _one_of(name: str, get, allowed: tuple[str, ...]) -> Any:  # one of `allowed`, checked
    value = get(name).strip().lower()
    if value not in allowed:
        raise ValueError(f"{name} must be {' or '.join(allowed)}, not {value[:40]!r}")
    return value
