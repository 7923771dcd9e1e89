"""A store file gone from the data directory (outreach.db deleted, the others there)."""

from pathlib import Path

from tests.hostile.stores import Expected


def damage(data: Path) -> Expected:
    for name in ("outreach.db", "outreach.db-wal", "outreach.db-shm"):
        (data / name).unlink(missing_ok=True)
    return Expected("outreach.db", None, "not in the data directory")
