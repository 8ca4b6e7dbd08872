"""Fitting a handover into its room: entries by priority, the critical ones first.

Each section builder proposes :class:`Entry` lines, each with a few renderings from the
fullest to the shortest. The fit (:func:`fit`) takes the critical entries first, then
spends the room where it says the most: each step takes another line or makes a taken one
fuller, whichever adds the most (by priority) per token.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from precis.compact.summary import SummaryItem, cite

__all__ = ["Entry", "fit"]

_LINE_FRAME = 1  # the line break between lines
_LINE_WORTH = 8  # units a line is worth by being there (a file, an error, a task named)
_FULLER = 0.75  # each step that makes a line fuller is worth this much of the one before


@dataclass
class Entry:
    """A candidate line of section ``section``: ``variants`` (fullest first) of its text,
    the fragment ids it cites, where it stands in its section (``order``) and how much it
    matters (``priority``; ``critical`` entries go before all others). ``why`` tells
    ``precis explain`` why the line is there."""

    section: str
    order: float
    priority: float
    variants: tuple[str, ...]
    sources: tuple[str, ...]
    critical: bool = False
    kind: str | None = None
    why: str = ""
    # the sources a rendering cites (of ``sources``, those that say what it shows); set by
    # the builder, all of ``sources`` when None
    narrow: Callable[[str, tuple[str, ...]], tuple[str, ...]] | None = None
    # a critical entry is first taken at this rendering when it fits (else its shortest)
    least: int | None = None
    # tokens the summary adds around the line when it renders it (its date, "[5 May 2024] ")
    frame: int = 0

    def cited(self, variant: int) -> tuple[str, ...]:
        if self.narrow is None:
            return self.sources
        memo: dict[int, tuple[str, ...]] = self.__dict__.setdefault("_cited", {})
        if variant not in memo:
            memo[variant] = self.narrow(self.variants[variant], self.sources)
        return memo[variant]

    def line(self, variant: int) -> str:
        sources = self.cited(variant)
        citation = cite(sources) if sources else ""
        text = self.variants[variant]
        return f"- {text} {citation}" if citation else f"- {text}"

    def item(self, variant: int) -> SummaryItem:
        return SummaryItem(text=self.variants[variant], sources=self.cited(variant),
                           type=self.kind, why=self.why or None)


_UNIT = re.compile(r"[^\W\d_][\w'-]{2,}|[\u4e00-\u9fff]{2}|\S*[\d/._`]\S*")


def units(text: str) -> frozenset[str]:
    """What a line says, as a set: its words (three letters and more, Chinese character
    pairs) and its tokens with digits, paths and code (worth as much as a word each)."""
    return frozenset(m.lower() for m in _UNIT.findall(text))


def fit(entries: Sequence[Entry], titles: dict[str, str], room: int,
        count: Callable[[str], int]) -> dict[int, int]:
    """Which entries to keep and at which rendering: ``{entry index: variant index}``.

    The critical entries are taken first, by priority, while they fit: at the rendering
    they ask for (``least``) when it fits, else at their shortest. Then one greedy: every
    step either takes another entry at its shortest rendering or makes a taken one one
    step fuller, whichever is worth the most per token (its priority squared times what
    the step adds to the summary: words and values not shown yet, over the tokens it
    costs), while it fits."""
    memo: dict[tuple[int, int], int] = {}

    def cost(k: int, v: int) -> int:
        key = (k, v)
        if key not in memo:
            memo[key] = count(entries[k].line(v)) + _LINE_FRAME + entries[k].frame
        return memo[key]

    said: dict[tuple[int, int], frozenset[str]] = {}

    def says(k: int, v: int) -> frozenset[str]:
        key = (k, v)
        if key not in said:
            said[key] = units(entries[k].variants[v])
        return said[key]

    header = {key: count(f"## {title}") + 2 for key, title in titles.items()}
    chosen: dict[int, int] = {}
    opened: set[str] = set()
    left = room
    shown: set[str] = set()

    def take(k: int, v: int, need: int) -> None:
        nonlocal left
        chosen[k] = v
        left -= need
        opened.add(entries[k].section)
        shown.update(says(k, v))

    ranked = sorted(range(len(entries)), key=lambda k: (-entries[k].priority, entries[k].order))
    for k in ranked:
        e = entries[k]
        if e.critical and e.variants:
            head = 0 if e.section in opened else header.get(e.section, 4)
            shortest = len(e.variants) - 1
            v = shortest if e.least is None else min(e.least, shortest)
            if cost(k, v) + head > left:
                v = shortest
            need = cost(k, v) + head
            if need <= left:
                take(k, v, need)

    def worth(k: int, v: int, need: int, before: frozenset[str] | None = None) -> float:
        """What a move adds per token: a new line is worth its existence (``_LINE_WORTH``
        units) and what it says; each step that makes a line fuller is worth a little
        less than the one before it (``_FULLER``)."""
        new: float
        if before is None:
            new = len(says(k, v) - shown) + _LINE_WORTH
        else:
            steps = len(entries[k].variants) - 1 - v
            new = (len(says(k, v) - before - shown) + 1) * _FULLER ** steps
        return entries[k].priority ** 2 * new / max(1, need)

    heap: list[tuple[float, int, int, int]] = []  # (-worth, entry, variant, tokens needed)
    for k, e in enumerate(entries):
        if not e.variants:
            continue
        if k in chosen:
            v = chosen[k]
            if v > 0:
                need = cost(k, v - 1) - cost(k, v)
                heapq.heappush(heap, (-worth(k, v - 1, need, says(k, v)), k, v - 1, need))
        else:
            v = len(e.variants) - 1
            need = cost(k, v) + (0 if e.section in opened else header.get(e.section, 4))
            heapq.heappush(heap, (-worth(k, v, need), k, v, need))
    while heap and left > 0:
        value, k, v, need = heapq.heappop(heap)
        current = chosen.get(k)
        if (current is None and v != len(entries[k].variants) - 1) or \
                (current is not None and v != current - 1):
            continue  # a move made stale by an earlier one
        if current is None and entries[k].section not in opened:
            need = cost(k, v) + header.get(entries[k].section, 4)
        fresh = -worth(k, v, need, says(k, current) if current is not None else None)
        if fresh > value + 1e-9 and heap and fresh > heap[0][0]:
            heapq.heappush(heap, (fresh, k, v, need))  # worth less now: look again later
            continue
        if need > left:
            continue
        take(k, v, need)
        if v > 0:
            step = cost(k, v - 1) - cost(k, v)
            heapq.heappush(heap, (-worth(k, v - 1, step, says(k, v)), k, v - 1, step))
    return chosen
