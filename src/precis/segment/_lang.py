"""The natural language of a fragment: ``zh``, ``en``, ``mixed`` or ``none``.

``zh`` means Han script (Chinese characters, also when used in Japanese), ``en`` means Latin
letters. Han characters and Latin words are weighed against each other: one Latin word
counts as :data:`WORD_WEIGHT` Han characters, since a Chinese word is about two characters
and carries about the same information as an English word. A text is ``zh`` when Han makes
up at least :data:`MAJORITY` of the weight, ``en`` when Latin does, ``mixed`` otherwise, and
``none`` when it has neither (digits, symbols, emoji). Structured fragments (code, SQL, JSON,
tool calls) get ``code`` from the segmenter without looking at the text.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["MAJORITY", "WORD_WEIGHT", "detect_language", "has_han"]

WORD_WEIGHT = 1.5
MAJORITY = 0.7

_HAN = "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ebef]+"
_LATIN_WORD = re.compile("[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]+")
_ASCII_LETTER = re.compile("[A-Za-z]")


@cache
def _han() -> re.Pattern[str]:
    return re.compile(_HAN)  # a large character class: compiled on first use


def has_han(text: str) -> bool:
    """Whether ``text`` holds a Han character."""
    return _han().search(text) is not None


def detect_language(text: str) -> str:
    """``zh``, ``en``, ``mixed`` or ``none`` for ``text`` (see the module docstring)."""
    if text.isascii():
        return "en" if _ASCII_LETTER.search(text) else "none"
    han_re = _han()
    if _LATIN_WORD.search(text) is None:  # the common pure-Chinese case: two C scans
        return "zh" if han_re.search(text) else "none"
    if han_re.search(text) is None:
        return "en"
    han = sum(map(len, han_re.findall(text)))
    share = han / (han + WORD_WEIGHT * len(_LATIN_WORD.findall(text)))
    if share >= MAJORITY:
        return "zh"
    if share <= 1 - MAJORITY:
        return "en"
    return "mixed"
