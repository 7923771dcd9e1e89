"""Past one box: Dagster's storage and the memory store in a real PostgreSQL.

The server is Debian's PostgreSQL, started for the session by tests/pg_server.py; where it
is not installed these tests are skipped and say why (scripts/setup installs it as root).
"""

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.execution.plan.active import ActiveExecution

from company_ai.constants import LLM_ASSETS, LLM_TAG
from company_ai.core.brain import synthesize_day
from company_ai.core.brain.export import render_day
from company_ai.core.store import Store, StoreError, Stores
from company_ai.core.store.pg_schema import PG_FIRST_COVERS, PG_MIGRATIONS
from company_ai.core.store.schema import MIGRATIONS
from company_ai.core.times import Day
from company_ai.resources.stores import StoresResource
from company_ai.sample_world.crm import load_sample
from company_ai.settings import Settings
from tests.conftest import AS_OF
from tests.hostile.canary import find_canary
from tests.pg_server import free_port
from tests.setup import DEFS, named

DEPLOY_YAML = Path(__file__).resolve().parent.parent / "deploy" / "dagster.yaml"
DAY = "2026-11-29"  # a day on which the 60-contact sample gives the brain facts to read
PASSWORD = "pw-canary-7Kq2vXz9"  # never to be written anywhere


def seal_through_dagster(instance, data, memory_url=""):
    result = dg.materialize(
        [named("contact_episodes")],
        partition_key=DAY,
        instance=instance,
        resources={"stores": StoresResource(data_dir=str(data), database_url=memory_url)},
        raise_on_error=False,
    )
    return result


def test_a_day_materialises_through_postgres_storage_and_a_postgres_memory_store(
    pg_server, tmp_path, monkeypatch
):
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(DEPLOY_YAML, home / "dagster.yaml")  # the documented file, as shipped
    pg_server.create_database("dagster")
    for name, value in [("HOST", "127.0.0.1"), ("PORT", str(pg_server.port)), ("DB", "dagster"),
                        ("USER", "postgres"), ("PASSWORD", "not-checked")]:  # fmt: skip
        monkeypatch.setenv(f"DAGSTER_PG_{name}", value)
    memory_url = pg_server.create_database("memory")
    on_pg, on_files = tmp_path / "pg_data", tmp_path / "file_data"
    load_sample(Stores(on_pg, database_url=memory_url), contacts=60, as_of=AS_OF)
    load_sample(Stores(on_files), contacts=60, as_of=AS_OF)

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert instance.run_monitoring_enabled and instance.run_retries_enabled
        concurrency = instance.get_concurrency_config()
        assert concurrency.pool_config.default_pool_limit == 1
        assert {"key": LLM_TAG, "limit": 1} in concurrency.run_queue_config.tag_concurrency_limits
        result = seal_through_dagster(instance, on_pg, memory_url)
        assert result.success
        assert instance.get_materialized_partitions(dg.AssetKey("contact_episodes")) == {DAY}
        assert all(c.passed for c in result.get_asset_check_evaluations())
    finally:
        instance.dispose()
    seal = result.get_asset_materialization_events()[0].materialization.metadata
    assert not (on_pg / "memory.db").exists(), "the memory store is the server, not a file"
    with Stores(on_pg, database_url=memory_url).connect(Store.MEMORY) as memory:
        stored = memory.execute("SELECT episodes, digest FROM day_seals WHERE day = $1", (DAY,))
        assert tuple(stored.fetchone()) == (seal["dagster/row_count"].value, seal["digest"].value)
    assert seal["dagster/row_count"].value > 0

    # The same sample sealed from a SQLite file gives the same seal: same rows, same ids.
    with dg.instance_for_test() as local:
        on_sqlite = seal_through_dagster(local, on_files)
    same = on_sqlite.get_asset_materialization_events()[0].materialization.metadata
    assert same["digest"].value == seal["digest"].value
    assert same["by_type"].value == seal["by_type"].value
    # What reads the memory store reads it the same from either: the night's brain facts
    # and the Markdown export of the day.
    pg_stores = Stores(on_pg, database_url=memory_url)
    brain = synthesize_day(pg_stores, Day.of(DAY, "UTC"), [])
    from_memory = [f for f in brain.facts if "memory.contact_episodes" in " ".join(f.sources)]
    assert (
        from_memory
        and brain.facts == synthesize_day(Stores(on_files), Day.of(DAY, "UTC"), []).facts
    )
    exported = render_day(pg_stores, Day.of(DAY, "UTC"))
    assert len(exported) > 1 and exported == render_day(Stores(on_files), Day.of(DAY, "UTC"))


