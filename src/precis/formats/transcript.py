"""Plain-text transcripts: ``User: ...`` / ``Assistant: ...`` lines.

A message starts at a line that begins with a known speaker prefix and runs until the next
such line. Known prefixes (case-insensitive; ASCII ``:`` or full-width ``：``):

==================================  ===========
``User``, ``Human``, ``用户``        ``user``
``Assistant``, ``AI``, ``助手``      ``assistant``
``System``, ``系统``                 ``system``
``Tool``, ``工具``                   ``tool``
==================================  ===========

A prefix may be written in Markdown bold (``**User:**`` or ``**User**:``) and may follow a
bracketed time stamp (``[2024-05-01 10:00] User:``); the stamp is kept raw in
``Message.metadata["raw_timestamp"]`` and as ISO 8601 in ``Message.timestamp`` when it
holds a date. The prefix as written is kept in ``Message.metadata["speaker"]``.

Text is kept exactly: only the prefix and one following space are removed; inner blank
lines stay; blank lines before the first and after the last text line are trimmed (so a
message's text is always a verbatim slice of the input). A prefix must start its line.
Lines inside a fenced code block (``` or ~~~) never start a message, so an example dialogue
quoted in a code block stays in the message that quotes it (a fence never closed does not
count as a fence).

Decisions:

- Text before the first prefix (a title, a pasted instruction block) becomes a leading
  ``system`` message with ``metadata["preamble"] = True``, so it stays in the conversation
  and in token counts; a Markdown heading on its first line also becomes the title.
- ``Tool:`` lines become ``tool`` messages with a :class:`~precis.model.Text` part: a plain
  transcript has no call ids, and inventing one would create a result without its call.
- Other speaker names (``Alice:``) are not roles. A text with no known prefix line is not a
  transcript (``sniff`` gives 0), so loading it fails with ``UnknownFormatError``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats._timestamps import to_iso
from precis.formats.base import ConversationFormat
from precis.model import Conversation, Message, Role

__all__ = ["FORMATS", "SPEAKER_ROLES", "TranscriptFormat", "parse_transcript"]

SPEAKER_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "用户": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "助手": "assistant",
    "system": "system",
    "系统": "system",
    "tool": "tool",
    "工具": "tool",
}
"""Known speaker prefixes (lower case) and the role each becomes."""

_NAME = "|".join(sorted(SPEAKER_ROLES, key=len, reverse=True))
_PREFIX = re.compile(
    r"(?:\[(?P<stamp>[^\]\n]{0,60}?\d[^\]\n]{0,60}?)\][ \t]*)?"
    r"(?:\*\*(?P<bold_in>" + _NAME + r")[ \t]*[:：]\*\*"
    r"|\*\*(?P<bold_out>" + _NAME + r")\*\*[ \t]*[:：]"
    r"|(?P<plain>" + _NAME + r")[ \t]*[:：])"
    r" ?",
    re.IGNORECASE,
)
_HEADING = re.compile(r"#{1,6}[ \t]+(?P<title>\S.*?)[ \t#]*\r?$")


@dataclass(frozen=True)
class _Head:
    """A line that starts a message."""

    line: int
    body_start: int  # offset of the text after the prefix within the line
    speaker: str
    stamp: str | None


def _head(line: str, number: int) -> _Head | None:
    match = _PREFIX.match(line)
    if match is None:
        return None
    speaker = match["bold_in"] or match["bold_out"] or match["plain"]
    return _Head(number, match.end(), speaker, match["stamp"])


def _fence(text: str) -> str | None:
    """The fence marker (``` or ~~~ run) when ``text`` opens or closes a code block."""
    if "```" not in text and "~~~" not in text:
        return None
    stripped = text.lstrip(" ")
    if len(text) - len(stripped) > 3:
        return None
    for char in "`~":
        if stripped.startswith(char * 3):
            marker = stripped[: len(stripped) - len(stripped.lstrip(char))]
            if char == "`" and "`" in stripped[len(marker) :]:
                return None  # inline code such as ```x```, not a fence
            return marker
    return None


def _closer(line: str) -> str | None:
    """The fence run when ``line`` is a bare fence line (can close a code block)."""
    marker = _fence(line)
    if marker is None or line.strip(" \t\r") != marker:
        return None
    return marker


class _Closers:
    """Answers "is there a closing fence for this opener further down?" in O(log n)."""

    def __init__(self, lines: list[str]) -> None:
        self._lines: dict[str, list[int]] = {"`": [], "~": []}
        self._longest: dict[str, list[int]] = {"`": [], "~": []}
        for number, line in enumerate(lines):
            marker = _closer(line)
            if marker is not None:
                self._lines[marker[0]].append(number)
                self._longest[marker[0]].append(len(marker))
        for longest in self._longest.values():  # suffix maxima
            for i in range(len(longest) - 2, -1, -1):
                longest[i] = max(longest[i], longest[i + 1])

    def closes(self, marker: str, after: int) -> bool:
        at = bisect_right(self._lines[marker[0]], after)
        longest = self._longest[marker[0]]
        return at < len(longest) and longest[at] >= len(marker)


def _find_heads(lines: list[str]) -> list[_Head]:
    """The lines that start a message, skipping those inside fenced code blocks.

    An opening fence counts only when a closing fence follows it, so one stray fence
    cannot swallow the rest of the transcript.
    """
    closers = _Closers(lines)
    heads: list[_Head] = []
    fence: str | None = None
    for number, line in enumerate(lines):
        if fence is not None:
            marker = _closer(line)
            if marker is not None and marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        body = line
        head = _head(line, number)
        if head is not None:
            heads.append(head)
            body = line[head.body_start :]
        marker = _fence(body)
        if marker is not None and closers.closes(marker, number):
            fence = marker
    return heads


def _body(lines: list[str]) -> str:
    """``lines`` joined, without leading and trailing blank lines or a final ``\\r``."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    text = "\n".join(lines[start:end])
    return text[:-1] if text.endswith("\r") else text


def _title(preamble: str) -> str | None:
    first = preamble.split("\n", 1)[0]
    match = _HEADING.match(first)
    return match["title"] if match else None


def parse_transcript(text: str) -> tuple[list[Message], str | None]:
    """The messages of a transcript and its title (from a heading before the first turn).

    Raises :class:`FormatError` when no line starts with a known speaker prefix.
    """
    lines = text.split("\n")
    heads = _find_heads(lines)
    if not heads:
        raise FormatError(
            "no line starts with a known speaker prefix (User:, Assistant:, System:, "
            "Human:, AI:, Tool:, 用户：, 助手：, 系统：)"
        )
    messages: list[Message] = []
    title = None
    preamble = _body(lines[: heads[0].line])
    if preamble:
        title = _title(preamble)
        messages.append(Message.of("system", preamble, metadata={"preamble": True}))
    for index, head in enumerate(heads):
        end = heads[index + 1].line if index + 1 < len(heads) else len(lines)
        first = lines[head.line][head.body_start :]
        body = _body([first, *lines[head.line + 1 : end]])
        metadata: dict[str, object] = {"speaker": head.speaker}
        timestamp = None
        if head.stamp is not None:
            raw = head.stamp.strip()
            metadata["raw_timestamp"] = raw
            timestamp = to_iso(raw)
        role = SPEAKER_ROLES[head.speaker.lower()]
        messages.append(
            Message.of(role, body, timestamp=timestamp, metadata=metadata)
            if body
            else Message(role=role, timestamp=timestamp, metadata=metadata)
        )
    return messages, title


def _sniff_text(text: str) -> float:
    roles: set[Role] = set()
    for number, line in enumerate(text.split("\n")):
        head = _head(line, number)
        if head is not None:
            roles.add(SPEAKER_ROLES[head.speaker.lower()])
            if len(roles) >= 2:
                return 0.8
    return 0.4 if roles else 0.0


class TranscriptFormat(ConversationFormat):
    """Plain-text ``User: ...`` / ``Assistant: ...`` transcripts (English and Chinese)."""

    name = "transcript"
    description = "Plain-text transcript with User:/Assistant:/System:/用户：/助手： prefixes"

    def sniff(self, doc: Document) -> float:
        return _sniff_text(doc.text) if doc.kind == "text" else 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        if doc.kind != "text":
            raise FormatError(
                "expected a plain-text transcript (lines starting with User: / Assistant:)",
                where=doc.source,
            )
        try:
            messages, title = parse_transcript(doc.text)
        except FormatError as exc:
            raise FormatError(exc.message, where=doc.source) from None
        return [Conversation(messages, source_format=self.name, title=title)]


FORMATS = (TranscriptFormat(),)
