"""Small local HTTP servers that speak real services' APIs, so the real clients run; and
in-process fakes of the small interfaces core code is written against (a model, a mailer).

No test touches the network: each server listens on 127.0.0.1 on a free port.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a body (JSON-able) or raw text, a status, an optional delay;
    extra headers, and `length=False` to send no Content-Length (the body ends at close)."""

    body: Any = None
    status: int = 200
    delay_s: float = 0.0
    raw: str | bytes | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    length: bool = True


@dataclass
class FakeServer:
    """Answers each path from its queue of scripted replies (the last one repeats)."""

    replies: dict[str, deque[Reply]] = field(default_factory=dict)
    requests: list[tuple[str, dict]] = field(default_factory=list)

    def script(self, path: str, *replies: Reply) -> None:
        self.replies[path] = deque(replies)

    def next_reply(self, path: str) -> Reply:
        queue = self.replies.get(path)
        if not queue:
            return Reply(body={"error": f"no reply scripted for {path}"}, status=404)
        return queue.popleft() if len(queue) > 1 else queue[0]

    def __enter__(self) -> FakeServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append((self.path, payload))
                self._answer(fake.next_reply(self.path))

            def do_GET(self) -> None:  # noqa: N802
                fake.requests.append((self.path, dict(self.headers)))
                self._answer(fake.next_reply(self.path))

            def _answer(self, reply: Reply) -> None:
                time.sleep(reply.delay_s)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body)
                data = data.encode() if isinstance(data, str) else data
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if reply.length:
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test, a size cap)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


def ollama_chat(content: str, model: str = "qwen3:8b") -> dict:
    """An Ollama /api/chat (non-streaming) response whose message says `content`."""
    return {
        "model": model,
        "created_at": "2026-11-30T08:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": True,
        "done_reason": "stop",
    }


def ollama_embed(vectors: list[list[float]], model: str = "bge-m3") -> dict:
    """An Ollama /api/embed response."""
    return {"model": model, "embeddings": vectors}


# --- in-process fakes of the outreach interfaces (core/llm.py, core/outreach/day.py) ----------


class Crash(Exception):
    """The process died here (a simulated crash)."""


@dataclass
class FakeModel:
    """A `StructuredModel`: answers by schema name (`Draft=…`, `Findings=…`) with an object,
    a dict, or a ModelError to raise; any other question gets core's offline answer."""

    answers: dict[str, Any] = field(default_factory=dict)
    source: str = "model:fake"
    asked: list[str] = field(default_factory=list)

    def structured(self, *, system: str, prompt: str, schema: type, offline: Any) -> Any:
        self.asked.append(schema.__name__)
        answer = self.answers.get(schema.__name__, offline)
        if isinstance(answer, Exception):
            raise answer
        answer = answer() if callable(answer) else answer
        return answer if isinstance(answer, schema) else schema.model_validate(answer)


@dataclass
class FakeMailer:
    """A `Mailer` that keeps what it sends in memory; `crash_on` = the nth send that dies
    right after the mail left (1-based), before the caller hears back."""

    sender_name: str = "Sam Rivers"
    sender_email: str = "sam@company-ai.example"
    company_domains: tuple[str, ...] = ("company-ai.example",)
    company_phones: tuple[str, ...] = ()
    sent: dict[str, Any] = field(default_factory=dict)  # Message-ID -> EmailMessage
    crash_on: int | None = None

    def send(self, message: Any) -> str:
        self.sent[message["Message-ID"]] = message
        if len(self.sent) == self.crash_on:
            raise Crash(f"died after sending {message['Message-ID']}")
        return message["Message-ID"]

    def already_sent(self, rfc_message_id: str) -> bool:
        return rfc_message_id in self.sent


class WordEmbedder:
    """A tiny, fast embedder for vector tests: each word hashed into one of `dim` buckets,
    counted, L2-normalised. Texts sharing words are near; it calls itself what it is, so a
    store it built refuses the real model (and the reverse)."""

    def __init__(self, dim: int = 16, name: str = "test:words"):
        self.dim = dim
        self.name = f"{name}-{dim}"
        self.calls = 0  # texts embedded, so a test can see what was (not) re-embedded

    def embed(self, texts):
        import hashlib

        import numpy as np

        self.calls += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "big") % self.dim] += 1.0
            out[row, 0] += 1e-3  # never the zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


class DictVectorStore:
    """The part of `core.vectors.VectorStore` that aging uses, in dicts: a year of nights
    runs in a second here, where Chroma syncs each of its thousands of writes to disk. The
    same scenario runs over a real Chroma store for fewer nights
    (tests/core/vectors/test_aging.py)."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, tuple[Any, dict]]] = {}

    def _of(self, name: str) -> dict[str, tuple[Any, dict]]:
        return self.data.setdefault(name, {})

    def upsert(self, name, vectors) -> None:
        for v in vectors:
            self._of(name)[v.id] = (v.embedding, dict(v.meta))

    def update_metadata(self, name, metas) -> None:
        for i, meta in metas.items():
            self._of(name)[i] = (self._of(name)[i][0], dict(meta))

    def delete(self, name, ids) -> int:
        ids = list(ids)
        for i in ids:
            self._of(name).pop(i, None)
        return len(ids)

    def count(self, name) -> int:
        return len(self._of(name))

    def metadata(self, name, where=None) -> dict:
        assert where is None, "aging reads whole collections"
        return {i: dict(meta) for i, (_, meta) in self._of(name).items()}

    def vectors(self, name, ids):
        from company_ai.core.vectors import Vector

        return [Vector(i, *self._of(name)[i]) for i in ids if i in self._of(name)]
