"""Segmentation: a conversation cut into rounds (same-speaker runs) and fragments.

``segment(conversation)`` gives a :class:`Segmentation`; ``split_text(text)`` gives the
fragment spans of one text. Fragments are the smallest units the later stages reason about;
each has an id (``S1``, ``S2``, ...) and a :class:`Provenance` that leads back to the exact
characters it came from.
"""

from __future__ import annotations

from precis.segment._lang import detect_language
from precis.segment._segment import TOOL_RESULT_CHUNK_CHARS, chunk_lines, segment
from precis.segment._sentences import MAX_SENTENCE_CHARS
from precis.segment._text import Span, split_text
from precis.segment.model import Fragment, FragmentKind, Provenance, Round, Segmentation

__all__ = [
    "MAX_SENTENCE_CHARS",
    "TOOL_RESULT_CHUNK_CHARS",
    "Fragment",
    "FragmentKind",
    "Provenance",
    "Round",
    "Segmentation",
    "Span",
    "chunk_lines",
    "detect_language",
    "segment",
    "split_text",
]
