from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg

from company_ai.core.timetable import TIMETABLE
from tests.setup import DEFS as defs
from tests.setup import SETUP


def tick(schedule_name: str, at: datetime) -> list[dg.RunRequest]:
    schedule = defs.resolve_schedule_def(schedule_name)
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=at, repository_def=defs.get_repository_def()
        )
        return schedule.evaluate_tick(context).run_requests


def test_outreach_runs_on_weekdays_at_0755_for_the_day_the_work_is_done():
    schedule = defs.resolve_schedule_def("outreach_job_schedule")
    assert schedule.cron_schedule == "55 7 * * 1,2,3,4,5"
    tz = SETUP.tz
    assert schedule.description.startswith(f"Mon–Fri 07:55 {tz}")
    job = defs.resolve_job_def("outreach_job")
    keys = {k.to_user_string() for k in job.asset_layer.executable_asset_keys}
    assert keys == {"research_findings", "outreach_drafts", "outreach_messages"}
    zone = ZoneInfo(tz)
    days = [datetime(2026, 11, 23 + n, 7, 55, tzinfo=zone) for n in (0, 4, 7)]  # Mon, Fri, Mon
    requested = [r.partition_key for at in days for r in tick("outreach_job_schedule", at)]
    assert requested == ["2026-11-23", "2026-11-27", "2026-11-30"]
    # Every partition is one a tick fills: no weekend partitions exist at all.
    with dg.partition_loading_context(effective_dt=datetime(2026, 12, 1, tzinfo=zone)):
        keys = SETUP.workdays.get_partition_keys()
    assert "2026-11-27" in keys and "2026-11-28" not in keys and "2026-11-29" not in keys


def test_schedule_descriptions_are_words_not_python_day_numbers():
    for schedule in defs.schedules:
        assert "frozenset" not in schedule.description and "[" not in schedule.description
    growth = defs.resolve_schedule_def("outreach_growth_job_schedule")
    assert growth.description.startswith(f"Every day 05:30 {SETUP.tz}")


def test_light_jobs_run_their_steps_in_one_process():
    for entry in TIMETABLE:
        job = defs.resolve_job_def(entry.job)
        assert job.executor_def.name == "in_process", entry.job
