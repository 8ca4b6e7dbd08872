"""A possible line of the timeline summary, and what the fill's order needs to know of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from precis.compact.summary import SummaryItem, render_items

__all__ = ["MESSAGE_LOG", "PIN", "Candidate", "constant"]

PIN = 10.0  # a priority this high goes first (the items an earlier summary carried)
# the section of an earlier summary's per-message log ("Conversation log", written by the
# light level of precis's former sections summary): items carried from it are ranked after
# the others, by priority
MESSAGE_LOG = "log"
_SHARED_CITE = 4  # tokens a timeline entry adds to its line's citation (", S12" and a space)


@dataclass
class Candidate:
    """A possible summary item; ``text`` is computed when the fill first looks at it."""

    section: str
    order: int  # fragment position: items are listed in this order
    sources: tuple[str, ...]
    priority: float
    make_text: Callable[[], str]
    type: str | None = None
    level: str | None = None
    date: str | None = None
    speaker: str | None = None  # a timeline line names who said it
    _text: str | None = field(default=None, repr=False)
    _cost: int | None = field(default=None, repr=False)
    _item: SummaryItem | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.make_text()
        return self._text

    def item(self) -> SummaryItem:
        """Its summary item; the same object while the fields it is made of stay the same
        (so that the item's rendered line is worked out once)."""
        text = f"{self.speaker}: {self.text}" if self.speaker else self.text
        made = self._item
        if (made is None or made.text != text or made.sources is not self.sources
                or made.type != self.type or made.level != self.level
                or made.date != self.date):
            made = self._item = SummaryItem(text, self.sources, self.type, self.level,
                                            self.date)
        return made

    def cost(self, count: Callable[[str], int]) -> int:
        """Tokens of its bullet line (with its date), counted once; a timeline entry shares
        its line, bullet and citation brackets with the others of its date."""
        if self._cost is None:
            if self.speaker and self.date:
                self._cost = count(f"{self.speaker}: {self.text}") + _SHARED_CITE
            else:
                self._cost = count(render_items([self.item()])[0]) + 1
        return self._cost


def constant(text: str) -> Callable[[], str]:
    return lambda: text
