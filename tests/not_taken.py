"""What every capture run for a day whose moment has passed must show (company_ai/days.py):
green, nothing materialised, one plain sentence in its log, the run tagged, and each
capture's partition carrying that sentence as a `not_taken` observation."""

from __future__ import annotations

import dagster as dg

from company_ai import days


def logged(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The run's own log lines (not Dagster's events)."""
    return [e.user_message for e in instance.all_logs(run_id) if e.dagster_event is None]


def not_taken(instance: dg.DagsterInstance, asset: str, day: str) -> list[str]:
    """The `not_taken` sentences recorded on `asset`'s partition `day`, newest first."""
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[day]), limit=20
    ).records
    return [
        r.asset_observation.metadata[days.NOT_TAKEN].value
        for r in records
        if r.asset_observation and days.NOT_TAKEN in r.asset_observation.metadata
    ]


def declined(
    instance: dg.DagsterInstance, result, day: str, *captures: str, done_before: bool = False
) -> str:
    """Assert that `result` is a run that declined `day` for `captures`; its sentence.
    `done_before`: the day's own run had materialised it, and it stays so."""
    run = instance.get_run_by_id(result.run_id)
    assert result.success and run.status == dg.DagsterRunStatus.SUCCESS
    assert result.get_asset_materialization_events() == []
    assert result.get_asset_check_evaluations() == []
    assert run.tags[days.NOT_TAKEN_TAG] == days.PAST_DAY
    said = [line for line in logged(instance, result.run_id) if line.startswith("Not taken")]
    assert len(said) == 1, said
    assert day in said[0] and "launch" in said[0]
    assert "\n" not in said[0] and ". " not in said[0], "one plain sentence"
    for asset in captures:
        assert not_taken(instance, asset, day)[0] == said[0]
        done = instance.get_materialized_partitions(dg.AssetKey(asset))
        assert (day in done) == done_before
    return said[0]