def test_the_jobs_that_call_the_model_carry_the_tag_the_production_instance_limits():
    # A step that needs the model makes at least one asset that calls it (the vault's
    # multi-asset makes three, only recall_pages of which calls the model).
    steps = [
        {key.to_user_string() for key in assets.keys}
        for assets in DEFS.assets
        if "llm" in assets.required_resource_keys
    ]
    assert all(keys & LLM_ASSETS for keys in steps)
    calls_model = set().union(*steps) & LLM_ASSETS
    assert calls_model == LLM_ASSETS
    graph = DEFS.resolve_asset_graph()
    for job in DEFS.jobs:
        selection = getattr(job, "selection", None)  # an op job (held_sends_job) has none
        selected = {k.to_user_string() for k in selection.resolve(graph)} if selection else set()
        assert (job.tags.get(LLM_TAG) == "true") == bool(selected & calls_model), job.name


def test_the_postgres_schema_keeps_step_with_the_sqlite_one():
    # A new SQLite version of a store that may live in Postgres needs its Postgres twin.
    for store, versions in PG_MIGRATIONS.items():
        assert len(versions) - 1 + PG_FIRST_COVERS[store] == len(MIGRATIONS[store]), store


def dead_url():
    return f"postgresql://company:{PASSWORD}@127.0.0.1:{free_port()}/memory"


def test_postgres_down_at_start_is_a_clear_error_naming_the_url_without_its_password(tmp_path):
    url = dead_url()
    with pytest.raises(StoreError) as caught:
        Stores(tmp_path / "data", database_url=url).open(Store.MEMORY)
    message = str(caught.value)
    assert url.replace(PASSWORD, "***") in message and "cannot reach the memory store" in message
    assert PASSWORD not in message and PASSWORD not in repr(caught.value.__cause__)
    assert not (tmp_path / "data" / "memory.db").exists()


def test_postgres_down_fails_the_run_and_the_cli_clearly_and_the_password_goes_nowhere(
    tmp_path, sample_dir, monkeypatch
):
    url = dead_url()
    monkeypatch.setenv("COMPANY_AI_DATABASE_URL", url)
    (tmp_path / "home").mkdir()
    waits: list[float] = []  # the step's retry policy waits a minute, then two: not here

    def no_wait(active):
        waits.append(active.sleep_interval())
        active._waiting_to_retry = dict.fromkeys(active._waiting_to_retry, 0.0)

    monkeypatch.setattr(ActiveExecution, "sleep_til_ready", no_wait)
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        result = seal_through_dagster(
            instance, tmp_path / "data", dg.EnvVar("COMPANY_AI_DATABASE_URL")
        )
        assert not result.success
        assert len(result.filter_events(lambda e: e.is_step_up_for_retry)) == 2
        # Two retries, each waiting (a minute, then two, with jitter) before it ran.
        assert len(waits) == 2 and all(0 < wait <= 240 for wait in waits), waits
        failure = result.get_step_failure_events()[0].step_failure_data.error
        assert re.search(
            r"cannot reach the \w+ store at postgresql://company:\*\*\*@", failure.cause.message
        )
    email = (
        Stores(sample_dir)
        .open(Store.CRM, readonly=True)
        .execute("SELECT email FROM contacts WHERE email IS NOT NULL LIMIT 1")
        .fetchone()[0]
    )
    done = subprocess.run(
        [sys.executable, "-m", "company_ai.cli", "--data-dir", str(sample_dir), "dossier", email],
        capture_output=True,
        text=True,
        env={"COMPANY_AI_DATABASE_URL": url, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert re.search(
        r"cannot reach the \w+ store at postgresql://company:\*\*\*@127.0.0.1", done.stderr
    )
    assert PASSWORD not in done.stderr + done.stdout
    assert find_canary(PASSWORD, tmp_path) == []
    assert PASSWORD not in repr(Settings.from_env({"COMPANY_AI_DATABASE_URL": url}))


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("mysql://root:pw-canary-7Kq2vXz9@db/memory", "must be postgresql://"),
        ("/srv/memory.db", "must be postgresql://"),
    ],
)
def test_a_memory_url_that_is_not_postgres_is_refused_without_its_password(url, complaint):
    with pytest.raises(ValueError, match=complaint) as caught:
        Settings.from_env({"COMPANY_AI_DATABASE_URL": url})
    assert PASSWORD not in str(caught.value)


