"""Segmentation: a conversation cut into rounds (same-speaker runs) and fragments.

``segment(conversation)`` gives a :class:`Segmentation`; ``split_text(text)`` gives the
fragment spans of one text. Fragments are the smallest units the later stages reason about.

Conventions:

* Rounds are numbered from 0; consecutive messages with the same role form one round.
* Fragment ids are ``S1``, ``S2``, ... in conversation order (message, part, offset).
* ``provenance`` leads back to the exact characters:
  ``conversation.messages[p.message].parts[p.part].text[p.start:p.end] == fragment.text``.
  Spans are trimmed of white space (the text itself is never altered); white space alone
  gives no fragment; every other character of every part lies in exactly one fragment.
* Kinds: running text becomes ``sentence`` fragments, one per sentence; ``paragraph`` is
  only a run of text with no sentence boundary longer than :data:`MAX_SENTENCE_CHARS`
  (and a ``---`` break). Structure gives ``heading``, ``list_item`` (the whole item, with
  its continuation lines), ``code``, ``sql``, ``json``, ``table`` (whole blocks, fences
  included; ``lang_hint`` is the fence's language). Parts give ``tool_call`` (one per
  call, over its arguments), ``tool_result`` (chunks of at most
  :data:`TOOL_RESULT_CHUNK_CHARS` cut at line breaks), ``image``, and ``thinking``
  (reasoning split like text, its prose kinds all turned into ``thinking``).
* ``language``: ``code`` for code, SQL, JSON and tool calls; otherwise ``zh`` (Han),
  ``en`` (Latin), ``mixed``, or ``none`` (digits, symbols, emoji) from the text.
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
