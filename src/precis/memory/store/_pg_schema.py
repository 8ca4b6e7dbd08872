"""The PostgreSQL store's schema as named, append-only migrations (its own list: the two
stores' schemas differ, the mechanism is the same as :mod:`precis.memory.store._schema`).

A migration, once released, never changes: a new need is a new entry at the end. The store
records what it applied in ``precis_migrations``; a database naming a migration this version
does not know was written by a newer precis and is refused.

Every table of tenant data has a ``tenant`` column, first in each key, and every query names
it. Store-wide: the migrations, ``meta`` (settings such as the embedder choice),
``vector_models`` (a model's vector length and index) and ``api_keys`` (a key names its
tenant).

Keyword search is BM25 over precis's own terms (:mod:`precis.memory.keywords`): ``terms``
holds each term of a tenant with its document frequency and highest weighted frequency;
``postings`` holds each term's postings (card key, weighted frequency, the card's length in
tokens) packed in blocks, a few rows per term however many cards hold it
(:mod:`precis.memory.store._pg_terms`); ``keyword_stats`` a tenant's number of cards and
total length: all that BM25 needs, kept exact as cards come and go. Vectors of a model are
one ``vectors`` row per card; the first vectors of a model create an HNSW index (cosine)
over that model's rows.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_initial",
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE sessions (
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
        CREATE TABLE messages (
            tenant TEXT NOT NULL,
            session_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            role TEXT NOT NULL,
            speaker TEXT,
            timestamp TEXT,
            text TEXT NOT NULL,
            PRIMARY KEY (tenant, session_id, idx)
        );
        CREATE TABLE cards (
            key BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
            event_ts DOUBLE PRECISION NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_by TEXT,
            language TEXT NOT NULL,
            metadata TEXT NOT NULL,
            length REAL,
            terms TEXT,
            UNIQUE (tenant, id)
        );
        CREATE INDEX cards_by_time ON cards (tenant, event_ts);
        CREATE INDEX cards_by_user ON cards (tenant, user_id, event_ts);
        CREATE INDEX cards_by_agent ON cards (tenant, agent_id, event_ts);
        CREATE INDEX cards_by_session ON cards (tenant, session_id, event_ts);
        CREATE INDEX cards_by_type ON cards (tenant, type, event_ts);
        CREATE INDEX cards_without_terms ON cards (key) WHERE length IS NULL;
        CREATE TABLE terms (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant TEXT NOT NULL,
            term TEXT NOT NULL,
            df INTEGER NOT NULL,
            max_freq REAL NOT NULL,
            fresh INTEGER NOT NULL DEFAULT 0,
            UNIQUE (tenant, term)
        );
        CREATE TABLE postings (
            tenant TEXT NOT NULL,
            term_id BIGINT NOT NULL,
            block BIGINT GENERATED ALWAYS AS IDENTITY,
            level SMALLINT NOT NULL,
            n INTEGER NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (tenant, term_id, block)
        );
        ALTER TABLE postings ALTER COLUMN data SET STORAGE EXTERNAL;
        CREATE TABLE keyword_stats (
            tenant TEXT PRIMARY KEY,
            cards BIGINT NOT NULL,
            total_length DOUBLE PRECISION NOT NULL,
            min_length REAL NOT NULL
        );
        CREATE TABLE vector_models (
            model TEXT PRIMARY KEY,
            dim INTEGER NOT NULL,
            index_name TEXT NOT NULL
        );
        CREATE TABLE vectors (
            tenant TEXT NOT NULL,
            model TEXT NOT NULL,
            card_key BIGINT NOT NULL,
            vec vector NOT NULL,
            PRIMARY KEY (tenant, model, card_key)
        );
        CREATE TABLE embed_cache (
            tenant TEXT NOT NULL,
            model TEXT NOT NULL,
            key TEXT NOT NULL,
            vec BYTEA NOT NULL,
            PRIMARY KEY (tenant, model, key)
        );
        CREATE TABLE history (
            tenant TEXT NOT NULL,
            card_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            action TEXT NOT NULL,
            at TEXT NOT NULL,
            card TEXT,
            PRIMARY KEY (tenant, card_id, version)
        );
        CREATE TABLE offloads (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            messages TEXT NOT NULL,
            PRIMARY KEY (tenant, id)
        );
        CREATE INDEX offloads_by_session ON offloads (tenant, session_id);
        CREATE TABLE runtime_state (
            tenant TEXT NOT NULL,
            session_id TEXT NOT NULL,
            saved_at TEXT NOT NULL,
            state TEXT NOT NULL,
            PRIMARY KEY (tenant, session_id)
        );
        CREATE TABLE api_keys (
            seq BIGINT GENERATED ALWAYS AS IDENTITY,
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
