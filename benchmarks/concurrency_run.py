"""A concurrency run (issue 29): the daemon with four run workers against PostgreSQL and
the Chroma server through simulated nights, one worker killed with SIGKILL mid-run.

    PYTHONPATH=. .venv/bin/python -u benchmarks/concurrency_run.py              # a week
    PYTHONPATH=. .venv/bin/python -u benchmarks/concurrency_run.py --days 2 --contacts 60

Everything is started here, in a temp folder: a PostgreSQL server (tests/pg_server.py;
Dagster's run and event storage in one database, the stores in another, a schema per
domain), a `chroma run` (tests/chroma_server.py), and `dagster-daemon run` on a
DAGSTER_HOME made from deploy/dagster.yaml: DefaultRunLauncher (each run a process of the
daemon's code server), the queued run coordinator with max_concurrent_runs 4, run retries
(max 1) and run monitoring. The nights are the demo's (`demo.demo_plan`, the sample
world acting before inbox and engagement, each run given its slot's moment by
PLAYED_AT_TAG): a night's slots are queued in waves of runs that do not read what
another of the wave writes, so up to four run at once. While the chosen run executes its
chosen step, its worker process (found by the pid its run recorded, checked to be a
descendant of the daemon) is sent SIGKILL. The code server fails that run, the daemon
retries it once. Then it checks: every slot's run succeeded, once (the killed one failed
and has exactly one retry, tagged dagster/parent_run_id, that succeeded); every asset
partition materialised exactly once; every day's seal matches the episodes the store
holds for its window; drafts per day within the cap; every sent message once in the
store, once in the outbox and once as an outreach episode.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

REPO = Path(__file__).resolve().parent.parent
DRAFTS_CAP = 10  # outreach_drafts: at most 10 a day
RETRY_TAG, PARENT_TAG = "dagster/retry_number", "dagster/parent_run_id"
PATIENCE_S = 900.0  # a wave that takes longer than this fails the run; never a speed claim
# A night's waves, in tick order. Within a wave no run reads what another one writes (or
# the order does not matter: a capture takes the world as it is), so they may run at once;
# a wave starts when the one before it has finished, as its slots' ticks come later.
WAVES = [
    # 00:30-05:45: the vault (recall store), aging (Chroma), growth (reads messages),
    # the CRM audit (reads the CRM, writes one ops row).
    ("vault_job", "memory_aging_job", "outreach_growth_job", "crm_audit_job"),
    # 06:00-07:30: the brief reads the audit; the export, inbox triage and contact sync.
    ("morning_brief_job", "state_export_job", "inbox_job", "crm_job"),
    ("outreach_job",),  # 07:55: reads the replies and the CRM of the wave before
    ("snapshots_job", "engagement_job"),  # 08:15, 18:30
    ("digest_job", "memory_job"),  # 09:05 reads the runs up to 09:05; 23:15 seals the day
    ("brain_job", "memory_export_job"),  # 23:30 reads the day's runs, 23:45 its timelines
]
PID_EVENT = re.compile(r"Started process for run \(pid: (\d+)\)")


def say(text: str) -> None:
    print(text, flush=True)


@dataclass
class Outcome:
    runs: int = 0
    retries: int = 0
    killed: str | None = None
    killed_pid: int | None = None
    wall_s: float = 0.0
    most_at_once: int = 0
    problems: list[str] = field(default_factory=list)
    # The mails out before the kill, by name: (inode, mtime), to see none is sent again.
    mailed_before_kill: dict[str, tuple[int, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems and self.killed is not None


def first_monday(days: int, today: date) -> date:
    """The latest Monday from which `days` whole days end before `today`."""
    start = today - timedelta(days=days + 1)
    return start - timedelta(days=start.weekday())


def write_dagster_home(home: Path) -> None:
    """deploy/dagster.yaml with its storage on this server (the env vars it names), the
    default launcher named, one retry, and monitoring polled every few seconds."""
    config = yaml.safe_load((REPO / "deploy" / "dagster.yaml").read_text())
    config.pop("load_from", None)
    config["run_launcher"] = {
        "module": "dagster._core.launcher",
        "class": "DefaultRunLauncher",
    }
    config["run_retries"]["max_retries"] = 1
    config["run_monitoring"]["poll_interval_seconds"] = 5
    # The killed run's pool slot is freed after 10 s here, not the file's 60, to save time.
    if config["run_monitoring"].get("free_slots_after_run_end_seconds"):
        config["run_monitoring"]["free_slots_after_run_end_seconds"] = 10
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        pid = int(re.search(r"^PPid:\s+(\d+)", status, re.M).group(1))
        if pid == ancestor:
            return True
    return False


def worker_pid(instance, run_id: str) -> int | None:
    """The pid of the run's worker process, from the engine event its code server wrote."""
    import dagster as dg

    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        found = PID_EVENT.search(entry.message or "")
        if found:
            return int(found.group(1))
    return None


