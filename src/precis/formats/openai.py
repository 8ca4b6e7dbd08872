"""OpenAI Chat Completions messages, alone or as a collection.

Shapes read (``doc.kind`` json / data / jsonl):

- a JSON list of messages, or ``{"messages": [...], "model": ..., "tools": ...}`` (the other
  top-level keys go into ``Conversation.metadata``);
- JSON Lines with one message per line (one conversation);
- JSON Lines (or a JSON list) with one ``{"messages": [...]}`` conversation per record (a
  collection; ids from ``id`` / ``conversation_id``).

Message mapping: ``content`` may be a string, ``null`` (tau-bench sets it on tool-call
messages) or a list of parts (``text``, ``image_url`` -> :class:`Image`, ``refusal``,
``input_audio`` / ``file`` -> a ``[audio]`` / ``[file: name]`` placeholder with the raw part
kept in ``metadata["attachments"]``). ``tool_calls`` become :class:`ToolCall` parts; a
``tool`` message becomes a :class:`ToolResult`. The legacy ``function_call`` /
``function`` role pair gets a deterministic call id (``fn_<message index>``) so the call and
its result stay linked. ``developer`` becomes ``system`` with
``metadata["source_role"] = "developer"``. Unknown keys go into ``Message.metadata``.

:func:`parse_openai_messages` and the smaller helpers here are reused by the other
OpenAI-family readers (LangChain, SWE-agent, OpenHands, nested collections).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from precis.errors import FormatError, NestingTooDeepError
from precis.formats._reader import Document
from precis.formats._timestamps import to_iso
from precis.formats.base import ConversationFormat
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
    "OPENAI_ROLES",
    "OpenAIFormat",
    "OpenAIMessageReader",
    "ToolLinker",
    "arguments_text",
    "describe",
    "image_from_url",
    "optional_id",
    "parse_openai_content",
    "parse_openai_messages",
    "parse_openai_tool_calls",
    "sniff_openai_messages",
    "text_field",
    "timestamp_of",
]

OPENAI_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
"""OpenAI roles and the precis role each becomes."""

_ROLES_HELP = "expected system, developer, user, assistant, tool or function"
_SNIFF_ITEMS = 8
_HANDLED_KEYS = frozenset(
    {
        "role",
        "content",
        "name",
        "id",
        "tool_calls",
        "tool_call_id",
        "function_call",
        "refusal",
        "reasoning_content",
        "timestamp",
        "created_at",
    }
)
# Block types only Anthropic writes; one of them means the list is not ours.
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
    }
)
_OPENAI_PARTS = frozenset(
    {"image_url", "input_audio", "refusal", "file", "input_text", "output_text", "input_image"}
)
_TEXT_PARTS = ("text", "input_text", "output_text")
# LangChain message dumps carry these ``type`` values; such lists belong to langchain.py.
_LANGCHAIN_TYPES = frozenset({"human", "ai", "chat", "constructor"})


# -- small shared helpers --------------------------------------------------------------


def describe(value: Any) -> str:
    """What kind of JSON value ``value`` is, for error messages (``"a string"``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), f"a {type(value).__name__}")


def text_field(item: dict[str, Any], key: str = "type") -> str | None:
    """``item[key]`` when it is text (a block's ``type``, a message's ``role``), else None.

    Input data may hold a list or an object where a name is expected; a name is compared
    with sets of known names only through this, so such a value is "not one of them"
    instead of a crash (an unhashable value cannot be looked up in a set)."""
    value = item.get(key)
    return value if isinstance(value, str) else None


def optional_id(value: Any) -> str | None:
    """An id field as a string (ids written as numbers included), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, int):
        return str(value)
    return None


def timestamp_of(value: Any) -> str | None:
    """A source time (ISO-ish string, or Unix seconds / milliseconds) as ISO 8601, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return to_iso(value)
    if isinstance(value, (int, float)):
        seconds = float(value)
        if 1e12 <= seconds < 1e14:  # milliseconds
            seconds /= 1000
        if 1e8 <= seconds < 1e10:
            return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()
    return None


