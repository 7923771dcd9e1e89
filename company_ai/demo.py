"""`company-ai demo`: a fresh install on sample data, its first night run through Dagster.

The demo keeps its own data directory and a persistent DAGSTER_HOME under one folder
(default `./demo`), so `scripts/ui` afterwards shows its runs, partitions and checks.
It only ever deletes a folder that an earlier demo made (it leaves a marker file).

Every run goes the way a scheduled run goes: through the code location and the
instance's run launcher (`company_ai/launch.py`), so each appears on its job's page and
can be re-executed from the UI. The install date is the first of the `--days` days, so
the UI shows only real gaps. Replays (the nightly seal, brain and export) are run for
each of those days; captures (vault staging, state export, contact sync, outreach, snapshots) only
for their current day, because a capture records the world at the moment it runs and a
past day's moment is gone. The sample's outside world (a Maildir with answers to its
latest outreach, a webhook drop file: `tools/demo_mail.py`) is what the inbox and
engagement captures read; the timeline shown is of a contact who answered. The first
SIGTERM or Ctrl-C stops the demo cleanly: runs in flight are terminated and marked
failed, never left STARTED.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from pathlib import Path

from company_ai.core.store import Store

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
MAX_PARALLEL = 2  # runs of one wave at a time: the machine's cores
NIGHT_JOBS = ("memory_job", "brain_job", "memory_export_job")  # replays, in night order


class Interrupted(Exception):
    """The demo was asked to stop (SIGTERM, SIGINT)."""


class StopFlag:
    """Set by the first SIGTERM or SIGINT. The handler only records it: an exception raised
    from inside a gRPC call to the code server would be reported as an unreachable server,
    so the demo checks the flag itself, between launches and while it waits."""

    def __init__(self) -> None:
        self.signal: str | None = None

    def __call__(self, signum, _frame) -> None:
        self.signal = self.signal or signal.Signals(signum).name

    def check(self) -> None:
        if self.signal:
            raise Interrupted(self.signal)


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


def demo_plan(now: datetime, tz: str, days: int) -> tuple[str, list[list[tuple[str, str]]]]:
    """(the install's first day, waves of (job, partition)): each wave runs after the one
    before, its runs side by side. Nights of the last `days` complete days, then this
    morning's slots in timetable order, each for its current partition, then the week."""
    from company_ai.core.timetable import TIMETABLE, current_partitions, ticks_around

    entries = {e.job: e for e in TIMETABLE}
    last_day = entries["memory_job"].slot.partition(now, tz)  # the last complete day
    first = date.fromisoformat(last_day) - timedelta(days=days - 1)
    nights = [(first + timedelta(days=n)).isoformat() for n in range(days)]
    memory, *later = ([(job, day) for day in nights] for job in NIGHT_JOBS)
    # The first night's memory job builds the episodes collection from every row (the one
    # cold build, minutes); another night beside it would only wait for the store's lock,
    # so it runs alone and each run's time is its own.
    waves = [memory[:1], memory[1:], *later]
    morning = sorted(
        (e for e in TIMETABLE if e.job not in NIGHT_JOBS),
        key=lambda e: ticks_around(e.slot, now, tz)[0],
    )
    for entry in morning:
        partition = current_partitions(entry.slot, now, tz)[0]
        if partition >= first.isoformat():
            waves.append([(entry.job, partition)])
    return first.isoformat(), [wave for wave in waves if wave]


def run_demo(root: Path, *, contacts: int = 2000, days: int = 3) -> int:
    root = root.resolve()
    data, home = _fresh(root)
    # The code server the runs go through, and every run, are processes of their own that
    # read their settings from the environment they inherit from this one.
    os.environ["COMPANY_AI_DATA_DIR"] = str(data)
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ.pop("COMPANY_AI_START_DATE", None)  # the install date recorded below

    from company_ai.core.install import record_first_day
    from company_ai.core.store import Stores
    from company_ai.core.terminal import progress
    from company_ai.core.times import utc_now
    from company_ai.sample_world.crm import load_sample
    from company_ai.settings import Settings

    now = utc_now()
    tz = Settings.from_env().timezone
    first, waves = demo_plan(now, tz, days)
    record_first_day(data, first, now)
    settings = Settings.from_env()  # now with the install date
    _say(f"[1/3] sample CRM → {data}")
    stores = Stores(data)
    stores.create_all()
    summary = load_sample(
        stores, as_of=now, contacts=contacts, tz=tz, progress=progress("      loading")
    )
    _say(
        f"      {summary.contacts:,} contacts ({summary.with_email:,} with email), "
        f"{summary.episodes:,} episodes, {summary.messages:,} messages; installed {first}"
    )
    from company_ai.sample_world.demo_mail import drop_demo_signals, fill_demo_inbox

    answered = fill_demo_inbox(stores, settings.inbox_dir / "maildir", now)
    shown = answered[0] if answered else _showcase_email(stores)
    drop_demo_signals(settings.engagement_dir, shown, now)
    _say(
        f"      {len(answered)} answers to recent outreach (replies, an out-of-office, a bounce)"
        f" and a stranger's mail in {settings.inbox_dir / 'maildir'}; one webhook drop file"
    )

    import dagster as dg

    from company_ai.launch import launcher

    instance = dg.DagsterInstance.get()
    total = sum(len(w) for w in waves) + 1  # and the restore drill
    _say(f"[2/3] {total} runs through the code location and the run launcher → {home}")
    failed = 0
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with launcher(instance) as runs:
            stop = StopFlag()
            for s in previous:
                signal.signal(s, stop)
            try:
                plan: list[Sequence[tuple[str, str | None]]] = [
                    *waves,
                    [("restore_drill_job", None)],
                ]
                for wave in plan:
                    failed += _run_wave(runs, instance, wave, stop)
            except Interrupted as exc:
                stopped = runs.stop(f"the demo was stopped by {exc}")
                _say(f"stopped by {exc}: {len(stopped)} run(s) in flight were marked failed")
                return 130 if str(exc) == "SIGINT" else 143
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

    _say("[3/3] a contact's timeline")
    from company_ai.core.crm import load_timeline, render_text

    print(f"$ company-ai timeline {shown} --bodies")
    print(render_text(load_timeline(stores, shown), bodies=True))
    print()
    print(_vault_summary(stores, settings))
    print()
    print(_run_summary(instance))
    print()
    print(_digest_now(instance, settings))
    print("\nOpen the UI on this history: scripts/ui   (then http://127.0.0.1:3000)")
    return 1 if failed else 0


def _run_wave(runs, instance, wave: Sequence[tuple[str, str | None]], stop: StopFlag) -> int:
    """Run one wave, at most MAX_PARALLEL at a time; returns how many failed."""
    failed = 0
    for start in range(0, len(wave), MAX_PARALLEL):
        batch = wave[start : start + MAX_PARALLEL]
        started = time.monotonic()
        ids = []
        for job, day in batch:
            stop.check()
            ids.append(runs.launch(job, day, {"company_ai/launched_by": "demo"}))
        for (job, day), run in zip(batch, runs.wait(ids, stop.check), strict=True):
            ok = run.status.value == "SUCCESS"
            failed += not ok
            _say(
                f"      {job} {day or '(once)'}: {'ok' if ok else run.status.value}"
                f" in {time.monotonic() - started:.1f}s{_checks(instance, run.run_id)}"
            )
    return failed


def _checks(instance, run_id: str) -> str:
    """`, checks 3/4 passed` and the gate's verdict on drafts, from the run's events."""
    import dagster as dg

    records = instance.get_records_for_run(
        run_id,
        of_type={
            dg.DagsterEventType.ASSET_CHECK_EVALUATION,
            dg.DagsterEventType.ASSET_MATERIALIZATION,
        },
    ).records
    checks, drafts = [], ""
    for record in records:
        event = record.event_log_entry.dagster_event
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            checks.append(event.asset_check_evaluation_data.passed)
        elif event.asset_key and event.asset_key.to_user_string() == "outreach_drafts":
            meta = event.step_materialization_data.materialization.metadata
            if "passed" in meta:
                drafts = (
                    f"\n        drafts: {meta['passed'].value} passed the fabrication gate, "
                    f"{meta['quarantined'].value} quarantined"
                )
    return (f", checks {sum(checks)}/{len(checks)} passed" if checks else "") + drafts


def _vault_summary(stores, settings) -> str:
    """One line on the vault pipeline, then one recall answer as `company-ai recall` gives."""
    from company_ai.core.embedding import embedder_for
    from company_ai.core.recall import Searcher, index_model, recall, render_answer
    from company_ai.core.times import utc_now
    from company_ai.core.vault import read_manifest, staging_dir

    staged = len(read_manifest(staging_dir(stores.data_dir))["notes"])
    with stores.connect(Store.RECALL, readonly=True) as conn:
        pages = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM search_vectors").fetchone()[0]
        model = index_model(conn)
        if model is None:
            return "Vault: nothing indexed."
        question = "Who should I talk to about the Signalcrest renewal?"
        searcher = Searcher(conn, embedder_for(*model, settings.ollama_host))
        answer = recall(
            conn, searcher, question, now=utc_now(),
            max_age_days=settings.recall_stale_days, limit=3,
        )  # fmt: skip
    return (
        f"Vault: {staged} notes staged from {settings.vault_dir}, {pages} recall pages, "
        f"{vectors} vectors ({model[0]}, {model[1]}-d)\n\n"
        f"$ company-ai recall {question!r}\n{render_answer(answer)}"
    )


def _showcase_email(stores) -> str:
    """The warm contact with an email and the richest history: the best first look."""
    with stores.connect(Store.CRM, readonly=True) as crm:
        candidates = [
            r[0]
            for r in crm.execute(
                "SELECT id FROM contacts WHERE email IS NOT NULL AND warmth > 60 ORDER BY id"
            )
        ]
        with stores.connect(Store.MEMORY, readonly=True) as memory:
            counts = {
                cid: n
                for cid, n in memory.execute(
                    "SELECT contact_id, count(*) FROM contact_episodes GROUP BY contact_id"
                )
            }
        best = max(candidates, key=lambda cid: (counts.get(cid, 0), -cid))
        return crm.execute("SELECT email FROM contacts WHERE id = ?", (best,)).fetchone()[0]


def _digest_now(instance, settings) -> str:
    """What the digest says of the last 24 hours, up to now (the daily_digest partitions
    are replays: each ends at its own morning's 09:05, before this demo ran)."""
    from datetime import timedelta

    from company_ai import ledger
    from company_ai.core.ops import build_digest
    from company_ai.core.times import utc_now
    from company_ai.core.timetable import TIMETABLE

    until = utc_now()
    since = until - timedelta(hours=24)
    runs = ledger.runs_between(instance, since, until)
    missed = ledger.missed_between(instance, TIMETABLE, since, until, settings)
    return build_digest(runs, missed, since, until).render()


def _run_summary(instance) -> str:
    records = instance.get_run_records()
    lines = [f"Runs recorded in DAGSTER_HOME: {len(records)}"]
    for rec in sorted(records, key=lambda r: r.create_timestamp):
        run = rec.dagster_run
        took = (rec.end_time - rec.start_time) if rec.end_time and rec.start_time else 0
        lines.append(
            f"  {run.job_name:<20} {run.tags.get('dagster/partition', '-'):<11} "
            f"{run.status.value:<8} {took:5.1f}s  run {run.run_id[:8]}"
        )
    return "\n".join(lines)
