import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from company_ai.core.install import record_first_day
from company_ai.core.store import DEFAULT_BUSY_TIMEOUT_MS, Store, Stores
from company_ai.core.times import utc_now


class StoresResource(dg.ConfigurableResource):
    """The domain stores (crm, memory, outreach, brain, recall, ops): one SQLite file per
    domain under one data directory (WAL mode, a busy timeout), or every one in a
    PostgreSQL database, a schema per domain (`COMPANY_AI_DATABASE_URL`); schemas are
    migrated on open.
    The first run against a data directory records `first_day`, the partitions' start
    (the install date), in it."""

    data_dir: str
    # A PostgreSQL URL for every store ("" = SQLite files). Bound as dg.EnvVar, so the UI
    # shows the variable's name, never the URL or its password.
    database_url: str = ""
    # The Chroma server holding the vector memory ("" = its files in <data dir>/vectors/).
    chroma_url: str = ""
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
        return Stores(self.data_dir, self.busy_timeout_ms, self.database_url, self.chroma_url)

    @contextmanager
    def connect(self, domain: Store, *, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        # (a pg.PgConnection for a store at a URL: the same calls)
        with self.stores().connect(domain, readonly=readonly) as conn:
            yield conn
