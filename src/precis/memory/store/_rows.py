"""Rows and conditions any SQL store shares: a card as a row and back, filters as a SQL
condition, the times cards are filed under, the text a card's keywords come from."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from precis.errors import QueryError, StoreError
from precis.memory.card import MemoryCard
from precis.memory.store.base import Filters, SessionRecord

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CARD_COLUMNS",
    "SESSION_COLUMNS",
    "card_body",
    "card_from_row",
    "card_row",
    "card_timestamp",
    "chunks",
    "context_text",
    "filter_sql",
    "iso_timestamp",
    "session_from_row",
    "utc_now",
]

CARD_COLUMNS = (
    "id, content, type, tags, topics, entities, session_id, message_ids, message_indexes, "
    "fragment_ids, speaker, user_id, agent_id, scope, event_time, created_at, updated_at, "
    "superseded_by, language, metadata"
)
SESSION_COLUMNS = ("id, user_id, agent_id, source, content_hash, format, title, ingested_at, "
                   "message_count, metadata")
_JSON_FIELDS = ("tags", "topics", "entities", "message_ids", "message_indexes", "fragment_ids")
NAMES = tuple(c.strip() for c in CARD_COLUMNS.split(","))
CREATED = NAMES.index("created_at")
assert NAMES[CREATED + 1] == "updated_at"


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def iso_timestamp(value: str, *, where: str, end: bool = False) -> float:
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
                return iso_timestamp(value, where="card")
            except QueryError:
                continue
    return 0.0


def filter_sql(filters: Filters, tenant: str, alias: str = "c") -> tuple[str, list[Any]]:
    """The SQL condition and its parameters for ``tenant``'s cards passing ``filters``
    (qmark style: ``?`` placeholders)."""
    clauses = [f"{alias}.tenant = ?"]
    params: list[Any] = [tenant]
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
        params.append(iso_timestamp(filters.since, where="since"))
    if filters.until:
        clauses.append(f"{alias}.event_ts < ?")
        params.append(iso_timestamp(filters.until, where="until", end=True))
    if not filters.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    return " AND ".join(clauses), params


CONTEXT_CHARS = 600  # of each neighbouring message, indexed with a card


def context_text(texts: Iterable[str]) -> str:
    """What the keyword index holds of the messages around a card's sources (the question a
    reply answers, the reaction to a statement): the start of each, in order."""
    return " ".join(t[:CONTEXT_CHARS] for t in texts)


def card_body(card: MemoryCard) -> str:
    """What the keyword index holds for a card: its words, speaker, tags and entities."""
    parts = [card.content, card.speaker or "", " ".join(card.tags), " ".join(card.topics),
             " ".join(card.entities)]
    return " \n".join(p for p in parts if p)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value else ("{}" if isinstance(value, dict)
                                                                else "[]")


def card_row(card: MemoryCard) -> tuple[Any, ...]:
    """The card's values in :data:`CARD_COLUMNS` order (lists and metadata as JSON)."""
    return tuple(
        _dump(list(value) if isinstance(value, tuple) else value)
        if name in _JSON_FIELDS or name == "metadata" else value
        for name, value in ((n, getattr(card, n)) for n in NAMES)
    )


def card_from_row(row: Sequence[Any]) -> MemoryCard:
    data: dict[str, Any] = {}
    for name, value in zip(NAMES, row):
        if name in _JSON_FIELDS:
            data[name] = () if value == "[]" else tuple(json.loads(value))
        elif name == "metadata":
            data[name] = {} if value == "{}" else json.loads(value)
        else:
            data[name] = value
    return MemoryCard(**data)


def session_from_row(row: Sequence[Any]) -> SessionRecord:
    """A session from its values in :data:`SESSION_COLUMNS` order."""
    sid, user, agent, source, content_hash, fmt, title, at, count, metadata = row
    return SessionRecord(sid, user, agent, source, content_hash, fmt, title, at, count,
                         json.loads(metadata))


def listify(changes: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in changes.items()}


def blob(vector: Any) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def int64(values: Sequence[int]) -> np.ndarray:
    import numpy as np

    return np.asarray(values, dtype=np.int64)


def unpack(rows: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Row ids and a float32 matrix from ``(rowid, vector bytes)`` rows."""
    import numpy as np

    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    dim = len(rows[0][1]) // 4
    if any(len(r[1]) != 4 * dim for r in rows):
        raise StoreError("the stored vectors of one model differ in length")
    # a bytearray, so the array over it is writable (the index works on rows in place)
    data = bytearray().join(r[1] for r in rows)
    return ids, np.frombuffer(data, dtype=np.float32).reshape(len(rows), dim)


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
