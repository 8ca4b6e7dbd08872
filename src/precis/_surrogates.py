"""Lone surrogates out of text that came from Python data.

A Python string can hold UTF-16 surrogate code points (``"\\ud83d"`` cut from an emoji, a
surrogate pair a JSON encoder left split). They are not text: they cannot be encoded as
UTF-8, so SQLite, a file write or an HTTP body fails on them. JSON input is cleaned where it
is parsed (:mod:`precis.formats._reader`); Python data handed to the API is cleaned here the
same way: a surrogate pair becomes the character it encodes, a lone surrogate U+FFFD.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from precis.model import Conversation, Message

__all__ = ["clean_conversation", "clean_data", "clean_message", "clean_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
T = TypeVar("T")


def clean_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD (the same
    object when there is none, the common case)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_data(value: T) -> T:
    """``value`` (JSON-like data: dicts, lists, tuples, strings, numbers) with every string
    cleaned by :func:`clean_text`, keys too. The input is not changed; containers are copied
    only where a string in them changed."""
    return _clean(value, 0)  # type: ignore[no-any-return]


def _clean(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if depth > 200:  # deeper than any conversation; the reader refuses it with a message
        return value
    if isinstance(value, dict):
        out = {_clean(k, depth + 1): _clean(v, depth + 1) for k, v in value.items()}
        same = len(out) == len(value) and all(
            k in value and value[k] is v for k, v in out.items())
        return value if same else out
    if isinstance(value, list) or type(value) is tuple:
        items = [_clean(v, depth + 1) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    return value


def _clean_fields(obj: T) -> T:
    """A dataclass with its text fields (and a ``metadata`` dict) cleaned; ``obj`` itself
    when none changed."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        new = _clean(value, 0) if isinstance(value, (str, dict)) else value
        if new is not value:
            changes[f.name] = new
    return dataclasses.replace(obj, **changes) if changes else obj  # type: ignore[type-var]


def clean_message(message: Message) -> Message:
    """``message`` with the text of its fields and parts cleaned (itself when clean)."""
    parts = [_clean_fields(p) for p in message.parts]
    changed = any(a is not b for a, b in zip(parts, message.parts))
    out = _clean_fields(message)
    if changed:
        out = dataclasses.replace(out, parts=parts)
    return out


def clean_conversation(conversation: Conversation) -> Conversation:
    """``conversation`` with every message cleaned (itself when clean)."""
    messages = [clean_message(m) for m in conversation.messages]
    out = _clean_fields(conversation)
    if any(a is not b for a, b in zip(messages, conversation.messages)):
        out = dataclasses.replace(out, messages=messages)
    return out
