import json
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.assets.outreach import (
    fabrication_gate,
    outreach_drafts,
    outreach_messages,
    research_findings,
)
from company_ai.core.db import Stores, transaction
from company_ai.core.drafting import compose, mark_sending, record_sent
from company_ai.core.schema import DRAFT_CAP, RESEARCH_CAP
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from tests.fakes import FakeServer, Reply, ollama_chat

DAY = "2026-11-27"  # a Friday; at 09:00 its 07:55 outreach is the current one
FRIDAY_MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
ALL = [research_findings, outreach_drafts, fabrication_gate, outreach_messages]


@pytest.fixture(autouse=True)
def friday(clock):
    clock(FRIDAY_MORNING)


def resources(data, llm=None):
    return {
        "stores": StoresResource(data_dir=str(data)),
        "llm": llm or LLMResource(),
        "research_source": ResearchSource(pages_dir=str(data / "company_pages")),
        "mailer": Mailer(outbox_dir=str(data / "outbox")),
    }


def run(data, instance, assets=ALL, llm=None, day=DAY):
    return dg.materialize(
        assets,
        partition_key=day,
        instance=instance,
        resources=resources(data, llm),
        raise_on_error=False,
    )


def meta(result, key):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def rows(data, domain, sql, *args):
    with Stores(data).connect(domain, readonly=True) as conn:
        return [dict(r) for r in conn.execute(sql, args)]


def research_episodes(data):
    """The episodes research wrote for DAY (the sample has its own episodes that day)."""
    return rows(
        data,
        "memory",
        "SELECT * FROM contact_episodes WHERE natural_key LIKE 'research:' || ? || ':%'"
        " OR natural_key LIKE 'company:' || ? || ':%'",
        DAY,
        DAY,
    )


def outbox(data):
    return sorted(p.name for p in (data / "outbox").glob("*.eml"))


def ollama(server):
    return LLMResource(backend="ollama", host=server.url, backoff_s=0, max_attempts=1)


def test_a_day_is_researched_drafted_gated_and_sent_within_its_caps(data):
    with dg.instance_for_test() as instance:
        result = run(data, instance)
        assert result.success
        research, drafts, sent = (
            meta(result, k) for k in ("research_findings", "outreach_drafts", "outreach_messages")
        )
    assert research["picked"] == RESEARCH_CAP and research["researched"] > 0
    episodes = research_episodes(data)
    assert len(episodes) == research["episodes_written"] > 0
    assert {e["episode_type"] for e in episodes} == {"research", "company"}
    assert all(e["source"].startswith("web:") and e["confidence"] < 1 for e in episodes)
    assert all(e["natural_key"].startswith(f"{e['episode_type']}:{DAY}:") for e in episodes)

    stored = rows(data, "outreach", "SELECT * FROM drafts WHERE day = ?", DAY)
    assert len(stored) == DRAFT_CAP == drafts["drafted"]
    for d in stored:
        sources = json.loads(d["sources"])
        assert d["dossier"] in sources[1] and d["subject"] and d["body"] and d["angle"]
        assert (d["verdict"] == "fail") == (d["status"] == "quarantined")
        assert (json.loads(d["unsupported"]) != []) == (d["verdict"] == "fail")
    quarantined = [d for d in stored if d["status"] == "quarantined"]
    assert quarantined, "the offline drafter's unsourced statistics are caught"
    assert all(d["message_id"] is None for d in quarantined)

    [check] = result.get_asset_check_evaluations()
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["quarantined"].value == len(quarantined)
    assert str(quarantined[0]["id"]) in check.metadata["drafts"].value

    messages = rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL")
    assert len(messages) == sent["sent"] == drafts["passed"] == len(outbox(data)) > 0
    keys = {
        r["natural_key"] for r in rows(data, "memory", "SELECT natural_key FROM contact_episodes")
    }
    assert {f"outreach:message:{m['id']}" for m in messages} <= keys
    # Dated when it really happened, never back-dated into the partition's day.
    sent_at = {f"outreach:message:{m['id']}": m["sent_at"] for m in messages}
    for r in rows(data, "memory", "SELECT natural_key, created_at FROM contact_episodes"):
        if r["natural_key"] in sent_at:
            assert r["created_at"] == sent_at[r["natural_key"]]

    with dg.instance_for_test() as instance:
        again = run(data, instance)
        assert again.success
        assert meta(again, "outreach_messages")["sent"] == 0
        assert meta(again, "outreach_drafts")["drafted"] == 0
    assert rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL") == messages
    assert len(outbox(data)) == len(messages)