def step_events(instance, run_id: str, step: str) -> set[str]:
    """Which of STEP_START and STEP_SUCCESS the run has recorded for `step`."""
    import dagster as dg

    kinds = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS}
    return {
        e.dagster_event.event_type_value
        for e in instance.all_logs(run_id, of_type=kinds)
        if e.dagster_event.step_key == step
    }


class Night:
    """Queues waves of runs and waits for them, killing the chosen run's worker once."""

    def __init__(self, instance, runs, daemon: subprocess.Popen, kill: tuple[str, str, str],
                 kill_after_s: float, outcome: Outcome, data: Path, kill_at: str):  # fmt: skip
        self.instance, self.runs, self.daemon, self.data = instance, runs, daemon, data
        self.kill_job, self.kill_day, self.kill_step = kill
        self.kill_after_s, self.outcome, self.kill_at = kill_after_s, outcome, kill_at

    def wave(self, launches: list[tuple[str, str | None, dict]], night: str, label: str) -> None:
        ids = {
            self.runs.launch(job, day, tags, queue=True): (job, day) for job, day, tags in launches
        }
        self.outcome.runs += len(ids)
        names = ", ".join(f"{j} {d}" if d else j for j, d in ids.values())
        say(f"    {label}: queued {names}")
        started, seen, deadline = time.monotonic(), {}, time.monotonic() + PATIENCE_S
        pending = dict(ids)
        while pending:
            if self.daemon.poll() is not None:
                raise RuntimeError(f"dagster-daemon exited with {self.daemon.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label}: runs not finished in {PATIENCE_S:.0f} s: {pending}")
            active = 0
            for run_id, (job, day) in list(pending.items()):
                run = self.instance.get_run_by_id(run_id)
                if run.status.value != seen.get(run_id):
                    seen[run_id] = run.status.value
                    say(f"      {job} {day or '(once)'} {run_id[:8]}: {run.status.value}"
                        f" at {time.monotonic() - started:.1f}s")  # fmt: skip
                active += run.status.value == "STARTED"
                if (job, night) == (self.kill_job, self.kill_day) and self.outcome.killed is None:
                    self._maybe_kill(run)
                if run.is_finished:
                    del pending[run_id]
                    retry = self._retry_of(run)
                    if retry is not None:
                        pending[retry] = (job, day)
                        self.outcome.retries += 1
                        say(f"      {job} {day}: retry {retry[:8]} of {run_id[:8]} queued")
            self.outcome.most_at_once = max(self.outcome.most_at_once, active)
            time.sleep(0.1)

    def _retry_of(self, run) -> str | None:
        """A failed run's retry, waiting for the daemon to make it (it may make none)."""
        import dagster as dg

        if run.status.value != "FAILURE":
            return None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = self.instance.get_runs(dg.RunsFilter(tags={PARENT_TAG: run.run_id}))
            if found:
                return found[0].run_id
            time.sleep(0.5)
        return None

    def _maybe_kill(self, run) -> None:
        if run.status.value != "STARTED":
            return
        if self.kill_at == "step-start" and "STEP_START" not in step_events(
            self.instance, run.run_id, self.kill_step
        ):
            return
        pid = worker_pid(self.instance, run.run_id)
        if pid is None:
            return  # its engine event is not written yet
        if not descends_from(pid, self.daemon.pid):
            raise RuntimeError(f"run {run.run_id}: worker pid {pid} is not the daemon's")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        if self.kill_at == "first-mail":
            self._wait_for_a_mail(run.run_id)
        time.sleep(self.kill_after_s)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            self.outcome.problems.append(f"run {run.run_id} ended before the kill")
            self.outcome.killed = "(none: the run had ended)"
            return
        self.outcome.killed, self.outcome.killed_pid = run.run_id, pid
        self.outcome.mailed_before_kill = mailed(self.data)
        outbox = len(self.outcome.mailed_before_kill)
        say(f"      SIGKILL → pid {pid} ({cmdline[:60]}…), run {run.run_id[:8]} "
            f"{run.job_name} {self.kill_day}; {outbox} mails in the outbox then")  # fmt: skip
        done = step_events(self.instance, run.run_id, self.kill_step)
        say(f"      {self.kill_step} then: {sorted(done) or 'not started'}")
        if "STEP_SUCCESS" in done:
            # Then no step is left to retry: Dagster makes no retry and the run stays failed.
            self.outcome.problems.append(f"the kill came after {self.kill_step} had ended")

    def _wait_for_a_mail(self, run_id: str) -> None:
        """Until one more mail is in the outbox (only this run sends while it runs, so the
        kill lands after one of its sends: before its row is written or between two
        sends), or the run has ended."""
        outbox = self.data / "outbox"
        before = set(outbox.glob("*.eml")) if outbox.exists() else set()
        polls = 0
        while not (outbox.exists() and set(outbox.glob("*.eml")) - before):
            polls += 1
            if polls % 200 == 0 and self.instance.get_run_by_id(run_id).is_finished:
                return
            time.sleep(0.002)


