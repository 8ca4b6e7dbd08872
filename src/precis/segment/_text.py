"""``split_text``: the fragments of one text as ``(kind, start, end, lang_hint)`` spans."""

from __future__ import annotations

from precis.segment._blocks import split_blocks
from precis.segment._json import is_json, looks_like_json
from precis.segment._sentences import split_sentences
from precis.segment._spans import strip_span

__all__ = ["Span", "split_text"]

Span = tuple[str, int, int, "str | None"]
"""``(kind, start, end, lang_hint)``: ``text[start:end]`` is the fragment's text."""


def split_text(text: str) -> list[Span]:
    """Split one text into fragment spans, in order, non-overlapping, stripped of white space.

    Kinds: ``heading``, ``list_item``, ``code``, ``sql``, ``json``, ``table`` (whole blocks,
    see :mod:`precis.segment._blocks`), ``sentence`` (running text is split into sentences,
    see :mod:`precis.segment._sentences`) and ``paragraph`` (a run of text with no sentence
    boundary longer than ``MAX_SENTENCE_CHARS``, or a ``---`` break). A text that is one JSON
    object or array, or a block of code that is, is one ``json`` span. ``lang_hint`` is the
    language a fence names (```` ```python ```` gives ``"python"``), else ``None``.

    Every non-white-space character of ``text`` lies in exactly one span; white space alone
    gives no span.
    """
    start, end = strip_span(text, 0, len(text))
    if start == end:
        return []
    if looks_like_json(text, start, end) and is_json(text[start:end]):
        return [("json", start, end, None)]
    out: list[Span] = []
    for kind, lo, hi, hint in split_blocks(text):
        if kind == "prose":
            s, e = strip_span(text, lo, hi)
            if looks_like_json(text, s, e) and is_json(text[s:e]):
                out.append(("json", s, e, None))
            else:
                out.extend(split_sentences(text, lo, hi))
            continue
        s, e = strip_span(text, lo, hi)
        if s == e:
            continue
        if kind == "code" and hint is None and looks_like_json(text, s, e) and is_json(text[s:e]):
            kind = "json"
        elif kind == "rule":
            kind = "paragraph"
        out.append((kind, s, e, hint))
    return out
