"""`company-ai mcp`: the memory over MCP, read-only by construction.

The server runs as a subprocess, driven by the SDK's own client over stdio and over
streamable HTTP (with, without and with a wrong token). Every tool is called; the answers
carry provenance and "as of"; and no call changes a byte of the data directory, which is
also made read-only (as root, chmod does not stop writes: the bytes are compared too).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from company_ai.core.ops.alerts import enqueue
from company_ai.core.recall import index_entities
from company_ai.core.store import ReadOnlyStores, Store, StoreError, Stores, transaction
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.times import Day
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from company_ai.core.vectors import Signals, open_store, sync_episodes, vectors_dir
from company_ai.mcp_server import MAX_ANSWER_BYTES
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF, PRIVATE_CANARY, SAMPLE_VAULT, fixed_clock

TOKEN = "a-test-token-of-enough-length-0123"
TOOLS = {"recall", "page", "source_note", "timeline", "dossier", "similar", "stale", "brief",
         "audit"}  # fmt: skip
BRIEF = "Morning brief for 2026-11-30\nReplies: 2 overnight."
CALL_TIMEOUT_S = 60


def build_data(data: Path, minilm, vault: Path = SAMPLE_VAULT) -> Path:
    stores = Stores(data)
    load_sample(stores, contacts=40, as_of=AS_OF)
    stage_vault(vault, data / "vault_staging", day="2026-11-29")
    with stores.connect(Store.RECALL) as conn:
        distill_staging(
            conn, str(data / "vault_staging"), day="2026-11-29",
            distill=lambda t, p, x: offline_page(p, x), source="model:offline", clock=fixed_clock(),
        )  # fmt: skip
        index_entities(conn, minilm)
    with open_store(vectors_dir(data), minilm.name, minilm.dim) as (store, opened):
        day = Day.of("2026-11-29", "UTC")
        sync_episodes(store, opened, stores, minilm, day, cap=10_000, signals=Signals())
    with stores.connect(Store.OPS) as ops:
        enqueue(ops, "brief:2026-11-29", "an older brief", now=AS_OF.replace(day=29))
        enqueue(ops, "brief:2026-11-30", BRIEF, now=AS_OF)
    return data


@pytest.fixture(scope="module")
def mcp_data(tmp_path_factory, minilm):
    """A sample data directory with recall pages, vectors and a brief; tests only read it."""
    return build_data(tmp_path_factory.mktemp("mcp") / "data", minilm)


def an_email(data: Path) -> str:
    with Stores(data).connect(Store.OUTREACH, readonly=True) as outreach:
        contact_id = outreach.execute("SELECT contact_id FROM messages LIMIT 1").fetchone()[0]
    with Stores(data).connect(Store.CRM, readonly=True) as crm:
        return crm.execute("SELECT email FROM contacts WHERE id = $1", (contact_id,)).fetchone()[0]


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "COMPANY_AI_MCP_TOKEN"}
    return base | {"PYTHONPATH": os.getcwd()} | extra


def stdio(data: Path) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "company_ai.cli", "--data-dir", str(data), "mcp"],
        env=env(),
    )
    return Client(params, read_timeout_seconds=CALL_TIMEOUT_S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_server(data: Path, token: str | None = TOKEN):
    port = free_port()
    extra = {"COMPANY_AI_MCP_TOKEN": token} if token else {}
    logs: list[str] = []  # what the server wrote to stderr, once it has stopped
    with subprocess.Popen(
        [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data), "mcp", "--http",
         "--port", str(port)],
        env=env(**extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.1)
            assert process.poll() is None, process.communicate()[1][-2000:]
            yield f"http://127.0.0.1:{port}/mcp", logs
        finally:
            process.terminate()
            try:
                logs.append(process.communicate(timeout=10)[1])
            except subprocess.TimeoutExpired:
                process.kill()
                logs.append(process.communicate()[1])


@asynccontextmanager
async def http_client(url: str, token: str = TOKEN):
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=CALL_TIMEOUT_S) as client:
            yield client


def text_of(result) -> str:
    return "".join(block.text for block in result.content)


async def call(client: Client, name: str, **args):
    result = await client.call_tool(name, args)
    return result.is_error, text_of(result)


async def every_tool(client: Client, email: str) -> dict[str, tuple[bool, str]]:
    """Each tool once, with arguments that find something."""
    calls = {
        "recall": {"question": "who runs customer support?"},
        "page": {"title": "dev patel"},
        "source_note": {"title": "Dev Patel"},
        "timeline": {"email": email, "limit": 3},
        "dossier": {"email": email},
        "similar": {"text": "try again next quarter", "limit": 3},
        "stale": {},
        "brief": {},
        "audit": {},
    }
    return {name: await call(client, name, **args) for name, args in calls.items()}


def check_answers(answers: dict[str, tuple[bool, str]], email: str) -> None:
    assert not [name for name, (error, _) in answers.items() if error], answers
    recall = json.loads(answers["recall"][1])
    top = recall["hits"][0]
    assert (top["title"], top["type"], top["as_of"]) == ("Dev Patel", "person", "2026-11-29")
    assert top["source_note"] == "people/dev-patel.md" and top["stale"] is False
    assert "Dev Patel maintains Support Rota" not in answers["recall"][1]  # JSON, not prose
    assert {"relation": "maintains", "direction": "out", "title": "Support Rota"}.items() <= (
        recall["neighbourhood"][0].items()
    ) or any(n["title"] == "Support Rota" for n in recall["neighbourhood"])
    assert answers["page"][1].startswith('---\ntitle: "Dev Patel"')
    assert 'derived_from: ["people/dev-patel.md"]' in answers["page"][1]
    note = answers["source_note"][1]
    assert note.startswith("source note people/dev-patel.md") and "Dev Patel runs" in note
    timeline = json.loads(answers["timeline"][1])
    assert timeline["contact"]["email"] == email and len(timeline["entries"]) <= 3
    assert timeline["total"] >= len(timeline["entries"]) and "next_offset" in timeline
    assert all(entry["at"] for entry in timeline["entries"])
    episodes = [e for e in timeline["entries"] if e["kind"] == "episode"]
    assert all("source" in e and "confidence" in e for e in episodes)
    dossier = json.loads(answers["dossier"][1])
    assert dossier["as_of"] and dossier["receipts"]
    assert all(line[:4].isdigit() and "(from " in line for line in dossier["receipts"])
    similar = json.loads(answers["similar"][1])
    assert similar["groups"] and {"text", "count", "first_day"} <= set(similar["groups"][0])
    member = similar["groups"][0]["members"][0]
    assert {"day", "type", "score", "ref", "collection"} <= set(member)
    stale = json.loads(answers["stale"][1])
    assert any(p["title"] == "Warehouse Cost Cut" for p in stale["pages"])
    assert answers["brief"][1] == f"brief:2026-11-30, made 2026-11-30T07:00:00Z:\n\n{BRIEF}"
    audit = json.loads(answers["audit"][1])
    assert audit["source"] == "computed now" and audit["contacts"] == 40 and audit["as_of"]
    for _, text in answers.values():
        assert PRIVATE_CANARY not in text


def fingerprint(data: Path) -> dict[str, str]:
    return {
        str(p.relative_to(data)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data.rglob("*"))
        if p.is_file()
    }


def assert_unchanged(before: dict[str, str], after: dict[str, str], data: Path) -> None:
    """Every file has the bytes it had. The one allowance: a SQLite reader of a WAL store
    in a writable folder creates or updates the store's `-shm` wal-index (its shared
    memory, holding no data) and an empty `-wal`, as SQLite must."""
    changed = {name for name in before.keys() & after.keys() if before[name] != after[name]}
    assert {n for n in changed if not n.endswith("-shm")} == set()
    assert set(before) - set(after) == set()
    for name in set(after) - set(before):
        assert name.endswith("-shm") or (
            name.endswith("-wal") and (data / name).stat().st_size == 0
        )


@contextmanager
def read_only(data: Path):
    """`data` made read-only (files and folders) for the block, then writable again."""
    modes = {p: p.stat().st_mode for p in [data, *data.rglob("*")]}
    for path in modes:
        path.chmod(modes[path] & ~0o222)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


# --- over stdio -------------------------------------------------------------------------


def test_stdio_serves_every_tool_with_provenance_and_changes_nothing(mcp_data, tmp_path):
    data = Path(shutil.copytree(mcp_data, tmp_path / "data"))
    email = an_email(data)
    before = fingerprint(data)

    async def session():
        async with stdio(data) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for t in tools:
                assert t.annotations.read_only_hint and not t.annotations.destructive_hint
                assert len(t.description) > 80  # something an assistant can act on
            answers = await every_tool(client, email)
            resources = (await client.list_resources()).resources
            page = await client.read_resource("recall://Dev%20Patel")
            prompts = (await client.list_prompts()).prompts
            rule = await client.get_prompt("read_side_rule")
            return answers, resources, page, prompts, rule, client.instructions

    with read_only(data):
        answers, resources, page, prompts, rule, instructions = asyncio.run(session())
    check_answers(answers, email)
    assert "recall://Dev%20Patel" in {str(r.uri) for r in resources}
    assert page.contents[0].text.startswith('---\ntitle: "Dev Patel"')
    assert [p.name for p in prompts] == ["read_side_rule"]
    said = rule.messages[0].content.text
    assert "recall layer first" in said and '"as of' in said and "general questions" in said
    assert instructions == said
    assert_unchanged(before, fingerprint(data), data)


def test_errors_are_plain_and_bad_input_is_refused(mcp_data):
    async def session():
        async with stdio(mcp_data) as client:
            return {
                "unknown page": await call(client, "page", title="Atlantis"),
                "traversal": await call(client, "page", title="../../../etc/passwd"),
                "traversal note": await call(client, "source_note", title="../vault_staging"),
                "unknown contact": await call(client, "timeline", email="nobody@example.com"),
                "sql email": await call(client, "dossier", email="x@y.z' OR '1'='1"),
                "sql email 2": await call(
                    client, "timeline", email="a@b.c'; DROP TABLE contacts; --"
                ),
                "huge question": await call(client, "recall", question="why? " * 200_000),
                "empty question": await call(client, "recall", question="   "),
                "bad limit": await call(client, "timeline", email="a@b.c", limit=10_000),
                "bad resource": await _read_error(client, "recall://..%2F..%2Fetc%2Fpasswd"),
                "still fine": await call(client, "recall", question="support"),
            }

    said = asyncio.run(session())
    assert said["unknown page"] == (
        True,
        "Error executing tool page: no recall page titled 'Atlantis'",
    )
    assert said["traversal"][0] and "no recall page titled" in said["traversal"][1]
    assert said["traversal note"][0] and "no recall page titled" in said["traversal note"][1]
    assert said["unknown contact"] == (
        True, "Error executing tool timeline: no contact with email 'nobody@example.com'"
    )  # fmt: skip
    for sql in ("sql email", "sql email 2"):  # refused as an address, or simply not found
        assert said[sql][0] and (
            "not an email address" in said[sql][1] or "no contact" in said[sql][1]
        )
    assert said["huge question"][0] and "at most 4,000 are read" in said["huge question"][1]
    assert said["empty question"][0] and "empty" in said["empty question"][1]
    assert said["bad limit"][0] and "limit must be between 1 and 200" in said["bad limit"][1]
    assert said["bad resource"]
    assert not said["still fine"][0]
    with Stores(mcp_data).connect(Store.CRM, readonly=True) as crm:  # the SQL did nothing
        assert crm.execute("SELECT count(*) FROM contacts").fetchone()[0] == 40


async def _read_error(client: Client, uri: str) -> bool:
    from mcp import MCPError

    try:
        await client.read_resource(uri)
    except MCPError:
        return True
    return False


def test_a_private_or_since_privatised_note_is_never_shown(tmp_path, minilm, vault):
    data = build_data(tmp_path / "data", minilm, vault)
    (vault / "private" / "clients").mkdir()
    shutil.move(vault / "clients" / "signalcrest.md", vault / "private" / "clients")
    stage_vault(vault, data / "vault_staging", day="2026-11-30")  # the note is private now

    async def session():
        async with stdio(data) as client:
            return (
                await call(client, "page", title="Signalcrest"),
                await call(client, "source_note", title="Signalcrest"),
                await call(client, "source_note", title="Harbor Logistics"),
            )

    page, withdrawn, public = asyncio.run(session())
    assert not page[0]  # the page stays until the next distill...
    assert withdrawn == (  # ...but its note, private now, is never read
        True,
        "Error executing tool source_note: no published note 'clients/signalcrest.md': "
        "it is not staged by the vault gate",
    )
    assert not public[0] and "Harbor" in public[1]
    for rel in ("private/salary-review.md", "journal/health.md"):  # never staged at all
        assert not (data / "vault_staging" / "notes" / rel).exists()


def test_a_long_timeline_is_paged_and_every_answer_fits(mcp_data, monkeypatch):
    from company_ai import mcp_server

    email = an_email(mcp_data)

    async def pages():
        async with stdio(mcp_data) as client:
            seen, offset = [], 0
            while offset is not None:
                error, text = await call(client, "timeline", email=email, offset=offset, limit=2)
                assert not error, text
                answer = json.loads(text)
                seen += answer["entries"]
                offset = answer["next_offset"]
            whole = json.loads((await call(client, "timeline", email=email, limit=200))[1])
            return seen, whole

    seen, whole = asyncio.run(pages())
    assert seen == whole["entries"] and whole["next_offset"] is None
    # The cut itself, in-process: a list too long for one answer keeps what fits, says so.
    payload = {"entries": [{"body": "x" * 1000} for _ in range(500)]}
    cut = json.loads(mcp_server._json(payload, "entries", offset=0, total=500))
    assert len(json.dumps(cut).encode()) <= MAX_ANSWER_BYTES
    assert 0 < len(cut["entries"]) < 500 and cut["next_offset"] == len(cut["entries"])
    assert "fit in 65,536 bytes" in cut["cut"]
    text = mcp_server._text("é" * MAX_ANSWER_BYTES)
    assert len(text.encode()) <= MAX_ANSWER_BYTES and text.endswith("only the first part fits]")


def test_a_hundred_concurrent_calls_are_all_answered(mcp_data):
    email = an_email(mcp_data)

    async def burst():
        async with stdio(mcp_data) as client:
            calls = [
                call(client, ("timeline", "dossier", "page", "stale")[i % 4],
                     **({"email": email} if i % 4 < 2 else {"title": "Dev Patel"} if i % 4 == 2
                        else {}))
                for i in range(100)
            ]  # fmt: skip
            return await asyncio.wait_for(asyncio.gather(*calls), CALL_TIMEOUT_S * 2)

    answers = asyncio.run(burst())
    assert len(answers) == 100 and not [text for error, text in answers if error]


def test_stores_mid_write_are_read_as_last_committed(tmp_path, mcp_data):
    """A nightly job holding a write transaction open (WAL): the server answers at once,
    from what was committed, and never waits for the writer or writes itself."""
    data = Path(shutil.copytree(mcp_data, tmp_path / "data"))
    email = an_email(data)
    writer = sqlite3.connect(
        factory=StoreConnection, database=data / "memory.db", isolation_level=None
    )
    writer.execute("BEGIN IMMEDIATE")
    columns = [r[1] for r in writer.execute("PRAGMA table_info(contact_episodes)") if r[1] != "id"]
    copied = [
        {"content": "'UNCOMMITTED'", "natural_key": "'uncommitted'"}.get(c, c) for c in columns
    ]
    writer.execute(  # one more episode of a contact, as the nightly jobs append them
        f"INSERT INTO contact_episodes ({', '.join(columns)}) SELECT {', '.join(copied)}"
        " FROM contact_episodes WHERE contact_id = (SELECT contact_id FROM contact_episodes"
        " ORDER BY id LIMIT 1) LIMIT 1"
    )
    crm = sqlite3.connect(factory=StoreConnection, database=data / "crm.db", isolation_level=None)
    crm.execute("BEGIN IMMEDIATE")
    crm.execute("UPDATE contacts SET name = 'UNCOMMITTED'")
    try:

        async def session():
            async with stdio(data) as client:
                started = time.monotonic()
                answers = [
                    await call(client, "dossier", email=email),
                    await call(client, "timeline", email=email),
                    await call(client, "audit"),
                ]
                return answers, time.monotonic() - started

        answers, took = asyncio.run(session())
    finally:
        writer.execute("ROLLBACK")
        crm.execute("ROLLBACK")
        writer.close()
        crm.close()
    assert not [text for error, text in answers if error]
    assert not any("UNCOMMITTED" in text for _, text in answers)
    assert took < 5  # the busy timeout is 5 s: nothing waited for the writer's lock


def test_a_client_that_leaves_mid_answer_stops_the_server_cleanly(mcp_data):
    """stdin closed while a call is in flight: the stdio server exits, it does not hang."""
    process = subprocess.Popen(
        [sys.executable, "-m", "company_ai.cli", "--data-dir", str(mcp_data), "mcp"],
        env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "recall", "arguments": {"question": "support"}}},
    ]  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    process.stdin.close()  # and gone, before any answer is read: its answer meets a
    process.stdout.close()  # closed pipe
    try:
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode is not None


# --- over HTTP --------------------------------------------------------------------------


def test_http_needs_the_token_and_serves_with_it(mcp_data, tmp_path):
    data = Path(shutil.copytree(mcp_data, tmp_path / "data"))
    email = an_email(data)
    before = fingerprint(data)
    with read_only(data), http_server(data) as (url, logs):
        initialize = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}},
        }  # fmt: skip
        accept = {"Accept": "application/json, text/event-stream"}
        bare = httpx2.post(url, json=initialize, headers=accept)
        wrong = httpx2.post(url, json=initialize, headers=accept | {
            "Authorization": "Bearer " + TOKEN[:-1] + "x"})  # fmt: skip
        basic = httpx2.post(url, json=initialize, headers=accept | {"Authorization": TOKEN})
        auth = {"Authorization": f"Bearer {TOKEN}"}
        for _ in range(3):  # clients that leave before reading their answer
            with httpx2.stream("POST", url, json=initialize, headers=accept | auth):
                pass

        async def session():
            async with http_client(url) as client:
                answers = await every_tool(client, email)
                many = await asyncio.gather(
                    *(call(client, "dossier", email=email) for _ in range(100))
                )
                return answers, many

        answers, many = asyncio.run(session())

        async def wrong_token():
            async with http_client(url, token="not-the-token-at-all-000") as client:
                await client.list_tools()

        with pytest.raises(BaseException):  # noqa: B017 - the SDK wraps the 401 in a group
            asyncio.run(wrong_token())
    for refused in (bare, wrong, basic):
        assert refused.status_code == 401
        assert TOKEN not in refused.text and "Bearer <COMPANY_AI_MCP_TOKEN>" in refused.text
    check_answers(answers, email)
    assert not [text for error, text in many if error]
    assert TOKEN not in logs[0]
    assert_unchanged(before, fingerprint(data), data)


def test_http_refuses_to_start_without_a_token_and_binds_localhost_only(mcp_data):
    command = [sys.executable, "-m", "company_ai.cli", "--data-dir", str(mcp_data), "mcp"]
    done = subprocess.run([*command, "--http"], env=env(), capture_output=True, text=True)
    assert done.returncode == 1
    assert "--http needs a token: set COMPANY_AI_MCP_TOKEN" in done.stderr
    short = subprocess.run(
        [*command, "--http"], env=env(COMPANY_AI_MCP_TOKEN="short"), capture_output=True,
        text=True,
    )  # fmt: skip
    assert (
        short.returncode == 1
        and "at least 16" in short.stderr
        and "short" not in (short.stderr.replace("at least", ""))
    )
    port_alone = subprocess.run(
        [*command, "--port", "9"], env=env(), capture_output=True, text=True
    )
    assert port_alone.returncode == 1 and "--port is for --http only" in port_alone.stderr
    with http_server(mcp_data) as (url, logs):
        port = int(url.split(":")[2].split("/")[0])
        for address in _addresses():  # none in a bare sandbox
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=1).close()
        assert (
            httpx2.post(url, json={}, headers={"Authorization": f"Bearer {TOKEN}x"}).status_code
            == 401
        )
    assert TOKEN not in logs[0]


def _addresses() -> list[str]:
    """This machine's other IPv4 addresses (none in a bare sandbox)."""
    try:
        found = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return []
    return sorted({a[4][0] for a in found if not a[4][0].startswith("127.")})


