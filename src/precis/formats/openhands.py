"""OpenHands event streams and evaluation output.

Shapes read: evaluation output (JSON Lines, one instance per line, each with ``instance_id``
and a ``history`` list of events), a single ``{"history": [...]}`` object, or a bare JSON
list of events. Each instance is one conversation (id = ``instance_id``).

An event is an *action* (``"action": "run"``, ...) or an *observation* (``"observation":
"run"``, with ``cause`` = the action's event id). The conversation is rebuilt the way
OpenHands itself builds the prompt:

- ``system`` / ``message`` actions -> system / user / assistant text (``tools`` of the
  system action go into ``Conversation.metadata["tools"]``);
- an action with ``tool_call_metadata`` -> the assistant message of its
  ``model_response`` (text + every tool call of that response). OpenHands repeats the full
  response on every action and observation of the same LLM call; it is emitted once, keyed
  by the response id;
- an observation with ``tool_call_metadata`` -> a ``tool`` message answering
  ``tool_call_id`` (``is_error`` for ``error`` observations);
- ``finish`` -> assistant text (thought + final thought), as OpenHands shows it;
- ``recall`` observations -> a user message with the workspace context and microagent
  knowledge they added; ``recall`` actions and agent-state changes are bookkeeping and skipped;
- actions without ``tool_call_metadata`` (non-function-calling agents) get a synthesized
  call id ``event_<id>`` that their observation (by ``cause``) answers; other observations
  (an ``error`` with no call, output of a user's command) become user messages.

Event ids and timestamps are kept on the messages.
"""

from __future__ import annotations

import json
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import (
    OpenAIMessageReader,
    arguments_text,
    describe,
    image_from_url,
    optional_id,
    timestamp_of,
)
from precis.model import Conversation, Message, Part, Role, Text, ToolCall, ToolResult

__all__ = ["FORMATS", "OpenHandsFormat", "parse_events"]

_SNIFF_ITEMS = 5
_SKIP_ACTIONS = frozenset({"recall", "change_agent_state", "null", "condensation_request"})
_SKIP_OBSERVATIONS = frozenset({"agent_state_changed", "null"})


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and (
        isinstance(value.get("action"), str) or isinstance(value.get("observation"), str)
    )


def _looks_like_events(items: Any) -> bool:
    if not isinstance(items, list) or not items:
        return False
    sample = items[:_SNIFF_ITEMS]
    return all(_is_event(e) and ("source" in e or "id" in e) for e in sample)


