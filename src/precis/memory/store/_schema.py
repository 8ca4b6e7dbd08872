"""The SQLite store's schema as named, append-only migrations.

A migration, once released, never changes: a new need is a new entry at the end. The store
records what it applied in ``migrations``; a file that names a migration this version does
not know was written by a newer precis and is refused rather than guessed at.
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
)
