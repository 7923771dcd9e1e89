"""Vault, recall and retrieval figures (see BENCHMARKS.md).

    .venv/bin/python benchmarks/bench_vault.py [--notes 10000] [--queries 200] [--stage-only]
        [--model offline|use|minilm] [--postgres]

Builds a synthetic vault of N public notes (plus a private folder) in a temp folder,
times staging cold, unchanged and after one edit, distils and indexes every page with
the offline model and the offline embedder, then times `recall` (hybrid search, entity
fetch, stale marks, one-hop neighbourhood) over the recall store: p50 and p95 of a warm
process, the one-off cost of loading the model and the vectors, and `company-ai recall`
as a whole process. `--postgres` keeps the recall store (full text by PostgreSQL's own
text search, vectors as rows read into one matrix) in a throwaway local server with
fsync on, started as the tests start one (`PYTHONPATH=.` for `tests.pg_server`).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from company_ai.core.embedding import OFFLINE
from company_ai.core.recall import Searcher, index_entities, recall
from company_ai.core.store import Stores
from company_ai.core.vault import distill_staging, offline_page, stage_vault

FOLDERS = ("people", "systems", "clients", "projects", "context", "notes")
WORDS = (
    "invoice ledger portal renewal outage rota audit pricing discount warehouse dashboard "
    "contract migration onboarding depot shipment freight security laptop backup retention "
    "budget offsite prospect campaign reply escalation release roadmap hiring payroll"
).split()
CITIES = ("Leeds", "York", "Hull", "Manchester", "Bristol", "Glasgow", "Cardiff")


def write_vault(root: Path, notes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(notes):
        folder = FOLDERS[i % len(FOLDERS)]
        a, b, c = rng.sample(WORDS, 3)
        city = rng.choice(CITIES)
        link = f"Note {rng.randrange(notes)}"
        text = (
            f"---\ntitle: Note {i}\ntags: [{a}, {b}]\nupdated: 2026-{rng.randint(1, 11):02d}-"
            f"{rng.randint(1, 28):02d}\n---\n# Note {i}\n\nNote {i} is about the {a} and the "
            f"{b} work in {city}; it relates to [[{link}]].\n\n"
            f"- [status] The {c} is waiting on {rng.randint(2, 90)} items.\n"
            f"- [constraint] Never change the {a} without review.\n"
            f"- [goal] Finish the {b} by week {rng.randint(1, 52)}.\n"
            f"- depends_on [[{link}]]\n"
        )
        path = root / folder / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    private = root / "private"
    private.mkdir()
    for i in range(50):
        (private / f"secret-{i}.md").write_text(f"private {i}\n")


def timed(label: str, fn):
    started = time.perf_counter()
    value = fn()
    took = time.perf_counter() - started
    print(f"{label:<44} {took:8.3f} s")
    return value, took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--stage-only", action="store_true", help="only the staging figures")
    parser.add_argument("--model", choices=sorted(OFFLINE), default="offline")
    parser.add_argument(
        "--keep", type=Path, help="build in this folder and keep it; if it holds a built "
        "recall store already, only time recall (e.g. again on a quieter machine)"
    )  # fmt: skip
    parser.add_argument("--postgres", action="store_true", help="the recall store on a server")
    args = parser.parse_args()
    if not args.postgres:
        return _run(args, "")
    from tests.pg_server import throwaway

    with throwaway(durable=True) as server:
        _run(args, server.create_database("bench_vault"))


def _run(args: argparse.Namespace, url: str) -> None:
    name, _, load_model = OFFLINE[args.model]
    print(f"model: {name}; recall store: {'PostgreSQL' if url else 'SQLite'}")
    if args.keep and not url and (args.keep / "data" / "recall.db").is_file():
        conn = Stores(args.keep / "data").open("recall")
        searcher, _ = timed("load model + vectors", lambda: Searcher(conn, load_model()))
        time_recall(conn, searcher, args.queries)
        time_cli(args.keep / "data", url)
        return
    with tempfile.TemporaryDirectory(prefix="bench-vault-") as tmp:
        root = args.keep or Path(tmp)
        vault, staging = root / "vault", root / "staging"
        write_vault(vault, args.notes)
        print(f"vault: {args.notes:,} public notes + 50 private, in {vault}")
        stage = lambda: stage_vault(vault, staging, day="2026-11-29")  # noqa: E731
        first, _ = timed("staging, cold", stage)
        again, _ = timed("staging, unchanged rerun", stage)
        edited = vault / "people" / "note-00000.md"
        edited.write_text(edited.read_text() + "- [status] Edited.\n")
        once, _ = timed("staging, after one edit", stage)
        print(f"  staged {len(first.staged):,} / {len(again.staged)} / {len(once.staged)}")
        if args.stage_only:
            return

        conn = Stores(root / "data", database_url=url).open("recall")
        result, took = timed(
            "distil every page (offline model + check)",
            lambda: distill_staging(
                conn,
                str(staging),
                day="2026-11-29",
                distill=lambda t, p, x: offline_page(p, x),
                source="model:offline",
                clock=lambda: datetime(2026, 11, 29, 23, tzinfo=UTC),
            ),  # fmt: skip
        )
        print(f"  {result.entities:,} pages, {took / max(result.entities, 1) * 1000:.2f} ms each")
        model, _ = timed("load the embedding model", load_model)
        summary, took = timed(
            "index: FTS rebuild + embed every page", lambda: index_entities(conn, model)
        )
        per_page = took / summary["documents"] * 1000
        print(f"  {summary['embedded']:,} embedded, {per_page:.1f} ms a page")
        timed("index: unchanged rerun", lambda: index_entities(conn, model))
        searcher, _ = timed("load the vectors (once per process)", lambda: Searcher(conn, model))
        time_recall(conn, searcher, args.queries)
        conn.close()
        time_cli(root / "data", url)


def time_recall(conn, searcher, queries: int) -> None:
    """p50/p95 of `recall` in a warm process (search, pages, stale marks, neighbourhood)."""
    rng = random.Random(11)
    questions = [f"who handles the {rng.choice(WORDS)} in {rng.choice(CITIES)}?"
                 for _ in range(queries)]  # fmt: skip
    now = datetime(2026, 11, 30, tzinfo=UTC)
    recall(conn, searcher, questions[0], now=now, max_age_days=90)  # warm
    laps = []
    for question in questions:
        started = time.perf_counter()
        recall(conn, searcher, question, now=now, max_age_days=90)
        laps.append((time.perf_counter() - started) * 1000)
    laps.sort()
    pages = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
    p95 = laps[int(len(laps) * 0.95) - 1]
    print(
        f"recall at {pages:,} pages, {len(laps)} questions: "
        f"p50 {statistics.median(laps):.1f} ms, p95 {p95:.1f} ms, max {laps[-1]:.1f} ms"
    )


def time_cli(data: Path, url: str, runs: int = 7) -> None:
    """`company-ai recall` as a user runs it: a whole process, the model loaded each time."""
    env = {k: v for k, v in os.environ.items() if k != "COMPANY_AI_DATABASE_URL"}
    if url:
        env["COMPANY_AI_DATABASE_URL"] = url
    command = [str(Path(sys.executable).parent / "company-ai"), "--data-dir", str(data),
               "recall", "who handles the invoice in Leeds?"]  # fmt: skip
    laps = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        laps.append(time.perf_counter() - started)
    print(
        f"`company-ai recall`, whole process, {runs} runs: median {statistics.median(laps):.3f} s"
    )


if __name__ == "__main__":
    main()
