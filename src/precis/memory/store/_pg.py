"""The PostgreSQL store's connection layer: the optional packages, a pool shared by every
tenant's view, migrations, transactions that retry on deadlock, and errors translated into
:class:`~precis.errors.StoreError` at this boundary."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from precis.errors import MissingDependencyError, StoreError
from precis.memory.store._pg_schema import MIGRATIONS
from precis.memory.store._rows import CARD_COLUMNS, utc_now
from precis.memory.text import SEGMENTER

if TYPE_CHECKING:
    import psycopg

    from precis.memory.keywords import Terms

__all__ = ["STAGE_COPY", "BlockCache", "Shared", "is_postgres_url", "redact"]

T = TypeVar("T")
SCHEMES = ("postgresql", "postgres")
_LOCK = 0x70726563  # the advisory lock that serialises migrations ("prec")
_RETRIES = 8
# each connection's staging table for new cards: COPY in, one INSERT ... ON CONFLICT out
_STAGE = ("CREATE TEMP TABLE IF NOT EXISTS precis_stage (number INTEGER, "
          + ", ".join(f"{c.strip()} TEXT" for c in CARD_COLUMNS.split(","))
          + ", event_ts DOUBLE PRECISION, length REAL, terms TEXT) ON COMMIT DELETE ROWS")
STAGE_COPY = f"COPY precis_stage (number, {CARD_COLUMNS}, event_ts, length, terms) FROM STDIN"


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.split("://", 1)[0].lower() in SCHEMES \
        and "://" in location


def redact(url: str) -> str:
    """The URL without its password (for messages and ``location``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _modules() -> tuple[Any, Any, Any]:
    try:
        import psycopg
        import psycopg_pool
        from pgvector.psycopg import register_vector
    except ImportError as err:
        raise MissingDependencyError(
            package=(err.name or "psycopg").split(".")[0], extra="postgres",
            purpose="a PostgreSQL memory store",
        ) from None
    return psycopg, psycopg_pool, register_vector


class BlockCache:
    """Posting blocks this process has read, by block id (a block never changes: merges and
    deletes write new blocks), least recently used first out past ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        from collections import OrderedDict

        self.limit = limit
        self.size = 0
        self._blocks: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, block: int) -> bool:
        return block in self._blocks

    def get(self, block: int) -> Any:
        with self._lock:
            found = self._blocks.get(block)
            if found is not None:
                self._blocks.move_to_end(block)
            return found

    def put(self, block: int, arrays: Any) -> None:
        size = sum(a.nbytes for a in arrays)
        if size > self.limit:
            return
        with self._lock:
            if block in self._blocks:
                return
            self._blocks[block] = arrays
            self.size += size
            while self.size > self.limit:
                _, old = self._blocks.popitem(last=False)
                self.size -= sum(a.nbytes for a in old)


class Shared:
    """What every tenant's view of one database shares: the connection pool, the term maker
    and what is known of the vector models."""

    def __init__(self, url: str, *, pool_size: int, timeout: float, cache_mb: int) -> None:
        psycopg, psycopg_pool, register_vector = _modules()
        self.psycopg = psycopg
        self.blocks = BlockCache(cache_mb << 20)
        self.location = redact(url)
        self.models: dict[str, int] = {}  # model -> vector length (vector_models)
        self._terms: Terms | None = None
        self._lock = threading.Lock()
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout))
                                 ) as conn:
                _migrate(conn, self.location)
        except psycopg.Error as err:
            raise StoreError(f"cannot open the memory store: {_message(err)}",
                             where=self.location) from None

        def configure(conn: Any) -> None:
            register_vector(conn)
            conn.execute(_STAGE)
            conn.prepare_threshold = None  # plans for each query's own filters

        self.pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=max(1, pool_size), open=False, timeout=timeout,
            kwargs={"autocommit": True}, configure=configure, name="precis",
        )
        try:
            self.pool.open(wait=True, timeout=timeout)
        except psycopg_pool.PoolTimeout as err:
            self.pool.close()
            raise StoreError(f"cannot connect to the memory store: {err}",
                             where=self.location) from None

    def terms(self) -> Terms:
        with self._lock:
            if self._terms is None:
                from precis.memory.keywords import Terms

                self._terms = Terms()
            return self._terms

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection (autocommit: each statement on its own)."""
        if self.pool.closed:
            raise StoreError("the memory store is closed", where=self.location)
        try:
            with self.pool.connection() as conn:
                yield conn
        except self.psycopg.OperationalError as err:
            raise StoreError(f"the memory store failed: {_message(err)}",
                             where=self.location) from None

    def read(self, sql: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        with self.connection() as conn:
            try:
                return conn.execute(sql, params).fetchall()
            except self.psycopg.errors.DataError as err:
                raise StoreError(f"the memory store refused a value: {_message(err)}",
                                 where=self.location) from None

    def write(self, work: Callable[[psycopg.Cursor[Any]], T]) -> T:
        """Run ``work`` in one transaction, again from the start when it lost a deadlock or
        a serialization conflict to another writer (each try sees the other's commit)."""
        errors = self.psycopg.errors
        for attempt in range(_RETRIES):
            try:
                with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
                    return work(cur)
            except (errors.DeadlockDetected, errors.SerializationFailure,
                    errors.LockNotAvailable):
                if attempt == _RETRIES - 1:
                    raise StoreError("the memory store stayed busy: gave up after "
                                     f"{_RETRIES} tries", where=self.location) from None
                time.sleep(0.01 * 2 ** attempt)
            except (errors.DataError, errors.IntegrityError) as err:
                raise StoreError(f"the memory store refused a write: {_message(err)}",
                                 where=self.location) from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.pool.close()
        with self._lock:
            if self._terms is not None:
                self._terms.close()
                self._terms = None


def _message(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _migrate(conn: psycopg.Connection[Any], where: str) -> None:
    """Apply the migrations this database lacks, one process at a time (advisory lock)."""
    conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS precis_migrations "
                     "(name TEXT PRIMARY KEY, at TEXT NOT NULL)")
        applied = {r[0] for r in conn.execute("SELECT name FROM precis_migrations")}
        unknown = applied - {name for name, _ in MIGRATIONS}
        if unknown:
            raise StoreError(
                "this memory store was written by a newer precis (unknown migrations: "
                + ", ".join(sorted(unknown)) + "); upgrade precis to open it", where=where)
        for name, script in MIGRATIONS:
            if name in applied:
                continue
            with conn.transaction():
                conn.execute(script)
                conn.execute("INSERT INTO precis_migrations VALUES (%s, %s)", (name, utc_now()))
                if name == MIGRATIONS[0][0]:
                    conn.execute("INSERT INTO meta VALUES ('segmenter', %s)", (SEGMENTER,))
        row = conn.execute("SELECT value FROM meta WHERE key = 'segmenter'").fetchone()
        if row is None or row[0] != SEGMENTER:
            # terms cut by another segmenter would not match this one's queries: every
            # card gets its terms again (PostgresStore fills them in before searching)
            with conn.transaction():
                conn.execute("TRUNCATE postings, terms, keyword_stats")
                conn.execute("UPDATE cards SET length = NULL, terms = NULL")
                conn.execute("INSERT INTO meta VALUES ('segmenter', %s) ON CONFLICT (key) "
                             "DO UPDATE SET value = excluded.value", (SEGMENTER,))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
