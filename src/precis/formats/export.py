"""precis messages back to the message lists the OpenAI and Anthropic APIs take.

Each converter keeps everything its API can express and drops only what it cannot:

:func:`to_openai` (Chat Completions ``messages``)
    - one text part -> ``content`` string; several text / image parts -> a content-part list
      (images as ``image_url``; base64 data as a ``data:`` URL);
    - :class:`ToolCall` parts -> ``tool_calls`` (``arguments`` as written); the assistant's
      text comes first, since OpenAI cannot interleave text and calls;
    - every :class:`ToolResult` -> its own ``tool`` message with ``tool_call_id`` (and
      ``name`` when known); ``is_error`` has no OpenAI field and is dropped;
    - :class:`Thinking` is dropped (Chat Completions has no field for reasoning to send
      back); images in assistant messages become their text stand-in (``[image]``);
    - ``system`` messages whose source role was ``developer`` get that role back;
    - a message ``name`` has white space and ``<|\\/>`` replaced by ``_`` (OpenAI's rule).

:func:`to_anthropic` (``{"system": ..., "messages": [...]}``)
    - every system message goes into the top-level ``system`` string (joined by blank
      lines; the key is left out when there is none);
    - tool results become ``tool_result`` blocks in a ``user`` message, placed before any
      other block of that turn (the API requires it);
    - consecutive messages with the same API role are merged into one message, so ``user``
      and ``assistant`` alternate (a ``tool`` message followed by user text becomes one turn);
    - ``tool_use.input`` is the call's ``arguments`` parsed as JSON; arguments that are not a
      JSON object are wrapped as ``{"_raw": "<arguments as written>"}`` (empty arguments give
      ``{}``);
    - thinking keeps its signature; redacted thinking goes back as ``redacted_thinking``
      with its data; thinking without a signature (from other providers) cannot be sent
      back and is left out, as are blank text blocks; trailing white space of a final
      assistant turn (a prefill) is removed (the API rejects all three).

Message ids, timestamps and metadata are not part of either API and are not written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from precis.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult

__all__ = ["to_anthropic", "to_openai"]


# -- OpenAI ----------------------------------------------------------------------------


def _data_url(image: Image) -> str | None:
    if image.data:
        return f"data:{image.media_type or 'image/png'};base64,{image.data}"
    return image.url


def _openai_content(parts: list[Part], *, images: bool) -> str | list[dict[str, Any]]:
    """Text and image parts as a string (one text part) or a content-part list."""
    visible: list[Text | Image] = [p for p in parts if isinstance(p, (Text, Image))]
    if len(visible) == 1 and isinstance(visible[0], Text):
        return visible[0].text
    if not visible:
        return ""
    content: list[dict[str, Any]] = []
    for part in visible:
        url = _data_url(part) if isinstance(part, Image) else None
        if isinstance(part, Image) and images and url:
            content.append({"type": "image_url", "image_url": {"url": url}})
        else:
            content.append({"type": "text", "text": part.text})
    return content


_NAME_FORBIDDEN = re.compile(r"[\s<|\\/>]+")


def _openai_name(name: str) -> str:
    """A message ``name`` as OpenAI takes it (no white space or ``<|\\/>``)."""
    return _NAME_FORBIDDEN.sub("_", name)


def _openai_tool_message(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": result.call_id,
        "content": result.content,
    }
    if result.name:
        out["name"] = result.name
    return out


def _openai_calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in calls
    ]


def _openai_message(message: Message) -> list[dict[str, Any]]:
    """One message as OpenAI messages: usually one, a ``tool`` message per tool result."""
    role = message.role
    results = [_openai_tool_message(p) for p in message.parts if isinstance(p, ToolResult)]
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    has_content = any(isinstance(p, (Text, Image)) for p in message.parts)
    if role == "assistant":
        entry: dict[str, Any] = {
            "role": "assistant",
            "content": _openai_content(message.parts, images=False) if has_content else None,
        }
        if calls:
            entry["tool_calls"] = _openai_calls(calls)
        if message.name:
            entry["name"] = _openai_name(message.name)
        return [entry, *results]
    out: list[dict[str, Any]] = []
    if calls:  # OpenAI takes calls from the assistant only
        out.append({"role": "assistant", "content": None, "tool_calls": _openai_calls(calls)})
    out.extend(results)  # results first: they must follow the calls they answer
    if has_content or not out:
        developer = role == "system" and message.metadata.get("source_role") == "developer"
        out_role = "developer" if developer else "user" if role == "tool" else role
        entry = {"role": out_role, "content": _openai_content(message.parts, images=True)}
        if message.name:
            entry["name"] = _openai_name(message.name)
        out.append(entry)
    return out


def to_openai(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as an OpenAI Chat Completions ``messages`` list (see module docs)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        out.extend(_openai_message(message))
    return out


# -- Anthropic -------------------------------------------------------------------------


def tool_input(arguments: str) -> dict[str, Any]:
    """A call's ``arguments`` as an Anthropic ``input`` object.

    JSON objects are parsed; empty arguments give ``{}``; anything else (invalid JSON, or
    JSON that is not an object) is wrapped as ``{"_raw": arguments}`` so nothing is lost.
    """
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def _image_block(image: Image) -> dict[str, Any] | None:
    if image.data:
        source = {
            "type": "base64",
            "media_type": image.media_type or "image/png",
            "data": image.data,
        }
        return {"type": "image", "source": source}
    if image.url and image.url.startswith("data:") and "," in image.url:
        head, data = image.url[5:].split(",", 1)
        media_type = head.split(";", 1)[0] or "image/png"
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media_type, "data": data},
        }
    if image.url:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    return None


def _anthropic_blocks(message: Message) -> list[tuple[str, dict[str, Any]]]:
    """Each part as (API role, block): results go to ``user``, calls and thinking to
    ``assistant``, text and images to the message's own side."""
    side = "assistant" if message.role == "assistant" else "user"
    blocks: list[tuple[str, dict[str, Any]]] = []
    for part in message.parts:
        if isinstance(part, ToolResult):
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.call_id,
                "content": part.content,
            }
            if part.is_error:
                block["is_error"] = True
            blocks.append(("user", block))
        elif isinstance(part, ToolCall):
            blocks.append(
                (
                    "assistant",
                    {
                        "type": "tool_use",
                        "id": part.id,
                        "name": part.name,
                        "input": tool_input(part.arguments),
                    },
                )
            )
        elif isinstance(part, Thinking):
            if side != "assistant" or not part.signature:
                # the API takes thinking from the assistant only, and only signed (reasoning
                # from other providers has no signature and cannot be sent back)
                continue
            if part.redacted:
                blocks.append(("assistant", {"type": "redacted_thinking", "data": part.signature}))
            else:
                block = {"type": "thinking", "thinking": part.text}
                if part.signature is not None:
                    block["signature"] = part.signature
                blocks.append(("assistant", block))
        elif isinstance(part, Image) and side == "user":
            image = _image_block(part)
            blocks.append((side, image or {"type": "text", "text": part.text}))
        elif part.text.strip():
            blocks.append((side, {"type": "text", "text": part.text}))
    return blocks


def to_anthropic(messages: list[Message]) -> dict[str, Any]:
    """``{"system": ..., "messages": [...]}`` in Anthropic Messages shape (see module docs)."""
    system = "\n\n".join(m.text for m in messages if m.role == "system" and m.text)
    turns: list[dict[str, Any]] = []
    for message in messages:
        for role, block in _anthropic_blocks(message):
            if message.role == "system" and block["type"] in ("text", "image"):
                continue  # (its text is the system prompt; its tool calls and results stay)
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].append(block)
            else:
                turns.append({"role": role, "content": [block]})
    for turn in turns:
        if turn["role"] == "user":
            blocks = turn["content"]
            turn["content"] = [b for b in blocks if b["type"] == "tool_result"] + [
                b for b in blocks if b["type"] != "tool_result"
            ]
    if turns and turns[-1]["role"] == "assistant":
        # a final assistant turn is a prefill: the API rejects trailing white space there
        last = turns[-1]["content"][-1]
        if last["type"] == "text":
            last["text"] = last["text"].rstrip()
    if system:
        return {"system": system, "messages": turns}
    return {"messages": turns}
