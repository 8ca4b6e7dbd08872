"""Memory stores: the interface, the embedded SQLite store and the PostgreSQL store
(``precis[postgres]``, imported only when a ``postgresql://`` location is opened)."""

from __future__ import annotations

from precis.memory.store._open import open_store
from precis.memory.store.base import (
    DEFAULT_TENANT,
    ApiKey,
    CardVersion,
    Filters,
    SessionRecord,
    Store,
    StoredMessage,
    check_tenant,
)
from precis.memory.store.sqlite import SQLiteStore, default_store_path

__all__ = [
    "DEFAULT_TENANT",
    "ApiKey",
    "CardVersion",
    "Filters",
    "SQLiteStore",
    "SessionRecord",
    "Store",
    "StoredMessage",
    "check_tenant",
    "default_store_path",
    "open_store",
]
