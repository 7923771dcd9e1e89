"""The one Definitions object of the company_ai code location."""

import dagster as dg

from company_ai import settings
from company_ai.assets import memory, vault
from company_ai.resources.embedder import Embedder
from company_ai.resources.llm import LLMResource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from company_ai.schedules import jobs, schedules

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([memory, vault]),
    jobs=jobs,
    schedules=schedules,
    resources={
        "stores": StoresResource(data_dir=str(settings.data_dir())),
        "vault": VaultResource(
            path=str(settings.vault_dir()), private_folders=list(settings.vault_private_folders())
        ),
        "llm": LLMResource(),
        "embedder": Embedder(),
    },
)
