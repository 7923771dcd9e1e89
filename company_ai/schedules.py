"""The timetable: jobs and their schedules (see DESIGN.md, "The day")."""

import dagster as dg

from company_ai.constants import MEMORY, VAULT

# Sealing reads one day's rows once and writes one row: about 0.1 s at the sample's
# ~200 episodes a day and ~1 s at a 1.5M-episode store. 600 s is ample headroom and
# still stops a wedged run long before the next night.
MEMORY_MAX_RUNTIME_S = 600

memory_job = dg.define_asset_job(
    "memory_job",
    selection=dg.AssetSelection.groups(MEMORY),
    tags={"dagster/max_runtime": str(MEMORY_MAX_RUNTIME_S)},
)

# The vault pipeline (staging -> pages -> index). Measured (BENCHMARKS.md): staging a
# 10,000-note vault cold ~4 s, the offline distiller ~0.3 s a page changed, embedding
# ~25 ms a page. A heavy night, 500 changed notes through Ollama at ~20 s each = 10,000 s,
# is beyond any sane window, so the budget is sized for 100 changed notes: 100 x 20 s
# = 2,000 s + 10,000 pages re-embedded after a model change (250 s) + staging (5 s),
# about 2,300 s; 3,600 s leaves headroom and still ends before the 02:00 aging job.
VAULT_MAX_RUNTIME_S = 3600

vault_job = dg.define_asset_job(
    "vault_job",
    selection=dg.AssetSelection.groups(VAULT),
    tags={"dagster/max_runtime": str(VAULT_MAX_RUNTIME_S)},
)
vault_schedule = dg.build_schedule_from_partitioned_job(
    vault_job,
    hour_of_day=0,
    minute_of_hour=30,
    name="vault_schedule",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)

jobs = [memory_job, vault_job]
schedules: list[dg.ScheduleDefinition] = [vault_schedule]