def waves_of(plan, first_tick_of_day):
    """The plan's slots grouped into each night's waves, in order."""
    by_day: dict[str, list] = {}
    for slot in plan:
        by_day.setdefault(slot.partition, []).append(slot)
    for day, slots in by_day.items():
        jobs = {s.job: s for s in slots}
        unknown = set(jobs) - {j for wave in WAVES for j in wave}
        if unknown:
            raise RuntimeError(f"jobs of the timetable in no wave: {sorted(unknown)}")
        for i, wave in enumerate(WAVES, 1):
            chosen = [jobs[j] for j in wave if j in jobs]
            if chosen:
                yield day, i, chosen


def run(root: Path, *, days: int, contacts: int, kill_job: str, kill_night: int,
        kill_step: str, kill_after_s: float = 0.0, kill_at: str = "first-mail",
        jobs: set[str] | None = None) -> Outcome:  # fmt: skip
    """The whole run in `root` (which must be enterable by `nobody` when run as root: the
    PostgreSQL server runs as `nobody`); `jobs` plays only those slots (the test's short run)."""
    from tests.chroma_server import ChromaServer
    from tests.pg_server import NOT_INSTALLED, PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise SystemExit(NOT_INSTALLED)
    outcome = Outcome()
    began = time.monotonic()
    say(f"[1/5] PostgreSQL and `chroma run` in {root}")
    pg = PgServer(bindir, root / "pg").start()
    chroma, daemon = None, None
    try:
        chroma = ChromaServer(root / "chroma").start()
        pg.create_database("dagster")
        data, home = root / "data", root / "dagster_home"
        data.mkdir()
        write_dagster_home(home)
        env = {
            "DAGSTER_HOME": str(home),
            "DAGSTER_PG_HOST": "127.0.0.1",
            "DAGSTER_PG_PORT": str(pg.port),
            "DAGSTER_PG_DB": "dagster",
            "DAGSTER_PG_USER": "postgres",
            "DAGSTER_PG_PASSWORD": "not-checked",
            "COMPANY_AI_DATA_DIR": str(data),
            "COMPANY_AI_DATABASE_URL": pg.create_database("company_ai"),
            "COMPANY_AI_CHROMA_URL": chroma.url,
            "COMPANY_AI_PLAYED_CLOCK": "true",
            "COMPANY_AI_COMPANY_DOMAINS": "company-ai.example",
            "PYTHONPATH": str(REPO),
        }
        os.environ.update(env)  # this process's code server and the daemon's read them
        os.environ.pop("COMPANY_AI_START_DATE", None)
        say(f"      postgres on :{pg.port}, chroma at {chroma.url}, DAGSTER_HOME {home}")
        plan, installed, first = load_world(data, days, contacts)
        plan = [s for s in plan if jobs is None or s.job in jobs]
        import dagster as dg

        from company_ai.demo import _World
        from company_ai.launch import launcher
        from company_ai.settings import Settings

        instance = dg.DagsterInstance.get()
        settings = Settings.from_env()
        from company_ai.core.store import Stores

        world = _World(Stores(data, database_url=settings.database_url), settings)
        with launcher(instance) as runs:
            stopped = stop_instigators(instance, runs.workspace)
            say(f"[3/5] {stopped} schedules and sensors stopped (the nights are played here);"
                " the alert sensors stay on. Starting dagster-daemon")  # fmt: skip
            with (root / "daemon.log").open("w") as log:
                daemon = subprocess.Popen(
                    [
                        str(Path(sys.executable).parent / "dagster-daemon"),
                        "run",
                        "-w",
                        str(REPO / "workspace.yaml"),
                    ],
                    cwd=REPO,
                    env=os.environ.copy(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )  # fmt: skip (the child keeps its own copy of the log's descriptor)
            nights = sorted({s.partition for s in plan})
            kill_day = nights[min(kill_night, len(nights) - 1)]
            night = Night(instance, runs, daemon, (kill_job, kill_day, kill_step),
                          kill_after_s, outcome, data, kill_at)  # fmt: skip
            say(
                f"[4/5] {len(plan)} slots over {len(nights)} nights ({nights[0]}..{nights[-1]})"
                f", in waves of up to 4; {kill_job} {kill_day} is killed in {kill_step}"
            )
            play(plan, world, night)
        outcome.counts = check(instance, data, plan, installed, outcome)
    finally:
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
        if chroma is not None:
            chroma.stop()
        pg.stop()
    outcome.wall_s = time.monotonic() - began
    return outcome


def load_world(data: Path, days: int, contacts: int):
    from company_ai.core.install import record_first_day
    from company_ai.core.store import Stores
    from company_ai.demo import demo_plan
    from company_ai.sample_world.crm import load_sample
    from company_ai.settings import Settings

    tz = Settings.from_env().timezone
    monday = first_monday(days, datetime.now(UTC).date())
    # The end of the last played day: its 23:45 slot is the last one due.
    now = datetime.combine(monday + timedelta(days=days), datetime.min.time(), ZoneInfo(tz))
    first, installed, plan = demo_plan(now.astimezone(UTC) - timedelta(seconds=1), tz, days)
    record_first_day(data, first, installed)
    settings = Settings.from_env()
    stores = Stores(data, database_url=settings.database_url)
    stores.create_all()
    summary = load_sample(stores, as_of=installed, contacts=contacts, tz=tz)
    say(f"[2/5] sample: {summary.contacts} contacts, {summary.episodes} episodes, "
        f"{summary.messages} messages; installed {first} (a {monday:%A})")  # fmt: skip
    return plan, installed, first


def stop_instigators(instance, workspace) -> int:
    """Stop the schedules and the sensors that launch runs (the catch-up and held-send
    sensors would play the wall clock's days): this script plays the nights itself."""
    location = workspace.get_code_location("company_ai")
    repo = next(iter(location.get_repositories().values()))
    stopped = 0
    for schedule in repo.get_schedules():
        instance.stop_schedule(schedule.get_remote_origin_id(), schedule.selector_id, schedule)
        stopped += 1
    for sensor in repo.get_sensors():
        if sensor.name in ("catchup_sensor", "held_sends_sensor") or sensor.job_name:
            instance.stop_sensor(sensor.get_remote_origin_id(), sensor.selector_id, sensor)
            stopped += 1
    return stopped


def play(plan, world, night: Night) -> None:
    from company_ai.constants import PLAYED_AT_TAG
    from company_ai.core.times import to_iso

    for day, number, slots in waves_of(plan, None):
        held = world.held_sends_due(slots[0].tick)
        if held:
            night.wave(
                [("held_sends_job", None, {"company_ai/launched_by": "concurrency_run",
                                            PLAYED_AT_TAG: due}) for due in held],
                day,
                f"{day} held sends",
            )  # fmt: skip
        for slot in slots:
            world.before(slot)  # the replies and the site visits arrive before their slots
        night.wave(
            [(s.job, s.partition, {"company_ai/launched_by": "concurrency_run",
                                   PLAYED_AT_TAG: to_iso(s.tick)}) for s in slots],
            day,
            f"{day} wave {number}",
        )  # fmt: skip


def check(instance, data: Path, plan, installed: datetime, outcome: Outcome) -> dict:
    """Nothing lost, nothing doubled. Problems go to `outcome.problems`; returns counts."""
    import dagster as dg

    from company_ai.core.store import Store, Stores
    from company_ai.core.times import to_iso
    from company_ai.core.timetable import TIMETABLE
    from company_ai.settings import Settings

    say("[5/5] checks")
    bad = outcome.problems
    assets_of = {e.job: e.assets for e in TIMETABLE}
    for slot in plan:
        found = instance.get_runs(
            dg.RunsFilter(job_name=slot.job, tags={"dagster/partition": slot.partition})
        )
        originals = [r for r in found if RETRY_TAG not in r.tags]
        retries = [r for r in found if RETRY_TAG in r.tags]
        statuses = sorted(r.status.value for r in found)
        if len(originals) != 1:
            bad.append(f"{slot.job} {slot.partition}: {len(originals)} runs, not 1")
        elif originals[0].run_id == outcome.killed:
            if statuses != ["FAILURE", "SUCCESS"] or len(retries) != 1:
                bad.append(f"{slot.job} {slot.partition} (killed): runs {statuses}")
            elif retries[0].tags[PARENT_TAG] != outcome.killed:
                bad.append(f"{slot.job} {slot.partition}: the retry names another parent")
        elif statuses != ["SUCCESS"]:
            bad.append(f"{slot.job} {slot.partition}: runs {statuses}")
        for asset in assets_of[slot.job]:
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset),
                                      asset_partitions=[slot.partition]), limit=5,
            ).records  # fmt: skip
            if len(records) != 1:
                bad.append(f"{asset} {slot.partition}: materialised {len(records)} times")
    for held in instance.get_runs(dg.RunsFilter(job_name="held_sends_job")):
        if held.status.value != "SUCCESS" and held.run_id != outcome.killed:
            bad.append(f"held_sends_job {held.run_id[:8]}: {held.status.value}")
        if held.run_id == outcome.killed:
            retries = instance.get_runs(dg.RunsFilter(tags={PARENT_TAG: held.run_id}))
            if [r.status.value for r in retries] != ["SUCCESS"]:
                bad.append(f"held_sends_job (killed): retries {[r.status.value for r in retries]}")
    if outcome.retries != 1:
        bad.append(f"{outcome.retries} retries, not 1")

    settings = Settings.from_env()
    stores = Stores(data, database_url=settings.database_url)
    counts: dict[str, int] = {}
    with stores.connect(Store.MEMORY, readonly=True) as memory:
        seals = memory.execute(
            "SELECT day, episodes, window_start, window_end FROM day_seals"
            " WHERE window_start >= $1 ORDER BY day",
            (to_iso(installed - timedelta(days=1)),),
        ).fetchall()
        sealed_days = {row[0] for row in seals}
        for day in sorted({s.partition for s in plan if s.job == "memory_job"} - sealed_days):
            bad.append(f"{day}: no day seal")
        for day, episodes, start, end in seals:
            held = memory.execute(
                "SELECT count(*) FROM contact_episodes"
                " WHERE recorded_at >= $1 AND recorded_at < $2",
                (start, end),
            ).fetchone()[0]
            say(f"      {day}: sealed {episodes} episodes, the store holds {held}")
            if held != episodes:
                bad.append(f"{day}: sealed {episodes} episodes, the store holds {held}")
        doubled = memory.execute(
            "SELECT count(*) FROM (SELECT contact_id, natural_key FROM contact_episodes"
            " GROUP BY contact_id, natural_key HAVING count(*) > 1) AS d"
        ).fetchone()[0]
        outreach_episodes = memory.execute(
            "SELECT count(*) FROM contact_episodes WHERE episode_type = 'outreach'"
            " AND recorded_at >= $1",
            (to_iso(installed),),
        ).fetchone()[0]
        counts["episodes"] = memory.execute("SELECT count(*) FROM contact_episodes").fetchone()[0]
    if doubled:
        bad.append(f"{doubled} episodes stored twice")
    with stores.connect(Store.OUTREACH, readonly=True) as outreach:
        per_day = outreach.execute(
            "SELECT day, count(*) FROM drafts GROUP BY day ORDER BY day"
        ).fetchall()
        for day, n in per_day:
            say(f"      {day}: {n} drafts")
            if n > DRAFTS_CAP:
                bad.append(f"{day}: {n} drafts, more than the cap of {DRAFTS_CAP}")
        sent = outreach.execute(
            "SELECT rfc_message_id FROM messages WHERE sent_at >= $1", (to_iso(installed),)
        ).fetchall()
    sent_ids = [(row[0] or "").strip("<>") for row in sent]
    outbox = sorted((data / "outbox").glob("*.eml")) if (data / "outbox").exists() else []
    in_outbox = [message_id(p) for p in outbox]
    say(f"      {len(sent_ids)} messages sent; {len(outbox)} in the outbox; "
        f"{outreach_episodes} outreach episodes")  # fmt: skip
    if len(set(sent_ids)) != len(sent_ids) or sorted(sent_ids) != sorted(in_outbox):
        only = sorted(set(sent_ids) ^ set(in_outbox))
        bad.append(f"messages: {len(sent_ids)} in the store, {len(in_outbox)} in the outbox; "
                   f"in one only: {only}")  # fmt: skip
    now_mailed = mailed(data)
    again = [n for n, st in outcome.mailed_before_kill.items() if now_mailed.get(n) != st]
    if again:
        bad.append(f"mails sent before the kill were sent again: {again}")
    if outreach_episodes != len(sent_ids):
        bad.append(f"{len(sent_ids)} messages sent, {outreach_episodes} outreach episodes")
    counts.update(drafts=sum(n for _, n in per_day), messages=len(sent_ids), seals=len(seals))
    return counts


