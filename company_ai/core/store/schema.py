"""Versioned schemas of the domain stores.

`MIGRATIONS[domain]` is the ordered list of schema versions; version N is the list of
statements at index N-1, and `PRAGMA user_version` records how many have been applied.
Never edit a released version: append a new one. A domain whose list is empty has no
tables yet; its file still exists, in WAL mode, so that its writer can migrate it later.
The same stores' versions in PostgreSQL are in `pg_schema`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args

from company_ai.core.intake import REFUSALS_TABLE


class Store(StrEnum):
    """The domain stores, one SQLite file each under the data directory (`<name>.db`).

    Store names, not Dagster group names: `constants.OUTREACH` names a group of assets,
    `Store.OUTREACH` the file they write.
    """

    CRM = "crm"
    MEMORY = "memory"
    OUTREACH = "outreach"
    BRAIN = "brain"
    RECALL = "recall"
    OPS = "ops"


DOMAINS: tuple[Store, ...] = tuple(Store)

# The morning outreach's daily caps: the store enforces them (`OUTREACH_V2`'s triggers) and
# the code that fills it reads them (core/outreach/research.py, core/outreach/drafting.py).
# Changing one takes a new migration that replaces its trigger, and `OUTREACH_V2` keeps the
# value it shipped with: a released version is never edited (tests/core/store/test_db.py holds
# their digests).
RESEARCH_CAP = 20
DRAFT_CAP = 10

EpisodeType = Literal[
    "research", "company", "outreach", "response", "engagement", "note", "scoring"
]
EPISODE_TYPES: tuple[str, ...] = get_args(EpisodeType)

# An OR chain, not `IN (...)`: in a CHECK, SQLite rebuilds an IN list for every row, which
# halved append throughput (see BENCHMARKS.md).
EPISODE_TYPE_CHECK = " OR ".join(f"episode_type = '{t}'" for t in EPISODE_TYPES)

CRM_V1 = [
    """
    CREATE TABLE contacts (
        id          INTEGER PRIMARY KEY,
        email       TEXT UNIQUE,               -- lower-cased; NULL when we have no address
        name        TEXT NOT NULL,
        company     TEXT,
        title       TEXT,
        city        TEXT,
        warmth      INTEGER NOT NULL DEFAULT 0 CHECK (warmth BETWEEN 0 AND 100),
        source      TEXT NOT NULL,             -- where the row came from: sample, google_people…
        external_id TEXT UNIQUE,               -- the source's own id, e.g. people/c123
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_contacts_warmth ON contacts(warmth)",
]

