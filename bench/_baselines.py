"""Baselines for the compression benchmarks: output texts guaranteed to fit a token budget.

All of them work on the same rendering (``_compress_common.render``: one ``speaker: text``
line per message, a ``[8 May 2023]`` header whenever the date changes, headers charged to
the budget) and count with the same counter as precis (``counter.count(text)``). The system
prompt is kept first when it fits. Every output is counted exactly before it is returned,
so ``counter.count(output) <= budget`` always holds.

- ``keep_recent``: the most recent whole messages that fit (a contiguous tail).
- ``uniform``: the largest number of messages, at evenly spaced positions across the
  conversation, that fits.
- ``textrank``: sumy's ``TextRankSummarizer`` ranks the sentences of the messages; the best
  ones are kept, in conversation order, while they fit. Sentences and words come from
  :class:`SentenceSplitter` (a regex splitter; sumy's default needs NLTK's punkt data).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from precis.model import Conversation, Message
from precis.tokens import TokenCounter

try:  # run as a script (bench/ on sys.path) or imported as bench._baselines
    from _compress_common import STOPWORDS, Line, message_lines, render
except ImportError:  # pragma: no cover
    from bench._compress_common import STOPWORDS, Line, message_lines, render

__all__ = [
    "BASELINES",
    "BUDGET_RULES",
    "Rendering",
    "SentenceSplitter",
    "keep_recent",
    "textrank",
    "uniform",
]


BUDGET_RULES = ("all", "rest")


class SentenceSplitter:
    """Sentences and words for sumy, without NLTK data (sumy accepts any such object)."""

    language = "english"
    _SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")
    _WORD = re.compile(r"[^\W_]+")

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        out = []
        for line in paragraph.splitlines():
            out.extend(s.strip() for s in self._SENTENCE_END.split(line))
        return tuple(s for s in out if s)

    def to_words(self, sentence: str) -> tuple[str, ...]:
        return tuple(self._WORD.findall(sentence))


@dataclass(frozen=True)
class _Unit:
    """A piece of one line: the whole message text, or one of its sentences."""

    line: int  # position in Rendering.lines
    piece: int
    text: str


@dataclass
class Rendering:
    """A conversation's rendered lines and its counter, with token costs cached."""

    lines: list[Line]
    counter: TokenCounter
    separator: int = field(init=False, default=0)
    """Tokens a line break adds between two lines (0 for a word counter, 1 for BPE)."""
    _costs: dict[tuple[int, bool, str], int] = field(default_factory=dict, repr=False)
    _headers: dict[str, int] = field(default_factory=dict, repr=False)
    _textrank: list[_Unit] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, messages: Conversation | Sequence[Message], counter: TokenCounter) -> Rendering:
        return cls(message_lines(messages), counter)

    def __post_init__(self) -> None:
        self.separator = max(0, self.counter.count("a\nb") - self.counter.count("a")
                             - self.counter.count("b"))

    @property
    def text(self) -> str:
        return render((line, line.body) for line in self.lines)

    @property
    def tokens(self) -> int:
        return self.counter.count(self.text)

    def budget(self, share: float, rule: str = "all") -> int:
        """``share`` of the tokens (``all``), or the system prompt plus ``share`` of the rest.

        ``rest`` leaves the system prompt, which precis always keeps verbatim, out of the
        compression: without it a short session with a long system prompt has no budget.
        """
        if rule == "all":
            return max(1, int(self.tokens * share))
        if rule != "rest":
            raise ValueError(f"unknown budget rule {rule!r} (expected all or rest)")
        system = [pos for pos, line in enumerate(self.lines) if line.system]
        others = [pos for pos, line in enumerate(self.lines) if not line.system]
        return max(1, self.counter.count(self.show(system))
                   + int(self.counter.count(self.show(others)) * share))

    def header_cost(self, date: str | None) -> int:
        if date is None:
            return 0
        if date not in self._headers:
            self._headers[date] = self.counter.count(f"[{date}]") + self.separator
        return self._headers[date]

    def unit_cost(self, unit: _Unit, line_started: bool) -> int:
        """Tokens ``unit`` adds: with the speaker prefix unless its line is already shown."""
        key = (unit.line, line_started, unit.text)
        if key not in self._costs:
            if line_started:
                cost = self.counter.count(" " + unit.text)
            else:
                line = self.lines[unit.line]
                cost = self.counter.count(f"{line.speaker}: {unit.text}") + self.separator
            self._costs[key] = cost
        return self._costs[key]

    def whole(self, position: int) -> _Unit:
        return _Unit(position, 0, self.lines[position].body)

    def show(self, positions: Sequence[int]) -> str:
        """The rendering of the whole lines at ``positions`` (in conversation order)."""
        return render((self.lines[p], self.lines[p].body) for p in sorted(positions))


