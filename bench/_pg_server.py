"""A PostgreSQL server for the benchmarks and the tests: one started by ``pgserver`` (PyPI:
PostgreSQL 16 + pgvector) in a temporary folder, or an existing one named by its URL; a
fresh database per run or test."""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["PostgresServer", "start_server"]


class PostgresServer:
    """A running server reached through ``admin_url``; :meth:`new_database` gives the URL of
    a fresh database."""

    def __init__(self, admin_url: str, server: Any = None) -> None:
        self.admin_url = admin_url
        self._server = server  # a pgserver handle, stopped by close()
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
        name = f"precis_{os.getpid()}_{next(self._numbers)}"
        if migrated and self._template is None:
            from precis.memory.store.postgres import PostgresStore

            self._template = f"precis_template_{os.getpid()}"
            self.execute(f"CREATE DATABASE {self._template}")
            PostgresStore(self.url(self._template)).close()
        template = self._template if migrated else "template0"
        self.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    def drop(self, url: str) -> None:
        self.execute(f"DROP DATABASE IF EXISTS {url.partition('?')[0].rsplit('/', 1)[1]}")

    def settings(self) -> dict[str, str]:
        import psycopg

        names = ("server_version", "shared_buffers", "work_mem", "maintenance_work_mem",
                 "fsync", "synchronous_commit", "max_connections")
        with psycopg.connect(self.admin_url) as conn:
            return {n: str(conn.execute(f"SHOW {n}").fetchone()[0]) for n in names}  # type: ignore[index]

    def close(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def start_server(admin_url: str | None = None, *, durable: bool = True) -> PostgresServer:
    """The server at ``admin_url``, or a new one from ``pgserver`` (``durable=False``: no
    waiting for the disk, for throwaway test servers)."""
    if admin_url:
        return PostgresServer(admin_url)
    import pgserver

    folder = Path(tempfile.mkdtemp(prefix="precis-pg-"))
    server = pgserver.get_server(folder, cleanup_mode="delete")
    running = PostgresServer(server.get_uri(), server)
    if not durable:
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            running.execute(f"ALTER SYSTEM SET {setting}")
        running.execute("SELECT pg_reload_conf()")
    return running