# Contact identity (core/crm/people.py): every address a contact has, one of them primary;
# who keeps the row in step (`synced_from`: google_people, sample), the full pass it was
# last seen in (`seen_in`) and a digest of the record it last gave (`synced_digest`: an
# unchanged upstream record leaves the row, and any local correction, alone).
# `deleted_at` marks a contact deleted upstream: its row and history are kept.
# `contacts.email` stays the primary address (everything reads it). A writer that inserts
# contacts also inserts their primary addresses (core/crm/people.py, sample_world/crm.py): a trigger
# per inserted row halved the sync's speed (BENCHMARKS.md). When a contact's email changes,
# the trigger below moves the primary mark, and refuses an address another contact has.
CRM_V2 = [
    "ALTER TABLE contacts ADD COLUMN deleted_at TEXT",
    "ALTER TABLE contacts ADD COLUMN synced_from TEXT",
    "ALTER TABLE contacts ADD COLUMN seen_in TEXT",
    "ALTER TABLE contacts ADD COLUMN synced_digest TEXT",
    # No index on (synced_from, seen_in): the sweep after a full pass reads every synced row
    # anyway, and the index made each unchanged page's upsert ~40 % slower (BENCHMARKS.md).
    """
    CREATE TABLE contact_emails (
        email       TEXT PRIMARY KEY,          -- lower-cased; one contact per address
        -- a contact removed by hand (never by a sync) takes its addresses with it
        contact_id  INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        is_primary  INTEGER NOT NULL DEFAULT 0 CHECK (is_primary IN (0, 1)),
        added_at    TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_contact_emails_contact ON contact_emails(contact_id)",
    """CREATE UNIQUE INDEX idx_contact_emails_one_primary ON contact_emails(contact_id)
    WHERE is_primary = 1""",
    """
    INSERT INTO contact_emails (email, contact_id, is_primary, added_at)
    SELECT email, id, 1, updated_at FROM contacts WHERE email IS NOT NULL
    """,
    """
    CREATE TRIGGER contacts_primary_email_update AFTER UPDATE OF email ON contacts
    WHEN NEW.email IS NOT OLD.email
    BEGIN
        SELECT RAISE(ABORT, 'that address already belongs to another contact')
        WHERE EXISTS (
            SELECT 1 FROM contact_emails WHERE email = NEW.email AND contact_id != NEW.id
        );
        UPDATE contact_emails SET is_primary = 0 WHERE contact_id = NEW.id AND is_primary = 1;
        INSERT INTO contact_emails (email, contact_id, is_primary, added_at)
        SELECT NEW.email, NEW.id, 1, NEW.updated_at WHERE NEW.email IS NOT NULL
        ON CONFLICT (email) DO UPDATE SET is_primary = 1;
    END
    """,
]

MEMORY_V1 = [
    # The shape of contact_episodes is fixed by the design; natural_key and day are
    # the only additions. The natural key makes every write idempotent; day (the local
    # date the episode was recorded) is what contact_episodes seals one partition by.
    f"""
    CREATE TABLE contact_episodes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        contact_id INTEGER NOT NULL,
        episode_type TEXT NOT NULL CHECK ({EPISODE_TYPE_CHECK}),
        content TEXT NOT NULL,
        source TEXT,
        confidence REAL DEFAULT 1.0,
        created_at TEXT NOT NULL,
        natural_key TEXT NOT NULL,
        day TEXT NOT NULL
    )
    """,
    # The contact_id index is also the natural key's uniqueness: one index, not two,
    # because every index costs append throughput.
    "CREATE UNIQUE INDEX idx_episodes_contact_id ON contact_episodes(contact_id, natural_key)",
    "CREATE INDEX idx_episodes_episode_type ON contact_episodes(episode_type)",
    "CREATE INDEX idx_episodes_day ON contact_episodes(day)",
    # Append-only is a property of the database, not a convention of the code.
    """
    CREATE TRIGGER contact_episodes_append_only_update BEFORE UPDATE ON contact_episodes
    BEGIN SELECT RAISE(ABORT, 'contact_episodes is append-only: episodes are never updated'); END
    """,
    """
    CREATE TRIGGER contact_episodes_append_only_delete BEFORE DELETE ON contact_episodes
    BEGIN SELECT RAISE(ABORT, 'contact_episodes is append-only: episodes are never deleted'); END
    """,
    # One row per sealed day: derived, so re-sealing replaces it.
    """
    CREATE TABLE day_seals (
        day         TEXT PRIMARY KEY,
        episodes    INTEGER NOT NULL,
        last_id     INTEGER,
        digest      TEXT NOT NULL,             -- sha256 over (id, natural_key) in id order
        by_type     TEXT NOT NULL,             -- JSON {episode_type: count}
        by_source   TEXT NOT NULL,             -- JSON {source: count}
        sealed_at   TEXT NOT NULL
    )
    """,
]

OUTREACH_V1 = [
    """
    CREATE TABLE messages (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        contact_id    INTEGER NOT NULL,
        thread_id     TEXT NOT NULL,
        subject       TEXT NOT NULL,
        body          TEXT NOT NULL,
        angle         TEXT,
        sent_at       TEXT NOT NULL,
        opened_at     TEXT,
        replied_at    TEXT,
        bounce_status TEXT NOT NULL DEFAULT 'none'
                      CHECK (bounce_status IN ('none', 'soft', 'hard')),
        bump_count    INTEGER NOT NULL DEFAULT 0 CHECK (bump_count BETWEEN 0 AND 2)
    )
    """,
    "CREATE INDEX idx_messages_contact_id ON messages(contact_id, sent_at)",
    "CREATE INDEX idx_messages_thread_id ON messages(thread_id)",
]

OPS_V1 = [
    # The notifier's queue: every alert is recorded before it is sent, so one that could
    # not be delivered is retried on the next send; the key makes an alert at-most-once.
    """
    CREATE TABLE alerts (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        key         TEXT NOT NULL UNIQUE,      -- e.g. run-failure:<run id>
        text        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        sent_at     TEXT,                      -- NULL while pending
        attempts    INTEGER NOT NULL DEFAULT 0,
        last_error  TEXT
    )
    """,
    "CREATE INDEX idx_alerts_pending ON alerts(sent_at, id)",
]

# The morning outreach run: which contacts each day researched (the per-day cap lives in
# this table), the drafts with the exact material each was built from and its gate
# verdict, and the link from a sent message back to its draft (the send ledger).
OUTREACH_V2 = [
    """
    CREATE TABLE research_picks (
        day         TEXT NOT NULL,             -- the partition that picked the contact
        contact_id  INTEGER NOT NULL,
        rank        INTEGER NOT NULL,          -- 1 = the best candidate of the day
        status      TEXT NOT NULL DEFAULT 'picked'
                    CHECK (status IN ('picked', 'done', 'skipped')),
        reason      TEXT,                      -- why a pick was skipped
        findings    TEXT,                      -- JSON: the facts found, with sources
        writeback   TEXT,                      -- JSON: CRM corrections applied / rejected
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (day, contact_id)
    )
    """,
    "CREATE INDEX idx_research_picks_contact ON research_picks(contact_id, day)",
    """
    CREATE TABLE drafts (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        day            TEXT NOT NULL,
        contact_id     INTEGER NOT NULL,
        thread_id      TEXT NOT NULL,
        bump           INTEGER NOT NULL CHECK (bump BETWEEN 0 AND 2),
        subject        TEXT NOT NULL,
        body           TEXT NOT NULL,
        angle          TEXT NOT NULL,
        dossier        TEXT NOT NULL,          -- build_dossier() as the model saw it
        sources        TEXT NOT NULL,          -- JSON list: the exact material given
        model          TEXT NOT NULL,          -- LLMResource.source
        verdict        TEXT NOT NULL CHECK (verdict IN ('pass', 'fail')),
        unsupported    TEXT NOT NULL DEFAULT '[]',  -- JSON: the gate's claims
        status         TEXT NOT NULL
                       CHECK (status IN ('ready', 'quarantined', 'skipped', 'sending', 'sent')),
        reason         TEXT,                   -- why a draft was skipped
        rfc_message_id TEXT UNIQUE,            -- fixed before sending: the idempotency key
        message_id     INTEGER UNIQUE,         -- messages.id once sent
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        UNIQUE (day, contact_id)
    )
    """,
    "CREATE INDEX idx_drafts_day ON drafts(day, status)",
    # The daily caps are properties of the store, not only of the code that fills it.
    f"""
    CREATE TRIGGER research_picks_daily_cap BEFORE INSERT ON research_picks
    WHEN (SELECT count(*) FROM research_picks WHERE day = NEW.day) >= {RESEARCH_CAP}
    BEGIN SELECT RAISE(ABORT, 'research cap: at most {RESEARCH_CAP} contacts a day'); END
    """,
    f"""
    CREATE TRIGGER drafts_daily_cap BEFORE INSERT ON drafts
    WHEN (SELECT count(*) FROM drafts WHERE day = NEW.day) >= {DRAFT_CAP}
    BEGIN SELECT RAISE(ABORT, 'draft cap: at most {DRAFT_CAP} drafts a day'); END
    """,
    "ALTER TABLE messages ADD COLUMN draft_id INTEGER",
    "CREATE UNIQUE INDEX idx_messages_draft_id ON messages(draft_id)",
]

# A follow-up of a thread goes out once, whichever day's draft carries it: the store refuses a
# second message with the same thread and bump.
OUTREACH_V3 = [
    "CREATE UNIQUE INDEX idx_messages_thread_bump ON messages(thread_id, bump_count)",
    "CREATE INDEX idx_messages_sent_at ON messages(sent_at)",
]

# A draft's gate verdict is stored with the fingerprint of what it judged (core/gate.py,
# `GateVerdict`): the blocking check and the send trust a verdict only while it matches.
# Drafts stored before this version have none, so they are judged again when read.
OUTREACH_V4 = [
    "ALTER TABLE drafts ADD COLUMN judged TEXT",
]

# Send-state (issue 9, core/inbox/replies.py and core/outreach/send_rules.py): what the world
# answered.
# A message's RFC 5322 Message-ID (what a reply's In-Reply-To/References name); the replies,
# out-of-office notes and bounces matched to a thread (mail matching no thread is never
# stored); and the holds they put on further sends: `replied` and `unsubscribed` for good,
# `deferred` and `out_of_office` until a date, `bounced` for good on one address.
OUTREACH_V5 = [
    "ALTER TABLE messages ADD COLUMN rfc_message_id TEXT",
    "CREATE UNIQUE INDEX idx_messages_rfc_message_id ON messages(rfc_message_id)",
    """
    CREATE TABLE inbound (
        provider_id   TEXT PRIMARY KEY,         -- gmail:<id> or maildir:<key>: idempotency
        message_id    INTEGER NOT NULL,         -- messages.id of the thread's message answered
        contact_id    INTEGER NOT NULL,
        thread_id     TEXT NOT NULL,
        kind          TEXT NOT NULL CHECK (kind IN
                      ('reply', 'not_now', 'unsubscribe', 'out_of_office', 'bounce')),
        received_at   TEXT NOT NULL,
        from_address  TEXT NOT NULL,
        subject       TEXT NOT NULL,
        body          TEXT NOT NULL,            -- quoted history and signature stripped
        warmth_before INTEGER,
        warmth_after  INTEGER,                  -- NULL: the rule leaves warmth alone
        warmth_applied INTEGER NOT NULL DEFAULT 0 CHECK (warmth_applied IN (0, 1)),
        created_at    TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_inbound_contact ON inbound(contact_id, received_at)",
    """
    CREATE TABLE send_holds (
        contact_id  INTEGER NOT NULL,
        kind        TEXT NOT NULL CHECK (kind IN
                    ('replied', 'unsubscribed', 'deferred', 'out_of_office', 'bounced')),
        since       TEXT NOT NULL,              -- when the hold began (the mail's time)
        until       TEXT,                       -- NULL: for good
        address     TEXT,                       -- bounced: the address that bounced
        reason      TEXT NOT NULL,
        evidence    TEXT NOT NULL,              -- inbound.provider_id or sample:<key>
        PRIMARY KEY (contact_id, kind, since)
    )
    """,
    "CREATE INDEX idx_send_holds_address ON send_holds(address)",
]

