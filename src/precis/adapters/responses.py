"""OpenAI Responses API input items <-> precis messages (used by the Agents SDK session).

Reading (:func:`items_to_messages`):

- a ``message`` item (``{"role", "content"}``, with or without ``"type": "message"``) of
  role ``user`` / ``system`` / ``developer`` is a message of its own (``developer`` becomes
  ``system`` with ``metadata["source_role"]``); content is a string or a list of
  ``input_text`` / ``output_text`` / ``refusal`` / ``input_image`` parts (other parts, such
  as ``input_file``, become a ``[input_file]`` text stand-in);
- the items a model answers with, one after another (``reasoning``, ``assistant``
  messages, ``function_call``), become *one* assistant message, in order: the reasoning as
  :class:`Thinking` (``encrypted_content`` as its signature), text as :class:`Text`, calls as
  :class:`ToolCall` parts, so parallel calls sit in one message as precis's compaction expects;
- a ``function_call_output`` is a ``tool`` message with one :class:`ToolResult`;
- any other item type (``web_search_call``, ``computer_call``, ``item_reference``, ...)
  joins the assistant side as a text part holding its JSON, so it counts in the budget.

Every message keeps the items it was read from, verbatim, in ``metadata["responses_items"]``.

Writing (:func:`messages_to_items`): each part run that is still what an original item
reads as gives back *that item, unchanged* (ids, status, annotations, unknown types and
all); parts that compaction changed or added become fresh items: text becomes a
``message`` item (string content), a call a ``function_call``, a result a
``function_call_output``. A :class:`Thinking` part with no original is left out (the API
needs a reasoning item's id). Round trip: ``messages_to_items(items_to_messages(items))``
equals ``items`` for every list the API accepts.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from precis.errors import FormatError
from precis.model import Image, Message, Part, Role, Text, Thinking, ToolCall, ToolResult

__all__ = ["ITEMS_KEY", "item_parts", "items_to_messages", "message_to_items",
           "messages_to_items"]

ITEMS_KEY = "responses_items"
"""The metadata key under which a message keeps the items it was read from."""

_STANDALONE_ROLES: dict[str, Role] = {"user": "user", "system": "system",
                                      "developer": "system"}
_TEXT_PARTS = ("input_text", "output_text", "text")


def _as_dict(item: Any, label: str, where: str) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)  # an openai SDK pydantic model
    if callable(dump):
        data = dump(mode="json", exclude_unset=True)
        if isinstance(data, dict):
            return data
    raise FormatError(f"{label} is {type(item).__name__} (expected an input item object)",
                      where=where)


def _kind(item: dict[str, Any]) -> str:
    """``message``, ``function_call``, ``function_call_output``, ``reasoning`` or the
    item's own type (unknown to precis)."""
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return kind if isinstance(kind, str) else "<no type>"


