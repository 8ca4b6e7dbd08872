"""``compress_by_importance``: keep the most important marks that fit a character budget.

Greedy, as in seed 003, with its faults fixed:

* HIGH items first, then MEDIUM, then LOW; within a level, in the order given. An item
  that does not fit is skipped and the next, smaller one may still fit (the seed stopped
  at the first HIGH item that did not fit, losing every item after it).
* The output keeps the items' original order (the seed sorted it by level, scrambling the
  sub-agents' narrative).
* Items are kept whole. Only a HIGH item longer than the whole budget on its own is cut,
  at a word boundary, with an ellipsis that counts toward the budget (the seed cut
  mid-word and added "..." past the limit); the result lists it in ``truncated``.
* What was dropped is returned, not silently lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from precis.errors import InputError
from precis.subagents._checks import LEVELS, check_max_chars
from precis.subagents._text import truncate
from precis.subagents.marks import Mark

__all__ = ["MIN_PIECE_CHARS", "Compressed", "compress_by_importance"]

MIN_PIECE_CHARS = 16
"""A cut HIGH item keeps at least this many characters of text, or is dropped."""


@dataclass(frozen=True)
class Compressed:
    """What :func:`compress_by_importance` kept and dropped, each in the original order.

    ``kept`` holds cut items in their cut form; ``truncated`` holds the originals of those
    (each also in ``kept``, shortened). ``used`` is the cost of ``kept``, at most
    ``max_chars``.
    """

    kept: tuple[Mark, ...]
    dropped: tuple[Mark, ...]
    truncated: tuple[Mark, ...]
    used: int
    max_chars: int

    @property
    def note(self) -> str:
        """One line on what was left out or cut; empty when everything fitted whole."""
        parts: list[str] = []
        if self.dropped:
            counts = Counter(m.level for m in self.dropped)
            by_level = ", ".join(f"{counts[lv]} {lv}" for lv in LEVELS if counts[lv])
            noun = "item" if len(self.dropped) == 1 else "items"
            parts.append(f"dropped {len(self.dropped)} {noun} ({by_level})")
        if self.truncated:
            noun = "item" if len(self.truncated) == 1 else "items"
            parts.append(
                f"cut {len(self.truncated)} HIGH {noun} longer than {self.max_chars} chars"
            )
        return "; ".join(parts)


def _text_cost(item: Mark) -> int:
    return len(item.text)


def compress_by_importance(
    items: Iterable[Mark],
    max_chars: int,
    *,
    cost: Callable[[Mark], int] | None = None,
) -> Compressed:
    """The marks that fit ``max_chars``, HIGH first, in their original order.

    ``cost`` gives what an item takes of the budget; by default the length of its text.
    A renderer that adds a prefix per line passes its line length, so the rendered text
    fits. A cut item's cost is re-measured after the cut.
    """
    budget = check_max_chars(max_chars)
    marks = list(items)
    for i, item in enumerate(marks):
        if not isinstance(item, Mark):
            raise InputError(
                f"expected a Mark, got {type(item).__name__}", where=f"items[{i}]"
            )
    measure = cost or _text_cost
    costs = [measure(m) for m in marks]
    for i, c in enumerate(costs):
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise InputError(f"cost must be a whole number >= 0, got {c!r}",
                             where=f"cost(items[{i}])")
    kept: dict[int, Mark] = {}
    cut: list[int] = []
    left = budget
    for level in LEVELS:
        for i, item in enumerate(marks):
            if item.level == level and costs[i] <= left:
                kept[i] = item
                left -= costs[i]
        if level == "HIGH":
            left = _cut_oversized(marks, costs, budget, left, measure, kept, cut)
    return Compressed(
        kept=tuple(kept[i] for i in sorted(kept)),
        dropped=tuple(m for i, m in enumerate(marks) if i not in kept),
        truncated=tuple(marks[i] for i in cut),
        used=budget - left,
        max_chars=budget,
    )


def _cut_oversized(
    marks: list[Mark],
    costs: list[int],
    budget: int,
    left: int,
    measure: Callable[[Mark], int],
    kept: dict[int, Mark],
    cut: list[int],
) -> int:
    """Cut the HIGH items that exceed the whole budget alone into the room left, sharing it
    evenly between them in order; returns the room left after them."""
    oversized = [i for i, m in enumerate(marks) if m.level == "HIGH" and costs[i] > budget]
    for n, i in enumerate(oversized):
        share = left // (len(oversized) - n)
        overhead = costs[i] - len(marks[i].text)  # what the cost adds to the text
        room = share - overhead
        if room < MIN_PIECE_CHARS:
            continue
        piece = replace(marks[i], text=truncate(marks[i].text, room))
        piece_cost = measure(piece)
        if piece_cost > share:  # a cost that is not text length plus a constant
            continue
        kept[i] = piece
        cut.append(i)
        left -= piece_cost
    return left
