"""Anthropic Messages: a request object ``{"system", "messages", ...}`` or a bare message list.

Content blocks map onto precis parts: ``text`` -> :class:`Text`, ``image`` -> :class:`Image`,
``tool_use`` -> :class:`ToolCall` (``input`` kept as JSON text), ``tool_result`` ->
:class:`ToolResult` (block content joined into one string), ``thinking`` /
``redacted_thinking`` -> :class:`Thinking` (a redacted block keeps its encrypted ``data`` in
``signature``), ``document`` / ``search_result`` -> :class:`Text` with their readable text.

Anthropic sends tool results in ``user`` messages; precis gives them role ``tool``. A user
message that mixes tool results and text is split into runs (``tool`` then ``user``, in
order), each piece carrying ``metadata["split_from"]`` = the source message index; the
exporter (:mod:`precis.formats.export`) merges them back into one user turn. Messages with
role ``tool_result`` (written by some eval harnesses) are read like user messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from precis.errors import FormatError, NestingTooDeepError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import describe, parse_openai_tool_calls, timestamp_of
from precis.model import (
    Conversation,
    Image,
    Message,
    Part,
    Role,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)

__all__ = [
    "FORMATS",
    "AnthropicFormat",
    "AnthropicReader",
    "parse_anthropic_messages",
    "sniff_anthropic_messages",
]

_USER_ROLES = ("user", "tool_result", "tool")
_ROLES_HELP = "expected user, assistant, system or tool_result"
_TOOL_CALL_TYPES = ("tool_use", "server_tool_use", "mcp_tool_use")
# Block types only Anthropic uses; any of them in a message list settles the format.
_ANTHROPIC_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "search_result",
        "server_tool_use",
        "mcp_tool_use",
        "mcp_tool_result",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
    }
)
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "refusal", "input_text", "output_text"})
_OPENAI_KEYS = ("tool_calls", "function_call", "tool_call_id")
_SNIFF_LIMIT = 64


def _show(value: Any) -> str:
    """A short repr of a value for error messages."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dumps(value: Any, where: str, label: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:
        raise NestingTooDeepError(
            f"{label}: tool input is nested too deeply", where=where
        ) from None
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{label}: tool input is not JSON data ({exc})", where=where) from None