def arguments_text(arguments: Any, *, where: str, label: str) -> str:
    """Tool-call arguments as JSON text: strings as sent, objects serialised, None -> ``{}``."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False)
    except RecursionError:
        raise NestingTooDeepError(f"{label}: arguments nested too deeply", where=where) from None
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{label}: arguments are not JSON data ({exc})", where=where) from None


def image_from_url(url: str) -> Image:
    """An image part: ``data:image/png;base64,...`` -> media type + data; URLs kept as is."""
    if url.startswith("data:") and "," in url:
        head, data = url[5:].split(",", 1)
        media_type = head.split(";", 1)[0] or None
        return Image(media_type=media_type, data=data)
    return Image(url=url)


# -- content ---------------------------------------------------------------------------


def parse_openai_content(
    content: Any, *, where: str, label: str
) -> tuple[list[Part], dict[str, Any]]:
    """The parts of an OpenAI ``content`` value, and metadata the parts could not hold.

    ``content`` is a string, ``None`` or a list of content parts. The metadata may hold
    ``attachments`` (raw audio / file / unknown parts, kept so nothing is lost) and
    ``refusal: True``. Raises :class:`FormatError` naming ``label`` on a wrong structure.
    """
    extra: dict[str, Any] = {}
    if content is None:
        return [], extra
    if isinstance(content, str):
        return ([Text(content)] if content else []), extra
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise FormatError(
            f"{label} has content {describe(content)} (expected a string, null or a list "
            "of content parts)",
            where=where,
        )
    parts: list[Part] = []
    for index, item in enumerate(content):
        part_label = f"{label} part {index}"
        if isinstance(item, str):
            parts.append(Text(item))
            continue
        if not isinstance(item, dict):
            raise FormatError(
                f"{part_label} is {describe(item)} (expected a content part object)",
                where=where,
            )
        part = _content_part(item, part_label, where, extra)
        if part is not None:
            parts.append(part)
    return parts, extra


def _content_part(
    item: dict[str, Any], label: str, where: str, extra: dict[str, Any]
) -> Part | None:
    kind = item.get("type")
    if kind is None and isinstance(item.get("text"), str):
        kind = "text"
    if kind in _TEXT_PARTS:
        text = item.get("text")
        if not isinstance(text, str):
            raise FormatError(f"{label} ({kind}) has no 'text' string", where=where)
        return Text(text)
    if kind in ("image_url", "input_image"):
        raw = item.get("image_url")
        url = raw.get("url") if isinstance(raw, dict) else raw
        if not isinstance(url, str):
            raise FormatError(f"{label} (image_url) has no 'url' string", where=where)
        return image_from_url(url)
    if kind == "refusal":
        text = item.get("refusal")
        if not isinstance(text, str):
            raise FormatError(f"{label} (refusal) has no 'refusal' string", where=where)
        extra["refusal"] = True
        return Text(text)
    extra.setdefault("attachments", []).append(item)
    if kind == "input_audio":
        audio = item.get("input_audio")
        fmt = audio.get("format") if isinstance(audio, dict) else None
        return Text(f"[audio: {fmt}]" if isinstance(fmt, str) else "[audio]")
    if kind in ("file", "input_file"):
        file = item.get("file")
        source = file if isinstance(file, dict) else item
        name = source.get("filename") or source.get("file_id")
        return Text(f"[file: {name}]" if isinstance(name, str) else "[file]")
    return None


# -- tool calls ------------------------------------------------------------------------


def parse_openai_tool_calls(
    raw: Any, *, where: str, label: str, index: int
) -> list[ToolCall]:
    """``tool_calls`` as :class:`ToolCall` parts.

    Each call is ``{"id", "type": "function", "function": {"name", "arguments"}}`` (a flat
    ``{"id", "name", "arguments"}`` is accepted too). Arguments given as an object are
    serialised to JSON; a missing id becomes ``call_<index>_<n>``.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FormatError(f"{label}: tool_calls is {describe(raw)} (expected a list)", where=where)
    calls: list[ToolCall] = []
    for number, call in enumerate(raw):
        call_label = f"{label} tool call {number}"
        if not isinstance(call, dict):
            raise FormatError(f"{call_label} is {describe(call)} (expected an object)", where=where)
        function = call.get("function")
        if isinstance(function, dict):
            name, arguments = function.get("name"), function.get("arguments")
        elif isinstance(call.get("custom"), dict):
            name, arguments = call["custom"].get("name"), call["custom"].get("input")
        else:
            name, arguments = call.get("name"), call.get("arguments", call.get("args"))
        if not isinstance(name, str) or not name:
            raise FormatError(f"{call_label} has no function name", where=where)
        call_id = optional_id(call.get("id")) or f"call_{index}_{number}"
        calls.append(
            ToolCall(
                id=call_id,
                name=name,
                arguments=arguments_text(arguments, where=where, label=call_label),
            )
        )
    return calls


