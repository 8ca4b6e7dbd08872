"""The OpenAI-compatible stub server (tests/_openai_stub.py) as a fixture for these tests."""

from __future__ import annotations

import pytest

from _openai_stub import openai_stub

__all__ = ["openai_stub"]


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests do not see a PRECIS_LLM_* setting of the machine they run on."""
    for name in ("PRECIS_LLM_URL", "PRECIS_LLM_KEY", "PRECIS_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
