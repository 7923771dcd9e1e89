"""The contact sync's costs: a full sync of 156,925 people over mocked pages of 1,000.

    .venv/bin/python benchmarks/bench_sync.py                    # 156,925 contacts
    .venv/bin/python benchmarks/bench_sync.py --contacts 20000

The real Google client (`googleapiclient`, the bundled People discovery document) reads
every page from an in-process `HttpMockSequence`, so no network is involved: the figures
are the client's parsing plus core's checks, upserts, commits and cursor saves. Runs go
as the asset runs them (15 pages a run, the 520-s budget on the real clock), one after
another until the pass completes. Prints one figure a line; BENCHMARKS.md records a run.
Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import tempfile
import time
from pathlib import Path

from googleapiclient.http import HttpMockSequence

from company_ai.core.crm import BUDGET_S, MAX_PAGES, PAGE_SIZE, sync_people
from company_ai.core.store import Stores
from company_ai.resources.people import PeopleSource

NOW = "2026-11-30T07:30:00Z"


def person(n: int, rng: random.Random) -> dict:
    """A person as `connections.list` answers the sync's request: its `fields=` mask
    (`core.people.PAGE_FIELDS`) leaves out the etag and the metadata's sources."""
    emails = [{"value": f"person{n}@company{n % 5000}.example", "metadata": {"primary": True}}]
    emails += [{"value": f"p{n}.{k}@home{k}.example"} for k in range(rng.choice((0, 0, 1, 2)))]
    return {
        "resourceName": f"people/c{n}",
        "names": [
            {"displayName": f"Person {n} Example", "givenName": "Person", "familyName": f"{n}"}
        ],
        "emailAddresses": emails,
        "organizations": [{"name": f"Company {n % 5000} Ltd", "title": "Head of Operations"}],
        "addresses": [{"city": rng.choice(("Leeds", "Berlin", "Lisbon", "Kraków"))}],
    }


def pages(contacts: int) -> list[tuple[dict, str]]:
    """The whole address book as `connections.list` pages, serialised once, before timing."""
    rng = random.Random(7)
    count = -(-contacts // PAGE_SIZE)
    found = []
    for k in range(count):
        people = [person(n, rng) for n in range(k * PAGE_SIZE, min(contacts, (k + 1) * PAGE_SIZE))]
        body: dict = {"connections": people, "totalPeople": contacts}
        if k + 1 < count:
            body["nextPageToken"] = f"page-{k + 1}"
        else:
            body["nextSyncToken"] = "sync-1"
        found.append(({"status": "200"}, json.dumps(body)))
    return found


def source(responses: list) -> PeopleSource:
    google = PeopleSource(backend="google")
    google._http = HttpMockSequence(list(responses))
    return google


def full_pass(stores: Stores, cursor: Path, responses: list, label: str) -> None:
    """Runs as the schedule makes them, until the pass completes; prints the figures."""
    google = source(responses)
    runs: list[tuple[int, float]] = []
    people = 0
    cpu = time.process_time()
    with stores.connect("crm") as crm:
        while True:
            started = time.perf_counter()
            report = sync_people(
                google.fetcher(),
                crm,
                cursor,
                source="google_people",
                now=NOW,
                clock=time.monotonic,
                max_pages=MAX_PAGES,
                budget_s=BUDGET_S,
            )
            runs.append((report.pages, time.perf_counter() - started))
            people += report.people
            if report.stopped == "complete":
                break
    cpu = time.process_time() - cpu
    seconds = sum(s for _, s in runs)
    pages_total = sum(p for p, _ in runs)
    longest = max(s for _, s in runs)
    print(f"{label}: {people:,} contacts, {pages_total} pages in {len(runs)} runs, {seconds:.2f} s")
    print(
        f"{label}: {people / seconds:,.0f} contacts/s wall, {people / cpu:,.0f} contacts/s of CPU"
        f" time; {seconds / pages_total * 1000:.1f} ms a page"
    )
    print(
        f"{label}: a run of {MAX_PAGES} pages takes at most {longest:.2f} s of its {BUDGET_S:.0f}-s"
        f" budget; at this pace {BUDGET_S / (seconds / pages_total):,.0f} pages would fit in it"
    )
    print(f"{label}: {report.counts.__dict__} (last run)")


def resume_cost(stores: Stores, cursor: Path, responses: list) -> None:
    """What a resume costs: a run that starts from a saved cursor mid-pass (one page), and
    the page a crash between its commit and its cursor save makes the next run redo."""
    shutil.copy(cursor, cursor.with_suffix(".complete"))
    mid = len(responses) // 2
    with stores.connect("crm") as crm:
        timings = []
        for _ in range(5):
            cursor.write_text(
                json.dumps(
                    {"version": 1, "source": "google_people", "page_token": f"page-{mid}",
                     "sync_token": None, "generation": NOW, "pages_done": mid}
                )
            )  # fmt: skip
            google = source(responses[mid : mid + 1])
            started = time.perf_counter()
            sync_people(
                google.fetcher(), crm, cursor, source="google_people", now=NOW,
                clock=time.monotonic, max_pages=1,
            )  # fmt: skip
            timings.append(time.perf_counter() - started)
    best, median = min(timings) * 1000, sorted(timings)[2] * 1000
    print(
        "resume: a run from a saved cursor, building the client and redoing one stored page:"
        f" {best:.1f} ms best of 5 ({median:.1f} ms median)"
    )
    shutil.move(cursor.with_suffix(".complete"), cursor)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=156_925)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    started = time.perf_counter()
    responses = pages(args.contacts)
    size = sum(len(body) for _, body in responses)
    print(
        f"mocked book: {len(responses)} pages of {PAGE_SIZE}, {size / 1e6:.0f} MB of JSON"
        f" (built in {time.perf_counter() - started:.1f} s, not timed below)"
    )
    scratch = Path(tempfile.mkdtemp(prefix="company-ai-bench-sync-"))
    try:
        stores = Stores(scratch / "data")
        cursor = scratch / "data" / "cursors" / "crm_contacts.json"
        full_pass(stores, cursor, responses, "first full sync (every contact new)")
        cursor.unlink()  # as after an expired sync token: a second full pass, nothing new
        full_pass(stores, cursor, responses, "second full sync (every contact unchanged)")
        resume_cost(stores, cursor, responses)
        with stores.connect("crm") as crm:
            contacts, emails = crm.execute(
                "SELECT (SELECT count(*) FROM contacts), (SELECT count(*) FROM contact_emails)"
            ).fetchone()
        print(f"stored: {contacts:,} contacts, {emails:,} addresses; crm.db "
              f"{(scratch / 'data' / 'crm.db').stat().st_size / 1e6:.0f} MB")  # fmt: skip
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
