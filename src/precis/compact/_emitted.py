"""Tokens of what :func:`~precis.compact.compress` emits, counted on the emitted form.

A budget is a promise about what the caller sends or shows: the OpenAI message list
(``to_openai()`` adds a ``name`` to tool messages and gives every tool result a message of
its own), the Anthropic payload (turns merged, thinking left out), the plain text
(``compressed_prompt``) or the Markdown report (a header of figures, headings). Each form
is counted by precis's own counter the way a user would count it: the message lists read
back and counted with the per-message framing, the text and the report as text. The lists
``compress`` tries are counted from what is known of the input (``list_tokens``,
``TextCounts``), so checking every form costs little.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from precis.errors import ConfigError
from precis.model import Message
from precis.tokens import TokenCounter
from precis.tokens.base import _message_cost
from precis.tokens.lines import LineMemo

__all__ = ["DEFAULT_OUTPUTS", "OUTPUTS", "TextCounts", "check_outputs", "emitted_tokens",
           "list_tokens"]

OUTPUTS = ("openai", "anthropic", "text", "markdown")
DEFAULT_OUTPUTS = ("openai", "anthropic", "text")
"""What a budget holds for unless told otherwise: the message list in either API's shape
and its text. The Markdown report (a header of figures on top) only when asked for."""


def check_outputs(outputs: Sequence[str] | str | None) -> tuple[str, ...]:
    """``outputs`` as a tuple of known form names (ConfigError naming a wrong one)."""
    if outputs is None:
        return DEFAULT_OUTPUTS
    names = (outputs,) if isinstance(outputs, str) else tuple(outputs)
    wrong = [n for n in names if n not in OUTPUTS]
    if wrong or not names:
        raise ConfigError(f"outputs must name some of {', '.join(OUTPUTS)}, got "
                          f"{outputs!r}", where="outputs")
    return names


def _read_back(payload: Any, shape: str) -> list[Message]:
    """An emitted payload read back as precis messages (how a user counts a file)."""
    if shape == "openai":
        from precis.formats.openai import parse_openai_messages

        return parse_openai_messages(payload, "emitted openai")
    from precis.formats.anthropic import parse_anthropic_messages

    system = payload.get("system")
    messages = parse_anthropic_messages(payload["messages"], "emitted anthropic") \
        if payload["messages"] else []
    return ([Message.of("system", system)] if system else []) + messages


class TextCounts:
    """Message lists counted like ``counter.count_messages``, each distinct text once per
    :func:`~precis.compact.compress` call: the emitted forms hold the texts of the list
    they come from (a tool message's ``name`` is its call's), so a form costs a few
    dictionary look-ups, not a count of everything again. A counter with a message count of
    its own is asked itself."""

    def __init__(self, counter: TokenCounter, count_text: Callable[[str], int]) -> None:
        self.counter = counter
        self.count_text = count_text
        self.known: dict[str, int] = {}
        self._own = any(getattr(type(counter), name) is not getattr(TokenCounter, name)
                        for name in ("count_message", "count_messages", "count_each"))

    def count_each(self, messages: list[Message]) -> list[int]:
        """``counter.count_each(messages)``, its texts remembered (one batch of the
        distinct ones, as the counter does)."""
        if self._own:
            return self.counter.count_each(messages)
        costs = [_message_cost(m, self.counter.overhead, f"message {i}")
                 for i, m in enumerate(messages)]
        new = [t for t in dict.fromkeys(t for texts, _ in costs for t in texts)
               if t not in self.known]
        self.known.update(zip(new, self.counter.count_batch(new)))
        known = self.known
        return [fixed + sum(map(known.__getitem__, texts)) for texts, fixed in costs]

    def count_messages(self, messages: list[Message]) -> int:
        if self._own:
            return self.counter.count_messages(messages)
        known, total = self.known, self.counter.overhead.reply_priming
        for index, message in enumerate(messages):
            texts, fixed = _message_cost(message, self.counter.overhead, f"message {index}")
            total += fixed
            for text in texts:
                tokens = known.get(text)
                if tokens is None:
                    tokens = known[text] = self.count_text(text)
                total += tokens
        return total


def emitted_tokens(
    messages: list[Message],
    outputs: Sequence[str],
    counts: TextCounts,
    markdown: Callable[[], str] | None = None,
    *,
    stop_over: int | None = None,
) -> dict[str, int]:
    """Tokens of each form in ``outputs`` of ``messages`` (``markdown`` renders the report);
    with ``stop_over``, the forms after the first one over it are not counted."""
    from precis.compact.result import render_messages
    from precis.formats.export import to_anthropic, to_openai

    out: dict[str, int] = {}
    for form in outputs:
        if form == "openai":
            out[form] = counts.count_messages(_read_back(to_openai(messages), "openai"))
        elif form == "anthropic":
            out[form] = counts.count_messages(_read_back(to_anthropic(messages), "anthropic"))
        elif form == "text":
            out[form] = counts.count_text(render_messages(messages))
        elif markdown is not None:
            out[form] = counts.count_text(markdown())
        if stop_over is not None and out.get(form, 0) > stop_over:
            break
    return out


def list_tokens(
    messages: list[Message], sizes: list[int], counter: TokenCounter | LineMemo
) -> Callable[[list[Message]], int]:
    """``counter.count_messages`` for lists made mostly of the input ``messages`` (whose
    tokens are ``sizes``): a message equal to an input message takes its size (``repair``
    returns equal copies that hold the same parts), only the others are counted (by a
    :class:`LineMemo`: the summary message from the lines the fill counted already)."""
    by_parts: dict[tuple[object, ...], list[int]] = {}
    for i, m in enumerate(messages):
        by_parts.setdefault((m.role, m.id, m.name, *map(id, m.parts)), []).append(i)

    def tokens(msgs: list[Message]) -> int:
        known = 0
        others: list[Message] = []
        for m in msgs:
            for i in by_parts.get((m.role, m.id, m.name, *map(id, m.parts)), ()):
                if messages[i] is m or messages[i] == m:
                    known += sizes[i]
                    break
            else:
                others.append(m)
        return known + counter.count_messages(others)

    return tokens