@dataclass
class AnthropicReader:
    """Reads Anthropic content into precis parts, remembering tool names by call id.

    One reader per conversation: a ``tool_result`` gets ``name`` from the ``tool_use`` that
    asked for it. ``label`` arguments name the message in errors (``"message 3"``); ``where``
    names the file or record.
    """

    tool_names: dict[str, str] = field(default_factory=dict)

    # -- content -----------------------------------------------------------------------

    def parts(self, content: Any, role: str, label: str, where: str) -> list[Part]:
        """The parts of one message's ``content`` (a string or a list of blocks)."""
        if isinstance(content, str):
            return [Text(content)]
        if not isinstance(content, list):
            raise FormatError(
                f"{label} has content {describe(content)} (expected a string or a list of "
                "content blocks)",
                where=where,
            )
        parts: list[Part] = []
        for index, block in enumerate(content):
            parts.append(self.block(block, role, f"{label} block {index}", where))
        return parts

    def block(self, block: Any, role: str, label: str, where: str) -> Part:
        """One content block as a part."""
        if isinstance(block, str):
            return Text(block)
        if not isinstance(block, dict):
            raise FormatError(
                f"{label} is {describe(block)} (expected a content block object)", where=where
            )
        kind = block.get("type")
        if kind is None and isinstance(block.get("text"), str):
            kind = "text"
        if not isinstance(kind, str):
            raise FormatError(f"{label} has no 'type'", where=where)
        if kind == "text":
            return Text(_string(block, "text", label, where))
        if kind in ("thinking", "redacted_thinking"):
            return _thinking(block, kind, label, where)
        if kind == "image":
            return _image(block.get("source"), label, where)
        if kind in _TOOL_CALL_TYPES:
            return self._tool_call(block, role, label, where)
        if kind == "tool_result" or kind.endswith("_tool_result"):
            return self._tool_result(block, role, label, where)
        if kind == "document":
            return Text(_document_text(block))
        if kind == "search_result":
            return Text(_search_result_text(block))
        text = block.get("text")
        if isinstance(text, str):
            return Text(text)
        raise FormatError(
            f"{label} has unknown type {_show(kind)} and no text (expected text, image, "
            "tool_use, tool_result, thinking, redacted_thinking, document or search_result)",
            where=where,
        )

    def _tool_call(self, block: dict[str, Any], role: str, label: str, where: str) -> ToolCall:
        if role in _USER_ROLES:
            raise FormatError(f"{label}: tool_use in a {role} message", where=where)
        call_id = _string(block, "id", label, where)
        name = _string(block, "name", label, where)
        self.tool_names[call_id] = name
        arguments = _dumps(block.get("input", {}), where, label)
        return ToolCall(id=call_id, name=name, arguments=arguments)

    def _tool_result(self, block: dict[str, Any], role: str, label: str, where: str) -> ToolResult:
        kind = block.get("type")
        if kind == "tool_result" and role == "assistant":
            raise FormatError(f"{label}: tool_result in an assistant message", where=where)
        call_id = _string(block, "tool_use_id", label, where)
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise FormatError(
                f"{label}: is_error is {describe(is_error)} (expected true or false)", where=where
            )
        content = _result_text(block.get("content"), label, where)
        return ToolResult(
            call_id=call_id,
            content=content,
            is_error=is_error,
            name=self.tool_names.get(call_id),
        )

    # -- messages ----------------------------------------------------------------------

    def message(
        self,
        item: Any,
        label: str,
        where: str,
        *,
        id: str | None = None,
        timestamp: str | None = None,
        metadata: dict[str, Any] | None = None,
        split_from: Any = None,
    ) -> list[Message]:
        """One Anthropic message as one or more precis messages (see the module docstring).

        ``id`` / ``timestamp`` / ``metadata`` override what the item itself carries;
        ``split_from`` is recorded on the pieces of a split user message.
        """
        if not isinstance(item, dict):
            raise FormatError(
                f"{label} is {describe(item)} (expected an object with role and content)",
                where=where,
            )
        role = item.get("role")
        if not isinstance(role, str) or role not in ("assistant", "system", *_USER_ROLES):
            shown = "no role" if role is None else f"unknown role {_show(role)}"
            raise FormatError(f"{label} has {shown} ({_ROLES_HELP})", where=where)
        if "content" not in item and role != "assistant":
            raise FormatError(f"{label} has no content", where=where)
        content = item.get("content", [])
        if role == "tool" and isinstance(content, str):
            # An OpenAI-style tool message inside an Anthropic list.
            call_id = item.get("tool_call_id", item.get("tool_use_id"))
            if isinstance(call_id, str):
                content = [{"type": "tool_result", "tool_use_id": call_id, "content": content}]
        parts = self.parts(content, role, label, where)
        meta = _extra_fields(item)
        if "tool_calls" in item or "function_call" in item:
            # OpenAI calls in an Anthropic list (a mixed history): read as calls, never
            # dropped into metadata where no one sees them
            if role != "assistant" or "function_call" in item:
                raise FormatError(f"{label} has OpenAI "
                                  f"{'tool_calls' if 'tool_calls' in item else 'function_call'}"
                                  " (read the file with --format openai)", where=where)
            calls = parse_openai_tool_calls(item["tool_calls"], where=where, label=label,
                                            index=len(self.tool_names))
            for call in calls:
                self.tool_names[call.id] = call.name
            parts = [*parts, *calls]
            meta.pop("tool_calls")
        if metadata:
            meta.update(metadata)
        if role in ("tool_result", "tool"):
            meta["source_role"] = role
        msg_id = id if id is not None else _optional_str(item.get("id"))
        stamp = timestamp
        if stamp is None and "timestamp" in item:
            stamp = timestamp_of(item["timestamp"])
            if stamp is None:
                meta["timestamp"] = item["timestamp"]  # kept as written: not a date we know
        name = _optional_str(item.get("name"))
        if role in ("assistant", "system"):
            out_role: Role = "assistant" if role == "assistant" else "system"
            return [Message(out_role, parts, id=msg_id, name=name, timestamp=stamp, metadata=meta)]
        runs = _split_user_parts(parts)
        if len(runs) == 1:
            run_role, run_parts = runs[0]
            return [
                Message(run_role, run_parts, id=msg_id, name=name, timestamp=stamp, metadata=meta)
            ]
        pieces: list[Message] = []
        for number, (run_role, run_parts) in enumerate(runs):
            piece_meta = dict(meta)
            piece_meta["split_from"] = split_from
            piece_id = msg_id if msg_id is None or number == 0 else f"{msg_id}#{number}"
            pieces.append(
                Message(
                    run_role,
                    run_parts,
                    id=piece_id,
                    name=name,
                    timestamp=stamp,
                    metadata=piece_meta,
                )
            )
        return pieces


