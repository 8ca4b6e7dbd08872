"""SWE-agent trajectories (``.traj``): ``{"history": [...], "trajectory": [...], "info": ...}``.

``history`` is the message list the model saw, OpenAI-shaped plus SWE-agent keys: assistant
messages carry ``tool_calls`` and also ``thought`` / ``action``; tool messages name their
calls in a ``tool_call_ids`` list; every message has ``agent`` and ``message_type``. Those
extra keys stay in ``Message.metadata``. ``trajectory`` (per-step snapshots that repeat the
history) is not read again; ``info``, ``environment`` and ``replay_config`` go into
``Conversation.metadata``. The conversation id is the problem statement's id.
"""

from __future__ import annotations

import json
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import (
    OpenAIMessageReader,
    describe,
    optional_id,
)
from precis.model import Conversation, Message, ToolResult

__all__ = ["FORMATS", "SWEAgentFormat"]

_SNIFF_ITEMS = 5
_MARKER_KEYS = ("agent", "message_type", "tool_call_ids", "thought", "action")


def _looks_like_history(history: Any) -> bool:
    if not isinstance(history, list) or not history:
        return False
    sample = history[:_SNIFF_ITEMS]
    return all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in sample)


def _replay_config(value: Any) -> dict[str, Any]:
    """``replay_config`` is an object in SWE-agent 1.x and a JSON string in older files."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def _identity(traj: dict[str, Any]) -> tuple[str | None, str | None]:
    """(id, title) from the problem statement in ``replay_config`` when present."""
    config = _replay_config(traj.get("replay_config"))
    statement = config.get("problem_statement")
    conv_id = title = None
    if isinstance(statement, dict):
        conv_id = optional_id(statement.get("id"))
        text = statement.get("text")
        if isinstance(text, str) and text.strip():
            title = text.strip().splitlines()[0][:120]
    if conv_id is None:
        agent = config.get("agent")
        if isinstance(agent, dict):
            conv_id = optional_id(agent.get("name"))
    info = traj.get("info")
    if conv_id is None and isinstance(info, dict):
        conv_id = optional_id(info.get("instance_id"))
    return conv_id, title


def _split_results(message: Message, ids: list[str]) -> Message:
    """A tool message answering several calls: one result part per call id."""
    results = message.tool_results
    if not results:
        return message
    first = results[0]
    others = [p for p in message.parts if not isinstance(p, ToolResult)]
    parts = [
        ToolResult(call_id=call_id, content=first.content, is_error=first.is_error, name=first.name)
        for call_id in ids
    ]
    message.parts = [*parts, *others]
    return message


def parse_history(history: list[Any], where: str) -> list[Message]:
    """SWE-agent ``history`` messages as precis messages (extras kept in metadata)."""
    reader = OpenAIMessageReader(where)
    messages: list[Message] = []
    for index, item in enumerate(history):
        ids: list[str] = []
        if isinstance(item, dict) and "tool_call_ids" in item:
            raw = item["tool_call_ids"]
            if raw is not None and not isinstance(raw, list):
                raise FormatError(
                    f"message {index}: tool_call_ids is {describe(raw)} (expected a list)",
                    where=where,
                )
            ids = [i for i in (optional_id(x) for x in raw or []) if i is not None]
            item = {k: v for k, v in item.items() if k != "tool_call_ids"}
            if ids and item.get("tool_call_id") is None:
                item["tool_call_id"] = ids[0]
        message = reader.read(item, index)
        if len(ids) > 1:
            message = _split_results(message, ids)
        if ids:
            message.metadata["tool_call_ids"] = ids
        messages.append(message)
    return messages


class SWEAgentFormat(ConversationFormat):
    """SWE-agent ``.traj`` files (one trajectory per file)."""

    name = "swe-agent"
    description = "SWE-agent trajectory (.traj): history of OpenAI-style messages"

    def sniff(self, doc: Document) -> float:
        if doc.kind not in ("json", "data") or not isinstance(doc.value, dict):
            return 0.0
        value = doc.value
        history = value.get("history")
        if not isinstance(history, list) or not _looks_like_history(history):
            return 0.0
        marked = any(
            key in message for message in history[:_SNIFF_ITEMS] for key in _MARKER_KEYS
        )
        if marked and ("trajectory" in value or "info" in value):
            return 0.95
        return 0.7 if marked or "trajectory" in value else 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        if doc.kind not in ("json", "data") or not isinstance(value, dict):
            raise FormatError(
                "expected a SWE-agent trajectory: a JSON object with a 'history' list",
                where=doc.source,
            )
        history = value.get("history")
        if not isinstance(history, list):
            raise FormatError(
                f"'history' is {describe(history)} (expected a list of messages)",
                where=doc.source,
            )
        conv_id, title = _identity(value)
        metadata = {
            str(k): v for k, v in value.items() if k not in ("history", "trajectory")
        }
        trajectory = value.get("trajectory")
        if isinstance(trajectory, list):
            metadata["trajectory_steps"] = len(trajectory)
        return [
            Conversation(
                parse_history(history, doc.source),
                id=conv_id,
                source_format=self.name,
                title=title,
                metadata=metadata,
            )
        ]


FORMATS = (SWEAgentFormat(),)
