"""What every memory store offers: the small interface the search and the CLI use.

The embedded default is :class:`~precis.memory.store.sqlite.SQLiteStore`; a PostgreSQL +
pgvector store implements the same methods. Filters (user, agent, session, type, time) are
applied by the store inside its queries, never after the fact.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from precis.memory.card import MemoryCard

if TYPE_CHECKING:
    import numpy as np

__all__ = ["NO_FILTERS", "CardVersion", "Filters", "SessionRecord", "Store", "StoredMessage"]


@dataclass(frozen=True)
class Filters:
    """Which cards a search or a listing may see. ``since`` / ``until`` are ISO dates or
    date-times compared with the card's event time (its creation time when it has none);
    ``until`` is inclusive of its whole day when it is a bare date."""

    user: str | None = None
    agent: str | None = None
    session: str | None = None
    types: tuple[str, ...] = ()
    speaker: str | None = None
    since: str | None = None
    until: str | None = None
    include_superseded: bool = True

    @property
    def empty(self) -> bool:
        return self == Filters()


NO_FILTERS = Filters()


@dataclass(frozen=True)
class StoredMessage:
    """One original message of an ingested session, kept so every card leads back to it."""

    session_id: str
    index: int
    message_id: str
    role: str
    speaker: str | None
    timestamp: str | None
    text: str


@dataclass(frozen=True)
class SessionRecord:
    """An ingested session: where it came from and what it produced."""

    id: str
    user_id: str | None = None
    agent_id: str | None = None
    source: str | None = None
    content_hash: str = ""
    format: str | None = None
    title: str | None = None
    ingested_at: str = ""
    message_count: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CardVersion:
    """One entry of a card's history: what it was after ``action`` at ``at``."""

    card_id: str
    version: int
    action: str  # "created", "updated", "superseded", "deleted", "imported"
    at: str
    card: MemoryCard | None


class Store(Protocol):
    """The memory store interface (see the module docstring)."""

    @property
    def location(self) -> str: ...

    def add(
        self,
        cards: Sequence[MemoryCard],
        *,
        session: SessionRecord | None = None,
        messages: Sequence[StoredMessage] = (),
        vectors: np.ndarray | None = None,
        model: str | None = None,
    ) -> list[str]:
        """Insert cards (those whose id exists are skipped) in one transaction; the ids added."""
        ...

    def get(self, card_id: str) -> MemoryCard: ...

    def get_many(self, card_ids: Sequence[str]) -> list[MemoryCard]: ...

    def update(self, card_id: str, **changes: Any) -> MemoryCard: ...

    def delete(self, card_id: str) -> None: ...

    def history(self, card_id: str) -> list[CardVersion]: ...

    def cards(
        self, filters: Filters = NO_FILTERS, *, limit: int | None = None, offset: int = 0
    ) -> Iterator[MemoryCard]: ...

    def count(self, filters: Filters = NO_FILTERS) -> int: ...

    def keyword_search(
        self, words: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]: ...

    def vector_search(
        self, query: np.ndarray, model: str, filters: Filters, limit: int
    ) -> list[tuple[str, float]]: ...

    def missing_vectors(self, model: str, limit: int) -> list[MemoryCard]: ...

    def put_vectors(self, model: str, card_ids: Sequence[str], vectors: np.ndarray) -> None: ...

    def messages(self, session_id: str, start: int, stop: int) -> list[StoredMessage]: ...

    def session(self, session_id: str) -> SessionRecord | None: ...

    def sessions(self) -> list[SessionRecord]: ...

    def stats(self) -> dict[str, Any]: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def close(self) -> None: ...
