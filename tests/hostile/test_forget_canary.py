"""The issue's acceptance test for `company-ai forget`: a canary person planted through every
channel, a day of the graph run over them, then forgotten; no file under the data directory
(outside the snapshots taken before) or DAGSTER_HOME may hold their name or an address."""

import json
import mailbox
import pickle
import shutil
from datetime import UTC, datetime, time, timedelta
from email.message import EmailMessage

import dagster as dg

from company_ai.cli import main
from company_ai.core.memory import append_episodes
from company_ai.core.ops import take_snapshot
from company_ai.core.store import Stores
from company_ai.core.times import to_iso, utc_now
from company_ai.core.timetable import current_partitions
from company_ai.core.vectors import COLLECTIONS, Vector, open_existing, vectors_dir
from company_ai.core.vectors.store import SYNC_THRESHOLD
from company_ai.days import entry_of
from company_ai.definitions import resources
from company_ai.sample_world.crm import store_messages
from company_ai.sample_world.demo_mail import drop_demo_signals
from company_ai.settings import Settings
from tests.conftest import SAMPLE_VAULT
from tests.hostile.canary import find_canary
from tests.setup import named

NAME = "Żorblat Quindlewick"  # an upper-case letter SQLite's lower() does not fold
EMAIL = "zorblat.quindlewick@canarymail.example"
OTHER = "zq-private@quindle-home.example"  # a second address: forgetting one takes both
# The graph after the canary is planted: the capture jobs (their replays too: the vault
# night's pages follow its staging) for the day of their last tick, the other replays for
# yesterday (the last complete day, when the canary's episodes happened).
ASSETS = (
    "inbox_replies", "engagement_signals", "contact_episodes", "episode_vectors",
    "knowledge_vectors", "brain_facts", "memory_export", "vault_staging", "recall_pages",
    "recall_index", "state_export", "crm_contacts",
)  # fmt: skip


def plant(root, vault, settings: Settings) -> int:
    """The canary through every channel the system reads; returns their contact id."""
    data = root / "data"
    csv = root / "canary.csv"
    csv.write_text(f"name,email,other_emails,company\n{NAME},{EMAIL},{OTHER},Canary Works\n")
    assert main(["--data-dir", str(data), "import", str(csv)]) == 0
    stores = Stores(data)
    with stores.connect("crm", readonly=True) as crm:
        [(cid,)] = crm.execute("SELECT id FROM contacts WHERE email = $1", (EMAIL,)).fetchall()
    sent = yesterday(10)
    rfc = "<canary-1@company-ai.example>"
    store_messages(stores, [[
        990001, cid, "t-canary", f"{NAME.split()[0]}, a thought", f"Hi {NAME}, ...", "intro",
        to_iso(sent), None, None, "none", 0, rfc,
    ]])  # fmt: skip
    with stores.connect("memory") as memory:
        append_episodes(memory, [{
            "contact_id": cid, "episode_type": "outreach", "source": "outreach",
            "content": f"Sent to {NAME} <{EMAIL}>", "created_at": to_iso(sent),
            "natural_key": "outreach:message:990001", "confidence": 1.0,
        }, {
            "contact_id": cid, "episode_type": "note", "source": "manual",
            "content": f"Met {NAME} at the expo.", "created_at": to_iso(yesterday(11)),
        }], now=to_iso(sent))  # fmt: skip
    reply = EmailMessage()
    reply["From"] = f"{NAME} <{EMAIL}>"
    reply["To"] = "Sam Rivers <sam@company-ai.example>"
    reply["Subject"] = "Re: a thought"
    reply["In-Reply-To"] = reply["References"] = rfc
    reply.set_content(f"Yes, let's talk. {NAME}\n{OTHER}")
    box = mailbox.Maildir(settings.inbox_dir / "maildir", create=True)
    delivered = mailbox.MaildirMessage(reply.as_bytes())
    delivered.set_date(yesterday(14).timestamp())
    box.add(delivered)
    # the Maildir is read by its keys: the new mail is not taken yet, whatever its time
    drop_demo_signals(settings.engagement_dir, EMAIL, yesterday(15))
    (vault / "people" / "zorblat.md").write_text(
        f"# {NAME}\n\n- [context] {NAME} ({EMAIL}) runs procurement at Canary Works.\n"
    )
    people = json.loads((data / "sample_people.json").read_text())
    people["connections"].append({
        "resourceName": "sample/canary", "names": [{"displayName": NAME}],
        "emailAddresses": [{"value": EMAIL}, {"value": OTHER}],
    })  # fmt: skip
    (data / "sample_people.json").write_text(json.dumps(people))
    return cid


