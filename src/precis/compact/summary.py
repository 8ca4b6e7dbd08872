"""The structured summary: a short overview and sections of items, every item citing the
fragments it came from; and its rendering as the text of the summary message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from precis.compact._labels import label
from precis.events._requests import SUMMARY_HEADER

__all__ = [
    "HEADER",
    "Summary",
    "SummaryItem",
    "SummarySection",
    "cite",
]

# The first line of every summary message; a later compaction recognises its own summary by
# it (so does the events layer: an earlier summary is no request of the user's).
HEADER = SUMMARY_HEADER


def cite(sources: Iterable[str]) -> str:
    """``[S3, S5, S9-S12]``: fragment ids in order, runs of consecutive ids as ranges."""
    if type(sources) is tuple and len(sources) == 1:  # the most common: one fragment
        only: str = sources[0]
        return f"[S{int(only[1:])}]" if only[:1] == "S" and only[1:].isdigit() else f"[{only}]"
    numbers = sorted({int(s[1:]) for s in sources if s[:1] == "S" and s[1:].isdigit()})
    others = sorted({s for s in sources if not (s[:1] == "S" and s[1:].isdigit())})
    parts: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"S{numbers[i]}-S{numbers[j]}")
            i = j + 1
        else:
            parts.append(f"S{numbers[i]}")
            i += 1
    parts.extend(others)
    return "[" + ", ".join(parts) + "]" if parts else ""


@dataclass(frozen=True)
class SummaryItem:
    """One line of the summary and the fragment ids it came from."""

    text: str
    sources: tuple[str, ...]
    type: str | None = None
    level: str | None = None
    date: str | None = None  # calendar date of its source message, when the session spans days
    why: str | None = None  # why the line is there (shown by ``precis explain``)

    def render(self) -> str:
        """The text with its citation; worked out once (a summary is rendered and counted
        several times while it is fitted), as the item cannot change: its fields are
        frozen, its text is a string and its sources a tuple of strings (sources given as
        a list, which could still change, are cited anew each time)."""
        line: str | None = self.__dict__.get("_line")
        if line is None:
            citation = cite(self.sources)
            # a text of several lines (a code block under it) is cited on its first line
            first, sep, rest = self.text.partition("\n")
            line = f"{first} {citation}{sep}{rest}" if citation else self.text
            if type(self.sources) is tuple:
                self.__dict__["_line"] = line  # not a field: no effect on ==, hash, repr
        return line

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "sources": list(self.sources)}
        if self.type:
            out["type"] = self.type
        if self.level:
            out["level"] = self.level
        if self.date:
            out["date"] = self.date
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True)
class SummarySection:
    key: str
    title: str
    items: tuple[SummaryItem, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "title": self.title,
                "items": [item.to_dict() for item in self.items]}


@dataclass(frozen=True)
class Summary:
    """What the older messages said: ``short`` (a few sentences) and the detailed sections.

    ``covers`` is the range of original message indices summarized (first, last), and
    ``fragments`` the first and last fragment id in it. ``prose`` is a model's rewrite of
    the sections (``compress(..., llm=...)``): when set, it is the text under the header
    and the sections are what it was written from.
    """

    language: str
    template: str
    short: tuple[SummaryItem, ...]
    sections: tuple[SummarySection, ...]
    covers: tuple[int, int]
    fragments: tuple[str, str]
    kept: int = 0  # messages that follow the summary verbatim
    extra: dict[str, Any] = field(default_factory=dict)
    prose: str | None = None

    @property
    def items(self) -> list[SummaryItem]:
        return [item for section in self.sections for item in section.items]

    def sources(self) -> set[str]:
        """Every fragment id the summary cites."""
        out = {s for item in self.short for s in item.sources}
        out.update(s for item in self.items for s in item.sources)
        return out

    def header(self) -> str:
        """``[precis summary of messages 2-21; the 4 most recent messages follow verbatim]``
        (the fragment ids the items cite are in ``fragments``; the line is short, as a
        small summary has little room)."""
        lang = self.language
        kept = (label(lang, "header_kept", n=self.kept) if self.kept
                else label(lang, "header_none"))
        return label(lang, "header", first=self.covers[0] + 1, last=self.covers[1] + 1,
                     kept=kept)

    def short_text(self) -> str:
        sep = label(self.language, "sep")
        return sep.join(item.render() for item in self.short)

    def render(self) -> str:
        """The summary message's text: header, short overview, then ``## Section`` lists (or
        the header and the prose rewrite, when there is one)."""
        if self.prose is not None:
            return f"{self.header()}\n{self.prose}"
        lines = [self.header()]
        if self.short:
            colon = "：" if self.language == "zh" else ": "
            lines.append(label(self.language, "short") + colon + self.short_text())
        for section in self.sections:
            if not section.items:
                continue
            lines.append("")
            lines.append(f"## {section.title}")
            lines.extend(render_items(section.items))
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "template": self.template,
            "covers_messages": list(self.covers),
            "covers_fragments": list(self.fragments),
            "short": [item.to_dict() for item in self.short],
            "short_text": self.short_text(),
            "sections": [s.to_dict() for s in self.sections if s.items],
            "detailed": self.render(),
        }


def render_items(items: Iterable[SummaryItem]) -> list[str]:
    """Bullet lines; a date line ``[8 May 2023]`` precedes items whose date changes."""
    lines: list[str] = []
    date: str | None = None
    for item in items:
        if item.date and item.date != date:
            date = item.date
            lines.append(f"- [{date}] {item.render()}")
        else:
            lines.append(f"- {item.render()}")
    return lines
