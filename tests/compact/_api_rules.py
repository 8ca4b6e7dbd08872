"""What the OpenAI Chat Completions and Anthropic Messages APIs accept, checked on payloads.

Written from the APIs' documentation and the 400 errors they answer with, not from
``precis.formats.export``, so the tests that use them check the exporter too. Where an API
is lenient in ways that are not documented the checks are on the strict side (an empty
string where content is required counts as missing).

OpenAI (``messages`` of ``/v1/chat/completions``)
    roles ``system`` / ``developer`` / ``user`` / ``assistant`` / ``tool``; content present
    where required (an assistant may leave it out only with ``tool_calls``); a non-empty
    ``tool_calls`` list of ``{"id", "type": "function", "function": {"name", "arguments"}}``
    with ids of at most 40 characters, unique in the request, and function names of
    ``[a-zA-Z0-9_-]{1,64}``; ``tool`` messages answer, by ``tool_call_id``, a call of the
    nearest assistant message before them with only ``tool`` messages in between, once each;
    every call is answered before the next non-``tool`` message ("An assistant message with
    'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"); a
    message ``name`` has no white space or ``<|\\/>``.

Anthropic (``{"system", "messages"}`` of ``/v1/messages``)
    ``user`` and ``assistant`` alternate, starting with ``user``; content is non-blank text
    or a non-empty block list; text blocks are non-empty, and white-space-only ones are
    rejected unless the turn has other real text; ``tool_use`` only from the assistant, ids
    matching ``^[a-zA-Z0-9_-]+$`` and unique ("`tool_use` ids must be unique"); every
    ``tool_use`` answered by a ``tool_result`` in the very next user turn ("`tool_use` ids
    were found without `tool_result` blocks immediately after"), tool results only for the
    previous turn's calls, once each, before any other block of the turn; thinking blocks
    carry their ``signature``, redacted ones their ``data``; images have a base64 source of
    jpeg / png / gif / webp or a URL; a final assistant turn does not end with white space.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["anthropic_errors", "openai_errors"]

_OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool")
_MESSAGE_NAME = re.compile(r"[^\s<|\\/>]+")
_FUNCTION_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_USER_PART_TYPES = ("text", "image_url", "input_audio", "file")
_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


# -- OpenAI ----------------------------------------------------------------------------


def _openai_content(where: str, content: Any, types: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        return [] if content else [f"{where}: content is an empty string"]
    if not isinstance(content, list) or not content:
        return [f"{where}: content must be a string or a non-empty list of parts"]
    errors: list[str] = []
    for n, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in types:
            errors.append(f"{where}: content part {n} has type {kind!r} (allowed: {types})")
        elif kind == "text" and not isinstance(part.get("text"), str):
            errors.append(f"{where}: text part {n} has no text")
        elif kind == "image_url":
            url = part.get("image_url")
            if not isinstance(url, dict) or not isinstance(url.get("url"), str) or not url["url"]:
                errors.append(f"{where}: image part {n} has no url")
    return errors


def _openai_calls(where: str, calls: Any, seen: set[str]) -> tuple[list[str], list[str]]:
    """Errors in an assistant's ``tool_calls``, and the call ids it holds."""
    if not isinstance(calls, list) or not calls:
        return [f"{where}: tool_calls must be a non-empty list"], []
    errors: list[str] = []
    ids: list[str] = []
    for n, call in enumerate(calls):
        at = f"{where}.tool_calls[{n}]"
        if not isinstance(call, dict):
            errors.append(f"{at}: not an object")
            continue
        ident = call.get("id")
        if not isinstance(ident, str) or not ident:
            errors.append(f"{at}: id must be a non-empty string")
        else:
            if len(ident) > 40:
                errors.append(f"{at}: id {ident!r} is longer than 40 characters")
            if ident in seen:
                errors.append(f"{at}: id {ident!r} is used twice")
            seen.add(ident)
            ids.append(ident)
        if call.get("type") != "function":
            errors.append(f"{at}: type must be 'function'")
        function = call.get("function")
        if not isinstance(function, dict):
            errors.append(f"{at}: function missing")
            continue
        name = function.get("name")
        if not isinstance(name, str) or not _FUNCTION_NAME.fullmatch(name):
            errors.append(f"{at}: function name {name!r} does not match [a-zA-Z0-9_-]{{1,64}}")
        if not isinstance(function.get("arguments"), str):
            errors.append(f"{at}: function arguments must be a string")
    return errors, ids


