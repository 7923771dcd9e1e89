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


class HangingProxy:
    """A TCP proxy to a server that, once `hang` is set, passes requests on and never
    passes the answers back: a server that stopped answering in the middle of a run."""

    def __init__(self, port: int):
        import socket
        import threading

        self.hang = False
        self._target = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._sockets: list = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            upstream = socket.create_connection(("127.0.0.1", self._target))
            self._sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, source, sink, answers: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if not (answers and self.hang):
                    sink.sendall(chunk)
        except OSError:
            pass

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()
