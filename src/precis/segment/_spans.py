"""Span helpers shared by the segmenters: spans are ``(start, end)`` offsets into one text."""

from __future__ import annotations

__all__ = ["strip_span"]


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` narrowed so that ``text[start:end]`` has no white space at either end.

    The result is empty (``start == end``) when the span holds only white space. White space
    is what :meth:`str.strip` removes, so the text itself is never altered, only the span.
    """
    piece = text[start:end]
    kept = piece.lstrip()
    if not kept:
        return start, start
    start += len(piece) - len(kept)
    return start, start + len(kept.rstrip())
