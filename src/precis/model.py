"""Core conversation data: :class:`Conversation` of :class:`Message`, each a list of parts.

The model is the superset of the formats precis reads. A message has a role and an ordered
list of parts; tool calls and tool results are parts, so the order in which a model wrote
text and calls (Anthropic) is kept, and an OpenAI ``tool`` message is simply a message whose
parts are :class:`ToolResult`. Everything a source carries that the model has no field for
goes into ``metadata`` so nothing is silently lost.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = [
    "ROLES",
    "Conversation",
    "ConversationInfo",
    "Image",
    "Message",
    "Part",
    "Role",
    "Text",
    "Thinking",
    "ToolCall",
    "ToolResult",
]

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Text:
    """Plain text (Markdown, code, anything the speaker wrote)."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class Thinking:
    """A model's reasoning block (Anthropic ``thinking`` / ``redacted_thinking``)."""

    text: str
    signature: str | None = None
    redacted: bool = False
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class Image:
    """An image reference; ``caption`` is a text stand-in where the source gives one."""

    url: str | None = None
    media_type: str | None = None
    data: str | None = None
    caption: str | None = None
    kind: Literal["image"] = "image"

    @property
    def text(self) -> str:
        return f"[image: {self.caption}]" if self.caption else "[image]"


@dataclass(frozen=True)
class ToolCall:
    """A request by the assistant to run a tool. ``arguments`` is the JSON text as sent."""

    id: str
    name: str
    arguments: str = "{}"
    kind: Literal["tool_call"] = "tool_call"

    @property
    def text(self) -> str:
        return self.arguments


@dataclass(frozen=True)
class ToolResult:
    """The output of a tool call, linked to it by ``call_id``."""

    call_id: str
    content: str
    is_error: bool = False
    name: str | None = None
    kind: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        return self.content


Part = Union[Text, Thinking, Image, ToolCall, ToolResult]  # noqa: UP007  (runtime alias, 3.10)


@dataclass
class Message:
    """One message: who said it, what (ordered parts), and where it came from.

    ``role`` is one of :data:`ROLES`; OpenAI's legacy ``function`` role and Anthropic's
    tool-result-only user messages become ``tool``; ``developer`` becomes ``system``
    (the source role is kept in ``metadata["source_role"]``).
    """

    role: Role
    parts: list[Part] = field(default_factory=list)
    id: str | None = None
    name: str | None = None
    timestamp: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, role: Role, text: str, **kwargs: Any) -> Message:
        """A message with a single text part."""
        return cls(role=role, parts=[Text(text)], **kwargs)

    @property
    def text(self) -> str:
        """The message's readable text: text parts joined by blank lines."""
        return "\n\n".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]

    @property
    def tool_call_id(self) -> str | None:
        """The call id of the first tool result (OpenAI ``tool`` messages have exactly one)."""
        results = self.tool_results
        return results[0].call_id if results else None


@dataclass(frozen=True)
class ConversationInfo:
    """One entry of a file that holds several conversations (see :func:`precis.inspect_file`)."""

    index: int
    id: str | None
    title: str | None
    message_count: int
    preview: str = ""
    """The start of the first user message (what to show when the source has no title)."""


@dataclass
class Conversation:
    """An ordered list of messages plus where they came from.

    ``warnings`` lists problems that do not stop loading (a tool result whose call was cut
    off, a call whose result never came): later stages repair them.
    """

    messages: list[Message] = field(default_factory=list)
    id: str | None = None
    source_format: str | None = None
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __getitem__(self, index: int) -> Message:
        return self.messages[index]

    @property
    def system_messages(self) -> list[Message]:
        return [m for m in self.messages if m.role == "system"]

    def to_openai(self) -> list[dict[str, Any]]:
        """The messages as an OpenAI Chat Completions ``messages`` list."""
        from precis.formats.export import to_openai

        return to_openai(self.messages)

    def to_anthropic(self) -> dict[str, Any]:
        """``{"system": ..., "messages": [...]}`` in Anthropic Messages shape."""
        from precis.formats.export import to_anthropic

        return to_anthropic(self.messages)

    @classmethod
    def from_messages(
        cls, messages: Sequence[Message], **kwargs: Any
    ) -> Conversation:
        return cls(messages=list(messages), **kwargs)
