"""A replay is a replay only if it is byte-identical later (DESIGN.md, principle 7).

On a copy of the demo's history: the world goes on (a mail dated last week and a webhook
retried with a two-day-old stamp arrive), every capture runs now, and then every replay of
every day the demo played is materialised again, today, as a backfill would. Every row and file the
replays write must come out byte for byte as the nights wrote them, and the late arrivals
must belong to tonight, never to an old night.
"""

import hashlib
import mailbox
import shutil
import sqlite3
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from company_ai.constants import PLAYED_AT_TAG
from company_ai.core.store import Store, Stores
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.times import utc_now
from company_ai.core.timetable import TIMETABLE, current_partitions
from company_ai.definitions import build
from company_ai.sample_world.demo_mail import drop_demo_signals
from company_ai.settings import Settings
from company_ai.setup import Setup
from tests.demo_run import instance_of

REPLAYS = {e.job for e in TIMETABLE if not e.capture}
CAPTURES = [e for e in TIMETABLE if e.capture]
# What the replays write: their tables, by store (every row of them), and their files.
WRITTEN = {
    Store.MEMORY: ("day_seals",),
    Store.BRAIN: ("facts", "decisions", "edges"),
}


def fingerprint(data) -> dict:
    """Every row the replays wrote and every file they exported, as bytes."""
    found: dict[str, str] = {}
    for store, tables in WRITTEN.items():
        with sqlite3.connect(factory=StoreConnection, database=data / f"{store}.db") as conn:
            for table in tables:
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
                    found[f"{store}.{table}:{row[0]}:{row[1]}"] = repr(row)
    exports = data / "exports"
    for path in sorted(p for p in exports.rglob("*") if p.is_file()):
        found[str(path.relative_to(exports))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def late_world(settings: Settings, stores: Stores) -> str:
    """A reply dated a week ago to a sent message, and a webhook retried with a two-day-old
    stamp, both arriving now; returns the address that wrote."""
    with stores.connect(Store.OUTREACH, readonly=True) as outreach:
        message = outreach.execute(
            "SELECT m.rfc_message_id, m.subject, m.contact_id FROM messages m"
            " WHERE m.replied_at IS NULL AND m.rfc_message_id IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM send_holds h WHERE h.contact_id = m.contact_id)"
            " ORDER BY m.sent_at DESC LIMIT 1"
        ).fetchone()
    with stores.connect(Store.CRM, readonly=True) as crm:
        name, email = crm.execute(
            "SELECT name, email FROM contacts WHERE id = $1", (message[2],)
        ).fetchone()
    mail = EmailMessage()
    mail["From"], mail["To"] = f"{name} <{email}>", "Sam Rivers <sam@company-ai.example>"
    mail["Subject"], mail["In-Reply-To"] = f"Re: {message[1]}", message[0]
    mail["Date"] = format_datetime(utc_now() - timedelta(days=7))
    mail.set_content("Sorry for the slow answer: yes, send the pricing.")
    mailbox.Maildir(settings.inbox_dir / "maildir", create=True).add(mail.as_bytes())
    drop_demo_signals(settings.engagement_dir, email, utc_now() - timedelta(days=2), "retried")
    return email


def test_every_replay_of_every_day_is_byte_identical_after_every_capture_ran_again(
    demo, tmp_path, monkeypatch
):
    root = tmp_path / "demo"
    shutil.copytree(demo[0], root)
    data = root / "data"
    monkeypatch.setenv("COMPANY_AI_DATA_DIR", str(data))
    monkeypatch.setenv("COMPANY_AI_PLAYED_CLOCK", "true")
    monkeypatch.delenv("COMPANY_AI_START_DATE", raising=False)
    settings = Settings.from_env()
    defs = build(Setup(settings))
    instance = instance_of(root)
    played = sorted(
        (r.tags[PLAYED_AT_TAG], r.job_name, r.tags["dagster/partition"])
        for r in instance.get_runs()
        if r.job_name in REPLAYS and PLAYED_AT_TAG in r.tags
    )
    assert {job for _, job, _ in played} == REPLAYS
    before = fingerprint(data)

    late_world(settings, Stores(data))
    now = utc_now()
    for entry in CAPTURES:
        partition = current_partitions(entry.slot, now, settings.timezone)[0]
        result = defs.resolve_job_def(entry.job).execute_in_process(
            partition_key=partition, instance=instance, raise_on_error=False
        )
        assert result.success, entry.job
    with sqlite3.connect(factory=StoreConnection, database=data / "outreach.db") as outreach:
        late = outreach.execute("SELECT count(*) FROM inbound WHERE created_at >= $1", (now,))
        assert late.fetchone()[0] >= 1, "the late reply was taken tonight"

    # Every replay of every day again, today, as a backfill runs it (on the wall clock).
    for _, job, partition in played:
        result = defs.resolve_job_def(job).execute_in_process(
            partition_key=partition, instance=instance
        )
        assert result.success, (job, partition)
    after = fingerprint(data)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, changed[:20]
    assert before, "the replays wrote something"