def _is_instance(value: Any) -> bool:
    return isinstance(value, dict) and _looks_like_events(value.get("history"))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _EventReader:
    """Turns one instance's events into messages (see the module docstring)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.messages: list[Message] = []
        self.metadata: dict[str, Any] = {}
        self._responses: set[str] = set()
        self._synthesized: dict[str, tuple[str, str]] = {}
        self._reader = OpenAIMessageReader(where)

    # -- helpers ---------------------------------------------------------------------

    def _add(
        self,
        role: Role,
        parts: list[Part],
        event: dict[str, Any],
        metadata: dict[str, Any],
        name: str | None = None,
    ) -> None:
        self.messages.append(
            Message(
                role=role,
                parts=parts,
                id=optional_id(event.get("id")),
                name=name,
                timestamp=timestamp_of(event.get("timestamp")),
                metadata=metadata,
            )
        )

    @staticmethod
    def _base_metadata(event: dict[str, Any], key: str) -> dict[str, Any]:
        meta: dict[str, Any] = {key: event[key]}
        if isinstance(event.get("source"), str):
            meta["source"] = event["source"]
        if "cause" in event:
            meta["cause"] = event["cause"]
        return meta

    # -- events ----------------------------------------------------------------------

    def event(self, event: Any, index: int) -> None:
        label = f"event {index}"
        if not isinstance(event, dict):
            raise FormatError(
                f"{label} is {describe(event)} (expected an object)", where=self.where
            )
        if "action" in event:
            kind = event["action"]
            if not isinstance(kind, str):
                raise FormatError(
                    f"{label}: action is {describe(kind)} (expected a string)", where=self.where
                )
            self._action(event, kind, index, label)
        elif "observation" in event:
            kind = event["observation"]
            if not isinstance(kind, str):
                raise FormatError(
                    f"{label}: observation is {describe(kind)} (expected a string)",
                    where=self.where,
                )
            self._observation(event, kind, index, label)
        else:
            raise FormatError(
                f"{label} has neither 'action' nor 'observation'", where=self.where
            )

    def _args(self, event: dict[str, Any], label: str) -> dict[str, Any]:
        args = event.get("args")
        if args is None:
            return {}
        if not isinstance(args, dict):
            raise FormatError(
                f"{label}: args is {describe(args)} (expected an object)", where=self.where
            )
        return args

    def _tool_metadata(self, event: dict[str, Any], label: str) -> dict[str, Any] | None:
        meta = event.get("tool_call_metadata")
        if meta is None:
            return None
        if not isinstance(meta, dict):
            raise FormatError(
                f"{label}: tool_call_metadata is {describe(meta)} (expected an object)",
                where=self.where,
            )
        return meta

    def _action(self, event: dict[str, Any], kind: str, index: int, label: str) -> None:
        args = self._args(event, label)
        source = event.get("source")
        tool_meta = self._tool_metadata(event, label)
        meta = self._base_metadata(event, "action")
        if kind == "system":
            if "tools" in args:
                self.metadata["tools"] = args["tools"]
            meta.update({k: v for k, v in args.items() if k not in ("content", "tools")})
            text = _text(args.get("content")) or _text(event.get("message"))
            self._add("system", [Text(text)], event, meta)
        elif kind == "message":
            parts: list[Part] = [Text(_text(args.get("content")) or _text(event.get("message")))]
            urls = args.get("image_urls")
            if isinstance(urls, list):
                parts.extend(image_from_url(u) for u in urls if isinstance(u, str) and u)
            role: Role = "user" if source == "user" else "assistant"
            self._add(role, parts, event, meta)
        elif kind == "finish":
            self._finish(event, args, tool_meta, meta)
        elif kind in _SKIP_ACTIONS:
            return
        elif tool_meta is not None:
            self._response(event, tool_meta, args, index, label)
        elif source == "user":
            text = _text(event.get("message")) or json.dumps(args, ensure_ascii=False)
            meta["args"] = args
            self._add("user", [Text(text)], event, meta)
        elif kind == "think":
            self._add("assistant", [Text(_text(args.get("thought")))], event, meta)
        else:
            self._synthesized_call(event, kind, args, label, meta)

    def _finish(
        self,
        event: dict[str, Any],
        args: dict[str, Any],
        tool_meta: dict[str, Any] | None,
        meta: dict[str, Any],
    ) -> None:
        response = _response_message(tool_meta)
        content = _text(response.get("content")) if response else ""
        pieces: list[str] = []
        for piece in (_text(args.get("thought")) or content, _text(args.get("final_thought"))):
            if piece and not any(piece in p for p in pieces):
                pieces.append(piece)
        if tool_meta is not None:
            key = _response_key(tool_meta)
            if key is not None:
                self._responses.add(key)
        meta.update({k: v for k, v in args.items() if k not in ("thought", "final_thought")})
        role: Role = "user" if event.get("source") == "user" else "assistant"
        self._add(role, [Text("\n\n".join(pieces))], event, meta)

    def _response(
        self,
        event: dict[str, Any],
        tool_meta: dict[str, Any],
        args: dict[str, Any],
        index: int,
        label: str,
    ) -> None:
        """The assistant message of an LLM response, once per response."""
        key = _response_key(tool_meta)
        if key is not None:
            if key in self._responses:
                return
            self._responses.add(key)
        meta: dict[str, Any] = {"action": event.get("action")}
        if "observation" in event:
            meta = {"from_observation": event.get("observation")}
        response = _response_message(tool_meta)
        if response is not None:
            message = self._reader.read(response, index, label=f"{label} model_response")
            message.id = optional_id(event.get("id"))
            message.timestamp = timestamp_of(event.get("timestamp"))
            model_response = tool_meta["model_response"]
            for field in ("id", "model", "usage"):
                if model_response.get(field) is not None:
                    meta[f"response_{field}"] = model_response[field]
            message.metadata = {**meta, **message.metadata}
            self.messages.append(message)
            return
        # No model_response stored: rebuild the call from the action itself.
        call_id = optional_id(tool_meta.get("tool_call_id")) or f"event_{event.get('id')}"
        name = tool_meta.get("function_name")
        name = name if isinstance(name, str) and name else str(event.get("action"))
        thought = _text(args.get("thought"))
        call_args = {k: v for k, v in args.items() if k != "thought"}
        parts: list[Part] = [Text(thought)] if thought else []
        parts.append(
            ToolCall(call_id, name, arguments_text(call_args, where=self.where, label=label))
        )
        self._add("assistant", parts, event, meta)

    def _synthesized_call(
        self,
        event: dict[str, Any],
        kind: str,
        args: dict[str, Any],
        label: str,
        meta: dict[str, Any],
    ) -> None:
        event_id = optional_id(event.get("id"))
        call_id = f"event_{event_id if event_id is not None else len(self.messages)}"
        thought = _text(args.get("thought"))
        call_args = {k: v for k, v in args.items() if k != "thought"}
        parts: list[Part] = [Text(thought)] if thought else []
        arguments = arguments_text(call_args, where=self.where, label=label)
        parts.append(ToolCall(call_id, kind, arguments))
        if event_id is not None:
            self._synthesized[event_id] = (call_id, kind)
        self._add("assistant", parts, event, meta)

    def _observation(self, event: dict[str, Any], kind: str, index: int, label: str) -> None:
        tool_meta = self._tool_metadata(event, label)
        content = event.get("content")
        text = content if isinstance(content, str) else _text(event.get("message"))
        meta = self._base_metadata(event, "observation")
        extras = event.get("extras")
        if extras:
            meta["extras"] = extras
        if "success" in event:
            meta["success"] = event["success"]
        is_error = kind == "error"
        if tool_meta is not None:
            self._response(event, tool_meta, {}, index, label)
            call_id = optional_id(tool_meta.get("tool_call_id")) or f"event_{event.get('cause')}"
            name = tool_meta.get("function_name")
            name = name if isinstance(name, str) else None
            result = ToolResult(call_id=call_id, content=text, is_error=is_error, name=name)
            self._add("tool", [result], event, meta, name=name)
            return
        cause = optional_id(event.get("cause"))
        if cause is not None and cause in self._synthesized:
            call_id, name = self._synthesized.pop(cause)
            result = ToolResult(call_id=call_id, content=text, is_error=is_error, name=name)
            self._add("tool", [result], event, meta, name=name)
        elif kind in _SKIP_OBSERVATIONS:
            return
        elif kind == "recall":
            parts = _recall_parts(extras if isinstance(extras, dict) else {})
            if parts:
                meta.pop("extras", None)
                self._add("user", parts, event, meta)
        elif text:
            if is_error:
                meta["is_error"] = True
            self._add("user", [Text(text)], event, meta)


def _response_message(tool_meta: dict[str, Any] | None) -> dict[str, Any] | None:
    """``model_response.choices[0].message`` when stored, else ``None``."""
    if tool_meta is None:
        return None
    response = tool_meta.get("model_response")
    if not isinstance(response, dict):
        return None
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    return message if isinstance(message, dict) else None


def _response_key(tool_meta: dict[str, Any]) -> str | None:
    response = tool_meta.get("model_response")
    if isinstance(response, dict):
        key = optional_id(response.get("id"))
        if key is not None:
            return key
    call_id = optional_id(tool_meta.get("tool_call_id"))
    return f"call:{call_id}" if call_id is not None else None


def _recall_parts(extras: dict[str, Any]) -> list[Part]:
    """The context a workspace / knowledge recall added to the prompt, as text parts."""
    lines: list[str] = []
    repo = _text(extras.get("repo_name"))
    directory = _text(extras.get("repo_directory"))
    if repo or directory:
        lines.append(f"Repository: {repo} {f'at {directory}' if directory else ''}".rstrip())
    instructions = _text(extras.get("repo_instructions")).strip()
    if instructions:
        lines.append(f"Repository instructions:\n{instructions}")
    hosts = extras.get("runtime_hosts")
    if isinstance(hosts, dict) and hosts:
        lines.append("Runtime hosts: " + ", ".join(str(h) for h in hosts))
    more = _text(extras.get("additional_agent_instructions")).strip()
    if more:
        lines.append(f"Additional instructions:\n{more}")
    date = _text(extras.get("date"))
    if date:
        lines.append(f"Date: {date}")
    parts: list[Part] = [Text("\n".join(lines))] if lines else []
    knowledge = extras.get("microagent_knowledge")
    if isinstance(knowledge, list):
        for item in knowledge:
            if isinstance(item, dict) and isinstance(item.get("content"), str):
                name = _text(item.get("name")) or "microagent"
                trigger = _text(item.get("trigger"))
                head = f"[{name} knowledge, triggered by {trigger!r}]" if trigger else f"[{name}]"
                parts.append(Text(f"{head}\n{item['content']}"))
    return parts


def parse_events(events: list[Any], where: str) -> tuple[list[Message], dict[str, Any]]:
    """An OpenHands event list as messages, plus conversation metadata (``tools``)."""
    reader = _EventReader(where)
    for index, event in enumerate(events):
        reader.event(event, index)
    return reader.messages, reader.metadata


def _title(record: dict[str, Any]) -> str | None:
    instance = record.get("instance")
    text = instance.get("problem_statement") if isinstance(instance, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().splitlines()[0][:120]


class OpenHandsFormat(ConversationFormat):
    """OpenHands event streams (eval ``output.jsonl``, ``{"history"}``, or an event list)."""

    name = "openhands"
    description = "OpenHands event stream / evaluation output (one conversation per instance)"

    def sniff(self, doc: Document) -> float:
        value = doc.value
        if doc.kind == "text":
            return 0.0
        if isinstance(value, dict):
            return 0.9 if _is_instance(value) else 0.0
        if not isinstance(value, list) or not value:
            return 0.0
        sample = value[:_SNIFF_ITEMS]
        if all(_is_instance(r) for r in sample):
            return 0.9
        return 0.85 if _looks_like_events(value) else 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        if isinstance(value, dict):
            return [self._instance(value, doc.source, "input")]
        if not isinstance(value, list) or not value:
            raise FormatError(
                "expected OpenHands output: instances with a 'history' of events, or a list "
                "of events",
                where=doc.source,
            )
        if isinstance(value[0], dict) and "history" in value[0]:
            return [
                self._instance(record, doc.where(index), f"record {index}")
                for index, record in enumerate(value)
            ]
        messages, metadata = parse_events(value, doc.source)
        return [Conversation(messages, source_format=self.name, metadata=metadata)]

    def _instance(self, record: Any, where: str, label: str) -> Conversation:
        if not isinstance(record, dict):
            raise FormatError(
                f"{label} is {describe(record)} (expected an object with 'history')", where=where
            )
        history = record.get("history")
        if not isinstance(history, list):
            raise FormatError(
                f"{label}: 'history' is {describe(history)} (expected a list of events)",
                where=where,
            )
        messages, metadata = parse_events(history, where)
        extra = {str(k): v for k, v in record.items() if k != "history"}
        conv_id = optional_id(extra.pop("instance_id", None))
        if conv_id is None:
            conv_id = optional_id(record.get("id"))
        return Conversation(
            messages,
            id=conv_id,
            source_format=self.name,
            title=_title(record),
            metadata={**extra, **metadata},
        )


FORMATS = (OpenHandsFormat(),)
