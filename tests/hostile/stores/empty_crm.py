"""The defect that was shipped: crm.db with every table gone (the other stores intact) was
snapshotted over the only good CRM backup, because the shrink rule summed all stores' rows."""

import sqlite3
from pathlib import Path

from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.stores import Expected, tables


def damage(data: Path) -> Expected:
    path = data / "crm.db"
    names = tables(path)
    with sqlite3.connect(factory=StoreConnection, database=path) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for name in names:
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    conn.close()
    return Expected("crm.db", "contacts", "vanished")
