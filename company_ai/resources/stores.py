import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from company_ai.core.db import DEFAULT_BUSY_TIMEOUT_MS, Stores


class StoresResource(dg.ConfigurableResource):
    """The domain SQLite stores (crm, memory, outreach, brain, recall, ops) under one data
    directory: one file per domain, WAL mode, a busy timeout, schemas migrated on open."""

    data_dir: str
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS

    def stores(self) -> Stores:
        return Stores(self.data_dir, self.busy_timeout_ms)

    @contextmanager
    def connect(self, domain: str, *, readonly: bool = False) -> Iterator[sqlite3.Connection]:
        with self.stores().connect(domain, readonly=readonly) as conn:
            yield conn
