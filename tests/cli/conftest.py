"""The OpenAI-compatible stub server (tests/_openai_stub.py) as a fixture for these tests."""

from __future__ import annotations

from _openai_stub import openai_stub

__all__ = ["openai_stub"]
