"""Opening a SQLite store file: the connection, its migrations, write transactions.

One :class:`SharedFile` per open file is shared by the store objects of every tenant: the
connection, the lock that serialises its use across threads, and the in-memory search
indexes (:mod:`precis.memory.store._sqlite_index`).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import NoReturn

from precis.errors import StoreError
from precis.memory.store._rows import utc_now
from precis.memory.store._schema import MIGRATIONS
from precis.memory.store._sqlite_index import SearchIndexes
from precis.memory.text import SEGMENTER

__all__ = ["SharedFile", "Transaction", "count", "open_file"]


class SharedFile:
    """What every tenant's view of one open file shares (see the module docstring)."""

    def __init__(self, path: str, db: sqlite3.Connection) -> None:
        self.path = path
        self.db = db
        self.lock = threading.RLock()
        self.index = SearchIndexes(db, self.lock, self.write, self.meta)

    def write(self) -> Transaction:
        """``with shared.write() as db:`` runs the block in one ``BEGIN IMMEDIATE``
        transaction."""
        return Transaction(self)

    def meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        with self.lock:
            self.db.close()
            self.index.close()
            # any use after this is a StoreError, not sqlite3's own error
            self.db = self.index._db = _Closed(self.path)  # type: ignore[assignment]


def open_file(location: str, timeout: float) -> SharedFile:
    """Connect (WAL), apply the migrations this file lacks, and check its segmenter."""
    deadline = time.monotonic() + timeout
    while True:
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(
                location, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # 64 MiB of pages (default 2): a large store's indexes stay in memory on ingest
            db.execute("PRAGMA cache_size=-65536")
            shared = SharedFile(location, db)
            _migrate(shared)
            return shared
        except sqlite3.OperationalError as err:
            # a new file being set up by another process at the same moment: switching
            # to WAL can fail at once with "locked" instead of waiting; try again
            if db is not None:
                db.close()
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise StoreError(f"cannot open the memory store: {err}", where=location) from None
            time.sleep(0.05)
        except sqlite3.DatabaseError as err:
            if db is not None:
                db.close()
            raise StoreError(f"cannot open the memory store: {err}", where=location) from None


def _migrate(shared: SharedFile) -> None:
    db = shared.db
    db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, at TEXT)")
    applied = {row[0] for row in db.execute("SELECT name FROM migrations")}
    known = {name for name, _ in MIGRATIONS}
    unknown = applied - known
    if unknown:
        raise StoreError(
            "this memory store was written by a newer precis (unknown migrations: "
            + ", ".join(sorted(unknown)) + "); upgrade precis to open it",
            where=shared.path,
        )
    for name, script in MIGRATIONS:
        if name in applied:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                db.execute("ROLLBACK")  # another process applied it meanwhile
                continue
            for statement in _statements(script):
                db.execute(statement)
            db.execute("INSERT INTO migrations VALUES (?, ?)", (name, utc_now()))
            if name == MIGRATIONS[0][0]:
                db.execute("INSERT INTO meta VALUES ('segmenter', ?)", (SEGMENTER,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    if shared.meta("segmenter") != SEGMENTER:
        # terms cut by another segmenter would not match this one's queries: drop
        # them; every card gets its terms again on the next search
        with shared.write() as db:
            if db.execute("SELECT value FROM meta WHERE key = 'segmenter'"
                          ).fetchone() != (SEGMENTER,):
                db.execute("DELETE FROM card_terms")
                db.execute("DELETE FROM terms")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('segmenter', ?)", (SEGMENTER,))
                count(db, "keyword_changes")


class _Closed:
    """The connection of a closed store: any use raises StoreError."""

    def __init__(self, path: str) -> None:
        self._path = path

    def execute(self, *args: object) -> NoReturn:
        raise StoreError("the memory store is closed", where=self._path)

    executemany = execute

    def close(self) -> None:
        pass


class Transaction:
    """One ``BEGIN IMMEDIATE`` transaction on a shared file (see :meth:`SharedFile.write`)."""

    def __init__(self, shared: SharedFile) -> None:
        self._shared = shared

    def __enter__(self) -> sqlite3.Connection:
        shared = self._shared
        shared.lock.acquire()
        try:
            shared.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            shared.lock.release()
            raise StoreError(
                f"the memory store is busy or read-only: {err}", where=shared.path
            ) from None
        except BaseException:
            shared.lock.release()
            raise
        return shared.db

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        shared = self._shared
        db = shared.db
        try:
            if kind is None:
                try:
                    db.execute("COMMIT")
                except sqlite3.OperationalError as err:
                    db.execute("ROLLBACK")
                    shared.index.forget_vocabulary()
                    raise StoreError(
                        f"could not commit to the memory store: {err}", where=shared.path
                    ) from None
            else:
                db.execute("ROLLBACK")
                shared.index.forget_vocabulary()  # it may hold ids of terms rolled back
        finally:
            shared.lock.release()


def count(db: sqlite3.Connection, key: str, by: int = 1) -> None:
    """Add ``by`` to the change counter ``key`` in ``meta`` (inside a write)."""
    db.execute(
        "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
        "SET value = CAST(value AS INTEGER) + excluded.value",
        (key, str(by)),
    )


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
