"""The one Definitions object of the company_ai code location."""

import dagster as dg

from company_ai import settings
from company_ai.assets import memory
from company_ai.resources.stores import StoresResource
from company_ai.schedules import jobs, schedules

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([memory]),
    jobs=jobs,
    schedules=schedules,
    resources={"stores": StoresResource(data_dir=str(settings.data_dir()))},
)
