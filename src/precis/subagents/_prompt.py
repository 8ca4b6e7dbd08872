"""The prompt fragment a snapshot gives one sub-task: relevance and budgeted rendering.

Relevance of an anchor to a task comes from the words (stemmed, stop words left out;
Chinese as character bigrams: precis' duplicate-detection shingles) and the identifiers
(paths, names, URLs) the two share. Anchors are chosen greedily in three tiers: clearly
relevant ones (a shared identifier, or two shared words or more) with every HIGH constraint
(a constraint in force holds for every task, and it is what sub-agents break), then
loosely relevant ones (one shared word), then the other HIGH anchors. Within a tier HIGH
comes first, then MEDIUM, then LOW; within a level the more relevant first, then the
earlier. Chosen anchors are printed grouped by kind (P, C, M, D, I) in conversation order.
Every step is deterministic and the text never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from precis.analysis._shingles import Shingler, normalize
from precis.analysis.importance import identifiers
from precis.subagents._checks import level_rank
from precis.subagents._text import one_line, truncate
from precis.subagents.anchors import ANCHOR_KINDS, ANCHOR_NAMES, AnchorItem

__all__ = ["MIN_SUMMARY_CHARS", "TaskPrompt", "Terms", "render", "terms_of"]

MIN_SUMMARY_CHARS = 24
"""A summary cut shorter than this is left out of the prompt instead."""

_IDENT_WEIGHT = 2
_STRONG_WORDS = 2  # shared words that make an anchor clearly relevant without an identifier


@dataclass(frozen=True)
class Terms:
    """The words and identifiers of a text, for relevance."""

    words: frozenset[str]
    idents: frozenset[str]

    def overlap(self, other: Terms) -> int:
        return len(self.words & other.words) + _IDENT_WEIGHT * len(self.idents & other.idents)


def terms_of(texts: Sequence[str]) -> list[Terms]:
    """:class:`Terms` of each text (one shingler for all of them)."""
    shingler = Shingler()
    return [
        Terms(frozenset(shingler.strings(normalize(t))), frozenset(identifiers(t)))
        for t in texts
    ]


@dataclass(frozen=True)
class TaskPrompt:
    """A rendered prompt fragment: its text, the anchors in it, how many were left out,
    and whether the task or summary line had to be cut."""

    text: str
    items: tuple[AnchorItem, ...]
    omitted: int
    truncated: bool

    def __str__(self) -> str:
        return self.text


def _source(item: AnchorItem) -> str:
    ids = item.fragment_ids
    if ids:
        more = f" +{len(ids) - 1}" if len(ids) > 1 else ""
        return f" ({ids[0]}{more})"
    if item.messages:
        return f" (message {item.messages[0]})"
    return ""


def _line(item: AnchorItem) -> str:
    return f"[{item.kind}] {one_line(item.text)}{_source(item)}"


def _legend(kinds: Sequence[str]) -> str:
    return "Anchors (" + ", ".join(f"{k} {ANCHOR_NAMES[k]}" for k in kinds) + "):"


def _omitted(n: int) -> str:
    return f"(+{n} more anchors not shown)"


def render(
    items: Sequence[AnchorItem],
    item_terms: Sequence[Terms],
    task: str,
    max_chars: int,
    *,
    header: str,
    summary: str,
    task_id: str | None,
) -> TaskPrompt:
    """The prompt fragment for ``task`` within ``max_chars`` (see the module docstring)."""
    label = f"Task {task_id}: " if task_id else "Task: "
    task_line = label + one_line(task)
    if len(task_line) > max_chars:
        return TaskPrompt(truncate(task_line, max_chars), (), len(items), True)
    left = max_chars - len(task_line)
    head = [header] if header and len(header) + 1 <= left else []
    left -= sum(len(h) + 1 for h in head)
    body: list[str] = []
    cut = False
    flat = one_line(summary)
    if flat:
        line = "Summary: " + flat
        if len(line) + 1 <= left:
            body.append(line)
        else:
            room = (left - 1) // 2
            if room - len("Summary: ") >= MIN_SUMMARY_CHARS:
                body.append(truncate(line, room))
                cut = True
        left -= sum(len(b) + 1 for b in body)
    chosen = _choose(items, item_terms, task, left)
    lines = [_line(items[i]) for i in chosen]
    omitted = len(items) - len(chosen)
    if chosen:
        kinds = [k for k in ANCHOR_KINDS if any(items[i].kind == k for i in chosen)]
        body.append(_legend(kinds))
        body.extend(lines)
    if omitted and chosen:
        body.append(_omitted(omitted))
    text = "\n".join([*head, task_line, *body])
    return TaskPrompt(text, tuple(items[i] for i in chosen), omitted, cut)


def _choose(
    items: Sequence[AnchorItem], item_terms: Sequence[Terms], task: str, left: int
) -> list[int]:
    """Indices of the anchors to show, in print order (by kind, then position).

    Each anchor's line costs its length plus a line break; the legend costs what naming
    one more kind adds to it, and room for the "+N more" line is kept at its longest.
    """
    if not items:
        return []
    left -= len(_omitted(len(items))) + 1
    task_terms = terms_of([task])[0]
    eligible: list[tuple[int, int, int, int]] = []  # (tier, level, -score, position)
    for i, (item, terms) in enumerate(zip(items, item_terms)):
        words = len(terms.words & task_terms.words)
        idents = len(terms.idents & task_terms.idents)
        score = words + _IDENT_WEIGHT * idents
        if idents or words >= _STRONG_WORDS or (item.kind == "C" and item.level == "HIGH"):
            tier = 0
        else:
            tier = 1 if words else 2
        if tier < 2 or item.level == "HIGH":
            eligible.append((tier, level_rank(item.level), -score, i))
    eligible.sort()
    chosen: list[int] = []
    kinds: list[str] = []
    legend = 0
    for *_, i in eligible:
        kind = items[i].kind
        new_legend = legend if kind in kinds else len(_legend([*kinds, kind])) + 1
        cost = len(_line(items[i])) + 1 + new_legend - legend
        if cost <= left:
            chosen.append(i)
            left -= cost
            legend = new_legend
            if kind not in kinds:
                kinds.append(kind)
    kind_order = {k: n for n, k in enumerate(ANCHOR_KINDS)}
    return sorted(chosen, key=lambda i: (kind_order[items[i].kind], i))
