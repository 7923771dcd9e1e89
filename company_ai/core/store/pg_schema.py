"""The domain stores' schema versions in PostgreSQL (`COMPANY_AI_DATABASE_URL`).

`PG_MIGRATIONS[domain]` lists a store's versions there, as `schema.MIGRATIONS` does for
its SQLite file; `core/store/pg.py` applies them. Each version holds the same tables,
checks and refusals as the SQLite versions it stands for, in Postgres' words; never edit
a released one: append a new one (and its SQLite counterpart, `PG_FIRST_COVERS`).
"""

from __future__ import annotations

from company_ai.core.intake import REFUSALS_TABLE
from company_ai.core.store.schema import CRM_V4, EPISODE_TYPE_CHECK, OPS_V2, Store

# The brain store in PostgreSQL (schema `brain`): BRAIN_V1 in Postgres' words.
BRAIN_PG_V1 = [
    """
    CREATE TABLE facts (
        day        TEXT NOT NULL,
        key        TEXT NOT NULL,
        kind       TEXT NOT NULL,
        about      TEXT,
        text       TEXT NOT NULL,
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,
        PRIMARY KEY (day, key)
    )
    """,
    """
    CREATE TABLE decisions (
        day        TEXT NOT NULL,
        key        TEXT NOT NULL,
        kind       TEXT NOT NULL,
        about      TEXT,
        what       TEXT NOT NULL,
        rule       TEXT NOT NULL,
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,
        PRIMARY KEY (day, key)
    )
    """,
    """
    CREATE TABLE edges (
        day        TEXT NOT NULL,
        src        TEXT NOT NULL,
        relation   TEXT NOT NULL,
        dst        TEXT NOT NULL,
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        sources    TEXT NOT NULL,
        PRIMARY KEY (day, src, relation, dst)
    )
    """,
    "CREATE INDEX idx_facts_day_importance ON facts(day, importance)",
    "CREATE INDEX idx_decisions_day_importance ON decisions(day, importance)",
    "CREATE INDEX idx_edges_src ON edges(src)",
    "CREATE INDEX idx_edges_dst ON edges(dst)",
]


