"""The one Definitions object of the company_ai code location, built when Dagster loads it.

`defs` reads the settings once (`Settings.from_env`) and builds every asset, job, schedule,
sensor and resource from them and the wall clock; `build(setup)` is the same for any
settings and clock (the tests use it). Nothing is read from the environment at import.
"""

import functools
import warnings

import dagster as dg

from company_ai import schedules
from company_ai.assets import brain, crm, inbox, memory, ops, outreach, vault
from company_ai.core.intake import has_credentials
from company_ai.core.timetable import TIMETABLE
from company_ai.resources.embedder import Embedder
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.folders import OpsFolders
from company_ai.resources.inbox import InboxSource
from company_ai.resources.llm import LLMResource
from company_ai.resources.mailer import Mailer
from company_ai.resources.notifier import Notifier
from company_ai.resources.people import PeopleSource
from company_ai.resources.research import ResearchSource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from company_ai.sample_world.people import SAMPLE_PEOPLE_FILE
from company_ai.sensors import held_sends
from company_ai.sensors.alerts import check_failure_alerts, freshness_alerts, run_failure_alerts
from company_ai.sensors.catchup import build_catchup_sensor
from company_ai.settings import Settings
from company_ai.setup import Setup

# Dagster 1.13 copies a sensor that targets an op job when it binds the job's resources,
# passing `owners=[]` along, then warns that `owners` (never set here) is in beta: every
# process that loads this location (20 in a demo) printed it for held_sends_sensor.
warnings.filterwarnings(
    "ignore", r"Parameter `owners` of initializer `SensorDefinition", dg.BetaWarning
)


def resources(settings: Settings) -> dict:
    """One resource per external system, from the settings; secrets only as `dg.EnvVar`."""
    s = settings
    telegram = s.notifier == "telegram"
    google = s.contacts == "google"
    database_url = dg.EnvVar("COMPANY_AI_DATABASE_URL") if s.database_url else ""
    return {
        "stores": StoresResource(
            data_dir=str(s.data_dir),
            database_url=database_url,
            chroma_url=s.chroma_url,
            first_day=s.start_date,
        ),
        "notifier": Notifier(
            backend=s.notifier,
            data_dir=str(s.data_dir),
            database_url=database_url,
            outbox_path=str(s.outbox),
            telegram_token=dg.EnvVar("COMPANY_AI_TELEGRAM_TOKEN") if telegram else "",
            telegram_chat_id=s.telegram_chat_id,
            telegram_base_url=s.telegram_base_url,
        ),
        "ops_folders": OpsFolders(
            snapshot_dir=str(s.snapshot_dir),
            snapshot_retention=s.snapshot_retention,
            state_dir=str(s.state_dir),
            export_dir=str(s.export_dir),
        ),
        "llm": LLMResource(backend=s.llm_backend, host=s.ollama_host, model=s.llm_model),
        "embedder": Embedder(backend=s.embedder_backend, host=s.ollama_host),
        "vault": VaultResource(
            path=str(s.vault_dir),
            private_folders=list(s.vault_private_folders),
            include_hidden_folders=s.vault_include_hidden_folders,
        ),
        "research_source": ResearchSource(
            pages_dir=str(s.data_dir / "company_pages"),
            mode=s.research,
            # An address with credentials in it is a secret: read from the environment at
            # run time, never written into the definitions the UI shows.
            url=(
                dg.EnvVar("COMPANY_AI_RESEARCH_URL")
                if has_credentials(s.research_url)
                else s.research_url
            ),
        ),
        "people": PeopleSource(
            backend=s.contacts,
            sample_file=str(s.data_dir / SAMPLE_PEOPLE_FILE),
            google_token=dg.EnvVar("COMPANY_AI_GOOGLE_PEOPLE_TOKEN") if google else "",
        ),
        "mailer": Mailer(
            backend=s.mailer,
            outbox_dir=str(s.data_dir / "outbox"),
            gmail_token=dg.EnvVar("COMPANY_AI_GMAIL_TOKEN") if s.mailer == "gmail" else "",
            sender_name=s.sender_name,
            sender_email=s.sender_email,
            company_domains=list(s.company_domains),
            company_phones=list(s.company_phones),
        ),
        "inbox_source": InboxSource(
            backend=s.inbox,
            maildir=str(s.inbox_dir / "maildir"),
            cursor=str(s.inbox_dir / "cursor.json"),
            gmail_token=dg.EnvVar("COMPANY_AI_GMAIL_TOKEN") if s.inbox == "gmail" else "",
        ),
        "engagement_drop": EngagementDrop(folder=str(s.engagement_dir)),
    }


def all_assets(setup: Setup) -> tuple[list, list]:
    """(every asset, with each scheduled asset's freshness policy; every separate check)."""
    built = [*crm.assets(setup), *memory.assets(setup), *outreach.assets(setup)]
    built += [*vault.assets(setup), *inbox.assets(setup)]
    built += [*ops.assets(setup), *brain.assets(setup)]
    checks = [b for b in built if isinstance(b, dg.AssetChecksDefinition)]
    assets = [b for b in built if not isinstance(b, dg.AssetChecksDefinition)]
    return schedules.with_timetable(assets, setup.tz), checks


def build(setup: Setup) -> dg.Definitions:
    by_name, jobs, timetable = schedules.build(setup.tz)
    assets, checks = all_assets(setup)
    catchup = build_catchup_sensor(setup, TIMETABLE, [by_name[e.job] for e in TIMETABLE])
    held_sends_job, held_sends_sensor = held_sends.build(setup)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        jobs=[*jobs, held_sends_job],
        schedules=timetable,
        sensors=[
            catchup,
            held_sends_sensor,
            run_failure_alerts,
            check_failure_alerts,
            freshness_alerts,
        ],
        resources=resources(setup.settings),
        # Ad-hoc runs (`dagster asset materialize`, the UI's Materialize) run their steps in
        # one process too, like the timetable's jobs: a process per step cost ~2.5 s each.
        executor=dg.in_process_executor,
    )


@functools.cache
def _built(settings: Settings) -> dg.Definitions:
    return build(Setup(settings))


@dg.definitions
def defs() -> dg.Definitions:
    # Dagster calls this several times in one process (a CLI run loads the code location,
    # then the job, then each step); building once per settings saves ~0.15 s a call.
    return _built(Settings.from_env())
