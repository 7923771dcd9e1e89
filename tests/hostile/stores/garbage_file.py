"""A store that is not SQLite at all: crm.db overwritten with garbage bytes."""

from pathlib import Path

from tests.hostile.stores import Expected


def damage(data: Path) -> Expected:
    for extra in ("crm.db-wal", "crm.db-shm"):
        (data / extra).unlink(missing_ok=True)
    (data / "crm.db").write_bytes(b"this is no database\x00\xff" * 4096)
    return Expected("crm.db", None, "not a readable SQLite database")
