"""The timetable: jobs and their schedules (see DESIGN.md, "The day")."""

import dagster as dg

from company_ai.constants import MEMORY

# Sealing reads one day's rows once and writes one row: about 0.1 s at the sample's
# ~200 episodes a day and ~1 s at a 1.5M-episode store. 600 s is ample headroom and
# still stops a wedged run long before the next night.
MEMORY_MAX_RUNTIME_S = 600

memory_job = dg.define_asset_job(
    "memory_job",
    selection=dg.AssetSelection.groups(MEMORY),
    tags={"dagster/max_runtime": str(MEMORY_MAX_RUNTIME_S)},
)

jobs = [memory_job]
schedules: list[dg.ScheduleDefinition] = []
