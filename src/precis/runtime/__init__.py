"""Agent runtime: ``ContextMemory`` keeps an agent loop's context under budget.

See :mod:`precis.runtime.context`. The strategies (seed 004's six, then precis's own fit) are
in :mod:`precis.runtime.strategies`; the ``context_reload`` tool in :mod:`precis.runtime.tools`.
"""

from __future__ import annotations

from precis.runtime.config import ContextConfig
from precis.runtime.context import ContextMemory
from precis.runtime.events import STRATEGIES, CompressionEvent
from precis.runtime.tools import (
    RELOAD_TOOL_ANTHROPIC,
    RELOAD_TOOL_NAME,
    RELOAD_TOOL_OPENAI,
    context_reload,
    handle_tool_call,
)

__all__ = [
    "RELOAD_TOOL_ANTHROPIC",
    "RELOAD_TOOL_NAME",
    "RELOAD_TOOL_OPENAI",
    "STRATEGIES",
    "CompressionEvent",
    "ContextConfig",
    "ContextMemory",
    "context_reload",
    "handle_tool_call",
]
