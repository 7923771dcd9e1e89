"""What the Dagster layer is built from: the settings, read once, and the one clock.

`definitions.py` builds every asset, job, schedule and sensor from a `Setup`, so nothing
reads the environment or the wall clock at import, and a test builds the same code
location with its own settings and a clock it controls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import dagster as dg

from company_ai.core.times import utc_now
from company_ai.core.timetable import TIMETABLE
from company_ai.settings import Settings

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Setup:
    settings: Settings
    clock: Clock = utc_now
    daily: dg.DailyPartitionsDefinition = field(init=False)
    workdays: dg.TimeWindowPartitionsDefinition = field(init=False)

    def __post_init__(self) -> None:
        start, tz = self.settings.start_date, self.settings.timezone
        # Daily partitions in the configured timezone, named by the day of the tick that
        # processes them (core/timetable.py), so today's is there from midnight on.
        daily = dg.DailyPartitionsDefinition(start, timezone=tz, end_offset=1)
        object.__setattr__(self, "daily", daily)
        # Outreach works on weekdays: one partition per weekday tick, named by its day, so
        # no partition exists that no schedule will fill.
        outreach = next(e.slot for e in TIMETABLE if e.job == "outreach_job")
        workdays = dg.TimeWindowPartitionsDefinition(
            cron_schedule=outreach.cron, start=start, fmt="%Y-%m-%d", timezone=tz, end_offset=1
        )
        object.__setattr__(self, "workdays", workdays)

    @property
    def tz(self) -> str:
        return self.settings.timezone

    def now(self) -> datetime:
        return self.clock()