def _split_user_parts(parts: list[Part]) -> list[tuple[Role, list[Part]]]:
    """Runs of a user message's parts: tool results -> ``tool``, anything else -> ``user``."""
    runs: list[tuple[Role, list[Part]]] = []
    for part in parts:
        role: Role = "tool" if isinstance(part, ToolResult) else "user"
        if runs and runs[-1][0] == role:
            runs[-1][1].append(part)
        else:
            runs.append((role, [part]))
    return runs or [("user", [])]


def _string(block: dict[str, Any], key: str, label: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        kind = block.get("type", "block")
        shown = "no" if value is None else f"a non-string ({describe(value)})"
        raise FormatError(f"{label}: {_show(kind)} has {shown} {key!r}", where=where)
    return value


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _extra_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {
        str(k): v
        for k, v in item.items()
        if k not in ("role", "content", "id", "timestamp", "name")
    }


def _thinking(block: dict[str, Any], kind: str, label: str, where: str) -> Thinking:
    if kind == "redacted_thinking":
        data = block.get("data")
        if not isinstance(data, str):
            raise FormatError(f"{label}: redacted_thinking has no 'data'", where=where)
        return Thinking(text="", signature=data, redacted=True)
    signature = block.get("signature")
    return Thinking(
        text=_string(block, "thinking", label, where),
        signature=signature if isinstance(signature, str) and signature else None,
    )


def _image(source: Any, label: str, where: str) -> Image:
    if not isinstance(source, dict):
        raise FormatError(f"{label}: image has no 'source' object", where=where)
    kind = source.get("type")
    if kind == "base64":
        return Image(
            media_type=_optional_str(source.get("media_type")),
            data=_optional_str(source.get("data")),
        )
    if kind == "url":
        return Image(url=_optional_str(source.get("url")))
    if kind == "file":
        file_id = _optional_str(source.get("file_id"))
        return Image(caption=f"file {file_id}" if file_id else None)
    raise FormatError(
        f"{label}: image source type {_show(kind)} (expected base64, url or file)", where=where
    )


def _document_text(block: dict[str, Any]) -> str:
    title = _optional_str(block.get("title"))
    source = block.get("source")
    head = f"[document: {title}]" if title else "[document]"
    if isinstance(source, dict):
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return f"{head}\n{source['data']}"
        if source.get("type") == "content":
            body = _plain_texts(source.get("content"))
            return f"{head}\n{body}" if body else head
        if source.get("type") == "url" and isinstance(source.get("url"), str) and not title:
            return f"[document: {source['url']}]"
    return head


def _search_result_text(block: dict[str, Any]) -> str:
    title = _optional_str(block.get("title")) or ""
    source = _optional_str(block.get("source")) or ""
    head = f"[search result: {title} ({source})]" if source else f"[search result: {title}]"
    body = _plain_texts(block.get("content"))
    return f"{head}\n{body}" if body else head


def _plain_texts(content: Any) -> str:
    """The text of a string or a list of text blocks; other items are skipped."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for item in content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
    return "\n".join(texts)


def _result_text(content: Any, label: str, where: str) -> str:
    """A tool result's content as one string (text blocks joined by newlines)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise FormatError(
            f"{label}: tool_result content is {describe(content)} (expected a string or a list "
            "of blocks)",
            where=where,
        )
    pieces: list[str] = []
    for index, item in enumerate(content):
        if isinstance(item, str):
            pieces.append(item)
            continue
        if not isinstance(item, dict):
            raise FormatError(
                f"{label}: tool_result content item {index} is {describe(item)}", where=where
            )
        kind = item.get("type")
        if kind == "image":
            pieces.append("[image]")
        elif kind == "document":
            pieces.append(_document_text(item))
        elif kind == "search_result":
            pieces.append(_search_result_text(item))
        elif isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif isinstance(item.get("title"), str) or isinstance(item.get("url"), str):
            # Server tool results (web search hits, ...) carry titles and URLs, not text.
            found = (item.get("title"), item.get("url"))
            pieces.append(" ".join(x for x in found if isinstance(x, str)))
        elif isinstance(kind, str):
            pieces.append(f"[{kind}]")
        else:
            raise FormatError(
                f"{label}: tool_result content item {index} has no type and no text",
                where=where,
            )
    return "\n".join(pieces)


