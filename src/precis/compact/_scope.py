"""What a summary builder is asked to summarize, and the part every builder shares.

:func:`precis.compact.compress` describes the summary it wants in a :class:`SummaryScope`
(the messages ``[start, end)`` of an analysed conversation, the template, level, language,
token counter, ...) and gives it to the layout's builder (the timeline's or the
handover's), a :class:`ScopedBuilder`: the fragments of the summarized messages (system
messages excluded), the summaries precis wrote before among them and the lines those carry,
and what compress reads of every builder besides its fill (``range``, ``prior``,
``dropped``, ``high_ids``, ``unused``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from precis.analysis import Analysis
from precis.compact._dates import DateFormatter
from precis.compact.levels import LevelPreset
from precis.compact.summary import HEADER
from precis.compact.templates import Template

__all__ = ["ScopedBuilder", "SummaryScope"]

_CITATION_TAIL = re.compile(r"\s*\[(?:S\d+(?:-S\d+)?(?:, )?)+\]\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+")


@dataclass(frozen=True)
class SummaryScope:
    """The summary of ``analysis``'s messages ``[start, end)``: in ``template``'s layout, at
    ``preset``'s level, in ``language``, counted by ``count``, with ``kept`` recent messages
    after it, dated by ``dates``; ``budgeted`` when the output has a token budget."""

    analysis: Analysis
    start: int
    end: int
    template: Template
    preset: LevelPreset
    language: str
    count: Callable[[str], int]
    kept: int
    dates: DateFormatter
    budgeted: bool = False


class ScopedBuilder:
    """What every summary builder knows of its scope (see the module docs)."""

    def __init__(self, scope: SummaryScope) -> None:
        self.scope = scope
        analysis = scope.analysis
        self.analysis = analysis
        self.conv = analysis.conversation
        self.start, self.end = scope.start, scope.end
        self.template = scope.template
        self.language = scope.language
        self.count = scope.count
        self.kept = scope.kept
        frags = analysis.segmentation.fragments
        self.fragments = frags
        self.range = [i for i, f in enumerate(frags)
                      if scope.start <= f.provenance.message < scope.end and f.role != "system"]
        # summaries precis wrote before (a re-compaction), and those in the range
        self.summaries = {m for m, msg in enumerate(self.conv.messages)
                          if msg.role == "user" and HEADER.match(msg.text)}
        self.prior = {frags[i].provenance.message for i in self.range} & self.summaries
        self.dropped: dict[str, list[str]] = {}  # reason -> fragment ids

    def carried_lines(self, titles: dict[str, str]) -> Iterator[tuple[int, str, str]]:
        """``(fragment, section key, text)`` for each line of an earlier summary in the
        range (its bullet and citation cut), in order, under the section whose title
        (``titles``: title -> key) it stood under, else the template's first section."""
        default = self.template.sections[0].key
        for m in sorted(self.prior):
            section = default
            for i in self.range:
                frag = self.fragments[i]
                if frag.provenance.message != m:
                    continue
                if frag.kind == "heading":
                    section = titles.get(frag.text.lstrip("#").strip(), default)
                elif frag.kind == "list_item":
                    text = _CITATION_TAIL.sub("", _BULLET.sub("", frag.text)).strip()
                    if text:
                        yield i, section, text

    def high_ids(self) -> list[str]:
        """The ids of the range's HIGH fragments (what the quality check counts)."""
        a = self.analysis
        return [self.fragments[i].id for i in self.range if a.importance[i].level == "HIGH"]

    def unused(self, cited: set[str]) -> list[str]:
        """Fragments of the range in no item and not dropped for a reason: no room."""
        dropped = {fid for ids in self.dropped.values() for fid in ids}
        return [self.fragments[i].id for i in self.range
                if self.fragments[i].id not in cited
                and self.fragments[i].id not in dropped]