# The memory store in PostgreSQL (`COMPANY_AI_DATABASE_URL`, schema `memory`): the same
# tables, columns, constraints and refusals as MEMORY_V1, in Postgres' words. Version N
# here is version N of the SQLite store (a test holds the two lists to the same length).
MEMORY_PG_V1 = [
    f"""
    CREATE TABLE contact_episodes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        contact_id BIGINT NOT NULL,
        episode_type TEXT NOT NULL CHECK ({EPISODE_TYPE_CHECK}),
        content TEXT NOT NULL,
        source TEXT,
        confidence DOUBLE PRECISION DEFAULT 1.0,
        created_at TEXT NOT NULL,
        natural_key TEXT NOT NULL,
        day TEXT NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX idx_episodes_contact_id ON contact_episodes(contact_id, natural_key)",
    "CREATE INDEX idx_episodes_episode_type ON contact_episodes(episode_type)",
    "CREATE INDEX idx_episodes_day ON contact_episodes(day)",
    """
    CREATE FUNCTION contact_episodes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'contact_episodes is append-only: episodes are never %',
            CASE TG_OP WHEN 'UPDATE' THEN 'updated' ELSE 'deleted' END;
    END $$
    """,
    """
    CREATE TRIGGER contact_episodes_append_only BEFORE UPDATE OR DELETE OR TRUNCATE
    ON contact_episodes FOR EACH STATEMENT EXECUTE FUNCTION contact_episodes_append_only()
    """,
    """
    CREATE TABLE day_seals (
        day         TEXT PRIMARY KEY,
        episodes    BIGINT NOT NULL,
        last_id     BIGINT,
        digest      TEXT NOT NULL,
        by_type     TEXT NOT NULL,
        by_source   TEXT NOT NULL,
        sealed_at   TEXT NOT NULL
    )
    """,
]


MEMORY_PG_V2 = [
    """
    CREATE TABLE redactions (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        day         TEXT NOT NULL,
        redacted_at TEXT NOT NULL,
        episodes    BIGINT NOT NULL,
        digest      TEXT
    )
    """,
]


# The CRM store in PostgreSQL (schema `crm`): CRM_V1..V4 in one version, in Postgres' words.
# A contact's id is as SQLite's INTEGER PRIMARY KEY: the writers give it (max + 1), and a
# row inserted without one gets max + 1 from a trigger, so the two never collide.
CRM_PG_V1 = [
    """
    CREATE TABLE contacts (
        id            BIGINT PRIMARY KEY,
        email         TEXT UNIQUE,
        name          TEXT NOT NULL,
        company       TEXT,
        title         TEXT,
        city          TEXT,
        warmth        INTEGER NOT NULL DEFAULT 0 CHECK (warmth BETWEEN 0 AND 100),
        source        TEXT NOT NULL,
        external_id   TEXT UNIQUE,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        deleted_at    TEXT,
        synced_from   TEXT,
        seen_in       TEXT,
        synced_digest TEXT
    )
    """,
    "CREATE INDEX idx_contacts_warmth ON contacts(warmth)",
    """
    CREATE FUNCTION contacts_next_id() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.id := (SELECT coalesce(max(id), 0) + 1 FROM contacts);
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER contacts_next_id BEFORE INSERT ON contacts
    FOR EACH ROW WHEN (NEW.id IS NULL) EXECUTE FUNCTION contacts_next_id()
    """,
    """
    CREATE TABLE contact_emails (
        email       TEXT PRIMARY KEY,
        contact_id  BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        is_primary  INTEGER NOT NULL DEFAULT 0 CHECK (is_primary IN (0, 1)),
        added_at    TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_contact_emails_contact ON contact_emails(contact_id)",
    """CREATE UNIQUE INDEX idx_contact_emails_one_primary ON contact_emails(contact_id)
    WHERE is_primary = 1""",
    # As CRM_V2's trigger; the refusal is a unique violation (an IntegrityError, as there).
    """
    CREATE FUNCTION contacts_primary_email_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (
            SELECT 1 FROM contact_emails WHERE email = NEW.email AND contact_id != NEW.id
        ) THEN
            RAISE EXCEPTION 'that address already belongs to another contact'
                USING ERRCODE = 'unique_violation';
        END IF;
        UPDATE contact_emails SET is_primary = 0 WHERE contact_id = NEW.id AND is_primary = 1;
        IF NEW.email IS NOT NULL THEN
            INSERT INTO contact_emails (email, contact_id, is_primary, added_at)
            VALUES (NEW.email, NEW.id, 1, NEW.updated_at)
            ON CONFLICT (email) DO UPDATE SET is_primary = 1;
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER contacts_primary_email_update AFTER UPDATE OF email ON contacts
    FOR EACH ROW WHEN (NEW.email IS DISTINCT FROM OLD.email)
    EXECUTE FUNCTION contacts_primary_email_update()
    """,
    REFUSALS_TABLE,
    CRM_V4[0],
]


# The ops store in PostgreSQL (schema `ops`): OPS_V1..V2 in one version.
OPS_PG_V1 = [
    """
    CREATE TABLE alerts (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key         TEXT NOT NULL UNIQUE,
        text        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        sent_at     TEXT,
        attempts    INTEGER NOT NULL DEFAULT 0,
        last_error  TEXT
    )
    """,
    "CREATE INDEX idx_alerts_pending ON alerts(sent_at, id)",
    OPS_V2[0],
    OPS_V2[1],
]


MEMORY_PG_V3 = [
    "ALTER TABLE contact_episodes ADD COLUMN recorded_at TEXT",
    "ALTER TABLE contact_episodes DISABLE TRIGGER contact_episodes_append_only",
    "UPDATE contact_episodes SET recorded_at = created_at",
    "ALTER TABLE contact_episodes ENABLE TRIGGER contact_episodes_append_only",
    "ALTER TABLE contact_episodes ALTER COLUMN recorded_at SET NOT NULL",
    "CREATE INDEX idx_episodes_recorded_at ON contact_episodes(recorded_at)",
    "ALTER TABLE day_seals ADD COLUMN window_start TEXT",
    "ALTER TABLE day_seals ADD COLUMN window_end TEXT",
]


# The recall store in PostgreSQL (schema `recall`): RECALL_V1..V4 in one version, in
# Postgres' words. FTS5 becomes a tsvector column (title weighted A, body D) kept by a
# trigger with its token count, under a GIN index; `core/recall/retrieval.py` scores it
# with FTS5's bm25 in SQL. The text config folds accents (unaccent) and stems like FTS5's
# porter tokenizer (Snowball english, no stopword list: the query drops its own), and
# leaves words of any other script whole, as unicode61 does.
RECALL_PG_V1 = [
    """
    CREATE TABLE pages (
        title        TEXT PRIMARY KEY,
        note_path    TEXT NOT NULL,
        note_hash    TEXT NOT NULL,
        distilled    TEXT NOT NULL,
        generated_by TEXT NOT NULL,
        page         TEXT NOT NULL,
        markdown     TEXT NOT NULL,
        published    INTEGER NOT NULL CHECK (published IN (0, 1)),
        problems     TEXT NOT NULL DEFAULT '[]',
        version      TEXT NOT NULL DEFAULT '',
        note_title   TEXT NOT NULL DEFAULT '',
        digest       TEXT NOT NULL DEFAULT ''
    )
    """,
    """
    CREATE TABLE entities (
        id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        title        TEXT NOT NULL UNIQUE,
        type         TEXT NOT NULL
                     CHECK (type IN ('person', 'anchor', 'thread', 'context', 'note')),
        tags         TEXT NOT NULL,
        derived_from TEXT NOT NULL,
        note_touched TEXT NOT NULL,
        distilled    TEXT NOT NULL,
        recall       TEXT NOT NULL,
        markdown     TEXT NOT NULL,
        digest       TEXT NOT NULL DEFAULT '',
        reviewable   INTEGER NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE observations (
        entity_id BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        position  INTEGER NOT NULL,
        category  TEXT NOT NULL CHECK (category IN
                  ('context', 'decision', 'pattern', 'constraint', 'status', 'goal')),
        text      TEXT NOT NULL,
        PRIMARY KEY (entity_id, position)
    )
    """,
    """
    CREATE TABLE relations (
        entity_id BIGINT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        relation  TEXT NOT NULL CHECK (relation IN
                  ('part_of', 'depends_on', 'relates_to', 'maintains')),
        target    TEXT NOT NULL,
        -- SQLite's implicit rowid, which readers order a page's relations by (as written)
        rowid     BIGINT GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (entity_id, relation, target)
    )
    """,
    "CREATE INDEX idx_relations_target ON relations(target)",
    "CREATE INDEX idx_entities_note_touched ON entities(note_touched)",
    "CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA recall",
    "CREATE TEXT SEARCH DICTIONARY recall_stem (TEMPLATE = snowball, LANGUAGE = english)",
    "CREATE TEXT SEARCH CONFIGURATION recall_text (COPY = simple)",
    """
    ALTER TEXT SEARCH CONFIGURATION recall_text ALTER MAPPING FOR
        asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH unaccent, recall_stem
    """,
    """
    CREATE TABLE search_docs (
        id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        key       TEXT NOT NULL UNIQUE,
        title     TEXT NOT NULL,
        body      TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        source    TEXT NOT NULL DEFAULT '',
        tsv       TSVECTOR NOT NULL DEFAULT '',   -- set by search_docs_tsv
        doc_len   INTEGER NOT NULL DEFAULT 0      -- tokens in title and body (bm25's |D|)
    )
    """,
    """
    CREATE FUNCTION search_docs_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.tsv := setweight(to_tsvector('recall.recall_text', NEW.title), 'A')
                || setweight(to_tsvector('recall.recall_text', NEW.body), 'D');
        NEW.doc_len := (SELECT coalesce(sum(array_length(positions, 1)), 0)
                        FROM unnest(NEW.tsv));
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER search_docs_tsv BEFORE INSERT OR UPDATE OF title, body ON search_docs
    FOR EACH ROW EXECUTE FUNCTION search_docs_tsv()
    """,
    "CREATE INDEX idx_search_docs_tsv ON search_docs USING GIN (tsv)",
    # Any of the query's terms: OR over the terms' tsqueries (tsquery_or is `||`).
    "CREATE AGGREGATE any_term(tsquery) (SFUNC = tsquery_or, STYPE = tsquery)",
    """
    CREATE TABLE search_vectors (
        text_hash TEXT PRIMARY KEY,
        vector    BYTEA NOT NULL                -- float32, L2-normalised
    )
    """,
    "CREATE TABLE search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE INDEX idx_pages_by_note ON pages(note_path, note_hash, version, note_title, title)",
    "CREATE INDEX idx_pages_published ON pages(title, published, digest)",
    "CREATE INDEX idx_entities_sync ON entities(title, digest, note_touched)",
    "CREATE INDEX idx_search_docs_source ON search_docs(key, source)",
    "CREATE INDEX idx_search_docs_text_hash ON search_docs(text_hash)",
    "CREATE TABLE sync_marks (step TEXT PRIMARY KEY, mark TEXT NOT NULL)",
    "CREATE INDEX idx_entities_reviewable ON entities(note_touched) WHERE reviewable = 1",
    """
    CREATE TABLE page_log (
        id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        title       TEXT NOT NULL,
        event       TEXT NOT NULL CHECK (event IN ('distilled', 'withheld', 'removed')),
        note_path   TEXT NOT NULL,
        digest      TEXT NOT NULL DEFAULT '',
        page        TEXT NOT NULL DEFAULT '{}',
        problems    TEXT NOT NULL DEFAULT '[]',
        recorded_at TEXT NOT NULL
    )
    """,
    "CREATE INDEX idx_page_log_recorded_at ON page_log(recorded_at)",
    # As on SQLite: an entry is never updated; a forget may delete the entries naming it.
    """
    CREATE FUNCTION page_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'page_log is append-only: entries are never updated';
    END $$
    """,
    """
    CREATE TRIGGER page_log_append_only_update BEFORE UPDATE ON page_log
    FOR EACH ROW EXECUTE FUNCTION page_log_append_only()
    """,
]


# Each search document's weighted term counts (title 2, body 1) as JSON, kept by the same
# trigger: bm25 reads a term's count by key instead of unnesting every hit's tsvector
# (about half the keyword search at 10,000 pages; the scores are the same). The number of
# documents and their total length, which bm25 also needs, are kept in `search_stats` by
# a trigger per statement instead of counted at each search (a third of what was left).
# The SQLite store's version 5 is empty: its FTS5 index keeps all of this itself.
RECALL_PG_V2 = [
    "ALTER TABLE search_docs ADD COLUMN tf JSONB NOT NULL DEFAULT '{}'",
    """
    CREATE OR REPLACE FUNCTION search_docs_tsv() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.tsv := setweight(to_tsvector('recall.recall_text', NEW.title), 'A')
                || setweight(to_tsvector('recall.recall_text', NEW.body), 'D');
        NEW.doc_len := (SELECT coalesce(sum(array_length(positions, 1)), 0)
                        FROM unnest(NEW.tsv));
        NEW.tf := (SELECT coalesce(jsonb_object_agg(u.lexeme, (
                       SELECT sum(CASE WHEN w = 'A' THEN 2.0 ELSE 1.0 END)
                       FROM unnest(u.weights) AS w)), '{}')
                   FROM unnest(NEW.tsv) AS u);
        RETURN NEW;
    END $$
    """,
    "UPDATE search_docs SET title = title",  # the trigger fills tf for existing documents
    """
    CREATE TABLE search_stats (
        one         BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),  -- a single row
        docs        BIGINT NOT NULL,
        doc_len_sum BIGINT NOT NULL
    )
    """,
    """
    INSERT INTO search_stats (docs, doc_len_sum)
    SELECT count(*), coalesce(sum(doc_len), 0) FROM search_docs
    """,
    """
    CREATE FUNCTION search_stats_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            UPDATE search_stats SET docs = docs + (SELECT count(*) FROM new_rows),
                doc_len_sum = doc_len_sum + (SELECT coalesce(sum(doc_len), 0) FROM new_rows);
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE search_stats SET docs = docs - (SELECT count(*) FROM old_rows),
                doc_len_sum = doc_len_sum - (SELECT coalesce(sum(doc_len), 0) FROM old_rows);
        END IF;
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER search_stats_insert AFTER INSERT ON search_docs
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_stats_kept()
    """,
    """
    CREATE TRIGGER search_stats_update AFTER UPDATE ON search_docs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION search_stats_kept()
    """,
    """
    CREATE TRIGGER search_stats_delete AFTER DELETE ON search_docs
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION search_stats_kept()
    """,
]


# The outreach store in PostgreSQL (schema `outreach`): OUTREACH_V1..V9 in one version, in
# Postgres' words. The daily caps are triggers that first take a lock on their day (an
# advisory lock held to the end of the transaction), so two writers filling the same day
# at once are counted one after the other and the cap holds under concurrency; the
# refusal is a check violation (IntegrityError), as SQLite's RAISE(ABORT) is. The caps are
# written out, not taken from RESEARCH_CAP and DRAFT_CAP: a released version keeps the
# value it shipped with (test_outreach_core holds the two in step).
OUTREACH_PG_V1 = [
    """
    CREATE TABLE messages (
        id                 BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        contact_id         BIGINT NOT NULL,
        thread_id          TEXT NOT NULL,
        subject            TEXT NOT NULL,
        body               TEXT NOT NULL,
        angle              TEXT,
        sent_at            TEXT NOT NULL,
        opened_at          TEXT,
        replied_at         TEXT,
        bounce_status      TEXT NOT NULL DEFAULT 'none'
                           CHECK (bounce_status IN ('none', 'soft', 'hard')),
        bump_count         INTEGER NOT NULL DEFAULT 0 CHECK (bump_count BETWEEN 0 AND 2),
        draft_id           BIGINT,
        rfc_message_id     TEXT,
        opened_recorded_at TEXT
    )
    """,
    "CREATE INDEX idx_messages_contact_id ON messages(contact_id, sent_at)",
    "CREATE INDEX idx_messages_thread_id ON messages(thread_id)",
    "CREATE UNIQUE INDEX idx_messages_draft_id ON messages(draft_id)",
    "CREATE UNIQUE INDEX idx_messages_thread_bump ON messages(thread_id, bump_count)",
    "CREATE INDEX idx_messages_sent_at ON messages(sent_at)",
    "CREATE UNIQUE INDEX idx_messages_rfc_message_id ON messages(rfc_message_id)",
    """
    CREATE TABLE research_picks (
        day         TEXT NOT NULL,
        contact_id  BIGINT NOT NULL,
        rank        INTEGER NOT NULL,
        status      TEXT NOT NULL DEFAULT 'picked'
                    CHECK (status IN ('picked', 'done', 'skipped')),
        reason      TEXT,
        findings    TEXT,
        writeback   TEXT,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (day, contact_id)
    )
    """,
    "CREATE INDEX idx_research_picks_contact ON research_picks(contact_id, day)",
    """
    CREATE TABLE drafts (
        id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        day            TEXT NOT NULL,
        contact_id     BIGINT NOT NULL,
        thread_id      TEXT NOT NULL,
        bump           INTEGER NOT NULL CHECK (bump BETWEEN 0 AND 2),
        subject        TEXT NOT NULL,
        body           TEXT NOT NULL,
        angle          TEXT NOT NULL,
        dossier        TEXT NOT NULL,
        sources        TEXT NOT NULL,
        model          TEXT NOT NULL,
        verdict        TEXT NOT NULL CHECK (verdict IN ('pass', 'fail')),
        unsupported    TEXT NOT NULL DEFAULT '[]',
        status         TEXT NOT NULL
                       CHECK (status IN ('ready', 'quarantined', 'skipped', 'sending', 'sent')),
        reason         TEXT,
        rfc_message_id TEXT UNIQUE,
        message_id     BIGINT UNIQUE,
        created_at     TEXT NOT NULL,
        updated_at     TEXT NOT NULL,
        judged         TEXT,
        due_at         TEXT,
        UNIQUE (day, contact_id)
    )
    """,
    "CREATE INDEX idx_drafts_day ON drafts(day, status)",
    "CREATE INDEX idx_drafts_due ON drafts(due_at) WHERE due_at IS NOT NULL",
    """
    CREATE FUNCTION research_picks_daily_cap() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('outreach-cap:research:' || NEW.day));
        IF (SELECT count(*) FROM research_picks WHERE day = NEW.day) >= 20 THEN
            RAISE EXCEPTION 'research cap: at most 20 contacts a day'
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER research_picks_daily_cap BEFORE INSERT ON research_picks
    FOR EACH ROW EXECUTE FUNCTION research_picks_daily_cap()
    """,
    """
    CREATE FUNCTION drafts_daily_cap() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('outreach-cap:drafts:' || NEW.day));
        IF (SELECT count(*) FROM drafts WHERE day = NEW.day) >= 10 THEN
            RAISE EXCEPTION 'draft cap: at most 10 drafts a day'
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER drafts_daily_cap BEFORE INSERT ON drafts
    FOR EACH ROW EXECUTE FUNCTION drafts_daily_cap()
    """,
    """
    CREATE TABLE inbound (
        provider_id    TEXT PRIMARY KEY,
        message_id     BIGINT NOT NULL,
        contact_id     BIGINT NOT NULL,
        thread_id      TEXT NOT NULL,
        kind           TEXT NOT NULL CHECK (kind IN
                       ('reply', 'not_now', 'unsubscribe', 'out_of_office', 'bounce')),
        received_at    TEXT NOT NULL,
        from_address   TEXT NOT NULL,
        subject        TEXT NOT NULL,
        body           TEXT NOT NULL,
        warmth_before  INTEGER,
        warmth_after   INTEGER,
        warmth_applied INTEGER NOT NULL DEFAULT 0 CHECK (warmth_applied IN (0, 1)),
        created_at     TEXT NOT NULL,
        identity       TEXT,
        -- SQLite's implicit rowid, which the timeline names a received mail by
        rowid          BIGINT GENERATED ALWAYS AS IDENTITY
    )
    """,
    "CREATE INDEX idx_inbound_contact ON inbound(contact_id, received_at)",
    "CREATE UNIQUE INDEX idx_inbound_identity ON inbound(identity)",
    """
    CREATE TABLE send_holds (
        contact_id  BIGINT NOT NULL,
        kind        TEXT NOT NULL CHECK (kind IN
                    ('replied', 'unsubscribed', 'deferred', 'out_of_office', 'bounced')),
        since       TEXT NOT NULL,
        until       TEXT,
        address     TEXT,
        reason      TEXT NOT NULL,
        evidence    TEXT NOT NULL,
        PRIMARY KEY (contact_id, kind, since)
    )
    """,
    "CREATE INDEX idx_send_holds_address ON send_holds(address)",
    REFUSALS_TABLE,
    """
    CREATE TABLE inbox_seen (
        provider_id TEXT PRIMARY KEY,
        outcome     TEXT NOT NULL,
        seen_at     TEXT NOT NULL
    )
    """,
]


# The stores that may live in PostgreSQL, and their schema versions there.
PG_MIGRATIONS: dict[str, list[list[str]]] = {
    Store.MEMORY: [MEMORY_PG_V1, MEMORY_PG_V2, MEMORY_PG_V3]
}
PG_MIGRATIONS[Store.RECALL] = [RECALL_PG_V1, RECALL_PG_V2]
PG_MIGRATIONS[Store.CRM] = [CRM_PG_V1]
PG_MIGRATIONS[Store.OPS] = [OPS_PG_V1]
PG_MIGRATIONS[Store.OUTREACH] = [OUTREACH_PG_V1]
PG_MIGRATIONS[Store.BRAIN] = [BRAIN_PG_V1]
# A store ported to Postgres after it had several SQLite versions starts there with one
# version that holds them all: how many SQLite versions each first Postgres version covers.
PG_FIRST_COVERS: dict[str, int] = {
    Store.MEMORY: 1,
    Store.RECALL: 4,
    Store.CRM: 4,
    Store.OPS: 2,
    Store.OUTREACH: 9,
    Store.BRAIN: 1,
}
