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

# The vault pipeline (staging -> pages -> index). Measured at 10,000 notes on 2 busy cores
# (BENCHMARKS.md): staging cold 4-12 s, the offline distiller 2 ms a page, embedding up to
# 48 ms a page. Sized for a heavy night through Ollama: 100 changed notes x ~20 s a page =
# 2,000 s, + all 10,000 pages re-embedded (a rebuild) x 48 ms = 480 s, + staging 12 s and
# the fabrication re-check 20 s: about 2,500 s. 3,600 s leaves headroom and still ends
# before the 02:00 aging job; `recall_pages`' max_pages caps the model calls of a bigger
# backlog, which the next nights finish (every page is committed as it is done).
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