def test_an_unquarantined_draft_with_an_unsupported_claim_blocks_every_send(data):
    with dg.instance_for_test() as instance:
        assert run(data, instance, assets=ALL[:3]).success  # drafted and gated, not sent
        with Stores(data).connect("outreach") as outreach, transaction(outreach):
            outreach.execute(
                "UPDATE drafts SET body = replace(body, '\n\nBest,',"
                " ' We saved Globex 70% last year.\n\nBest,')"
                " WHERE id = (SELECT min(id) FROM drafts WHERE status = 'ready')"
            )
        result = run(data, instance)
        assert not result.success
        [check] = result.get_asset_check_evaluations()
        assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
        assert "Globex" in check.metadata["drafts"].value
        materialized = {e.asset_key.path[-1] for e in result.get_asset_materialization_events()}
        assert "outreach_messages" not in materialized
    assert rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL") == []
    assert outbox(data) == []


def test_a_crash_between_the_stores_is_repaired_without_sending_twice(data):
    mailer = Mailer(outbox_dir=str(data / "outbox"))
    with dg.instance_for_test() as instance:
        assert run(data, instance, assets=ALL[:3]).success
        stores = Stores(data)
        with stores.connect("outreach") as outreach, stores.connect("crm") as crm:
            ready = outreach.execute("SELECT id FROM drafts WHERE status = 'ready'").fetchall()
            assert len(ready) >= 2
            for n, (draft_id,) in enumerate(ready[:2]):
                mark_sending(outreach, draft_id, "company-ai.example", FRIDAY_MORNING)
                draft = outreach.execute(
                    "SELECT * FROM drafts WHERE id = ?", (draft_id,)
                ).fetchone()
                contact = crm.execute(
                    "SELECT * FROM contacts WHERE id = ?", (draft["contact_id"],)
                ).fetchone()
                mailer.send(
                    compose(
                        draft,
                        to=contact["email"],
                        sender="Sam",
                        sender_email="s@x.y",
                        now=FRIDAY_MORNING,
                    )
                )
                if n == 0:  # crashed after the message row, before the episode
                    record_sent(outreach, draft, FRIDAY_MORNING)
                # n == 1: crashed after the mail went out, before the message row
        assert len(outbox(data)) == 2
        result = run(data, instance, assets=[outreach_messages])
        assert result.success
        sent = meta(result, "outreach_messages")
    assert sent["resumed_after_crash"] == 1
    messages = rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL")
    assert len(messages) == len(ready) == len(outbox(data)) == sent["sent"] + 2
    keys = {
        r["natural_key"] for r in rows(data, "memory", "SELECT natural_key FROM contact_episodes")
    }
    assert all(f"outreach:message:{m['id']}" in keys for m in messages)
    assert sent["episodes_written"] == len(messages)