def mailed(data: Path) -> dict[str, tuple[int, int]]:
    """Every mail in the outbox: its file's inode and mtime (a mail sent again is a new
    file put in its place: the outbox mailer writes atomically, by rename)."""
    stats = {p.name: p.stat() for p in (data / "outbox").glob("*.eml")}
    return {name: (st.st_ino, st.st_mtime_ns) for name, st in stats.items()}


def message_id(path: Path) -> str:
    from email import message_from_bytes, policy

    header = message_from_bytes(path.read_bytes(), policy=policy.default)["Message-ID"]
    return header.strip().strip("<>")  # a long Message-ID is folded onto its own line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--contacts", type=int, default=300)
    # The held sends are where mail leaves: outreach_job's own send step runs at 07:55,
    # before working hours, and holds every draft for the 08:00 held-send run.
    parser.add_argument("--kill-job", default="held_sends_job")
    parser.add_argument("--kill-night", type=int, default=1, help="0 = the first night")
    parser.add_argument("--kill-step", default="send_held_drafts")
    parser.add_argument(
        "--kill-at",
        choices=("first-mail", "step-start"),
        default="first-mail",
        help="first-mail: once the killed step has sent one mail",
    )
    parser.add_argument("--kill-after-s", type=float, default=0.0, help="then wait this long")
    parser.add_argument("--jobs", help="play only these jobs' slots (comma-separated)")
    parser.add_argument("--keep", type=Path, help="a folder to run in, kept afterwards")
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the daemon and the servers are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="concurrency-") as tmp:
        root = args.keep.resolve() if args.keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o755)  # the PostgreSQL server runs as `nobody` when this runs as root
        outcome = run(root, days=args.days, contacts=args.contacts, kill_job=args.kill_job,
                      kill_night=args.kill_night, kill_step=args.kill_step,
                      kill_after_s=args.kill_after_s, kill_at=args.kill_at,
                      jobs=set(args.jobs.split(",")) if args.jobs else None)  # fmt: skip
    say(f"\nruns {outcome.runs} + retries {outcome.retries}; at most {outcome.most_at_once} "
        f"started at once; killed {outcome.killed or 'nothing'} (pid {outcome.killed_pid}); "
        f"wall {outcome.wall_s:.0f} s; {outcome.counts}")  # fmt: skip
    for problem in outcome.problems:
        say(f"  PROBLEM: {problem}")
    say("OK: nothing lost, nothing doubled" if outcome.ok else "FAILED")
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
