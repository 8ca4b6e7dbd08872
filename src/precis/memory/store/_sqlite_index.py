"""The SQLite store's in-memory search state: BM25 postings, vector indexes and the cards'
filter columns, one set per open file, shared by the store objects of every tenant.

They are loaded on first use and brought up to date when any connection has written since
(two counters in ``meta`` per kind): cards appended are added, any other change reloads.
The indexes rank row ids of every tenant; a search passes the row ids its tenant and
filters allow (:meth:`SearchIndexes.allowed`) into the ranking, so another tenant's card
is never a candidate (when one tenant owns every card, nothing needs passing).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from precis.memory.card import MemoryCard
from precis.memory.store._rows import (
    CARD_COLUMNS,
    card_body,
    card_from_row,
    chunks,
    context_text,
    iso_timestamp,
    unpack,
)
from precis.memory.store.base import Filters

if TYPE_CHECKING:
    import numpy as np

    from precis.memory.columns import CardColumns
    from precis.memory.keywords import KeywordIndex, Terms
    from precis.memory.vectors import VectorIndex

__all__ = ["SearchIndexes"]

_BACKFILL = 1000  # cards given their keyword terms per transaction (older files)


class SearchIndexes:
    """The in-memory indexes of one SQLite connection (see the module docstring). Callers
    hold ``lock`` around every method."""

    def __init__(
        self,
        db: sqlite3.Connection,
        lock: threading.RLock,
        write: Callable[[], AbstractContextManager[sqlite3.Connection]],
        meta: Callable[[str], str | None],
    ) -> None:
        self._db, self.lock, self._write, self._meta = db, lock, write, meta
        self.vectors: dict[str, VectorIndex] = {}
        self._vector_marks: dict[str, tuple[int, int, int]] = {}
        self._term_maker: Terms | None = None
        self.vocabulary: dict[str, int] = {}  # term -> id, as in the terms table
        self._vocabulary_top = 0  # the highest term id read from the table
        self._keywords: KeywordIndex | None = None
        self._keyword_changes = -1  # the keyword_changes count the index was built at
        self._columns: CardColumns | None = None
        self._columns_changes = -1
        self._columns_generation = 0  # which load of the columns (keys _last_allowed)
        self._last_allowed: tuple[tuple[Any, ...], np.ndarray | None] | None = None

    def close(self) -> None:
        if self._term_maker is not None:
            self._term_maker.close()

    def forget_vocabulary(self) -> None:
        """After a rollback: the vocabulary may hold ids of terms rolled back."""
        self.vocabulary.clear()
        self._vocabulary_top = 0

    # -- keyword terms ----------------------------------------------------------------------

    def terms(self) -> Terms:
        if self._term_maker is None:
            from precis.memory.keywords import Terms

            self._term_maker = Terms()
        return self._term_maker

    def put_terms(self, db: sqlite3.Connection,
                  cards: Sequence[tuple[int, str, MemoryCard]]) -> None:
        """Write the keyword terms of these (rowid, tenant, card) triples (inside a write)."""
        if not cards:
            return
        import numpy as np

        found = self.terms().cards(
            [(card_body(card), _context(db, tenant, card)) for _, tenant, card in cards])
        vocabulary = self.vocabulary
        unknown = sorted({t for f in found for t in f.freqs if t not in vocabulary})
        if unknown:
            db.executemany("INSERT OR IGNORE INTO terms (term) VALUES (?)",
                           [(t,) for t in unknown])
            for chunk in chunks(unknown, 500):
                vocabulary.update(db.execute(
                    f"SELECT term, id FROM terms WHERE term IN ({', '.join('?' * len(chunk))})",
                    chunk,
                ))
        rows = []
        for (rowid, tenant, _), terms in zip(cards, found):
            ids = np.fromiter((vocabulary[t] for t in terms.freqs), dtype=np.int32,
                              count=len(terms.freqs))
            freqs = np.fromiter(terms.freqs.values(), dtype=np.float32, count=len(ids))
            rows.append((rowid, tenant, terms.length, ids.tobytes(), freqs.tobytes()))
        db.executemany("INSERT OR REPLACE INTO card_terms (card_rowid, tenant, length, terms, "
                       "freqs) VALUES (?, ?, ?, ?, ?)", rows)

    def keyword_index(self) -> KeywordIndex:
        """The in-memory BM25 index, brought up to date with the file: cards added since
        the last look are appended; an update or delete (``keyword_changes``) rebuilds
        it, first giving terms to any card without them (files from before the index)."""
        import numpy as np

        from precis.memory.keywords import KeywordIndex

        db = self._db
        changes = int(self._meta("keyword_changes") or 0)
        if self._keywords is None or changes != self._keyword_changes:
            self._backfill_terms()
            self._keywords, self._keyword_changes = KeywordIndex(), changes
        index = self._keywords
        for term, term_id in db.execute("SELECT term, id FROM terms WHERE id > ?",
                                        (self._vocabulary_top,)):
            self.vocabulary[term] = term_id
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
        """Give keyword terms to the cards without them, every tenant's (store upkeep)."""
        while True:
            rows = self._db.execute(
                f"SELECT c.rowid, c.tenant, {CARD_COLUMNS} FROM cards c WHERE NOT EXISTS "
                "(SELECT 1 FROM card_terms t WHERE t.card_rowid = c.rowid) "
                "ORDER BY c.rowid LIMIT ?", (_BACKFILL,),
            ).fetchall()
            if not rows:
                return
            with self._write() as db:
                self.put_terms(db, [(int(r[0]), str(r[1]), card_from_row(r[2:])) for r in rows])

    # -- filters ----------------------------------------------------------------------------

    def allowed(self, tenant: str, filters: Filters) -> np.ndarray | None:
        """The sorted row ids of ``tenant``'s cards passing ``filters`` (``None``: every
        card of the store, when they are all the tenant's and nothing else is asked), from
        the in-memory columns (the same conditions as ``filter_sql``)."""
        columns = self.card_columns()
        only_tenant = columns.only("tenant", tenant)
        if filters.empty and only_tenant:
            return None
        key = (tenant, filters, self._columns_generation, len(columns))
        if self._last_allowed is not None and self._last_allowed[0] == key:
            return self._last_allowed[1]  # the vector search after the keyword one
        since = iso_timestamp(filters.since, where="since") if filters.since else None
        until = (iso_timestamp(filters.until, where="until", end=True) if filters.until
                 else None)
        equal = {column: value for column, value in (
            ("user_id", filters.user), ("agent_id", filters.agent),
            ("session_id", filters.session), ("speaker", filters.speaker),
        ) if value is not None}
        if not only_tenant:
            equal["tenant"] = tenant
        allowed = columns.allowed(equal=equal, types=filters.types, since=since, until=until,
                                  current_only=not filters.include_superseded)
        self._last_allowed = (key, allowed)
        return allowed

    def card_columns(self) -> CardColumns:
        """The cards' filterable fields in memory, brought up to date like the keyword
        index: appended cards are added; an update or delete (``card_changes``) reloads."""
        from precis.memory.columns import FIELDS, CardColumns

        changes = int(self._meta("card_changes") or 0)
        if self._columns is None or changes != self._columns_changes:
            self._columns, self._columns_changes = CardColumns(), changes
            self._columns_generation += 1
        columns = self._columns
        columns.add(self._db.execute(
            f"SELECT rowid, id, {', '.join(FIELDS)}, event_ts, superseded_by IS NOT NULL "
            "FROM cards WHERE rowid > ? ORDER BY rowid", (columns.last_id,),
        ).fetchall())
        return columns

    def named(self, rowids: np.ndarray, scores: np.ndarray) -> list[tuple[str, float]]:
        """(card id, score) pairs for row ids (rows deleted meanwhile are left out)."""
        names = self.card_columns().names(rowids)
        return [(name, float(score)) for name, score in zip(names, scores.tolist())
                if name is not None]

    # -- vectors ----------------------------------------------------------------------------

    def vector_index(self, model: str) -> VectorIndex | None:
        """The in-memory index of ``model``'s vectors, brought up to date with the file.

        Two counters in ``meta`` tell what changed since the last look (two key lookups per
        search): vectors appended by ``add`` (this or another process) are loaded
        incrementally; any other change (updates, deletes, backfills) reloads them all."""
        from precis.memory.vectors import VectorIndex

        db = self._db
        mark = (int(self._meta("vector_changes") or 0),
                int(self._meta("vector_appends") or 0))
        index = self.vectors.get(model)
        seen = self._vector_marks.get(model)
        if index is not None and seen is not None and seen[:2] == mark:
            return index
        if index is not None and seen is not None and seen[0] == mark[0]:
            rows = db.execute(
                "SELECT card_rowid, vec FROM vectors WHERE model = ? AND card_rowid > ? "
                "ORDER BY card_rowid",
                (model, seen[2]),
            ).fetchall()
            if rows:
                ids, vecs = unpack(rows)
                index.add(ids, vecs)
            self._vector_marks[model] = (*mark, int(rows[-1][0]) if rows else seen[2])
            return index
        rows = db.execute(
            "SELECT card_rowid, vec FROM vectors WHERE model = ? ORDER BY card_rowid", (model,)
        ).fetchall()
        if not rows:
            self.vectors.pop(model, None)
            self._vector_marks.pop(model, None)
            return None
        ids, vecs = unpack(rows)
        state = db.execute("SELECT data FROM index_state WHERE model = ?", (model,)).fetchone()
        if state is not None:
            index = VectorIndex.from_state(bytes(state[0]), ids, vecs)
        else:
            index = VectorIndex(vecs.shape[1])
            index.add(ids, vecs)
        self.vectors[model] = index
        self._vector_marks[model] = (*mark, int(ids[-1]))
        if index.trained and (state is None or bytes(state[0]) != index.export_state()):
            self.save_vector_state(model)  # the next process restores instead of retraining
        return index

    def save_vector_state(self, model: str) -> None:
        """Keep the trained vector index in the file so the next process need not retrain."""
        index = self.vectors.get(model)
        if index is None:
            return
        data = index.export_state()
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO index_state VALUES (?, ?, ?)", (model, len(index), data)
            )


def _context(db: sqlite3.Connection, tenant: str, card: MemoryCard) -> str:
    """The messages just before and after the card's sources (the question a reply
    answers, the reaction to a statement), indexed with a lower weight so a card is
    also found by the words of its neighbours."""
    if not card.message_indexes:
        return ""
    rows = db.execute(
        "SELECT text FROM messages WHERE tenant = ? AND session_id = ? AND idx IN (?, ?) "
        "ORDER BY idx",
        (tenant, card.session_id, min(card.message_indexes) - 1, max(card.message_indexes) + 1),
    ).fetchall()
    return context_text(r[0] for r in rows)