def _string(item: dict[str, Any], key: str, label: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise FormatError(f"{label} ({_kind(item)}) has no string {key!r}", where=where)
    return value


def _content_parts(content: Any, label: str, where: str) -> list[Part]:
    if isinstance(content, str):
        return [Text(content)]
    if not isinstance(content, list):
        raise FormatError(f"{label}: content is {type(content).__name__} (expected a string "
                          "or a list of parts)", where=where)
    parts: list[Part] = []
    for number, block in enumerate(content):
        if not isinstance(block, dict):
            raise FormatError(f"{label} part {number} is {type(block).__name__} (expected "
                              "an object)", where=where)
        kind = block.get("type")
        if kind in _TEXT_PARTS and isinstance(block.get("text"), str):
            parts.append(Text(block["text"]))
        elif kind == "refusal" and isinstance(block.get("refusal"), str):
            parts.append(Text(block["refusal"]))
        elif kind == "input_image":
            url = block.get("image_url")
            parts.append(Image(url=url if isinstance(url, str) else None))
        else:
            parts.append(Text(f"[{kind if isinstance(kind, str) else 'part'}]"))
    return parts


def _output_text(output: Any, label: str, where: str) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "\n\n".join(p.text for p in _content_parts(output, label, where))
    raise FormatError(f"{label} (function_call_output): output is {type(output).__name__} "
                      "(expected a string or a list of parts)", where=where)


def item_parts(item: dict[str, Any], *, label: str = "item", where: str = "items"
               ) -> list[Part]:
    """The precis parts one input item reads as (deterministic: writing compares them)."""
    kind = _kind(item)
    if kind == "message":
        return _content_parts(item.get("content"), label, where)
    if kind == "function_call":
        return [ToolCall(_string(item, "call_id", label, where),
                         _string(item, "name", label, where),
                         _string(item, "arguments", label, where))]
    if kind == "function_call_output":
        return [ToolResult(_string(item, "call_id", label, where),
                           _output_text(item.get("output"), label, where))]
    if kind == "reasoning":
        pieces = [s.get("text") for key in ("summary", "content")
                  for s in (item.get(key) or []) if isinstance(s, dict)]
        secret = item.get("encrypted_content")
        return [Thinking("\n\n".join(p for p in pieces if isinstance(p, str)),
                         signature=secret if isinstance(secret, str) else None)]
    return [Text(json.dumps(item, ensure_ascii=False, sort_keys=True))]


def items_to_messages(items: Sequence[Any], *, where: str = "items") -> list[Message]:
    """Responses input items as precis messages (see the module docs)."""
    out: list[Message] = []
    group: Message | None = None  # the assistant message being gathered
    for index, raw in enumerate(items):
        label = f"item {index}"
        item = _as_dict(raw, label, where)
        kind = _kind(item)
        role = item.get("role")
        parts = item_parts(item, label=label, where=where)
        saved = copy.deepcopy(item)
        if kind == "message" and role != "assistant":
            if role not in _STANDALONE_ROLES:
                raise FormatError(f"{label} has unknown role {role!r} (expected user, "
                                  "assistant, system or developer)", where=where)
            metadata: dict[str, Any] = {ITEMS_KEY: [saved]}
            if role == "developer":
                metadata["source_role"] = "developer"
            out.append(Message(_STANDALONE_ROLES[role], parts, metadata=metadata))
            group = None
        elif kind == "function_call_output":
            out.append(Message("tool", parts, metadata={ITEMS_KEY: [saved]}))
            group = None
        else:
            if group is None:
                group = Message("assistant", [], metadata={ITEMS_KEY: []})
                out.append(group)
            group.parts.extend(parts)
            group.metadata[ITEMS_KEY].append(saved)
    return out


def _originals(message: Message) -> list[tuple[dict[str, Any], list[Part]]]:
    saved = message.metadata.get(ITEMS_KEY)
    found: list[tuple[dict[str, Any], list[Part]]] = []
    for item in saved if isinstance(saved, list) else []:
        if not isinstance(item, dict):
            continue
        try:
            found.append((item, item_parts(item)))
        except FormatError:
            continue  # not an item precis wrote: ignore it, the parts are written fresh
    return found


def _fresh(part: Part, role: str) -> dict[str, Any] | None:
    if isinstance(part, ToolCall):
        return {"type": "function_call", "call_id": part.id, "name": part.name,
                "arguments": part.arguments}
    if isinstance(part, ToolResult):
        return {"type": "function_call_output", "call_id": part.call_id,
                "output": part.content}
    if isinstance(part, Thinking):
        return None
    if isinstance(part, Image) and role == "user" and (part.url or part.data):
        url = part.url or f"data:{part.media_type or 'image/png'};base64,{part.data}"
        return {"type": "message", "role": role,
                "content": [{"type": "input_image", "image_url": url, "detail": "auto"}]}
    text = part.text
    if not text.strip():
        return None
    return {"type": "message", "role": role, "content": text}


def _merge(items: list[tuple[dict[str, Any], bool]]) -> list[dict[str, Any]]:
    """Fresh message items of one role next to each other become one."""
    out: list[tuple[dict[str, Any], bool]] = []
    for item, fresh in items:
        if out and fresh and out[-1][1] and item.get("type") == "message" \
                and out[-1][0].get("type") == "message" \
                and out[-1][0]["role"] == item["role"]:
            before = out[-1][0]
            before["content"] = _as_content_list(before["content"]) + \
                _as_content_list(item["content"])
            if all(b.get("type") == "input_text" for b in before["content"]):
                before["content"] = "\n\n".join(b["text"] for b in before["content"])
            continue
        out.append((item, fresh))
    return [item for item, _ in out]


def _as_content_list(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    return list(content)


def message_to_items(message: Message) -> list[dict[str, Any]]:
    """One precis message as input items: its original items where its parts still read as
    them, fresh items for the rest (see the module docs)."""
    role = "developer" if message.metadata.get("source_role") == "developer" else (
        "user" if message.role == "tool" else message.role)
    originals = _originals(message)
    parts = message.parts
    items: list[tuple[dict[str, Any], bool]] = []
    next_original = 0
    position = 0
    while position < len(parts):
        for number in range(next_original, len(originals)):
            item, read = originals[number]
            if read and parts[position:position + len(read)] == read:
                items.append((copy.deepcopy(item), False))
                position += len(read)
                next_original = number + 1
                break
        else:
            fresh = _fresh(parts[position], role)
            if fresh is not None:
                items.append((fresh, True))
            position += 1
    return _merge(items)


def messages_to_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Precis messages as Responses input items, in order."""
    return [item for message in messages for item in message_to_items(message)]
