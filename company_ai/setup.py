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
from company_ai.core.timetable import TIMETABLE, TODAY
from company_ai.settings import Settings

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Setup:
    settings: Settings
    clock: Clock = utc_now
    daily: dg.DailyPartitionsDefinition = field(init=False)
    workdays: dg.TimeWindowPartitionsDefinition = field(init=False)
    weekly: dg.WeeklyPartitionsDefinition = field(init=False)

    def __post_init__(self) -> None:
        start, tz = self.settings.start_date, self.settings.timezone
        # Daily partitions in the configured timezone; the last is the last complete day.
        object.__setattr__(self, "daily", dg.DailyPartitionsDefinition(start, timezone=tz))
        # Outreach works on weekdays and its partition is named by the day the work is done:
        # one window per weekday tick (Friday's runs to Monday's), the current one included,
        # so no partition exists that no schedule will fill.
        outreach = next(e.slot for e in TIMETABLE if e.grain == TODAY)
        workdays = dg.TimeWindowPartitionsDefinition(
            cron_schedule=outreach.cron, start=start, fmt="%Y-%m-%d", timezone=tz, end_offset=1
        )
        object.__setattr__(self, "workdays", workdays)
        # Monday-to-Sunday weeks, named by their Monday; the last is the last complete week.
        weekly = dg.WeeklyPartitionsDefinition(start, day_offset=1, timezone=tz)
        object.__setattr__(self, "weekly", weekly)

    @property
    def tz(self) -> str:
        return self.settings.timezone

    def now(self) -> datetime:
        return self.clock()
