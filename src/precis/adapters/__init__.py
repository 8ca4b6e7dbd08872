"""Adapters that plug :class:`~precis.runtime.ContextMemory` into agent frameworks.

Each lives in its own module behind an extra, and imports its framework only when used:

- :mod:`precis.adapters.openai_agents`: ``PrecisSession``, a ``Session`` of the OpenAI
  Agents SDK (``pip install 'precis[openai-agents]'``);
- :mod:`precis.adapters.langchain`: ``PrecisChatMessageHistory``, a LangChain
  ``BaseChatMessageHistory``, and ``before_model``, a pre-model hook
  (``pip install 'precis[langchain]'``);
- :mod:`precis.adapters.responses`: the converter between OpenAI Responses API input items
  and precis messages that the Agents SDK session uses (no dependency).

This package imports nothing heavy: ``import precis`` stays fast.
"""

from __future__ import annotations

__all__: list[str] = []
