"""Context for parallel sub-agents (seed 003): snapshot, importance marks, aggregation.

* :class:`ContextSnapshot`: an immutable view of the parent conversation, safe to share
  between threads, with anchors P (problem), C (constraint), M (pattern), D (decision) and
  I (interface); :meth:`ContextSnapshot.prompt_for` gives each sub-task a prompt fragment
  with the anchors relevant to it, within a character budget.
* :func:`mark` / :class:`Mark`: a finding with its level (HIGH / MEDIUM / LOW), category
  and source; :func:`compress_by_importance` keeps the most important that fit a budget.
* :class:`ResultAggregator`: collects :class:`TaskResult` from many threads and reports
  them in a fixed order: :meth:`~ResultAggregator.normal` (2000 characters),
  :meth:`~ResultAggregator.compact` (500) and :meth:`~ResultAggregator.high_only`.

Not imported by ``import precis``: ``from precis.subagents import ContextSnapshot``.
"""

from __future__ import annotations

from precis.subagents._checks import LEVELS
from precis.subagents.aggregator import (
    COMPACT_CHARS,
    NORMAL_CHARS,
    MergedMark,
    ResultAggregator,
)
from precis.subagents.anchors import (
    ANCHOR_KINDS,
    ANCHOR_NAMES,
    TYPE_ANCHORS,
    AnchorItem,
    AnchorKind,
    anchors_from_analysis,
)
from precis.subagents.compress import Compressed, compress_by_importance
from precis.subagents.marks import Mark, mark
from precis.subagents.results import STATUSES, Status, TaskResult
from precis.subagents.snapshot import DEFAULT_PROMPT_CHARS, ContextSnapshot, TaskPrompt

__all__ = [
    "ANCHOR_KINDS",
    "ANCHOR_NAMES",
    "COMPACT_CHARS",
    "DEFAULT_PROMPT_CHARS",
    "LEVELS",
    "NORMAL_CHARS",
    "STATUSES",
    "TYPE_ANCHORS",
    "AnchorItem",
    "AnchorKind",
    "Compressed",
    "ContextSnapshot",
    "Mark",
    "MergedMark",
    "ResultAggregator",
    "Status",
    "TaskPrompt",
    "TaskResult",
    "anchors_from_analysis",
    "compress_by_importance",
    "mark",
]
