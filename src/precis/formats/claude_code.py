"""Claude Code session logs: JSON Lines, one entry per line (``~/.claude/projects/*/*.jsonl``).

Entries of type ``user`` / ``assistant`` hold an Anthropic message in ``message``; every
other type (``progress``, ``queue-operation``, ``file-history-snapshot``, ``system``,
``summary``, ...) is not part of the dialogue. ``summary`` / ``custom-title`` give the
conversation title and ``system`` entries are kept in ``Conversation.metadata["events"]``;
the rest are counted in ``metadata["skipped"]``.

A prompt the user typed while the agent worked is logged only as a ``queue-operation``
(``enqueue`` with its text, then ``remove`` / ``dequeue`` when Claude Code hands it to the
model between tool calls). It becomes a user message (``metadata["queued"]``) placed before
the first assistant message written after it was handed over, where the model read it.
Queued task notifications are skipped: they reach the log as user messages of their own.

Quirks handled:

- Claude Code writes one API response as several lines that share ``message.id`` (one
  content block each), sometimes with tool results already written between them (a tool
  runs while the response still streams). Those lines become one assistant message, at the
  place of the first, with the blocks in file order; ``metadata["uuids"]`` / ``["lines"]``
  list the lines merged.
- ``parentUuid`` chains branch when calls run in parallel; file order is used throughout.
- A line seen twice (same ``uuid``) is read once.

Message ids: ``message.id`` for assistant messages, the entry ``uuid`` otherwise (a user
line split into tool results and text gives ``uuid`` and ``uuid#1``). ``sessionId`` is the
conversation id; ``cwd``, ``gitBranch``, ``version``, ``slug`` and ``agentId`` (subagent
logs) go into the conversation's metadata.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.anthropic import AnthropicReader
from precis.formats.base import ConversationFormat
from precis.formats.openai import describe, text_field, timestamp_of
from precis.model import Conversation, Message, ToolCall

__all__ = ["FORMATS", "ClaudeCodeFormat"]

_MESSAGE_TYPES = ("user", "assistant")
_ENTRY_KEYS = ("uuid", "sessionId", "parentUuid")
# Entry field -> message metadata key (only when present).
_MESSAGE_META = {
    "parentUuid": "parent_uuid",
    "isSidechain": "is_sidechain",
    "requestId": "request_id",
    "isMeta": "is_meta",
    "isCompactSummary": "is_compact_summary",
    "isApiErrorMessage": "is_api_error_message",
    "toolUseResult": "tool_use_result",
}
# Entry field -> conversation metadata key (first value seen).
_SESSION_META = {
    "cwd": "cwd",
    "gitBranch": "git_branch",
    "version": "version",
    "slug": "slug",
    "agentId": "agent_id",
    "userType": "user_type",
}


def _is_message_entry(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and text_field(record) in _MESSAGE_TYPES
        and isinstance(record.get("message"), dict)
        and any(key in record for key in _ENTRY_KEYS)
    )


def _records(doc: Document) -> list[Any] | None:
    """The log's entries; a one-line log reads as a single JSON object."""
    if doc.kind not in ("jsonl", "json", "data"):
        return None
    if isinstance(doc.value, list):
        return doc.value
    if isinstance(doc.value, dict) and _is_message_entry(doc.value):
        return [doc.value]
    return None


