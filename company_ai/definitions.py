"""The one Definitions object of the company_ai code location."""

import dagster as dg

from company_ai import settings
from company_ai.assets import memory, outreach
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from company_ai.schedules import jobs, schedules

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([memory, outreach]),
    asset_checks=dg.load_asset_checks_from_modules([outreach]),
    jobs=jobs,
    schedules=schedules,
    resources={
        "stores": StoresResource(data_dir=str(settings.data_dir())),
        "llm": LLMResource(
            backend=settings.llm_backend(),
            host=settings.ollama_host(),
            model=settings.llm_model(),
        ),
        "research_source": ResearchSource(pages_dir=str(settings.data_dir() / "company_pages")),
        "mailer": Mailer(
            backend=settings.mailer(),
            outbox_dir=str(settings.data_dir() / "outbox"),
            gmail_token=dg.EnvVar("COMPANY_AI_GMAIL_TOKEN") if settings.mailer() == "gmail" else "",
            sender_name=settings.sender_name(),
            sender_email=settings.sender_email(),
        ),
    },
)