def yesterday(hour: int) -> datetime:
    return datetime.combine(utc_now().date() - timedelta(days=1), time(hour), UTC)


def noon() -> datetime:
    """The graph runs at today's noon, not at the real time: which days its captures take
    as current then never depends on when the suite runs."""
    return datetime.combine(utc_now().date(), time(12), UTC)


def run_graph(root, settings: Settings) -> None:
    now, tz = noon(), settings.timezone
    replay = yesterday(0).date().isoformat()
    keys: dict[str, list] = {}
    for asset in ASSETS:
        slot = entry_of(asset).slot
        day = current_partitions(slot, now, tz)[0] if slot.capture else replay
        keys.setdefault(day, []).append(named(asset))
    instance = dg.DagsterInstance.from_config(str(root / "dagster_home"))
    for day, assets in keys.items():
        result = dg.materialize(
            assets, partition_key=day, resources=resources(settings), instance=instance
        )
        assert result.success


def their_vectors(data, cid: int) -> list[tuple[str, Vector]]:
    """The canary's vectors, with every collection's waiting changes first written to its
    index files (Chroma does so once a thousand gather): the deletion must reach them."""
    path = vectors_dir(data)
    with open_existing(path, write=True) as store:
        for name in COLLECTIONS:
            store._configure(name, sync_threshold=1)
    with open_existing(path, write=True) as store:
        found = [
            (name, v)
            for name in COLLECTIONS
            for v in store.vectors(name, list(store.metadata(name, {"contact_id": cid})))
        ]
        for name in COLLECTIONS:
            store._configure(name, sync_threshold=SYNC_THRESHOLD)
    return found


def indexed_ids(data) -> set[str]:
    """Every id an index file's id map holds, in any collection: Chroma keeps each
    collection's map as plain data in `<segment>/index_metadata.pickle`."""
    return {
        i
        for pickled in vectors_dir(data).glob("*/index_metadata.pickle")
        for i in pickle.loads(pickled.read_bytes()).get("id_to_label") or {}
    }


def scan(*roots) -> dict[str, list[str]]:
    return {c: find_canary(c, *roots) for c in (NAME, EMAIL, OTHER)}


def test_a_forgotten_canary_leaves_no_trace_and_the_next_snapshot_is_clean(demo, tmp_path, clock):
    clock(noon())
    root = tmp_path / "demo"
    shutil.copytree(demo[0], root)
    vault = shutil.copytree(SAMPLE_VAULT, tmp_path / "vault")
    data, home = root / "data", root / "dagster_home"
    env = {"COMPANY_AI_DATA_DIR": str(data), "COMPANY_AI_VAULT_DIR": str(vault)}
    settings = Settings.from_env(env)
    cid = plant(root, vault, settings)
    run_graph(root, settings)
    pages = f"exports/*/contacts/*-{cid}.md"
    assert list(data.glob(pages)), "the night exported the canary's timeline"
    before = scan(data, home)
    # The canary reached the stores, the episodes' vectors' store, the exports, the mail.
    assert any("crm.db" in p for p in before[EMAIL]) and before[OTHER]
    assert any("/exports/" in p for p in before[NAME]), before[NAME]
    assert any("recall.db" in p for p in before[NAME]), before[NAME]
    with Stores(data).connect("recall", readonly=True) as recall:
        distilled = "SELECT count(*) FROM pages WHERE note_path LIKE '%zorblat.md'"
        assert recall.execute(distilled).fetchone()[0] == 1, "the night made the note a page"
    theirs = their_vectors(data, cid)
    assert theirs and {v.id for _, v in theirs} <= indexed_ids(data)

    assert main(["--data-dir", str(data), "forget", OTHER]) == 0
    assert not {v.id for _, v in theirs} & indexed_ids(data)
    with open_existing(vectors_dir(data)) as store:
        for name, vector in theirs:
            assert vector.id not in [h[0] for h in store.query(name, vector.embedding, 3)]
    after = scan(data, home)
    leftover = {c: [p for p in paths if "/snapshots/" not in p] for c, paths in after.items()}
    assert leftover == {NAME: [], EMAIL: [], OTHER: []}
    assert list(data.glob(pages)) == []  # their own pages go whole, not redacted
    # Its old snapshot keeps it (a backup); the next snapshot does not.
    fresh = take_snapshot(
        Stores(data), tmp_path / "snaps", utc_now().date().isoformat(), keep=1, now=utc_now()
    )
    assert fresh.files and scan(tmp_path / "snaps") == {NAME: [], EMAIL: [], OTHER: []}
    # The vault note is the owner's: untouched, and the next staging holds it back.
    assert NAME in (vault / "people" / "zorblat.md").read_text()
    run_graph(root, settings)
    assert scan(data, home) == after