# A draft that passed the gate is sent in its contact's working hours (core/outreach/send_rules.py):
# outside them it stays `ready` with the moment they begin (`due_at`, UTC), and the held-send
# sensor's job sends it then (core/outreach/day.py, `send_due`).
OUTREACH_V6 = [
    "ALTER TABLE drafts ADD COLUMN due_at TEXT",
    "CREATE INDEX idx_drafts_due ON drafts(due_at) WHERE due_at IS NOT NULL",
]

RECALL_V1 = [
    # The distiller's output, one row per title (idempotent by title). A page that failed
    # the fabrication check is kept here unpublished, with the claims it could not support.
    """
    CREATE TABLE pages (
        title        TEXT PRIMARY KEY,
        note_path    TEXT NOT NULL,            -- the staged note it was derived from
        note_hash    TEXT NOT NULL,            -- sha256 of that note when distilled
        distilled    TEXT NOT NULL,            -- the day (partition) it was distilled
        generated_by TEXT NOT NULL,            -- model:<name>
        page         TEXT NOT NULL,            -- JSON: type, tags, recall, observations, relations
        markdown     TEXT NOT NULL,            -- Basic-Memory-compatible page text
        published    INTEGER NOT NULL CHECK (published IN (0, 1)),
        problems     TEXT NOT NULL DEFAULT '[]' -- JSON: unsupported claims when unpublished
    )
    """,
    # What recall reads: rebuilt in full from the published pages each night, so a
    # deleted note's page disappears in the same transaction.
    """
    CREATE TABLE entities (
        id           INTEGER PRIMARY KEY,
        title        TEXT NOT NULL UNIQUE,
        type         TEXT NOT NULL
                     CHECK (type IN ('person', 'anchor', 'thread', 'context', 'note')),
        tags         TEXT NOT NULL,            -- JSON list
        derived_from TEXT NOT NULL,            -- vault path of the note
        note_touched TEXT NOT NULL,            -- YYYY-MM-DD the note was last touched
        distilled    TEXT NOT NULL,
        recall       TEXT NOT NULL,
        markdown     TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE observations (
        entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        position  INTEGER NOT NULL,
        category  TEXT NOT NULL CHECK (category IN
                  ('context', 'decision', 'pattern', 'constraint', 'status', 'goal')),
        text      TEXT NOT NULL,
        PRIMARY KEY (entity_id, position)
    )
    """,
    """
    CREATE TABLE relations (
        entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        relation  TEXT NOT NULL CHECK (relation IN
                  ('part_of', 'depends_on', 'relates_to', 'maintains')),
        target    TEXT NOT NULL,               -- a title; may not exist (yet)
        PRIMARY KEY (entity_id, relation, target)
    )
    """,
    "CREATE INDEX idx_relations_target ON relations(target)",
    "CREATE INDEX idx_entities_note_touched ON entities(note_touched)",
    # The search index (core/recall/retrieval.py), shared by recall and eval-retrieval: documents,
    # their full-text index, and dense vectors cached by the hash of the embedded text.
    """
    CREATE TABLE search_docs (
        id        INTEGER PRIMARY KEY,
        key       TEXT NOT NULL UNIQUE,        -- the entity title (or a corpus _id)
        title     TEXT NOT NULL,
        body      TEXT NOT NULL,
        text_hash TEXT NOT NULL                -- sha256 of the embedded text
    )
    """,
    """
    CREATE VIRTUAL TABLE search_fts USING fts5(
        title, body, content='search_docs', content_rowid='id', tokenize='porter unicode61'
    )
    """,
    """
    CREATE TABLE search_vectors (
        text_hash TEXT PRIMARY KEY,
        vector    BLOB NOT NULL                -- float32, L2-normalised
    )
    """,
    # One model per index: its name and dimension, checked before any vector is mixed in.
    "CREATE TABLE search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
]

