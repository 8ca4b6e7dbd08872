"""What the section builders share: the events of the summarized messages, the analysis, and
small helpers to quote the conversation's own words."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from precis.analysis import Analysis
from precis.compact._dates import DateFormatter
from precis.compact.handover._condense import condense, join, sentences
from precis.events import (
    Action,
    Failure,
    FileRecord,
    Request,
    SessionEvents,
    TaskItem,
    failures,
    file_ledger,
    task_list,
)
from precis.model import Conversation

__all__ = ["Story", "clip", "output_of", "plain", "quote"]

_SPACE = re.compile(r"\s+")


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit * 0.6:
        cut = limit - 1
    return text[:cut].rstrip(" ,;:，；：") + "…"


_NARRATION = re.compile(
    r"^(?:(?:ok(?:ay)?|good|great|perfect|now|first|next|then|also|finally)[,.!:]?\s+)*"
    r"(?:let me|let's|i'll|i will|i need to|i'm going to|we'll|we need to)\s+(?:also\s+)?",
    re.IGNORECASE)


def plain(text: str) -> str:
    """An assistant's words without the narration they open with ("Now let me update
    X" -> "update X")."""
    text = _SPACE.sub(" ", text).strip()
    cut = _NARRATION.sub("", text)
    return cut[:1].upper() + cut[1:] if cut and cut != text else text


def quote(text: str, limit: int, language: str = "en", lead: float = 0.0) -> str:
    """``text`` quoted: whole when short, else condensed (:func:`condense`) to ``limit``."""
    body = condense(text, limit, language, lead)
    return f"“{body}”" if language == "zh" else f'"{body}"'


@dataclass
class Story:
    """The summarized part of a conversation (messages ``[start, end)``) and its events."""

    conv: Conversation
    analysis: Analysis
    events: SessionEvents
    start: int
    end: int
    language: str
    dates: DateFormatter
    range: list[int] = field(default_factory=list)  # indexes of the fragments in range

    @property
    def zh(self) -> bool:
        return self.language == "zh"

    @cached_property
    def requests(self) -> list[Request]:
        return [r for r in self.events.requests if self.start <= r.message < self.end]

    @cached_property
    def later_requests(self) -> list[Request]:
        """The user's messages after the summarized range (kept verbatim)."""
        return [r for r in self.events.requests if r.message >= self.end]

    @cached_property
    def actions(self) -> list[Action]:
        return [a for a in self.events.actions if self.start <= a.message < self.end]

    @cached_property
    def _scoped(self) -> SessionEvents:
        return SessionEvents(kind=self.events.kind, requests=self.requests,
                             injected=[j for j in self.events.injected
                                       if self.start <= j.message < self.end],
                             actions=self.actions, root=self.events.root)

    @cached_property
    def ledger(self) -> list[FileRecord]:
        return file_ledger(self._scoped)

    @cached_property
    def failures(self) -> list[Failure]:
        return failures(self._scoped)

    @cached_property
    def tasks(self) -> tuple[tuple[TaskItem, ...], tuple[TaskItem, ...]]:
        return task_list(self._scoped)

    @cached_property
    def fragments_of(self) -> dict[int, list[str]]:
        """Message index -> ids of its fragments in the range."""
        out: dict[int, list[str]] = {}
        frags = self.analysis.segmentation.fragments
        for i in self.range:
            out.setdefault(frags[i].provenance.message, []).append(frags[i].id)
        return out

    def part_fragments(self, message: int, part: int) -> tuple[str, ...]:
        """The ids of the fragments of one part of ``message``."""
        frags = self.analysis.segmentation.fragments
        return tuple(fid for fid in self.fragments_of.get(message, ())
                     if frags[self.index[fid]].provenance.part == part)

    def text_fragments(self, message: int) -> tuple[str, ...]:
        """The ids of the spoken fragments (not tool calls / results) of ``message``."""
        frags = self.analysis.segmentation.fragments
        index = self.index
        return tuple(fid for fid in self.fragments_of.get(message, ())
                     if frags[index[fid]].kind not in ("tool_call", "tool_result"))

    @cached_property
    def index(self) -> dict[str, int]:
        return {f.id: i for i, f in enumerate(self.analysis.segmentation.fragments)}

    @cached_property
    def boilerplate(self) -> frozenset[str]:
        """Sentences a speaker repeats in three or more of their messages (a signature, a
        phrase pasted into every message, an assistant's stock opening): they say nothing
        new after the first."""
        seen: dict[tuple[str, str], set[int]] = {}
        for m, msg in enumerate(self.conv.messages):
            if msg.role in ("user", "assistant") and msg.text:
                for sentence in sentences(msg.text):
                    seen.setdefault((msg.role, sentence), set()).add(m)
        return frozenset(s for (_, s), where in seen.items() if len(where) >= 3)

    def own_words(self, text: str) -> str:
        """``text`` without the user's boilerplate sentences (itself when it is nothing
        else)."""
        if not self.boilerplate:
            return text
        kept = [s for s in sentences(text) if s not in self.boilerplate]
        return join(kept, self.language) if kept else text

    def chars(self, limit: int) -> int:
        """``limit`` characters of English as characters of this language (a Chinese
        character carries about as much as two English ones, and costs as many tokens as
        four)."""
        return max(12, int(limit * 0.5)) if self.zh else limit

    def quote(self, text: str, limit: int, lead: float = 0.0) -> str:
        return quote(text, self.chars(limit), self.language, lead)

    def core(self, text: str, limit: int) -> str:
        return condense(text, self.chars(limit), self.language)

    def where(self, message: int) -> str:
        """``msg 12`` (1-based, as the summary's header counts)."""
        return f"消息 {message + 1}" if self.zh else f"msg {message + 1}"


def output_of(conv: Conversation, action: Action) -> str:
    """The text of ``action``'s result ("" when it has none)."""
    if action.result_message is None:
        return ""
    from precis.model import ToolResult

    for part in conv.messages[action.result_message].parts:
        if isinstance(part, ToolResult) and part.call_id == action.call_id:
            return part.content
    return ""