class _Selection:
    """Sentences chosen so far, an estimate of their tokens, and the exact fit at the end."""

    def __init__(self, rendering: Rendering) -> None:
        self.r = rendering
        self.chosen: dict[int, dict[int, str]] = {}
        self.dates: dict[str, int] = {}
        self.history: list[_Unit] = []
        self.estimate = 0

    def extra(self, unit: _Unit) -> int:
        started = unit.line in self.chosen
        cost = self.r.unit_cost(unit, started)
        date = self.r.lines[unit.line].date
        if not started and date is not None and date not in self.dates:
            cost += self.r.header_cost(date)
        return cost

    def add(self, unit: _Unit) -> None:
        self.estimate += self.extra(unit)
        if unit.line not in self.chosen:
            date = self.r.lines[unit.line].date
            if date is not None:
                self.dates[date] = self.dates.get(date, 0) + 1
        self.chosen.setdefault(unit.line, {})[unit.piece] = unit.text
        self.history.append(unit)

    def try_add(self, unit: _Unit, budget: int) -> bool:
        """Add ``unit`` when the estimate stays within ``budget``."""
        if self.estimate + self.extra(unit) > budget:
            return False
        self.add(unit)
        return True

    def _undo(self) -> None:
        unit = self.history.pop()
        pieces = self.chosen[unit.line]
        del pieces[unit.piece]
        if not pieces:
            del self.chosen[unit.line]
            date = self.r.lines[unit.line].date
            if date is not None:
                self.dates[date] -= 1
                if not self.dates[date]:
                    del self.dates[date]

    def text(self) -> str:
        return render(
            (self.r.lines[pos], " ".join(pieces[k] for k in sorted(pieces)))
            for pos, pieces in sorted(self.chosen.items())
        )

    def fit(self, budget: int) -> str:
        """The rendered selection, dropping the latest additions until it counts <= budget."""
        text = self.text()
        while self.history and self.r.counter.count(text) > budget:
            self._undo()
            text = self.text()
        return text if self.r.counter.count(text) <= budget else ""


def _system(rendering: Rendering, budget: int) -> list[int]:
    """Positions of the system prompt(s): all of them when they fit the budget, else none."""
    system = [pos for pos, line in enumerate(rendering.lines) if line.system]
    return system if rendering.counter.count(rendering.show(system)) <= budget else []


def _others(rendering: Rendering) -> list[int]:
    return [pos for pos, line in enumerate(rendering.lines) if not line.system]


def _largest(rendering: Rendering, budget: int, pick: Callable[[int], list[int]],
             most: int) -> str:
    """The text of ``pick(k)`` (plus the system prompt) for the largest ``k`` that fits.

    A binary search on the exact token count; ``pick(k)`` is meant to grow with ``k``.
    """
    system = _system(rendering, budget)

    def text(k: int) -> str:
        return rendering.show(system + (pick(k) if k else []))

    low, high = 0, most
    while low < high:
        mid = (low + high + 1) // 2
        if rendering.counter.count(text(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    return text(low)


def keep_recent(rendering: Rendering, budget: int) -> str:
    """The system prompt and the longest run of most recent whole messages that fits."""
    others = _others(rendering)
    return _largest(rendering, budget, lambda k: others[len(others) - k:], len(others))


def _evenly(positions: Sequence[int], k: int) -> list[int]:
    """``k`` of ``positions`` at evenly spaced places (the middle of k equal stretches)."""
    n = len(positions)
    return [positions[(2 * i + 1) * n // (2 * k)] for i in range(k)]


def uniform(rendering: Rendering, budget: int) -> str:
    """The system prompt and as many messages as fit, spread evenly over the conversation."""
    others = _others(rendering)
    return _largest(rendering, budget, lambda k: _evenly(others, k), len(others))


def _textrank_units(rendering: Rendering) -> list[_Unit]:
    """Every sentence of every non-system line, best TextRank score first (cached)."""
    if rendering._textrank is None:
        from sumy.models.dom import ObjectDocumentModel, Paragraph, Sentence
        from sumy.summarizers.text_rank import TextRankSummarizer

        splitter = SentenceSplitter()
        units = [_Unit(pos, j, s) for pos in _others(rendering)
                 for j, s in enumerate(splitter.to_sentences(rendering.lines[pos].body))]
        sentences = [Sentence(u.text, splitter) for u in units]
        summarizer = TextRankSummarizer()
        summarizer.stop_words = STOPWORDS
        ratings = (summarizer.rate_sentences(ObjectDocumentModel([Paragraph(sentences)]))
                   if sentences else {})
        order = sorted(range(len(units)), key=lambda i: (-ratings[sentences[i]], i))
        rendering._textrank = [units[i] for i in order]
    return rendering._textrank


def textrank(rendering: Rendering, budget: int, rounds: int = 4) -> str:
    """The system prompt and the best-ranked sentences that fit, in conversation order.

    Per-sentence costs are estimates (in BPE a line break is often free after
    punctuation), so after each pass the selection is counted exactly and the sentences
    left out get another chance with the slack, for up to ``rounds`` passes.
    """
    selection = _Selection(rendering)
    for pos in _system(rendering, budget):
        selection.add(rendering.whole(pos))
    left = _textrank_units(rendering)
    for _ in range(rounds):
        before = len(left)
        left = [unit for unit in left if not selection.try_add(unit, budget)]
        if len(left) == before or not left:
            break
        selection.estimate = rendering.counter.count(selection.text())
    return selection.fit(budget)


BASELINES: dict[str, Callable[[Rendering, int], str]] = {
    "keep_recent": keep_recent,
    "uniform": uniform,
    "textrank": textrank,
}
