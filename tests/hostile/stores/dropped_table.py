"""One table dropped from one store (memory.db loses contact_episodes, keeps the rest)."""

import sqlite3
from pathlib import Path

from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.stores import Expected


def damage(data: Path) -> Expected:
    with sqlite3.connect(factory=StoreConnection, database=data / "memory.db") as conn:
        conn.execute("DROP TABLE contact_episodes")
    conn.close()
    return Expected("memory.db", "contact_episodes", "vanished")