# The night's synthesis (core/brain/facts.py): one day's facts, decisions and graph edges, each
# with its importance (1-5) and the ids of the rows it came from (JSON list). Every row
# belongs to one day; re-synthesising a day deletes that day's rows and inserts the new
# ones in one transaction, so `key` need only be unique within its day.
BRAIN_V1 = [
    """
    CREATE TABLE facts (
        day        TEXT NOT NULL,
        key        TEXT NOT NULL,              -- stable within the day, e.g. run:<run id>
        kind       TEXT NOT NULL,              -- run_failed, sent, reply, ... (core/brain.py)
        about      TEXT,                       -- the node it is about: contact:7, job:x, ...
        text       TEXT NOT NULL,
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,              -- JSON list: outreach.drafts:12, dagster.run:…
        PRIMARY KEY (day, key)
    )
    """,
    """
    CREATE TABLE decisions (
        day        TEXT NOT NULL,
        key        TEXT NOT NULL,
        kind       TEXT NOT NULL,
        about      TEXT,
        what       TEXT NOT NULL,              -- what the system chose
        rule       TEXT NOT NULL,              -- the rule that chose it, in words
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,
        PRIMARY KEY (day, key)
    )
    """,
    """
    CREATE TABLE edges (
        day        TEXT NOT NULL,
        src        TEXT NOT NULL,              -- a node: contact:<id>, company:<name>,
        relation   TEXT NOT NULL,              --   thread:<id>, job:<name>, page:<title>,
        dst        TEXT NOT NULL,              --   partition:<key>
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,
        PRIMARY KEY (day, src, relation, dst)
    )
    """,
    # The primary keys lead with day (the replace-a-day delete); the brief reads a day's
    # most important rows; a graph walk starts from either end of an edge.
    "CREATE INDEX idx_facts_day_importance ON facts(day, importance)",
    "CREATE INDEX idx_decisions_day_importance ON decisions(day, importance)",
    "CREATE INDEX idx_edges_src ON edges(src)",
    "CREATE INDEX idx_edges_dst ON edges(dst)",
]


