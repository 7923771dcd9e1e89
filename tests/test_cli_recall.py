import argparse
import json

import pytest

from company_ai.cli import _parser
from company_ai.core.recall import index_entities
from company_ai.core.store import Stores
from company_ai.core.vault import distill_staging, offline_page, stage_vault
from tests.conftest import SAMPLE_VAULT, fixed_clock
from tests.test_cli import first_email, run


@pytest.fixture(scope="module")
def recall_data(tmp_path_factory, minilm):
    root = tmp_path_factory.mktemp("cli-recall")
    stage_vault(SAMPLE_VAULT, root / "data" / "vault_staging", day="2026-11-29")
    with Stores(root / "data").connect("recall") as conn:
        distill_staging(
            conn, str(root / "data" / "vault_staging"), day="2026-11-29",
            distill=lambda t, p, x: offline_page(p, x), source="model:offline", clock=fixed_clock(),
        )  # fmt: skip
        index_entities(conn, minilm)
    return root / "data"


def test_recall_prints_pages_neighbourhood_sources_and_dates(recall_data):
    done = run("--data-dir", str(recall_data), "recall", "who runs customer support?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1. Dev Patel (person), as of 2026-11-29")
    assert "derived from: people/dev-patel.md" in done.stdout
    assert "Around Dev Patel:" in done.stdout and "Dev Patel maintains Support Rota" in done.stdout
    as_json = json.loads(
        run("--data-dir", str(recall_data), "recall", "support", "--json", "--limit", "2").stdout
    )
    assert len(as_json["hits"]) == 2 and as_json["hits"][0]["distilled"] == "2026-11-29"
    assert {"relation", "direction", "title", "has_page"} <= set(as_json["neighbourhood"][0])


def test_recall_marks_stale_pages_and_stale_lists_them(recall_data):
    done = run("--data-dir", str(recall_data), "recall", "Warehouse Cost Cut dashboards")
    assert "Warehouse Cost Cut (thread), as of 2026-11-29  [STALE: review]" in done.stdout
    listed = run("--data-dir", str(recall_data), "stale")
    assert "Warehouse Cost Cut: note untouched for" in listed.stdout
    assert "- [goal] Bring storage and query spend under 1,200 dollars a month." in listed.stdout


def test_page_prints_one_page_and_an_unknown_title_is_an_error(recall_data):
    done = run("--data-dir", str(recall_data), "page", "Signalcrest")
    assert done.returncode == 0 and done.stdout.startswith('---\ntitle: "Signalcrest"')
    missing = run("--data-dir", str(recall_data), "page", "Atlantis")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "company-ai: error: no recall page titled 'Atlantis'"


def test_recall_without_an_index_is_explained(tmp_path):
    done = run("--data-dir", str(tmp_path), "recall", "anything")
    assert done.returncode == 1 and "no recall store at" in done.stderr


def test_eval_retrieval_scores_a_beir_folder_in_three_modes(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    corpus = [
        ("d1", "Invoices", "the billing system sends invoices every month"),
        ("d2", "Support", "customer tickets are answered within four hours"),
        ("d3", "Holidays", "the office closes between christmas and new year"),
        ("d4", "Security", "laptops need disk encryption and a screen lock"),
    ]
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in corpus)
    )
    queries = [("q1", "when are bills sent"), ("q2", "how fast do we reply to customers"),
               ("q3", "is the office open at christmas")]  # fmt: skip
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries)
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"
    )
    done = run("eval-retrieval", str(beir), "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert set(results) == {"keyword", "dense", "hybrid", "queries"}
    assert results["queries"] == {"count": 3, "documents": 4}
    assert results["dense"]["recall@100"] == 1.0 and results["hybrid"]["ndcg@10"] > 0.8
    assert "embedding: 4/4 documents" in done.stderr
    text = run("eval-retrieval", str(beir)).stdout
    assert text.splitlines()[0].split() == ["mode", "nDCG@10", "Recall@100"]
    missing = run("eval-retrieval", str(tmp_path))
    assert missing.returncode == 1 and "corpus.jsonl is missing" in missing.stderr


def test_eval_retrieval_without_a_folder_scores_the_sample_questions(recall_data):
    done = run("--data-dir", str(recall_data), "eval-retrieval", "--json")
    results = json.loads(done.stdout)
    assert results["queries"]["count"] >= 40
    assert results["hybrid"]["ndcg@10"] > results["keyword"]["ndcg@10"]


# Declared, needed elsewhere, and each costs a read command a noticeable start-up.
HEAVY = {"dagster", "pandas", "chromadb", "pydantic"}
READ_COMMANDS = ("timeline", "dossier", "recall", "page", "stale")


def run_listing_imports(*args):
    """The CLI in its own process, and the top-level packages it imported (-X importtime)."""
    done = run(*args, python_flags=("-X", "importtime"))
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    return done, imported


@pytest.mark.parametrize("command", READ_COMMANDS)
def test_no_read_command_imports_the_heavy_libraries(command, sample_stores, recall_data):
    sample = ("--data-dir", str(sample_stores.data_dir))
    recall = ("--data-dir", str(recall_data))
    args = {
        "timeline": (*sample, "timeline", first_email(sample_stores)),
        "dossier": (*sample, "dossier", first_email(sample_stores)),
        "recall": (*recall, "recall", "who runs customer support?"),
        "page": (*recall, "page", "Signalcrest"),
        "stale": (*recall, "stale"),
    }[command]
    done, imported = run_listing_imports(*args)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-2000:]
    assert "company_ai" in imported  # the listing works
    assert imported & HEAVY == set()


def test_the_import_listing_sees_a_heavy_library_when_one_is_imported(data):
    done, imported = run_listing_imports(
        "--data-dir", str(data), "note", first_email(Stores(data)), "Called back."
    )
    assert done.returncode == 0 and "pydantic" in imported  # episodes are validated by it


def test_every_command_is_a_read_command_or_known_to_load_more():
    [commands] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    may_load_more = {
        "note",
        "gate",
        "sample",
        "import",
        "connect-google",
        "similar",  # reads no heavy library either (test_cli_similar), but needs vectors
        "eval-retrieval",
        "demo",
        "forget",
        "vectors-scrub",  # rewrites a stopped Chroma server's files: chromadb's own layout
        "audit",  # computes the audit now when none is stored: the CRM, holds and memory
        "mcp",  # a long-running server: the MCP SDK (pydantic) and the embedder
    }
    assert set(commands.choices) == set(READ_COMMANDS) | may_load_more
