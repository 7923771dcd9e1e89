"""Damaged data directories for `db_snapshots`: one recipe a file, each named for the defect
it guards. A recipe is `damage(data_dir) -> Expected`: it breaks ONE store of a good data
directory in place and says what the snapshot must report (the store, the table if one, and
a fragment of the reason). tests/hostile/test_snapshots_and_secrets.py feeds each through
the real asset: the damaged store keeps its last good generation, the others are taken.
"""

from __future__ import annotations

import importlib
import pkgutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from company_ai.core.store.db import Connection as StoreConnection


@dataclass(frozen=True)
class Expected:
    store: str  # the file, e.g. "crm.db"
    table: str | None  # the table named in the reason, when the damage is a table's
    reason: str  # a fragment of the reason the asset gives


def tables(path: Path) -> list[str]:
    with sqlite3.connect(factory=StoreConnection, database=path) as conn:
        return [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]


def recipes() -> dict[str, object]:
    """Every recipe module of this folder, by name."""
    return {
        info.name: importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    }
