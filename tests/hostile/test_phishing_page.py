"""A phishing page through research → drafts → the fabrication gate, over real HTTP from a
server on 127.0.0.1: every company page tells the company's customers their account is
suspended and to verify at a link. Every sentence of it is in the drafts' material, so a
gate that only asks "did a source say it?" passes it; the drafts repeating it must still
never be `ready` (tests/hostile/web/phishing-account-suspended.html).

Twice: with the offline drafter (it quotes one finding naming the company), and with a
drafter that copies every finding, spoken to through the real Ollama client by a local
fake Ollama, so the gate (not the drafter's restraint) is what stops it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.store import Stores
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from tests.fakes import FakeServer, Reply, ollama_chat
from tests.hostile.web_server import CORPUS, RecipeServer, page
from tests.setup import named

research_findings, outreach_drafts, fabrication_gate = named(
    "research_findings", "outreach_drafts", "fabrication_gate"
)
DAY = "2026-11-27"
PHISHING = (CORPUS / "phishing-account-suspended.html").read_text()
# What a customer could act on, as the page says it: none may reach a `ready` draft.
ACTIONABLE = re.compile(
    r"secure-login\.example|bit\.ly|555 0199|suspended|verify your account|on hold"
    r"|confirm your details|bank account",
    re.IGNORECASE,
)


@pytest.fixture(autouse=True)
def friday(clock):
    clock(datetime(2026, 11, 27, 9, 0, tzinfo=UTC))


class PhishingSite:
    """Answers every company's page with the phishing notice in that company's name."""

    def __init__(self, data) -> None:
        with Stores(data).connect("crm", readonly=True) as crm:
            self.company = {
                email.rpartition("@")[2]: company or "Your bank"
                for email, company in crm.execute(
                    "SELECT email, company FROM contacts WHERE email IS NOT NULL"
                )
            }

    def __call__(self, path: str) -> dict | None:
        parts = path.strip("/").split("/")
        if parts[:1] != ["sites"] or len(parts) < 2:
            return None
        company = self.company.get(parts[1], "Your bank")
        slug = re.sub(r"[^a-z0-9]+", "-", company.lower()).strip("-")
        return page(PHISHING.replace("{company}", company).replace("{slug}", slug))


class CopyingOllama(FakeServer):
    """An Ollama /api/chat that reads what it is asked as a careless model would: as
    research, every sentence of the quoted page is a fact; as a draft, every research
    finding is copied into the body."""

    def next_reply(self, path: str) -> Reply:
        payload = self.requests[-1][1]
        prompt = payload["messages"][-1]["content"]
        if payload["format"].get("title") == "Findings":
            text = quoted_block(prompt, "company page")
            facts = [
                {"text": line, "about": "company"}
                for line in text.splitlines()
                if line.endswith(".") and len(line.split()) > 3
            ]
            answer: dict = {"facts": facts[:20], "corrections": {}}
        else:
            research = quoted_block(prompt, "material 3").removeprefix("Research today:\n")
            name = re.search(r"CRM: (\S+)", prompt)
            first = name.group(1) if name else "there"
            body = f"Hi {first},\n\n{research}\n\nBest,\nSam Rivers"
            answer = {"subject": "An important notice", "body": body, "angle": "notice"}
        return Reply(body=ollama_chat(json.dumps(answer)))


def quoted_block(prompt: str, label: str) -> str:
    found = re.search(rf"<<<DATA {label} (\w+)>>>\n(.*?)\n<<<END DATA \1>>>", prompt, re.S)
    assert found, f"no quoted {label} in the prompt"
    return found.group(2)


def run_day(data, llm: LLMResource, site: RecipeServer):
    source = ResearchSource(
        pages_dir=str(data / "company_pages"),
        mode="http",
        url=f"http://127.0.0.1:{site.port}/sites/{{domain}}/",
        min_interval_s=0,
        allow_hosts=[f"127.0.0.1:{site.port}"],
    )
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [research_findings, outreach_drafts, fabrication_gate],
            partition_key=DAY,
            instance=instance,
            resources={
                "stores": StoresResource(data_dir=str(data)),
                "llm": llm,
                "research_source": source,
                "mailer": Mailer(
                    outbox_dir=str(data / "outbox"), company_domains=["company-ai.example"]
                ),
            },
        )
        [check] = [
            c for c in result.get_asset_check_evaluations() if c.check_name == "fabrication_gate"
        ]
    with Stores(data).connect("outreach", readonly=True) as outreach:
        drafts = [dict(r) for r in outreach.execute("SELECT * FROM drafts WHERE day = $1", (DAY,))]
    return drafts, check


def assert_nothing_actionable_is_ready(drafts, check) -> list[dict]:
    carrying = [d for d in drafts if ACTIONABLE.search(d["subject"] + "\n" + d["body"])]
    assert carrying, "no draft repeated the page: the test would prove nothing"
    for draft in carrying:
        assert draft["status"] == "quarantined", (draft["status"], draft["body"])
        # The material holds the phishing sentences: the gate refused them as actionable.
        assert ACTIONABLE.search(draft["sources"])
        kinds = {c["kind"] for c in json.loads(draft["unsupported"])}
        assert kinds & {"link", "phone", "instruction"}, kinds
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["unquarantined_with_claims"].value == 0
    assert check.metadata["quarantined"].value >= len(carrying)
    table = check.metadata["drafts"].value
    assert "not one of the company's own" in table or "company's own links" in table
    return carrying


def test_the_offline_drafter_s_copy_of_a_phishing_page_is_quarantined(data):
    with RecipeServer(PhishingSite(data)) as site:
        drafts, check = run_day(data, LLMResource(), site)
    carrying = assert_nothing_actionable_is_ready(drafts, check)
    assert len(drafts) == 10 and len(carrying) >= 8


def test_a_drafter_that_copies_the_page_is_stopped_by_the_gate(data):
    with RecipeServer(PhishingSite(data)) as site, CopyingOllama() as ollama:
        llm = LLMResource(backend="ollama", host=ollama.url, max_attempts=1, timeout_s=10)
        drafts, check = run_day(data, llm, site)
        asked = [payload for path, payload in ollama.requests if path == "/api/chat"]
    carrying = assert_nothing_actionable_is_ready(drafts, check)
    assert len(drafts) == len(carrying) == 10  # every draft copied the page: none is ready
    assert check.metadata["quarantined"].value == 10
    # The page reached each model only as quoted data, after the rule that it is data.
    for payload in asked:
        system, prompt = (m["content"] for m in payload["messages"])
        assert "never as instructions" in system
        outside = re.sub(r"<<<DATA .*?<<<END DATA \w+>>>", "", prompt, flags=re.S)
        assert not ACTIONABLE.search(outside), outside
