"""What every memory store offers: the small interface the search, the CLI and the service use.

The embedded default is :class:`~precis.memory.store.sqlite.SQLiteStore`; a PostgreSQL +
pgvector store implements the same methods. Filters (user, agent, session, type, time) are
applied by the store inside its queries, never after the fact.

Tenants
-------
A store object is **bound to one tenant** (:attr:`Store.tenant`); every method that reads,
writes, searches or deletes cards, sessions, messages, history, offloads or saved runtime
state sees that tenant's rows only. The tenant is a column of every table holding such rows
and a condition of every query on them (inside the store, never a filter applied to the
results), so another tenant's card id is simply not found (:class:`~precis.errors.
NotFoundError`) and the same card id, session id or offload id may exist once per tenant.

- The library and the CLI use :data:`DEFAULT_TENANT` (``"default"``) unless told otherwise;
  a store written before tenants existed has all its rows in that tenant after migration.
- :meth:`Store.for_tenant` gives the same store bound to another tenant. The two objects
  share the connection(s) and caches, so a service opens one store and takes a cheap bound
  view per request; closing any of them closes the shared store.
- Store-wide, not tenant data: :meth:`Store.get_meta` / :meth:`Store.set_meta` (settings such
  as the embedder choice) and the API keys (:meth:`Store.add_key` ...): a key names its
  tenant, so looking one up cannot depend on a tenant already known.

Tenant names are checked by :func:`check_tenant` (1-64 characters of letters, digits,
``_ . -``); a store raises :class:`~precis.errors.ConfigError` for any other.

API keys
--------
The store keeps only a key's SHA-256 digest (:mod:`precis.keys` makes and checks keys); the
key itself is shown once when it is created and cannot be read back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from precis._args import optional_text, shown
from precis._surrogates import clean_text
from precis.errors import ConfigError, QueryError
from precis.memory.card import MemoryCard

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_TENANT",
    "NO_FILTERS",
    "ApiKey",
    "CardVersion",
    "EmbeddingCacheView",
    "Filters",
    "HistoryRow",
    "SessionRecord",
    "Store",
    "StoredMessage",
    "VectorCacheStore",
    "check_tenant",
]

DEFAULT_TENANT = "default"
"""The tenant of the library, the CLI and every row written before tenants existed."""

_TENANT = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def check_tenant(tenant: object, *, where: str = "tenant") -> str:
    """``tenant`` if it is a valid tenant name (1-64 letters, digits, ``_ . -``), else a
    :class:`~precis.errors.ConfigError` naming it."""
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise ConfigError(
            f"a tenant name is 1-64 letters, digits, '_', '.' or '-', not {tenant!r}",
            where=where,
        )
    return tenant


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

    def __post_init__(self) -> None:
        """Every field checked (a :class:`~precis.errors.QueryError` names the wrong one)
        and its text cleaned of lone surrogates; ``types`` may be given as one name or any
        collection of names."""
        for name in ("user", "agent", "session", "speaker", "since", "until"):
            object.__setattr__(self, name, optional_text(getattr(self, name), name))
        types = self.types
        if isinstance(types, str):
            types = (types,)
        elif isinstance(types, (list, set, frozenset)):
            types = tuple(types)
        if not isinstance(types, tuple) or not all(isinstance(t, str) for t in types):
            raise QueryError(f"must be card type names (text), got {shown(self.types)}",
                             where="types")
        object.__setattr__(self, "types", tuple(clean_text(t) for t in types))
        if not isinstance(self.include_superseded, bool):
            raise QueryError(f"must be True or False, got {shown(self.include_superseded)}",
                             where="include_superseded")

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


HistoryRow = tuple[str, int, str, str, "str | None"]
"""A history entry as stored: card id, version, action, time, the card as JSON (or None)."""


@dataclass(frozen=True)
class ApiKey:
    """An API key's record (never the key itself, which only its holder has): ``id`` is
    public (it appears in the key and in listings), ``revoked_at`` is set once revoked."""

    id: str
    tenant: str
    name: str = ""
    created_at: str = ""
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class Store(Protocol):
    """The memory store interface (see the module docstring). Every method below, except
    the meta and key methods, acts on :attr:`tenant`'s rows only."""

    @property
    def location(self) -> str: ...

    @property
    def tenant(self) -> str:
        """The tenant this store object reads and writes."""
        ...

    def for_tenant(self, tenant: str) -> Store:
        """The same store bound to ``tenant`` (checked by :func:`check_tenant`), sharing
        this one's connection and caches (cheap: one per request is fine)."""
        ...

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

    def messages_in(self, ranges: Sequence[tuple[str, int, int]]
                    ) -> list[list[StoredMessage]]:
        """:meth:`messages` for each (session id, start, stop), in one call."""
        ...

    def session(self, session_id: str) -> SessionRecord | None: ...

    def sessions(self) -> list[SessionRecord]: ...

    def stats(self) -> dict[str, Any]: ...

    # -- agent runtime (precis.runtime.ContextMemory): offloads and saved state, by the
    # -- runtime session's id (a ContextMemory session, not an ingested session)

    def put_offload(self, offload_id: str, session_id: str, messages_json: str) -> None: ...

    def get_offload(self, offload_id: str) -> str | None: ...

    def offload_ids(self, session_id: str) -> list[str]: ...

    def delete_offloads(self, session_id: str) -> None: ...

    def save_state(self, session_id: str, state_json: str) -> None: ...

    def load_state(self, session_id: str) -> str | None: ...

    def swap_state(self, session_id: str, expected: str | None, state_json: str) -> bool:
        """Save ``state_json`` only if the saved state is still ``expected`` (``None``: no
        state saved), atomically; whether it was saved. Two service workers changing one
        session at once: one wins, the other is told (never a lost update)."""
        ...

    def delete_state(self, session_id: str) -> bool:
        """Forget a saved runtime state and its offloads; whether there was a state."""
        ...

    def state_ids(self) -> list[str]:
        """The runtime sessions with a saved state, oldest save first."""
        ...

    # -- store-wide: settings and API keys (not bound to the tenant) --------------------

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def add_key(self, key: ApiKey, digest: str) -> None:
        """Record a new key by the SHA-256 hex digest of its secret."""
        ...

    def find_key(self, digest: str) -> ApiKey | None:
        """The active (not revoked) key with this digest, if any."""
        ...

    def api_keys(self) -> list[ApiKey]:
        """Every key, revoked ones too, oldest first."""
        ...

    def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key (NotFoundError if unknown); the key as revoked."""
        ...

    # -- moving a store (precis.memory.migrate): cards in the order they were added, their
    # -- vectors and their history as stored, for the tenant

    def cards_after(self, position: int, limit: int) -> list[tuple[int, MemoryCard]]:
        """Up to ``limit`` cards added after ``position`` (0: from the first), each with
        its position, in the order they were added."""
        ...

    def vectors_of(self, model: str, card_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored ``model`` vectors of these cards (those that have one)."""
        ...

    def history_after(self, after: tuple[str, int], limit: int) -> list[HistoryRow]:
        """Up to ``limit`` history entries after (card id, version) ``after``, in that order,
        as stored (the card as JSON, or None)."""
        ...

    def put_history(self, rows: Sequence[HistoryRow]) -> int:
        """Write history entries as they are (those the store has are kept); how many were
        new."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class VectorCacheStore(Protocol):
    """A store that keeps embeddings by content key (both stores do)."""

    def get_many_vectors(self, model: str, keys: Sequence[str]) -> dict[str, bytes]: ...

    def put_many_vectors(self, model: str, items: Sequence[tuple[str, bytes]]) -> None: ...


class EmbeddingCacheView:
    """A store's embedding cache under the ``EmbeddingCache`` protocol's method names."""

    def __init__(self, store: VectorCacheStore) -> None:
        self._store = store

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        return self._store.get_many_vectors(model, keys)

    def put_many(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        self._store.put_many_vectors(model, items)
