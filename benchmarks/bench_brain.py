"""The night's memory at size: brain synthesis and the Markdown export, per day over 30 days.

    .venv/bin/python benchmarks/bench_brain.py                  # 156,925 contacts, ≥1.5M episodes
    .venv/bin/python benchmarks/bench_brain.py --contacts 2000  # a quicker look

The stores are the benchmark data of bench_memory.py (the sample generator at 1.1x density),
plus, for each of the last `--days` days, a full outreach day (20 research picks, 10 drafts:
7 sent, 2 quarantined, 1 skipped), seven runs with their checks, a few recall pages and a
deleted note. Times the core functions the `brain_facts` and `memory_export` assets call
(`synthesize_day` + `write_day`, `export_day`), then replays every day and checks that the
export is byte-identical, then times the growth analysis (eight weeks to each Monday).
Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from company_ai.core.brain import export_day, synthesize_day, write_day
from company_ai.core.memory import append_episodes, validate
from company_ai.core.outreach import count_growth, growth_frame
from company_ai.core.runs import CheckInfo, RunInfo
from company_ai.core.store import Stores, transaction
from company_ai.core.times import Day
from company_ai.core.vault import staging_dir, write_manifest
from company_ai.sample_world.crm import iter_sample, store_contacts, store_messages

AS_OF = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
TZ = "UTC"
JOBS = ("memory_job", "outreach_job", "vault_job", "morning_brief_job", "state_export_job")


def load(
    stores: Stores, contacts: int, density: float, batch: int, as_of: datetime = AS_OF
) -> None:
    started = time.perf_counter()
    people, episodes, messages = [], [], []
    for contact, history, sent in iter_sample(contacts=contacts, as_of=as_of, density=density):
        people.append(contact)
        episodes += history
        messages += sent
    store_contacts(stores, people)
    store_messages(stores, messages)
    gc.freeze()  # the generated input is not part of what is measured
    with stores.connect("memory") as memory:
        for i in range(0, len(episodes), batch):
            # Recorded as it happened, as the sample world's loader has it.
            chunk = [{**e, "recorded_at": e["created_at"]} for e in episodes[i : i + batch]]
            append_episodes(memory, validate(chunk), now=as_of, tz=TZ)
    print(
        f"loaded {len(people):,} contacts, {len(episodes):,} episodes, {len(messages):,}"
        f" messages in {time.perf_counter() - started:.1f} s"
    )


def seed_outreach(stores: Stores, days: list[str], rng: random.Random) -> None:
    """A full outreach day for each day, plus recall pages and a deleted note."""
    with stores.connect("crm", readonly=True) as crm:
        reachable = [r[0] for r in crm.execute("SELECT id FROM contacts WHERE email IS NOT NULL")]
    deleted = {}
    with stores.connect("outreach") as outreach, stores.connect("recall") as recall:
        for day in days:
            at = f"{day}T07:55:00Z"
            picks = rng.sample(reachable, 20)
            with transaction(outreach):
                for rank, cid in enumerate(picks, start=1):
                    skipped = rank % 7 == 0
                    outreach.execute(
                        "INSERT INTO research_picks (day, contact_id, rank, status, reason,"
                        " findings, writeback, created_at, updated_at) VALUES"
                        " ($1,$2,$3,$4,$5,'[]',$6,$7,$8)",
                        (
                            day,
                            cid,
                            rank,
                            "skipped" if skipped else "done",
                            "no company page" if skipped else None,
                            None
                            if skipped
                            else json.dumps({"applied": {"title": "COO"}, "rejected": {"x": "y"}}),
                            at,
                            at,
                        ),
                    )
                researched = [cid for rank, cid in enumerate(picks, start=1) if rank % 7]
                for n, cid in enumerate(researched[:10]):
                    status = "sent" if n < 7 else "quarantined" if n < 9 else "skipped"
                    claims = [{"field": "body", "kind": "number", "text": "40%"}]
                    draft_id = outreach.execute(
                        "INSERT INTO drafts (day, contact_id, thread_id, bump, subject, body,"
                        " angle, dossier, sources, model, verdict, unsupported, status, reason,"
                        " created_at, updated_at)"
                        " VALUES ($1,$2,$3,0,$4,$5,$6,'','[]','model:offline',"
                        " $7,$8,$9,$10,$11,$12)",
                        (
                            day,
                            cid,
                            f"bench-{day}-{cid}",
                            f"A thought for {cid}",
                            f"Hello,\n\nA short note for {cid}.\n",
                            "a mutual customer",
                            "fail" if status == "quarantined" else "pass",
                            json.dumps(claims if status == "quarantined" else []),
                            status,
                            "HTML in the body" if status == "skipped" else None,
                            at,
                            at,
                        ),
                    ).lastrowid
                    if status == "sent":
                        message = outreach.execute(
                            "INSERT INTO messages (contact_id, thread_id, subject, body, angle,"
                            " sent_at, draft_id) VALUES ($1,$2,$3,$4,$5,$6,$7)",
                            (
                                cid,
                                f"bench-{day}-{cid}",
                                f"A thought for {cid}",
                                f"Hello,\n\nA short note for {cid}.\n",
                                "a mutual customer",
                                f"{day}T08:0{n}:00Z",
                                draft_id,
                            ),
                        ).lastrowid
                        outreach.execute(
                            "UPDATE drafts SET message_id = $1 WHERE id = $2", (message, draft_id)
                        )
            with transaction(recall):
                for n in range(5):
                    page = {"relations": [{"relation": "relates_to", "target": f"Page {n + 1}"}]}
                    recall.execute(
                        "INSERT OR REPLACE INTO pages (title, note_path, note_hash, distilled,"
                        " generated_by, page, markdown, published, problems) VALUES"
                        " ($1, $2, 'h', $3, 'model:offline', $4, '', 1, '[]')",
                        (f"{day} page {n}", f"notes/{day}-{n}.md", day, json.dumps(page)),
                    )
            deleted[f"notes/{day}-gone.md"] = {"deleted_on": day, "sha256": "0"}
    write_manifest(staging_dir(stores.data_dir), {"notes": {}, "deleted": deleted, "private": {}})


def runs_of(day: str) -> list[RunInfo]:
    start = datetime.fromisoformat(f"{day}T23:00:00+00:00")
    runs = []
    for n, job in enumerate(JOBS):
        began = start + timedelta(minutes=n)
        runs.append(
            RunInfo(
                hashlib.sha1(f"{day}{job}".encode()).hexdigest(),
                job,
                day,
                "FAILURE" if n == 2 and day.endswith("5") else "SUCCESS",
                catchup_attempt=1 if n == 3 and day.endswith("0") else None,
                error="boom" if n == 2 and day.endswith("5") else None,
                started_at=began.strftime("%Y-%m-%dT%H:%M:%SZ"),
                ended_at=(began + timedelta(seconds=7)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                checks=(CheckInfo(f"{job}_asset", "check", n != 1, "WARN"),),
            )
        )
    return runs


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def summary(label: str, samples: list[float]) -> None:
    print(
        f"{label}: {statistics.mean(samples):.3f} s/day mean, p50"
        f" {statistics.median(samples):.3f}, max {max(samples):.3f} (n={len(samples)} days)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=156_925)
    parser.add_argument("--density", type=float, default=1.1)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, help="keep the stores and export in this directory")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="company-ai-bench-brain-"))
    if root.exists():
        shutil.rmtree(root)
    stores, folder = Stores(root / "data"), root / "export"
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python"
        f" {platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}"
    )
    load(stores, args.contacts, args.density, args.batch)
    last = AS_OF.date() - timedelta(days=1)
    days = [(last - timedelta(days=n)).isoformat() for n in range(args.days - 1, -1, -1)]
    seed_outreach(stores, days, random.Random(11))

    synth, export, files, contacts = [], [], 0, 0
    with stores.connect("brain") as brain:
        for day in days:
            t0 = time.perf_counter()
            write_day(brain, day, synthesize_day(stores, Day.of(day, TZ), runs_of(day)))
            synth.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            result = export_day(stores, Day.of(day, TZ), folder)
            export.append(time.perf_counter() - t0)
            files += result.files
            contacts += result.contacts
        (rows,) = brain.execute(
            "SELECT (SELECT count(*) FROM facts) + (SELECT count(*) FROM decisions)"
            " + (SELECT count(*) FROM edges)"
        ).fetchone()
    summary("brain_facts (synthesize_day + write_day)", synth)
    summary("memory_export (export_day, first export)", export)
    print(
        f"  {rows / len(days):,.0f} brain rows a day; {contacts / len(days):,.0f} contact files"
        f" a day ({files:,} files in all)"
    )

    before = digest(folder)
    replay_synth, replay_export, rewritten = [], [], 0
    with stores.connect("brain") as brain:
        for day in days:
            t0 = time.perf_counter()
            write_day(brain, day, synthesize_day(stores, Day.of(day, TZ), runs_of(day)))
            replay_synth.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            rewritten += len(export_day(stores, Day.of(day, TZ), folder).written)
            replay_export.append(time.perf_counter() - t0)
    summary("replay brain_facts", replay_synth)
    summary("replay memory_export (compare, write nothing)", replay_export)
    same = digest(folder) == before
    print(f"  replay byte-identical: {same} ({rewritten} files rewritten)")

    weeks = sorted(
        {date.fromisoformat(d) - timedelta(days=date.fromisoformat(d).weekday()) for d in days}
    )
    timings = []
    with stores.connect("outreach", readonly=True) as outreach:
        for week in weeks:
            t0 = time.perf_counter()
            monday, sunday = (week + timedelta(days=7)).isoformat(), week + timedelta(days=6)
            tick = Day(monday, TZ, f"{sunday.isoformat()}T05:30:00Z", f"{monday}T05:30:00Z")
            growth_frame(count_growth(outreach, tick))
            timings.append(time.perf_counter() - t0)
    print(
        f"outreach_growth (count_growth + growth_frame): {statistics.mean(timings):.3f} s/run"
        f" mean (n={len(timings)} Mondays)"
    )
    if not args.keep:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
