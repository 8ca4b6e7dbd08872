"""Counting a long text that is counted again and again as it grows, line by line.

A summary is filled item by item and its whole text is counted after each round (the
budget holds for the text, not for the sum of its lines counted one by one). For the
tokenizers whose counts add up over lines, :class:`LineMemo` counts every distinct line
once and sums: the second count of a summary that gained a few lines costs only those.

Counts add up over lines when no pre-token (the pieces a tokenizer's regular expression
cuts before merging bytes) spans a line break and the start of the next line. In
``cl100k_base`` and ``o200k_base`` a run of line breaks ends its pre-token, and a line that
starts with a letter, a digit, or one of ``- # [ * ` (`` starts a new one (only ``/`` may be
swallowed by the pre-token of punctuation and line breaks before it in ``o200k_base``), so
the text is cut only before such lines. A counter says whether this holds with
:attr:`~precis.tokens.TokenCounter.lines_add_up`; for the others the whole text is counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from precis.model import Message
from precis.tokens.base import TokenCounter, _message_cost

__all__ = ["LineMemo"]

_CUT = re.compile(r"\n(?=[^\W_]|[-#\[*`(])")  # the line breaks the text is cut after
_MIN_CHARS = 2000  # shorter texts are counted whole: cutting them saves nothing
_COUNT_MESSAGES = TokenCounter.count_messages


class LineMemo:
    """``counter.count``, with long texts counted as the sum of their remembered lines."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._by_lines = counter.lines_add_up
        self._lines: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if not self._by_lines or len(text) < _MIN_CHARS:
            return self.counter.count(text)
        pieces = _pieces(text)
        lines = self._lines
        new = [p for p in dict.fromkeys(pieces) if p not in lines]
        if new:
            lines.update(zip(new, self.counter.count_batch(new)))
        return sum(map(lines.__getitem__, pieces))

    def count_messages(self, messages: Sequence[Message]) -> int:
        """``counter.count_messages(messages)``, long texts summed from their remembered
        lines (a summary message that was counted line by line while it was filled costs
        little more). A counter with a ``count_messages`` of its own is asked itself."""
        if not self._by_lines or type(self.counter).count_messages is not _COUNT_MESSAGES:
            return self.counter.count_messages(messages)
        overhead = self.counter.overhead
        total = overhead.reply_priming
        for index, message in enumerate(messages):
            texts, fixed = _message_cost(message, overhead, f"message {index}")
            total += fixed + sum(map(self, texts))
        return total


def _pieces(text: str) -> list[str]:
    """``text`` cut after every line break that :data:`_CUT` matches, each piece keeping
    its line break (splitting at the line breaks is faster than at empty matches)."""
    pieces = _CUT.split(text)
    last = pieces.pop()
    pieces = [p + "\n" for p in pieces]
    pieces.append(last)
    return pieces
