"""LangChain / LangGraph hooks over a :class:`~precis.runtime.ContextMemory`.

:class:`PrecisChatMessageHistory` is a LangChain ``BaseChatMessageHistory``: messages added
go into the memory (full history and working context), and ``messages`` is the working
context after ``compress_if_needed()`` as LangChain messages (``SystemMessage``,
``HumanMessage``, ``AIMessage`` with ``tool_calls``, ``ToolMessage``), every tool call
answered. ::

    from precis.adapters.langchain import PrecisChatMessageHistory

    history = PrecisChatMessageHistory(max_tokens=32_000)
    history.add_user_message("Why does the build fail?")
    reply = model.invoke(history.messages)
    history.add_message(reply)

:func:`before_model` is a pre-model hook for loops that keep the full message list
themselves (a LangGraph state, a LangChain agent's middleware, a plain loop): give it the
whole list before each model call and send what it returns::

    memory = ContextMemory(max_tokens=32_000)
    reply = model.invoke(before_model(state["messages"], memory))
    # create_react_agent(..., pre_model_hook=lambda state:
    #     {"llm_input_messages": before_model(state["messages"], memory)})

Conversion reads with precis's LangChain format reader (:mod:`precis.formats.langchain`);
a message that compaction left as it was comes back as the very message that was added
(its ``model_dump``, kept in ``metadata["langchain"]``), a changed or new one is built from
its parts. Needs ``pip install 'precis[langchain]'``.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from precis.adapters._common import require
from precis.compact._pairs import repair
from precis.errors import ConfigError, FormatError
from precis.formats.langchain import parse_langchain_messages
from precis.model import Image, Message, Text, ToolCall, ToolResult
from precis.runtime.context import ContextMemory
from precis.runtime.events import CompressionEvent

require("langchain_core", package="langchain-core", extra="langchain",
        purpose="precis.adapters.langchain")

from langchain_core.chat_history import BaseChatMessageHistory  # type: ignore[import-not-found,unused-ignore]  # noqa: E402
from langchain_core.messages import (  # type: ignore[import-not-found,unused-ignore]  # noqa: E402
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
)

__all__ = [
    "LANGCHAIN_KEY",
    "PrecisChatMessageHistory",
    "before_model",
    "from_langchain",
    "to_langchain",
]

LANGCHAIN_KEY = "langchain"
"""The metadata key under which a message keeps the LangChain message it was read from."""


# -- conversion ----------------------------------------------------------------------------


def _dump(message: Any, label: str, where: str) -> dict[str, Any]:
    if not isinstance(message, BaseMessage):
        raise FormatError(f"{label} is {type(message).__name__} (expected a LangChain "
                          "message)", where=where)
    data: dict[str, Any] = message.model_dump()
    return data


def _verbatim(data: dict[str, Any]) -> dict[str, Any] | None:
    """``data`` if it survives JSON (what ``ContextMemory.save()`` writes), else ``None``."""
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        return None
    kept: dict[str, Any] = json.loads(text)
    return kept


def from_langchain(messages: Sequence[Any], *, where: str = "langchain") -> list[Message]:
    """LangChain messages as precis messages (``RemoveMessage`` markers are skipped)."""
    dumps = [_dump(m, f"message {i}", where) for i, m in enumerate(messages)]
    kept = [d for d in dumps if d.get("type") != "remove"]
    out = parse_langchain_messages(kept, where)
    for message, data in zip(out, kept):
        verbatim = _verbatim(data)
        if verbatim is not None:
            message.metadata[LANGCHAIN_KEY] = verbatim
    return out


def _unchanged(message: Message) -> BaseMessage | None:
    data = message.metadata.get(LANGCHAIN_KEY)
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return None
    try:
        read = parse_langchain_messages([data], "saved message")
        if len(read) != 1 or read[0].parts != message.parts or read[0].role != message.role:
            return None
        rebuilt: list[BaseMessage] = messages_from_dict([{"type": data["type"], "data": data}])
    except (FormatError, ValueError, TypeError, KeyError):
        return None  # pydantic's ValidationError is a ValueError
    return rebuilt[0]


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"input": text}
    return value if isinstance(value, dict) else {"input": value}


def _fresh(message: Message) -> list[BaseMessage]:
    text = message.text
    kwargs: dict[str, Any] = {"id": message.id} if message.id else {}
    if message.role == "tool" or message.tool_results:
        out: list[BaseMessage] = [
            ToolMessage(content=r.content, tool_call_id=r.call_id, name=r.name,
                        status="error" if r.is_error else "success")
            for r in message.parts if isinstance(r, ToolResult)]
        if text.strip():  # words in a tool message (not canonical): keep them as the user's
            out.append(HumanMessage(content=text))
        return out
    if message.role == "system":
        return [SystemMessage(content=text, **kwargs)]
    if message.role == "assistant":
        calls = [{"name": c.name, "args": _arguments(c.arguments), "id": c.id,
                  "type": "tool_call"} for c in message.parts if isinstance(c, ToolCall)]
        return [AIMessage(content=text, tool_calls=calls, **kwargs)]
    images = [p for p in message.parts if isinstance(p, Image) and (p.url or p.data)]
    if not images:
        return [HumanMessage(content=text, **kwargs)]
    blocks: list[str | dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, Text):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, Image) and (part.url or part.data):
            url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data}"
            blocks.append({"type": "image_url", "image_url": {"url": url}})
    return [HumanMessage(content=blocks, **kwargs)]


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """Precis messages as LangChain messages: the original object's copy where a message is
    unchanged, one built from the parts otherwise (a thinking part alone is left out)."""
    out: list[BaseMessage] = []
    for message in messages:
        same = _unchanged(message)
        out.extend([same] if same is not None else _fresh(message))
    return out


def _compacted(memory: ContextMemory,
               on_compress: Callable[[list[CompressionEvent]], None] | None
               ) -> list[BaseMessage]:
    events = memory.compress_if_needed()
    if events and on_compress is not None:
        on_compress(events)
    fixed, _ = repair(memory.messages())
    return to_langchain(fixed)


# -- the history ---------------------------------------------------------------------------


class PrecisChatMessageHistory(BaseChatMessageHistory):  # type: ignore[misc,unused-ignore]
    """A ``BaseChatMessageHistory`` whose ``messages`` precis keeps under budget.

    Give a ``memory`` (any configuration, store or LLM) or let it make one with
    ``max_tokens``; ``on_compress`` gets the events of every read that compacted.
    """

    def __init__(
        self,
        memory: ContextMemory | None = None,
        *,
        max_tokens: int | None = None,
        on_compress: Callable[[list[CompressionEvent]], None] | None = None,
    ) -> None:
        if memory is not None and max_tokens is not None:
            raise ConfigError("give max_tokens or a memory, not both",
                              where="PrecisChatMessageHistory.max_tokens")
        self.memory = memory if memory is not None else ContextMemory(max_tokens)
        self.on_compress = on_compress

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override,unused-ignore]
        """The working context, compacted first when over budget."""
        return _compacted(self.memory, self.on_compress)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.memory.extend(from_langchain(list(messages),
                                          where=f"history {self.memory.session!r}"))

    def clear(self) -> None:
        self.memory.clear()


# -- the pre-model hook --------------------------------------------------------------------

_SEEN: weakref.WeakKeyDictionary[ContextMemory, int] = weakref.WeakKeyDictionary()


def before_model(
    messages: Sequence[BaseMessage],
    memory: ContextMemory,
    *,
    on_compress: Callable[[list[CompressionEvent]], None] | None = None,
) -> list[BaseMessage]:
    """The messages to send to the model: ``messages`` (the loop's *whole* list, as a
    LangGraph state holds it) compacted through ``memory``.

    The messages past those an earlier call saw go into the memory (so the same list can
    be passed again with new messages at the end); a list shorter than the last one (the
    loop removed messages) adds nothing and starts counting from its length.
    """
    seen = _SEEN.get(memory, 0)
    if len(messages) > seen:
        memory.extend(from_langchain(list(messages[seen:]), where="before_model"))
    _SEEN[memory] = len(messages)
    return _compacted(memory, on_compress)