# Work proportional to change (issue 15): a night reads and rewrites only what changed.
RECALL_V2 = [
    # The distiller that wrote the page (`<source>|<DISTILLER_VERSION>`: a new one redoes
    # every page once), the note's own title (so an unchanged note is never read again)
    # and the sha256 of the page's markdown, which the entity made from it carries too.
    "ALTER TABLE pages ADD COLUMN version TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN note_title TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN digest TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE entities ADD COLUMN digest TEXT NOT NULL DEFAULT ''",
    # The document's entity digest when it was built: the index rewrites only documents
    # whose entity's digest moved.
    "ALTER TABLE search_docs ADD COLUMN source TEXT NOT NULL DEFAULT ''",
    # Covering indexes: an unchanged night compares these few columns and never reads a
    # page's, entity's or document's text.
    "CREATE INDEX idx_pages_by_note ON pages(note_path, note_hash, version, note_title, title)",
    "CREATE INDEX idx_pages_published ON pages(title, published, digest)",
    "CREATE INDEX idx_entities_sync ON entities(title, digest, note_touched)",
    "CREATE INDEX idx_search_docs_source ON search_docs(key, source)",
    # Whether a replaced document's vector is still used by another (then it is kept).
    "CREATE INDEX idx_search_docs_text_hash ON search_docs(text_hash)",
]


