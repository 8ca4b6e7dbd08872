"""A ``Session`` of the OpenAI Agents SDK that keeps the history under budget with precis.

::

    from agents import Agent, Runner
    from precis.adapters.openai_agents import PrecisSession

    session = PrecisSession(max_tokens=32_000, session_id="user-42")
    result = await Runner.run(agent, "Why does the build fail?", session=session)

The SDK reads the history with ``get_items()`` before every run and saves what the run
added with ``add_items()``. :class:`PrecisSession` puts those items in a
:class:`~precis.runtime.ContextMemory` (converted by :mod:`precis.adapters.responses`;
items precis does not know are kept verbatim) and answers ``get_items()`` with the working
context *after* ``compress_if_needed()``: each run starts from a history under budget, with
every ``function_call`` followed by its ``function_call_output``. (Within one run the SDK
does not read the session again, so the items that run adds are not compacted until the
next run.) ``memory.original()`` still
has everything, offloaded content comes back through ``context_reload``
(:mod:`precis.runtime.tools`), and each compaction's events go to ``on_compress``.

Needs ``pip install 'precis[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from precis.adapters._common import require
from precis.adapters.responses import items_to_messages, message_to_items
from precis.compact._pairs import repair
from precis.errors import ConfigError
from precis.runtime.context import ContextMemory
from precis.runtime.events import CompressionEvent

require("agents", package="openai-agents", extra="openai-agents",
        purpose="precis.adapters.openai_agents")

from agents.items import TResponseInputItem  # type: ignore[import-not-found,unused-ignore]  # noqa: E402

if TYPE_CHECKING:  # openai-agents < 0.4 has no SessionSettings: never needed at run time
    from agents.memory import SessionSettings  # type: ignore[import-not-found,unused-ignore]

__all__ = ["PrecisSession"]


class PrecisSession:
    """The Agents SDK ``Session`` protocol over a :class:`ContextMemory`.

    Give a ``memory`` (any configuration, store or LLM) or let the session make one with
    ``max_tokens`` (``ContextMemory(max_tokens=...)``'s defaults otherwise).
    ``on_compress`` is called with the events of every ``get_items()`` that compacted.
    """

    def __init__(
        self,
        memory: ContextMemory | None = None,
        session_id: str | None = None,
        *,
        max_tokens: int | None = None,
        session_settings: SessionSettings | None = None,
        on_compress: Callable[[list[CompressionEvent]], None] | None = None,
    ) -> None:
        if memory is not None and max_tokens is not None:
            raise ConfigError("give max_tokens or a memory, not both",
                              where="PrecisSession.max_tokens")
        if memory is None:
            memory = ContextMemory(max_tokens, session=session_id or "default")
        self.memory = memory
        self.session_id: str = session_id or memory.session
        self.session_settings: SessionSettings | None = session_settings
        self.on_compress = on_compress
        self.last_events: list[CompressionEvent] = []

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The working context as input items, compacted first when over budget; with
        ``limit``, the latest ``limit`` items (results whose call falls outside left out)."""
        events = await asyncio.to_thread(self.memory.compress_if_needed)
        self.last_events = events
        if events and self.on_compress is not None:
            self.on_compress(events)
        fixed, _ = repair(self.memory.messages())
        items = [item for m in fixed for item in message_to_items(m)]
        if limit is None:
            limit = getattr(self.session_settings, "limit", None)
        if limit is not None:
            items = _latest(items, limit)
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add the items a run produced (to the full history and the working context)."""
        messages = items_to_messages(list(items), where=f"session {self.session_id!r}")
        self.memory.extend(messages)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest working item and return it (``None`` when there is none)."""
        working = self.memory.messages()
        if not working:
            return None
        items = message_to_items(working[-1])
        # the message may hold several items (text, parallel calls): keep the others
        rest = items_to_messages(items[:-1], where=f"session {self.session_id!r}") \
            if len(items) > 1 else []
        self.memory.replace(-1, rest)
        return cast("TResponseInputItem", items[-1]) if items else None

    async def clear_session(self) -> None:
        """Forget the session: working context, history, offloads and events."""
        self.memory.clear()


def _latest(items: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    if limit <= 0:
        return []
    tail = items[-limit:]
    calls = {i.get("call_id") for i in tail if i.get("type") == "function_call"}
    return [i for i in tail
            if i.get("type") != "function_call_output" or i.get("call_id") in calls]

