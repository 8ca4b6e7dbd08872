"""Fitting a handover into its room: entries by priority, the critical ones first.

Each section builder proposes :class:`Entry` lines, each with a few renderings from the
fullest to the shortest. The fit (:func:`fit`) takes entries at their shortest rendering in
order of priority, critical entries before all others, and spends what is left making the
taken entries fuller, one step at a time in the same order, so a small room holds many short
lines before it holds a few long ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from precis.compact.summary import SummaryItem, cite

__all__ = ["Entry", "fit"]

_LINE_FRAME = 1  # the line break between lines
_MINOR = 4.0  # entries of a lower priority come in only after the others are fuller


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


def fit(entries: Sequence[Entry], titles: dict[str, str], room: int,
        count: Callable[[str], int]) -> dict[int, int]:
    """Which entries to keep and at which rendering: ``{entry index: variant index}``.

    The critical entries are taken first at their shortest rendering, then the others of
    some priority (:data:`_MINOR`), by priority, while they fit; every entry taken is made
    fuller, one step at a time in the order of priority, up to its middle rendering; then
    the minor entries come in at their shortest; what is left at the end makes the entries
    taken fullest."""
    ranked = sorted(range(len(entries)),
                    key=lambda k: (not entries[k].critical, -entries[k].priority,
                                   entries[k].order))
    memo: dict[tuple[int, int], int] = {}

    def cost(k: int, v: int) -> int:
        key = (k, v)
        if key not in memo:
            memo[key] = count(entries[k].line(v)) + _LINE_FRAME
        return memo[key]

    header = {key: count(f"## {title}") + 2 for key, title in titles.items()}
    chosen: dict[int, int] = {}
    opened: set[str] = set()
    left = room

    def upgrade(partial: bool) -> None:
        nonlocal left
        changed = True
        while changed and left > 0:
            changed = False
            for k in ranked:
                v = chosen.get(k)
                floor = (len(entries[k].variants) - 1) // 2 if partial else 0
                if v is None or v <= floor:
                    continue
                extra = cost(k, v - 1) - cost(k, v)
                if extra <= left:
                    chosen[k] = v - 1
                    left -= extra
                    changed = True

    def add(critical: bool, floor: float = float("-inf")) -> None:
        nonlocal left
        for k in ranked:
            e = entries[k]
            if e.critical != critical or not e.variants or k in chosen or e.priority < floor:
                continue
            v = len(e.variants) - 1
            need = cost(k, v) + (0 if e.section in opened else header.get(e.section, 4))
            if need <= left:
                chosen[k] = v
                left -= need
                opened.add(e.section)

    add(critical=True)
    add(critical=False, floor=_MINOR)
    upgrade(partial=True)
    add(critical=False)
    upgrade(partial=False)
    return chosen