RECALL_V3 = [
    # What each step of the vault night last brought itself fully in line with (the staging
    # manifest's digest and the distiller; for the index, that and the embedding model):
    # a night whose inputs match does no comparison at all. A partial run deletes its mark.
    "CREATE TABLE sync_marks (step TEXT PRIMARY KEY, mark TEXT NOT NULL)",
    # Whether the page has status or goal lines (what ages into "stale"): counting stale
    # pages is then a range of one partial index, not a look into every page's lines.
    "ALTER TABLE entities ADD COLUMN reviewable INTEGER NOT NULL DEFAULT 0",
    "UPDATE entities SET reviewable = EXISTS (SELECT 1 FROM observations o"
    " WHERE o.entity_id = entities.id AND o.category IN ('status', 'goal'))",
    "CREATE INDEX idx_entities_reviewable ON entities(note_touched) WHERE reviewable = 1",
]


# A forget (core/ops/forgetting.py) is the one sanctioned deletion of episodes: each day it touched
# gets a row here (how many episodes went and the day's new seal digest; no personal data),
# so a changed seal is explained by a redaction or is a tamper.
MEMORY_V2 = [
    """
    CREATE TABLE redactions (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        day         TEXT NOT NULL,
        redacted_at TEXT NOT NULL,
        episodes    INTEGER NOT NULL,
        digest      TEXT                       -- the re-sealed day's digest; NULL: not sealed
    )
    """,
]

# The intake discipline (core/intake.py): an item a capture refused (a mail, a People page,
# a research page) is recorded with its reason in the store of the capture that read it,
# so the next run knows it and does not meet it again.
CRM_V3 = [REFUSALS_TABLE]

# The contact sync's passes, named by this store (core/crm/people.py): a cursor file from
# another pass (a restored backup, a copied file) is known as such, and only a complete
# pass of this store's own generation marks contacts deleted.
CRM_V4 = [
    """
    CREATE TABLE sync_state (
        source        TEXT PRIMARY KEY,
        number        INTEGER NOT NULL,  -- how many full passes of the source this store began
        generation    TEXT NOT NULL,     -- the current one: its number and a random id
        serial        INTEGER NOT NULL,  -- pages committed in it (with their upserts)
        started_at    TEXT NOT NULL,
        complete_at   TEXT,              -- when its full pass went through its last page
        refused_pages INTEGER NOT NULL DEFAULT 0
    )
    """
]
OUTREACH_V7 = [REFUSALS_TABLE]

# Inbox triage by what this system recorded (core/inbox/replies.py): a mail is stored once by its
# identity (its Message-ID, or a hash of its bytes without one; rows from before: NULL), and
# a Maildir key or Gmail id seen but not stored (no thread, a forged From, a duplicate, a
# read receipt) is remembered by its key alone, no sender, so the next run does not read it.
OUTREACH_V8 = [
    "ALTER TABLE inbound ADD COLUMN identity TEXT",
    "CREATE UNIQUE INDEX idx_inbound_identity ON inbound(identity)",
    """
    CREATE TABLE inbox_seen (
        provider_id TEXT PRIMARY KEY,           -- gmail:<id> or maildir:<key>; nothing else
        outcome     TEXT NOT NULL,              -- why it was not stored: 'no thread', ...
        seen_at     TEXT NOT NULL
    )
    """,
]

# The daily CRM audit (core/ops/audit.py): one row per capture, the CRM as it stood at
# `recorded_at` (counts only: no person is named, so `company-ai forget` has nothing here).
# A re-run of a day adds its own moment; readers take the latest before theirs.
OPS_V2 = [
    """
    CREATE TABLE crm_audits (
        day             TEXT NOT NULL,          -- the partition that took it
        recorded_at     TEXT NOT NULL,          -- when: the CRM as it stood then
        contacts        INTEGER NOT NULL,       -- not deleted upstream
        cold            INTEGER NOT NULL,       -- warmth bands: core/ops/audit.py
        warm            INTEGER NOT NULL,
        hot             INTEGER NOT NULL,
        actionable      INTEGER NOT NULL,
        with_email      INTEGER NOT NULL,
        engagement_rows INTEGER NOT NULL,
        deleted         INTEGER NOT NULL,
        PRIMARY KEY (day, recorded_at)
    )
    """,
    "CREATE INDEX idx_crm_audits_recorded_at ON crm_audits(recorded_at)",
]


