"""A real PostgreSQL (with pgvector) for the tests: ``pgserver`` starts one per test session
in a temporary folder (bench/_pg_server.py, shared with the benchmarks); each test gets its
own database, copied from a migrated template.

Tests that need it skip, with the reason, when the ``postgres`` extra or ``pgserver`` is not
installed (the ``test`` extra has both).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))
from _pg_server import PostgresServer, start_server

__all__ = ["PostgresServer", "postgres_server", "postgres_url"]

_MISSING = ("PostgreSQL store tests need pgserver and the postgres extra: "
            "pip install pgserver 'precis[postgres]'")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    try:
        import pgserver  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
        from pgvector.psycopg import register_vector  # noqa: F401
    except ImportError:
        pytest.skip(_MISSING)
    # a throwaway server: no waiting for the disk (a crash of the server loses nothing a
    # test needs; a killed client still loses nothing committed)
    running = start_server(durable=False)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, migrated database of its own for one test."""
    return postgres_server.new_database()
