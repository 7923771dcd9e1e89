"""The outreach assets' wiring through Dagster: resources, metadata, the blocking check,
past days and ranges. The day's behaviour is tested as plain core in
tests/core/outreach/test_outreach_day.py (fast); each test here costs a few seconds."""

from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.outreach.day import TABLE_ROWS
from company_ai.core.store import DRAFT_CAP, RESEARCH_CAP, Stores, transaction
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from tests.not_taken import declined
from tests.setup import named

(fabrication_gate, outreach_drafts, outreach_messages, research_findings) = named(
    "fabrication_gate", "outreach_drafts", "outreach_messages", "research_findings"
)

DAY = "2026-11-27"  # a Friday; at 09:00 its 07:55 outreach is the current one
FRIDAY_MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
ALL = [research_findings, outreach_drafts, fabrication_gate, outreach_messages]


@pytest.fixture(autouse=True)
def friday(clock):
    clock(FRIDAY_MORNING)


def resources(data):
    return {
        "stores": StoresResource(data_dir=str(data)),
        "llm": LLMResource(),
        "research_source": ResearchSource(pages_dir=str(data / "company_pages")),
        "mailer": Mailer(outbox_dir=str(data / "outbox")),
    }


def run(data, instance, assets=ALL, day=DAY):
    return dg.materialize(
        assets,
        partition_key=day,
        instance=instance,
        resources=resources(data),
        raise_on_error=False,
    )


def meta(result, key):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == key]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def rows(data, domain, sql, *args):
    with Stores(data).connect(domain, readonly=True) as conn:
        return [dict(r) for r in conn.execute(sql, args)]


def outbox(data):
    return sorted(p.name for p in (data / "outbox").glob("*.eml"))


def gate_check(result):
    [check] = [
        c for c in result.get_asset_check_evaluations() if c.check_name == "fabrication_gate"
    ]
    return check


def test_a_day_runs_through_the_assets_with_its_metadata_and_a_warning_check(data):
    with dg.instance_for_test() as instance:
        result = run(data, instance)
        assert result.success
        research, drafts, sent = (
            meta(result, k) for k in ("research_findings", "outreach_drafts", "outreach_messages")
        )
        check = gate_check(result)
    assert research["picked"] == RESEARCH_CAP == research["dagster/row_count"]
    assert research["researched"] + research["skipped"] == RESEARCH_CAP
    assert research["episodes_written"] > 0 and research["writeback_applied"]
    assert drafts["drafted"] == DRAFT_CAP == drafts["passed"] + drafts["quarantined"]
    assert drafts["quarantined"] > 0 and drafts["already_drafted"] == 0
    # The offline drafter's unsourced statistics: quarantined, warned about, not blocking.
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["quarantined"].value == drafts["quarantined"]
    assert check.metadata["rejudged"].value == 0
    assert sent["sent"] == drafts["passed"] == sent["dagster/row_count"] == len(outbox(data))
    assert sent["mailer"] == "outbox" and sent["episodes_written"] == sent["sent"]
    stored = rows(data, "outreach", "SELECT status, count(*) AS n FROM drafts GROUP BY status")
    assert {r["status"]: r["n"] for r in stored} == {
        "sent": sent["sent"],
        "quarantined": drafts["quarantined"],
    }


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
        check = gate_check(result)
        assert not check.passed and check.severity == dg.AssetCheckSeverity.ERROR
        # The table a person reads: the contact, the sentence with the claim marked, why.
        table = check.metadata["drafts"].value
        [edited] = rows(data, "outreach", "SELECT * FROM drafts WHERE body LIKE '%Globex 70%'")
        [contact] = rows(
            data, "crm", "SELECT name, email FROM contacts WHERE id = $1", edited["contact_id"]
        )
        [row] = [line for line in table.splitlines() if "**70%**" in line]
        assert f"| {contact['name']} \\<{contact['email']}\\> | ready |" in row
        assert "| We saved Globex **70%** last year. | no source gives 70% of anything |" in row
        assert "| quarantined |" in table  # the quarantined drafts are listed after it
        assert check.metadata["rejudged"].value == 1
        materialized = {e.asset_key.path[-1] for e in result.get_asset_materialization_events()}
        assert "outreach_messages" not in materialized
    assert rows(data, "outreach", "SELECT * FROM messages WHERE draft_id IS NOT NULL") == []
    assert outbox(data) == []


def test_the_descriptions_quote_the_caps_the_store_enforces():
    assert f"at most {RESEARCH_CAP} contacts" in research_findings.op.description
    assert f"at most {DRAFT_CAP}, each" in outreach_drafts.op.description
    [spec] = fabrication_gate.check_specs
    assert f"at most {TABLE_ROWS} rows" in " ".join(spec.description.split())


def test_a_backfill_of_every_past_outreach_day_sends_nothing_and_changes_nothing(data, clock):
    with dg.instance_for_test() as instance:
        assert run(data, instance).success  # Friday's own run
        sent = rows(data, "outreach", "SELECT * FROM messages ORDER BY id")
        drafts = rows(data, "outreach", "SELECT * FROM drafts ORDER BY id")
        picks = rows(data, "outreach", "SELECT * FROM research_picks ORDER BY day, rank")
        assert outbox(data) and len(drafts) <= DRAFT_CAP
        clock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))  # the next Monday
        captures = ("research_findings", "outreach_drafts", "outreach_messages")
        for day in ("2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", DAY):
            # Friday's own run still shows as its own, green, as it was.
            declined(instance, run(data, instance, day=day), day, *captures, done_before=day == DAY)
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
