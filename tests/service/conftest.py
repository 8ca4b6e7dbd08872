"""Fixtures of the service tests: a real server (``_server``) over a temporary store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="precis[server] is not installed")
pytest.importorskip("uvicorn", reason="precis[server] is not installed")

from _server import EXAMPLES, Server, start_server

from _openai_stub import openai_stub

__all__ = ["openai_stub"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from start_server(tmp_path / "service.sqlite3")


@pytest.fixture
def conversation() -> object:
    return json.loads((EXAMPLES / "coding_session.json").read_text(encoding="utf-8"))
