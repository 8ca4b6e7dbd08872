"""Segmentation output: rounds (same-speaker runs) and fragments with provenance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = ["Fragment", "FragmentKind", "Provenance", "Round", "Segmentation"]

FragmentKind = Literal[
    "heading",
    "paragraph",
    "sentence",
    "list_item",
    "code",
    "sql",
    "json",
    "table",
    "tool_call",
    "tool_result",
    "thinking",
    "image",
]


class Provenance(NamedTuple):
    """Where a fragment's text is in the conversation.

    ``message`` is the index in ``Conversation.messages``, ``part`` the index in that
    message's ``parts``; ``start`` / ``end`` are character offsets into the part's text
    (``Text.text``, ``ToolCall.arguments``, ``ToolResult.content``, ...), so
    ``conversation[message].parts[part].text[start:end] == fragment.text`` always holds.

    Fragments and their provenance are immutable named tuples: a long session has tens of
    thousands of them and tuples are three times cheaper to build than dataclasses.
    """

    round: int
    message: int
    part: int
    start: int
    end: int


class Fragment(NamedTuple):
    """The smallest unit precis reasons about. ``id`` is ``S1``, ``S2``, ... in order."""

    id: str
    kind: FragmentKind
    text: str
    role: str
    language: str
    provenance: Provenance
    lang_hint: str | None = None  # code language from a fence (```python), if any


@dataclass(frozen=True)
class Round:
    """A run of consecutive messages from the same speaker (``role``)."""

    index: int
    role: str
    messages: tuple[int, ...]


@dataclass(frozen=True)
class Segmentation:
    rounds: tuple[Round, ...]
    fragments: tuple[Fragment, ...]
