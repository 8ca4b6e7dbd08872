"""The embedded memory store: one SQLite file (WAL) with keyword terms and vectors.

Writes run in ``BEGIN IMMEDIATE`` transactions, so two processes writing at once queue on
SQLite's lock instead of losing each other's cards, and a process killed mid-write leaves
the last committed state. Each card's keyword terms (:mod:`precis.memory.keywords`) and
vectors live in the file; searches use in-memory indexes
(:mod:`precis.memory.store._sqlite_index`) loaded on first use and brought up to date when
another connection has written since.

A :class:`SQLiteStore` is bound to one tenant (see :mod:`precis.memory.store.base`):
``SQLiteStore(path, tenant="acme")``, or ``store.for_tenant("acme")`` for a view sharing the
connection and the in-memory indexes. Every query on tenant data names the tenant.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from precis.errors import NotFoundError, QueryError, StoreError
from precis.memory.card import MemoryCard
from precis.memory.store._rows import (
    CARD_COLUMNS,
    CREATED,
    SESSION_COLUMNS,
    blob,
    card_body,
    card_from_row,
    card_row,
    card_timestamp,
    chunks,
    filter_sql,
    int64,
    listify,
    session_from_row,
    utc_now,
)
from precis.memory.store._sqlite_db import Transaction, count, open_file
from precis.memory.store._sqlite_transfer import SQLiteTransfer
from precis.memory.store.base import (
    DEFAULT_TENANT,
    NO_FILTERS,
    ApiKey,
    CardVersion,
    Filters,
    SessionRecord,
    StoredMessage,
    check_tenant,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SQLiteStore", "default_store_path", "utc_now"]

# a history entry: (tenant, card id, action, time, the card as JSON or NULL, tenant, card id)
_RECORD = ("INSERT INTO history (tenant, card_id, version, action, at, card) "
           "SELECT ?, ?, COALESCE(MAX(version), 0) + 1, ?, ?, ? "
           "FROM history WHERE tenant = ? AND card_id = ?")
_KEY_COLUMNS = "id, tenant, name, created_at, revoked_at"


def default_store_path() -> Path:
    from precis.paths import precis_home

    return precis_home(create=True) / "memory.sqlite3"


class SQLiteStore(SQLiteTransfer):
    """The embedded store (see the module docstring). ``path=None`` opens the default file
    under ``PRECIS_HOME``; ``":memory:"`` gives a private in-memory store (tests)."""

    def __init__(self, path: str | Path | None = None, *, tenant: str = DEFAULT_TENANT,
                 timeout: float = 30.0) -> None:
        self._tenant = check_tenant(tenant)
        target = default_store_path() if path is None else path
        location = str(target)
        if location != ":memory:":
            p = Path(location)
            if p.exists() and not p.is_file():
                raise StoreError("the memory store path is not a file", where=location)
            if not p.parent.exists():
                raise StoreError(
                    f"the directory {str(p.parent)!r} does not exist", where=location
                )
        self._s = open_file(location, timeout)

    # -- housekeeping -------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._s.path

    @property
    def tenant(self) -> str:
        return self._tenant

    def for_tenant(self, tenant: str) -> SQLiteStore:
        """This store bound to ``tenant``, sharing the connection and indexes."""
        check_tenant(tenant)
        view = object.__new__(SQLiteStore)
        view._s = self._s
        view._tenant = tenant
        return view

    def close(self) -> None:
        self._s.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> Transaction:
        return self._s.write()

    def get_meta(self, key: str) -> str | None:
        return self._s.meta(key)

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- writing ------------------------------------------------------------------------

    def add(
        self,
        cards: Sequence[MemoryCard],
        *,
        session: SessionRecord | None = None,
        messages: Sequence[StoredMessage] = (),
        vectors: np.ndarray | None = None,
        model: str | None = None,
    ) -> list[str]:
        if vectors is not None and (model is None or len(vectors) != len(cards)):
            raise ValueError("vectors need a model name and one row per card")
        tenant = self._tenant
        added: list[str] = []
        with self._write() as db:
            if session is not None:
                db.execute(
                    f"INSERT OR REPLACE INTO sessions (tenant, {SESSION_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tenant, session.id, session.user_id, session.agent_id, session.source,
                     session.content_hash, session.format, session.title,
                     session.ingested_at or utc_now(), session.message_count,
                     json.dumps(session.metadata, ensure_ascii=False)),
                )
            if messages:
                db.executemany(
                    "INSERT OR IGNORE INTO messages (tenant, session_id, idx, message_id, role, "
                    "speaker, timestamp, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(tenant, m.session_id, m.index, m.message_id, m.role, m.speaker,
                      m.timestamp, m.text) for m in messages],
                )
            now = utc_now()
            new: list[tuple[int, str, MemoryCard]] = []
            stored: list[tuple[str, int, str, bytes]] = []
            for i, card in enumerate(cards):
                rowid = self._insert_card(db, card, now)
                if rowid is None:
                    continue
                added.append(card.id)
                new.append((rowid, tenant, card))
                if vectors is not None and model is not None:
                    stored.append((model, rowid, tenant, blob(vectors[i])))
            # a card's history starts on its first change (the card row is version 1),
            # except for a card added again after a delete: its history goes on
            db.executemany(_RECORD + " GROUP BY card_id",  # no row: no history, no entry
                           [(tenant, cid, "created", now, None, tenant, cid) for cid in added])
            if stored:
                db.executemany("INSERT OR REPLACE INTO vectors (model, card_rowid, tenant, vec) "
                               "VALUES (?, ?, ?, ?)", stored)
                count(db, "vector_appends", len(stored))
            self._s.index.put_terms(db, new)
        return added

    def _insert_card(self, db: sqlite3.Connection, card: MemoryCard, now: str) -> int | None:
        row = card_row(card)
        if not card.created_at or not card.updated_at:
            created = card.created_at or now
            row = (*row[:CREATED], created, card.updated_at or created, *row[CREATED + 2:])
            card = card.with_changes(created_at=created, updated_at=card.updated_at or created)
        cursor = db.execute(
            f"INSERT OR IGNORE INTO cards (tenant, {CARD_COLUMNS}, event_ts) "
            f"VALUES ({', '.join('?' * 22)})",
            (self._tenant, *row, card_timestamp(card)),
        )
        if cursor.rowcount == 0:
            return None
        return int(cursor.lastrowid or 0)

    def _record(self, db: sqlite3.Connection, card_id: str, action: str,
                card: MemoryCard | None) -> None:
        """Add a history entry. A "created" entry is written without the card (the card row
        holds it) and filled with that first version before the card first changes."""
        db.execute(_RECORD, (
            self._tenant, card_id, action, utc_now(),
            None if card is None else json.dumps(card.to_dict(), ensure_ascii=False),
            self._tenant, card_id))

    def _keep_first_version(self, db: sqlite3.Connection, old: MemoryCard) -> None:
        """Before a card first changes, write its first version into its history."""
        data = json.dumps(old.to_dict(), ensure_ascii=False)
        tenant = self._tenant
        if db.execute("SELECT 1 FROM history WHERE tenant = ? AND card_id = ? LIMIT 1",
                      (tenant, old.id)).fetchone():
            db.execute("UPDATE history SET card = ? WHERE tenant = ? AND card_id = ? "
                       "AND card IS NULL AND action = 'created'", (data, tenant, old.id))
        else:
            db.execute("INSERT INTO history (tenant, card_id, version, action, at, card) "
                       "VALUES (?, ?, 1, 'created', ?, ?)",
                       (tenant, old.id, old.created_at or utc_now(), data))

    def update(self, card_id: str, **changes: Any) -> MemoryCard:
        """Change a card's fields (not its id); the old version stays in its history."""
        if "id" in changes:
            raise QueryError("a card's id cannot be changed", where=card_id)
        with self._write() as db:
            old = self._get(db, card_id)
            self._keep_first_version(db, old)
            try:
                new = MemoryCard.from_dict(
                    {**old.to_dict(), **listify(changes), "updated_at": utc_now()},
                    where=card_id,
                )
            except TypeError as err:
                raise QueryError(str(err), where=card_id) from None
            rowid = self._rowid(db, card_id)
            db.execute(
                f"UPDATE cards SET ({CARD_COLUMNS}, event_ts) = "
                f"({', '.join('?' * 21)}) WHERE rowid = ? AND tenant = ?",
                (*card_row(new), card_timestamp(new), rowid, self._tenant),
            )
            if card_body(new) != card_body(old):
                self._s.index.put_terms(db, [(rowid, self._tenant, new)])
                count(db, "keyword_changes")
            count(db, "card_changes")
            if new.content != old.content:
                db.execute("DELETE FROM vectors WHERE card_rowid = ? AND tenant = ?",
                           (rowid, self._tenant))
                count(db, "vector_changes")
            action = "superseded" if new.superseded_by and not old.superseded_by else "updated"
            self._record(db, card_id, action, new)
        if new.content != old.content:
            for index in self._s.index.vectors.values():
                index.remove(int64([rowid]))
        return new

    def delete(self, card_id: str) -> None:
        """Remove a card from search; its history keeps what it said."""
        tenant = self._tenant
        with self._write() as db:
            rowid = self._rowid(db, card_id)
            self._keep_first_version(db, self._get(db, card_id))
            db.execute("DELETE FROM cards WHERE rowid = ? AND tenant = ?", (rowid, tenant))
            db.execute("DELETE FROM card_terms WHERE card_rowid = ? AND tenant = ?",
                       (rowid, tenant))
            count(db, "keyword_changes")
            count(db, "card_changes")
            db.execute("DELETE FROM vectors WHERE card_rowid = ? AND tenant = ?",
                       (rowid, tenant))
            db.execute(
                "UPDATE cards SET superseded_by = NULL WHERE tenant = ? AND superseded_by = ?",
                (tenant, card_id),
            )
            self._record(db, card_id, "deleted", None)
            count(db, "vector_changes")
        for index in self._s.index.vectors.values():
            index.remove(int64([rowid]))

    def put_vectors(self, model: str, card_ids: Sequence[str], vectors: np.ndarray) -> None:
        with self._write() as db:
            for card_id, vector in zip(card_ids, vectors):
                row = db.execute("SELECT rowid FROM cards WHERE tenant = ? AND id = ?",
                                 (self._tenant, card_id)).fetchone()
                if row is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO vectors (model, card_rowid, tenant, vec) "
                        "VALUES (?, ?, ?, ?)",
                        (model, row[0], self._tenant, blob(vector)),
                    )
            count(db, "vector_changes")  # may replace vectors: the loaded indexes reload

    def save_index_state(self, model: str) -> None:
        """Keep the trained vector index in the file so the next process need not retrain."""
        with self._s.lock:
            self._s.index.save_vector_state(model)

    # -- reading ------------------------------------------------------------------------

    def _rowid(self, db: sqlite3.Connection, card_id: str) -> int:
        row = db.execute("SELECT rowid FROM cards WHERE tenant = ? AND id = ?",
                         (self._tenant, card_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory card {card_id!r}", where=self.location)
        return int(row[0])

    def _get(self, db: sqlite3.Connection, card_id: str) -> MemoryCard:
        row = db.execute(f"SELECT {CARD_COLUMNS} FROM cards WHERE tenant = ? AND id = ?",
                         (self._tenant, card_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory card {card_id!r}", where=self.location)
        return card_from_row(row)

    def get(self, card_id: str) -> MemoryCard:
        with self._s.lock:
            return self._get(self._s.db, card_id)

    def get_many(self, card_ids: Sequence[str]) -> list[MemoryCard]:
        """The cards that exist among ``card_ids``, in the order asked."""
        found: dict[str, MemoryCard] = {}
        with self._s.lock:
            for chunk in chunks(list(card_ids), 500):
                rows = self._s.db.execute(
                    f"SELECT {CARD_COLUMNS} FROM cards WHERE tenant = ? AND id IN "
                    f"({', '.join('?' * len(chunk))})",
                    [self._tenant, *chunk],
                ).fetchall()
                for row in rows:
                    found[row[0]] = card_from_row(row)
        return [found[i] for i in card_ids if i in found]

    def history(self, card_id: str) -> list[CardVersion]:
        with self._s.lock:
            rows = self._s.db.execute(
                "SELECT version, action, at, card FROM history WHERE tenant = ? AND card_id = ? "
                "ORDER BY version",
                (self._tenant, card_id),
            ).fetchall()
        if not rows:  # never changed: the stored card is its only version
            stored = self.get(card_id)
            return [CardVersion(card_id, 1, "created", stored.created_at or "", stored)]
        out = []
        for v, action, at, data in rows:
            if data is not None:
                card: MemoryCard | None = MemoryCard.from_dict(json.loads(data))
            elif action == "created":
                card = self.get(card_id)  # never changed since: the stored card is version 1
            else:
                card = None
            out.append(CardVersion(card_id, v, action, at, card))
        return out

    def cards(
        self, filters: Filters = NO_FILTERS, *, limit: int | None = None, offset: int = 0
    ) -> Iterator[MemoryCard]:
        """Cards matching ``filters`` in time order (event time, then insertion)."""
        where, params = filter_sql(filters, self._tenant)
        sql = f"SELECT {CARD_COLUMNS} FROM cards c WHERE {where} ORDER BY event_ts, rowid"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        elif offset:
            sql += " LIMIT -1 OFFSET ?"
            params.append(offset)
        with self._s.lock:
            rows = self._s.db.execute(sql, params).fetchall()
        for row in rows:
            yield card_from_row(row)

    def count(self, filters: Filters = NO_FILTERS) -> int:
        where, params = filter_sql(filters, self._tenant)
        with self._s.lock:
            row = self._s.db.execute(f"SELECT COUNT(*) FROM cards c WHERE {where}", params)
            return int(row.fetchone()[0])

    def keyword_search(
        self, words: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """The tenant's cards holding any of ``words``, the ``limit`` best by BM25 (higher
        is better), among those passing ``filters``."""
        index = self._s.index
        with self._s.lock:
            allowed = index.allowed(self._tenant, filters)  # first: a bad filter is an error
            terms = index.terms().query(words)
            if not terms or limit <= 0 or (allowed is not None and not len(allowed)):
                return []
            keywords = index.keyword_index()
            ids = [index.vocabulary[t] for t in terms if t in index.vocabulary]
            if not ids:
                return []
            rowids, scores = keywords.search(ids, limit, allowed=allowed)
            return index.named(rowids, scores)

    def vector_search(
        self, query: np.ndarray, model: str, filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """The tenant's cards nearest to ``query`` among those with a ``model`` vector
        (cosine)."""
        index = self._s.index
        with self._s.lock:
            vectors = index.vector_index(model)
            if vectors is None or len(vectors) == 0:
                return []
            allowed = index.allowed(self._tenant, filters)
            if allowed is not None and not len(allowed):
                return []
            ids, scores = vectors.search(query, limit, allowed=allowed)
            return index.named(ids, scores)

    def missing_vectors(self, model: str, limit: int) -> list[MemoryCard]:
        with self._s.lock:
            rows = self._s.db.execute(
                f"SELECT {CARD_COLUMNS} FROM cards c WHERE c.tenant = ? AND NOT EXISTS "
                "(SELECT 1 FROM vectors v WHERE v.model = ? AND v.card_rowid = c.rowid) "
                "ORDER BY c.rowid LIMIT ?",
                (self._tenant, model, limit),
            ).fetchall()
        return [card_from_row(r) for r in rows]

    def messages(self, session_id: str, start: int, stop: int) -> list[StoredMessage]:
        """The session's original messages with index in ``[start, stop)``."""
        with self._s.lock:
            rows = self._s.db.execute(
                "SELECT session_id, idx, message_id, role, speaker, timestamp, text FROM messages "
                "WHERE tenant = ? AND session_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                (self._tenant, session_id, start, stop),
            ).fetchall()
        return [StoredMessage(*r) for r in rows]

    def messages_in(self, ranges: Sequence[tuple[str, int, int]]
                    ) -> list[list[StoredMessage]]:
        return [self.messages(*r) for r in ranges]

    def session(self, session_id: str) -> SessionRecord | None:
        with self._s.lock:
            row = self._s.db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND id = ?",
                (self._tenant, session_id),
            ).fetchone()
        return None if row is None else session_from_row(row)

    def sessions(self) -> list[SessionRecord]:
        with self._s.lock:
            rows = self._s.db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant = ? "
                "ORDER BY ingested_at, id", (self._tenant,),
            ).fetchall()
        return [session_from_row(r) for r in rows]

    def stats(self) -> dict[str, Any]:
        """What the tenant's part of the store holds (``keyword_terms``, ``embedder`` and
        ``bytes`` are the whole file's)."""
        tenant = (self._tenant,)
        with self._s.lock:
            db = self._s.db

            def one(sql: str) -> int:
                return int(db.execute(sql, tenant).fetchone()[0])

            out: dict[str, Any] = {
                "path": self.location,
                "tenant": self._tenant,
                "cards": one("SELECT COUNT(*) FROM cards WHERE tenant = ?"),
                "sessions": one("SELECT COUNT(*) FROM sessions WHERE tenant = ?"),
                "messages": one("SELECT COUNT(*) FROM messages WHERE tenant = ?"),
                "users": one("SELECT COUNT(DISTINCT user_id) FROM cards "
                             "WHERE tenant = ? AND user_id IS NOT NULL"),
                "superseded": one("SELECT COUNT(*) FROM cards "
                                  "WHERE tenant = ? AND superseded_by IS NOT NULL"),
                "by_type": dict(db.execute(
                    "SELECT type, COUNT(*) FROM cards WHERE tenant = ? GROUP BY type "
                    "ORDER BY 2 DESC", tenant)),
                "keyword_terms": int(db.execute("SELECT COUNT(*) FROM terms").fetchone()[0]),
                "vectors": dict(db.execute(
                    "SELECT model, COUNT(*) FROM vectors WHERE tenant = ? GROUP BY model",
                    tenant)),
                "embedder": self.get_meta("embedder"),
            }
        if self.location != ":memory:":
            out["bytes"] = sum(
                Path(self.location + suffix).stat().st_size
                for suffix in ("", "-wal") if Path(self.location + suffix).exists()
            )
        return out

    # -- agent runtime: offloaded messages and saved state (precis.runtime) --------------

    def put_offload(self, offload_id: str, session_id: str, messages_json: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO offloads (tenant, id, session_id, created_at, "
                       "messages) VALUES (?, ?, ?, ?, ?)",
                       (self._tenant, offload_id, session_id, utc_now(), messages_json))

    def get_offload(self, offload_id: str) -> str | None:
        with self._s.lock:
            row = self._s.db.execute(
                "SELECT messages FROM offloads WHERE tenant = ? AND id = ?",
                (self._tenant, offload_id),
            ).fetchone()
        return None if row is None else str(row[0])

    def offload_ids(self, session_id: str) -> list[str]:
        with self._s.lock:
            rows = self._s.db.execute(
                "SELECT id FROM offloads WHERE tenant = ? AND session_id = ? "
                "ORDER BY created_at, id",
                (self._tenant, session_id),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def delete_offloads(self, session_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM offloads WHERE tenant = ? AND session_id = ?",
                       (self._tenant, session_id))

    def save_state(self, session_id: str, state_json: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO runtime_state (tenant, session_id, saved_at, "
                       "state) VALUES (?, ?, ?, ?)",
                       (self._tenant, session_id, utc_now(), state_json))

    def load_state(self, session_id: str) -> str | None:
        with self._s.lock:
            row = self._s.db.execute(
                "SELECT state FROM runtime_state WHERE tenant = ? AND session_id = ?",
                (self._tenant, session_id),
            ).fetchone()
        return None if row is None else str(row[0])

    def swap_state(self, session_id: str, expected: str | None, state_json: str) -> bool:
        with self._write() as db:
            row = db.execute(
                "SELECT state FROM runtime_state WHERE tenant = ? AND session_id = ?",
                (self._tenant, session_id),
            ).fetchone()
            if (None if row is None else str(row[0])) != expected:
                return False
            db.execute("INSERT OR REPLACE INTO runtime_state (tenant, session_id, saved_at, "
                       "state) VALUES (?, ?, ?, ?)",
                       (self._tenant, session_id, utc_now(), state_json))
        return True

    def delete_state(self, session_id: str) -> bool:
        with self._write() as db:
            gone = db.execute("DELETE FROM runtime_state WHERE tenant = ? AND session_id = ?",
                              (self._tenant, session_id)).rowcount
            db.execute("DELETE FROM offloads WHERE tenant = ? AND session_id = ?",
                       (self._tenant, session_id))
        return bool(gone)

    def state_ids(self) -> list[str]:
        with self._s.lock:
            rows = self._s.db.execute(
                "SELECT session_id FROM runtime_state WHERE tenant = ? "
                "ORDER BY saved_at, session_id", (self._tenant,),
            ).fetchall()
        return [str(r[0]) for r in rows]

    # -- API keys (store-wide) ------------------------------------------------------------

    def add_key(self, key: ApiKey, digest: str) -> None:
        check_tenant(key.tenant, where="key.tenant")
        with self._write() as db:
            try:
                db.execute(f"INSERT INTO api_keys ({_KEY_COLUMNS}, digest) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (key.id, key.tenant, key.name, key.created_at or utc_now(),
                            key.revoked_at, digest))
            except sqlite3.IntegrityError:
                raise StoreError(f"an API key {key.id!r} exists already",
                                 where=self.location) from None

    def find_key(self, digest: str) -> ApiKey | None:
        with self._s.lock:
            row = self._s.db.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE digest = ? AND revoked_at IS NULL",
                (digest,),
            ).fetchone()
        return None if row is None else ApiKey(*row)

    def api_keys(self) -> list[ApiKey]:
        with self._s.lock:
            rows = self._s.db.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, rowid").fetchall()
        return [ApiKey(*r) for r in rows]

    def revoke_key(self, key_id: str) -> ApiKey:
        with self._write() as db:
            db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                       (utc_now(), key_id))
            row = db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?",
                             (key_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no API key {key_id!r}", where=self.location)
        return ApiKey(*row)

    # -- embedding cache (precis.memory.embed.EmbeddingCache) ---------------------------

    def get_many_vectors(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with self._s.lock:
            for chunk in chunks(list(keys), 500):
                for key, vec in self._s.db.execute(
                    f"SELECT key, vec FROM embed_cache WHERE tenant = ? AND model = ? AND key IN "
                    f"({', '.join('?' * len(chunk))})",
                    [self._tenant, model, *chunk],
                ):
                    out[str(key)] = bytes(vec)
        return out

    def put_many_vectors(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO embed_cache (tenant, model, key, vec) "
                "VALUES (?, ?, ?, ?)",
                [(self._tenant, model, k, v) for k, v in items],
            )
