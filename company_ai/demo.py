"""`company-ai demo`: a fresh install on sample data, its first night run through Dagster.

The demo keeps its own data directory and a persistent DAGSTER_HOME under one folder
(default `./demo`), so `scripts/ui` afterwards shows its runs, partitions and checks.
It only ever deletes a folder that an earlier demo made (it leaves a marker file).

Every run goes the way a scheduled run goes: through the code location and the
instance's run launcher (`company_ai/launch.py`), so each appears on its job's page and
can be re-executed from the UI. The install is the start of the first of the `--days`
days, so the UI shows only real gaps, and the demo plays every slot of the timetable from
then to now in the order its ticks fall, each run given its slot's moment as its clock
(`PLAYED_AT_TAG`, allowed by `COMPANY_AI_PLAYED_CLOCK`): each night's brain sees that
day's runs, checks, sends and replies, and every capture runs at its own moment. The
sample's outside world acts between the slots (`sample_world/demo_mail.py`): before each
morning's inbox triage a few contacts answer the open threads (replies, an out-of-office,
a bounce, a stranger's mail), and before each evening's engagement capture one of them
visits the site. The timeline shown is of a contact who answered. The first
SIGTERM or Ctrl-C stops the demo cleanly: runs in flight are terminated and marked
failed, never left STARTED.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from company_ai.core.store import Store

MARKER = ".company_ai_demo"
DAGSTER_YAML = """\
# Written by `company-ai demo`. SQLite storage under this folder; no telemetry.
# The recommended settings for company_ai (README, "Running it"): run monitoring so
# each job's dagster/max_runtime is enforced and a crashed run is failed, not left
# STARTED; run retries for crashes only (the replays that send nothing retry steps).
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


def _refuse_used_database(url: str) -> None:
    """The demo starts from nothing: it wipes its folder, but never a database's schemas,
    so a database that already holds stores is refused."""
    if not url:
        return
    from company_ai.core.store import pg
    from company_ai.core.store.schema import DOMAINS

    try:
        used = pg.stores_in(url, DOMAINS)
    except pg.PgStoreError as exc:
        raise SystemExit(f"company-ai: error: {exc}") from None
    if used:
        raise SystemExit(
            f"company-ai: error: the database at {pg.redact(url)} already holds the "
            f"{', '.join(used)} store(s); the demo needs an empty database: create one "
            "and point COMPANY_AI_DATABASE_URL at it"
        )


@dataclass(frozen=True)
class Played:
    """One slot of the demo's past: `job` for `partition`, run at the moment `tick`."""

    tick: datetime
    job: str
    partition: str


def demo_plan(now: datetime, tz: str, days: int) -> tuple[str, datetime, list[Played]]:
    """(the install's first day, the moment it was installed, every slot from then to
    `now` in the order its ticks fall): the last `days` local days, today's so far
    included, as the timetable would have run them; widened back a day at a time (at
    most a week) until every job has played once: a demo on a weekend or early on a
    Monday still shows a weekday's outreach and its gate, and one at noon a whole night."""
    from company_ai.core.timetable import TIMETABLE, due_between

    today = now.astimezone(ZoneInfo(tz)).date()
    jobs = {e.job for e in TIMETABLE}
    for back in range(days, days + 7):
        first = today - timedelta(days=back - 1)
        installed = datetime.combine(first, datetime.min.time(), ZoneInfo(tz)).astimezone(UTC)
        due = due_between([e.slot for e in TIMETABLE], installed, now, tz)
        if {d.job for d in due} >= jobs:
            break
    return first.isoformat(), installed, [Played(d.tick, d.job, d.partition) for d in due]


