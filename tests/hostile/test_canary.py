import base64
import sqlite3
import urllib.parse

from company_ai.core.store.db import Connection as StoreConnection
from tests.hostile.canary import find_canary

CANARY = "zebrafinch-4711"


def test_the_scan_finds_the_canary_in_every_form_a_leak_takes(tmp_path):
    (tmp_path / "plain.log").write_text(f"token={CANARY}")
    (tmp_path / "url.txt").write_text("bot" + urllib.parse.quote(CANARY + "/x", safe=""))
    (tmp_path / "b64.txt").write_bytes(base64.b64encode(b"xy" + CANARY.encode() + b"z"))
    (tmp_path / "utf16.bin").write_bytes(CANARY.encode("utf-16-le"))
    (tmp_path / "upper.txt").write_text(CANARY.upper())
    conn = sqlite3.connect(factory=StoreConnection, database=tmp_path / "store.db")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.execute("INSERT INTO t VALUES ($1)", (f"a {CANARY} b",))
    conn.commit()  # still in the WAL: the scan must read it there too
    (tmp_path / "clean.txt").write_text("nothing to see")
    found = {p.rsplit("/", 1)[1] for p in find_canary(CANARY, tmp_path)}
    conn.close()
    assert {"plain.log", "url.txt", "b64.txt", "utf16.bin", "upper.txt"} <= found
    assert found & {"store.db", "store.db-wal"}
    assert "clean.txt" not in found
