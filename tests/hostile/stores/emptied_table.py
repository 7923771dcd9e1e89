"""A table emptied but present (outreach.db's messages: every row deleted, the table kept)."""

import sqlite3
from pathlib import Path

from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.stores import Expected


def damage(data: Path) -> Expected:
    with sqlite3.connect(factory=StoreConnection, database=data / "outreach.db") as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("DELETE FROM messages")
    conn.close()
    return Expected("outreach.db", "messages", "0 rows")
