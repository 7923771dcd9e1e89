"""A real, throwaway Chroma server for the tests: the `chroma run` that the chromadb package
ships, on a free port of 127.0.0.1, persisting to a temp folder the tests can read."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.pg_server import free_port

CHROMA = Path(sys.executable).parent / "chroma"
START_S = 60.0  # it answers in about a second; a loaded machine may be slower


class ChromaServer:
    def __init__(self, path: Path):
        self.path = path  # its persist directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen | None = None

    def start(self) -> ChromaServer:
        self._log = (self.path.parent / f"chroma-{self.port}.log").open("ab")
        self._process = subprocess.Popen(
            [str(CHROMA), "run", "--path", str(self.path), "--host", "127.0.0.1",
             "--port", str(self.port)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self._process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2):
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"chroma run did not answer its heartbeat in {START_S:.0f} s")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        self._log.close()
