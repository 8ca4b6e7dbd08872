"""The token-counter interface, and the per-message overhead model every counter shares.

A counter implements one method, :meth:`TokenCounter.count` (tokens of a plain string).
Everything else is built on it: :meth:`~TokenCounter.count_batch` (a loop unless a backend
has a faster batch call), :meth:`~TokenCounter.count_message`,
:meth:`~TokenCounter.count_messages` and :meth:`~TokenCounter.count_each`, which add the
framing a chat API puts around every message. A text that occurs more than once in the
messages given to one call (the same tool output read twice, a repeated instruction) is
counted once.

The overhead model (:class:`MessageOverhead`) follows OpenAI's published rule for chat
models (the OpenAI Cookbook, "How to count tokens with tiktoken"): every message is
wrapped as ``<|start|>{role/name}\\n{content}<|end|>\\n``, which costs 3 tokens plus the
tokens of the role (each of ``system`` / ``user`` / ``assistant`` / ``tool`` is one token in
cl100k_base, o200k_base and Qwen), a ``name`` adds its own tokens plus 1, and every reply
is primed with ``<|start|>assistant<|message|>`` (3 tokens). A tool call costs its name,
its JSON arguments and 3 tokens of framing; 3 is the figure measured against the API for
the legacy ``function_call`` (hmarr/openai-chat-tokens, which matches the API's
``prompt_tokens``). Images get a fixed cost: 765 tokens, what OpenAI bills for a
1024 x 1024 image at ``detail: high`` (85 + 4 tiles x 170). Tool definitions sent with a
request are not messages and are not counted here.

The same model is applied to every counter, Qwen and the estimator included. For chat
templates other than OpenAI's (ChatML ``<|im_start|>role\\n...<|im_end|>\\n`` is 5 tokens
per message, Anthropic does not publish its framing) it is an approximation of a few
tokens per message; subclass or pass another :class:`MessageOverhead` if you know better.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from precis.errors import TokenizerError
from precis.model import Image, Message, Text, Thinking, ToolCall, ToolResult

__all__ = ["OPENAI_OVERHEAD", "MessageOverhead", "TokenCounter"]


@dataclass(frozen=True)
class MessageOverhead:
    """Tokens a chat API adds around message content (see the module docstring)."""

    per_message: int = 3
    """``<|start|>``, the separator after the role and ``<|end|>``."""
    per_role: int = 1
    """The role name itself (one token for every role in the tokenizers precis knows)."""
    per_name: int = 1
    """Added on top of the name's own tokens when a message has a ``name``."""
    per_tool_call: int = 3
    """Framing of one tool call, on top of its name and arguments."""
    per_image: int = 765
    """Fixed cost of one image (OpenAI, 1024 x 1024, ``detail: high``)."""
    reply_priming: int = 3
    """``<|start|>assistant<|message|>``, added once per request by ``count_messages``."""


OPENAI_OVERHEAD = MessageOverhead()


class TokenCounter(ABC):
    """Counts tokens of text and of :class:`~precis.model.Message` lists.

    Subclasses set ``name`` (the spec :func:`precis.get_counter` accepts for them, e.g.
    ``"o200k_base"``) and implement :meth:`count`. ``overhead`` may be replaced per
    instance or per subclass.
    """

    name: str
    overhead: MessageOverhead = OPENAI_OVERHEAD
    lines_add_up: bool = False
    """The tokens of a text are the sum of those of its lines (see
    :mod:`precis.tokens.lines`); True only where that is known to hold."""

    @abstractmethod
    def count(self, text: str) -> int:
        """The number of tokens of ``text`` (0 for the empty string)."""

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """``[count(t) for t in texts]``; backends override it when they batch faster."""
        return [self.count(t) for t in texts]

    def count_message(self, message: Message) -> int:
        """Tokens of one message: content of every part plus the framing overhead."""
        texts, fixed = _message_cost(message, self.overhead, None)
        return fixed + sum(self.count_batch(texts))

    def count_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a request holding ``messages``: every message plus reply priming.

        Accepts any iterable of messages, a :class:`~precis.model.Conversation` included.
        """
        return self.overhead.reply_priming + sum(self.count_each(messages))

    def count_each(self, messages: Iterable[Message]) -> list[int]:
        """``[count_message(m) for m in messages]``, every distinct text counted once (one
        :meth:`count_batch` call for all of them)."""
        texts: list[str] = []
        ends: list[int] = []
        fixed: list[int] = []
        for index, message in enumerate(messages):
            message_texts, message_fixed = _message_cost(
                message, self.overhead, f"message {index}"
            )
            texts.extend(message_texts)
            ends.append(len(texts))
            fixed.append(message_fixed)
        counts = self._count_all(texts)
        out: list[int] = []
        start = 0
        for end, message_fixed in zip(ends, fixed):
            out.append(message_fixed + sum(counts[start:end]))
            start = end
        return out

    def _count_all(self, texts: list[str]) -> list[int]:
        """:meth:`count_batch` of ``texts`` (all strings), each distinct text counted once."""
        distinct = list(dict.fromkeys(texts))
        if len(distinct) == len(texts):
            return self.count_batch(texts)
        counts = dict(zip(distinct, self.count_batch(distinct)))
        return list(map(counts.__getitem__, texts))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self, 'name', '?')}>"


def _text_field(value: object, field: str, where: str | None) -> str:
    if isinstance(value, str):
        return value
    raise TokenizerError(
        f"{field} is a {type(value).__name__}, expected text", where=where
    )


def _message_cost(
    message: Message, overhead: MessageOverhead, where: str | None
) -> tuple[list[str], int]:
    """The texts to count in ``message`` and its fixed overhead in tokens."""
    if not isinstance(message, Message):
        raise TokenizerError(
            f"cannot count tokens of a {type(message).__name__}: expected a precis Message",
            where=where,
        )
    texts: list[str] = []
    fixed = overhead.per_message + overhead.per_role
    if message.name:
        texts.append(_text_field(message.name, "name", where))
        fixed += overhead.per_name
    for index, part in enumerate(message.parts):
        if isinstance(part, (Text, Thinking)):
            texts.append(_text_field(part.text, f"part {index} text", where))
        elif isinstance(part, ToolCall):
            texts.append(_text_field(part.name, f"part {index} tool name", where))
            texts.append(_text_field(part.arguments, f"part {index} arguments", where))
            fixed += overhead.per_tool_call
        elif isinstance(part, ToolResult):
            texts.append(_text_field(part.content, f"part {index} tool result", where))
        elif isinstance(part, Image):
            fixed += overhead.per_image
        else:
            raise TokenizerError(
                f"part {index} is a {type(part).__name__}, which precis cannot count",
                where=where,
            )
    return texts, fixed
