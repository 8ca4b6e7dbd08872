"""Which store a location names: a ``postgresql://`` URL, a ``sqlite:///`` URL or a path.

Every place that takes a store (``Memory(location)``, ``--store``, ``PRECIS_MEMORY``) goes
through :func:`open_store`, so a new kind of store is one entry in :data:`OPENERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from precis.errors import StoreError
from precis.memory.store.base import Store

__all__ = ["OPENERS", "open_store"]


def _postgres(location: str, **options: Any) -> Store:
    from precis.memory.store.postgres import PostgresStore

    return PostgresStore(location, **options)


def _sqlite(location: str, **options: Any) -> Store:
    from precis.memory.store.sqlite import SQLiteStore

    path = location.split("://", 1)[1]
    return SQLiteStore(path or None, **options)


OPENERS: dict[str, Callable[..., Store]] = {
    "postgresql": _postgres,
    "postgres": _postgres,
    "sqlite": _sqlite,
}
"""URL scheme -> ``opener(url, **options)``."""


def open_store(location: str | Path | None = None, **options: Any) -> Store:
    """The store at ``location``: a URL whose scheme :data:`OPENERS` knows
    (``postgresql://user@host/db``, ``sqlite:///path/memory.sqlite3``), or the path of a
    SQLite file (``None``: the default file under ``PRECIS_HOME``)."""
    if isinstance(location, str) and "://" in location:
        scheme = location.split("://", 1)[0].lower()
        opener = OPENERS.get(scheme)
        if opener is None:
            from precis.memory.store._pg import redact

            raise StoreError(f"unknown kind of store {scheme!r} (known: "
                             f"{', '.join(sorted(OPENERS))}, or a file path)",
                             where=redact(location))
        return opener(location, **options)
    from precis.memory.store.sqlite import SQLiteStore

    return SQLiteStore(location, **options)
