"""Memory stores: the interface and the embedded SQLite implementation."""

from __future__ import annotations

from precis.memory.store.base import CardVersion, Filters, SessionRecord, Store, StoredMessage
from precis.memory.store.sqlite import SQLiteStore, default_store_path

__all__ = [
    "CardVersion",
    "Filters",
    "SQLiteStore",
    "SessionRecord",
    "Store",
    "StoredMessage",
    "default_store_path",
]
