"""Messages in and out of the runtime: OpenAI / Anthropic dicts or precis messages in, and a
lossless JSON form for saving state."""

from __future__ import annotations

from typing import Any

from precis._surrogates import clean_data, clean_message
from precis.errors import FormatError
from precis.formats.anthropic import _ANTHROPIC_BLOCKS, parse_anthropic_messages
from precis.formats.openai import parse_openai_messages, text_field
from precis.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult

__all__ = ["message_from_data", "message_to_data", "to_messages"]

_PARTS: dict[str, type] = {"text": Text, "thinking": Thinking, "image": Image,
                           "tool_call": ToolCall, "tool_result": ToolResult}


def _is_anthropic(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if item.get("role") == "tool_result":
        return True
    return isinstance(content, list) and any(
        isinstance(b, dict) and text_field(b) in _ANTHROPIC_BLOCKS for b in content
    )


def to_messages(item: Any, *, where: str) -> list[Message]:
    """One incoming message as precis messages (an Anthropic user turn that mixes tool
    results and text becomes two). ``where`` names it in errors."""
    if isinstance(item, Message):
        return [clean_message(item)]
    if not isinstance(item, dict):
        raise FormatError(
            f"a message must be a dict (OpenAI or Anthropic shape) or a precis Message, "
            f"got {type(item).__name__}",
            where=where,
        )
    item = clean_data(item)  # lone surrogates out, as for every input
    if _is_anthropic(item):
        return parse_anthropic_messages([item], where)
    return parse_openai_messages([item], where)


def message_to_data(message: Message) -> dict[str, Any]:
    """A message as plain JSON data, every field kept (see :func:`message_from_data`)."""
    return {
        "role": message.role,
        "parts": [{k: v for k, v in part.__dict__.items()} for part in message.parts],
        "id": message.id,
        "name": message.name,
        "timestamp": message.timestamp,
        "metadata": message.metadata,
    }


def message_from_data(data: Any, *, where: str) -> Message:
    """The message :func:`message_to_data` wrote; a damaged record raises FormatError."""
    try:
        parts: list[Part] = []
        for raw in data["parts"]:
            fields = dict(raw)
            parts.append(_PARTS[str(fields.get("kind"))](**fields))
        return Message(role=data["role"], parts=parts, id=data.get("id"),
                       name=data.get("name"), timestamp=data.get("timestamp"),
                       metadata=dict(data.get("metadata") or {}))
    except (KeyError, TypeError, ValueError) as err:
        raise FormatError(f"a saved message is damaged ({err!r})", where=where) from None