def openai_errors(messages: Any) -> list[str]:
    """Why OpenAI Chat Completions would reject ``messages`` (empty list: it accepts them)."""
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    errors: list[str] = []
    seen_calls: set[str] = set()
    open_calls: dict[str, bool] | None = None  # calls of the last assistant: id -> answered
    asker = -1
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            errors.append(f"{where}: not an object")
            continue
        role = message.get("role")
        if role not in _OPENAI_ROLES:
            errors.append(f"{where}: role {role!r} is not one of {_OPENAI_ROLES}")
            continue
        if role != "tool" and open_calls is not None:
            missing = [ident for ident, done in open_calls.items() if not done]
            if missing:
                errors.append(
                    f"{where}: {role} message before tool messages answer {missing} "
                    f"of messages[{asker}]"
                )
            open_calls = None
        name = message.get("name")
        if name is not None and (not isinstance(name, str) or not _MESSAGE_NAME.fullmatch(name)):
            errors.append(f"{where}: name {name!r} has white space or one of <|\\/>")
        if "tool_calls" in message and role != "assistant":
            errors.append(f"{where}: only assistant messages may carry tool_calls")
        if role == "tool":
            ident = message.get("tool_call_id")
            if not isinstance(ident, str):
                errors.append(f"{where}: tool message without a tool_call_id")
            elif open_calls is None:
                errors.append(
                    f"{where}: tool message for {ident!r} does not follow an assistant "
                    "message with tool_calls"
                )
            elif ident not in open_calls:
                errors.append(f"{where}: tool_call_id {ident!r} is not a call of messages[{asker}]")
            elif open_calls[ident]:
                errors.append(f"{where}: call {ident!r} answered twice")
            else:
                open_calls[ident] = True
            content = message.get("content")
            if not isinstance(content, str):
                errors.extend(_openai_content(where, content, ("text",)))
            continue
        if role == "assistant":
            content = message.get("content")
            calls = message.get("tool_calls")
            if calls is not None:
                call_errors, ids = _openai_calls(where, calls, seen_calls)
                errors.extend(call_errors)
                open_calls = dict.fromkeys(ids, False)
                asker = index
            if content is None or content == "":
                if calls is None:
                    errors.append(f"{where}: assistant message needs content or tool_calls")
            else:
                errors.extend(_openai_content(where, content, ("text", "refusal")))
            continue
        types = _USER_PART_TYPES if role == "user" else ("text",)
        errors.extend(_openai_content(where, message.get("content"), types))
    if open_calls is not None:
        missing = [ident for ident, done in open_calls.items() if not done]
        if missing:
            errors.append(f"end: calls {missing} of messages[{asker}] have no tool message")
    return errors


# -- Anthropic -------------------------------------------------------------------------

_USER_BLOCKS = ("text", "image", "tool_result", "document")
_ASSISTANT_BLOCKS = ("text", "tool_use", "thinking", "redacted_thinking")


def _text_errors(where: str, blocks: list[Any]) -> list[str]:
    texts = [b.get("text") for b in blocks if b.get("type") == "text"]
    if any(not isinstance(t, str) for t in texts):
        return [f"{where}: a text block has no text"]
    errors = [f"{where}: text content blocks must be non-empty" for t in texts if t == ""]
    real = any(t.strip() for t in texts)
    if not real and any(t and not t.strip() for t in texts):
        errors.append(f"{where}: text content blocks must contain non-whitespace text")
    return errors


def _image_errors(where: str, block: dict[str, Any]) -> list[str]:
    source = block.get("source")
    if not isinstance(source, dict):
        return [f"{where}: image without a source"]
    if source.get("type") == "base64":
        if source.get("media_type") not in _MEDIA_TYPES:
            return [f"{where}: image media_type {source.get('media_type')!r} not supported"]
        if not isinstance(source.get("data"), str) or not source["data"]:
            return [f"{where}: base64 image without data"]
        return []
    if source.get("type") == "url":
        url = source.get("url")
        return [] if isinstance(url, str) and url else [f"{where}: url image without a url"]
    return [f"{where}: image source type {source.get('type')!r} unknown"]


def _result_content_errors(where: str, content: Any) -> list[str]:
    if content is None or isinstance(content, str):
        return []
    if not isinstance(content, list):
        return [f"{where}: tool_result content must be a string or a list of blocks"]
    errors: list[str] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") not in ("text", "image"):
            errors.append(f"{where}: tool_result content holds a block that is not text/image")
        elif block["type"] == "image":
            errors.extend(_image_errors(where, block))
    blocks = [b for b in content if isinstance(b, dict)]
    return errors + _text_errors(where, blocks)


