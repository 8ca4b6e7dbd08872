"""Text helpers for character budgets: one-line text, word-safe truncation, natural order.

Budgets here are in characters (``len(str)``), so a Chinese character and a Latin letter
count the same; that is the unit the seed's forms (2000 / 500 characters) are given in.
"""

from __future__ import annotations

import re

from precis.analysis._shingles import CJK_CHARS

__all__ = ["ELLIPSIS", "natural_key", "one_line", "truncate"]

ELLIPSIS = "…"
"""Marks text that was cut (one character, so it costs one character of a budget)."""

_CJK = re.compile(f"[{CJK_CHARS}]")
_DIGITS = re.compile(r"(\d+)")
# A cut at a word boundary may give back at most this share of the room: a single token
# longer than that (a URL, a hash, base64) is cut inside instead of leaving almost nothing.
_MAX_GIVE_BACK = 0.5


def one_line(text: str) -> str:
    """``text`` with every run of white space (line breaks included) as one space."""
    return " ".join(text.split())


def _word_char(ch: str) -> bool:
    """A character that belongs to a Latin-script word (CJK characters are words alone)."""
    return (ch.isalnum() or ch == "_") and _CJK.match(ch) is None


def truncate(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """``text`` cut to at most ``limit`` characters, ellipsis included, never mid-word.

    The cut falls at white space or punctuation, or between two CJK characters; only a
    single token longer than half the room is cut inside. Text that fits is returned as is.
    """
    if len(text) <= limit:
        return text
    if limit <= len(ellipsis):
        return ellipsis[:max(limit, 0)]
    room = limit - len(ellipsis)
    cut = room
    if _word_char(text[cut - 1]) and _word_char(text[cut]):  # inside a word: back off
        back = cut - 1
        while back > 0 and _word_char(text[back - 1]):
            back -= 1
        if back >= room * (1 - _MAX_GIVE_BACK):
            cut = back
    head = text[:cut].rstrip()
    if not head:
        head = text[:room]
    return head + ellipsis


def natural_key(value: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``task-2`` before ``task-10`` (digit runs compare as numbers)."""
    parts = _DIGITS.split(value)
    return tuple((1, int(p)) if i % 2 else (0, p) for i, p in enumerate(parts))