# --- read-only by construction ----------------------------------------------------------


def test_the_stores_open_read_only_and_refuse_a_writer(mcp_data):
    stores = ReadOnlyStores(mcp_data)
    with pytest.raises(StoreError, match="open read-only here"):
        stores.open(Store.CRM, readonly=False)
    with (
        pytest.raises(StoreError, match="open read-only here"),
        stores.connect(Store.CRM, readonly=False),
    ):
        pass
    with stores.connect(Store.CRM) as crm:
        assert crm.execute("PRAGMA query_only").fetchone()[0] == 1
        for sql in ("UPDATE contacts SET name = 'x'", "CREATE TEMP TABLE t (x)"):
            with pytest.raises(sqlite3.OperationalError, match="readonly|read-only|query_only"):
                crm.execute(sql)


def test_no_tool_can_write(mcp_data):
    """No tool's name or argument offers a write; every tool says it is read-only."""
    from company_ai.mcp_server import build_server
    from company_ai.settings import Settings

    server = build_server(ReadOnlyStores(mcp_data), Settings.from_env({}))
    tools = asyncio.run(server.list_tools())
    writes = ("write", "add", "delete", "remove", "update", "insert", "set", "put", "forget",
              "note", "import", "create", "drop", "edit", "save", "append", "send")  # fmt: skip
    for t in tools:
        words = {t.name, *t.input_schema.get("properties", {})}
        assert not [w for w in words for verb in writes if w.startswith(verb)], t.name
        assert t.annotations.read_only_hint is True
    with pytest.raises(TypeError, match="ReadOnlyStores only"):
        build_server(Stores(mcp_data), Settings.from_env({}))


