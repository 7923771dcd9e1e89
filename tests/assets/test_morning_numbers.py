"""The morning is fed: the CRM audit (a capture), the growth analysis (a replay), and the
brief and state export that read both as they stood before their own tick."""

import json
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.cli import main
from company_ai.core.ops import audit_stores
from company_ai.core.outreach import count_growth
from company_ai.core.store import Stores
from company_ai.days import window
from company_ai.resources.folders import OpsFolders
from company_ai.resources.notifier import Notifier
from company_ai.resources.stores import StoresResource
from tests.not_taken import declined
from tests.setup import SETUP, named

crm_audit, morning_brief, state_export = named("crm_audit", "morning_brief", "state_export")
DAY = "2026-11-30"  # a Monday (the tests' timezone is UTC): last week is complete
AUDIT_AT = datetime(2026, 11, 30, 5, 45, tzinfo=UTC)


def resources(data):
    return {
        "stores": StoresResource(data_dir=str(data)),
        "ops_folders": OpsFolders(
            snapshot_dir=str(data / "snapshots"),
            state_dir=str(data / "state"),
            export_dir=str(data / "exports"),
        ),
        "notifier": Notifier(data_dir=str(data), outbox_path=str(data / "outbox.jsonl")),
    }


def run(instance, data, asset, day=DAY, **kwargs):
    return dg.materialize(
        [asset], partition_key=day, instance=instance, resources=resources(data), **kwargs
    )


def meta(result, key):
    [event] = result.asset_materializations_for_node(key)
    return {k: v.value for k, v in event.metadata.items()}


def audits(data):
    with Stores(data).connect("ops", readonly=True) as ops:
        rows = ops.execute("SELECT day, recorded_at, contacts FROM crm_audits").fetchall()
    return [tuple(r) for r in rows]


def test_the_audit_is_a_capture_stored_as_a_row_with_numbers_the_ui_can_plot(data, clock):
    clock(AUDIT_AT)
    with dg.instance_for_test() as instance:
        metadata = meta(run(instance, data, crm_audit), "crm_audit")
        past = run(instance, data, crm_audit, day="2026-11-28", raise_on_error=False)
        assert "crm_audit records" in declined(instance, past, "2026-11-28", "crm_audit")
    expected = audit_stores(Stores(data), "2026-11-30T05:45:00Z")
    assert expected.contacts == 300 and expected.actionable < expected.with_email
    for key in ("contacts", "cold", "warm", "hot", "actionable", "with_email", "engagement_rows"):
        assert type(metadata[key]) is int and metadata[key] == getattr(expected, key), key
    assert metadata["cold"] + metadata["warm"] + metadata["hot"] == metadata["contacts"]
    for key in ("cold_share", "warm_share", "hot_share", "actionable_share", "with_email_share"):
        assert type(metadata[key]) is float, key
    assert metadata["engagement_rows"] > 0
    assert audits(data) == [(DAY, "2026-11-30T05:45:00Z", 300)]


