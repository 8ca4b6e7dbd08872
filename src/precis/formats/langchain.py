"""LangChain message dumps.

Shapes read (a JSON list, ``{"messages": [...]}``, or JSON Lines with one message per line):

- ``messages_to_dict``: ``{"type": "human", "data": {"content": ..., ...}}``;
- the flat ``message.model_dump()`` / ``dict()`` shape: ``{"type": "human", "content": ...}``;
- ``dumpd`` serialisation: ``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
  "kwargs": {...}}``.

Types ``human`` / ``ai`` / ``system`` / ``tool`` / ``function`` / ``chat`` (and their
``...MessageChunk`` spellings) become user / assistant / system / tool / tool / ``role``.
An AI message's ``tool_calls`` (``name``, ``args`` object, ``id``) and the OpenAI-shaped
``additional_kwargs.tool_calls`` become :class:`ToolCall` parts (one part per call id, even
when LangChain stores a call in both places or in a ``tool_use`` content block). A
``ToolMessage`` answers ``tool_call_id``; ``status: "error"`` marks the result as an error.
Content is a string or a list of blocks (OpenAI parts, Anthropic ``tool_use`` / ``thinking``
/ ``image`` blocks, LangChain v1 ``reasoning`` / ``image`` / ``tool_call`` blocks).
Non-empty extra fields (``response_metadata``, ``usage_metadata``, ...) go into metadata.
"""

from __future__ import annotations

from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import (
    OPENAI_ROLES,
    ToolLinker,
    arguments_text,
    describe,
    image_from_url,
    optional_id,
    parse_openai_content,
    parse_openai_tool_calls,
    timestamp_of,
)
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
    "LANGCHAIN_TYPES",
    "LangChainFormat",
    "parse_langchain_messages",
    "sniff_langchain_messages",
]

LANGCHAIN_TYPES: dict[str, Role | None] = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "chat": None,  # the role is in the message
}
"""LangChain message types and the precis role each becomes."""

_CLASS_TYPES = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "function",
    "ChatMessage": "chat",
}
_CHUNK_TYPES = {f"{cls}Chunk": kind for cls, kind in _CLASS_TYPES.items()}
_SKIPPED_TYPES = frozenset({"remove"})  # LangGraph RemoveMessage markers
_TYPES_HELP = "expected human, ai, system, tool, function or chat"
_CHAT_ROLES: dict[str, Role] = {**OPENAI_ROLES, "human": "user", "ai": "assistant"}
_HANDLED = frozenset(
    {"type", "content", "id", "name", "tool_calls", "tool_call_id", "additional_kwargs", "role"}
)
_SNIFF_ITEMS = 5
# Claude Code log lines also have a "type"; these keys never appear in LangChain messages.
_FOREIGN_KEYS = ("uuid", "parentUuid", "sessionId", "message", "role")


def _message_type(item: dict[str, Any]) -> str | None:
    kind = item.get("type")
    if not isinstance(kind, str):
        return None
    return _CHUNK_TYPES.get(kind, kind)


def _unwrap(item: Any, label: str, where: str) -> tuple[str, dict[str, Any]]:
    """(type, fields) of one dumped message, whatever its serialisation."""
    if not isinstance(item, dict):
        raise FormatError(
            f"{label} is {describe(item)} (expected a message object with 'type')", where=where
        )
    if item.get("lc") == 1 and item.get("type") == "constructor":
        path = item.get("id")
        cls = path[-1] if isinstance(path, list) and path else None
        kind = (_CLASS_TYPES.get(cls) or _CHUNK_TYPES.get(cls)) if isinstance(cls, str) else None
        if kind is None:
            raise FormatError(f"{label} is a serialised {cls!r}, not a message", where=where)
        kwargs = item.get("kwargs")
        if not isinstance(kwargs, dict):
            raise FormatError(f"{label}: 'kwargs' is {describe(kwargs)}", where=where)
        return kind, kwargs
    kind = _message_type(item)
    if kind is None:
        raise FormatError(f"{label} has no 'type' ({_TYPES_HELP})", where=where)
    data = item.get("data")
    if isinstance(data, dict):
        return kind, data
    return kind, item