def _assistant_block_errors(where: str, block: dict[str, Any], seen: set[str]) -> list[str]:
    kind = block["type"]
    errors: list[str] = []
    if kind == "tool_use":
        ident = block.get("id")
        if not isinstance(ident, str) or not _TOOL_USE_ID.fullmatch(ident):
            errors.append(f"{where}: tool_use id {ident!r} does not match ^[a-zA-Z0-9_-]+$")
        elif ident in seen:
            errors.append(f"{where}: tool_use ids must be unique ({ident!r} repeats)")
        else:
            seen.add(ident)
        if not isinstance(block.get("name"), str) or not block["name"]:
            errors.append(f"{where}: tool_use without a name")
        if not isinstance(block.get("input"), dict):
            errors.append(f"{where}: tool_use input must be an object")
    elif kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            errors.append(f"{where}: thinking block without thinking text")
        if not isinstance(block.get("signature"), str) or not block["signature"]:
            errors.append(f"{where}: thinking.signature: Field required")
    elif kind == "redacted_thinking" and (
        not isinstance(block.get("data"), str) or not block["data"]
    ):
        errors.append(f"{where}: redacted_thinking without data")
    return errors


def _user_turn_errors(where: str, blocks: list[dict[str, Any]], asked: list[str]) -> list[str]:
    errors: list[str] = []
    kinds = [b["type"] for b in blocks]
    leading = 0
    while leading < len(kinds) and kinds[leading] == "tool_result":
        leading += 1
    if "tool_result" in kinds[leading:]:
        errors.append(f"{where}: tool_result blocks must come before any other block")
    answered: set[str] = set()
    for block in blocks:
        if block["type"] == "image":
            errors.extend(_image_errors(where, block))
        if block["type"] != "tool_result":
            continue
        ident = block.get("tool_use_id")
        if not isinstance(ident, str) or ident not in asked:
            errors.append(f"{where}: tool_result {ident!r} answers no tool_use of the turn before")
        elif ident in answered:
            errors.append(f"{where}: tool_result {ident!r} given twice")
        else:
            answered.add(ident)
        if "is_error" in block and not isinstance(block["is_error"], bool):
            errors.append(f"{where}: tool_result is_error must be a boolean")
        errors.extend(_result_content_errors(where, block.get("content")))
    missing = [ident for ident in asked if ident not in answered]
    if missing:
        errors.append(
            f"{where}: tool_use ids were found without tool_result blocks immediately "
            f"after: {missing}"
        )
    return errors


def anthropic_errors(payload: Any) -> list[str]:
    """Why the Anthropic Messages API would reject ``payload`` (empty list: it accepts it)."""
    if not isinstance(payload, dict):
        return ["payload must be an object"]
    errors = [
        f"payload: unexpected key {key!r}" for key in payload if key not in ("system", "messages")
    ]
    system = payload.get("system")
    if "system" in payload and (not isinstance(system, str) or not system.strip()):
        if isinstance(system, list):
            errors.extend(_text_errors("system", [b for b in system if isinstance(b, dict)]))
        else:
            errors.append("system must be non-blank text or a list of text blocks")
    turns = payload.get("messages")
    if not isinstance(turns, list) or not turns:
        return [*errors, "messages must be a non-empty list"]
    seen: set[str] = set()
    asked: list[str] = []
    for index, turn in enumerate(turns):
        where = f"messages.{index}"
        if not isinstance(turn, dict):
            errors.append(f"{where}: not an object")
            continue
        role = turn.get("role")
        expected = "user" if index % 2 == 0 else "assistant"
        if role != expected:
            errors.append(f"{where}: role {role!r} where {expected!r} must come (alternation)")
        content = turn.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            errors.append(f"{where}: content must be non-blank text or a non-empty block list")
            content = []
        blocks = [b for b in content if isinstance(b, dict) and isinstance(b.get("type"), str)]
        if len(blocks) != len(content):
            errors.append(f"{where}: every content block must be an object with a type")
        allowed = _USER_BLOCKS if role == "user" else _ASSISTANT_BLOCKS
        errors.extend(
            f"{where}: {b['type']} block not allowed in a {role} turn"
            for b in blocks
            if b["type"] not in allowed
        )
        errors.extend(_text_errors(where, blocks))
        if role == "user":
            errors.extend(_user_turn_errors(where, blocks, asked))
            asked = []
        elif role == "assistant":
            if asked:
                errors.append(f"{where}: tool_use ids {asked} of the turn before are unanswered")
            for block in blocks:
                errors.extend(_assistant_block_errors(where, block, seen))
            asked = [b["id"] for b in blocks if b["type"] == "tool_use" and "id" in b]
    if asked:
        errors.append(
            f"end: tool_use ids were found without tool_result blocks immediately after: {asked}"
        )
    last = turns[-1]
    if isinstance(last, dict) and last.get("role") == "assistant":
        content = last.get("content")
        tail = content[-1] if isinstance(content, list) and content else None
        text = content if isinstance(content, str) else None
        if isinstance(tail, dict) and tail.get("type") == "text":
            text = tail.get("text")
        if isinstance(text, str) and text != text.rstrip():
            errors.append("final assistant content cannot end with trailing whitespace")
    return errors
