import json
import shutil
from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai.core.store import Stores
from company_ai.resources.embedder import Embedder
from company_ai.resources.llm import LLMResource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from tests.conftest import PRIVATE_CANARY
from tests.fakes import FakeServer, Reply, ollama_chat
from tests.not_taken import declined
from tests.setup import named

VAULT_NIGHT = named("vault_staging")  # staging, pages and index: one multi-asset

ASSETS = [VAULT_NIGHT]
DAY = "2026-11-30"
NIGHT = datetime(2026, 11, 30, 0, 30, tzinfo=UTC)  # DAY's 00:30 vault night: staging is current


@pytest.fixture(autouse=True)
def night(clock):
    clock(NIGHT)


def resources(tmp_path, vault, llm=None):
    return {
        "stores": StoresResource(data_dir=str(tmp_path / "data")),
        "vault": VaultResource(path=str(vault)),
        "llm": llm or LLMResource(),
        "embedder": Embedder(),
    }


def run(instance, res, selection=None, day=DAY):
    return dg.materialize(
        ASSETS, partition_key=day, resources=res, instance=instance, selection=selection,
        raise_on_error=False,
    )  # fmt: skip


def metadata(result, key):
    [mat] = [
        m for m in result.asset_materializations_for_node("vault_night")
        if m.asset_key.to_user_string() == key
    ]  # fmt: skip
    return {k: v.value for k, v in mat.metadata.items()}


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def test_the_pipeline_stages_21_then_0_then_1(instance, tmp_path, vault, minilm):
    res = resources(tmp_path, vault)
    first = run(instance, res)
    assert first.success
    assert metadata(first, "vault_staging")["staged"] == 21
    assert metadata(first, "recall_pages")["entities"] == 21
    assert metadata(first, "recall_index")["dagster/row_count"] == 21
    assert all(c.passed for c in first.get_asset_check_evaluations())
    again = run(instance, res)
    assert metadata(again, "vault_staging")["staged"] == 0
    assert metadata(again, "recall_pages")["distilled"] == 0
    assert metadata(again, "recall_index")["embedded"] == 0
    note = vault / "context" / "pricing-policy.md"
    note.write_text(note.read_text() + "- [decision] Annual plans renew automatically.\n")
    edited = run(instance, res)
    assert metadata(edited, "vault_staging")["staged"] == 1
    assert metadata(edited, "recall_pages")["distilled"] == 1
    assert metadata(edited, "recall_index")["embedded"] == 1


def test_nothing_downstream_reads_the_vault(instance, tmp_path, vault, minilm):
    res = resources(tmp_path, vault)
    assert run(instance, res, selection=["vault_staging"]).success
    shutil.move(vault, tmp_path / "moved-away")  # the vault is gone after staging
    downstream = run(instance, res, selection=["recall_pages", "recall_index"])
    assert downstream.success
    assert metadata(downstream, "recall_pages")["entities"] == 21
    assert metadata(downstream, "recall_index")["dagster/row_count"] == 21
    staging_again = run(instance, res, selection=["vault_staging"])
    assert not staging_again.success  # only the gate needs the vault, and it says so
    error = staging_again.get_step_failure_events()[0].event_specific_data.error
    assert "no vault at" in str(error.cause) and "COMPANY_AI_VAULT_DIR" in str(error.cause)


def test_private_content_reaches_no_store_log_vector_or_metadata(instance, tmp_path, vault):
    (vault / "notes" / "leak.md").symlink_to(vault / "journal" / "health.md")
    result = run(instance, resources(tmp_path, vault))
    assert result.success
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert PRIVATE_CANARY.encode() not in path.read_bytes(), path
    events = instance.all_logs(result.run_id)
    assert events and not any(PRIVATE_CANARY in str(e) for e in events)
    assert not any("salary" in str(e) or "journal/" in str(e) for e in events)
    with Stores(tmp_path / "data").connect("recall") as conn:
        texts = [r[0] + r[1] for r in conn.execute("SELECT title, body FROM search_docs")]
        vectors = conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0]
    assert len(texts) == vectors == 21  # every vector is of a public page's text
    assert not any(PRIVATE_CANARY in t for t in texts)


def test_a_model_that_invents_facts_gets_its_pages_withheld(instance, tmp_path, vault, minilm):
    invented = {
        "type": "note",
        "tags": [],
        "recall": "Founded in 1999 by Zanzibar Holdings.",
        "observations": [{"category": "status", "text": "Growing 300 percent."}],
        "relations": [],
    }
    with FakeServer() as server:
        server.script("/api/chat", Reply(ollama_chat(json.dumps(invented))))
        llm = LLMResource(backend="ollama", host=server.url, backoff_s=0)
        result = run(instance, resources(tmp_path, vault, llm))
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert checks["published_pages_are_supported_by_their_notes"].passed
    assert not checks["no_page_was_withheld"].passed
    assert checks["no_page_was_withheld"].severity == dg.AssetCheckSeverity.WARN
    assert metadata(result, "recall_pages")["withheld"] == 21
    assert metadata(result, "recall_pages")["entities"] == 0
    with Stores(tmp_path / "data").connect("recall") as conn:
        row = conn.execute("SELECT generated_by, published FROM pages LIMIT 1").fetchone()
        assert tuple(row) == ("model:qwen3:8b", 0)