def run_demo(root: Path, *, contacts: int = 2000, days: int = 3) -> int:
    root = root.resolve()
    _refuse_used_database(os.environ.get("COMPANY_AI_DATABASE_URL", "").strip())
    data, home = _fresh(root)
    # The code server the runs go through, and every run, are processes of their own that
    # read their settings from the environment they inherit from this one.
    os.environ["COMPANY_AI_DATA_DIR"] = str(data)
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ["COMPANY_AI_PLAYED_CLOCK"] = "true"  # each run at its slot's own moment
    os.environ.pop("COMPANY_AI_START_DATE", None)  # the install date recorded below
    # The sample company's own site: the one domain its drafts may link to (the gate).
    os.environ.setdefault("COMPANY_AI_COMPANY_DOMAINS", "company-ai.example")

    from company_ai.core.install import record_first_day
    from company_ai.core.store import Stores
    from company_ai.core.terminal import progress
    from company_ai.core.times import utc_now
    from company_ai.sample_world.crm import load_sample
    from company_ai.settings import Settings

    now = utc_now()
    tz = Settings.from_env().timezone
    first, installed, plan = demo_plan(now, tz, days)
    record_first_day(data, first, installed)
    settings = Settings.from_env()  # now with the install date
    _say(f"[1/3] sample CRM → {data}")
    stores = Stores(data, database_url=settings.database_url)
    stores.create_all()
    # The world's history ends at the install; the nights after it are played below.
    summary = load_sample(
        stores, as_of=installed, contacts=contacts, tz=tz, progress=progress("      loading")
    )
    _say(
        f"      {summary.contacts:,} contacts ({summary.with_email:,} with email), "
        f"{summary.episodes:,} episodes, {summary.messages:,} messages; installed {first}"
    )

    import dagster as dg

    from company_ai.constants import PLAYED_AT_TAG
    from company_ai.core.times import to_iso
    from company_ai.launch import launcher

    instance = dg.DagsterInstance.get()
    _say(
        f"[2/3] {len(plan) + 1} runs through the code location and the run launcher → {home}\n"
        f"      each slot of {first}..{now.date()} at its own moment; the outside world "
        "answers the outreach before each morning's inbox triage"
    )
    world = _World(stores, settings)
    failed = 0
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with launcher(instance) as runs:
            stop = StopFlag()
            for s in previous:
                signal.signal(s, stop)
            try:
                for slot in plan:
                    stop.check()
                    for due in world.held_sends_due(slot.tick):  # the held-send sensor's runs
                        tags = {"company_ai/launched_by": "demo", PLAYED_AT_TAG: due}
                        failed += _run_one(runs, instance, "held_sends_job", None, tags, stop)
                    world.before(slot)
                    tags = {"company_ai/launched_by": "demo", PLAYED_AT_TAG: to_iso(slot.tick)}
                    failed += _run_one(runs, instance, slot.job, slot.partition, tags, stop)
                failed += _run_one(
                    runs, instance, "restore_drill_job", None, {"company_ai/launched_by": "demo"},
                    stop,
                )  # fmt: skip
            except Interrupted as exc:
                stopped = runs.stop(f"the demo was stopped by {exc}")
                _say(f"stopped by {exc}: {len(stopped)} run(s) in flight were marked failed")
                return 130 if str(exc) == "SIGINT" else 143
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

    _say("[3/3] a contact's timeline")
    from company_ai.core.crm import load_timeline, render_text

    shown = world.shown or _showcase_email(stores)
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


class _World:
    """The sample's outside world, acting between the played slots: before each morning's
    inbox triage a few contacts answer the open threads (`sample_world/demo_mail.py`), and
    before each evening's engagement capture one of them visits the site."""

    def __init__(self, stores, settings) -> None:
        self.stores, self.settings = stores, settings
        self.shown: str | None = None

    def held_sends_due(self, until: datetime) -> list[str]:
        """The moments before `until` at which drafts held for working hours fall due."""
        from company_ai.core.times import to_iso

        with self.stores.connect(Store.OUTREACH, readonly=True) as outreach:
            return [
                row[0]
                for row in outreach.execute(
                    "SELECT DISTINCT due_at FROM drafts WHERE status = 'ready'"
                    " AND due_at <= $1 ORDER BY due_at",
                    (to_iso(until),),
                )
            ]

    def before(self, slot: Played) -> None:
        from company_ai.sample_world.demo_mail import drop_demo_signals, fill_demo_inbox

        moment = slot.tick - timedelta(minutes=10)
        if slot.job == "inbox_job":
            answered = fill_demo_inbox(self.stores, self.settings.inbox_dir / "maildir", moment)
            self.shown = self.shown or (answered[0] if answered else None)
            _say(f"      {slot.partition}: {len(answered)} answers and a stranger's mail arrive")
        elif slot.job == "engagement_job":
            who = self.shown or _showcase_email(self.stores)
            drop_demo_signals(self.settings.engagement_dir, who, moment, slot.partition)


def _run_one(runs, instance, job: str, day: str | None, tags: dict, stop: StopFlag) -> int:
    """Run `job` for `day` through the run launcher and wait; 1 if it did not succeed."""
    started = time.monotonic()
    [run] = runs.wait([runs.launch(job, day, tags)], stop.check)
    ok = run.status.value == "SUCCESS"
    _say(
        f"      {job} {day or '(once)'}: {'ok' if ok else run.status.value}"
        f" in {time.monotonic() - started:.1f}s{_checks(instance, run.run_id)}"
    )
    return 0 if ok else 1


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
        return crm.execute("SELECT email FROM contacts WHERE id = $1", (best,)).fetchone()[0]


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
