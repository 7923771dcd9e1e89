"""A store cut short (a copy that stopped half way): memory.db truncated to a third."""

import sqlite3
from pathlib import Path

from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.stores import Expected


def damage(data: Path) -> Expected:
    path = data / "memory.db"
    with sqlite3.connect(factory=StoreConnection, database=path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    conn.close()
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 3])
    for extra in ("memory.db-wal", "memory.db-shm"):
        (data / extra).unlink(missing_ok=True)
    return Expected("memory.db", None, "not a readable SQLite database")