def test_contacts_who_lost_their_address_or_bounced_are_never_sent(data):
    with dg.instance_for_test() as instance:
        assert run(data, instance, assets=ALL[:3]).success
        ready = rows(data, "outreach", "SELECT * FROM drafts WHERE status = 'ready' ORDER BY id")
        gone, bounced = ready[0]["contact_id"], ready[1]["contact_id"]
        with Stores(data).connect("crm") as crm, transaction(crm):
            crm.execute("UPDATE contacts SET email = NULL WHERE id = ?", (gone,))
        with Stores(data).connect("outreach") as outreach, transaction(outreach):
            outreach.execute(
                "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at,"
                " bounce_status) VALUES (?, 'old', 's', 'b', '2025-01-01T00:00:00Z', 'hard')",
                (bounced,),
            )
        result = run(data, instance, assets=[outreach_messages])
        assert result.success
    skipped = meta(result, "outreach_messages")["skipped"]
    assert "no email address" in skipped[str(ready[0]["id"])]
    assert "hard-bounced" in skipped[str(ready[1]["id"])]
    after = {d["id"]: d for d in rows(data, "outreach", "SELECT * FROM drafts")}
    assert after[ready[0]["id"]]["status"] == after[ready[1]["id"]]["status"] == "skipped"
    assert after[ready[0]["id"]]["message_id"] is None
    assert len(outbox(data)) == len(ready) - 2


def test_a_huge_or_binary_company_page_skips_that_contact_with_a_reason(data):
    with dg.instance_for_test() as instance:
        pages = sorted((data / "company_pages").glob("*.html"))
        for page in pages[: len(pages) // 2]:
            page.write_bytes(b"\x00\x01binary" if len(page.name) % 2 else b"x" * 400_000)
        result = run(data, instance, assets=[research_findings])
        assert result.success
        research = meta(result, "research_findings")
    assert research["skipped"] > 0 and research["researched"] > 0
    reasons = set(research["skip_reasons"].values())
    assert any("binary" in r or "byte limit" in r for r in reasons)
    skipped = rows(
        data, "outreach", "SELECT * FROM research_picks WHERE day = ? AND status = 'skipped'", DAY
    )
    assert len(skipped) == research["skipped"] and all(s["reason"] for s in skipped)
    episodes = research_episodes(data)
    assert not {s["contact_id"] for s in skipped} & {e["contact_id"] for e in episodes}


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("not json at all", "invalid output"),
        ("", "invalid output"),
        (json.dumps({"facts": [{"text": "   ", "about": "company"}]}), "must not be empty"),
    ],
)
def test_a_model_returning_invalid_json_or_nothing_writes_nothing(data, content, complaint):
    with FakeServer() as server, dg.instance_for_test() as instance:
        server.script("/api/chat", Reply(ollama_chat(content)))
        result = run(data, instance, assets=[research_findings], llm=ollama(server))
        assert result.success
        research = meta(result, "research_findings")
    assert research["researched"] == 0 and research["skipped"] == RESEARCH_CAP
    assert all(complaint in r for r in research["skip_reasons"].values())
    assert research_episodes(data) == []


def test_the_model_may_correct_only_city_title_and_company(data):
    crm_before = {r["id"]: r for r in rows(data, "crm", "SELECT * FROM contacts")}
    findings = {
        "facts": [
            {"text": "The company is said to be doubling its sales team.", "about": "company"}
        ],
        "corrections": {
            "city": "York",
            "email": "attacker@evil.example",
            "warmth": "100",
            "id": "1",
            "shoe_size": "44",
        },
    }
    with FakeServer() as server, dg.instance_for_test() as instance:
        server.script("/api/chat", Reply(ollama_chat(json.dumps(findings))))
        result = run(data, instance, assets=[research_findings], llm=ollama(server))
        assert result.success
        research = meta(result, "research_findings")
    n = research["researched"]
    assert n == RESEARCH_CAP
    assert research["writeback_applied"] == {"city": n}
    assert research["writeback_rejected"] == 4 * n
    assert research["writeback_rejected_columns"] == dict.fromkeys(
        ["email", "id", "shoe_size", "warmth"], n
    )
    after = {r["id"]: r for r in rows(data, "crm", "SELECT * FROM contacts")}
    assert after.keys() == crm_before.keys()
    changed = {cid for cid in after if after[cid] != crm_before[cid]}
    assert len(changed) == n
    for cid in changed:
        for column in ("email", "warmth", "id", "name", "company", "title"):
            assert after[cid][column] == crm_before[cid][column]
        assert after[cid]["city"] == "York"
    episode = research_episodes(data)[0]
    assert episode["source"] == "model:qwen3:8b" and episode["confidence"] < 1


