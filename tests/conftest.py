"""Shared fixtures: every test runs with PRECIS_HOME in its own temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from _postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("precis-home")
    monkeypatch.setenv("PRECIS_HOME", str(home))
    monkeypatch.delenv("PRECIS_MAX_INPUT_BYTES", raising=False)
    return home


@pytest.fixture
def shared_data() -> Path:
    """The real public data in ../shared/data; tests that need it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(params=["sqlite", "postgres"])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Each store test runs on both stores: the SQLite file and a real PostgreSQL."""
    return str(request.param)


@pytest.fixture
def new_store(request: pytest.FixtureRequest, store_kind: str, tmp_path: Path):
    """``new_store(name)``: the location of a new, empty store of the kind under test (a
    SQLite file path, or the URL of a fresh PostgreSQL database; ``empty=True``: one that
    no store has opened yet)."""
    if store_kind == "postgres":
        server = request.getfixturevalue("postgres_server")
        # empty=True: a database without precis's tables (the store creates them)
        return lambda name="memory", empty=False: server.new_database(migrated=not empty)
    return lambda name="memory", empty=False: str(tmp_path / f"{name}.sqlite3")
