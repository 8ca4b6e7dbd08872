"""The embedded memory store: one SQLite file (WAL) with keyword terms and vectors.

Writes run in ``BEGIN IMMEDIATE`` transactions, so two processes writing at once queue on
SQLite's lock instead of losing each other's cards, and a process killed mid-write leaves
the last committed state. Each card's keyword terms (:mod:`precis.memory.keywords`) and
vectors live in the file; searches use in-memory indexes (BM25 postings, and
:mod:`precis.memory.vectors`) loaded on first use and brought up to date when another
connection has written since: cards appended are added, any other change reloads.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from precis.errors import NotFoundError, QueryError, StoreError
from precis.memory.card import MemoryCard
from precis.memory.store._schema import MIGRATIONS
from precis.memory.store.base import (
    NO_FILTERS,
    CardVersion,
    Filters,
    SessionRecord,
    StoredMessage,
)
from precis.memory.text import SEGMENTER, index_text

if TYPE_CHECKING:
    import numpy as np

    from precis.memory.columns import CardColumns
    from precis.memory.keywords import KeywordIndex, Terms
    from precis.memory.vectors import VectorIndex

__all__ = ["SQLiteStore", "default_store_path", "utc_now"]

_CARD_COLUMNS = (
    "id, content, type, tags, topics, entities, session_id, message_ids, message_indexes, "
    "fragment_ids, speaker, user_id, agent_id, scope, event_time, created_at, updated_at, "
    "superseded_by, language, metadata"
)
_CONTEXT_CHARS = 600
# a history entry: (card id, action, time, the card as JSON or NULL, card id)
_RECORD = ("INSERT INTO history SELECT ?, COALESCE(MAX(version), 0) + 1, ?, ?, ? "
           "FROM history WHERE card_id = ?")
_BACKFILL = 1000  # cards given their keyword terms per transaction (older files)
_JSON_FIELDS = ("tags", "topics", "entities", "message_ids", "message_indexes", "fragment_ids")


def default_store_path() -> Path:
    from precis.paths import precis_home

    return precis_home(create=True) / "memory.sqlite3"


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def _timestamp(value: str, *, where: str, end: bool = False) -> float:
    """Seconds since the epoch of an ISO date / date-time (naive means UTC). A bare date as an
    ``end`` bound covers its whole day."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(
            f"{value!r} is not an ISO date or date-time (e.g. 2024-05-01 or 2024-05-01T09:30)",
            where=where,
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if end and len(text) <= 10:
        moment += timedelta(days=1)
    return moment.timestamp()


def card_timestamp(card: MemoryCard) -> float:
    """The time a card is filed under: its event time, else its creation time."""
    for value in (card.event_time, card.created_at):
        if value:
            try:
                return _timestamp(value, where="card")
            except QueryError:
                continue
    return 0.0