@pytest.mark.parametrize(
    ("draft", "status", "why"),
    [
        (
            {
                "subject": "Quick idea",
                "body": "Hi,\n\nGlobex cut costs 300% with us in 2019.\n\nBest,\nSam Rivers",
                "angle": "costs",
            },
            "quarantined",
            None,
        ),
        (
            {"subject": "Hi\r\nBcc: everyone@example.com", "body": "Hello.", "angle": "x"},
            "skipped",
            "header injection",
        ),
        ({"subject": "<b>Hello</b>", "body": "Hello.", "angle": "x"}, "skipped", "HTML"),
    ],
)
def test_model_drafts_that_invent_facts_or_carry_html_are_never_sent(data, draft, status, why):
    with dg.instance_for_test() as instance:
        assert run(data, instance, assets=[research_findings]).success
        with FakeServer() as server:
            server.script("/api/chat", Reply(ollama_chat(json.dumps(draft))))
            result = run(data, instance, assets=ALL[1:], llm=ollama(server))
            assert result.success
    stored = rows(data, "outreach", "SELECT * FROM drafts WHERE day = ?", DAY)
    assert stored and all(d["status"] == status for d in stored)
    if why:
        assert all(why in d["reason"] for d in stored)
    else:
        claims = json.loads(stored[0]["unsupported"])
        assert {c["text"] for c in claims} >= {"Globex", "300%"}
    assert rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL") == []
    assert not (data / "outbox").exists() or outbox(data) == []


def test_a_backfill_of_every_past_outreach_day_sends_nothing_and_changes_nothing(data, clock):
    with dg.instance_for_test() as instance:
        assert run(data, instance).success  # Friday's own run
        sent = rows(data, "outreach", "SELECT * FROM messages ORDER BY id")
        drafts = rows(data, "outreach", "SELECT * FROM drafts ORDER BY id")
        picks = rows(data, "outreach", "SELECT * FROM research_picks ORDER BY day, rank")
        assert outbox(data) and len(drafts) <= DRAFT_CAP
        clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))  # the next Monday
        for day in ("2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", DAY):
            result = run(data, instance, day=day)
            assert result.success, day
            assert meta(result, "outreach_messages")["past_day"] is True
        assert meta(result, "research_findings")["picked"] == len(picks)  # DAY's, as stored
        assert meta(result, "outreach_messages")["sent"] == sum(
            d["status"] == "sent" for d in drafts
        )
        assert meta(run(data, instance, day="2026-11-24"), "research_findings")["picked"] == 0
    assert rows(data, "outreach", "SELECT * FROM messages ORDER BY id") == sent
    assert rows(data, "outreach", "SELECT * FROM drafts ORDER BY id") == drafts
    assert rows(data, "outreach", "SELECT * FROM research_picks ORDER BY day, rank") == picks
    assert len(outbox(data)) == len([m for m in sent if m["draft_id"]])


def test_a_single_run_over_a_range_of_days_is_refused_clearly(data):
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [research_findings],
            instance=instance,
            resources=resources(data),
            raise_on_error=False,
            tags={
                "dagster/asset_partition_range_start": "2026-11-23",
                "dagster/asset_partition_range_end": DAY,
            },
        )
    assert not result.success
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    message = failure.step_failure_data.user_failure_data.description
    assert "works one day per run" in message and "2026-11-23..2026-11-27" in message
    assert rows(data, "outreach", "SELECT * FROM research_picks") == []