# -- messages --------------------------------------------------------------------------


class ToolLinker:
    """Links tool results to their calls when the source does not name the call.

    A result without a call id answers the oldest unanswered call of the latest message
    that made calls; a legacy ``function`` result answers the latest unanswered legacy
    ``function_call`` (same name preferred). Legacy calls get the deterministic id
    ``fn_<message index>``.
    """

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._legacy: list[tuple[str, str]] = []

    def calls(self, calls: Sequence[ToolCall]) -> None:
        """Record the calls one message made (the ones later results may answer)."""
        if calls:
            self._pending = [c.id for c in calls]

    def legacy_call(self, name: str, arguments: str, index: int) -> ToolCall:
        """A legacy ``function_call`` of message ``index`` as a :class:`ToolCall`."""
        call = ToolCall(id=f"fn_{index}", name=name, arguments=arguments)
        self._legacy.append((call.id, name))
        return call

    def result_id(self, call_id: str | None, index: int) -> str:
        """The call a result answers: ``call_id`` if given, else the oldest pending call."""
        if call_id is None:
            call_id = self._pending[0] if self._pending else f"tool_result_{index}"
        if call_id in self._pending:
            self._pending.remove(call_id)
        return call_id

    def legacy_result_id(self, name: str | None, index: int) -> str:
        """The legacy call a ``function`` message answers (``fn_result_<index>`` if none)."""
        if not self._legacy:
            return f"fn_result_{index}"
        for position in range(len(self._legacy) - 1, -1, -1):
            if self._legacy[position][1] == name:
                return self._legacy.pop(position)[0]
        return self._legacy.pop()[0]


