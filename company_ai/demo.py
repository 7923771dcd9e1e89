"""`company-ai demo`: fresh sample data, every asset run through Dagster, then a timeline.

The demo keeps its own data directory and a persistent DAGSTER_HOME under one folder
(default `./demo`), so `scripts/ui` afterwards shows its runs, partitions and checks.
It only ever deletes a folder that an earlier demo made (it leaves a marker file).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

MARKER = ".company_ai_demo"
DAGSTER_YAML = """\
# Written by `company-ai demo`. SQLite storage under this folder; no telemetry.
# The recommended settings for company_ai (README, "Running it"): run monitoring so
# each job's dagster/max_runtime is enforced and a crashed run is failed, not left
# STARTED; run retries for crashes only (steps have their own retry policies).
telemetry:
  enabled: false
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  poll_interval_seconds: 60
  max_resume_run_attempts: 0
run_retries:
  enabled: true
  max_retries: 2
  retry_on_asset_or_op_failure: false
"""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _fresh(root: Path) -> tuple[Path, Path]:
    if root.exists():
        if not (root / MARKER).exists():
            raise SystemExit(
                f"company-ai: error: {root} exists and was not made by the demo; "
                "choose another --dir"
            )
        shutil.rmtree(root)
    data, home = root / "data", root / "dagster_home"
    data.mkdir(parents=True)
    home.mkdir()
    (root / MARKER).write_text("made by company-ai demo; safe to delete\n")
    (home / "dagster.yaml").write_text(DAGSTER_YAML)
    return data, home


def run_demo(root: Path, *, contacts: int = 2000, days: int = 3) -> int:
    root = root.resolve()
    data, home = _fresh(root)
    # Settings are read when the definitions are imported, so point them here first.
    os.environ["COMPANY_AI_DATA_DIR"] = str(data)
    os.environ["DAGSTER_HOME"] = str(home)

    from company_ai import settings
    from company_ai.cli import _progress
    from company_ai.core.db import Stores
    from company_ai.core.sample import load_sample

    _say(f"[1/3] sample CRM → {data}")
    stores = Stores(data)
    stores.create_all()
    summary = load_sample(
        stores, contacts=contacts, tz=settings.timezone(), progress=_progress("      loading")
    )
    _say(
        f"      {summary.contacts:,} contacts ({summary.with_email:,} with email), "
        f"{summary.episodes:,} episodes, {summary.messages:,} messages"
    )

    import dagster as dg

    from company_ai.constants import DAILY
    from company_ai.definitions import defs
    from company_ai.schedules import TIMETABLE

    instance = dg.DagsterInstance.get()
    partitions = DAILY.get_partition_keys()[-days:]

    # A day as the timetable runs it (vault at night, outreach in the morning, the seal
    # at 23:15), then the jobs that are not daily (the monthly restore drill) once.
    daily = [entry.job for entry in sorted(TIMETABLE, key=lambda entry: entry.at)]
    once = [job.name for job in defs.jobs or [] if job.name not in daily]
    runs = [(job, day) for day in partitions for job in daily] + [(job, None) for job in once]
    _say(f"[2/3] {len(runs)} runs through Dagster ({len(partitions)} days) → {home}")
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    failed = 0
    for job_name, day in runs:
        job = defs.resolve_job_def(job_name)
        started = time.monotonic()
        result = job.execute_in_process(
            partition_key=day, instance=instance, run_config=quiet, raise_on_error=False
        )
        checks = result.get_asset_check_evaluations()
        passed = sum(c.passed for c in checks)
        failed += not result.success
        _say(
            f"      {job_name} {day or '(once)'}: {'ok' if result.success else 'FAILED'} "
            f"in {time.monotonic() - started:.1f}s, checks {passed}/{len(checks)} passed"
        )
        for event in result.get_asset_materialization_events():
            if event.asset_key.to_user_string() == "outreach_drafts":
                meta = event.materialization.metadata
                _say(
                    f"        drafts: {meta['passed'].value} passed the fabrication gate, "
                    f"{meta['quarantined'].value} quarantined"
                )

    _say("[3/3] a contact's timeline")
    from company_ai.core.timeline import load_timeline, render_text

    print(render_text(load_timeline(stores, _showcase_email(stores))))
    print()
    print(_vault_summary(stores))
    print()
    print(_run_summary(instance))
    print()
    print(_latest_digest(instance))
    print("\nOpen the UI on this history: scripts/ui   (then http://127.0.0.1:3000)")
    return 1 if failed else 0


def _vault_summary(stores) -> str:
    """One line on the vault pipeline, then one recall answer as `company-ai recall` gives."""
    from company_ai import settings
    from company_ai.core.embedding import embedder_for
    from company_ai.core.recall import recall, render_answer
    from company_ai.core.retrieval import Searcher, index_model
    from company_ai.core.times import utc_now
    from company_ai.core.vault import read_manifest, staging_dir

    staged = len(read_manifest(staging_dir(stores.data_dir))["notes"])
    with stores.connect("recall", readonly=True) as conn:
        pages = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0]
        model = index_model(conn)
        if model is None:
            return "Vault: nothing indexed."
        question = "Who should I talk to about the Signalcrest renewal?"
        searcher = Searcher(conn, embedder_for(*model, settings.ollama_host()))
        answer = recall(
            conn, searcher, question, now=utc_now(),
            max_age_days=settings.recall_stale_days(), limit=3,
        )  # fmt: skip
    return (
        f"Vault: {staged} notes staged from {settings.vault_dir()}, {pages} recall pages, "
        f"{vectors} vectors ({model[0]}, {model[1]}-d)\n\n"
        f"$ company-ai recall {question!r}\n{render_answer(answer)}"
    )


def _showcase_email(stores) -> str:
    """The warm contact with an email and the richest history: the best first look."""
    with stores.connect("crm", readonly=True) as crm:
        candidates = [
            r[0]
            for r in crm.execute(
                "SELECT id FROM contacts WHERE email IS NOT NULL AND warmth > 60 ORDER BY id"
            )
        ]
        with stores.connect("memory", readonly=True) as memory:
            counts = {
                cid: n
                for cid, n in memory.execute(
                    "SELECT contact_id, count(*) FROM contact_episodes GROUP BY contact_id"
                )
            }
        best = max(candidates, key=lambda cid: (counts.get(cid, 0), -cid))
        return crm.execute("SELECT email FROM contacts WHERE id = ?", (best,)).fetchone()[0]


def _latest_digest(instance) -> str:
    """The text the last daily_digest sent (also in the outbox)."""
    import dagster as dg

    event = instance.get_latest_materialization_event(dg.AssetKey("daily_digest"))
    if event is None or event.asset_materialization is None:
        return "No daily_digest was made."
    return event.asset_materialization.metadata["digest"].value.strip("`\n")


def _run_summary(instance) -> str:
    records = instance.get_run_records()
    lines = [f"Runs recorded in DAGSTER_HOME: {len(records)}"]
    for rec in sorted(records, key=lambda r: r.create_timestamp):
        run = rec.dagster_run
        took = (rec.end_time - rec.start_time) if rec.end_time and rec.start_time else 0
        lines.append(
            f"  {run.job_name:<18} {run.tags.get('dagster/partition', '-'):<11} "
            f"{run.status.value:<8} {took:5.1f}s  run {run.run_id[:8]}"
        )
    return "\n".join(lines)
