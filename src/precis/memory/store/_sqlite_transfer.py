"""The SQLite store's side of moving a store (:mod:`precis.memory.migrate`): its cards in
row order, their vectors and their history as stored, for the store object's tenant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from precis.memory.card import MemoryCard
from precis.memory.store._rows import CARD_COLUMNS, card_from_row, chunks
from precis.memory.store.base import HistoryRow

if TYPE_CHECKING:
    import numpy as np

    from precis.memory.store._sqlite_db import SharedFile

__all__ = ["SQLiteTransfer"]


class SQLiteTransfer:
    """Mixed into :class:`~precis.memory.store.sqlite.SQLiteStore`."""

    _s: SharedFile
    _tenant: str

    def cards_after(self, position: int, limit: int) -> list[tuple[int, MemoryCard]]:
        with self._s.lock:
            rows = self._s.db.execute(
                f"SELECT rowid, {CARD_COLUMNS} FROM cards WHERE tenant = ? AND rowid > ? "
                "ORDER BY rowid LIMIT ?", (self._tenant, position, limit)).fetchall()
        return [(int(r[0]), card_from_row(r[1:])) for r in rows]

    def vectors_of(self, model: str, card_ids: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        with self._s.lock:
            for chunk in chunks(list(card_ids), 500):
                marks = ", ".join("?" * len(chunk))
                for card_id, vec in self._s.db.execute(
                    "SELECT c.id, v.vec FROM cards c JOIN vectors v ON v.card_rowid = c.rowid "
                    f"AND v.model = ? WHERE c.tenant = ? AND c.id IN ({marks})",
                    (model, self._tenant, *chunk)):
                    out[str(card_id)] = np.frombuffer(bytes(vec), dtype=np.float32)
        return out

    def history_after(self, after: tuple[str, int], limit: int) -> list[HistoryRow]:
        with self._s.lock:
            rows = self._s.db.execute(
                "SELECT card_id, version, action, at, card FROM history WHERE tenant = ? "
                "AND (card_id, version) > (?, ?) ORDER BY card_id, version LIMIT ?",
                (self._tenant, *after, limit)).fetchall()
        return [(str(c), int(v), str(a), str(t), d) for c, v, a, t, d in rows]

    def put_history(self, rows: Sequence[HistoryRow]) -> int:
        with self._s.write() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO history (tenant, card_id, version, action, at, card) "
                "VALUES (?, ?, ?, ?, ?, ?)", [(self._tenant, *row) for row in rows])
            return int(db.total_changes - before)
