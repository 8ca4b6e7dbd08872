"""Long-term memory: memory cards, the store, embedders and hybrid search.

``Memory`` is the entry point (see :mod:`precis.memory.memory`); the pieces are usable alone:
:func:`extract_cards` (conversation -> cards), :class:`SQLiteStore` (the embedded store),
:func:`search` (query understanding + hybrid ranking + post-processing).
"""

from __future__ import annotations

from precis.memory.card import CARD_TYPES, SCOPES, MemoryCard
from precis.memory.extract import Extraction, extract_cards
from precis.memory.memory import IngestReport, Memory
from precis.memory.query import QueryPlan, understand
from precis.memory.search import Hit, SearchResult, search
from precis.memory.store import (
    DEFAULT_TENANT,
    CardVersion,
    Filters,
    SessionRecord,
    SQLiteStore,
    Store,
    StoredMessage,
)

__all__ = [
    "CARD_TYPES",
    "DEFAULT_TENANT",
    "SCOPES",
    "CardVersion",
    "Extraction",
    "Filters",
    "Hit",
    "IngestReport",
    "Memory",
    "MemoryCard",
    "QueryPlan",
    "SQLiteStore",
    "SearchResult",
    "SessionRecord",
    "Store",
    "StoredMessage",
    "extract_cards",
    "search",
    "understand",
]