def test_the_old_memory_only_url_is_refused_with_the_setting_that_replaced_it():
    with pytest.raises(ValueError, match="COMPANY_AI_DATABASE_URL") as caught:
        Settings.from_env({"COMPANY_AI_MEMORY_URL": f"postgresql://u:{PASSWORD}@db/memory"})
    assert PASSWORD not in str(caught.value)


def test_each_domain_lives_in_a_schema_of_its_own_in_one_database(pg_url, tmp_path):
    stores = Stores(tmp_path, database_url=pg_url)
    with stores.connect(Store.MEMORY) as memory:
        (schema,) = memory.execute(
            "SELECT table_schema FROM information_schema.tables"
            " WHERE table_name = 'contact_episodes'"
        ).fetchone()
    assert schema == "memory"
    assert not (tmp_path / "memory.db").exists()


def test_a_transaction_the_database_refuses_leaves_nothing_and_the_connection_usable(
    pg_url, tmp_path
):
    import psycopg

    from company_ai.core.memory import append_episodes
    from company_ai.core.store import transaction
    from tests.conftest import episode

    with Stores(tmp_path, database_url=pg_url).connect(Store.MEMORY) as memory:
        with pytest.raises(psycopg.Error, match="append-only"), transaction(memory):
            memory.execute(
                "INSERT INTO contact_episodes (contact_id, episode_type, content, created_at,"
                " natural_key, day, recorded_at) VALUES (1, 'note', 'x', '2026-11-29T10:00:00Z',"
                " 'k', '2026-11-29', '2026-11-29T10:00:00Z')"
            )
            memory.execute("UPDATE contact_episodes SET content = 'rewritten'")
        assert not memory.in_transaction
        assert memory.execute("SELECT count(*) FROM contact_episodes").fetchone()[0] == 0
        assert append_episodes(memory, [episode()], now="2026-11-29T12:00:00Z").inserted == 1


RANKED = [
    ("invoice-leeds", "Invoices in Leeds", "Dana handles every invoice for the Leeds depot."),
    ("invoice-york", "York invoices", "The invoice run in York waits; invoices, invoices."),
    ("rota", "Rota", "Sam keeps the support rota and the backup of the ledger."),
    ("accents", "Café pricing", "La facture du café est envoyée lundi, naïvement."),
    ("empty", "", ""),
]


def test_a_recall_store_of_version_1_gets_its_term_counts_and_ranks_as_fts5_does(pg_url, tmp_path):
    from company_ai.core.recall.retrieval import Doc, rebuild_docs, replace_docs
    from company_ai.core.store import pg, transaction

    docs = [Doc(*d) for d in RANKED]
    old = pg.connect(pg_url, Store.RECALL, PG_MIGRATIONS[Store.RECALL][:1], readonly=False)
    with transaction(old):
        rebuild_docs(old, docs)
    old.close()
    sqlite = Stores(tmp_path / "files").open(Store.RECALL)
    with transaction(sqlite):
        rebuild_docs(sqlite, docs)
    with Stores(tmp_path, database_url=pg_url).connect(Store.RECALL) as server:
        counts = dict(server.execute("SELECT key, tf FROM search_docs").fetchall())
        assert counts["invoice-york"]["invoic"] == 5.0  # three in the body, the title's twice
        assert counts["empty"] == {}
        ranked_alike(server, sqlite)
        # The counts bm25 reads follow every write: a document updated in place (on the
        # server; FTS5 follows only `replace_docs`), one replaced, one removed.
        with transaction(server):
            server.execute("UPDATE search_docs SET body = 'ledger ledger' WHERE key = 'rota'")
        for conn in (server, sqlite):
            with transaction(conn):
                replace_docs(conn, [(Doc("rota", "Rota", "ledger ledger"), "")])
                replace_docs(conn, [(Doc("accents", "Café", "facture"), "")], ["invoice-york"])
        ranked_alike(server, sqlite)
        assert server.execute("SELECT docs FROM search_stats").fetchone()[0] == len(docs) - 1


