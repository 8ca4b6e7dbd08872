"""Is a piece of text a JSON object or array?"""

from __future__ import annotations

import json

__all__ = ["is_json", "looks_like_json"]

_OPEN_CLOSE = {"{": "}", "[": "]"}


def looks_like_json(text: str, start: int, end: int) -> bool:
    """Cheap test on a stripped span: starts with ``{`` / ``[`` and ends with its partner."""
    return end - start >= 2 and _OPEN_CLOSE.get(text[start]) == text[end - 1]


def is_json(text: str) -> bool:
    """Whether ``text`` parses as a JSON object or array (never raises)."""
    text = text.strip()
    if len(text) < 2 or _OPEN_CLOSE.get(text[0]) != text[-1]:
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True
