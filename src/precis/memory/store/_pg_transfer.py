"""The PostgreSQL store's side of moving a store (:mod:`precis.memory.migrate`): its cards
in the order they were added, their vectors and their history as stored, for the store
object's tenant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.memory.card import MemoryCard
from precis.memory.store._rows import CARD_COLUMNS, card_from_row
from precis.memory.store.base import HistoryRow

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from precis.memory.store._pg import Shared

__all__ = ["PostgresTransfer"]


class PostgresTransfer:
    """Mixed into :class:`~precis.memory.store.postgres.PostgresStore`."""

    _s: Shared
    _tenant: str

    def cards_after(self, position: int, limit: int) -> list[tuple[int, MemoryCard]]:
        rows = self._s.read(f"SELECT key, {CARD_COLUMNS} FROM cards WHERE tenant = %s AND "
                            "key > %s ORDER BY key LIMIT %s", (self._tenant, position, limit))
        return [(int(r[0]), card_from_row(r[1:])) for r in rows]

    def vectors_of(self, model: str, card_ids: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        rows = self._s.read(
            "SELECT c.id, v.vec FROM cards c JOIN vectors v ON v.tenant = c.tenant AND "
            "v.model = %s AND v.card_key = c.key WHERE c.tenant = %s AND c.id = ANY(%s)",
            (model, self._tenant, list(card_ids)))
        # pgvector gives its Vector (to_numpy) or, in older versions, an array
        return {str(c): np.asarray(getattr(v, "to_numpy", lambda v=v: v)(), dtype=np.float32)
                for c, v in rows}

    def history_after(self, after: tuple[str, int], limit: int) -> list[HistoryRow]:
        rows = self._s.read(
            "SELECT card_id, version, action, at, card FROM history WHERE tenant = %s "
            "AND (card_id, version) > (%s, %s) ORDER BY card_id, version LIMIT %s",
            (self._tenant, *after, limit))
        return [(str(c), int(v), str(a), str(t), d) for c, v, a, t, d in rows]

    def put_history(self, rows: Sequence[HistoryRow]) -> int:
        if not rows:
            return 0

        def work(cur: psycopg.Cursor[Any]) -> int:
            cur.execute(
                "INSERT INTO history SELECT %s, * FROM unnest(%s::text[], %s::int[], "
                "%s::text[], %s::text[], %s::text[]) ON CONFLICT DO NOTHING",
                (self._tenant, *map(list, zip(*rows))))
            return int(cur.rowcount)

        return self._s.write(work)
