"""ShareGPT conversations (``{"conversations": [{"from": ..., "value": ...}]}``).

Shapes read (``doc.kind`` json / jsonl / data):

- one object ``{"conversations": [...], "id"?: ..., "system"?: ..., "tools"?: ...}``;
- a JSON list, or JSON Lines, of such objects: a collection, one conversation per record,
  its id from ``id`` when present;
- a bare list of turns ``[{"from": "human", "value": ...}, ...]``: one conversation.

Turn mapping (``from`` is matched case-insensitively; ``role`` / ``content`` are accepted in
place of ``from`` / ``value``, as some LLaMA-Factory style datasets write them):

=============================================  ==========================================
``human``, ``user``                            ``user``
``gpt``, ``assistant``, ``chatgpt``, ``bard``,  ``assistant``
``bing``
``system``                                     ``system``
``function_call``                              ``assistant`` with :class:`ToolCall` parts
``observation``, ``tool``                      ``tool`` with a :class:`ToolResult`
=============================================  ==========================================

A ``function_call`` value is JSON ``{"name": ..., "arguments": ...}`` (glaive /
LLaMA-Factory style), or a list of such objects for parallel calls. ShareGPT has no call
ids, so each call gets a deterministic one, ``call_<turn>`` (``call_<turn>_<k>`` for the
k-th of parallel calls), and each ``observation`` answers the oldest call still open. The
source ``from`` value is kept in ``Message.metadata["source_role"]``; other turn keys go into
``Message.metadata``. A record's ``system`` string becomes a leading system message; its
other keys (``tools``, ...) go into ``Conversation.metadata``.

An unknown ``from`` value, a missing ``value`` or ``conversations`` that is not a list
raises :class:`~precis.errors.FormatError` naming the record (line) and turn index.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import arguments_text, describe, optional_id
from precis.model import Conversation, Message, Part, Role, Text, ToolCall, ToolResult

__all__ = ["FORMATS", "SHAREGPT_ROLES", "ShareGPTFormat", "parse_sharegpt_turns"]

SHAREGPT_ROLES: dict[str, Role] = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "system": "system",
    "function_call": "assistant",
    "observation": "tool",
    "tool": "tool",
}
"""ShareGPT ``from`` values and the precis role each becomes."""

_ROLES_HELP = "expected human, gpt, system, user, assistant, function_call, observation or tool"
_TURN_KEYS = ("from", "value", "role", "content")
_RECORD_KEYS = frozenset({"conversations", "id", "system", "title"})
_SNIFF_RECORDS = 8


def _speaker(turn: dict[str, Any]) -> Any:
    return turn["from"] if "from" in turn else turn.get("role")


def _is_turn(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if "from" in value and "value" in value:
        return True
    speaker = value.get("role")
    # role / content turns count only with a ShareGPT-only speaker, else they are OpenAI's.
    return (
        "content" in value
        and isinstance(speaker, str)
        and speaker.lower() in ("human", "gpt", "function_call", "observation")
    )


def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and "conversations" in value and "role" not in value


class _TurnReader:
    """Reads the turns of one conversation, linking observations to open calls."""

    def __init__(self, where: str, label: str) -> None:
        self.where = where
        self.label = label
        self.open_calls: deque[ToolCall] = deque()

    def read(self, turn: Any, index: int) -> Message:
        label = f"{self.label}turn {index}"
        if not isinstance(turn, dict):
            raise FormatError(
                f"{label} is {describe(turn)} (expected an object with 'from' and 'value')",
                where=self.where,
            )
        speaker = _speaker(turn)
        if not isinstance(speaker, str):
            missing = "has no 'from'" if speaker is None else f"has 'from' {describe(speaker)}"
            raise FormatError(f"{label} {missing} ({_ROLES_HELP})", where=self.where)
        source = speaker.lower()
        role = SHAREGPT_ROLES.get(source)
        if role is None:
            raise FormatError(
                f"{label} has unknown 'from' value {speaker!r} ({_ROLES_HELP})",
                where=self.where,
            )
        if "value" in turn:
            value = turn["value"]
        elif "content" in turn:
            value = turn["content"]
        else:
            raise FormatError(f"{label} ({speaker}) has no 'value'", where=self.where)
        if source == "function_call":
            parts: list[Part] = list(self._calls(value, index, label))
        elif role == "tool":
            parts = [self._result(value, index, label)]
        else:
            parts = self._text(value, label)
        metadata: dict[str, Any] = {
            str(k): v for k, v in turn.items() if k not in _TURN_KEYS and k != "name"
        }
        if speaker != role:
            metadata["source_role"] = speaker
        name = turn.get("name")
        return Message(
            role=role,
            parts=parts,
            name=name if isinstance(name, str) else None,
            metadata=metadata,
        )

    def _text(self, value: Any, label: str) -> list[Part]:
        if value is None:
            return []
        if not isinstance(value, str):
            raise FormatError(
                f"{label} has 'value' {describe(value)} (expected a string)", where=self.where
            )
        return [Text(value)] if value else []

    def _calls(self, value: Any, index: int, label: str) -> list[ToolCall]:
        data = value
        if isinstance(value, str):
            try:
                data = json.loads(value)
            except json.JSONDecodeError as exc:
                raise FormatError(
                    f"{label} (function_call): value is not JSON ({exc.msg}); expected "
                    '{"name": ..., "arguments": ...}',
                    where=self.where,
                ) from None
            except RecursionError:
                raise FormatError(
                    f"{label} (function_call): value is nested too deeply", where=self.where
                ) from None
        items = data if isinstance(data, list) else [data]
        if not items:
            raise FormatError(f"{label} (function_call): empty list of calls", where=self.where)
        calls: list[ToolCall] = []
        for k, item in enumerate(items):
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(item, dict) or not isinstance(name, str):
                raise FormatError(
                    f"{label} (function_call): call {k} is {describe(item)} without a "
                    "'name' string (expected {\"name\": ..., \"arguments\": ...})",
                    where=self.where,
                )
            arguments = item.get("arguments", item.get("parameters"))
            call_id = optional_id(item.get("id")) or (
                f"call_{index}" if len(items) == 1 else f"call_{index}_{k}"
            )
            calls.append(
                ToolCall(
                    id=call_id,
                    name=name,
                    arguments=arguments_text(arguments, where=self.where, label=label),
                )
            )
        self.open_calls.extend(calls)
        return calls

    def _result(self, value: Any, index: int, label: str) -> ToolResult:
        if value is None:
            content = ""
        elif isinstance(value, str):
            content = value
        else:
            content = arguments_text(value, where=self.where, label=label)
        call = self.open_calls.popleft() if self.open_calls else None
        if call is None:
            # No call to answer: keep the result; the load check warns about the orphan.
            return ToolResult(call_id=f"result_{index}", content=content)
        return ToolResult(call_id=call.id, content=content, name=call.name)


def parse_sharegpt_turns(turns: Any, where: str, label: str = "") -> list[Message]:
    """The messages of one ShareGPT ``conversations`` list.

    ``label`` prefixes the turn in error messages (``"record 3, "``).
    """
    if not isinstance(turns, list):
        raise FormatError(
            f"{label}'conversations' is {describe(turns)} (expected a list of turns)",
            where=where,
        )
    reader = _TurnReader(where, label)
    return [reader.read(turn, index) for index, turn in enumerate(turns)]


def _conversation(record: Any, where: str, label: str) -> Conversation:
    if not isinstance(record, dict):
        raise FormatError(
            f"{label.rstrip(', ')} is {describe(record)} (expected an object with "
            "'conversations')",
            where=where,
        )
    if "conversations" not in record:
        raise FormatError(f"{label}no 'conversations' list", where=where)
    messages = parse_sharegpt_turns(record["conversations"], where, label)
    system = record.get("system")
    if isinstance(system, str) and system:
        messages.insert(
            0, Message.of("system", system, metadata={"source_field": "system"})
        )
    metadata = {str(k): v for k, v in record.items() if k not in _RECORD_KEYS}
    if system is not None and not isinstance(system, str):
        metadata["system"] = system
    title = record.get("title")
    if title is not None and not isinstance(title, str):
        metadata["title"] = title
    return Conversation(
        messages,
        id=optional_id(record.get("id")),
        source_format=ShareGPTFormat.name,
        title=title if isinstance(title, str) else None,
        metadata=metadata,
    )


def _records(doc: Document) -> list[Any] | None:
    if doc.kind == "jsonl":
        return list(doc.value)
    if doc.kind in ("json", "data"):
        if isinstance(doc.value, dict):
            return [doc.value]
        if isinstance(doc.value, list):
            return doc.value
    return None


def _sniff_record(record: Any) -> float:
    if not _is_record(record):
        return 0.0
    turns = record["conversations"]
    if not isinstance(turns, list):
        return 0.5  # ours, but broken: parse names the problem
    if not turns:
        return 0.5
    return 0.95 if _is_turn(turns[0]) else 0.0


class ShareGPTFormat(ConversationFormat):
    """ShareGPT ``conversations`` of ``from`` / ``value`` turns (one or many)."""

    name = "sharegpt"
    description = "ShareGPT {conversations: [{from, value}]}: object, list or JSON Lines"

    def sniff(self, doc: Document) -> float:
        records = _records(doc)
        if not records:
            return 0.0
        if doc.kind != "jsonl" and isinstance(doc.value, list) and _is_turn(records[0]):
            sample = records[:_SNIFF_RECORDS]
            return 0.8 if all(_is_turn(t) for t in sample) else 0.0
        scores = [_sniff_record(r) for r in records[:_SNIFF_RECORDS]]
        if min(scores) == 0:
            return 0.0
        return max(scores)

    def parse(self, doc: Document) -> list[Conversation]:
        records = _records(doc)
        if not records:
            raise FormatError(
                "expected JSON: a ShareGPT object with 'conversations', a list of them, "
                "or JSON Lines",
                where=doc.source,
            )
        if isinstance(doc.value, dict):
            return [_conversation(doc.value, doc.source, "")]
        if doc.kind != "jsonl" and _is_turn(records[0]):
            messages = parse_sharegpt_turns(records, doc.source)
            return [Conversation(messages, source_format=self.name)]
        return [
            _conversation(record, doc.where(index), f"record {index}, ")
            for index, record in enumerate(records)
        ]


FORMATS = (ShareGPTFormat(),)
