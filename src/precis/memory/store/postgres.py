"""The memory store on PostgreSQL + pgvector, for memory shared by many processes or hosts.

::

    from precis.memory import Memory

    with Memory("postgresql://precis@db.internal/precis") as memory:   # or PRECIS_MEMORY
        memory.ingest("session.json", user="ana")

The same interface as the embedded SQLite store (:class:`~precis.memory.store.base.Store`),
the same cards and the same search results: keyword search is BM25 over precis's own
terms and vector search is pgvector's HNSW (cosine), both run by the database with the
tenant and the filters in the query (:mod:`precis.memory.store._pg_search`), so service
workers stay stateless. Writes are transactions: cards whose id the tenant has are skipped
by the database itself, so the same session ingested by two processes at once is stored
once, and a process killed mid-write leaves the last committed state. The schema has its
own named, append-only migrations (:mod:`precis.memory.store._pg_schema`).

Needs ``pip install 'precis[postgres]'`` (psycopg 3, psycopg_pool, pgvector) and a server
with the ``vector`` extension available (PostgreSQL 13+, pgvector 0.5+).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from precis.errors import NotFoundError, QueryError, StoreError
from precis.memory.card import MemoryCard
from precis.memory.store._pg import STAGE_COPY, Shared
from precis.memory.store._pg_search import keyword_search, model_dim, pg_filter, vector_search
from precis.memory.store._pg_terms import card_terms, index_cards, term_list, unindex_cards
from precis.memory.store._pg_transfer import PostgresTransfer
from precis.memory.store._rows import (
    CARD_COLUMNS,
    SESSION_COLUMNS,
    card_body,
    card_from_row,
    card_row,
    card_timestamp,
    listify,
    session_from_row,
    utc_now,
)
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
    import psycopg

    from precis.memory.keywords import CardTerms

__all__ = ["PostgresStore"]

_KEY_COLUMNS = "id, tenant, name, created_at, revoked_at"
_BACKFILL = 500  # cards given their keyword terms per transaction (after a segmenter change)
_NAMES = [c.strip() for c in CARD_COLUMNS.split(",")]
_CURRENT = "SELECT COALESCE(MAX(version), 0) FROM history WHERE tenant = %s AND card_id = %s"


class PostgresStore(PostgresTransfer):
    """The PostgreSQL store (see the module docstring). ``url`` is a ``postgresql://`` URL;
    ``pool_size`` bounds the connections this process opens (threads share them);
    ``cache_mb`` the keyword posting blocks it keeps once read (blocks never change, so a
    kept block is always current: the database says which blocks a term has)."""

    def __init__(self, url: str, *, tenant: str = DEFAULT_TENANT, pool_size: int = 4,
                 cache_mb: int = 128, timeout: float = 30.0) -> None:
        self._tenant = check_tenant(tenant)
        self._s = Shared(url, pool_size=pool_size, timeout=timeout, cache_mb=cache_mb)
        self._backfill()

    # -- housekeeping -------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._s.location

    @property
    def tenant(self) -> str:
        return self._tenant

    def for_tenant(self, tenant: str) -> PostgresStore:
        """This store bound to ``tenant``, sharing the connection pool."""
        check_tenant(tenant)
        view = object.__new__(PostgresStore)
        view._s = self._s
        view._tenant = tenant
        return view

    def close(self) -> None:
        self._s.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_meta(self, key: str) -> str | None:
        rows = self._s.read("SELECT value FROM meta WHERE key = %s", (key,))
        return None if not rows else str(rows[0][0])

    def set_meta(self, key: str, value: str) -> None:
        self._s.write(lambda cur: cur.execute(
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
            "SET value = excluded.value", (key, value)))

    def _backfill(self) -> None:
        """Give keyword terms to the cards without them (after a segmenter change), a batch
        per transaction; processes doing it at once take different batches."""
        def batch(cur: psycopg.Cursor[Any]) -> int:
            cur.execute(f"SELECT key, tenant, {CARD_COLUMNS} FROM cards WHERE length IS NULL "
                        "ORDER BY key LIMIT %s FOR UPDATE SKIP LOCKED", (_BACKFILL,))
            rows = cur.fetchall()
            by_tenant: dict[str, list[tuple[int, MemoryCard]]] = {}
            for row in rows:
                by_tenant.setdefault(row[1], []).append((int(row[0]), card_from_row(row[2:])))
            for tenant, cards in sorted(by_tenant.items()):
                self._index(cur, tenant, cards)
            return len(rows)

        while self._s.write(batch):
            pass

    def _index(self, cur: psycopg.Cursor[Any], tenant: str,
               cards: Sequence[tuple[int, MemoryCard]]) -> None:
        found = card_terms(self._s.terms(), cur, tenant, [c for _, c in cards])
        cur.execute(
            "UPDATE cards c SET length = x.length, terms = x.terms FROM unnest(%s::bigint[], "
            "%s::real[], %s::text[]) AS x(key, length, terms) WHERE c.key = x.key",
            ([k for k, _ in cards], [float(t.length) for t in found],
             [term_list(t) for t in found]))
        index_cards(cur, tenant, [(k, t) for (k, _), t in zip(cards, found)])

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
        if vectors is not None and model is not None and len(cards):
            self._vector_model(model, int(vectors.shape[1]))

        def work(cur: psycopg.Cursor[Any]) -> list[str]:
            if session is not None:
                self._put_session(cur, session)
            if messages:
                cur.execute(
                    "INSERT INTO messages SELECT %s, * FROM unnest(%s::text[], %s::int[], "
                    "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) "
                    "ON CONFLICT DO NOTHING",
                    (tenant, *map(list, zip(*[
                        (m.session_id, m.index, m.message_id, m.role, m.speaker, m.timestamp,
                         m.text) for m in messages]))))
            now = utc_now()
            stamped = [c if c.created_at and c.updated_at else c.with_changes(
                created_at=c.created_at or now, updated_at=c.updated_at or c.created_at or now)
                for c in cards]
            found = card_terms(self._s.terms(), cur, tenant, stamped) if stamped else []
            keys = self._insert_cards(cur, stamped, found)
            new: list[tuple[int, MemoryCard]] = []
            indexed: list[tuple[int, CardTerms]] = []
            for card, terms in zip(stamped, found):  # a card given twice is added once
                key = keys.pop(card.id, None)
                if key is not None:
                    new.append((key, card))
                    indexed.append((key, terms))
            added = [c.id for _, c in new]
            # a card's history starts on its first change (the card row is version 1),
            # except for a card added again after a delete: its history goes on
            cur.execute(
                "INSERT INTO history SELECT tenant, card_id, MAX(version) + 1, 'created', %s, "
                "NULL FROM history WHERE tenant = %s AND card_id = ANY(%s) "
                "GROUP BY tenant, card_id", (now, tenant, added))
            if vectors is not None and model is not None and new:
                rows = {c.id: i for i, c in enumerate(cards)}
                self._put_vectors(cur, model, [(k, vectors[rows[c.id]]) for k, c in new])
            index_cards(cur, tenant, indexed)
            return added

        return self._s.write(work)

    def _put_session(self, cur: psycopg.Cursor[Any], s: SessionRecord) -> None:
        cur.execute(
            f"INSERT INTO sessions (tenant, {SESSION_COLUMNS}) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant, id) DO UPDATE "
            "SET (user_id, agent_id, source, content_hash, format, title, ingested_at, "
            "message_count, metadata) = (excluded.user_id, excluded.agent_id, excluded.source, "
            "excluded.content_hash, excluded.format, excluded.title, excluded.ingested_at, "
            "excluded.message_count, excluded.metadata)",
            (self._tenant, s.id, s.user_id, s.agent_id, s.source, s.content_hash, s.format,
             s.title, s.ingested_at or utc_now(), s.message_count,
             json.dumps(s.metadata, ensure_ascii=False)))

    def _insert_cards(self, cur: psycopg.Cursor[Any], cards: Sequence[MemoryCard],
                      terms: Sequence[CardTerms]) -> dict[str, int]:
        """Insert the cards the tenant lacks (with their terms' length and list); their keys
        by id."""
        if not cards:
            return {}
        # COPY into this connection's staging table (emptied at commit), then one insert
        with cur.copy(STAGE_COPY) as copy:
            for number, (card, found) in enumerate(zip(cards, terms)):
                copy.write_row((number, *card_row(card), card_timestamp(card),
                                float(found.length), term_list(found)))
        cur.execute(
            f"INSERT INTO cards (tenant, {CARD_COLUMNS}, event_ts, length, terms) SELECT %s, "
            f"{CARD_COLUMNS}, event_ts, length, terms FROM precis_stage ORDER BY number "
            "ON CONFLICT (tenant, id) DO NOTHING RETURNING id, key", (self._tenant,))
        return {str(cid): int(key) for cid, key in cur.fetchall()}

    def _vector_model(self, model: str, dim: int) -> None:
        """Record ``model``'s vector length and create its HNSW index on first use."""
        known = model_dim(self._s, model)
        if known is None:
            from psycopg import sql

            def create(cur: psycopg.Cursor[Any]) -> int:
                cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("precis:" + model,))
                cur.execute("SELECT dim FROM vector_models WHERE model = %s", (model,))
                row = cur.fetchone()
                if row is not None:
                    return int(row[0])
                cur.execute("SELECT count(*) FROM vector_models")
                name = f"vectors_hnsw_{int(cur.fetchone()[0]) + 1}"  # type: ignore[index]
                cur.execute("INSERT INTO vector_models VALUES (%s, %s, %s)", (model, dim, name))
                cur.execute(sql.SQL(
                    "CREATE INDEX {name} ON vectors USING hnsw ((vec::vector({dim})) "
                    "vector_cosine_ops) WHERE model = {model}").format(
                        name=sql.Identifier(name), dim=sql.Literal(dim),
                        model=sql.Literal(model)))
                return dim

            known = self._s.models[model] = self._s.write(create)
        if known != dim:
            raise StoreError(f"vectors of {dim} values for the model {model!r}, whose stored "
                             f"vectors have {known}", where=self.location)

    def _put_vectors(self, cur: psycopg.Cursor[Any], model: str,
                     rows: Sequence[tuple[int, Any]]) -> None:
        import numpy as np

        cur.executemany(
            "INSERT INTO vectors VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, model, card_key) "
            "DO UPDATE SET vec = excluded.vec",
            [(self._tenant, model, key, np.asarray(vec, dtype=np.float32)) for key, vec in rows])

    def put_vectors(self, model: str, card_ids: Sequence[str], vectors: np.ndarray) -> None:
        if not len(card_ids):
            return
        self._vector_model(model, int(vectors.shape[1]))

        def work(cur: psycopg.Cursor[Any]) -> None:
            keys = self._keys(cur, card_ids)
            self._put_vectors(cur, model, [(keys[c], v) for c, v in zip(card_ids, vectors)
                                           if c in keys])

        self._s.write(work)

    def _keys(self, cur: psycopg.Cursor[Any], card_ids: Sequence[str]) -> dict[str, int]:
        cur.execute("SELECT id, key FROM cards WHERE tenant = %s AND id = ANY(%s)",
                    (self._tenant, list(card_ids)))
        return {str(cid): int(key) for cid, key in cur.fetchall()}

    def _locked(self, cur: psycopg.Cursor[Any], card_id: str
                ) -> tuple[int, float | None, str | None, MemoryCard]:
        cur.execute(f"SELECT key, length, terms, {CARD_COLUMNS} FROM cards WHERE tenant = %s "
                    "AND id = %s FOR UPDATE", (self._tenant, card_id))
        row = cur.fetchone()
        if row is None:
            raise NotFoundError(f"no memory card {card_id!r}", where=self.location)
        return int(row[0]), row[1], row[2], card_from_row(row[3:])

    def _record(self, cur: psycopg.Cursor[Any], card_id: str, action: str,
                card: MemoryCard | None) -> None:
        cur.execute(
            f"INSERT INTO history SELECT %s, %s, ({_CURRENT}) + 1, %s, %s, %s",
            (self._tenant, card_id, self._tenant, card_id, action, utc_now(),
             None if card is None else json.dumps(card.to_dict(), ensure_ascii=False)))

    def _keep_first_version(self, cur: psycopg.Cursor[Any], old: MemoryCard) -> None:
        """Before a card first changes, write its first version into its history."""
        data = json.dumps(old.to_dict(), ensure_ascii=False)
        cur.execute("SELECT 1 FROM history WHERE tenant = %s AND card_id = %s LIMIT 1",
                    (self._tenant, old.id))
        if cur.fetchone():
            cur.execute("UPDATE history SET card = %s WHERE tenant = %s AND card_id = %s "
                        "AND card IS NULL AND action = 'created'", (data, self._tenant, old.id))
        else:
            cur.execute("INSERT INTO history VALUES (%s, %s, 1, 'created', %s, %s)",
                        (self._tenant, old.id, old.created_at or utc_now(), data))

    def update(self, card_id: str, **changes: Any) -> MemoryCard:
        """Change a card's fields (not its id); the old version stays in its history."""
        if "id" in changes:
            raise QueryError("a card's id cannot be changed", where=card_id)

        def work(cur: psycopg.Cursor[Any]) -> MemoryCard:
            key, length, terms, old = self._locked(cur, card_id)
            self._keep_first_version(cur, old)
            try:
                new = MemoryCard.from_dict(
                    {**old.to_dict(), **listify(changes), "updated_at": utc_now()},
                    where=card_id)
            except TypeError as err:
                raise QueryError(str(err), where=card_id) from None
            cur.execute(
                f"UPDATE cards SET ({CARD_COLUMNS}, event_ts) = ("
                + ", ".join(["%s"] * (len(_NAMES) + 1)) + ") WHERE key = %s",
                (*card_row(new), card_timestamp(new), key))
            if card_body(new) != card_body(old):
                unindex_cards(cur, self._tenant, [(key, length, terms)])
                self._index(cur, self._tenant, [(key, new)])
            if new.content != old.content:
                cur.execute("DELETE FROM vectors WHERE tenant = %s AND card_key = %s",
                            (self._tenant, key))
            action = "superseded" if new.superseded_by and not old.superseded_by else "updated"
            self._record(cur, card_id, action, new)
            return new

        return self._s.write(work)

    def delete(self, card_id: str) -> None:
        """Remove a card from search; its history keeps what it said."""
        def work(cur: psycopg.Cursor[Any]) -> None:
            key, length, terms, old = self._locked(cur, card_id)
            self._keep_first_version(cur, old)
            unindex_cards(cur, self._tenant, [(key, length, terms)])
            cur.execute("DELETE FROM vectors WHERE tenant = %s AND card_key = %s",
                        (self._tenant, key))
            cur.execute("DELETE FROM cards WHERE key = %s", (key,))
            cur.execute("UPDATE cards SET superseded_by = NULL WHERE tenant = %s "
                        "AND superseded_by = %s", (self._tenant, card_id))
            self._record(cur, card_id, "deleted", None)

        self._s.write(work)

    # -- reading ------------------------------------------------------------------------

    def get(self, card_id: str) -> MemoryCard:
        rows = self._s.read(f"SELECT {CARD_COLUMNS} FROM cards WHERE tenant = %s AND id = %s",
                            (self._tenant, card_id))
        if not rows:
            raise NotFoundError(f"no memory card {card_id!r}", where=self.location)
        return card_from_row(rows[0])

    def get_many(self, card_ids: Sequence[str]) -> list[MemoryCard]:
        """The cards that exist among ``card_ids``, in the order asked."""
        if not card_ids:
            return []
        rows = self._s.read(f"SELECT {CARD_COLUMNS} FROM cards WHERE tenant = %s "
                            "AND id = ANY(%s)", (self._tenant, list(card_ids)))
        found = {str(r[0]): card_from_row(r) for r in rows}
        return [found[i] for i in card_ids if i in found]

    def history(self, card_id: str) -> list[CardVersion]:
        rows = self._s.read("SELECT version, action, at, card FROM history WHERE tenant = %s "
                            "AND card_id = %s ORDER BY version", (self._tenant, card_id))
        if not rows:  # never changed: the stored card is its only version
            stored = self.get(card_id)
            return [CardVersion(card_id, 1, "created", stored.created_at or "", stored)]
        out = []
        for version, action, at, data in rows:
            if data is not None:
                card: MemoryCard | None = MemoryCard.from_dict(json.loads(data))
            elif action == "created":
                card = self.get(card_id)  # never changed since: the stored card is version 1
            else:
                card = None
            out.append(CardVersion(card_id, int(version), str(action), str(at), card))
        return out

    def cards(
        self, filters: Filters = NO_FILTERS, *, limit: int | None = None, offset: int = 0
    ) -> Iterator[MemoryCard]:
        """Cards matching ``filters`` in time order (event time, then insertion)."""
        where, params = pg_filter(filters, self._tenant)
        sql = f"SELECT {CARD_COLUMNS} FROM cards c WHERE {where} ORDER BY event_ts, key"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        if offset:
            sql += " OFFSET %s"
            params.append(offset)
        for row in self._s.read(sql, params):
            yield card_from_row(row)

    def count(self, filters: Filters = NO_FILTERS) -> int:
        where, params = pg_filter(filters, self._tenant)
        return int(self._s.read(f"SELECT count(*) FROM cards c WHERE {where}", params)[0][0])

    def keyword_search(
        self, words: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Cards holding any of ``words``, the ``limit`` best by BM25 (higher is better),
        among those passing ``filters``."""
        return keyword_search(self._s, self._tenant, words, filters, limit)

    def vector_search(
        self, query: np.ndarray, model: str, filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Cards nearest to ``query`` among those with a ``model`` vector (cosine)."""
        return vector_search(self._s, self._tenant, query, model, filters, limit)

    def missing_vectors(self, model: str, limit: int) -> list[MemoryCard]:
        rows = self._s.read(
            f"SELECT {CARD_COLUMNS} FROM cards c WHERE c.tenant = %s AND NOT EXISTS (SELECT 1 "
            "FROM vectors v WHERE v.tenant = c.tenant AND v.model = %s AND v.card_key = c.key) "
            "ORDER BY c.key LIMIT %s", (self._tenant, model, limit))
        return [card_from_row(r) for r in rows]

    def messages(self, session_id: str, start: int, stop: int) -> list[StoredMessage]:
        """The session's original messages with index in ``[start, stop)``."""
        rows = self._s.read(
            "SELECT session_id, idx, message_id, role, speaker, timestamp, text FROM messages "
            "WHERE tenant = %s AND session_id = %s AND idx >= %s AND idx < %s ORDER BY idx",
            (self._tenant, session_id, start, stop))
        return [StoredMessage(*r) for r in rows]

    def messages_in(self, ranges: Sequence[tuple[str, int, int]]
                    ) -> list[list[StoredMessage]]:
        """:meth:`messages` for each (session id, start, stop), in one query."""
        out: list[list[StoredMessage]] = [[] for _ in ranges]
        if not ranges:
            return out
        rows = self._s.read(
            "SELECT w.n, m.session_id, m.idx, m.message_id, m.role, m.speaker, m.timestamp, "
            "m.text FROM unnest(%s::text[], %s::int[], %s::int[]) WITH ORDINALITY "
            "AS w(session_id, lo, hi, n) JOIN messages m ON m.tenant = %s "
            "AND m.session_id = w.session_id AND m.idx >= w.lo AND m.idx < w.hi "
            "ORDER BY w.n, m.idx", ([r[0] for r in ranges], [r[1] for r in ranges],
                                    [r[2] for r in ranges], self._tenant))
        for n, *message in rows:
            out[int(n) - 1].append(StoredMessage(*message))
        return out

    def session(self, session_id: str) -> SessionRecord | None:
        rows = self._s.read(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant = %s "
                            "AND id = %s", (self._tenant, session_id))
        return session_from_row(rows[0]) if rows else None

    def sessions(self) -> list[SessionRecord]:
        rows = self._s.read(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant = %s "
                            "ORDER BY ingested_at, id", (self._tenant,))
        return [session_from_row(r) for r in rows]

    def stats(self) -> dict[str, Any]:
        t = (self._tenant,)
        one = self._s.read
        return {
            "path": self.location,
            "tenant": self._tenant,
            "cards": int(one("SELECT count(*) FROM cards WHERE tenant = %s", t)[0][0]),
            "sessions": int(one("SELECT count(*) FROM sessions WHERE tenant = %s", t)[0][0]),
            "messages": int(one("SELECT count(*) FROM messages WHERE tenant = %s", t)[0][0]),
            "users": int(one("SELECT count(DISTINCT user_id) FROM cards WHERE tenant = %s "
                             "AND user_id IS NOT NULL", t)[0][0]),
            "superseded": int(one("SELECT count(*) FROM cards WHERE tenant = %s AND "
                                  "superseded_by IS NOT NULL", t)[0][0]),
            "by_type": dict(one("SELECT type, count(*) FROM cards WHERE tenant = %s "
                                "GROUP BY type ORDER BY 2 DESC, 1", t)),
            "keyword_terms": int(one("SELECT count(*) FROM terms WHERE tenant = %s AND df > 0",
                                     t)[0][0]),
            "vectors": dict(one("SELECT model, count(*) FROM vectors WHERE tenant = %s "
                                "GROUP BY model ORDER BY model", t)),
            "embedder": self.get_meta("embedder"),
        }

    # -- agent runtime: offloaded messages and saved state (precis.runtime) --------------

    def put_offload(self, offload_id: str, session_id: str, messages_json: str) -> None:
        self._s.write(lambda cur: cur.execute(
            "INSERT INTO offloads VALUES (%s, %s, %s, %s, %s) ON CONFLICT (tenant, id) DO "
            "UPDATE SET session_id = excluded.session_id, created_at = excluded.created_at, "
            "messages = excluded.messages",
            (self._tenant, offload_id, session_id, utc_now(), messages_json)))

    def get_offload(self, offload_id: str) -> str | None:
        rows = self._s.read("SELECT messages FROM offloads WHERE tenant = %s AND id = %s",
                            (self._tenant, offload_id))
        return str(rows[0][0]) if rows else None

    def offload_ids(self, session_id: str) -> list[str]:
        rows = self._s.read("SELECT id FROM offloads WHERE tenant = %s AND session_id = %s "
                            "ORDER BY created_at, id", (self._tenant, session_id))
        return [str(r[0]) for r in rows]

    def delete_offloads(self, session_id: str) -> None:
        self._s.write(lambda cur: cur.execute(
            "DELETE FROM offloads WHERE tenant = %s AND session_id = %s",
            (self._tenant, session_id)))

    def save_state(self, session_id: str, state_json: str) -> None:
        self._s.write(lambda cur: cur.execute(
            "INSERT INTO runtime_state VALUES (%s, %s, %s, %s) ON CONFLICT (tenant, session_id) "
            "DO UPDATE SET saved_at = excluded.saved_at, state = excluded.state",
            (self._tenant, session_id, utc_now(), state_json)))

    def load_state(self, session_id: str) -> str | None:
        rows = self._s.read("SELECT state FROM runtime_state WHERE tenant = %s "
                            "AND session_id = %s", (self._tenant, session_id))
        return str(rows[0][0]) if rows else None

    def swap_state(self, session_id: str, expected: str | None, state_json: str) -> bool:
        """Save ``state_json`` only if the saved state is still ``expected`` (``None``: no
        state saved yet); whether it was saved. Atomic across processes."""
        def work(cur: psycopg.Cursor[Any]) -> bool:
            if expected is None:
                cur.execute("INSERT INTO runtime_state VALUES (%s, %s, %s, %s) "
                            "ON CONFLICT (tenant, session_id) DO NOTHING",
                            (self._tenant, session_id, utc_now(), state_json))
            else:
                cur.execute("UPDATE runtime_state SET saved_at = %s, state = %s WHERE tenant = "
                            "%s AND session_id = %s AND state = %s",
                            (utc_now(), state_json, self._tenant, session_id, expected))
            return cur.rowcount == 1

        return self._s.write(work)

    def delete_state(self, session_id: str) -> bool:
        def work(cur: psycopg.Cursor[Any]) -> bool:
            cur.execute("DELETE FROM runtime_state WHERE tenant = %s AND session_id = %s",
                        (self._tenant, session_id))
            gone = cur.rowcount
            cur.execute("DELETE FROM offloads WHERE tenant = %s AND session_id = %s",
                        (self._tenant, session_id))
            return bool(gone)

        return self._s.write(work)

    def state_ids(self) -> list[str]:
        rows = self._s.read("SELECT session_id FROM runtime_state WHERE tenant = %s "
                            "ORDER BY saved_at, session_id", (self._tenant,))
        return [str(r[0]) for r in rows]

    # -- API keys (store-wide) ------------------------------------------------------------

    def add_key(self, key: ApiKey, digest: str) -> None:
        check_tenant(key.tenant, where="key.tenant")
        if self._s.read("SELECT 1 FROM api_keys WHERE id = %s", (key.id,)):
            raise StoreError(f"an API key {key.id!r} exists already", where=self.location)
        self._s.write(lambda cur: cur.execute(
            f"INSERT INTO api_keys ({_KEY_COLUMNS}, digest) VALUES (%s, %s, %s, %s, %s, %s)",
            (key.id, key.tenant, key.name, key.created_at or utc_now(), key.revoked_at,
             digest)))

    def find_key(self, digest: str) -> ApiKey | None:
        rows = self._s.read(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE digest = %s "
                            "AND revoked_at IS NULL", (digest,))
        return ApiKey(*rows[0]) if rows else None

    def api_keys(self) -> list[ApiKey]:
        rows = self._s.read(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, seq")
        return [ApiKey(*r) for r in rows]

    def revoke_key(self, key_id: str) -> ApiKey:
        def work(cur: psycopg.Cursor[Any]) -> tuple[Any, ...] | None:
            cur.execute("UPDATE api_keys SET revoked_at = %s WHERE id = %s "
                        "AND revoked_at IS NULL", (utc_now(), key_id))
            cur.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,))
            return cur.fetchone()

        row = self._s.write(work)
        if row is None:
            raise NotFoundError(f"no API key {key_id!r}", where=self.location)
        return ApiKey(*row)

    # -- embedding cache (precis.memory.embed.EmbeddingCache) ---------------------------

    def get_many_vectors(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        rows = self._s.read("SELECT key, vec FROM embed_cache WHERE tenant = %s AND model = %s "
                            "AND key = ANY(%s)", (self._tenant, model, list(keys)))
        return {str(k): bytes(v) for k, v in rows}

    def put_many_vectors(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        if not items:
            return
        self._s.write(lambda cur: cur.execute(
            "INSERT INTO embed_cache SELECT %s, %s, * FROM unnest(%s::text[], %s::bytea[]) "
            "ON CONFLICT (tenant, model, key) DO UPDATE SET vec = excluded.vec",
            (self._tenant, model, [k for k, _ in items], [bytes(v) for _, v in items])))