def ranked_alike(server, sqlite) -> None:
    from company_ai.core.recall.retrieval import keyword_scored

    for query in ("invoice Leeds", "ledger", "café facture", "rota backup ledger", "zzz"):
        on_server, in_fts5 = keyword_scored(server, query), keyword_scored(sqlite, query)
        assert [k for k, _ in on_server] == [k for k, _ in in_fts5], query
        assert [s for _, s in on_server] == pytest.approx([s for _, s in in_fts5]), query


def test_a_demo_night_runs_end_to_end_with_every_store_postgres_holds(pg_server, tmp_path):
    """The demo's first night, every run through the code location, with the stores that
    PostgreSQL can hold there: none of them is written as a file, and a second demo on the
    same database is refused before anything is wiped or written."""
    from tests.demo_run import ENV, demo_args, instance_of

    url = pg_server.create_database("demo_night")
    env = ENV | {"COMPANY_AI_DATABASE_URL": url}
    root = tmp_path / "demo"
    # Two days: yesterday's whole timetable (outreach included) whatever the hour of today.
    done = subprocess.run(
        demo_args(root, "--contacts", "120", "--days", "2"), capture_output=True, text=True,
        env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    runs = instance_of(root).get_runs()
    assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), [
        (r.job_name, r.status) for r in runs if r.status != dg.DagsterRunStatus.SUCCESS
    ]
    assert "passed the fabrication gate" in done.stderr, done.stderr
    assert "$ company-ai timeline " in done.stdout
    stores = Stores(root / "data", database_url=url)
    for domain in PG_MIGRATIONS:
        assert not stores.path(Store(domain)).exists(), f"{domain} was written as a file"
    with stores.connect(Store.MEMORY, readonly=True) as memory:
        (episodes,) = memory.execute("SELECT count(*) FROM contact_episodes").fetchone()
    assert episodes > 1000
    with stores.connect(Store.CRM, readonly=True) as crm:
        (email,) = crm.execute("SELECT email FROM contacts ORDER BY id LIMIT 1").fetchone()
    reads_every_store_on_the_server(root / "data", env, email)
    again = subprocess.run(demo_args(tmp_path / "again"), capture_output=True, text=True, env=env)
    assert again.returncode != 0 and "already holds the" in again.stderr
    assert "not-checked" not in again.stderr  # the URL's password
    assert not (tmp_path / "again").exists()


def reads_every_store_on_the_server(data, env, email):
    """The read side on a demo whose stores are on the server: the CLI's reads and every
    MCP tool answer, none an error."""
    from mcp import Client, StdioServerParameters

    from tests.test_mcp import call

    cli = [sys.executable, "-m", "company_ai.cli", "--data-dir", str(data)]
    # (No `similar`: a first night builds no episode vectors; tests/core/vectors covers it.)
    for args in (["recall", "what is our pricing policy"], ["timeline", email],
                 ["dossier", email]):  # fmt: skip
        done = subprocess.run([*cli, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0 and done.stdout.strip(), (args, done.stderr[-2000:])
    params = StdioServerParameters(command=sys.executable, args=[*cli[1:], "mcp"], env=env)
    calls = {
        "recall": {"question": "what is our pricing policy"},
        "timeline": {"email": email, "limit": 3},
        "dossier": {"email": email},
        "stale": {},
        "brief": {},
        "audit": {},
    }

    async def session():
        async with Client(params, read_timeout_seconds=60) as client:
            return {name: await call(client, name, **args) for name, args in calls.items()}

    answers = asyncio.run(session())
    assert not [name for name, (error, _) in answers.items() if error], answers
    assert "Pricing Policy" in answers["recall"][1]
