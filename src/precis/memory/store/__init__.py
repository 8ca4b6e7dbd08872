"""Memory stores: the interface and the embedded SQLite implementation."""

from __future__ import annotations

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
]
