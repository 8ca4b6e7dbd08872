"""The SQLite store's schema as named, append-only migrations.

A migration, once released, never changes: a new need is a new entry at the end. The store
records what it applied in ``migrations``; a file that names a migration this version does
not know was written by a newer precis and is refused rather than guessed at.

Since ``0004_tenants`` every table holding a tenant's data (sessions, messages, cards, their
keyword terms and vectors, history, the embedding cache, offloads, runtime state) has a
``tenant`` column, part of each key that names a row, and the store puts it in every query.
Store-wide by nature: ``migrations``, ``meta`` (settings and change counters), ``terms`` (the
vocabulary: a word's number, shared so the in-memory keyword index is one), ``index_state``
(a trained vector index's layout) and ``api_keys`` (a key names its tenant).
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            user_id TEXT,
            agent_id TEXT,
            source TEXT,
            content_hash TEXT NOT NULL,
            format TEXT,
            title TEXT,
            ingested_at TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        );
        CREATE TABLE messages (
            session_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            role TEXT NOT NULL,
            speaker TEXT,
            timestamp TEXT,
            text TEXT NOT NULL,
            PRIMARY KEY (session_id, idx)
        ) WITHOUT ROWID;
        CREATE TABLE cards (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            type TEXT NOT NULL,
            tags TEXT NOT NULL,
            topics TEXT NOT NULL,
            entities TEXT NOT NULL,
            session_id TEXT NOT NULL,
            message_ids TEXT NOT NULL,
            message_indexes TEXT NOT NULL,
            fragment_ids TEXT NOT NULL,
            speaker TEXT,
            user_id TEXT,
            agent_id TEXT,
            scope TEXT NOT NULL,
            event_time TEXT,
            event_ts REAL NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_by TEXT,
            language TEXT NOT NULL,
            metadata TEXT NOT NULL
        );
        CREATE INDEX cards_by_time ON cards (event_ts);
        CREATE INDEX cards_by_user ON cards (user_id, event_ts);
        CREATE INDEX cards_by_agent ON cards (agent_id, event_ts);
        CREATE INDEX cards_by_session ON cards (session_id, event_ts);
        CREATE INDEX cards_by_type ON cards (type, event_ts);
        CREATE VIRTUAL TABLE cards_fts USING fts5 (
            body, context, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TABLE vectors (
            model TEXT NOT NULL,
            card_rowid INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (model, card_rowid)
        ) WITHOUT ROWID;
        CREATE TABLE embed_cache (
            model TEXT NOT NULL,
            key TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (model, key)
        ) WITHOUT ROWID;
        CREATE TABLE history (
            card_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            action TEXT NOT NULL,
            at TEXT NOT NULL,
            card TEXT,
            PRIMARY KEY (card_id, version)
        ) WITHOUT ROWID;
        CREATE TABLE index_state (
            model TEXT PRIMARY KEY,
            vector_count INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        """,
    ),
    (
        "0002_runtime",
        """
        CREATE TABLE offloads (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            messages TEXT NOT NULL
        );
        CREATE INDEX offloads_by_session ON offloads (session_id);
        CREATE TABLE runtime_state (
            session_id TEXT PRIMARY KEY,
            saved_at TEXT NOT NULL,
            state TEXT NOT NULL
        );
        """,
    ),
    (
        # keyword search moves from FTS5's bm25() (which scores every matching row in
        # SQL) to an in-memory BM25 index built from each card's terms
        # (precis.memory.keywords); cards of older files get their terms on first use
        "0003_keyword_terms",
        """
        CREATE TABLE terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
        CREATE TABLE card_terms (
            card_rowid INTEGER PRIMARY KEY,
            length INTEGER NOT NULL,
            terms BLOB NOT NULL,
            freqs BLOB NOT NULL
        );
        DROP TABLE cards_fts;
        """,
    ),
    (
        # tenants: a tenant column in every table of tenant data, in the keys that name its
        # rows (the same card, session or offload id may exist once per tenant); the rows
        # of older files belong to the default tenant. Tables whose key changes are
        # rebuilt (rowids kept: vectors and card terms refer to cards by rowid); the
        # others get the column. And the API keys (SHA-256 digests only).
        "0004_tenants",
        """
        CREATE TABLE sessions_new (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            source TEXT,
            content_hash TEXT NOT NULL,
            format TEXT,
            title TEXT,
            ingested_at TEXT NOT NULL,
            message_count INTEGER NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (tenant, id)
        );
        INSERT INTO sessions_new
            SELECT 'default', id, user_id, agent_id, source, content_hash, format, title,
                   ingested_at, message_count, metadata FROM sessions;
        DROP TABLE sessions;
        ALTER TABLE sessions_new RENAME TO sessions;

        CREATE TABLE messages_new (
            tenant TEXT NOT NULL,
            session_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            role TEXT NOT NULL,
            speaker TEXT,
            timestamp TEXT,
            text TEXT NOT NULL,
            PRIMARY KEY (tenant, session_id, idx)
        ) WITHOUT ROWID;
        INSERT INTO messages_new
            SELECT 'default', session_id, idx, message_id, role, speaker, timestamp, text
            FROM messages;
        DROP TABLE messages;
        ALTER TABLE messages_new RENAME TO messages;

        CREATE TABLE cards_new (
            rowid INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            content TEXT NOT NULL,
            type TEXT NOT NULL,
            tags TEXT NOT NULL,
            topics TEXT NOT NULL,
            entities TEXT NOT NULL,
            session_id TEXT NOT NULL,
            message_ids TEXT NOT NULL,
            message_indexes TEXT NOT NULL,
            fragment_ids TEXT NOT NULL,
            speaker TEXT,
            user_id TEXT,
            agent_id TEXT,
            scope TEXT NOT NULL,
            event_time TEXT,
            event_ts REAL NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_by TEXT,
            language TEXT NOT NULL,
            metadata TEXT NOT NULL,
            UNIQUE (tenant, id)
        );
        INSERT INTO cards_new
            SELECT rowid, 'default', id, content, type, tags, topics, entities, session_id,
                   message_ids, message_indexes, fragment_ids, speaker, user_id, agent_id,
                   scope, event_time, event_ts, created_at, updated_at, superseded_by,
                   language, metadata FROM cards;
        DROP TABLE cards;
        ALTER TABLE cards_new RENAME TO cards;
        CREATE INDEX cards_by_time ON cards (tenant, event_ts);
        CREATE INDEX cards_by_user ON cards (tenant, user_id, event_ts);
        CREATE INDEX cards_by_agent ON cards (tenant, agent_id, event_ts);
        CREATE INDEX cards_by_session ON cards (tenant, session_id, event_ts);
        CREATE INDEX cards_by_type ON cards (tenant, type, event_ts);

        ALTER TABLE vectors ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE card_terms ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';

        CREATE TABLE history_new (
            tenant TEXT NOT NULL,
            card_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            action TEXT NOT NULL,
            at TEXT NOT NULL,
            card TEXT,
            PRIMARY KEY (tenant, card_id, version)
        ) WITHOUT ROWID;
        INSERT INTO history_new
            SELECT 'default', card_id, version, action, at, card FROM history;
        DROP TABLE history;
        ALTER TABLE history_new RENAME TO history;

        CREATE TABLE embed_cache_new (
            tenant TEXT NOT NULL,
            model TEXT NOT NULL,
            key TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (tenant, model, key)
        ) WITHOUT ROWID;
        INSERT INTO embed_cache_new SELECT 'default', model, key, vec FROM embed_cache;
        DROP TABLE embed_cache;
        ALTER TABLE embed_cache_new RENAME TO embed_cache;

        CREATE TABLE offloads_new (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            messages TEXT NOT NULL,
            PRIMARY KEY (tenant, id)
        );
        INSERT INTO offloads_new
            SELECT 'default', id, session_id, created_at, messages FROM offloads;
        DROP TABLE offloads;
        ALTER TABLE offloads_new RENAME TO offloads;
        CREATE INDEX offloads_by_session ON offloads (tenant, session_id);

        CREATE TABLE runtime_state_new (
            tenant TEXT NOT NULL,
            session_id TEXT NOT NULL,
            saved_at TEXT NOT NULL,
            state TEXT NOT NULL,
            PRIMARY KEY (tenant, session_id)
        );
        INSERT INTO runtime_state_new
            SELECT 'default', session_id, saved_at, state FROM runtime_state;
        DROP TABLE runtime_state;
        ALTER TABLE runtime_state_new RENAME TO runtime_state;

        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            digest TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            revoked_at TEXT
        );
        CREATE INDEX api_keys_by_tenant ON api_keys (tenant);
        """,
    ),
)