class _Reader:
    """Reads one conversation's messages; links results to calls like the OpenAI reader."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.linker = ToolLinker()

    def read(self, item: Any, index: int, where: str | None = None) -> Message | None:
        where = where or self.where
        label = f"message {index}"
        kind, data = _unwrap(item, label, where)
        if kind in _SKIPPED_TYPES:
            return None
        if kind not in LANGCHAIN_TYPES:
            raise FormatError(f"{label} has unknown type {kind!r} ({_TYPES_HELP})", where=where)
        role = LANGCHAIN_TYPES[kind]
        metadata: dict[str, Any] = {}
        if role is None:
            chat_role = data.get("role")
            if not isinstance(chat_role, str) or chat_role not in _CHAT_ROLES:
                raise FormatError(
                    f"{label} (chat) has unknown role {chat_role!r} (expected user, "
                    "assistant, system, tool, human or ai)",
                    where=where,
                )
            role = _CHAT_ROLES[chat_role]
            metadata["source_role"] = chat_role
        elif kind in ("function", "developer"):
            metadata["source_role"] = kind
        extra_kwargs = data.get("additional_kwargs")
        if extra_kwargs is None:
            extra_kwargs = {}
        if not isinstance(extra_kwargs, dict):
            raise FormatError(
                f"{label}: additional_kwargs is {describe(extra_kwargs)} (expected an object)",
                where=where,
            )
        parts, attached = self._content(data.get("content"), label, where)
        metadata.update(attached)
        rest_kwargs = dict(extra_kwargs)
        reasoning = rest_kwargs.pop("reasoning_content", None)
        if isinstance(reasoning, str) and reasoning:
            parts.insert(0, Thinking(reasoning))
        elif reasoning is not None:
            rest_kwargs["reasoning_content"] = reasoning
        name = data.get("name")
        if not isinstance(name, str):
            name = None
        if role == "assistant":
            parts.extend(self._calls(data, rest_kwargs, parts, index, label, where))
        elif role == "tool":
            parts = self._result(data, kind, parts, name, index, label, where)
        if role == "assistant":  # these became ToolCall parts
            rest_kwargs.pop("tool_calls", None)
            rest_kwargs.pop("function_call", None)
        if rest_kwargs:
            metadata["additional_kwargs"] = rest_kwargs
        for key, value in data.items():
            if key in _HANDLED or value is None or value == {} or value == []:
                continue
            if (key == "example" and value is False) or (key == "status" and value == "success"):
                continue
            metadata[str(key)] = value
        stamp = timestamp_of(data.get("timestamp")) if "timestamp" in data else None
        return Message(
            role=role,
            parts=parts,
            id=optional_id(data.get("id")),
            name=name,
            timestamp=stamp,
            metadata=metadata,
        )

    # -- content ---------------------------------------------------------------------

    def _content(
        self, content: Any, label: str, where: str
    ) -> tuple[list[Part], dict[str, Any]]:
        if not isinstance(content, list):
            return parse_openai_content(content, where=where, label=label)
        parts: list[Part] = []
        extra: dict[str, Any] = {}
        for number, block in enumerate(content):
            block_label = f"{label} block {number}"
            part = self._block(block, block_label, where) if isinstance(block, dict) else None
            if part is not None:
                parts.append(part)
                continue
            more, more_extra = parse_openai_content([block], where=where, label=block_label)
            parts.extend(more)
            for key, value in more_extra.items():
                if key == "attachments":
                    extra.setdefault("attachments", []).extend(value)
                else:
                    extra[key] = value
        return parts, extra

    def _block(self, block: dict[str, Any], label: str, where: str) -> Part | None:
        """Blocks OpenAI parts do not cover; ``None`` hands the block to the OpenAI reader."""
        kind = block.get("type")
        if kind in ("tool_use", "tool_call"):
            name = block.get("name")
            if not isinstance(name, str) or not name:
                raise FormatError(f"{label} ({kind}) has no 'name'", where=where)
            call_id = optional_id(block.get("id")) or "call_" + label.replace(" ", "_")
            args = block.get("input") if kind == "tool_use" else block.get("args")
            return ToolCall(call_id, name, arguments_text(args, where=where, label=label))
        if kind == "thinking":
            text = block.get("thinking")
            signature = block.get("signature")
            return Thinking(
                text if isinstance(text, str) else "",
                signature=signature if isinstance(signature, str) and signature else None,
            )
        if kind == "redacted_thinking":
            data = block.get("data")
            return Thinking("", signature=data if isinstance(data, str) else None, redacted=True)
        if kind == "reasoning":
            text = block.get("reasoning")
            if not isinstance(text, str):
                summary = block.get("summary")
                items = summary if isinstance(summary, list) else []
                pieces = [s.get("text") for s in items if isinstance(s, dict)]
                text = "\n\n".join(p for p in pieces if isinstance(p, str))
            return Thinking(text)
        if kind == "image":
            return _image_block(block)
        if kind == "tool_result":
            call_id = optional_id(block.get("tool_use_id")) or ""
            body, _ = parse_openai_content(block.get("content"), where=where, label=label)
            text = "\n\n".join(p.text for p in body if isinstance(p, Text))
            return ToolResult(call_id, text, is_error=block.get("is_error") is True)
        return None

    # -- tool calls and results --------------------------------------------------------

    def _calls(
        self,
        data: dict[str, Any],
        extra_kwargs: dict[str, Any],
        parts: list[Part],
        index: int,
        label: str,
        where: str,
    ) -> list[ToolCall]:
        seen = {p.id for p in parts if isinstance(p, ToolCall)}
        calls: list[ToolCall] = []
        raw = data.get("tool_calls")
        if raw is not None and not isinstance(raw, list):
            raise FormatError(
                f"{label}: tool_calls is {describe(raw)} (expected a list)", where=where
            )
        for number, call in enumerate(raw or []):
            call_label = f"{label} tool call {number}"
            if not isinstance(call, dict):
                raise FormatError(
                    f"{call_label} is {describe(call)} (expected an object)", where=where
                )
            if "function" in call:  # an OpenAI-shaped call stored in tool_calls
                calls.extend(
                    parse_openai_tool_calls([call], where=where, label=label, index=index)
                )
                continue
            name = call.get("name")
            if not isinstance(name, str) or not name:
                raise FormatError(f"{call_label} has no 'name'", where=where)
            call_id = optional_id(call.get("id")) or f"call_{index}_{number}"
            args = arguments_text(call.get("args"), where=where, label=call_label)
            calls.append(ToolCall(call_id, name, args))
        calls.extend(
            parse_openai_tool_calls(
                extra_kwargs.get("tool_calls"),
                where=where,
                label=f"{label} additional_kwargs",
                index=index,
            )
        )
        legacy = extra_kwargs.get("function_call")
        if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
            args = arguments_text(legacy.get("arguments"), where=where, label=label)
            calls.append(self.linker.legacy_call(legacy["name"], args, index))
        unique: list[ToolCall] = []
        for call in calls:
            if call.id not in seen:
                seen.add(call.id)
                unique.append(call)
        self.linker.calls([p for p in parts if isinstance(p, ToolCall)] + unique)
        return unique

    def _result(
        self,
        data: dict[str, Any],
        kind: str,
        parts: list[Part],
        name: str | None,
        index: int,
        label: str,
        where: str,
    ) -> list[Part]:
        texts = [p.text for p in parts if isinstance(p, Text)]
        others = [p for p in parts if not isinstance(p, Text)]
        if kind == "function":
            call_id = self.linker.legacy_result_id(name, index)
        else:
            raw_id = data.get("tool_call_id")
            if raw_id is not None and optional_id(raw_id) is None:
                raise FormatError(
                    f"{label}: tool_call_id is {describe(raw_id)} (expected a string)",
                    where=where,
                )
            call_id = self.linker.result_id(optional_id(raw_id), index)
        is_error = data.get("status") == "error"
        result = ToolResult(call_id, "\n\n".join(texts), is_error=is_error, name=name)
        return [result, *others]


def _image_block(block: dict[str, Any]) -> Image:
    source = block.get("source")
    if isinstance(source, dict):  # Anthropic shape
        if source.get("type") == "base64":
            media = source.get("media_type")
            data = source.get("data")
            return Image(
                media_type=media if isinstance(media, str) else None,
                data=data if isinstance(data, str) else None,
            )
        url = source.get("url")
        return Image(url=url if isinstance(url, str) else None)
    url = block.get("url")
    if isinstance(url, str):
        return image_from_url(url)
    data = block.get("base64", block.get("data"))
    media = block.get("mime_type", block.get("media_type"))
    return Image(
        media_type=media if isinstance(media, str) else None,
        data=data if isinstance(data, str) else None,
    )


def parse_langchain_messages(items: list[Any], where: str) -> list[Message]:
    """Dumped LangChain messages as precis messages (``remove`` markers skipped)."""
    if not isinstance(items, list):
        raise FormatError(f"messages is {describe(items)} (expected a list)", where=where)
    reader = _Reader(where)
    messages = (reader.read(item, index) for index, item in enumerate(items))
    return [m for m in messages if m is not None]


# -- detection -------------------------------------------------------------------------


def _item_score(item: Any) -> float:
    """0.9 for a ``data`` / ``dumpd`` message, 0.8 for a flat one, 0 for anything else."""
    if not isinstance(item, dict):
        return 0.0
    if item.get("lc") == 1 and item.get("type") == "constructor":
        path = item.get("id")
        cls = path[-1] if isinstance(path, list) and path else None
        return 0.9 if isinstance(cls, str) and (cls in _CLASS_TYPES or cls in _CHUNK_TYPES) \
            else 0.0
    kind = _message_type(item)
    if kind is None or (kind not in LANGCHAIN_TYPES and kind not in _SKIPPED_TYPES):
        return 0.0
    if any(key in item for key in _FOREIGN_KEYS) and not (kind == "chat" and "role" in item):
        return 0.0
    data = item.get("data")
    if isinstance(data, dict):
        return 0.9 if "content" in data else 0.0
    return 0.8 if "content" in item else 0.0


def sniff_langchain_messages(items: Any) -> float:
    """How sure we are that ``items`` is a list of dumped LangChain messages."""
    if not isinstance(items, list) or not items:
        return 0.0
    sample = items[:_SNIFF_ITEMS]
    scores = [_item_score(item) for item in sample]
    if min(scores) == 0.0:
        return 0.0
    # A lone "system" type also appears in other logs; ask for a LangChain-only type too.
    kinds = {_message_type(i) for i in sample if isinstance(i, dict)}
    if kinds <= {"system", "remove"} and max(scores) < 0.9:
        return 0.0
    return min(scores)


class LangChainFormat(ConversationFormat):
    """LangChain message dumps (``messages_to_dict``, flat ``model_dump``, or ``dumpd``)."""

    name = "langchain"
    description = "LangChain message dumps: messages_to_dict, model_dump or dumpd"

    def sniff(self, doc: Document) -> float:
        value = doc.value
        if doc.kind == "text":
            return 0.0
        if isinstance(value, dict):
            items = value.get("messages")
            return sniff_langchain_messages(items) * 0.95 if isinstance(items, list) else 0.0
        return sniff_langchain_messages(value)

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        metadata: dict[str, Any] = {}
        if isinstance(value, dict):
            items = value.get("messages")
            if not isinstance(items, list):
                raise FormatError(
                    f"'messages' is {describe(items)} (expected a list of messages)",
                    where=doc.source,
                )
            metadata = {str(k): v for k, v in value.items() if k != "messages"}
            messages = parse_langchain_messages(items, doc.source)
        elif isinstance(value, list):
            if doc.kind == "jsonl":
                reader = _Reader(doc.source)
                read = (reader.read(item, i, doc.where(i)) for i, item in enumerate(value))
                messages = [m for m in read if m is not None]
            else:
                messages = parse_langchain_messages(value, doc.source)
        else:
            raise FormatError(
                "expected a JSON list of LangChain messages or an object with 'messages'",
                where=doc.source,
            )
        conv_id = optional_id(metadata.pop("id", None)) if "id" in metadata else None
        return [
            Conversation(messages, id=conv_id, source_format=self.name, metadata=metadata)
        ]


FORMATS = (LangChainFormat(),)
