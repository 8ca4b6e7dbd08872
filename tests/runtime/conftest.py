"""The OpenAI-compatible stub server for the runtime's LLM tests."""

from __future__ import annotations

from _openai_stub import openai_stub

__all__ = ["openai_stub"]
