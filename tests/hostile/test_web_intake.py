"""The hostile web corpus (tests/hostile/web/) through the real `research_findings` asset,
reading real pages over HTTP from a server on 127.0.0.1 (nothing else is ever reached).

The page address carries credentials (user:password@ and `api_key=`/`token=`): they must
appear in no log line, no store file, no metadata. Each hostile page is refused for its
contact with its reason (recorded in outreach.db's intake_refusals, counted in metadata,
listed by the WARN check); the good pages around it are researched; the run succeeds."""

from __future__ import annotations

import logging
import socket
import time
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.store import Stores
from company_ai.resources.llm import LLMResource
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from tests.hostile.web_server import RecipeServer, page, recipes
from tests.setup import named

research_findings = named("research_findings")

DAY = "2026-11-27"
SECRETS = (b"SECRET123", b"TOK456", b"hunter2pw")
DEADLINE_S = 1.5


@pytest.fixture(autouse=True)
def friday(clock):
    clock(datetime(2026, 11, 27, 9, 0, tzinfo=UTC))


class Router:
    """Gives the n-th company domain asked for the n-th hostile recipe, then good pages."""

    def __init__(self, data) -> None:
        self.data = data
        self.hostile = list(recipes().items())
        self.given: dict[str, tuple[str, dict]] = {}

    def __call__(self, path: str) -> dict | None:
        parts = path.strip("/").split("/")
        if parts[:1] != ["sites"] or len(parts) < 2:
            return None  # robots.txt and anything else: 404, everything allowed
        domain = parts[1]
        if domain not in self.given:
            n = len(self.given)
            if n < len(self.hostile):
                self.given[domain] = self.hostile[n]
            else:
                html = (self.data / "company_pages" / f"{domain}.html").read_text()
                self.given[domain] = ("good", page(html))
        return self.given[domain][1]


def test_hostile_pages_are_refused_each_alone_and_no_secret_is_kept(data, monkeypatch, caplog):
    connections: list[tuple] = []
    real_connect = socket.create_connection

    def connect(address, *args, **kwargs):
        connections.append(address)
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", connect)
    router = Router(data)
    with RecipeServer(router) as server, dg.instance_for_test() as instance:
        port = server.port
        source = ResearchSource(
            pages_dir=str(data / "company_pages"),
            mode="http",
            url=f"http://ada:hunter2pw@127.0.0.1:{port}/sites/{{domain}}/?api_key=SECRET123&token=TOK456",
            min_interval_s=0,
            deadline_s=DEADLINE_S,
            allow_hosts=[f"127.0.0.1:{port}"],
        )
        started = time.monotonic()
        with caplog.at_level(logging.DEBUG):
            result = dg.materialize(
                [research_findings],
                partition_key=DAY,
                instance=instance,
                resources={
                    "stores": StoresResource(data_dir=str(data)),
                    "llm": LLMResource(),
                    "research_source": source,
                },
                raise_on_error=False,
            )
        elapsed = time.monotonic() - started
        assert result.success
        logs = "\n".join(str(e.message) for e in instance.all_logs(result.run_id))
        [event] = result.get_asset_materialization_events()
        meta = {k: v.value for k, v in event.materialization.metadata.items()}
        [check] = result.get_asset_check_evaluations()

    # Every hostile recipe was met, and refused with its reason; the good pages were read.
    given = {name: domain for domain, (name, _) in router.given.items()}
    assert set(recipes()) <= set(given), "fewer company domains picked than hostile recipes"
    with Stores(data).connect("outreach", readonly=True) as conn:
        stored = dict(
            conn.execute(
                "SELECT item_key, reason FROM intake_refusals WHERE intake = 'research'"
            ).fetchall()
        )
        picks = {
            r["contact_id"]: dict(r)
            for r in conn.execute("SELECT * FROM research_picks WHERE day = $1", (DAY,))
        }
    with Stores(data).connect("crm", readonly=True) as crm:
        domain_of = {
            cid: email.rpartition("@")[2]
            for cid, email in crm.execute("SELECT id, email FROM contacts WHERE email IS NOT NULL")
        }
    reason_by_domain = {
        domain_of[int(key.rpartition(":")[2])]: reason for key, reason in stored.items()
    }
    for name, recipe in recipes().items():
        domain = given[name]
        if recipe["refused"] is None:
            assert domain not in reason_by_domain, reason_by_domain.get(domain)
            done = [p for c, p in picks.items() if domain_of[c] == domain]
            assert done and all(p["status"] == "done" for p in done)
            findings = " ".join(p["findings"] for p in done)
            assert "Injected Ltd builds secure ledgers for small firms." in findings
            for word in recipe["absent"]:
                assert word not in findings
        else:
            assert recipe["refused"] in reason_by_domain[domain], (name, reason_by_domain[domain])
    assert meta["items_refused"] == len(stored) == len(meta["reasons"])
    hostile = {given[n] for n, r in recipes().items() if r["refused"] is not None}
    assert len(stored) == sum(domain_of[c] in hostile for c in picks)
    assert meta["researched"] > 0 and meta["items_read"] == meta["picked"]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["refused"].value == len(stored)
    assert set(check.metadata["reasons"].value) == set(stored)

    # Only the local server was ever connected to: the private targets were refused first.
    assert connections and all(address == ("127.0.0.1", port) for address in connections)
    assert not any("/admin" in path for path in server.requests)
    # The trickle was cut at the deadline (a generous bound: the run did 20 pages).
    assert elapsed < 5 * DEADLINE_S + 30

    # No credential anywhere: logs, metadata, check, every store file.
    text = "\n".join([logs, caplog.text, repr(meta), repr(check.metadata), repr(stored)])
    for secret in SECRETS:
        assert secret.decode() not in text
    assert "REDACTED" in text  # the address is still said, without its secrets
    files = [p for p in data.rglob("*") if p.is_file() and ".db" in p.name]
    assert files
    for path in files:
        raw = path.read_bytes()
        for secret in SECRETS:
            assert secret not in raw, (path.name, secret)


def test_nothing_refused_is_a_passing_check(data):
    source = ResearchSource(pages_dir=str(data / "company_pages"))
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [research_findings],
            partition_key=DAY,
            instance=instance,
            resources={
                "stores": StoresResource(data_dir=str(data)),
                "llm": LLMResource(),
                "research_source": source,
            },
        )
        [check] = result.get_asset_check_evaluations()
    assert check.passed and check.metadata["refused"].value == 0
