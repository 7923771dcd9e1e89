"""The MCP server, warm, through a real client session: latency per tool, start, memory.

    .venv/bin/python benchmarks/bench_mcp.py                    # 156,925 contacts
    .venv/bin/python benchmarks/bench_mcp.py --contacts 20000   # a quicker look
    .venv/bin/python benchmarks/bench_mcp.py --contacts 2000 --notes 2000   # more pages
    .venv/bin/python benchmarks/bench_mcp.py --keep DEMO/data   # a demo's: `similar` too

Builds a data directory (the sample CRM at `--contacts`, the sample vault, with
`--notes` generated notes more, distilled into recall pages and indexed), starts
`company-ai mcp` as its own process over stdio (and HTTP) and drives it with the SDK's
client: the start time (process start to `initialize` answered), p50/p99 of `--calls`
calls of each tool, the server's resident memory, and for comparison `company-ai recall`
and `company-ai timeline` as whole processes. Prints one figure a line; BENCHMARKS.md
records a run. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from company_ai.core.embedding import OFFLINE
from company_ai.core.recall import index_entities
from company_ai.core.store import Store, Stores
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from company_ai.core.vectors.store import vectors_dir
from company_ai.sample_world.crm import load_sample

AS_OF = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
PACKAGE = Path(__file__).resolve().parent.parent / "company_ai"


def percentiles(samples_s: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples_s)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms (n={len(ms)})"


def build(data: Path, contacts: int, density: float, notes: int) -> None:
    started = time.perf_counter()
    stores = Stores(data)
    load_sample(stores, contacts=contacts, as_of=AS_OF, density=density)
    vault = PACKAGE / "sample_vault"
    if notes:  # bench_vault's generated vault, beside the sample's pages
        from bench_vault import write_vault

        vault = data.parent / "vault"
        shutil.copytree(PACKAGE / "sample_vault", vault)
        write_vault(vault / "generated", notes)
    stage_vault(vault, data / "vault_staging", day="2026-11-29")
    with stores.connect(Store.RECALL) as conn:
        distill_staging(
            conn, str(data / "vault_staging"), day="2026-11-29",
            distill=lambda t, p, x: offline_page(p, x), source="model:offline",
            clock=lambda: AS_OF,
        )  # fmt: skip
        index_entities(conn, OFFLINE["offline"][2]())  # the default model, as a night builds it
    took = time.perf_counter() - started
    print(f"built {contacts:,} contacts and the sample vault (+{notes:,} notes) in {took:.1f} s")


def emails(data: Path, n: int) -> list[str]:
    with Stores(data).connect(Store.CRM, readonly=True) as crm:
        found = [r[0] for r in crm.execute("SELECT email FROM contacts WHERE email IS NOT NULL")]
    return random.Random(1).choices(found, k=n)


@asynccontextmanager
async def session(data: Path, transport: str) -> AsyncIterator[tuple[Client, int]]:
    """A client session with a fresh server over `transport`, and the server's pid."""
    command = [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data), "mcp"]
    env = {"PYTHONPATH": str(PACKAGE.parent)}
    if transport == "stdio":
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with Client(params, read_timeout_seconds=120) as client:
            yield client, child_pid(os.getpid())
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_urlsafe(32)
    server = subprocess.Popen(
        [*command, "--http", "--port", str(port)],
        env=os.environ | env | {"COMPANY_AI_MCP_TOKEN": token},
    )
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                await asyncio.sleep(0.02)
        headers = {"Authorization": f"Bearer {token}"}
        url = f"http://127.0.0.1:{port}/mcp"
        async with (
            httpx2.AsyncClient(headers=headers, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            yield client, server.pid
    finally:
        server.terminate()
        server.wait()


def child_pid(parent: int) -> int:
    """This process's `company-ai mcp` child (Linux /proc)."""
    for task in Path(f"/proc/{parent}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"mcp" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                return int(child)
    raise LookupError("no server process")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def measure(data: Path, calls: int, transport: str) -> None:
    questions = [
        json.loads(line)["question"]
        for line in (PACKAGE / "sample_vault_questions.jsonl").read_text().splitlines()
    ]
    people = emails(data, calls)
    started = time.perf_counter()
    async with session(data, transport) as (client, pid):
        took = time.perf_counter() - started
        print(f"{transport}: start (process start to initialize answered): {took:.2f} s")
        cases = {
            "recall": [{"question": questions[i % len(questions)]} for i in range(calls)],
            "timeline": [{"email": e} for e in people],
            "dossier": [{"email": e} for e in people],
            "page": [{"title": "Dev Patel"}] * calls,
            "stale": [{}] * calls,
        }
        if (vectors_dir(data) / "chroma.sqlite3").is_file():  # a demo's data: --keep DIR
            lines = [f"asked us to call back about {w}" for w in ("pricing", "the quarter")]
            cases["similar"] = [{"text": lines[i % 2], "limit": 10} for i in range(calls)]
        first = time.perf_counter()
        await client.call_tool("recall", {"question": "warm up"})  # loads the model
        took = (time.perf_counter() - first) * 1000
        print(f"{transport}: first recall (loads the embedder): {took:.0f} ms")
        for name, arguments in cases.items():
            timings = []
            for args in arguments:
                t0 = time.perf_counter()
                result = await client.call_tool(name, args)
                timings.append(time.perf_counter() - t0)
                assert not result.is_error, result.content[0].text
            print(f"{transport}: {name} through the session, warm: {percentiles(timings)}")
        print(f"{transport}: server resident memory after the calls: {rss_mib(pid):.0f} MiB")


def whole_process(data: Path, runs: int) -> None:
    cli = [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data)]
    env = os.environ | {"PYTHONPATH": str(PACKAGE.parent)}
    for label, args in (
        ("recall", ["recall", "who runs customer support?"]),
        ("timeline", ["timeline", emails(data, 1)[0]]),
    ):
        timings = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([*cli, *args], check=True, stdout=subprocess.DEVNULL, env=env)
            timings.append(time.perf_counter() - t0)
        median = statistics.median(timings)
        print(f"`company-ai {label}` as a whole process: median {median:.3f} s (n={runs})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=156_925)
    parser.add_argument("--density", type=float, default=1.0)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--notes", type=int, default=0, help="generated vault notes to add")
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--transport", choices=("stdio", "http", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="build (or reuse) the data here")
    args = parser.parse_args()
    data = args.keep or Path(tempfile.mkdtemp(prefix="company-ai-bench-mcp-")) / "data"
    if not (data / "recall.db").is_file():
        build(data, args.contacts, args.density, args.notes)
    try:
        for transport in ("stdio", "http") if args.transport == "both" else (args.transport,):
            asyncio.run(measure(data, args.calls, transport))
        whole_process(data, args.cli_runs)
    finally:
        if not args.keep:
            shutil.rmtree(data.parent)


if __name__ == "__main__":
    main()
