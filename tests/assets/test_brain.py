"""The night's own memory through Dagster: brain facts, the Markdown export, the growth."""

from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.store import Stores
from company_ai.resources.folders import OpsFolders
from company_ai.resources.stores import StoresResource
from tests.setup import named

(brain_facts, memory_export, outreach_growth) = named(
    "brain_facts", "memory_export", "outreach_growth"
)
contact_episodes = named("contact_episodes")

DAY, BEFORE = "2026-11-28", "2026-11-27"


def resources(data, export_dir=None):
    return {
        "stores": StoresResource(data_dir=str(data)),
        "ops_folders": OpsFolders(
            snapshot_dir=str(data / "snapshots"),
            state_dir=str(data / "state"),
            export_dir=str(export_dir or data / "exports"),
        ),
    }


def night(instance, data, day, export_dir=None, **kwargs):
    return dg.materialize(
        [contact_episodes, brain_facts, memory_export],
        partition_key=day,
        instance=instance,
        resources=resources(data, export_dir),
        **kwargs,
    )


def meta(result, key):
    [event] = result.asset_materializations_for_node(key)
    return {k: v.value for k, v in event.metadata.items()}


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def brain_rows(data, day):
    with Stores(data).connect("brain", readonly=True) as conn:
        return [
            tuple(r)
            for r in conn.execute("SELECT * FROM facts WHERE day = $1 ORDER BY key", (day,))
        ]


def test_a_night_is_synthesised_and_exported_and_its_replay_is_byte_identical(data, clock):
    with dg.instance_for_test() as instance:
        first = night(instance, data, DAY)
        night(instance, data, BEFORE)
        exported = files(data / "exports" / DAY)
        facts, before = brain_rows(data, DAY), brain_rows(data, BEFORE)
        assert facts and before and meta(first, "memory_export")["contacts"] > 0
        assert "index.md" in exported and any(k.startswith("contacts/") for k in exported)
        clock(datetime(2026, 12, 20, 23, 30, tzinfo=UTC))  # weeks later
        again = night(instance, data, DAY)
    assert files(data / "exports" / DAY) == exported, "byte-identical"
    assert meta(again, "memory_export")["written"] == 0
    assert brain_rows(data, DAY) == facts, "the same rows"
    assert brain_rows(data, BEFORE) == before, "and no other day's"


def test_an_export_folder_that_cannot_be_written_fails_clearly_and_loses_nothing(data, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with dg.instance_for_test() as instance:
        result = night(instance, data, DAY, export_dir=blocked / "exports", raise_on_error=False)
    assert not result.success
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert str(blocked) in failure.step_failure_data.user_failure_data.description
    assert brain_rows(data, DAY), "the brain's rows were written before the export failed"
    assert blocked.read_text() == "not a folder"


def test_a_partition_key_outside_the_range_is_refused_before_anything_runs(data):
    with dg.instance_for_test() as instance, pytest.raises(dg.DagsterUnknownPartitionError):
        night(instance, data, "1999-01-01")
    assert not Stores(data).path("brain").exists()


def growth(instance, data, day):
    return dg.materialize(
        [outreach_growth], partition_key=day, instance=instance, resources=resources(data)
    )


def test_the_growth_is_a_pandas_table_a_markdown_file_and_numbers_and_replays_alike(data):
    day = "2026-11-30"  # a Monday: the sample's last week is complete at its 05:30 tick
    with dg.instance_for_test() as instance:
        metadata = meta(growth(instance, data, day), "outreach_growth")
        path = data / "exports" / "growth" / f"{day}.md"
        text = path.read_bytes()
        with Stores(data).connect("outreach") as conn:
            # Every other message answered a minute after the tick: not that morning's figure.
            conn.execute(
                "UPDATE messages SET replied_at = '2026-11-30T05:31:00Z' WHERE replied_at IS NULL"
            )
            conn.commit()
        again = meta(growth(instance, data, day), "outreach_growth")
    rows = [r.data for r in metadata["growth"].records]
    last = [r for r in rows if r["week"] == "2026-11-23"]
    assert last[0]["angle"] == "(all)" and last[0]["complete"] is True
    assert last[0]["sent"] == metadata["sent"] > 0 and metadata["week"] == "2026-11-23"
    assert sum(r["sent"] for r in last[1:]) == last[0]["sent"]
    assert metadata["replies"] == last[0]["replied"]
    assert type(metadata["sent"]) is int and type(metadata["replies"]) is int
    assert (
        type(metadata["reply_rate"]) is float and type(metadata["best_angle_reply_rate"]) is float
    )
    assert len({r["week"] for r in rows}) == 8
    assert text.startswith(b"# Outreach growth, the 8 weeks to 2026-11-30T05:30:00Z\n\n| week |")
    assert path.read_bytes() == text, "a replay after later replies writes the same file"
    assert again["replies"] == metadata["replies"] and again["growth"] == metadata["growth"]


def test_the_growth_before_any_send_is_zeros_not_a_failure(tmp_path):
    with dg.instance_for_test() as instance:
        metadata = meta(growth(instance, tmp_path, "2026-11-30"), "outreach_growth")
    assert (metadata["sent"], metadata["replies"], metadata["best_angle"]) == (0, 0, "none")
    assert metadata["reply_rate"] is None