class _Session:
    """The state of one log being read: messages so far, merged responses, metadata."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.reader = AnthropicReader()
        self.messages: list[Message] = []
        self.responses: dict[str, Message] = {}
        self.seen: set[str] = set()
        self.skipped: Counter[str] = Counter()
        self.events: list[dict[str, Any]] = []
        self.summaries: list[str] = []
        self.custom_title: str | None = None
        self.session_ids: list[str] = []
        self.metadata: dict[str, Any] = {}
        self.sidechain_only = True
        self.duplicates = 0
        self.queued: list[dict[str, Any]] = []

    def line(self, index: int) -> int | None:
        numbers = self.doc.line_numbers
        return numbers[index] if index < len(numbers) else None

    def read(self, index: int, record: Any) -> None:
        where = self.doc.where(index)
        if not isinstance(record, dict):
            raise FormatError(
                f"entry is {describe(record)} (expected a JSON object with a 'type')",
                where=where,
            )
        kind = text_field(record)
        if kind in _MESSAGE_TYPES:
            self._message(index, record, where)
        elif kind == "summary":
            summary = record.get("summary")
            if isinstance(summary, str):
                self.summaries.append(summary)
        elif kind == "custom-title":
            title = record.get("customTitle")
            if isinstance(title, str):
                self.custom_title = title
        elif kind == "queue-operation":
            self._queue(index, record)
            self.skipped[kind] += 1
        elif kind == "system":
            event = {
                key: record[key]
                for key in ("subtype", "content", "level", "timestamp", "compactMetadata")
                if key in record
            }
            event["line"] = self.line(index)
            self.events.append(event)
        else:
            self.skipped[kind if isinstance(kind, str) else "(no type)"] += 1

    def _message(self, index: int, record: dict[str, Any], where: str) -> None:
        kind: str = record["type"]
        body = record.get("message")
        if not isinstance(body, dict):
            raise FormatError(
                f"{kind} entry has 'message' {describe(body)} (expected an object)", where=where
            )
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen:
                self.duplicates += 1
                return
            self.seen.add(uuid)
        self._session_fields(record)
        meta: dict[str, Any] = {
            target: record[source] for source, target in _MESSAGE_META.items() if source in record
        }
        line = self.line(index)
        if line is not None:
            meta["line"] = line
        stamp = timestamp_of(record.get("timestamp"))
        if stamp is None and "timestamp" in record:
            meta["timestamp"] = record["timestamp"]
        item = {"role": kind, "content": body.get("content")}
        if kind == "user":
            msg_id = uuid if isinstance(uuid, str) else None
            self.messages.extend(
                self.reader.message(
                    item,
                    f"{kind} message",
                    where,
                    id=msg_id,
                    timestamp=stamp,
                    metadata=meta,
                    split_from=line if line is not None else index,
                )
            )
            return
        if isinstance(uuid, str):
            meta["uuid"] = uuid
        for key in ("model", "stop_reason", "usage"):
            if body.get(key) is not None:
                meta[key] = body[key]
        response_id = body.get("id") if isinstance(body.get("id"), str) else None
        (message,) = self.reader.message(
            item,
            f"{kind} message",
            where,
            id=response_id or (uuid if isinstance(uuid, str) else None),
            timestamp=stamp,
            metadata=meta,
        )
        earlier = self.responses.get(response_id) if response_id else None
        if earlier is None:
            if response_id:
                self.responses[response_id] = message
            self.messages.append(message)
            return
        known = {part.id for part in earlier.parts if isinstance(part, ToolCall)}
        earlier.parts.extend(
            part for part in message.parts if not (isinstance(part, ToolCall) and part.id in known)
        )
        merged = earlier.metadata
        if "uuids" not in merged:  # the first merge: start the lists with the first line
            merged["uuids"] = [u for u in (merged.get("uuid"),) if u]
            merged["lines"] = [n for n in (merged.get("line"),) if n is not None]
        if isinstance(uuid, str):
            merged["uuids"].append(uuid)
        if line is not None:
            merged["lines"].append(line)
        for key in ("stop_reason", "usage"):  # the last line has the final figures
            if key in meta:
                merged[key] = meta[key]

    def _queue(self, index: int, record: dict[str, Any]) -> None:
        operation = record.get("operation")
        content = record.get("content")
        if operation == "enqueue" and isinstance(content, str) and content.strip() and \
                "<task-notification>" not in content:
            self.queued.append({"text": content, "line": self.line(index),
                                "at": timestamp_of(record.get("timestamp")), "handed": None})
        elif operation in ("remove", "dequeue"):
            for entry in self.queued:
                if entry["handed"] is None:
                    entry["handed"] = timestamp_of(record.get("timestamp"))
                    break

    def _place_queued(self) -> None:
        """Insert the queued prompts (see the module docs) as user messages."""
        said = {m.text.strip() for m in self.messages if m.role == "user"}
        for entry in self.queued:
            if entry["text"].strip() in said:
                continue
            at = entry["handed"] or entry["at"]
            place = len(self.messages)
            if at is not None:
                place = next((k for k, m in enumerate(self.messages)
                              if m.role == "assistant" and m.timestamp and m.timestamp >= at),
                             len(self.messages))
            meta: dict[str, Any] = {"queued": True}
            if entry["line"] is not None:
                meta["line"] = entry["line"]
            self.messages.insert(place, Message.of(
                "user", entry["text"], id=f"queued-{entry['line']}", timestamp=at,
                metadata=meta))

    def _session_fields(self, record: dict[str, Any]) -> None:
        session = record.get("sessionId")
        if isinstance(session, str) and session not in self.session_ids:
            self.session_ids.append(session)
        for source, target in _SESSION_META.items():
            if source in record and target not in self.metadata:
                self.metadata[target] = record[source]
        if record.get("isSidechain") is not True:
            self.sidechain_only = False

    def conversation(self, name: str) -> Conversation:
        self._place_queued()
        metadata = dict(self.metadata)
        if self.session_ids[1:]:
            metadata["session_ids"] = list(self.session_ids)
        if self.summaries:
            metadata["summaries"] = list(self.summaries)
        if self.events:
            metadata["events"] = list(self.events)
        if self.skipped:
            metadata["skipped"] = dict(self.skipped)
        if self.duplicates:
            metadata["duplicate_lines"] = self.duplicates
        if self.messages and self.sidechain_only:
            metadata["is_sidechain"] = True
        title = self.custom_title or (self.summaries[0] if self.summaries else None)
        return Conversation(
            self.messages,
            id=self.session_ids[0] if self.session_ids else None,
            source_format=name,
            title=title,
            metadata=metadata,
        )


_SNIFF_RECORDS = 64


class ClaudeCodeFormat(ConversationFormat):
    """Claude Code session logs (JSON Lines of user / assistant / progress / ... entries)."""

    name = "claude-code"
    description = "Claude Code session log (JSON Lines, main session or subagent)"

    def sniff(self, doc: Document) -> float:
        records = _records(doc)
        if not records:
            return 0.0
        entries = typed = 0
        records = records[:_SNIFF_RECORDS]  # sniffing looks at the head of the file only
        for record in records:
            if _is_message_entry(record):
                entries += 1
            if isinstance(record, dict) and isinstance(record.get("type"), str):
                typed += 1
        if not entries:
            return 0.0
        return 0.95 if typed == len(records) else 0.5

    def parse(self, doc: Document) -> list[Conversation]:
        records = _records(doc)
        if records is None:
            raise FormatError(
                "expected JSON Lines of Claude Code entries (objects with a 'type')",
                where=doc.source,
            )
        session = _Session(doc)
        for index, record in enumerate(records):
            session.read(index, record)
        if not session.messages:
            return []
        return [session.conversation(self.name)]


FORMATS = (ClaudeCodeFormat(),)