def filter_sql(filters: Filters, alias: str = "c") -> tuple[str, list[Any]]:
    """The SQL condition (``"1"`` when there is none) and its parameters for ``filters``."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("user_id", filters.user),
        ("agent_id", filters.agent),
        ("session_id", filters.session),
        ("speaker", filters.speaker),
    ):
        if value is not None:
            clauses.append(f"{alias}.{column} = ?")
            params.append(value)
    if filters.types:
        clauses.append(f"{alias}.type IN ({', '.join('?' * len(filters.types))})")
        params.extend(filters.types)
    if filters.since:
        clauses.append(f"{alias}.event_ts >= ?")
        params.append(_timestamp(filters.since, where="since"))
    if filters.until:
        clauses.append(f"{alias}.event_ts < ?")
        params.append(_timestamp(filters.until, where="until", end=True))
    if not filters.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    return (" AND ".join(clauses) or "1"), params


def card_body(card: MemoryCard) -> str:
    """What the keyword index holds for a card: its words, speaker, tags and entities."""
    parts = [card.content, card.speaker or "", " ".join(card.tags), " ".join(card.topics),
             " ".join(card.entities)]
    return index_text(" \n".join(p for p in parts if p))


class SQLiteStore:
    """The embedded store (see the module docstring). ``path=None`` opens the default file
    under ``PRECIS_HOME``; ``":memory:"`` gives a private in-memory store (tests)."""

    def __init__(self, path: str | Path | None = None, *, timeout: float = 30.0) -> None:
        target = default_store_path() if path is None else path
        self._path = str(target)
        if self._path != ":memory:":
            p = Path(self._path)
            if p.exists() and not p.is_file():
                raise StoreError("the memory store path is not a file", where=self._path)
            if not p.parent.exists():
                raise StoreError(
                    f"the directory {str(p.parent)!r} does not exist", where=self._path
                )
        self._lock = threading.RLock()
        # the in-memory indexes, loaded on first use (set before _migrate, which may write)
        self._indexes: dict[str, VectorIndex] = {}
        self._index_marks: dict[str, tuple[int, int, int]] = {}
        self._term_maker: Terms | None = None
        self._vocabulary: dict[str, int] = {}  # term -> id, as in the terms table
        self._vocabulary_top = 0  # the highest term id read from the table
        self._keywords: KeywordIndex | None = None
        self._keyword_changes = -1  # the keyword_changes count the index was built at
        self._columns: CardColumns | None = None
        self._columns_changes = -1
        self._columns_generation = 0  # which load of the columns (keys _last_allowed)
        self._last_allowed: tuple[tuple[Any, ...], np.ndarray] | None = None
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._db = sqlite3.connect(
                    self._path, timeout=timeout, isolation_level=None, check_same_thread=False
                )
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                # 64 MiB of pages (default 2): a large store's indexes stay in memory on ingest
                self._db.execute("PRAGMA cache_size=-65536")
                self._migrate()
                break
            except sqlite3.OperationalError as err:
                # a new file being set up by another process at the same moment: switching
                # to WAL can fail at once with "locked" instead of waiting; try again
                if hasattr(self, "_db"):
                    self._db.close()
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise StoreError(
                        f"cannot open the memory store: {err}", where=self._path
                    ) from None
                time.sleep(0.05)
            except sqlite3.DatabaseError as err:
                raise StoreError(
                    f"cannot open the memory store: {err}", where=self._path
                ) from None

    # -- housekeeping -------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._path

    def close(self) -> None:
        with self._lock:
            self._db.close()
            if self._term_maker is not None:
                self._term_maker.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        db = self._db
        db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, at TEXT)")
        applied = {row[0] for row in db.execute("SELECT name FROM migrations")}
        known = {name for name, _ in MIGRATIONS}
        unknown = applied - known
        if unknown:
            raise StoreError(
                "this memory store was written by a newer precis (unknown migrations: "
                + ", ".join(sorted(unknown)) + "); upgrade precis to open it",
                where=self._path,
            )
        for name, script in MIGRATIONS:
            if name in applied:
                continue
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                    db.execute("ROLLBACK")  # another process applied it meanwhile
                    continue
                for statement in _statements(script):
                    db.execute(statement)
                db.execute("INSERT INTO migrations VALUES (?, ?)", (name, utc_now()))
                if name == MIGRATIONS[0][0]:
                    db.execute("INSERT INTO meta VALUES ('segmenter', ?)", (SEGMENTER,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if self.get_meta("segmenter") != SEGMENTER:
            # terms cut by another segmenter would not match this one's queries: drop
            # them; every card gets its terms again on the next search
            with self._write() as db:
                if db.execute("SELECT value FROM meta WHERE key = 'segmenter'"
                              ).fetchone() != (SEGMENTER,):
                    db.execute("DELETE FROM card_terms")
                    db.execute("DELETE FROM terms")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('segmenter', ?)",
                               (SEGMENTER,))
                    _count(db, "keyword_changes")

    def _write(self) -> _Transaction:
        return _Transaction(self)

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

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
        added: list[str] = []
        appended = 0
        with self._write() as db:
            if session is not None:
                db.execute(
                    "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (session.id, session.user_id, session.agent_id, session.source,
                     session.content_hash, session.format, session.title,
                     session.ingested_at or utc_now(), session.message_count,
                     json.dumps(session.metadata, ensure_ascii=False)),
                )
            if messages:
                db.executemany(
                    "INSERT OR IGNORE INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(m.session_id, m.index, m.message_id, m.role, m.speaker, m.timestamp,
                      m.text) for m in messages],
                )
            now = utc_now()
            new: list[tuple[int, MemoryCard]] = []
            stored: list[tuple[str, int, bytes]] = []
            for i, card in enumerate(cards):
                rowid = self._insert_card(db, card, now)
                if rowid is None:
                    continue
                added.append(card.id)
                new.append((rowid, card))
                if vectors is not None and model is not None:
                    stored.append((model, rowid, _blob(vectors[i])))
            # a card's history starts on its first change (the card row is version 1),
            # except for a card added again after a delete: its history goes on
            db.executemany(_RECORD + " GROUP BY card_id",  # no row: no history, no entry
                           [(cid, "created", now, None, cid) for cid in added])
            if stored:
                db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", stored)
                appended = len(stored)
            if appended:
                _count(db, "vector_appends", appended)
            self._put_terms(db, new)
        return added

    def _insert_card(self, db: sqlite3.Connection, card: MemoryCard, now: str) -> int | None:
        row = _card_row(card)
        if not card.created_at or not card.updated_at:
            created = card.created_at or now
            row = (*row[:_CREATED], created, card.updated_at or created, *row[_CREATED + 2:])
            card = card.with_changes(created_at=created, updated_at=card.updated_at or created)
        cursor = db.execute(
            f"INSERT OR IGNORE INTO cards ({_CARD_COLUMNS}, event_ts) "
            f"VALUES ({', '.join('?' * 21)})",
            (*row, card_timestamp(card)),
        )
        if cursor.rowcount == 0:
            return None
        return int(cursor.lastrowid or 0)

    def _forget_vocabulary(self) -> None:
        self._vocabulary.clear()
        self._vocabulary_top = 0

    def _terms(self) -> Terms:
        if self._term_maker is None:
            from precis.memory.keywords import Terms

            self._term_maker = Terms()
        return self._term_maker

    def _put_terms(self, db: sqlite3.Connection, cards: Sequence[tuple[int, MemoryCard]]
                   ) -> None:
        """Write the keyword terms of these (rowid, card) pairs (inside a write)."""
        if not cards:
            return
        import numpy as np

        found = self._terms().cards(
            [(card_body(card), self._context(db, card)) for _, card in cards])
        vocabulary = self._vocabulary
        unknown = sorted({t for f in found for t in f.freqs if t not in vocabulary})
        if unknown:
            db.executemany("INSERT OR IGNORE INTO terms (term) VALUES (?)",
                           [(t,) for t in unknown])
            for chunk in _chunks(unknown, 500):
                vocabulary.update(db.execute(
                    f"SELECT term, id FROM terms WHERE term IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ))
        rows = []
        for (rowid, _), terms in zip(cards, found):
            ids = np.fromiter((vocabulary[t] for t in terms.freqs), dtype=np.int32,
                              count=len(terms.freqs))
            freqs = np.fromiter(terms.freqs.values(), dtype=np.float32, count=len(ids))
            rows.append((rowid, terms.length, ids.tobytes(), freqs.tobytes()))
        db.executemany("INSERT OR REPLACE INTO card_terms VALUES (?, ?, ?, ?)", rows)

    @staticmethod
    def _context(db: sqlite3.Connection, card: MemoryCard) -> str:
        """The messages just before and after the card's sources (the question a reply
        answers, the reaction to a statement), indexed with a lower weight so a card is
        also found by the words of its neighbours."""
        if not card.message_indexes:
            return ""
        rows = db.execute(
            "SELECT text FROM messages WHERE session_id = ? AND idx IN (?, ?) ORDER BY idx",
            (card.session_id, min(card.message_indexes) - 1, max(card.message_indexes) + 1),
        ).fetchall()
        return index_text(" ".join(r[0][:_CONTEXT_CHARS] for r in rows))

    def _record(self, db: sqlite3.Connection, card_id: str, action: str,
                card: MemoryCard | None) -> None:
        """Add a history entry. A "created" entry is written without the card (the card row
        holds it) and filled with that first version before the card first changes."""
        db.execute(_RECORD, (
            card_id, action, utc_now(),
            None if card is None else json.dumps(card.to_dict(), ensure_ascii=False), card_id))

    @staticmethod
    def _keep_first_version(db: sqlite3.Connection, old: MemoryCard) -> None:
        """Before a card first changes, write its first version into its history."""
        data = json.dumps(old.to_dict(), ensure_ascii=False)
        if db.execute("SELECT 1 FROM history WHERE card_id = ? LIMIT 1", (old.id,)).fetchone():
            db.execute("UPDATE history SET card = ? WHERE card_id = ? AND card IS NULL "
                       "AND action = 'created'", (data, old.id))
        else:
            db.execute("INSERT INTO history VALUES (?, 1, 'created', ?, ?)",
                       (old.id, old.created_at or utc_now(), data))

    def update(self, card_id: str, **changes: Any) -> MemoryCard:
        """Change a card's fields (not its id); the old version stays in its history."""
        if "id" in changes:
            raise QueryError("a card's id cannot be changed", where=card_id)
        with self._write() as db:
            old = self._get(db, card_id)
            self._keep_first_version(db, old)
            try:
                new = MemoryCard.from_dict(
                    {**old.to_dict(), **_listify(changes), "updated_at": utc_now()},
                    where=card_id,
                )
            except TypeError as err:
                raise QueryError(str(err), where=card_id) from None
            rowid = self._rowid(db, card_id)
            db.execute(
                f"UPDATE cards SET ({_CARD_COLUMNS}, event_ts) = "
                f"({', '.join('?' * 21)}) WHERE rowid = ?",
                (*_card_row(new), card_timestamp(new), rowid),
            )
            if card_body(new) != card_body(old):
                self._put_terms(db, [(rowid, new)])
                _count(db, "keyword_changes")
            _count(db, "card_changes")
            if new.content != old.content:
                db.execute("DELETE FROM vectors WHERE card_rowid = ?", (rowid,))
                _count_vector_change(db)
            action = "superseded" if new.superseded_by and not old.superseded_by else "updated"
            self._record(db, card_id, action, new)
        if new.content != old.content:
            for index in self._indexes.values():
                index.remove(_int64([rowid]))
        return new

    def delete(self, card_id: str) -> None:
        """Remove a card from search; its history keeps what it said."""
        with self._write() as db:
            rowid = self._rowid(db, card_id)
            self._keep_first_version(db, self._get(db, card_id))
            db.execute("DELETE FROM cards WHERE rowid = ?", (rowid,))
            db.execute("DELETE FROM card_terms WHERE card_rowid = ?", (rowid,))
            _count(db, "keyword_changes")
            _count(db, "card_changes")
            db.execute("DELETE FROM vectors WHERE card_rowid = ?", (rowid,))
            db.execute(
                "UPDATE cards SET superseded_by = NULL WHERE superseded_by = ?", (card_id,)
            )
            self._record(db, card_id, "deleted", None)
            _count_vector_change(db)
        for index in self._indexes.values():
            index.remove(_int64([rowid]))

    def put_vectors(self, model: str, card_ids: Sequence[str], vectors: np.ndarray) -> None:
        with self._write() as db:
            for card_id, vector in zip(card_ids, vectors):
                row = db.execute("SELECT rowid FROM cards WHERE id = ?", (card_id,)).fetchone()
                if row is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                        (model, row[0], _blob(vector)),
                    )
            _count_vector_change(db)  # may replace vectors: the loaded indexes reload

    # -- reading ------------------------------------------------------------------------

    def _rowid(self, db: sqlite3.Connection, card_id: str) -> int:
        row = db.execute("SELECT rowid FROM cards WHERE id = ?", (card_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory card {card_id!r}", where=self._path)
        return int(row[0])

    def _get(self, db: sqlite3.Connection, card_id: str) -> MemoryCard:
        row = db.execute(f"SELECT {_CARD_COLUMNS} FROM cards WHERE id = ?", (card_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory card {card_id!r}", where=self._path)
        return _card(row)

    def get(self, card_id: str) -> MemoryCard:
        with self._lock:
            return self._get(self._db, card_id)

    def get_many(self, card_ids: Sequence[str]) -> list[MemoryCard]:
        """The cards that exist among ``card_ids``, in the order asked."""
        found: dict[str, MemoryCard] = {}
        with self._lock:
            for chunk in _chunks(list(card_ids), 500):
                rows = self._db.execute(
                    f"SELECT {_CARD_COLUMNS} FROM cards WHERE id IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for row in rows:
                    found[row[0]] = _card(row)
        return [found[i] for i in card_ids if i in found]

    def history(self, card_id: str) -> list[CardVersion]:
        with self._lock:
            rows = self._db.execute(
                "SELECT version, action, at, card FROM history WHERE card_id = ? "
                "ORDER BY version",
                (card_id,),
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
        where, params = filter_sql(filters)
        sql = f"SELECT {_CARD_COLUMNS} FROM cards c WHERE {where} ORDER BY event_ts, rowid"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        elif offset:
            sql += " LIMIT -1 OFFSET ?"
            params.append(offset)
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        for row in rows:
            yield _card(row)

    def count(self, filters: Filters = NO_FILTERS) -> int:
        where, params = filter_sql(filters)
        with self._lock:
            row = self._db.execute(f"SELECT COUNT(*) FROM cards c WHERE {where}", params)
            return int(row.fetchone()[0])

    def keyword_search(
        self, words: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Cards holding any of ``words``, the ``limit`` best by BM25 (higher is better),
        among those passing ``filters``."""
        with self._lock:
            allowed = self._allowed(filters)  # first: a bad filter is an error even here
            terms = self._terms().query(words)
            if not terms or limit <= 0 or (allowed is not None and not len(allowed)):
                return []
            index = self._keyword_index()
            ids = [self._vocabulary[t] for t in terms if t in self._vocabulary]
            if not ids:
                return []
            rowids, scores = index.search(ids, limit, allowed=allowed)
            return self._named(rowids, scores)

    def _keyword_index(self) -> KeywordIndex:
        """The in-memory BM25 index, brought up to date with the file: cards added since
        the last look are appended; an update or delete (``keyword_changes``) rebuilds
        it, first giving terms to any card without them (files from before the index)."""
        import numpy as np

        from precis.memory.keywords import KeywordIndex

        db = self._db
        changes = int(self.get_meta("keyword_changes") or 0)
        if self._keywords is None or changes != self._keyword_changes:
            self._backfill_terms()
            self._keywords, self._keyword_changes = KeywordIndex(), changes
        index = self._keywords
        for term, term_id in db.execute("SELECT term, id FROM terms WHERE id > ?",
                                        (self._vocabulary_top,)):
            self._vocabulary[term] = term_id
            self._vocabulary_top = max(self._vocabulary_top, term_id)
        rows = db.execute(
            "SELECT card_rowid, length, terms, freqs FROM card_terms WHERE card_rowid > ? "
            "ORDER BY card_rowid", (index.last_id,),
        ).fetchall()
        if rows:
            index.add(
                np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
                lengths=np.fromiter((r[1] for r in rows), dtype=np.float32, count=len(rows)),
                counts=np.fromiter((len(r[2]) // 4 for r in rows), dtype=np.int64,
                                   count=len(rows)),
                terms=np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int32),
                freqs=np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32),
            )
        return index

    def _backfill_terms(self) -> None:
        while True:
            rows = self._db.execute(
                f"SELECT c.rowid, {_CARD_COLUMNS} FROM cards c WHERE NOT EXISTS "
                "(SELECT 1 FROM card_terms t WHERE t.card_rowid = c.rowid) "
                "ORDER BY c.rowid LIMIT ?", (_BACKFILL,),
            ).fetchall()
            if not rows:
                return
            with self._write() as db:
                self._put_terms(db, [(int(r[0]), _card(r[1:])) for r in rows])

    def _allowed(self, filters: Filters) -> np.ndarray | None:
        """The sorted row ids of the cards passing ``filters`` (``None``: all of them),
        from the in-memory columns (the same conditions as :func:`filter_sql`)."""
        if filters.empty:
            return None
        columns = self._card_columns()
        key = (filters, self._columns_generation, len(columns))
        if self._last_allowed is not None and self._last_allowed[0] == key:
            return self._last_allowed[1]  # the vector search after the keyword one
        since = _timestamp(filters.since, where="since") if filters.since else None
        until = _timestamp(filters.until, where="until", end=True) if filters.until else None
        equal = {column: value for column, value in (
            ("user_id", filters.user), ("agent_id", filters.agent),
            ("session_id", filters.session), ("speaker", filters.speaker),
        ) if value is not None}
        allowed = columns.allowed(equal=equal, types=filters.types, since=since, until=until,
                                  current_only=not filters.include_superseded)
        self._last_allowed = (key, allowed)
        return allowed

    def _card_columns(self) -> CardColumns:
        """The cards' filterable fields in memory, brought up to date like the keyword
        index: appended cards are added; an update or delete (``card_changes``) reloads."""
        from precis.memory.columns import FIELDS, CardColumns

        changes = int(self.get_meta("card_changes") or 0)
        if self._columns is None or changes != self._columns_changes:
            self._columns, self._columns_changes = CardColumns(), changes
            self._columns_generation += 1
        columns = self._columns
        columns.add(self._db.execute(
            f"SELECT rowid, id, {', '.join(FIELDS)}, event_ts, superseded_by IS NOT NULL "
            "FROM cards WHERE rowid > ? ORDER BY rowid", (columns.last_id,),
        ).fetchall())
        return columns

    def _named(self, rowids: np.ndarray, scores: np.ndarray) -> list[tuple[str, float]]:
        """(card id, score) pairs for row ids (rows deleted meanwhile are left out)."""
        names = self._card_columns().names(rowids)
        return [(name, float(score)) for name, score in zip(names, scores.tolist())
                if name is not None]

    def vector_search(
        self, query: np.ndarray, model: str, filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Cards nearest to ``query`` among those with a ``model`` vector (cosine)."""
        with self._lock:
            index = self._vector_index(model)
            if index is None or len(index) == 0:
                return []
            allowed = self._allowed(filters)
            if allowed is not None and not len(allowed):
                return []
            ids, scores = index.search(query, limit, allowed=allowed)
            return self._named(ids, scores)

    def _vector_index(self, model: str) -> VectorIndex | None:
        """The in-memory index of ``model``'s vectors, brought up to date with the file.

        Two counters in ``meta`` tell what changed since the last look (two key lookups per
        search): vectors appended by :meth:`add` (this or another process) are loaded
        incrementally; any other change (updates, deletes, backfills) reloads them all."""
        from precis.memory.vectors import VectorIndex

        db = self._db
        mark = (int(self.get_meta("vector_changes") or 0),
                int(self.get_meta("vector_appends") or 0))
        index = self._indexes.get(model)
        seen = self._index_marks.get(model)
        if index is not None and seen is not None and seen[:2] == mark:
            return index
        if index is not None and seen is not None and seen[0] == mark[0]:
            rows = db.execute(
                "SELECT card_rowid, vec FROM vectors WHERE model = ? AND card_rowid > ? "
                "ORDER BY card_rowid",
                (model, seen[2]),
            ).fetchall()
            if rows:
                ids, vecs = _unpack(rows)
                index.add(ids, vecs)
            self._index_marks[model] = (*mark, int(rows[-1][0]) if rows else seen[2])
            return index
        rows = db.execute(
            "SELECT card_rowid, vec FROM vectors WHERE model = ? ORDER BY card_rowid", (model,)
        ).fetchall()
        if not rows:
            self._indexes.pop(model, None)
            self._index_marks.pop(model, None)
            return None
        ids, vecs = _unpack(rows)
        state = db.execute("SELECT data FROM index_state WHERE model = ?", (model,)).fetchone()
        if state is not None:
            index = VectorIndex.from_state(bytes(state[0]), ids, vecs)
        else:
            index = VectorIndex(vecs.shape[1])
            index.add(ids, vecs)
        self._indexes[model] = index
        self._index_marks[model] = (*mark, int(ids[-1]))
        if index.trained and (state is None or not _same_state(bytes(state[0]), index)):
            self.save_index_state(model)  # the next process restores instead of retraining
        return index

    def save_index_state(self, model: str) -> None:
        """Keep the trained vector index in the file so the next process need not retrain."""
        index = self._indexes.get(model)
        if index is None:
            return
        data = index.export_state()
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO index_state VALUES (?, ?, ?)", (model, len(index), data)
            )

    def missing_vectors(self, model: str, limit: int) -> list[MemoryCard]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_CARD_COLUMNS} FROM cards c WHERE NOT EXISTS (SELECT 1 FROM vectors v "
                "WHERE v.model = ? AND v.card_rowid = c.rowid) ORDER BY c.rowid LIMIT ?",
                (model, limit),
            ).fetchall()
        return [_card(r) for r in rows]

    def messages(self, session_id: str, start: int, stop: int) -> list[StoredMessage]:
        """The session's original messages with index in ``[start, stop)``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT session_id, idx, message_id, role, speaker, timestamp, text FROM messages "
                "WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx",
                (session_id, start, stop),
            ).fetchall()
        return [StoredMessage(*r) for r in rows]

    def session(self, session_id: str) -> SessionRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else _session(row)

    def sessions(self) -> list[SessionRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM sessions ORDER BY ingested_at, id").fetchall()
        return [_session(r) for r in rows]

    def stats(self) -> dict[str, Any]:
        with self._lock:
            db = self._db
            by_type = dict(db.execute(
                "SELECT type, COUNT(*) FROM cards GROUP BY type ORDER BY 2 DESC"
            ))
            vectors = dict(db.execute("SELECT model, COUNT(*) FROM vectors GROUP BY model"))
            out: dict[str, Any] = {
                "path": self._path,
                "cards": int(db.execute("SELECT COUNT(*) FROM cards").fetchone()[0]),
                "sessions": int(db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]),
                "messages": int(db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]),
                "users": int(db.execute(
                    "SELECT COUNT(DISTINCT user_id) FROM cards WHERE user_id IS NOT NULL"
                ).fetchone()[0]),
                "superseded": int(db.execute(
                    "SELECT COUNT(*) FROM cards WHERE superseded_by IS NOT NULL"
                ).fetchone()[0]),
                "by_type": by_type,
                "keyword_terms": int(db.execute("SELECT COUNT(*) FROM terms").fetchone()[0]),
                "vectors": vectors,
                "embedder": self.get_meta("embedder"),
            }
        if self._path != ":memory:":
            out["bytes"] = sum(
                Path(self._path + suffix).stat().st_size
                for suffix in ("", "-wal") if Path(self._path + suffix).exists()
            )
        return out

    # -- agent runtime: offloaded messages and saved state (precis.runtime) --------------

    def put_offload(self, offload_id: str, session_id: str, messages_json: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO offloads VALUES (?, ?, ?, ?)",
                       (offload_id, session_id, utc_now(), messages_json))

    def get_offload(self, offload_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT messages FROM offloads WHERE id = ?", (offload_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def offload_ids(self, session_id: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM offloads WHERE session_id = ? ORDER BY created_at, id",
                (session_id,),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def delete_offloads(self, session_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM offloads WHERE session_id = ?", (session_id,))

    def save_state(self, session_id: str, state_json: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO runtime_state VALUES (?, ?, ?)",
                       (session_id, utc_now(), state_json))

    def load_state(self, session_id: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM runtime_state WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    # -- embedding cache (precis.memory.embed.EmbeddingCache) ---------------------------

    def get_many_vectors(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with self._lock:
            for chunk in _chunks(list(keys), 500):
                for key, vec in self._db.execute(
                    f"SELECT key, vec FROM embed_cache WHERE model = ? AND key IN "
                    f"({', '.join('?' * len(chunk))})",
                    [model, *chunk],
                ):
                    out[str(key)] = bytes(vec)
        return out

    def put_many_vectors(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        with self._write() as db:
            db.executemany(
                "INSERT OR REPLACE INTO embed_cache VALUES (?, ?, ?)",
                [(model, k, v) for k, v in items],
            )


class EmbeddingCacheView:
    """The store's embedding cache under the ``EmbeddingCache`` protocol's method names."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        return self._store.get_many_vectors(model, keys)

    def put_many(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        self._store.put_many_vectors(model, items)


class _Transaction:
    """``with store._write() as db:`` runs the block in one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        self._store._lock.acquire()
        try:
            self._store._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            self._store._lock.release()
            raise StoreError(
                f"the memory store is busy or read-only: {err}", where=self._store._path
            ) from None
        return self._store._db

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        db = self._store._db
        try:
            if kind is None:
                try:
                    db.execute("COMMIT")
                except sqlite3.OperationalError as err:
                    db.execute("ROLLBACK")
                    self._store._forget_vocabulary()
                    raise StoreError(
                        f"could not commit to the memory store: {err}", where=self._store._path
                    ) from None
            else:
                db.execute("ROLLBACK")
                self._store._forget_vocabulary()  # it may hold ids of terms rolled back
        finally:
            self._store._lock.release()


def _same_state(saved: bytes, index: VectorIndex) -> bool:
    return saved == index.export_state()


def _count(db: sqlite3.Connection, key: str, by: int = 1) -> None:
    db.execute(
        "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
        "SET value = CAST(value AS INTEGER) + excluded.value",
        (key, str(by)),
    )


def _count_vector_change(db: sqlite3.Connection) -> None:
    _count(db, "vector_changes")


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _listify(changes: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in changes.items()}


_NAMES = tuple(c.strip() for c in _CARD_COLUMNS.split(","))
_CREATED = _NAMES.index("created_at")
assert _NAMES[_CREATED + 1] == "updated_at"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value else ("{}" if isinstance(value, dict)
                                                                else "[]")


def _card_row(card: MemoryCard) -> tuple[Any, ...]:
    return tuple(
        _dump(list(value) if isinstance(value, tuple) else value)
        if name in _JSON_FIELDS or name == "metadata" else value
        for name, value in ((n, getattr(card, n)) for n in _NAMES)
    )


def _card(row: Sequence[Any]) -> MemoryCard:
    data: dict[str, Any] = {}
    for name, value in zip(_NAMES, row):
        if name in _JSON_FIELDS:
            data[name] = () if value == "[]" else tuple(json.loads(value))
        elif name == "metadata":
            data[name] = {} if value == "{}" else json.loads(value)
        else:
            data[name] = value
    return MemoryCard(**data)


def _session(row: Sequence[Any]) -> SessionRecord:
    sid, user, agent, source, content_hash, fmt, title, at, count, metadata = row
    return SessionRecord(sid, user, agent, source, content_hash, fmt, title, at, count,
                         json.loads(metadata))


def _blob(vector: Any) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def _int64(values: Sequence[int]) -> np.ndarray:
    import numpy as np

    return np.asarray(values, dtype=np.int64)


def _unpack(rows: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    dim = len(rows[0][1]) // 4
    if any(len(r[1]) != 4 * dim for r in rows):
        raise StoreError("the stored vectors of one model differ in length")
    # a bytearray, so the array over it is writable (the index works on rows in place)
    data = bytearray().join(r[1] for r in rows)
    return ids, np.frombuffer(data, dtype=np.float32).reshape(len(rows), dim)


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
