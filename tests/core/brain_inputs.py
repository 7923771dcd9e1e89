"""One outreach day, its replies and engagement, and its vault changes, stored in a sample
copy: the inputs of the brain synthesis and the memory export tests."""

from __future__ import annotations

import json
from dataclasses import dataclass

from company_ai.core.memory import append_episodes
from company_ai.core.runs import CheckInfo, RunInfo
from company_ai.core.store import Stores, dialect, transaction
from company_ai.core.vault import staging_dir, write_manifest

DAY = "2026-11-29"
NEXT_DAY = "2026-11-30"
AT = f"{DAY}T08:00:00Z"


@dataclass(frozen=True)
class Seeded:
    researched: int  # picked, researched, writeback applied and refused, draft sent
    skipped: int  # picked, research skipped
    quarantined: int  # picked, researched, draft quarantined
    draft_skipped: int  # picked, researched, draft skipped
    replier: int  # replied on DAY to the message sent to them before
    messaged: int  # only a message sent on DAY, no episode recorded
    sent_draft: int
    message: int  # the message the sent draft became
    reply_thread: str
    quarantined_draft: int


def contacts_with_email(stores: Stores, n: int) -> list[int]:
    with stores.connect("crm", readonly=True) as crm:
        return [
            r[0]
            for r in crm.execute(
                "SELECT id FROM contacts WHERE email IS NOT NULL ORDER BY id LIMIT $1", (n,)
            )
        ]


def rename(stores: Stores, contact_id: int, name: str) -> None:
    with stores.connect("crm") as crm, transaction(crm):
        if dialect(crm) == "postgres":  # its text cannot hold NUL (the intake drops it)
            name = name.replace("\x00", "")
        crm.execute("UPDATE contacts SET name = $1 WHERE id = $2", (name, contact_id))


