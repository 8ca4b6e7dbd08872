"""Shared fixtures: every test runs with PRECIS_HOME in its own temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

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