def _system_parts(system: Any, where: str) -> list[Part]:
    if system is None:
        return []
    if isinstance(system, str):
        return [Text(system)] if system else []
    if isinstance(system, dict):
        system = [system]
    if not isinstance(system, list):
        raise FormatError(
            f"'system' is {describe(system)} (expected a string or a list of text blocks)",
            where=where,
        )
    parts: list[Part] = []
    for index, block in enumerate(system):
        if isinstance(block, str):
            parts.append(Text(block))
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(Text(block["text"]))
        else:
            raise FormatError(
                f"system block {index} is {describe(block)} without text (expected a text block)",
                where=where,
            )
    return parts


def parse_anthropic_messages(items: list[Any], where: str, system: Any = None) -> list[Message]:
    """Anthropic messages (and an optional top-level ``system``) as precis messages.

    ``where`` names the source in errors, which also give the message and block index.
    Raises :class:`~precis.errors.FormatError` on a wrong structure.
    """
    if not isinstance(items, list):
        raise FormatError(f"messages is {describe(items)} (expected a list)", where=where)
    messages: list[Message] = []
    system_parts = _system_parts(system, where)
    if system_parts:
        messages.append(Message("system", system_parts))
    reader = AnthropicReader()
    for index, item in enumerate(items):
        messages.extend(reader.message(item, f"message {index}", where, split_from=index))
    return messages


# -- detection -------------------------------------------------------------------------


def sniff_anthropic_messages(items: Any) -> float:
    """How sure we are that ``items`` is a list of Anthropic messages (0 - 0.95).

    Anthropic-only block types (tool_use, tool_result, thinking, ...) or role
    ``tool_result`` give 0.95; text-block lists 0.5; plain string content only 0.2 (an
    OpenAI list is likelier); any OpenAI marker (tool_calls, role tool, image_url) 0.05.
    """
    if not isinstance(items, list) or not items:
        return 0.0
    sample = items[:_SNIFF_LIMIT]
    anthropic = openai = blocks = 0
    message_like = 0
    for item in sample:
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            continue
        if "content" not in item and item.get("role") != "assistant":
            continue
        message_like += 1
        role = item["role"]
        if role == "tool_result":
            anthropic += 1
        elif role in ("tool", "function", "developer"):
            openai += 1
        if any(key in item for key in _OPENAI_KEYS):
            openai += 1
        content = item.get("content")
        if not isinstance(content, list):
            continue
        blocks += 1
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if not isinstance(kind, str):
                continue
            if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                anthropic += 1
            elif kind in _OPENAI_PARTS:
                openai += 1
    if message_like * 2 < len(sample):
        return 0.0
    if anthropic:
        return 0.95 if not openai else 0.6
    if openai:
        return 0.05
    return 0.5 if blocks else 0.2


def _sniff_request(value: dict[str, Any]) -> float:
    items = value.get("messages")
    if not isinstance(items, list):
        return 0.0
    score = sniff_anthropic_messages(items) if items else 0.2
    system = value.get("system")
    if score > 0.05 and isinstance(system, (str, list)):
        score = max(score, 0.9)
    return score


class AnthropicFormat(ConversationFormat):
    """Anthropic Messages: ``{"system": ..., "messages": [...]}`` or a list of messages."""

    name = "anthropic"
    description = "Anthropic Messages API: request object or message list (content blocks)"

    def sniff(self, doc: Document) -> float:
        if doc.kind not in ("json", "data"):
            return 0.0
        value = doc.value
        if isinstance(value, dict):
            return _sniff_request(value)
        return sniff_anthropic_messages(value)

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        if doc.kind not in ("json", "data"):
            raise FormatError(
                "expected a JSON object with 'messages' or a JSON list of messages",
                where=doc.source,
            )
        if isinstance(value, dict):
            items = value.get("messages")
            if not isinstance(items, list):
                raise FormatError(
                    f"'messages' is {describe(items)} (expected a list of messages)",
                    where=doc.source,
                )
            messages = parse_anthropic_messages(items, doc.source, value.get("system"))
            conv_id = _optional_str(value.get("id"))
            skip = ("messages", "system", "id") if conv_id else ("messages", "system")
            metadata = {str(k): v for k, v in value.items() if k not in skip}
            conversation = Conversation(
                messages, id=conv_id, source_format=self.name, metadata=metadata
            )
        elif isinstance(value, list):
            conversation = Conversation(
                parse_anthropic_messages(value, doc.source), source_format=self.name
            )
        else:
            raise FormatError(
                f"input is {describe(value)} (expected an object with 'messages' or a list of "
                "messages)",
                where=doc.source,
            )
        return [conversation] if conversation.messages else []


FORMATS = (AnthropicFormat(),)
