"""Span helpers shared by the segmenters: spans are ``(start, end)`` offsets into one text."""

from __future__ import annotations

import re

__all__ = ["strip_span"]

# From the first to the last non-white-space character; ``\s`` is exactly what
# ``str.strip`` removes (both use Unicode white space).
_VISIBLE = re.compile(r"\S(?:.*\S)?", re.S)


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` narrowed so that ``text[start:end]`` has no white space at either end.

    The result is empty (``start == end``) when the span holds only white space. The text
    itself is never altered, only the span.
    """
    m = _VISIBLE.search(text, start, end)
    return m.span() if m is not None else (start, start)
