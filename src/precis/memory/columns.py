"""The fields searches filter on (tenant, user, agent, session, speaker, type, time,
superseded), and the card ids they return, for every card of the store, in memory as numpy
columns.

A filtered search needs the set of cards its filters allow before it ranks (filters are
enforced in the store, not applied to the results). Asking SQLite for that set costs a
Python object per allowed card: milliseconds for a user's 20,000 cards, a tenth of a
second for a month of a million-card store. Held as columns, the same set is a few
vectorised comparisons. Text values are stored as small integer codes. The indexes rank
row ids; the ids are named here too, without a query per search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["FIELDS", "CardColumns"]

# the card table's columns, in the order rows are given to CardColumns.add (after the
# row id and the card id)
FIELDS = ("tenant", "user_id", "agent_id", "session_id", "speaker", "type")
_NONE = -1  # the code of a missing value: equal to no filter value


class CardColumns:
    """Filterable fields of cards keyed by increasing int64 row ids."""

    def __init__(self) -> None:
        self.ids = np.empty(0, dtype=np.int64)
        self._names: list[str] = []
        self._codes: dict[str, dict[str, int]] = {f: {} for f in FIELDS}
        self._values = {f: np.empty(0, dtype=np.int32) for f in FIELDS}
        self._times = np.empty(0, dtype=np.float64)
        self._superseded = np.empty(0, dtype=bool)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def last_id(self) -> int:
        return int(self.ids[-1]) if len(self.ids) else 0

    def add(self, rows: Sequence[Sequence[Any]]) -> None:
        """Append cards given as ``(rowid, card id, *FIELDS, event_ts, superseded)`` rows,
        row ids above every id already held, in increasing order."""
        if not rows:
            return
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if (len(self.ids) and ids[0] <= self.ids[-1]) or np.any(np.diff(ids) <= 0):
            raise ValueError("cards must be added in increasing id order")
        self.ids = np.concatenate([self.ids, ids])
        self._names.extend(str(r[1]) for r in rows)
        for place, field in enumerate(FIELDS, start=2):
            codes = self._codes[field]
            new = np.fromiter(
                (_NONE if r[place] is None else codes.setdefault(str(r[place]), len(codes))
                 for r in rows), dtype=np.int32, count=len(rows))
            self._values[field] = np.concatenate([self._values[field], new])
        after = len(FIELDS) + 2
        self._times = np.concatenate([self._times, np.fromiter(
            (float(r[after]) for r in rows), dtype=np.float64, count=len(rows))])
        self._superseded = np.concatenate([self._superseded, np.fromiter(
            (bool(r[after + 1]) for r in rows), dtype=bool, count=len(rows))])

    def allowed(self, *, equal: dict[str, str], types: Sequence[str] = (),
                since: float | None = None, until: float | None = None,
                current_only: bool = False) -> npt.NDArray[np.int64]:
        """The sorted ids of the cards whose ``equal`` fields have these values, whose type
        is one of ``types`` (any when empty), with ``since <= event_ts < until``, and not
        superseded when ``current_only``."""
        mask = np.ones(len(self.ids), dtype=bool)
        for field, value in equal.items():
            code = self._codes[field].get(value)
            if code is None:
                return self.ids[:0]
            mask &= self._values[field] == code
        if types:
            known = self._codes["type"]
            wanted = np.zeros(len(known) + 1, dtype=bool)  # the last place: no type
            wanted[[known[t] for t in types if t in known]] = True
            if not wanted.any():
                return self.ids[:0]
            mask &= wanted[self._values["type"]]
        if since is not None:
            mask &= self._times >= since
        if until is not None:
            mask &= self._times < until
        if current_only:
            mask &= ~self._superseded
        return self.ids[mask]

    def only(self, field: str, value: str) -> bool:
        """Whether every card held has ``value`` in ``field`` (true when none is held)."""
        codes = self._codes[field]
        if not codes:
            return True
        if set(codes) != {value}:
            return False
        return not bool(np.any(self._values[field] == _NONE))

    def names(self, ids: npt.NDArray[np.int64]) -> list[str | None]:
        """The card ids of row ids (``None`` for a row id not held)."""
        at = np.searchsorted(self.ids, ids)
        out: list[str | None] = []
        for place, rowid in zip(at.tolist(), ids.tolist()):
            held = place < len(self.ids) and int(self.ids[place]) == rowid
            out.append(self._names[place] if held else None)
        return out
