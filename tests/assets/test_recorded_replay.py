"""Replays read by the time a row was recorded (issue 26): a night materialised again after
later captures ran, late rows among them, gives the same rows, seal and files byte for byte,
and the late rows belong to the night they were recorded in."""

from datetime import UTC, datetime, timedelta

import dagster as dg

from company_ai import days
from company_ai.core.memory import append_episodes
from company_ai.core.store import Stores, transaction
from company_ai.core.times import parse_utc, to_iso
from company_ai.core.vault import distill_staging, offline_page, stage_vault, staging_dir
from company_ai.resources.embedder import Embedder
from company_ai.resources.folders import OpsFolders
from company_ai.resources.stores import StoresResource
from tests.setup import SETUP, named

NIGHT_ASSETS = named("contact_episodes", "episode_vectors", "brain_facts", "memory_export")
DAY = "2026-11-23"
LATER = "2026-11-30"  # a week on: the late rows are recorded that day
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def materialise(instance, data, day):
    return dg.materialize(
        NIGHT_ASSETS,
        partition_key=day,
        instance=instance,
        resources={
            "stores": StoresResource(data_dir=str(data)),
            "embedder": Embedder(),
            "ops_folders": OpsFolders(
                snapshot_dir=str(data / "snapshots"),
                state_dir=str(data / "state"),
                export_dir=str(data / "exports"),
            ),
        },
    )


def snapshot(data, day):
    """Every brain.db row of the day, the day's seal (less the moment it was sealed) and
    every exported file of the day."""
    stores = Stores(data)
    with stores.connect("brain", readonly=True) as brain:
        rows = {
            t: [
                tuple(r)
                for r in brain.execute(f"SELECT * FROM {t} WHERE day = $1 ORDER BY 2, 3, 4", (day,))
            ]
            for t in ("facts", "decisions", "edges")
        }
    with stores.connect("memory", readonly=True) as memory:
        seal = memory.execute(
            "SELECT day, episodes, last_id, digest, by_type, by_source, window_start, window_end"
            " FROM day_seals WHERE day = $1",
            (day,),
        ).fetchone()
    folder = data / "exports" / day
    exported = {
        str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    return rows, tuple(seal), exported


def distil(data, vault, at: datetime):
    staging = staging_dir(data)
    stage_vault(vault, staging, day=at.date().isoformat())
    with Stores(data).connect("recall") as recall:
        distill_staging(
            recall, str(staging), day=at.date().isoformat(), source="model:offline",
            distill=lambda t, p, x: offline_page(p, x), clock=lambda: at,
        )  # fmt: skip


def a_message_sent_in(data, window):
    with Stores(data).connect("outreach", readonly=True) as outreach:
        return outreach.execute(
            "SELECT id, contact_id, thread_id, subject, sent_at FROM messages"
            " WHERE sent_at >= $1 AND sent_at < $2 ORDER BY id LIMIT 1",
            (window.start, window.end),
        ).fetchone()


def late_rows(data, message, reply_at: str) -> None:
    """What later captures record: a reply dated a week ago stored now (inbound row, the
    message's replied_at and its episode), an engagement signal stamped two days ago."""
    stores = Stores(data)
    cid = message["contact_id"]
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "INSERT INTO inbound (provider_id, message_id, contact_id, thread_id, kind,"
            " received_at, from_address, subject, body, created_at) VALUES"
            " ('maildir:late', $1, $2, $3, 'reply', $4, 'late@x.example', 'Re', 'Yes please', $5)",
            (message["id"], cid, message["thread_id"], reply_at, to_iso(NOW)),
        )
        outreach.execute(
            "UPDATE messages SET replied_at = $1 WHERE id = $2", (reply_at, message["id"])
        )
    with stores.connect("memory") as memory:
        append_episodes(
            memory,
            [
                {
                    "contact_id": cid, "episode_type": "response", "source": "maildir",
                    "content": "A late reply: yes please.", "created_at": reply_at,
                    "natural_key": "inbox:maildir:late",
                },
                {
                    "contact_id": cid, "episode_type": "engagement", "source": "site",
                    "content": "Viewed the pricing page, two days ago.",
                    "created_at": to_iso(NOW - timedelta(days=2)), "natural_key": "site:late",
                },
            ],
            now=NOW,
        )  # fmt: skip


def test_a_night_replayed_after_late_captures_is_byte_identical_and_late_rows_are_tonights(
    data, vault, clock
):
    window = days.window(SETUP, "brain_facts", DAY)
    distil(data, vault, parse_utc(window.start) + timedelta(hours=1))  # pages of the night
    message = a_message_sent_in(data, window)
    assert message is not None
    clock(parse_utc(window.end) + timedelta(minutes=30))  # that night, after its ticks
    with dg.instance_for_test() as instance:
        assert materialise(instance, data, DAY).success
        first = snapshot(data, DAY)
        assert first[0]["facts"] and first[1][1] > 0 and first[2]

        # A week later, later captures: a reply dated in the night, a signal stamped two days
        # ago, and a page distilled again (its note changed).
        reply_at = to_iso(parse_utc(message["sent_at"]) + timedelta(minutes=20))
        assert reply_at[:10] == DAY and reply_at < window.end
        clock(NOW)
        late_rows(data, message, reply_at)
        note = next(p for p in sorted((vault / "people").glob("*.md")))
        note.write_text(note.read_text() + "\n- Moved to the Leeds office.\n")
        distil(data, vault, NOW)
        clock(NOW + timedelta(days=1))
        assert materialise(instance, data, DAY).success
        again = snapshot(data, DAY)
        assert again[0] == first[0], "every brain.db row of the day"
        assert again[1] == first[1], "the day's seal"
        assert again[2] == first[2], "every exported file, byte for byte"

        # The late rows belong to the night they were recorded in.
        assert materialise(instance, data, LATER).success
        rows, seal, exported = snapshot(data, LATER)
    facts = {f[1]: f for f in rows["facts"]}
    assert any(k.startswith("reply:") and "A late reply" in f[4] for k, f in facts.items())
    assert f"engagement:{message['contact_id']}" in facts
    assert any(f[2] == "page_distilled" for f in facts.values()), "the page distilled again"
    assert seal[1] >= 2
    [page] = [v.decode() for k, v in exported.items() if k.endswith(f"-{message['contact_id']}.md")]
    assert f"{reply_at} (recorded {LATER}) response" in page  # its own time, and when recorded
    assert f"replied {reply_at}" in page
