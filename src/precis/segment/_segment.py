"""``segment``: a conversation's rounds and fragments, with ids and provenance."""

from __future__ import annotations

from precis.model import Conversation, Image, Part, Thinking, ToolCall, ToolResult
from precis.segment._lang import _ASCII_LETTER, _LATIN_WORD, detect_language, has_han
from precis.segment._spans import strip_span
from precis.segment._text import Span, split_text
from precis.segment.model import Fragment, Provenance, Round, Segmentation

__all__ = ["STRUCTURED_KINDS", "TOOL_RESULT_CHUNK_CHARS", "chunk_lines", "segment"]

TOOL_RESULT_CHUNK_CHARS = 2000
"""A tool result longer than this is split at line breaks into chunks of at most this size."""

STRUCTURED_KINDS = frozenset({"code", "sql", "json", "tool_call"})
"""Kinds whose ``language`` is ``"code"`` (their text is not natural language)."""

_THINKING_AS_IS = frozenset({"code", "sql", "json", "table"})


def chunk_lines(text: str, limit: int = TOOL_RESULT_CHUNK_CHARS) -> list[tuple[int, int]]:
    """Stripped spans of at most ``limit`` characters covering ``text``, cut after line breaks.

    A line longer than ``limit`` is cut after a space in its last half if there is one, else
    at exactly ``limit`` characters.
    """
    n = len(text)
    out: list[tuple[int, int]] = []
    pos = 0
    while pos < n:
        end = n
        if n - pos > limit:
            cut = text.rfind("\n", pos, pos + limit)
            if cut < pos:
                cut = text.rfind(" ", pos + limit // 2, pos + limit)
            end = cut + 1 if cut >= pos else pos + limit
        s, e = strip_span(text, pos, end)
        if s < e:
            out.append((s, e))
        pos = end
    return out


def _whole(kind: str, text: str) -> list[Span]:
    s, e = strip_span(text, 0, len(text))
    return [(kind, s, e, None)] if s < e else []


def _part_spans(part: Part, text: str) -> list[Span]:
    if isinstance(part, ToolCall):
        return _whole("tool_call", text)
    if isinstance(part, ToolResult):
        return [("tool_result", s, e, None) for s, e in chunk_lines(text)]
    if isinstance(part, Image):
        return _whole("image", text)
    if isinstance(part, Thinking):
        if part.redacted:
            return _whole("thinking", text)
        return [
            (k if k in _THINKING_AS_IS else "thinking", s, e, h) for k, s, e, h in split_text(text)
        ]
    return split_text(text)


_Piece = tuple[str, str, int, int, "str | None", str]
"""``(kind, text, start, end, lang_hint, language)`` of one fragment of a part."""


def _pieces(part: Part, text: str) -> list[_Piece]:
    """The fragments of one part's text, with their languages."""
    # Language per piece, with the part's own script deciding the shortcut: a piece of an
    # ASCII part needs one letter search, one of a part with no Latin word one Han search
    # (the same answers detect_language gives, for less work).
    ascii_part = text.isascii()
    latin_free = not ascii_part and _LATIN_WORD.search(text) is None
    out: list[_Piece] = []
    for kind, s, e, hint in _part_spans(part, text):
        piece = text[s:e]
        if kind in STRUCTURED_KINDS:
            language = "code"
        elif kind == "image":
            caption = getattr(part, "caption", None)
            language = detect_language(caption) if isinstance(caption, str) else "none"
        elif ascii_part:
            language = "en" if _ASCII_LETTER.search(piece) else "none"
        elif latin_free:
            language = "zh" if has_han(piece) else "none"
        else:
            language = detect_language(piece)
        out.append((kind, piece, s, e, hint, language))
    return out


def segment(conversation: Conversation) -> Segmentation:
    """Merge same-speaker runs into rounds and split every part into fragments.

    Rounds are numbered from 0; a new round starts whenever the role changes. Fragments get
    ids ``S1``, ``S2``, ... in conversation order, and ``provenance`` such that
    ``conversation.messages[p.message].parts[p.part].text[p.start:p.end] == fragment.text``.

    Per part: :class:`~precis.model.Text` is split by :func:`split_text`;
    :class:`~precis.model.Thinking` the same way, with every prose kind (sentence,
    paragraph, heading, list item) turned into ``thinking`` (code, SQL, JSON and tables in
    it keep their kinds; redacted thinking is one fragment); a
    :class:`~precis.model.ToolCall` is one ``tool_call`` fragment over its arguments; a
    :class:`~precis.model.ToolResult` is ``tool_result`` fragments of at most
    :data:`TOOL_RESULT_CHUNK_CHARS` characters; an :class:`~precis.model.Image` is one
    ``image`` fragment over its text stand-in.

    ``language`` is ``"code"`` for :data:`STRUCTURED_KINDS`, else ``zh`` / ``en`` / ``mixed``
    / ``none`` from the text (see :mod:`precis.segment._lang`; an image is judged by its
    caption).
    """
    rounds: list[Round] = []
    fragments: list[Fragment] = []
    append = fragments.append
    # Fragments and provenance are named tuples; building them with tuple.__new__ skips the
    # generated keyword-handling __new__ (a third of the per-fragment cost on long sessions).
    new = tuple.__new__
    # A part whose text was seen before (the same tool output, a repeated instruction) is
    # split once: its pieces depend only on the kind of part and its text.
    seen: dict[tuple[type, bool, str], list[_Piece]] = {}
    round_role: str | None = None
    round_messages: list[int] = []
    for mi, message in enumerate(conversation.messages):
        role = message.role
        if role != round_role or not round_messages:
            if round_messages:
                rounds.append(Round(len(rounds), round_role or "", tuple(round_messages)))
            round_role = role
            round_messages = []
        round_messages.append(mi)
        ri = len(rounds)
        for pi, part in enumerate(message.parts):
            text = getattr(part, "text", None)
            if not isinstance(text, str):
                continue
            if isinstance(part, Image):  # (its language is its caption's)
                pieces = _pieces(part, text)
            else:
                key = (type(part), getattr(part, "redacted", False) is True, text)
                found = seen.get(key)
                if found is None:
                    found = seen[key] = _pieces(part, text)
                pieces = found
            for kind, piece, s, e, hint, language in pieces:
                append(
                    new(
                        Fragment,
                        (
                            f"S{len(fragments) + 1}",
                            kind,
                            piece,
                            role,
                            language,
                            new(Provenance, (ri, mi, pi, s, e)),
                            hint,
                        ),
                    )
                )
    if round_messages:
        rounds.append(Round(len(rounds), round_role or "", tuple(round_messages)))
    return Segmentation(rounds=tuple(rounds), fragments=tuple(fragments))