def test_the_cli_prints_the_stored_audit_or_computes_one_and_says_which(data, clock, capsys):
    assert main(["--data-dir", str(data), "audit", "--json"]) == 0
    computed = json.loads(capsys.readouterr().out)
    assert computed["source"] == "computed now" and computed["day"] is None
    assert computed["contacts"] == 300 and computed["warmth_bands"]["warm"] == [21, 60]
    assert not Stores(data).path("ops").exists(), "reading never creates a store"
    clock(AUDIT_AT)
    with dg.instance_for_test() as instance:
        run(instance, data, crm_audit)
    assert main(["--data-dir", str(data), "audit", "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert (stored["source"], stored["day"], stored["as_of"]) == (
        "stored",
        DAY,
        "2026-11-30T05:45:00Z",
    )
    assert stored["cold_share"] == computed["cold_share"]
    assert main(["--data-dir", str(data), "audit"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"CRM audit stored by crm_audit for {DAY}, as of 2026-11-30T05:45:00Z")
    assert "warmth: cold" in text and "[bands: cold 0-20, warm 21-60, hot 61-100]" in text


def brief_text(data):
    lines = (data / "outbox.jsonl").read_text().splitlines()
    [text] = [json.loads(line)["text"] for line in lines if "morning brief" in line]
    return text


def test_the_brief_and_state_export_read_the_audit_and_growth_before_their_tick(data, clock):
    with Stores(data).connect("outreach", readonly=True) as conn:
        growth = count_growth(conn, window(SETUP, "outreach_growth", DAY))  # its 05:30 tick
    head = growth.headline()
    assert head.week == "2026-11-23" and head.sent > 0 and head.best_angle
    with dg.instance_for_test() as instance:
        clock(AUDIT_AT)
        run(instance, data, crm_audit)
        first = audit_stores(Stores(data), "2026-11-30T05:45:00Z")
        with Stores(data).connect("crm") as crm:  # the CRM moves on after the audit
            crm.execute("UPDATE contacts SET deleted_at = '2026-11-30T06:20:00Z' WHERE id <= 10")
            crm.commit()
        clock(datetime(2026, 11, 30, 6, 30, tzinfo=UTC))
        run(instance, data, crm_audit)  # a re-run after 06:00: not what the brief read
        run(instance, data, morning_brief)
        clock(datetime(2026, 11, 30, 6, 35, tzinfo=UTC))
        run(instance, data, state_export)
        clock(datetime(2026, 12, 9, 6, 30, tzinfo=UTC))  # days later, a replay of the brief
        replay = meta(run(instance, data, morning_brief), "morning_brief")
    text = brief_text(data)
    assert "CRM audit (as of 2026-11-30T05:45:00Z):" in text
    assert f"  {first.contacts} contacts (0 deleted upstream, not counted)" in text
    assert f"Outreach growth (as of {growth.as_of}):\n  {head.line()}" in text
    assert replay["delivered"] is False, "a replay of a past day sends nothing"
    state = data / "state"
    crm = json.loads((state / "crm.json").read_text())
    assert crm["audit"]["recorded_at"] == "2026-11-30T06:30:00Z", "the latest before 06:35"
    assert crm["audit"]["contacts"] == first.contacts - 10
    outreach = json.loads((state / "outreach.json").read_text())
    assert outreach["growth"] == {"as_of": growth.as_of} | head.as_dict()


def test_the_brief_says_so_when_no_audit_was_recorded_before_it(data, clock):
    clock(datetime(2026, 11, 30, 6, 5, tzinfo=UTC))
    with dg.instance_for_test() as instance:
        run(instance, data, morning_brief)
    assert "CRM audit:\n  none recorded before this brief" in brief_text(data)


@pytest.mark.parametrize("asset", ["crm_audit", "outreach_growth"])
def test_the_new_assets_are_on_the_timetable_before_the_brief(asset):
    from company_ai.days import entry_of

    brief = entry_of("morning_brief").at
    assert entry_of(asset).at < brief
    assert entry_of("crm_audit").capture and not entry_of("outreach_growth").capture


def test_the_daily_assets_report_their_headline_figures_as_numbers(tmp_path, clock):
    from company_ai.resources.embedder import Embedder
    from company_ai.sample_world.crm import load_sample
    from tests.conftest import AS_OF

    data = tmp_path / "data"
    load_sample(Stores(data), contacts=40, as_of=AS_OF)  # small: the vectors are embedded
    night = named("contact_episodes", "brain_facts", "episode_vectors", "knowledge_vectors")
    given = {"stores": StoresResource(data_dir=str(data)), "embedder": Embedder()}
    clock(datetime(2026, 11, 30, 3, 0, tzinfo=UTC))  # after the 02:00 aging of 2026-11-30
    with dg.instance_for_test() as instance:
        ran = dg.materialize(night, partition_key="2026-11-29", instance=instance, resources=given)
        aged = dg.materialize(
            [named("memory_aging")], partition_key=DAY, instance=instance, resources=given
        )
    figures = {
        "contact_episodes": ("episodes_sealed",),
        "brain_facts": ("facts", "decisions"),
        "episode_vectors": ("vectors",),
        "knowledge_vectors": ("vectors",),
    }
    found = {asset: meta(ran, asset) for asset in figures}
    for asset, keys in figures.items():
        for key in keys:
            assert type(found[asset][key]) is int, (asset, key)
    assert found["contact_episodes"]["episodes_sealed"] > 0 and found["brain_facts"]["facts"] > 0
    aging = meta(aged, "memory_aging")
    assert type(aging["vectors_episodes"]) is int and type(aging["vectors_knowledge"]) is int
    # What aging keeps live is what the night left, less what it moved to the archive.
    moved = aging["archived_by_collection"]
    for name, asset in (("episodes", "episode_vectors"), ("knowledge", "knowledge_vectors")):
        assert aging[f"vectors_{name}"] == found[asset]["vectors"] - moved.get(name, 0)
    assert aging["vectors_episodes"] > 0
