import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from company_ai.core.install import record_first_day
from company_ai.core.store import DEFAULT_BUSY_TIMEOUT_MS, Store, Stores
from company_ai.core.times import utc_now


class StoresResource(dg.ConfigurableResource):
    """The domain SQLite stores (crm, memory, outreach, brain, recall, ops) under one data
    directory: one file per domain, WAL mode, a busy timeout, schemas migrated on open.
    The memory store may live in PostgreSQL instead (`COMPANY_AI_MEMORY_URL`).
    The first run against a data directory records `first_day`, the partitions' start
    (the install date), in it."""

    data_dir: str
    # A PostgreSQL URL for the memory store ("" = memory.db). Bound as dg.EnvVar, so the
    # UI shows the variable's name, never the URL or its password.
    memory_url: str = ""
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    first_day: str = ""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if self.first_day:
            try:
                record_first_day(self.stores().data_dir, self.first_day, utc_now())
            except OSError as exc:  # a read-only data dir is reported by the stores themselves
                if context.log is not None:
                    context.log.warning(f"could not record the install date: {exc.strerror}")

    def stores(self) -> Stores:
        urls = {Store.MEMORY: self.memory_url} if self.memory_url else None
        return Stores(self.data_dir, self.busy_timeout_ms, urls)

    @contextmanager
    def connect(self, domain: Store, *, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        # (a pg.PgConnection for a store at a URL: the same calls)
        with self.stores().connect(domain, readonly=readonly) as conn:
            yield conn
