"""A real, throwaway PostgreSQL server for the tests: Debian's binaries, a temp folder.

`scripts/setup` installs the `postgresql` package when it is missing and it runs as root;
where no server binaries can be found, the tests that need one are skipped and say why.
PostgreSQL refuses to run as root, so as root the server runs as `nobody`. It listens on a
free port on 127.0.0.1 only, with trust authentication (nothing else can reach it), and is
stopped (`pg_ctl stop -m immediate`) and deleted at the end of the session.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NOT_INSTALLED = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found in PATH or /usr/lib/postgresql/*/bin:"
    " run scripts/setup as root to install Debian's postgresql package"
)


def find_bindir() -> Path | None:
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(found[-1]).parent if found else None


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PgServer:
    def __init__(self, bindir: Path, root: Path):
        self.bindir, self.root = bindir, root
        self.data = root / "data"
        self.port = free_port()
        self.as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []

    def url(self, db: str = "postgres", password: str = "not-checked") -> str:
        return f"postgresql://postgres:{password}@127.0.0.1:{self.port}/{db}"

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self.as_user, str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            log = (
                (self.root / "server.log").read_text()
                if (self.root / "server.log").exists()
                else ""
            )
            raise RuntimeError(f"{args[0]} failed: {done.stderr[-2000:]}\n{log[-2000:]}")

    def start(self, *, durable: bool = False) -> PgServer:
        """Start the server; `durable` keeps fsync and synchronous commits on (benchmarks),
        the tests turn them off."""
        self.root.mkdir(parents=True, exist_ok=True)
        if self.as_user:
            shutil.chown(self.root, "nobody")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync",
                  "-E", "UTF8", "--locale=C")  # fmt: skip
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root}"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l",
                  str(self.root / "server.log"), "-w", "start")  # fmt: skip
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def create_database(self, name: str, *, template: str = "") -> str:
        """A new database (a copy of `template`, which no one may be connected to)."""
        import psycopg

        conn = psycopg.connect(self.url(), autocommit=True)
        try:
            copy = f' TEMPLATE "{template}"' if template else ""
            conn.cursor().execute(f'CREATE DATABASE "{name}"{copy}')
        finally:
            conn.close()
        return self.url(name)


@contextmanager
def throwaway(*, durable: bool = False) -> Iterator[PgServer]:
    """A started server in a temporary folder (outside pytest's, which `nobody` cannot
    enter), stopped and removed at the end; SystemExit saying why where none is installed
    (the benchmarks' way; the tests' fixture skips instead)."""
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit(NOT_INSTALLED)
    root = Path(tempfile.mkdtemp(prefix="company-ai-pg-"))
    try:
        server = PgServer(bindir, root).start(durable=durable)
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
