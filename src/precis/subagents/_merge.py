"""Merging the same finding reported by several sub-tasks into one entry.

Duplicates are found by precis' consolidation (:func:`precis.analysis.consolidate.
find_duplicates`): the same normalised text, or near-duplicate wording whose numbers and
names agree ("timeout is 5 s" and "timeout is 60 s" never merge). The merged entry shows
the fullest wording (precis' ``most_complete`` member: most numbers and names, then the
longest), takes the highest level of its copies, and names every task and source that
reported it; it sits where its first copy was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from precis.analysis.consolidate import find_duplicates
from precis.analysis.model import Level
from precis.segment import Fragment, Provenance, detect_language
from precis.subagents._checks import LEVELS, level_rank

__all__ = ["Entry", "MergedMark", "merge_marks"]


class Entry(NamedTuple):
    """One reported finding before merging."""

    task_id: str
    text: str
    level: Level
    category: str
    source: str


@dataclass(frozen=True)
class MergedMark:
    """A finding as aggregated: text, level, category, and who reported it (in order)."""

    text: str
    level: Level
    category: str
    sources: tuple[str, ...]
    tasks: tuple[str, ...]
    count: int = 1


def merge_marks(entries: Sequence[Entry], *, merge: bool = True) -> list[MergedMark]:
    """One :class:`MergedMark` per distinct finding, in order of first report (``merge``
    false: one per entry)."""
    groups: list[list[int]] = [[i] for i in range(len(entries))]
    fullest = list(range(len(entries)))
    if merge and len(entries) > 1:
        fragments = [
            Fragment(f"S{i + 1}", "sentence", e.text, "assistant", detect_language(e.text),
                     Provenance(0, i, 0, 0, len(e.text)))
            for i, e in enumerate(entries)
        ]
        index = {f.id: i for i, f in enumerate(fragments)}
        for group in find_duplicates(fragments):
            members = sorted(index[m] for m in group.members)
            groups[members[0]] = members
            for m in members[1:]:
                groups[m] = []
            fullest[members[0]] = index[group.most_complete or group.kept]
    out: list[MergedMark] = []
    for first, members in enumerate(groups):
        if not members:
            continue
        shown = entries[fullest[first]]
        out.append(MergedMark(
            text=shown.text,
            level=LEVELS[min(level_rank(entries[i].level) for i in members)],
            category=shown.category,
            sources=tuple(dict.fromkeys(entries[i].source for i in members
                                        if entries[i].source)),
            tasks=tuple(dict.fromkeys(entries[i].task_id for i in members)),
            count=len(members),
        ))
    return out
