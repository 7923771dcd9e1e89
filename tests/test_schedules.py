from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg

from company_ai import settings
from company_ai.definitions import defs
from company_ai.schedules import TIMETABLE


def test_outreach_runs_research_drafts_gate_and_send_on_weekdays_at_0755():
    schedule = defs.resolve_schedule_def("outreach_job_schedule")
    assert schedule.cron_schedule == "55 7 * * 1,2,3,4,5"
    [entry] = [e for e in TIMETABLE if e.job == "outreach_job"]
    assert schedule.execution_timezone == settings.timezone()
    job = defs.resolve_job_def("outreach_job")
    assert int(job.tags["dagster/max_runtime"]) == entry.max_runtime_s >= 30 * 60
    keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    assert keys == {"research_findings", "outreach_drafts", "outreach_messages"}
    tz = ZoneInfo(settings.timezone())
    with dg.instance_for_test() as instance:
        monday = datetime(2026, 11, 30, 7, 55, tzinfo=tz)
        context = dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=monday,
            repository_def=defs.get_repository_def(),
        )
        [request] = schedule.evaluate_tick(context).run_requests
        assert request.partition_key == "2026-11-29"
