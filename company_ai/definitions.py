"""The one Definitions object of the company_ai code location."""

import dagster as dg

from company_ai import settings
from company_ai.assets import brain, memory, ops, outreach, vault
from company_ai.resources.embedder import Embedder
from company_ai.resources.folders import OpsFolders
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.notifier import Notifier
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from company_ai.schedules import jobs, schedules, with_freshness
from company_ai.sensors.alerts import check_failure_alerts, freshness_alerts, run_failure_alerts
from company_ai.sensors.catchup import catchup_sensor


def notifier() -> Notifier:
    """The outbox by default; Telegram when COMPANY_AI_NOTIFIER=telegram (token: EnvVar)."""
    telegram = settings.notifier() == "telegram"
    return Notifier(
        backend=settings.notifier(),
        data_dir=str(settings.data_dir()),
        outbox_path=str(settings.outbox()),
        telegram_token=dg.EnvVar("COMPANY_AI_TELEGRAM_TOKEN") if telegram else "",
        telegram_chat_id=settings.telegram_chat_id(),
        telegram_base_url=settings.telegram_base_url(),
    )


defs = dg.Definitions(
    assets=with_freshness(dg.load_assets_from_modules([memory, outreach, vault, ops, brain])),
    asset_checks=[ops.restore_drill, *dg.load_asset_checks_from_modules([outreach, vault])],
    jobs=jobs,
    schedules=schedules,
    sensors=[catchup_sensor, run_failure_alerts, check_failure_alerts, freshness_alerts],
    resources={
        "stores": StoresResource(
            data_dir=str(settings.data_dir()), first_day=settings.start_date()
        ),
        "notifier": notifier(),
        "ops_folders": OpsFolders(
            snapshot_dir=str(settings.snapshot_dir()),
            snapshot_retention=settings.snapshot_retention(),
            state_dir=str(settings.state_dir()),
            export_dir=str(settings.export_dir()),
        ),
        "llm": LLMResource(
            backend=settings.llm_backend(),
            host=settings.ollama_host(),
            model=settings.llm_model(),
        ),
        "embedder": Embedder(backend=settings.embedder_backend(), host=settings.ollama_host()),
        "vault": VaultResource(
            path=str(settings.vault_dir()),
            private_folders=list(settings.vault_private_folders()),
            include_hidden_folders=settings.vault_include_hidden_folders(),
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