def test_a_postgres_memory_store_is_read_in_a_read_only_session(tmp_path, pg_url):
    import psycopg

    with Stores(tmp_path, database_url=pg_url).connect(Store.MEMORY):
        pass  # a writer makes the schema
    stores = ReadOnlyStores(tmp_path, database_url=pg_url)
    with stores.connect(Store.MEMORY) as memory:
        assert memory.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            memory.execute("DELETE FROM contact_episodes")


def test_the_warm_index_is_reused_until_the_recall_store_changes(mcp_data, tmp_path):
    from company_ai.core.recall import WarmIndex

    data = Path(shutil.copytree(mcp_data, tmp_path / "data"))
    warm = WarmIndex(data / "recall.db")
    stores = ReadOnlyStores(data)
    with stores.connect(Store.RECALL) as conn:
        first = warm.dense(conn)
        assert warm.dense(conn) is first and len(first.keys) > 0
    with Stores(data).connect(Store.RECALL) as writer:  # the vault night re-indexes
        writer.execute("DELETE FROM search_docs WHERE id = (SELECT min(id) FROM search_docs)")
    with stores.connect(Store.RECALL) as conn:
        again = warm.dense(conn)
    assert again is not first and len(again.keys) == len(first.keys) - 1


def test_the_warm_index_on_postgres_is_reused_until_the_recall_store_changes(
    tmp_path, pg_url, minilm
):
    from company_ai.core.recall import WarmIndex, replace_docs
    from company_ai.core.recall.retrieval import Doc, update_vectors

    writer = Stores(tmp_path, database_url=pg_url)

    def write(docs, remove=()):
        with writer.connect(Store.RECALL) as conn:
            with transaction(conn):
                replace_docs(conn, [(doc, "test") for doc in docs], remove=remove)
            update_vectors(conn, minilm)

    write([Doc(f"page:{n}", f"Page {n}", f"About topic {n}.") for n in range(3)])
    warm = WarmIndex(tmp_path / "recall.db")  # no such file: the server's rows are watched
    stores = ReadOnlyStores(tmp_path, database_url=pg_url)
    with stores.connect(Store.RECALL) as conn:
        first = warm.dense(conn)
        assert warm.dense(conn) is first and len(first.keys) == 3
    write([Doc("page:1", "Page 1", "Rewritten, the same key.")])
    with stores.connect(Store.RECALL) as conn:
        rewritten = warm.dense(conn)
        assert rewritten is not first and sorted(rewritten.keys) == sorted(first.keys)
        assert warm.dense(conn) is rewritten
    write([], remove=["page:0"])
    with stores.connect(Store.RECALL) as conn:
        assert sorted(warm.dense(conn).keys) == ["page:1", "page:2"]