def test_a_published_page_its_note_no_longer_supports_blocks_the_index(
    instance, tmp_path, vault, minilm
):
    res = resources(tmp_path, vault)
    assert run(instance, res).success
    note = vault / "people" / "ada-okafor.md"
    note.write_text(note.read_text().replace("She joined in March 2023 and", "She"))
    with FakeServer() as server:  # the model is down: the old page stays published
        server.script("/api/chat", Reply(status=500, body={"error": "model down"}))
        llm = LLMResource(backend="ollama", host=server.url, backoff_s=0)
        result = run(instance, resources(tmp_path, vault, llm))
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert not checks["published_pages_are_supported_by_their_notes"].passed
    assert metadata(result, "recall_pages")["model_failures"] == 21
    # The check blocks: the index is not updated in that run, and the run says why.
    assert not result.success and "recall_index was not updated" in failure_of(result)
    assert not [
        m for m in result.asset_materializations_for_node("vault_night")
        if m.asset_key.to_user_string() == "recall_index"
    ]  # fmt: skip


def test_a_capped_run_defers_the_rest_to_the_next_run(instance, tmp_path, vault, minilm):
    res = resources(tmp_path, vault)
    capped = {"ops": {"vault_night": {"config": {"max_pages": 5}}}}
    first = dg.materialize(
        ASSETS, partition_key=DAY, resources=res, instance=instance, run_config=capped
    )
    assert metadata(first, "recall_pages")["distilled"] == 5
    assert metadata(first, "recall_pages")["deferred"] == 16
    assert metadata(first, "recall_index")["dagster/row_count"] == 5
    rest = run(instance, res)
    assert metadata(rest, "recall_pages")["distilled"] == 16
    assert metadata(rest, "recall_pages")["entities"] == 21


def test_the_vault_job_runs_nightly_at_0030_with_a_max_runtime():
    from tests.setup import DEFS as defs

    job = defs.resolve_job_def("vault_job")
    assert {k.to_user_string() for k in job.asset_layer.executable_asset_keys} >= {
        "vault_staging", "recall_pages", "recall_index"
    }  # fmt: skip
    schedule = defs.resolve_schedule_def("vault_job_schedule")
    assert schedule.cron_schedule == "30 0 * * *" and schedule.job_name == "vault_job"


def failure_of(result) -> str:
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    return failure.step_failure_data.user_failure_data.description


def test_staging_is_a_capture_and_pages_are_a_replay_of_their_days_staging(
    instance, tmp_path, vault, clock
):
    res = resources(tmp_path, vault)
    clock(datetime(2026, 11, 21, 0, 30, tzinfo=UTC))
    assert run(instance, res, day="2026-11-21").success  # the 00:30 tick's own day
    pages_before = pages(tmp_path)
    clock(datetime(2026, 11, 26, 1, 0, tzinfo=UTC))
    # A past day's staging is declined: it would file today's vault under that day's name.
    late = run(instance, res, selection=["vault_staging"], day="2026-11-19")
    declined(instance, late, "2026-11-19", "vault_staging")
    whole = run(instance, res, day="2026-11-19")  # the whole night: pages and index too
    declined(instance, whole, "2026-11-19", "vault_staging")
    # A day whose staging was never captured has nothing to derive pages from.
    never = run(instance, res, selection=["recall_pages"], day="2026-11-23")
    assert not never.success and "was never captured" in failure_of(never)
    assert pages(tmp_path) == pages_before, "and nothing changed"
    # A later staging supersedes the 21st: replaying its pages changes nothing.
    (vault / "notes" / "new-note.md").write_text("# A new note\n\nWritten on the 26th.\n")
    assert run(instance, res, day="2026-11-26").success  # today's, 30 minutes after its tick
    after = pages(tmp_path)
    replay = run(instance, res, selection=["recall_pages", "recall_index"], day="2026-11-21")
    assert replay.success and pages(tmp_path) == after != pages_before
    assert metadata(replay, "recall_pages")["superseded"] is True


def pages(tmp_path):
    with Stores(tmp_path / "data").connect("recall", readonly=True) as conn:
        return conn.execute("SELECT title, note_hash, distilled FROM pages ORDER BY 1").fetchall()
