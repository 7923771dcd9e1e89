"""A raw HTTP/1.1 server on 127.0.0.1 that answers from response recipes
(tests/hostile/web/*.json): redirects, a header trickle, huge and gzip-bomb bodies, odd
charsets. Raw sockets, so it can send a status line one byte at a time. Never the network."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "web"


def recipes() -> dict[str, dict]:
    """Every recipe of the corpus by its file's stem."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))}


def page(text: str) -> dict:
    """A recipe for a plain good page."""
    return {"body": text}


class RecipeServer:
    """Serves `route(path) -> recipe | None` (None: 404); records every request's path."""

    def __init__(self, route) -> None:
        self.route = route
        self.requests: list[str] = []
        self._gzip_cache: dict[int, bytes] = {}
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(32)
        self.port = self._sock.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> RecipeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop = True
        self._sock.close()

    def prepare(self, recipe: dict) -> None:
        """Build `recipe`'s body now (a gzip bomb is made once, then served from memory)."""
        self._response(recipe)

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    request += chunk
                path = request.split(b" ", 2)[1].decode()
                self.requests.append(path)
                head, body, trickle = self._response(self.route(path.split("?")[0]))
                if trickle:
                    for byte in head:
                        conn.sendall(bytes([byte]))
                        time.sleep(trickle)
                else:
                    conn.sendall(head)
                conn.sendall(body)
            except OSError:
                pass  # the client gave up: a deadline, a size cap

    def _response(self, recipe: dict | None) -> tuple[bytes, bytes, float]:
        if recipe is None:
            return _head(404, {"Content-Type": "text/plain"}, 9), b"not found", 0.0
        headers = {"Content-Type": recipe.get("content_type", "text/html; charset=utf-8")}
        for name, value in recipe.get("headers", {}).items():
            headers[name] = value.replace("{base}", self.base).replace("{port}", str(self.port))
        if "gzip_zeros" in recipe:
            size = recipe["gzip_zeros"]
            if size not in self._gzip_cache:
                self._gzip_cache[size] = gzip.compress(b"\0" * size, compresslevel=9)
            body = self._gzip_cache[size]
            headers["Content-Encoding"] = "gzip"
        elif "body_repeat" in recipe:
            text, times = recipe["body_repeat"]
            body = (text * times).encode()
        elif "body_hex" in recipe:
            body = bytes.fromhex(recipe["body_hex"])
        elif "body_file" in recipe:
            body = (CORPUS / recipe["body_file"]).read_bytes()
        else:
            body = recipe.get("body", "").encode()
        head = _head(recipe.get("status", 200), headers, len(body))
        return head, body, float(recipe.get("trickle_s", 0.0))


def _head(status: int, headers: dict[str, str], length: int) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    lines += [f"Content-Length: {length}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()