# Recorded time (issue 26): when this system recorded each episode, beside the time it
# describes (`created_at`: a reply's own date, a signal's stamp). Replays select by it, so a
# late arrival belongs to the night it arrived and an old night never changes. Rows from
# before this version were recorded as they happened (the writers dated them so): their
# `created_at` is their recorded time. The append-only refusal is lifted for the backfill
# only. A seal now covers a window of recorded time (`contact_episodes` partition's window),
# stored with the seal so a forget re-seals exactly the same rows.
MEMORY_V3 = [
    "ALTER TABLE contact_episodes ADD COLUMN recorded_at TEXT NOT NULL DEFAULT ''",
    "DROP TRIGGER contact_episodes_append_only_update",
    "UPDATE contact_episodes SET recorded_at = created_at",
    MEMORY_V1[4],  # the update refusal, as released
    "CREATE INDEX idx_episodes_recorded_at ON contact_episodes(recorded_at)",
    "ALTER TABLE day_seals ADD COLUMN window_start TEXT",  # NULL: a seal of `day` (before V3)
    "ALTER TABLE day_seals ADD COLUMN window_end TEXT",
]

# Recall's pages are replaced in place when a note is distilled again (the title is the
# key), so "the pages distilled on D" read from `pages` changes later. `page_log` is the
# append-only record of every distillation (`distilled`: published, `withheld`: failed the
# fabrication check) and removal, written in the same transaction as the page, with what a
# replay needs (the page's JSON and problems as they were). Pages from before this version
# get one row, at the UTC midnight of the day they were distilled (their only time known).
RECALL_V4 = [
    """
    CREATE TABLE page_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        title       TEXT NOT NULL,
        event       TEXT NOT NULL CHECK (event IN ('distilled', 'withheld', 'removed')),
        note_path   TEXT NOT NULL,
        digest      TEXT NOT NULL DEFAULT '',    -- pages.digest; '' for a removal
        page        TEXT NOT NULL DEFAULT '{}',  -- pages.page (JSON) as distilled
        problems    TEXT NOT NULL DEFAULT '[]',  -- pages.problems as distilled
        recorded_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_page_log_recorded_at ON page_log(recorded_at)",
    """
    INSERT INTO page_log (title, event, note_path, digest, page, problems, recorded_at)
    SELECT title, CASE published WHEN 1 THEN 'distilled' ELSE 'withheld' END, note_path,
           digest, page, problems, distilled || 'T00:00:00Z'
    FROM pages ORDER BY title
    """,
    """
    CREATE TRIGGER page_log_append_only_update BEFORE UPDATE ON page_log
    BEGIN SELECT RAISE(ABORT, 'page_log is append-only: entries are never updated'); END
    """,
]


# Version 5 is empty: the PostgreSQL store's second version keeps what bm25 needs
# beside the tsvector (`pg_schema.RECALL_PG_V2`); FTS5 keeps it itself.
RECALL_V5: list[str] = []

# When this system learnt that a message was opened (an `email_open` signal): `opened_at` is
# the sender's stamp, which a retried webhook can bring in days late, so a replay (the growth
# analysis) counts an open by this. NULL for opens from before: they were recorded as stamped.
OUTREACH_V9 = ["ALTER TABLE messages ADD COLUMN opened_recorded_at TEXT"]


MIGRATIONS: dict[str, list[list[str]]] = {
    Store.CRM: [CRM_V1, CRM_V2, CRM_V3, CRM_V4],
    Store.MEMORY: [MEMORY_V1, MEMORY_V2, MEMORY_V3],
    Store.OUTREACH: [
        OUTREACH_V1,
        OUTREACH_V2,
        OUTREACH_V3,
        OUTREACH_V4,
        OUTREACH_V5,
        OUTREACH_V6,
        OUTREACH_V7,
        OUTREACH_V8,
        OUTREACH_V9,
    ],
    Store.BRAIN: [BRAIN_V1],
    Store.RECALL: [RECALL_V1, RECALL_V2, RECALL_V3, RECALL_V4, RECALL_V5],
    Store.OPS: [OPS_V1, OPS_V2],
}