class OpenAIMessageReader:
    """Reads OpenAI messages one at a time, linking tool results to their calls.

    One reader per conversation; its :class:`ToolLinker` pairs results without a
    ``tool_call_id`` (and legacy ``function`` messages) with their calls.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.linker = ToolLinker()

    def read(
        self, item: Any, index: int, *, where: str | None = None, label: str | None = None
    ) -> Message:
        """Message ``index`` of the conversation; errors name ``label`` (``message N``)."""
        where = where or self.where
        label = label or f"message {index}"
        if not isinstance(item, dict):
            raise FormatError(
                f"{label} is {describe(item)} (expected an object with role and content)",
                where=where,
            )
        source_role = item.get("role")
        if source_role is None:
            raise FormatError(f"{label} has no role ({_ROLES_HELP})", where=where)
        if not isinstance(source_role, str) or source_role not in OPENAI_ROLES:
            shown = repr(source_role) if isinstance(source_role, str) else describe(source_role)
            raise FormatError(f"{label} has unknown role {shown} ({_ROLES_HELP})", where=where)
        role = OPENAI_ROLES[source_role]
        parts, extra = parse_openai_content(item.get("content"), where=where, label=label)
        metadata: dict[str, Any] = {
            str(k): v for k, v in item.items() if k not in _HANDLED_KEYS
        }
        metadata.update(extra)
        if source_role != role:
            metadata["source_role"] = source_role
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            metadata["name"] = name
            name = None
        stamp = None
        for key in ("timestamp", "created_at"):
            if key in item:
                iso = timestamp_of(item[key])
                stamp = stamp or iso
                if iso != item[key]:
                    metadata[key] = item[key]  # keep the source spelling
        reasoning = item.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            parts.insert(0, Thinking(reasoning))
        elif reasoning is not None:
            metadata["reasoning_content"] = reasoning
        refusal = item.get("refusal")
        if isinstance(refusal, str) and refusal:
            parts.append(Text(refusal))
            metadata["refusal"] = True
        if source_role == "assistant":
            parts.extend(self._calls(item, index, label, where))
        elif "tool_calls" in item or "function_call" in item:
            for key in ("tool_calls", "function_call"):
                if item.get(key) is not None:
                    raise FormatError(f"{label}: {key} on a {source_role} message", where=where)
        if role == "tool":
            parts = self._result(item, source_role, parts, name, index, label, where, metadata)
        return Message(
            role=role,
            parts=parts,
            id=optional_id(item.get("id")),
            name=name,
            timestamp=stamp,
            metadata=metadata,
        )

    def _calls(self, item: dict[str, Any], index: int, label: str, where: str) -> list[Part]:
        calls = parse_openai_tool_calls(
            item.get("tool_calls"), where=where, label=label, index=index
        )
        legacy = item.get("function_call")
        if legacy is not None:
            if not isinstance(legacy, dict):
                raise FormatError(
                    f"{label}: function_call is {describe(legacy)} (expected an object)",
                    where=where,
                )
            name = legacy.get("name")
            if not isinstance(name, str) or not name:
                raise FormatError(f"{label}: function_call has no name", where=where)
            arguments = arguments_text(
                legacy.get("arguments"), where=where, label=f"{label} function_call"
            )
            calls.append(self.linker.legacy_call(name, arguments, index))
        self.linker.calls(calls)
        return list(calls)

    def _result(
        self,
        item: dict[str, Any],
        source_role: str,
        parts: list[Part],
        name: str | None,
        index: int,
        label: str,
        where: str,
        metadata: dict[str, Any],
    ) -> list[Part]:
        texts = [p.text for p in parts if isinstance(p, Text)]
        others = [p for p in parts if not isinstance(p, Text)]
        if source_role == "function":
            call_id = self.linker.legacy_result_id(name, index)
        else:
            raw_id = item.get("tool_call_id")
            if raw_id is not None and optional_id(raw_id) is None:
                raise FormatError(
                    f"{label}: tool_call_id is {describe(raw_id)} (expected a string)",
                    where=where,
                )
            call_id = self.linker.result_id(optional_id(raw_id), index)
        is_error = metadata.pop("is_error", False)
        if not isinstance(is_error, bool):
            metadata["is_error"] = is_error
            is_error = False
        content = "\n\n".join(texts)
        return [ToolResult(call_id=call_id, content=content, is_error=is_error, name=name), *others]


def parse_openai_messages(items: list[Any], where: str) -> list[Message]:
    """OpenAI Chat Completions messages as precis messages.

    ``where`` names the source in errors; messages are named by their index in ``items``.
    Raises :class:`~precis.errors.FormatError` on a wrong structure (a message that is not
    an object, an unknown role, ``tool_calls`` that is not a list, ...).
    """
    if not isinstance(items, list):
        raise FormatError(f"messages is {describe(items)} (expected a list)", where=where)
    reader = OpenAIMessageReader(where)
    return [reader.read(item, index) for index, item in enumerate(items)]


# -- detection -------------------------------------------------------------------------


def sniff_openai_messages(items: Any) -> float:
    """How sure we are that ``items`` is a list of OpenAI messages (0, 0.6 or 0.9).

    Looks at the first few items only. Any Anthropic-only marker (role ``tool_result``,
    ``tool_use`` / ``thinking`` blocks, image ``source``) or a LangChain ``type`` gives 0;
    OpenAI markers (``tool_calls``, role ``tool``, ``image_url`` parts) give 0.9; plain
    role / content messages 0.6.
    """
    if not isinstance(items, list) or not items:
        return 0.0
    marked = False
    for item in items[:_SNIFF_ITEMS]:
        if not isinstance(item, dict):
            return 0.0
        role = item.get("role")
        if not isinstance(role, str) or role not in OPENAI_ROLES:
            return 0.0
        if text_field(item) in _LANGCHAIN_TYPES or "data" in item:
            return 0.0
        if "content" not in item and not ("tool_calls" in item or "function_call" in item):
            return 0.0
        if role in ("tool", "function", "developer") or any(
            key in item for key in ("tool_calls", "tool_call_id", "function_call")
        ):
            marked = True
        content = item.get("content")
        if isinstance(content, list):
            for block in content[:_SNIFF_ITEMS]:
                if not isinstance(block, dict):
                    continue
                kind = text_field(block)
                if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                    return 0.0
                if kind in _OPENAI_PARTS:
                    marked = True
    return 0.9 if marked else 0.6


def _is_conversation_record(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("messages"), list) and (
        "role" not in value
    )


def _sniff_record(value: dict[str, Any]) -> float:
    """A ``{"messages": [...]}`` object; a top-level ``system`` means Anthropic."""
    if "system" in value:
        return 0.0
    items = value["messages"]
    return sniff_openai_messages(items) if items else 0.3


def _sniff_records(records: Sequence[Any]) -> float:
    sample = records[:_SNIFF_ITEMS]
    if all(_is_conversation_record(r) for r in sample):
        # One {"messages": [...]} per record is OpenAI's own dataset / fine-tuning shape.
        score = min(_sniff_record(r) for r in sample)
        return max(score, 0.85) if score >= 0.6 else score
    return sniff_openai_messages(list(sample))


class OpenAIFormat(ConversationFormat):
    """OpenAI Chat Completions messages (list, ``{"messages"}`` object, or JSON Lines)."""

    name = "openai"
    description = "OpenAI Chat Completions messages: list, {messages} object, or JSON Lines"

    def sniff(self, doc: Document) -> float:
        value = doc.value
        if doc.kind == "jsonl":
            return _sniff_records(value) if value else 0.0
        if doc.kind not in ("json", "data"):
            return 0.0
        if isinstance(value, dict):
            return _sniff_record(value) if _is_conversation_record(value) else 0.0
        if isinstance(value, list) and value:
            return _sniff_records(value)
        return 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        if doc.kind == "text" or not isinstance(value, (list, dict)):
            raise FormatError(
                "expected JSON: a list of messages, an object with 'messages', or JSON Lines",
                where=doc.source,
            )
        if isinstance(value, dict):
            return [self._conversation(value, doc.source, "input")]
        if value and _is_conversation_record(value[0]):
            return [
                self._conversation(record, doc.where(index), f"record {index}")
                for index, record in enumerate(value)
            ]
        if doc.kind == "jsonl":
            reader = OpenAIMessageReader(doc.source)
            messages = [
                reader.read(item, index, where=doc.where(index))
                for index, item in enumerate(value)
            ]
        else:
            messages = parse_openai_messages(value, doc.source)
        return [Conversation(messages, source_format=self.name)]

    def _conversation(self, record: Any, where: str, label: str) -> Conversation:
        if not isinstance(record, dict):
            raise FormatError(
                f"{label} is {describe(record)} (expected an object with 'messages')",
                where=where,
            )
        items = record.get("messages")
        if not isinstance(items, list):
            raise FormatError(
                f"{label}: 'messages' is {describe(items)} (expected a list of messages)",
                where=where,
            )
        metadata = {str(k): v for k, v in record.items() if k != "messages"}
        conv_id = None
        for key in ("id", "conversation_id"):
            conv_id = optional_id(metadata.get(key))
            if conv_id is not None:
                del metadata[key]
                break
        title = record.get("title")
        if isinstance(title, str):
            metadata.pop("title")
        return Conversation(
            parse_openai_messages(items, where),
            id=conv_id,
            source_format=self.name,
            title=title if isinstance(title, str) else None,
            metadata=metadata,
        )


FORMATS = (OpenAIFormat(),)
