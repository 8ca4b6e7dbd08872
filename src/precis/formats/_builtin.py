"""Registers precis's built-in formats (imported by :func:`precis.formats.base.formats`)."""

from __future__ import annotations

import importlib

from precis.formats.base import ConversationFormat, register_format

_MODULES = (
    "precis.formats.openai",
    "precis.formats.anthropic",
    "precis.formats.claude_code",
    "precis.formats.langchain",
    "precis.formats.sharegpt",
    "precis.formats.swe_agent",
    "precis.formats.openhands",
    "precis.formats.locomo",
    "precis.formats.nested",
    "precis.formats.transcript",
)


def _register_all() -> None:
    for module_name in _MODULES:
        module = importlib.import_module(module_name)
        fmt: ConversationFormat
        for fmt in getattr(module, "FORMATS", ()):
            register_format(fmt)


_register_all()
