"""A real PostgreSQL (with pgvector) for the tests: ``pgserver`` starts one per test session
in a temporary folder; each test gets its own database, copied from a migrated template.

Tests that need it skip, with the reason, when the ``postgres`` extra or ``pgserver`` is not
installed (CI installs both).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "postgres_server", "postgres_url"]

_MISSING = ("PostgreSQL store tests need pgserver and the postgres extra: "
            "pip install pgserver 'precis[postgres]'")


class PostgresServer:
    """The running server: :meth:`new_database` gives the URL of a fresh database."""

    def __init__(self, server: object, admin_url: str) -> None:
        self._server = server
        self.admin_url = admin_url
        self._numbers = itertools.count(1)
        self._template: str | None = None

    def url(self, database: str) -> str:
        base, _, query = self.admin_url.partition("?")
        return f"{base.rsplit('/', 1)[0]}/{database}" + (f"?{query}" if query else "")

    def execute(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def new_database(self, *, migrated: bool = True) -> str:
        """A new, empty database (with precis's schema when ``migrated``); its URL."""
        name = f"t{os.getpid()}_{next(self._numbers)}"
        if migrated and self._template is None:
            from precis.memory.store.postgres import PostgresStore

            self.execute("CREATE DATABASE precis_template")
            PostgresStore(self.url("precis_template")).close()
            self._template = "precis_template"
        template = self._template if migrated else "template0"
        self.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        import pgserver
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
        from pgvector.psycopg import register_vector  # noqa: F401
    except ImportError:
        pytest.skip(_MISSING)
    folder = Path(tempfile.mkdtemp(prefix="precis-pg-"))
    server = pgserver.get_server(folder, cleanup_mode="delete")
    running = PostgresServer(server, server.get_uri())
    # a throwaway server: no waiting for the disk (a crash of the server loses nothing a
    # test needs; a killed client still loses nothing committed)
    for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
        running.execute(f"ALTER SYSTEM SET {setting}")
    running.execute("SELECT pg_reload_conf()")
    try:
        yield running
    finally:
        server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, migrated database of its own for one test."""
    return postgres_server.new_database()
