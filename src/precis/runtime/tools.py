"""The ``context_reload`` tool: an agent gets back what the runtime offloaded.

``RELOAD_TOOL_OPENAI`` / ``RELOAD_TOOL_ANTHROPIC`` are the tool definitions to send with a
request; :func:`handle_tool_call` answers a call of it (any other tool name returns ``None``,
so it fits in an agent's dispatch), and :func:`context_reload` is the plain function.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from precis._surrogates import clean_text
from precis.errors import PrecisError

if TYPE_CHECKING:
    from precis.runtime.context import ContextMemory

__all__ = [
    "RELOAD_TOOL_ANTHROPIC",
    "RELOAD_TOOL_NAME",
    "RELOAD_TOOL_OPENAI",
    "context_reload",
    "handle_tool_call",
]

RELOAD_TOOL_NAME = "context_reload"
_DESCRIPTION = (
    "Return the original content that the context manager offloaded to save room. Call it "
    "with the id shown in an offload note like [... offloaded, id=ctx-1a2b3c4d5e6f ...] when "
    "you need the full text back."
)
_PARAMETERS = {
    "type": "object",
    "properties": {
        "offload_id": {"type": "string", "description": "The id from the offload note."},
        "contains": {"type": "string", "description": (
            "Optional: only the messages whose text holds this string (case-insensitive), "
            "with the results of the calls among them. Use it on large offloads.")},
    },
    "required": ["offload_id"],
    "additionalProperties": False,
}
RELOAD_TOOL_OPENAI: dict[str, Any] = {
    "type": "function",
    "function": {"name": RELOAD_TOOL_NAME, "description": _DESCRIPTION,
                 "parameters": _PARAMETERS},
}
RELOAD_TOOL_ANTHROPIC: dict[str, Any] = {
    "name": RELOAD_TOOL_NAME, "description": _DESCRIPTION, "input_schema": _PARAMETERS,
}


def context_reload(memory: ContextMemory, offload_id: str, contains: str | None = None) -> str:
    """The offloaded messages as text, one block per message (role, then content); with
    ``contains``, only the messages holding it and the results of calls among them."""
    # a model writes these arguments: whatever they hold, the answer is a text (an error
    # text for a bad id or a store that fails), never an exception in the agent's loop
    try:
        messages = memory.reload(offload_id)
    except PrecisError as err:
        return f"error: {err.message}"
    if contains:
        needle = clean_text(contains).lower()
        hit = [any(needle in _part_text(p).lower() for p in m.parts) for m in messages]
        calls = {c.id for m, h in zip(messages, hit) if h for c in m.tool_calls}
        messages = [m for m, h in zip(messages, hit)
                    if h or any(r.call_id in calls for r in m.tool_results)]
        if not messages:
            return f"no message of {offload_id} holds {contains!r}"
    blocks = []
    for m in messages:
        lines = []
        for part in m.parts:
            kind = part.kind
            if kind == "tool_call":
                lines.append(f"[call {part.name}] {part.arguments}")  # type: ignore[union-attr]
            elif kind == "tool_result":
                lines.append(f"[result] {part.content}")  # type: ignore[union-attr]
            elif kind in ("text", "thinking"):
                lines.append(part.text)
        blocks.append(f"## {m.role}{' (' + m.name + ')' if m.name else ''}\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def handle_tool_call(memory: ContextMemory, name: str, arguments: Any) -> str | None:
    """The answer to a ``context_reload`` call (arguments as a JSON string or a dict);
    ``None`` for any other tool."""
    if name != RELOAD_TOOL_NAME:
        return None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return "error: the arguments are not JSON"
    if not isinstance(arguments, dict) or not isinstance(arguments.get("offload_id"), str):
        return "error: context_reload needs {\"offload_id\": \"...\"}"
    contains = arguments.get("contains")
    return context_reload(memory, arguments["offload_id"],
                          contains if isinstance(contains, str) else None)


def _part_text(part: Any) -> str:
    for name in ("text", "content", "arguments"):
        value = getattr(part, name, None)
        if isinstance(value, str):
            return value
    return ""