def seed_day(stores: Stores) -> Seeded:
    a, b, c, d, r, m = contacts_with_email(stores, 6)
    with stores.connect("outreach") as outreach, transaction(outreach):
        for rank, (cid, status, reason, writeback) in enumerate(
            [
                (a, "done", None, {"applied": {"title": "COO"}, "rejected": {"email": "x@y.z"}}),
                (b, "skipped", "no company page for nowhere.example", None),
                (c, "done", None, {"applied": {}, "rejected": {}}),
                (d, "done", None, None),
            ],
            start=1,
        ):
            outreach.execute(
                "INSERT INTO research_picks (day, contact_id, rank, status, reason, findings,"
                " writeback, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)",
                (DAY, cid, rank, status, reason, "[]", writeback and json.dumps(writeback), AT, AT),
            )
        drafts = {}
        for cid, status, unsupported, reason in [
            (a, "sent", [], None),
            (c, "quarantined", [{"field": "body", "kind": "number", "text": "40%"}], None),
            (d, "skipped", [], "the body contains HTML"),
        ]:
            drafts[cid] = outreach.execute(
                "INSERT INTO drafts (day, contact_id, thread_id, bump, subject, body, angle,"
                " dossier, sources, model, verdict, unsupported, status, reason, created_at,"
                " updated_at)"
                " VALUES ($1,$2,$3,0,$4,$5,$6,'','[]','model:offline',$7,$8,$9,$10,$11,$12)"
                " RETURNING id",
                (
                    DAY,
                    cid,
                    f"brain-{cid}",
                    f"A note for {cid}",
                    f"Hello {cid},\n\nA body with ``` fences.\n",
                    "a mutual customer",
                    "fail" if unsupported else "pass",
                    json.dumps(unsupported),
                    status,
                    reason,
                    AT,
                    AT,
                ),
            ).fetchone()[0]
        message = outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at,"
            " opened_at, draft_id) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING id",
            (
                a,
                f"brain-{a}",
                f"A note for {a}",
                f"Hello {a},\n\nA body with ``` fences.\n",
                "a mutual customer",
                f"{DAY}T08:05:00Z",
                f"{NEXT_DAY}T09:00:00Z",  # opened after the day: not known that night
                drafts[a],
            ),
        ).fetchone()[0]
        outreach.execute("UPDATE drafts SET message_id = $1 WHERE id = $2", (message, drafts[a]))
        outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at)"
            " VALUES ($1, 'later', 'Sent the next day', 'Later body', 'x', $2)",
            (a, f"{NEXT_DAY}T00:05:00Z"),
        )
        for contact_id, thread, sent_at in [
            (r, "old-thread", "2026-11-01T10:00:00Z"),  # an older thread: not the one replied to
            (m, "unrecorded", f"{DAY}T09:00:00Z"),  # a message whose episode is missing
        ]:
            outreach.execute(
                "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at)"
                " VALUES ($1, $2, 'Another', 'Another body', 'x', $3)",
                (contact_id, thread, sent_at),
            )
        outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, angle, sent_at,"
            " replied_at) VALUES ($1, 'reply-thread', 'Earlier', 'Earlier body', 'x', $2, $3)",
            (r, f"{DAY}T11:00:00Z", f"{DAY}T12:00:00Z"),
        )
    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                _episode(r, "response", "Replied: interested, asked for pricing.", "12:00"),
                _episode(r, "engagement", "Viewed the pricing page (2 pages).", "12:30"),
                _episode(r, "engagement", "Viewed the security page (1 pages).", "13:00"),
                _episode(a, "outreach", "Sent a note.", "08:05"),
                _episode(a, "engagement", "Recorded after the day.", "00:10", NEXT_DAY),
            ],
            now=f"{NEXT_DAY}T12:00:00Z",
        )
    with stores.connect("recall") as recall, transaction(recall):
        for title, published, problems, relations in [
            ("Harbor Logistics", 1, [], [{"relation": "relates_to", "target": "Ada Okafor"}]),
            ("Offsite ideas", 0, ["the number 12"], []),
        ]:
            page = {"type": "note", "recall": "-", "relations": relations}
            recall.execute(
                "INSERT INTO pages (title, note_path, note_hash, distilled, generated_by, page,"
                " markdown, published, problems)"
                " VALUES ($1, $2, 'h', $3, 'model:offline', $4, '', $5, $6)",
                (
                    title,
                    f"notes/{title}.md",
                    DAY,
                    json.dumps(page),
                    published,
                    json.dumps(problems),
                ),
            )
            recall.execute(
                "INSERT INTO page_log (title, event, note_path, page, problems, recorded_at)"
                " VALUES ($1, $2, $3, $4, $5, $6)",
                (
                    title,
                    "distilled" if published else "withheld",
                    f"notes/{title}.md",
                    json.dumps(page),
                    json.dumps(problems),
                    f"{DAY}T00:30:00Z",
                ),
            )
        # Pages removed from recall: one on DAY, one long before.
        for title, path, at in [
            ("Gone", "notes/gone.md", f"{DAY}T00:31:00Z"),
            ("Long gone", "notes/long-gone.md", "2026-11-01T00:31:00Z"),
        ]:
            recall.execute(
                "INSERT INTO page_log (title, event, note_path, recorded_at)"
                " VALUES ($1, 'removed', $2, $3)",
                (title, path, at),
            )
    write_manifest(
        staging_dir(stores.data_dir),
        {
            "notes": {},
            "deleted": {
                "notes/gone.md": {"deleted_on": DAY, "sha256": "0"},
                "notes/long-gone.md": {"deleted_on": "2026-11-01", "sha256": "1"},
            },
            "private": {},
        },
    )
    return Seeded(a, b, c, d, r, m, drafts[a], message, "reply-thread", drafts[c])


def _episode(contact_id, kind, content, hhmm, day=DAY):
    return {
        "contact_id": contact_id,
        "episode_type": kind,
        "content": content,
        "source": "gmail" if kind == "response" else "site",
        "created_at": f"{day}T{hhmm}:00Z",
        "natural_key": f"brain-test:{contact_id}:{kind}:{day}:{hhmm}",
        "recorded_at": f"{day}T{hhmm}:00Z",  # recorded as it happened
    }


def day_runs() -> list[RunInfo]:
    """D's runs: a routine success with checks, a failure, a catch-up recovery, a run of a
    job that no longer exists, and one still running."""
    return [
        RunInfo(
            "aaaaaaaa-1",
            "outreach_job",
            DAY,
            "SUCCESS",
            started_at=f"{DAY}T07:55:00Z",
            ended_at=f"{DAY}T07:56:12Z",
            checks=(
                CheckInfo("outreach_drafts", "fabrication_gate", False, "WARN"),
                CheckInfo("contact_episodes", "every_send_has_an_episode", True, "ERROR"),
            ),
        ),
        RunInfo(
            "bbbbbbbb-2",
            "memory_job",
            DAY,
            "FAILURE",
            error="contact_episodes: database is locked",
            started_at=f"{DAY}T23:15:00Z",
            ended_at=f"{DAY}T23:15:03Z",
            checks=(CheckInfo("contact_episodes", "sealed", False, "ERROR"),),
        ),
        RunInfo("cccccccc-3", "vault_job", DAY, "SUCCESS", catchup_attempt=1),
        RunInfo("dddddddd-4", "retired_job", DAY, "SUCCESS"),
        RunInfo("eeeeeeee-5", "digest_job", None, "STARTED"),
    ]
