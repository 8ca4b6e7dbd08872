"""The order in which the fill offers candidates: a greedy for budgeted maximum coverage.

Pinned candidates come first (by priority), then those the quality check's re-fit boosts,
then by how much new information each adds per token: its priority plus the weight of the
words and exact facts it shows that no better-ranked item (nor the rest of the output) shows
yet, over its estimated tokens (a question costs double: it asks rather than tells). Words
weigh by rarity (inverse document frequency over the candidates); an exact fact or a name
counts double. The greedy runs only as far as the order is read: a small summary takes the
first few of many candidates.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from precis.compact.timeline._candidate import MESSAGE_LOG, PIN, Candidate
from precis.segment.model import Fragment

__all__ = ["SPOKEN", "CoverageRanking", "Ranked", "estimate", "units"]

SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})
_COMMON = frozenset({
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "him", "his", "how", "its", "may", "new", "now", "old", "see",
    "two", "who", "did", "get", "she", "too", "use", "that", "with", "have", "this", "will",
    "your", "from", "they", "been", "were", "said", "each", "which", "their", "there", "what",
    "about", "would", "make", "like", "just", "know", "take", "into", "year", "than", "them",
    "some", "could", "very", "when", "come", "only", "also", "well", "even", "back", "good",
    "much", "then", "more", "really", "think", "thanks", "thank", "great", "glad", "love",
    "yeah", "sure", "it's", "i'm", "that's", "you're", "what's", "lot", "things", "thing",
    "something", "time", "feel", "feels", "felt"
})
_BASE_WEIGHT = 0.15  # weight of a candidate's priority against the information it adds
_FACT_UNIT = 2.0  # an exact-fact-like unit (path, number, id) weighs this many words
# a word written as a name (capitalized inside a sentence: a person, place, title) is a
# specific referent, as telling as an exact fact; the common words around it are not
_NAME_UNIT = 2.0
# a question in a timeline asks rather than tells (what is known is in its answer): it
# costs the ranking this many times its tokens
_QUESTION_COST = 2.0
_ITEM_OVERHEAD = 10  # tokens of a bullet line besides its text (bullet, citation)
_ALL_FIT = 0.8  # estimated costs this far below the room: every candidate fits


@dataclass(frozen=True)
class _Coverage:
    """What the ranking needs to know of the candidates' information (see
    :meth:`CoverageRanking._index`); candidates by position in the list ranked."""

    slot: dict[int, int]  # id of a candidate -> its position
    ids: dict[str, int]  # per unit, its number (the lists below are by number: fast to read)
    units: list[list[int]]  # per position, the numbers of its units (none for a log line)
    total: list[int]  # per position, the weight of its units
    weights: list[int]  # per unit number, its weight
    held_by: list[list[int]]  # per unit number, the positions of the candidates holding it


class Ranked:
    """Candidates in the order of the fill, worked out only as far as they are read (see
    :meth:`CoverageRanking.order`); read from the start as often as needed."""

    def __init__(self, first: list[Candidate], more: Iterator[Candidate] | None = None,
                 last: list[Candidate] | None = None) -> None:
        self._known = first  # the order so far (this list grows)
        self._more = more  # the rest of the order, one by one ...
        self._last = last or []  # ... and what follows it

    def __iter__(self) -> Iterator[Candidate]:
        known = self._known
        n = 0
        while True:
            while n < len(known):
                yield known[n]
                n += 1
            if self._more is None:
                return
            cand = next(self._more, None)
            if cand is None:
                self._more = None
                known.extend(self._last)
            else:
                known.append(cand)


class CoverageRanking:
    """Orders ``candidates`` (fixed: their texts do not change) for a fill. ``fragments``
    are the conversation's, ``position`` maps a fragment id to its index and ``talk`` holds
    the indices of the summarized fragments (whose words written as names weigh more)."""

    def __init__(self, candidates: list[Candidate], fragments: Sequence[Fragment],
                 position: dict[str, int], talk: Sequence[int]) -> None:
        self.candidates = candidates
        self.fragments = fragments
        self.position = position
        self.talk = talk
        self._coverage: _Coverage | None = None  # see _index

    def order(self, key: Callable[[Candidate], tuple[float, int]], present: str,
              boost: dict[str, float], room: int) -> Ranked:
        """The candidates in the order the fill takes them (see the module docs): ``key``
        ranks by priority (``-key(c)[0]`` at least :data:`PIN`: pinned), ``present`` is
        the rest of the output (what it shows is no new information), ``boost`` the
        re-fit's fragment ids and ``room`` the tokens the fill has (when the candidates'
        estimated costs are well below it, all fit: they go by ``key``). Lines of an
        earlier summary's message log follow, by ``key``."""
        pinned: list[Candidate] = []
        boosted: list[Candidate] = []
        free: list[Candidate] = []
        log: list[Candidate] = []
        for cand in self.candidates:
            if cand.section == MESSAGE_LOG:
                log.append(cand)
            elif -key(cand)[0] >= PIN:
                pinned.append(cand)
            elif not boost.keys().isdisjoint(cand.sources):
                boosted.append(cand)
            else:
                free.append(cand)
        pinned.sort(key=key)
        boosted.sort(key=key)
        pinned += boosted
        log.sort(key=key)
        costs = [(estimate(c.text) + _ITEM_OVERHEAD)
                 * (_QUESTION_COST if c.speaker and _QUESTION.search(c.text) else 1.0)
                 for c in free]
        if sum(costs) <= room * _ALL_FIT:  # all of them fit: no choice to make
            return Ranked(pinned + sorted(free, key=key) + log)
        cov = self._index()
        units_of, weights, held_by = cov.units, cov.weights, cov.held_by
        # gain: weight (in thousandths, whole numbers: sums do not depend on their order) of
        # a candidate's units not covered yet, kept up to date through the unit's holders;
        # by candidate position (of all candidates: only those of ``free`` are read)
        gain = cov.total.copy()
        covered = bytearray(len(weights))  # by unit number: shown already

        def cover(found: Iterable[int]) -> None:
            for u in found:
                if not covered[u]:
                    covered[u] = 1
                    w = weights[u]
                    for holder in held_by[u]:
                        gain[holder] -= w

        if present:
            ids = cov.ids
            cover([n for n in map(ids.get, units(present)) if n is not None])
        for cand in pinned:
            cover(units_of[cov.slot[id(cand)]])
        base = [0] * len(gain)
        cost = [0.0] * len(gain)
        # ties go to the earlier fragment, then to the earlier candidate (n: unique)
        heap: list[tuple[float, int, int, int]] = []
        for n, (c, est) in enumerate(zip(free, costs)):
            k = cov.slot[id(c)]
            rank = key(c)
            b = base[k] = int(max(0.0, -rank[0]) * _BASE_WEIGHT * 1000)
            cost[k] = est
            heap.append((-(b + gain[k]) / est, rank[1], n, k))
        heapq.heapify(heap)
        candidates = self.candidates

        def greedy() -> Iterator[Candidate]:
            pop, push = heapq.heappop, heapq.heappush
            while heap:
                _, tie, n, k = pop(heap)
                fresh = -(base[k] + gain[k]) / cost[k]
                if heap and fresh > heap[0][0]:
                    push(heap, (fresh, tie, n, k))
                    continue
                cover(units_of[k])
                yield candidates[k]

        return Ranked(pinned, greedy(), log)

    def close(self) -> None:
        """Let go of the candidates (see the builder's ``close``)."""
        self.candidates = []
        self._coverage = None

    def _index(self) -> _Coverage:
        """The units of every candidate, the weight of every unit (inverse document
        frequency over the candidates, 0-1000, doubled for exact-fact-like units and for
        names) and the candidates holding it. Built once."""
        if self._coverage is None:
            cands = self.candidates
            slot = {id(c): k for k, c in enumerate(cands)}
            ids: dict[str, int] = {}
            number = ids.setdefault  # a unit seen first gets the next number
            units_of = [[number(u, len(ids)) for u in self._said_units(c)]
                        if c.section != MESSAGE_LOG else [] for c in cands]
            held_by: list[list[int]] = [[] for _ in ids]
            for k, mine in enumerate(units_of):
                for u in mine:
                    held_by[u].append(k)
            named = self._names()
            n = sum(1 for c in cands if c.section != MESSAGE_LOG) + 1
            scale = math.log(n + 1) or 1.0
            idf: dict[int, float] = {}  # by document frequency: few distinct values
            weights: list[int] = []
            for unit, held in zip(ids, held_by):
                d = len(held)
                w = idf.get(d)
                if w is None:
                    w = idf[d] = 1000 * math.log((n + 1) / (d + 0.5)) / scale
                # an exact-fact-like unit (a digit or punctuation in it) or a name weighs more
                if not unit.isalpha():
                    w *= _FACT_UNIT
                elif unit in named:
                    w *= _NAME_UNIT
                weights.append(int(w))
            total = [sum(map(weights.__getitem__, mine)) for mine in units_of]
            self._coverage = _Coverage(slot, ids, units_of, total, weights, held_by)
        return self._coverage

    def _said_units(self, c: Candidate) -> set[str]:
        """The units of a candidate's line that its fragments say: the line of a tool result,
        a tool call or a block leaves out what precis adds to it (a tool's label, a count of
        lines), which tells nothing of the conversation."""
        found = units(c.text)
        if self.fragments[c.order].kind in SPOKEN:
            return found
        said = " ".join(self.fragments[self.position[s]].text for s in c.sources).lower()
        return {u for u in found if u in said}

    def _names(self) -> set[str]:
        """Words (lowercase, as units are) that the talk of the range writes as names:
        capitalized after a lowercase word or a comma, not at the start of a sentence."""
        out: set[str] = set()
        for i in self.talk:
            frag = self.fragments[i]
            if frag.kind in SPOKEN:
                out.update(word.lower() for word in _NAME.findall(frag.text))
        return out


_UNIT = re.compile(r"[^\s`'\"(),;=|\[\]{}<>，。；：（）、！？“”‘’…\u3400-\u9fff]+")
_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]+\b")  # "with Ed Sheeran", "in Sweden"
_QUESTION = re.compile(r"[?？]\s*$")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_UNIT_STRIP = ".:!?-*#"


def units(text: str) -> set[str]:
    """The information a line carries, as units: its distinct words (lowercase, common
    words and one- or two-letter words left out; exact-fact-like tokens such as paths,
    numbers and ids whole) and the character pairs of its Chinese runs."""
    out = set()
    for piece in _UNIT.findall(text.lower()):
        word = piece.strip(_UNIT_STRIP)
        if (len(word) >= 3 or (word and not word.isalpha())) and word not in _COMMON:
            out.add(word)
    if not text.isascii():
        for run in _CJK_RUN.findall(text):
            out.update([run[k:k + 2] for k in range(max(1, len(run) - 1))])
    return out


def estimate(text: str) -> float:
    """Tokens of ``text``, roughly (a quarter token per Latin character, one per Han
    character): enough to rank candidates; the fill counts exactly."""
    n = len(text)
    wide = (len(text.encode("utf-8")) - n) // 2
    return (n - wide) / 4 + wide
