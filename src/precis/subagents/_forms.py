"""Rendering aggregated sub-task results into the normal and compact forms.

Both forms are built the same way: a header that always counts every task by status (so a
failure is never lost, even when its line does not fit), then lines chosen by
:func:`~precis.subagents.compress.compress_by_importance` with each line's full rendered
length as its cost, so the text fits the budget exactly as printed. Failed, timed-out and
pending tasks are HIGH lines; a successful task's summary line is MEDIUM. A line saying
what was left out is reserved room at its longest, so it always fits too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from precis.subagents._checks import LEVELS
from precis.subagents._merge import MergedMark
from precis.subagents._text import one_line, truncate
from precis.subagents.compress import compress_by_importance
from precis.subagents.marks import Mark
from precis.subagents.results import TaskResult

__all__ = ["COMPACT_LINE_CHARS", "NORMAL_LINE_CHARS", "compact_form", "normal_form"]

NORMAL_LINE_CHARS = 240
"""A task's own text is cut to this in the normal form (its findings are separate lines)."""
COMPACT_LINE_CHARS = 100
"""A failed task's reason is cut to this in the compact form."""

_STATUS = "_status"  # category of the task lines among the candidate lines


Slots = Sequence[tuple[str, TaskResult | None]]
"""Every task in output order with its result (``None``: declared but not reported)."""


def _status(result: TaskResult | None) -> str:
    return "pending" if result is None else result.status


def _counts(slots: Slots) -> str:
    by_status = Counter(_status(r) for _, r in slots)
    return ", ".join(f"{by_status[s]} {s}" for s in ("ok", "failed", "timeout", "pending")
                     if by_status[s])


def _task_line(result: TaskResult, limit: int) -> Mark:
    label = result.status if result.ok else result.status.upper()
    timing = f" {result.elapsed:.2f}s" if result.elapsed is not None else ""
    agent = f" [{result.agent}]" if result.agent else ""
    said = result.text if result.ok else (result.error or result.text)
    said = truncate(one_line(said), limit)
    line = f"- {result.task_id} {label}{timing}{agent}" + (f": {said}" if said else "")
    return Mark(line, "MEDIUM" if result.ok else "HIGH", _STATUS)


def _pending_line(task_id: str) -> Mark:
    return Mark(f"- {task_id} PENDING: no result yet", "HIGH", _STATUS)


def _finding_line(item: MergedMark, *, with_category: bool) -> Mark:
    category = f"[{item.category}] " if with_category and item.category else ""
    line = f"- {category}{one_line(item.text)} ({', '.join(item.tasks)})"
    return Mark(line, item.level, item.category)


def _left_out(dropped: Sequence[Mark]) -> str:
    counts = Counter(m.level for m in dropped)
    by_level = ", ".join(f"{counts[lv]} {lv}" for lv in LEVELS if counts[lv])
    noun = "line" if len(dropped) == 1 else "lines"
    return f"(left out for length: {len(dropped)} {noun}, {by_level})"


def _fit(header: str, lines: list[Mark], max_chars: int, *, headings: bool) -> str:
    """``header`` plus the lines that fit, grouped (task lines, then by level)."""
    if len(header) > max_chars:
        return truncate(header, max_chars)
    room = max_chars - len(header)
    finding_levels = [lv for lv in LEVELS
                      if any(m.level == lv and m.category != _STATUS for m in lines)]
    if headings:
        room -= sum(len(f"### {lv}") + 1 for lv in finding_levels)
    if lines:
        room -= len(_left_out(lines)) + 1  # the longest it can be
    if room < 0:
        return header
    chosen = compress_by_importance(lines, room, cost=lambda m: len(m.text) + 1)
    out = [header]
    out.extend(m.text for m in chosen.kept if m.category == _STATUS)
    for lv in LEVELS:
        found = [m.text for m in chosen.kept if m.category != _STATUS and m.level == lv]
        if found:
            if headings:
                out.append(f"### {lv}")
            out.extend(found)
    if chosen.dropped:
        out.append(_left_out(chosen.dropped))
    return "\n".join(out)


def normal_form(slots: Slots, findings: Sequence[MergedMark], max_chars: int) -> str:
    """Every task's status line, then all findings grouped by level, within ``max_chars``."""
    if not slots:
        return truncate("## Sub-task results: no tasks", max_chars)
    header = f"## Sub-task results: {len(slots)} tasks ({_counts(slots)})"
    lines = [_pending_line(t) if r is None else _task_line(r, NORMAL_LINE_CHARS)
             for t, r in slots]
    lines += [_finding_line(f, with_category=True) for f in findings]
    return _fit(header, lines, max_chars, headings=True)


def compact_form(slots: Slots, findings: Sequence[MergedMark], max_chars: int) -> str:
    """A status line naming the tasks that did not succeed, then HIGH findings only."""
    if not slots:
        return truncate("no tasks", max_chars)
    bad = [f"{s}: {', '.join(t for t, r in slots if _status(r) == s)}"
           for s in ("failed", "timeout", "pending") if any(_status(r) == s for _, r in slots)]
    header = f"{len(slots)} tasks ({_counts(slots)})" + (f"; {'; '.join(bad)}" if bad else "")
    lines = [_task_line(r, COMPACT_LINE_CHARS) for _, r in slots if r is not None and not r.ok]
    lines += [_finding_line(f, with_category=False) for f in findings if f.level == "HIGH"]
    return _fit(header, lines, max_chars, headings=False)
